/*
 * Driver copies and sets with a shape or a peer: cuMemcpy2D / cuMemcpy2DUnaligned /
 * cuMemcpy3D (_v2, sync and Async, with _ptds / _ptsz), cuMemcpyPeer(Async),
 * cuMemcpy3DPeer(Async) (a CT_MEMOP_P2P of WidthInBytes x Height x Depth),
 * cuMemsetD16 and the 2D sets cuMemsetD2D8 / D2D16 / D2D32 (sync and Async).
 * Recorded like wrap_memory.c's: API record (CT_API_DRIVER), MEMOP record and,
 * when outermost or inside a library call, a GPU record timed on the stream.
 *
 * MEMOP fields: bytes = width in bytes x height (x depth); the direction from the
 * descriptor's memory types (CU_MEMORYTYPE_HOST is host memory, pinned or
 * pageable from the driver's pointer attributes; DEVICE and ARRAY are device
 * memory; UNIFIED is looked up); a peer copy is CT_MEMOP_P2P between two devices;
 * a set's bytes are elements x element size (x height), its value the pattern.
 */
#include "wrap_common.h"

typedef CUresult (*copy2d_fn)(const CUDA_MEMCPY2D *);
typedef CUresult (*copy2d_async_fn)(const CUDA_MEMCPY2D *, CUstream);
typedef CUresult (*copy3d_fn)(const CUDA_MEMCPY3D *);
typedef CUresult (*copy3d_async_fn)(const CUDA_MEMCPY3D *, CUstream);
typedef CUresult (*peer3d_fn)(const CUDA_MEMCPY3D_PEER *);
typedef CUresult (*peer3d_async_fn)(const CUDA_MEMCPY3D_PEER *, CUstream);
typedef CUresult (*peer_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
typedef CUresult (*peer_async_fn)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
                                  CUstream);
typedef CUresult (*set16_fn)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*set16_async_fn)(CUdeviceptr, unsigned short, size_t, CUstream);
typedef CUresult (*set2d8_fn)(CUdeviceptr, size_t, unsigned char, size_t, size_t);
typedef CUresult (*set2d8_async_fn)(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream);
typedef CUresult (*set2d16_fn)(CUdeviceptr, size_t, unsigned short, size_t, size_t);
typedef CUresult (*set2d16_async_fn)(CUdeviceptr, size_t, unsigned short, size_t, size_t,
                                     CUstream);
typedef CUresult (*set2d32_fn)(CUdeviceptr, size_t, unsigned, size_t, size_t);
typedef CUresult (*set2d32_async_fn)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream);

/* CT_MEM_* of one side of a shaped copy. */
static int side_memory(CUmemorytype type, const void *host, CUdeviceptr device) {
  switch (type) {
  case CU_MEMORYTYPE_HOST:
    return ctph_memory_type(host);
  case CU_MEMORYTYPE_DEVICE:
  case CU_MEMORYTYPE_ARRAY:
    return CT_MEM_DEVICE;
  case CU_MEMORYTYPE_UNIFIED:
    return ctph_memory_type((const void *)(uintptr_t)device);
  default:
    return CT_MEM_UNKNOWN;
  }
}

/* The CT_MEM_* of a shaped copy's source and destination (p a CUDA_MEMCPY2D or 3D). */
#define SRC_SIDE(p) side_memory((p)->srcMemoryType, (p)->srcHost, (p)->srcDevice)
#define DST_SIDE(p) side_memory((p)->dstMemoryType, (p)->dstHost, (p)->dstDevice)

#define MEM_BODY(id, ptsz, realp, ra, type, stream, gpu_type, CALL, DETAIL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, gpu_type, CALL, (void)0, DETAIL)

