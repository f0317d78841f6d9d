/*
 * Driver allocation and release, as CPU spans (CT_API_DRIVER): cuMemAlloc_v2,
 * cuMemAllocPitch_v2, cuMemAllocManaged, cuMemAllocHost_v2, cuMemHostAlloc,
 * cuMemFree_v2, cuMemFreeHost, cuMemAllocAsync / cuMemFreeAsync (+_ptsz),
 * cuMemHostRegister_v2 / cuMemHostUnregister. A program with a static cudart, or
 * one that reaches the driver through cuGetProcAddress or dlsym, shows its
 * allocations here (cudaMalloc of a shared libcudart stays one runtime span: its
 * driver call only forwards, callers.c). cuMemFree and cuMemFreeHost wait for the
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
typedef CUresult (*register_fn)(void *, size_t, unsigned);

/* A span without GPU work on `stream` (CTPH_NO_STREAM when the call has none). */
#define ALLOC_BODY(id, ptsz, realp, ra, type, stream, CALL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, 0, CALL, (void)0, (void)0)

CTPD_INLINE CUresult alloc_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr *p, size_t n) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_fn, CTPH_NO_STREAM, real(p, n));
}

CTPD_INLINE CUresult alloc_pitch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t *pitch, size_t width, size_t height,
                                      unsigned elem) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_pitch_fn, CTPH_NO_STREAM,
             real(p, pitch, width, height, elem));
}

CTPD_INLINE CUresult alloc_flags_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_flags_fn, CTPH_NO_STREAM, real(p, n, flags));
}

CTPD_INLINE CUresult alloc_host_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void **p, size_t n) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_host_fn, CTPH_NO_STREAM, real(p, n));
}

CTPD_INLINE CUresult host_alloc_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     void **p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, host_alloc_fn, CTPH_NO_STREAM, real(p, n, flags));
}

CTPD_INLINE CUresult free_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                               CUdeviceptr p) {
  ALLOC_BODY(id, ptsz, realp, ra, free_fn, CTPH_NO_STREAM, real(p));
}

CTPD_INLINE CUresult free_host_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    void *p) {
  ALLOC_BODY(id, ptsz, realp, ra, free_host_fn, CTPH_NO_STREAM, real(p));
}

CTPD_INLINE CUresult alloc_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr *p, size_t n, CUstream s) {
  ALLOC_BODY(id, ptsz, realp, ra, alloc_async_fn, s, real(p, n, s));
}

CTPD_INLINE CUresult free_async_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUdeviceptr p, CUstream s) {
  ALLOC_BODY(id, ptsz, realp, ra, free_async_fn, s, real(p, s));
}

CTPD_INLINE CUresult register_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   void *p, size_t n, unsigned flags) {
  ALLOC_BODY(id, ptsz, realp, ra, register_fn, CTPH_NO_STREAM, real(p, n, flags));
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
CTPD_DEFINE(cuMemHostRegister_v2, 0, register_body, (void *p, size_t n, unsigned flags),
            (p, n, flags))
CTPD_DEFINE(cuMemHostUnregister, 0, free_host_body, (void *p), (p))
