/*
 * Driver copies and sets: cuMemcpy / cuMemcpyAsync (unified addressing), the
 * HtoD / DtoH / DtoD forms (_v2, sync and Async, with _ptds / _ptsz), cuMemsetD8
 * and cuMemsetD32 (sync and Async). Each traced call is an API record
 * (CT_API_DRIVER), a MEMOP record (bytes, direction, memory type of the host side
 * from the driver's pointer attributes) and, when outermost, a GPU record timed on
 * its stream (synchronous forms: the legacy stream, or the per-thread one).
 */
#include "wrap_common.h"

typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*copy_async_fn)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*htod_async_fn)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*dtoh_async_fn)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*set8_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*set8_async_fn)(CUdeviceptr, unsigned char, size_t, CUstream);
typedef CUresult (*set32_fn)(CUdeviceptr, unsigned, size_t);
typedef CUresult (*set32_async_fn)(CUdeviceptr, unsigned, size_t, CUstream);

void ctpd_emit_copy(uint64_t corr, uint64_t bytes, int dir, int src_mem, int dst_mem,
                      int async) {
  if (!dir)
    dir = ctph_copy_direction(src_mem, dst_mem);
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop = (struct ct_memop){.corr = corr, .bytes = bytes, .kind = (uint64_t)dir,
                                .src_mem = (uint64_t)src_mem, .dst_mem = (uint64_t)dst_mem,
                                .async = (uint64_t)async};
  ctp_emit(&r);
}

void ctpd_emit_set(uint64_t corr, uint64_t bytes, uint64_t value, int async) {
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop = (struct ct_memop){.corr = corr, .bytes = bytes, .kind = CT_MEMOP_MEMSET,
                                .dst_mem = CT_MEM_DEVICE, .async = (uint64_t)async,
                                .value = value};
  ctp_emit(&r);
}

#define MEM_BODY(id, ptsz, realp, ra, type, stream, gpu_type, CALL, DETAIL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, gpu_type, CALL, (void)0, DETAIL)

#define DEV(p) ((const void *)(uintptr_t)(p))

CTPD_INLINE CUresult copy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, CUdeviceptr src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy_fn, (CUstream)0, real(dst, src, n), 1, n, 0,
                 ctph_memory_type(DEV(src)), ctph_memory_type(DEV(dst)), 0);
}
CTPD_INLINE CUresult copy_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy_async_fn, s, real(dst, src, n, s), 1, n, 0,
                 ctph_memory_type(DEV(src)), ctph_memory_type(DEV(dst)), 1);
}
CTPD_INLINE CUresult htod_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, const void *src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, htod_fn, (CUstream)0, real(dst, src, n), 1, n,
                 CT_MEMOP_H2D, ctph_memory_type(src), CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult htod_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, htod_async_fn, s, real(dst, src, n, s), 1, n,
                 CT_MEMOP_H2D, ctph_memory_type(src), CT_MEM_DEVICE, 1);
}
CTPD_INLINE CUresult dtoh_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               void *dst, CUdeviceptr src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, dtoh_fn, (CUstream)0, real(dst, src, n), 1, n,
                 CT_MEMOP_D2H, CT_MEM_DEVICE, ctph_memory_type(dst), 0);
}
CTPD_INLINE CUresult dtoh_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void *dst, CUdeviceptr src, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, dtoh_async_fn, s, real(dst, src, n, s), 1, n,
                 CT_MEMOP_D2H, CT_MEM_DEVICE, ctph_memory_type(dst), 1);
}
CTPD_INLINE CUresult dtod_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, CUdeviceptr src, size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy_fn, (CUstream)0, real(dst, src, n), 1, n,
                 CT_MEMOP_D2D, CT_MEM_DEVICE, CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult dtod_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy_async_fn, s, real(dst, src, n, s), 1, n,
                 CT_MEMOP_D2D, CT_MEM_DEVICE, CT_MEM_DEVICE, 1);
}
CTPD_INLINE CUresult set8_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, unsigned char v, size_t n) {
  MEM_BODY(id, ptsz, realp, ra, set8_fn, (CUstream)0, CT_GPU_MEMSET, real(dst, v, n),
           ctpd_emit_set(c.corr, n, v, 0));
}
CTPD_INLINE CUresult set8_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  MEM_BODY(id, ptsz, realp, ra, set8_async_fn, s, CT_GPU_MEMSET, real(dst, v, n, s),
           ctpd_emit_set(c.corr, n, v, 1));
}
CTPD_INLINE CUresult set32_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr dst, unsigned v, size_t n) {
  MEM_BODY(id, ptsz, realp, ra, set32_fn, (CUstream)0, CT_GPU_MEMSET, real(dst, v, n),
           ctpd_emit_set(c.corr, (uint64_t)n * 4, v, 0));
}
CTPD_INLINE CUresult set32_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr dst, unsigned v, size_t n, CUstream s) {
  MEM_BODY(id, ptsz, realp, ra, set32_async_fn, s, CT_GPU_MEMSET, real(dst, v, n, s),
           ctpd_emit_set(c.corr, (uint64_t)n * 4, v, 1));
}