CTPD_INLINE CUresult copy2d_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 const CUDA_MEMCPY2D *p) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy2d_fn, (CUstream)0, real(p), p,
                 (uint64_t)p->WidthInBytes * p->Height, 0, SRC_SIDE(p), DST_SIDE(p), 0);
}
CTPD_INLINE CUresult copy2d_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       const CUDA_MEMCPY2D *p, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy2d_async_fn, s, real(p, s), p,
                 (uint64_t)p->WidthInBytes * p->Height, 0, SRC_SIDE(p), DST_SIDE(p), 1);
}
CTPD_INLINE CUresult copy3d_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 const CUDA_MEMCPY3D *p) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy3d_fn, (CUstream)0, real(p), p,
                 (uint64_t)p->WidthInBytes * p->Height * p->Depth, 0, SRC_SIDE(p), DST_SIDE(p), 0);
}
CTPD_INLINE CUresult copy3d_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       const CUDA_MEMCPY3D *p, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, copy3d_async_fn, s, real(p, s), p,
                 (uint64_t)p->WidthInBytes * p->Height * p->Depth, 0, SRC_SIDE(p), DST_SIDE(p), 1);
}
CTPD_INLINE CUresult peer_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                               size_t n) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, peer_fn, (CUstream)0, real(dst, dctx, src, sctx, n), 1, n,
                 CT_MEMOP_P2P, CT_MEM_DEVICE, CT_MEM_DEVICE, 0);
}
CTPD_INLINE CUresult peer_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
                                     CUcontext sctx, size_t n, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, peer_async_fn, s, real(dst, dctx, src, sctx, n, s), 1, n,
                 CT_MEMOP_P2P, CT_MEM_DEVICE, CT_MEM_DEVICE, 1);
}
CTPD_INLINE CUresult peer3d_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 const CUDA_MEMCPY3D_PEER *p) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, peer3d_fn, (CUstream)0, real(p), p,
                 (uint64_t)p->WidthInBytes * p->Height * p->Depth, CT_MEMOP_P2P, SRC_SIDE(p),
                 DST_SIDE(p), 0);
}
CTPD_INLINE CUresult peer3d_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       const CUDA_MEMCPY3D_PEER *p, CUstream s) {
  CTPD_COPY_BODY(id, ptsz, realp, ra, peer3d_async_fn, s, real(p, s), p,
                 (uint64_t)p->WidthInBytes * p->Height * p->Depth, CT_MEMOP_P2P, SRC_SIDE(p),
                 DST_SIDE(p), 1);
}
CTPD_INLINE CUresult set16_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr dst, unsigned short v, size_t n) {
  MEM_BODY(id, ptsz, realp, ra, set16_fn, (CUstream)0, CT_GPU_MEMSET, real(dst, v, n),
           ctpd_emit_set(c.corr, (uint64_t)n * 2, v, 0));
}
CTPD_INLINE CUresult set16_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr dst, unsigned short v, size_t n, CUstream s) {
  MEM_BODY(id, ptsz, realp, ra, set16_async_fn, s, CT_GPU_MEMSET, real(dst, v, n, s),
           ctpd_emit_set(c.corr, (uint64_t)n * 2, v, 1));
}

/* cuMemsetD2D{8,16,32}(_Async): width elements of `size` bytes by height rows. */
#define SET2D_BODIES(bits, size, vtype)                                                      \
  CTPD_INLINE CUresult set2d##bits##_body(enum ctph_id id, int ptsz, void *realp,             \
                                          const void *ra, CUdeviceptr dst, size_t pitch,      \
                                          vtype v, size_t w, size_t h) {                      \
    MEM_BODY(id, ptsz, realp, ra, set2d##bits##_fn, (CUstream)0, CT_GPU_MEMSET,               \
             real(dst, pitch, v, w, h), ctpd_emit_set(c.corr, (uint64_t)w * (size) * h, v, 0)); \
  }                                                                                           \
  CTPD_INLINE CUresult set2d##bits##_async_body(enum ctph_id id, int ptsz, void *realp,       \
                                                const void *ra, CUdeviceptr dst, size_t pitch, \
                                                vtype v, size_t w, size_t h, CUstream s) {    \
    MEM_BODY(id, ptsz, realp, ra, set2d##bits##_async_fn, s, CT_GPU_MEMSET,                   \
             real(dst, pitch, v, w, h, s),                                                    \
             ctpd_emit_set(c.corr, (uint64_t)w * (size) * h, v, 1));                         \
  }
SET2D_BODIES(8, 1, unsigned char)
SET2D_BODIES(16, 2, unsigned short)
SET2D_BODIES(32, 4, unsigned)

#define P2D (const CUDA_MEMCPY2D *p)
#define P2D_A (const CUDA_MEMCPY2D *p, CUstream s)
#define P3D (const CUDA_MEMCPY3D *p)
#define P3D_A (const CUDA_MEMCPY3D *p, CUstream s)
CTPD_DEFINE(cuMemcpy2D_v2, 0, copy2d_body, P2D, (p))
CTPD_DEFINE(cuMemcpy2D_v2_ptds, 1, copy2d_body, P2D, (p))
CTPD_DEFINE(cuMemcpy2DUnaligned_v2, 0, copy2d_body, P2D, (p))
CTPD_DEFINE(cuMemcpy2DUnaligned_v2_ptds, 1, copy2d_body, P2D, (p))
CTPD_DEFINE(cuMemcpy2DAsync_v2, 0, copy2d_async_body, P2D_A, (p, s))
CTPD_DEFINE(cuMemcpy2DAsync_v2_ptsz, 1, copy2d_async_body, P2D_A, (p, s))
CTPD_DEFINE(cuMemcpy3D_v2, 0, copy3d_body, P3D, (p))
CTPD_DEFINE(cuMemcpy3D_v2_ptds, 1, copy3d_body, P3D, (p))
CTPD_DEFINE(cuMemcpy3DAsync_v2, 0, copy3d_async_body, P3D_A, (p, s))
CTPD_DEFINE(cuMemcpy3DAsync_v2_ptsz, 1, copy3d_async_body, P3D_A, (p, s))

