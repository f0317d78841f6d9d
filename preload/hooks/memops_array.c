/*
 * The runtime's copies to, from and between CUDA arrays: cudaMemcpyToArray,
 * cudaMemcpyFromArray, cudaMemcpyArrayToArray, cudaMemcpy2DToArray,
 * cudaMemcpy2DFromArray, cudaMemcpy2DArrayToArray (each with _ptds) and the Async forms
 * cudaMemcpyToArrayAsync, cudaMemcpyFromArrayAsync, cudaMemcpy2DToArrayAsync,
 * cudaMemcpy2DFromArrayAsync (each with _ptsz). Recorded like every runtime copy
 * (memops.c): an API record, a MEMOP record and, when outermost, a GPU record timed on
 * the stream (the synchronous forms: the legacy stream, or the per-thread one).
 *
 * These calls give bytes (count, or width in bytes x height), so MEMOP bytes is exact
 * without looking at the array. An array side is device memory (never looked up); a
 * pointer side's memory type comes from the driver's pointer attributes; the direction
 * is the kind argument's, cudaMemcpyDefault resolved from the two sides.
 */
/* The 1-D forms are deprecated in cuda_runtime_api.h, and still exported and used. */
#define CUDA_ENABLE_DEPRECATED
#include "memops_copy.h"

/* The deprecated 1-D forms and the per-thread forms have no prototype in some
 * compilations; same argument lists as the plain forms. */
#define PT_DECL(sym, plain) CTP_EXPORT __typeof__(plain) sym;
PT_DECL(cudaMemcpyToArray_ptds, cudaMemcpyToArray)
PT_DECL(cudaMemcpyFromArray_ptds, cudaMemcpyFromArray)
PT_DECL(cudaMemcpyArrayToArray_ptds, cudaMemcpyArrayToArray)
PT_DECL(cudaMemcpy2DToArray_ptds, cudaMemcpy2DToArray)
PT_DECL(cudaMemcpy2DFromArray_ptds, cudaMemcpy2DFromArray)
PT_DECL(cudaMemcpy2DArrayToArray_ptds, cudaMemcpy2DArrayToArray)
PT_DECL(cudaMemcpyToArrayAsync_ptsz, cudaMemcpyToArrayAsync)
PT_DECL(cudaMemcpyFromArrayAsync_ptsz, cudaMemcpyFromArrayAsync)
PT_DECL(cudaMemcpy2DToArrayAsync_ptsz, cudaMemcpy2DToArrayAsync)
PT_DECL(cudaMemcpy2DFromArrayAsync_ptsz, cudaMemcpy2DFromArrayAsync)
#undef PT_DECL

/* To an array from src: count bytes (1-D forms) or width x height (2-D forms). */
#define TO_ARRAY(sym, ptsz, async, stream, bytes, ...)                                  \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), bytes, kind, src, NULL, async, DEV_DST)
/* From an array to dst. */
#define FROM_ARRAY(sym, ptsz, async, stream, bytes, ...)                                \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), bytes, kind, NULL, dst, async, DEV_SRC)
/* Between two arrays (synchronous forms only). */
#define ARRAY_TO_ARRAY(sym, ptsz, bytes, ...)                                            \
  CTPH_COPY_BODY(sym, ptsz, 0, (__VA_ARGS__), bytes, kind, NULL, NULL, 0, DEV_BOTH)

#define BYTES_2D ((uint64_t)width * height)

/** cudaMemcpyToArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t w, size_t h, const void *src,
                                         size_t count, enum cudaMemcpyKind kind) {
  TO_ARRAY(cudaMemcpyToArray, 0, 0, 0, count, dst, w, h, src, count, kind);
}

/** cudaMemcpyToArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToArray_ptds(cudaArray_t dst, size_t w, size_t h, const void *src,
                                              size_t count, enum cudaMemcpyKind kind) {
  TO_ARRAY(cudaMemcpyToArray_ptds, 1, 0, 0, count, dst, w, h, src, count, kind);
}

/** cudaMemcpyToArrayAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t w, size_t h, const void *src,
                                              size_t count, enum cudaMemcpyKind kind,
                                              cudaStream_t stream) {
  TO_ARRAY(cudaMemcpyToArrayAsync, 0, 1, stream, count, dst, w, h, src, count, kind, stream);
}

/** cudaMemcpyToArrayAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToArrayAsync_ptsz(cudaArray_t dst, size_t w, size_t h,
                                                   const void *src, size_t count,
                                                   enum cudaMemcpyKind kind, cudaStream_t stream) {
  TO_ARRAY(cudaMemcpyToArrayAsync_ptsz, 1, 1, stream, count, dst, w, h, src, count, kind, stream);
}

/** cudaMemcpy2DToArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t w, size_t h, const void *src,
                                           size_t spitch, size_t width, size_t height,
                                           enum cudaMemcpyKind kind) {
  TO_ARRAY(cudaMemcpy2DToArray, 0, 0, 0, BYTES_2D, dst, w, h, src, spitch, width, height, kind);
}

/** cudaMemcpy2DToArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DToArray_ptds(cudaArray_t dst, size_t w, size_t h,
                                                const void *src, size_t spitch, size_t width,
                                                size_t height, enum cudaMemcpyKind kind) {
  TO_ARRAY(cudaMemcpy2DToArray_ptds, 1, 0, 0, BYTES_2D, dst, w, h, src, spitch, width, height,
           kind);
}

/** cudaMemcpy2DToArrayAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t w, size_t h,
                                                const void *src, size_t spitch, size_t width,
                                                size_t height, enum cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  TO_ARRAY(cudaMemcpy2DToArrayAsync, 0, 1, stream, BYTES_2D, dst, w, h, src, spitch, width,
           height, kind, stream);
}

/** cudaMemcpy2DToArrayAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DToArrayAsync_ptsz(cudaArray_t dst, size_t w, size_t h,
                                                     const void *src, size_t spitch, size_t width,
                                                     size_t height, enum cudaMemcpyKind kind,
                                                     cudaStream_t stream) {
  TO_ARRAY(cudaMemcpy2DToArrayAsync_ptsz, 1, 1, stream, BYTES_2D, dst, w, h, src, spitch, width,
           height, kind, stream);
}

/** cudaMemcpyFromArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t w, size_t h,
                                           size_t count, enum cudaMemcpyKind kind) {
  FROM_ARRAY(cudaMemcpyFromArray, 0, 0, 0, count, dst, src, w, h, count, kind);
}

/** cudaMemcpyFromArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromArray_ptds(void *dst, cudaArray_const_t src, size_t w,
                                                size_t h, size_t count, enum cudaMemcpyKind kind) {
  FROM_ARRAY(cudaMemcpyFromArray_ptds, 1, 0, 0, count, dst, src, w, h, count, kind);
}

/** cudaMemcpyFromArrayAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t w,
                                                size_t h, size_t count, enum cudaMemcpyKind kind,
                                                cudaStream_t stream) {
  FROM_ARRAY(cudaMemcpyFromArrayAsync, 0, 1, stream, count, dst, src, w, h, count, kind, stream);
}

/** cudaMemcpyFromArrayAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromArrayAsync_ptsz(void *dst, cudaArray_const_t src, size_t w,
                                                     size_t h, size_t count,
                                                     enum cudaMemcpyKind kind,
                                                     cudaStream_t stream) {
  FROM_ARRAY(cudaMemcpyFromArrayAsync_ptsz, 1, 1, stream, count, dst, src, w, h, count, kind,
             stream);
}

/** cudaMemcpy2DFromArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src,
                                             size_t w, size_t h, size_t width, size_t height,
                                             enum cudaMemcpyKind kind) {
  FROM_ARRAY(cudaMemcpy2DFromArray, 0, 0, 0, BYTES_2D, dst, dpitch, src, w, h, width, height,
             kind);
}

/** cudaMemcpy2DFromArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DFromArray_ptds(void *dst, size_t dpitch, cudaArray_const_t src,
                                                  size_t w, size_t h, size_t width, size_t height,
                                                  enum cudaMemcpyKind kind) {
  FROM_ARRAY(cudaMemcpy2DFromArray_ptds, 1, 0, 0, BYTES_2D, dst, dpitch, src, w, h, width, height,
             kind);
}

/** cudaMemcpy2DFromArrayAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src,
                                                  size_t w, size_t h, size_t width, size_t height,
                                                  enum cudaMemcpyKind kind, cudaStream_t stream) {
  FROM_ARRAY(cudaMemcpy2DFromArrayAsync, 0, 1, stream, BYTES_2D, dst, dpitch, src, w, h, width,
             height, kind, stream);
}

/** cudaMemcpy2DFromArrayAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DFromArrayAsync_ptsz(void *dst, size_t dpitch,
                                                       cudaArray_const_t src, size_t w, size_t h,
                                                       size_t width, size_t height,
                                                       enum cudaMemcpyKind kind,
                                                       cudaStream_t stream) {
  FROM_ARRAY(cudaMemcpy2DFromArrayAsync_ptsz, 1, 1, stream, BYTES_2D, dst, dpitch, src, w, h,
             width, height, kind, stream);
}

/** cudaMemcpyArrayToArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wd, size_t hd,
                                              cudaArray_const_t src, size_t ws, size_t hs,
                                              size_t count, enum cudaMemcpyKind kind) {
  ARRAY_TO_ARRAY(cudaMemcpyArrayToArray, 0, count, dst, wd, hd, src, ws, hs, count, kind);
}

/** cudaMemcpyArrayToArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpyArrayToArray_ptds(cudaArray_t dst, size_t wd, size_t hd,
                                                   cudaArray_const_t src, size_t ws, size_t hs,
                                                   size_t count, enum cudaMemcpyKind kind) {
  ARRAY_TO_ARRAY(cudaMemcpyArrayToArray_ptds, 1, count, dst, wd, hd, src, ws, hs, count, kind);
}

/** cudaMemcpy2DArrayToArray, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wd, size_t hd,
                                                cudaArray_const_t src, size_t ws, size_t hs,
                                                size_t width, size_t height,
                                                enum cudaMemcpyKind kind) {
  ARRAY_TO_ARRAY(cudaMemcpy2DArrayToArray, 0, BYTES_2D, dst, wd, hd, src, ws, hs, width, height,
                 kind);
}

/** cudaMemcpy2DArrayToArray_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DArrayToArray_ptds(cudaArray_t dst, size_t wd, size_t hd,
                                                     cudaArray_const_t src, size_t ws, size_t hs,
                                                     size_t width, size_t height,
                                                     enum cudaMemcpyKind kind) {
  ARRAY_TO_ARRAY(cudaMemcpy2DArrayToArray_ptds, 1, BYTES_2D, dst, wd, hd, src, ws, hs, width,
                 height, kind);
}