#define P3(a, b, c) (a x, b y, size_t n)
#define P4(a, b) (a x, b y, size_t n, CUstream s)
CTPD_DEFINE(cuMemcpy, 0, copy_body, P3(CUdeviceptr, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpy_ptds, 1, copy_body, P3(CUdeviceptr, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpyAsync, 0, copy_async_body, P4(CUdeviceptr, CUdeviceptr), (x, y, n, s))
CTPD_DEFINE(cuMemcpyAsync_ptsz, 1, copy_async_body, P4(CUdeviceptr, CUdeviceptr), (x, y, n, s))
CTPD_DEFINE(cuMemcpyHtoD_v2, 0, htod_body, P3(CUdeviceptr, const void *, ), (x, y, n))
CTPD_DEFINE(cuMemcpyHtoD_v2_ptds, 1, htod_body, P3(CUdeviceptr, const void *, ), (x, y, n))
CTPD_DEFINE(cuMemcpyDtoH_v2, 0, dtoh_body, P3(void *, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpyDtoH_v2_ptds, 1, dtoh_body, P3(void *, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpyDtoD_v2, 0, dtod_body, P3(CUdeviceptr, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpyDtoD_v2_ptds, 1, dtod_body, P3(CUdeviceptr, CUdeviceptr, ), (x, y, n))
CTPD_DEFINE(cuMemcpyHtoDAsync_v2, 0, htod_async_body, P4(CUdeviceptr, const void *), (x, y, n, s))
CTPD_DEFINE(cuMemcpyHtoDAsync_v2_ptsz, 1, htod_async_body, P4(CUdeviceptr, const void *),
            (x, y, n, s))
CTPD_DEFINE(cuMemcpyDtoHAsync_v2, 0, dtoh_async_body, P4(void *, CUdeviceptr), (x, y, n, s))
CTPD_DEFINE(cuMemcpyDtoHAsync_v2_ptsz, 1, dtoh_async_body, P4(void *, CUdeviceptr), (x, y, n, s))
CTPD_DEFINE(cuMemcpyDtoDAsync_v2, 0, dtod_async_body, P4(CUdeviceptr, CUdeviceptr), (x, y, n, s))
CTPD_DEFINE(cuMemcpyDtoDAsync_v2_ptsz, 1, dtod_async_body, P4(CUdeviceptr, CUdeviceptr),
            (x, y, n, s))
CTPD_DEFINE(cuMemsetD8_v2, 0, set8_body, P3(CUdeviceptr, unsigned char, ), (x, y, n))
CTPD_DEFINE(cuMemsetD8_v2_ptds, 1, set8_body, P3(CUdeviceptr, unsigned char, ), (x, y, n))
CTPD_DEFINE(cuMemsetD32_v2, 0, set32_body, P3(CUdeviceptr, unsigned, ), (x, y, n))
CTPD_DEFINE(cuMemsetD32_v2_ptds, 1, set32_body, P3(CUdeviceptr, unsigned, ), (x, y, n))
CTPD_DEFINE(cuMemsetD8Async, 0, set8_async_body, P4(CUdeviceptr, unsigned char), (x, y, n, s))
CTPD_DEFINE(cuMemsetD8Async_ptsz, 1, set8_async_body, P4(CUdeviceptr, unsigned char), (x, y, n, s))
CTPD_DEFINE(cuMemsetD32Async, 0, set32_async_body, P4(CUdeviceptr, unsigned), (x, y, n, s))
CTPD_DEFINE(cuMemsetD32Async_ptsz, 1, set32_async_body, P4(CUdeviceptr, unsigned), (x, y, n, s))