#define PPEER (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n)
#define PPEER_A (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st)
CTPD_DEFINE(cuMemcpyPeer, 0, peer_body, PPEER, (d, dc, s, sc, n))
CTPD_DEFINE(cuMemcpyPeer_ptds, 1, peer_body, PPEER, (d, dc, s, sc, n))
CTPD_DEFINE(cuMemcpyPeerAsync, 0, peer_async_body, PPEER_A, (d, dc, s, sc, n, st))
CTPD_DEFINE(cuMemcpyPeerAsync_ptsz, 1, peer_async_body, PPEER_A, (d, dc, s, sc, n, st))

CTPD_DEFINE(cuMemcpy3DPeer, 0, peer3d_body, (const CUDA_MEMCPY3D_PEER *p), (p))
CTPD_DEFINE(cuMemcpy3DPeer_ptds, 1, peer3d_body, (const CUDA_MEMCPY3D_PEER *p), (p))
CTPD_DEFINE(cuMemcpy3DPeerAsync, 0, peer3d_async_body, (const CUDA_MEMCPY3D_PEER *p, CUstream s),
            (p, s))
CTPD_DEFINE(cuMemcpy3DPeerAsync_ptsz, 1, peer3d_async_body,
            (const CUDA_MEMCPY3D_PEER *p, CUstream s), (p, s))

CTPD_DEFINE(cuMemsetD16_v2, 0, set16_body, (CUdeviceptr d, unsigned short v, size_t n), (d, v, n))
CTPD_DEFINE(cuMemsetD16_v2_ptds, 1, set16_body, (CUdeviceptr d, unsigned short v, size_t n),
            (d, v, n))
CTPD_DEFINE(cuMemsetD16Async, 0, set16_async_body,
            (CUdeviceptr d, unsigned short v, size_t n, CUstream s), (d, v, n, s))
CTPD_DEFINE(cuMemsetD16Async_ptsz, 1, set16_async_body,
            (CUdeviceptr d, unsigned short v, size_t n, CUstream s), (d, v, n, s))

#define S2D(vtype) (CUdeviceptr d, size_t pitch, vtype v, size_t w, size_t h)
#define S2D_A(vtype) (CUdeviceptr d, size_t pitch, vtype v, size_t w, size_t h, CUstream s)
CTPD_DEFINE(cuMemsetD2D8_v2, 0, set2d8_body, S2D(unsigned char), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D8_v2_ptds, 1, set2d8_body, S2D(unsigned char), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D16_v2, 0, set2d16_body, S2D(unsigned short), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D16_v2_ptds, 1, set2d16_body, S2D(unsigned short), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D32_v2, 0, set2d32_body, S2D(unsigned), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D32_v2_ptds, 1, set2d32_body, S2D(unsigned), (d, pitch, v, w, h))
CTPD_DEFINE(cuMemsetD2D8Async, 0, set2d8_async_body, S2D_A(unsigned char),
            (d, pitch, v, w, h, s))
CTPD_DEFINE(cuMemsetD2D8Async_ptsz, 1, set2d8_async_body, S2D_A(unsigned char),
            (d, pitch, v, w, h, s))
CTPD_DEFINE(cuMemsetD2D16Async, 0, set2d16_async_body, S2D_A(unsigned short),
            (d, pitch, v, w, h, s))
CTPD_DEFINE(cuMemsetD2D16Async_ptsz, 1, set2d16_async_body, S2D_A(unsigned short),
            (d, pitch, v, w, h, s))
CTPD_DEFINE(cuMemsetD2D32Async, 0, set2d32_async_body, S2D_A(unsigned), (d, pitch, v, w, h, s))
CTPD_DEFINE(cuMemsetD2D32Async_ptsz, 1, set2d32_async_body, S2D_A(unsigned),
            (d, pitch, v, w, h, s))
