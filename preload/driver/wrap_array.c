/*
 * Driver copies to, from and between CUDA arrays: cuMemcpyHtoA / AtoH / DtoA / AtoD /
 * AtoA (_v2, the CUDA 3.2 ABI, with _ptds) and cuMemcpyHtoAAsync / AtoHAsync (_v2, with
 * _ptsz). Recorded like wrap_memory.c's copies: an API record (CT_API_DRIVER), a MEMOP
 * record and, when outermost, a GPU record (CT_GPU_MEMCPY) timed on the stream.
 *
 * An array is device memory: HtoA is CT_MEMOP_H2D, AtoH CT_MEMOP_D2H, DtoA, AtoD and
 * AtoA CT_MEMOP_D2D; the host side's memory type comes from the driver's pointer
 * attributes (pinned or pageable). These calls take a byte count, so MEMOP bytes is
 * ByteCount exactly; nothing about the array is looked up. (2-D and 3-D copies with
 * CU_MEMORYTYPE_ARRAY sides are wrap_memory_2d.c's: their widths are bytes too.)
 */
#include "wrap_common.h"

typedef CUresult (*htoa_fn)(CUarray, size_t, const void *, size_t);
typedef CUresult (*htoa_async_fn)(CUarray, size_t, const void *, size_t, CUstream);
typedef CUresult (*atoh_fn)(void *, CUarray, size_t, size_t);
typedef CUresult (*atoh_async_fn)(void *, CUarray, size_t, size_t, CUstream);
typedef CUresult (*dtoa_fn)(CUarray, size_t, CUdeviceptr, size_t);
typedef CUresult (*atod_fn)(CUdeviceptr, CUarray, size_t, size_t);
typedef CUresult (*atoa_fn)(CUarray, size_t, CUarray, size_t, size_t);

CTPD_INLINE CUresult htoa_body(enum ctph_id id, int ptsz, void *realp, const void *ra, CUarray dst,
                               size_t offset, const void *src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, htoa_fn, (CUstream)0, real(dst, offset, src, n), 1, n,
                 CT_MEMOP_H2D, ctph_memory_type(src), CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult htoa_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUarray dst, size_t offset, const void *src, size_t n,
                                     CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, htoa_async_fn, s, real(dst, offset, src, n, s), 1, n,
                 CT_MEMOP_H2D, ctph_memory_type(src), CT_MEM_DEVICE, 1);
}
CTPD_INLINE CUresult atoh_body(enum ctph_id id, int ptsz, void *realp, const void *ra, void *dst,
                               CUarray src, size_t offset, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, atoh_fn, (CUstream)0, real(dst, src, offset, n), 1, n,
                 CT_MEMOP_D2H, CT_MEM_DEVICE, ctph_memory_type(dst), 0);
}
CTPD_INLINE CUresult atoh_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void *dst, CUarray src, size_t offset, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, atoh_async_fn, s, real(dst, src, offset, n, s), 1, n,
                 CT_MEMOP_D2H, CT_MEM_DEVICE, ctph_memory_type(dst), 1);
}
CTPD_INLINE CUresult dtoa_body(enum ctph_id id, int ptsz, void *realp, const void *ra, CUarray dst,
                               size_t offset, CUdeviceptr src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, dtoa_fn, (CUstream)0, real(dst, offset, src, n), 1, n,
                 CT_MEMOP_D2D, CT_MEM_DEVICE, CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult atod_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, CUarray src, size_t offset, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, atod_fn, (CUstream)0, real(dst, src, offset, n), 1, n,
                 CT_MEMOP_D2D, CT_MEM_DEVICE, CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult atoa_body(enum ctph_id id, int ptsz, void *realp, const void *ra, CUarray dst,
                               size_t dst_offset, CUarray src, size_t src_offset, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, atoa_fn, (CUstream)0,
                 real(dst, dst_offset, src, src_offset, n), 1, n, CT_MEMOP_D2D, CT_MEM_DEVICE,
                 CT_MEM_DEVICE, 0);
}

#define HTOA (CUarray d, size_t o, const void *s, size_t n)
#define HTOA_A (CUarray d, size_t o, const void *s, size_t n, CUstream st)
#define ATOH (void *d, CUarray s, size_t o, size_t n)
#define ATOH_A (void *d, CUarray s, size_t o, size_t n, CUstream st)
CTPD_DEFINE(cuMemcpyHtoA_v2, 0, htoa_body, HTOA, (d, o, s, n))
CTPD_DEFINE(cuMemcpyHtoA_v2_ptds, 1, htoa_body, HTOA, (d, o, s, n))
CTPD_DEFINE(cuMemcpyHtoAAsync_v2, 0, htoa_async_body, HTOA_A, (d, o, s, n, st))
CTPD_DEFINE(cuMemcpyHtoAAsync_v2_ptsz, 1, htoa_async_body, HTOA_A, (d, o, s, n, st))
CTPD_DEFINE(cuMemcpyAtoH_v2, 0, atoh_body, ATOH, (d, s, o, n))
CTPD_DEFINE(cuMemcpyAtoH_v2_ptds, 1, atoh_body, ATOH, (d, s, o, n))
CTPD_DEFINE(cuMemcpyAtoHAsync_v2, 0, atoh_async_body, ATOH_A, (d, s, o, n, st))
CTPD_DEFINE(cuMemcpyAtoHAsync_v2_ptsz, 1, atoh_async_body, ATOH_A, (d, s, o, n, st))
CTPD_DEFINE(cuMemcpyDtoA_v2, 0, dtoa_body, (CUarray d, size_t o, CUdeviceptr s, size_t n),
            (d, o, s, n))
CTPD_DEFINE(cuMemcpyDtoA_v2_ptds, 1, dtoa_body, (CUarray d, size_t o, CUdeviceptr s, size_t n),
            (d, o, s, n))
CTPD_DEFINE(cuMemcpyAtoD_v2, 0, atod_body, (CUdeviceptr d, CUarray s, size_t o, size_t n),
            (d, s, o, n))
CTPD_DEFINE(cuMemcpyAtoD_v2_ptds, 1, atod_body, (CUdeviceptr d, CUarray s, size_t o, size_t n),
            (d, s, o, n))
CTPD_DEFINE(cuMemcpyAtoA_v2, 0, atoa_body,
            (CUarray d, size_t dof, CUarray s, size_t sof, size_t n), (d, dof, s, sof, n))
CTPD_DEFINE(cuMemcpyAtoA_v2_ptds, 1, atoa_body,
            (CUarray d, size_t dof, CUarray s, size_t sof, size_t n), (d, dof, s, sof, n))
