/*
 * Driver allocation and release, as CPU spans (CT_API_DRIVER): cuMemAlloc_v2,
 * cuMemAllocPitch_v2, cuMemAllocManaged, cuMemAllocHost_v2, cuMemHostAlloc,
 * cuMemFree_v2, cuMemFreeHost, cuMemAllocAsync / cuMemFreeAsync (+_ptsz),
 * cuMemAllocFromPoolAsync (+_ptsz: what cudaMallocFromPoolAsync and PyTorch's
 * cudaMallocAsync backend reach), cuMemHostRegister_v2 / cuMemHostUnregister. A program with a static cudart, or
 * one that reaches the driver through cuGetProcAddress or dlsym, shows its
 * allocations here (cudaMalloc of a shared libcudart stays one runtime span: its
 * driver call only forwards, callers.c). A successful call is followed by its ALLOC
 * detail record (pointer, bytes, kind). cuMemFree and cuMemFreeHost wait for the
 * device to finish its work before they return: `cutrace gaps` counts the idle
 * time they cause as `alloc` (docs/gaps.md).
 */
#include "wrap_common.h"

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
typedef CUresult (*alloc_flags_fn)(CUdeviceptr *, size_t, unsigned);
typedef CUresult (*alloc_host_fn)(void **, size_t);
typedef CUresult (*host_alloc_fn)(void **, size_t, unsigned);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_host_fn)(void *);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*register_fn)(void *, size_t, unsigned);

void ctph_emit_alloc(uint64_t corr, const void *ptr, uint64_t bytes, int kind, int release) {
  if (!ptr)
    return;
  ct_record r = {.kind = CT_KIND_ALLOC};
  r.u.alloc = (struct ct_alloc){.corr = corr, .ptr = (uint64_t)(uintptr_t)ptr, .bytes = bytes,
                                .kind = (uint64_t)kind, .release = (uint64_t)(release != 0)};
  ctp_emit(&r);
}

/* A span without GPU work on `stream` (CTPH_NO_STREAM when the call has none); when
 * the call succeeded, its ALLOC record (PTR: an expression read after the call),
 * written before the API record (CTPH_FINISH). */
#define ALLOC_BODY(id, ptsz, realp, ra, type, stream, CALL, PTR, BYTES, KIND, RELEASE) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, 0, CALL, (void)0,                  \
                 if (r == CUDA_SUCCESS) ctph_emit_alloc(c.corr, (PTR), (BYTES), (KIND), (RELEASE)))

#define DEVP(p) ((const void *)(uintptr_t)(p))

CTPD_INLINE CUresult alloc_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr *p, size_t n) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_fn, CTPH_NO_STREAM, real(p, n), p ? DEVP(*p) : NULL, n,
             CT_ALLOC_DEVICE, 0);
}

CTPD_INLINE CUresult alloc_pitch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t *pitch, size_t width, size_t height,
                                      unsigned elem) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_pitch_fn, CTPH_NO_STREAM,
             real(p, pitch, width, height, elem), p ? DEVP(*p) : NULL,
             pitch ? (uint64_t)*pitch * height : 0, CT_ALLOC_DEVICE, 0);
}

CTPD_INLINE CUresult alloc_flags_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_flags_fn, CTPH_NO_STREAM, real(p, n, flags),
             p ? DEVP(*p) : NULL, n, CT_ALLOC_MANAGED, 0);
}

CTPD_INLINE CUresult alloc_host_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void **p, size_t n) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_host_fn, CTPH_NO_STREAM, real(p, n), p ? *p : NULL, n,
             CT_ALLOC_PINNED, 0);
}

CTPD_INLINE CUresult host_alloc_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void **p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, host_alloc_fn, CTPH_NO_STREAM, real(p, n, flags),
             p ? *p : NULL, n, CT_ALLOC_PINNED, 0);
}

CTPD_INLINE CUresult free_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr p) {
  ALLOC_BODY(id, ptsz, realp, ra, free_fn, CTPH_NO_STREAM, real(p), DEVP(p), 0, CT_ALLOC_DEVICE,
             1);
}

/* A release of host memory: kind CT_ALLOC_PINNED (cuMemFreeHost) or
 * CT_ALLOC_REGISTERED (cuMemHostUnregister). */
CTPD_INLINE CUresult host_release(enum ctph_id id, int ptsz, void *realp, const void *ra, void *p,
                                  int kind) {
  ALLOC_BODY(id, ptsz, realp, ra, free_host_fn, CTPH_NO_STREAM, real(p), p, 0, kind, 1);
}

CTPD_INLINE CUresult free_host_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    void *p) {
  return host_release(id, ptsz, realp, ra, p, CT_ALLOC_PINNED);
}

CTPD_INLINE CUresult unregister_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void *p) {
  return host_release(id, ptsz, realp, ra, p, CT_ALLOC_REGISTERED);
}

CTPD_INLINE CUresult alloc_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t n, CUstream s) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_async_fn, s, real(p, n, s), p ? DEVP(*p) : NULL, n,
             CT_ALLOC_ASYNC, 0);
}

CTPD_INLINE CUresult alloc_pool_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_pool_fn, s, real(p, n, pool, s), p ? DEVP(*p) : NULL, n,
             CT_ALLOC_ASYNC, 0);
}

CTPD_INLINE CUresult free_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr p, CUstream s) {
  ALLOC_BODY(id, ptsz, realp, ra, free_async_fn, s, real(p, s), DEVP(p), 0, CT_ALLOC_ASYNC, 1);
}

CTPD_INLINE CUresult register_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   void *p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, register_fn, CTPH_NO_STREAM, real(p, n, flags), p, n,
             CT_ALLOC_REGISTERED, 0);
}

CTPD_DEFINE(cuMemAlloc_v2, 0, alloc_body, (CUdeviceptr * p, size_t n), (p, n))
CTPD_DEFINE(cuMemAllocPitch_v2, 0, alloc_pitch_body,
            (CUdeviceptr * p, size_t *pitch, size_t width, size_t height, unsigned elem),
            (p, pitch, width, height, elem))
CTPD_DEFINE(cuMemAllocManaged, 0, alloc_flags_body, (CUdeviceptr * p, size_t n, unsigned flags),
            (p, n, flags))
CTPD_DEFINE(cuMemAllocHost_v2, 0, alloc_host_body, (void **p, size_t n), (p, n))
CTPD_DEFINE(cuMemHostAlloc, 0, host_alloc_body, (void **p, size_t n, unsigned flags),
            (p, n, flags))
CTPD_DEFINE(cuMemFree_v2, 0, free_body, (CUdeviceptr p), (p))
CTPD_DEFINE(cuMemFreeHost, 0, free_host_body, (void *p), (p))
CTPD_DEFINE(cuMemAllocAsync, 0, alloc_async_body, (CUdeviceptr * p, size_t n, CUstream s),
            (p, n, s))
CTPD_DEFINE(cuMemAllocAsync_ptsz, 1, alloc_async_body, (CUdeviceptr * p, size_t n, CUstream s),
            (p, n, s))
CTPD_DEFINE(cuMemFreeAsync, 0, free_async_body, (CUdeviceptr p, CUstream s), (p, s))
CTPD_DEFINE(cuMemFreeAsync_ptsz, 1, free_async_body, (CUdeviceptr p, CUstream s), (p, s))
CTPD_DEFINE(cuMemAllocFromPoolAsync, 0, alloc_pool_body,
            (CUdeviceptr * p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s))
CTPD_DEFINE(cuMemAllocFromPoolAsync_ptsz, 1, alloc_pool_body,
            (CUdeviceptr * p, size_t n, CUmemoryPool pool, CUstream s), (p, n, pool, s))
CTPD_DEFINE(cuMemHostRegister_v2, 0, register_body, (void *p, size_t n, unsigned flags),
            (p, n, flags))
CTPD_DEFINE(cuMemHostUnregister, 0, unregister_body, (void *p), (p))
