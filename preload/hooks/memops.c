/*
 * Copies and sets: every cudaMemcpy* / cudaMemset* form of hooks.def. Each becomes
 * an API record, a MEMOP record (bytes, direction, memory type of each side,
 * async, set value) and, when outermost, a GPU record timed with events on its
 * stream (synchronous forms run on the legacy default stream, or the per-thread one
 * for _ptds). Memory types come from the driver's pointer attributes at each call:
 * nothing is cached, so freed and reused addresses are never misreported.
 */
#include "memops_copy.h"

/* The _ptds / _ptsz forms have no prototype when compiling without per-thread
 * default stream; same argument lists as the plain forms. */
#define PT_DECL(sym, plain) CTP_EXPORT __typeof__(plain) sym;
PT_DECL(cudaMemcpy_ptds, cudaMemcpy)
PT_DECL(cudaMemcpyAsync_ptsz, cudaMemcpyAsync)
PT_DECL(cudaMemcpy2D_ptds, cudaMemcpy2D)
PT_DECL(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync)
PT_DECL(cudaMemcpy3D_ptds, cudaMemcpy3D)
PT_DECL(cudaMemcpy3DAsync_ptsz, cudaMemcpy3DAsync)
PT_DECL(cudaMemcpy3DPeer_ptds, cudaMemcpy3DPeer)
PT_DECL(cudaMemcpy3DPeerAsync_ptsz, cudaMemcpy3DPeerAsync)
PT_DECL(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol)
PT_DECL(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol)
PT_DECL(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync)
PT_DECL(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync)
PT_DECL(cudaMemset_ptds, cudaMemset)
PT_DECL(cudaMemsetAsync_ptsz, cudaMemsetAsync)
PT_DECL(cudaMemset2D_ptds, cudaMemset2D)
PT_DECL(cudaMemset2DAsync_ptsz, cudaMemset2DAsync)
PT_DECL(cudaMemset3D_ptds, cudaMemset3D)
PT_DECL(cudaMemset3DAsync_ptsz, cudaMemset3DAsync)
#undef PT_DECL

/* Writes the MEMOP record of a set. */
static void emit_set(uint64_t corr, uint64_t bytes, const void *dst, int value, int async) {
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop.corr = corr;
  r.u.memop.bytes = bytes;
  r.u.memop.kind = CT_MEMOP_MEMSET;
  r.u.memop.dst_mem = (uint64_t)ctph_memory_type(dst);
  r.u.memop.async = (uint64_t)async;
  r.u.memop.value = (uint64_t)(uint8_t)value; /* cudaMemset sets bytes */
  ctp_emit(&r);
}

/* Bytes moved by a 3-D copy (cudaMemcpy3DParms or cudaMemcpy3DPeerParms p, ok: the
 * call succeeded): the extent, whose width is bytes between pitched pointers and
 * elements when an array takes part: times the array's element size, asked of the
 * driver (ctph_array_element_size) only after a successful call; 1 when unknown. */
#define COPY3D_BYTES(p, ok)                                                               \
  ((p) ? (uint64_t)(p)->extent.width * (p)->extent.height * (p)->extent.depth *            \
             ((ok) && ((p)->srcArray || (p)->dstArray)                                     \
                  ? ctph_array_element_size((p)->srcArray ? (const void *)(p)->srcArray    \
                                                          : (const void *)(p)->dstArray)   \
                  : 1)                                                                     \
       : 0)

/* DEV_* of a 3-D copy's array sides (an array is device memory). */
#define COPY3D_ARRAYS(p) ((p) ? ((p)->srcArray ? DEV_SRC : 0) | ((p)->dstArray ? DEV_DST : 0) : 0)

#define MEMOP_BODY CTPH_MEMOP_BODY

/* cudaMemcpy and cudaMemcpyAsync. */
#define COPY(sym, ptsz, async, stream, ...)                                            \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), count, kind, src, dst, async, DEV_NONE)

/** cudaMemcpy, traced. */
CTP_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                                  enum cudaMemcpyKind kind) {
  COPY(cudaMemcpy, 0, 0, 0, dst, src, count, kind);
}

/** cudaMemcpy_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind) {
  COPY(cudaMemcpy_ptds, 1, 0, 0, dst, src, count, kind);
}

/** cudaMemcpyAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind, cudaStream_t stream) {
  COPY(cudaMemcpyAsync, 0, 1, stream, dst, src, count, kind, stream);
}

/** cudaMemcpyAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  COPY(cudaMemcpyAsync_ptsz, 1, 1, stream, dst, src, count, kind, stream);
}

/* cudaMemcpy2D and cudaMemcpy2DAsync: width bytes by height rows. */
#define COPY2D(sym, ptsz, async, stream, ...)                                          \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), (uint64_t)width * height, kind, src, dst, \
            async, DEV_NONE)

/** cudaMemcpy2D, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                    size_t width, size_t height, enum cudaMemcpyKind kind) {
  COPY2D(cudaMemcpy2D, 0, 0, 0, dst, dpitch, src, spitch, width, height, kind);
}

/** cudaMemcpy2D_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                                         size_t spitch, size_t width, size_t height,
                                         enum cudaMemcpyKind kind) {
  COPY2D(cudaMemcpy2D_ptds, 1, 0, 0, dst, dpitch, src, spitch, width, height, kind);
}

/** cudaMemcpy2DAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                         size_t spitch, size_t width, size_t height,
                                         enum cudaMemcpyKind kind, cudaStream_t stream) {
  COPY2D(cudaMemcpy2DAsync, 0, 1, stream, dst, dpitch, src, spitch, width, height, kind, stream);
}

/** cudaMemcpy2DAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                              size_t spitch, size_t width, size_t height,
                                              enum cudaMemcpyKind kind, cudaStream_t stream) {
  COPY2D(cudaMemcpy2DAsync_ptsz, 1, 1, stream, dst, dpitch, src, spitch, width, height, kind,
         stream);
}

/* cudaMemcpy3D and cudaMemcpy3DAsync. */
#define COPY3D(sym, ptsz, async, stream, ...)                                          \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), COPY3D_BYTES(p, r == cudaSuccess),     \
                 p ? (int)p->kind : cudaMemcpyDefault, p ? p->srcPtr.ptr : NULL,       \
                 p ? p->dstPtr.ptr : NULL, async, COPY3D_ARRAYS(p))

/** cudaMemcpy3D, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) {
  COPY3D(cudaMemcpy3D, 0, 0, 0, p);
}

/** cudaMemcpy3D_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p) {
  COPY3D(cudaMemcpy3D_ptds, 1, 0, 0, p);
}

/** cudaMemcpy3DAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream) {
  COPY3D(cudaMemcpy3DAsync, 0, 1, stream, p, stream);
}

/** cudaMemcpy3DAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                              cudaStream_t stream) {
  COPY3D(cudaMemcpy3DAsync_ptsz, 1, 1, stream, p, stream);
}

/** cudaMemcpyPeer, traced. */
CTP_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                      size_t count) {
  CTPH_COPY_BODY(cudaMemcpyPeer, 0, 0, (dst, dst_device, src, src_device, count), count, -1, src,
            dst, 0, DEV_NONE);
}

/** cudaMemcpyPeerAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src,
                                           int src_device, size_t count, cudaStream_t stream) {
  CTPH_COPY_BODY(cudaMemcpyPeerAsync, 0, stream, (dst, dst_device, src, src_device, count, stream),
            count, -1, src, dst, 1, DEV_NONE);
}

/* cudaMemcpy3DPeer and cudaMemcpy3DPeerAsync: a peer copy of the extent (as for
 * cudaMemcpy3D: the element size of an array that takes part). */
#define COPY3D_PEER(sym, ptsz, async, stream, ...)                                     \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), COPY3D_BYTES(p, r == cudaSuccess), -1, \
                 p ? p->srcPtr.ptr : NULL, p ? p->dstPtr.ptr : NULL, async, COPY3D_ARRAYS(p))

/** cudaMemcpy3DPeer, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms *p) {
  COPY3D_PEER(cudaMemcpy3DPeer, 0, 0, 0, p);
}

/** cudaMemcpy3DPeer_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DPeer_ptds(const struct cudaMemcpy3DPeerParms *p) {
  COPY3D_PEER(cudaMemcpy3DPeer_ptds, 1, 0, 0, p);
}

/** cudaMemcpy3DPeerAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms *p,
                                             cudaStream_t stream) {
  COPY3D_PEER(cudaMemcpy3DPeerAsync, 0, 1, stream, p, stream);
}

/** cudaMemcpy3DPeerAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DPeerAsync_ptsz(const struct cudaMemcpy3DPeerParms *p,
                                                  cudaStream_t stream) {
  COPY3D_PEER(cudaMemcpy3DPeerAsync_ptsz, 1, 1, stream, p, stream);
}

/* Copies to and from device symbols. */
#define TO_SYMBOL(sym, ptsz, async, stream, ...)                                       \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), count, kind, src, symbol, async, DEV_DST)
#define FROM_SYMBOL(sym, ptsz, async, stream, ...)                                     \
  CTPH_COPY_BODY(sym, ptsz, stream, (__VA_ARGS__), count, kind, symbol, dst, async, DEV_SRC)

/** cudaMemcpyToSymbol, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                          size_t offset, enum cudaMemcpyKind kind) {
  TO_SYMBOL(cudaMemcpyToSymbol, 0, 0, 0, symbol, src, count, offset, kind);
}

/** cudaMemcpyToSymbol_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                               size_t offset, enum cudaMemcpyKind kind) {
  TO_SYMBOL(cudaMemcpyToSymbol_ptds, 1, 0, 0, symbol, src, count, offset, kind);
}

/** cudaMemcpyToSymbolAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                               size_t offset, enum cudaMemcpyKind kind,
                                               cudaStream_t stream) {
  TO_SYMBOL(cudaMemcpyToSymbolAsync, 0, 1, stream, symbol, src, count, offset, kind, stream);
}

/** cudaMemcpyToSymbolAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
                                                    size_t count, size_t offset,
                                                    enum cudaMemcpyKind kind, cudaStream_t stream) {
  TO_SYMBOL(cudaMemcpyToSymbolAsync_ptsz, 1, 1, stream, symbol, src, count, offset, kind, stream);
}

/** cudaMemcpyFromSymbol, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                            size_t offset, enum cudaMemcpyKind kind) {
  FROM_SYMBOL(cudaMemcpyFromSymbol, 0, 0, 0, dst, symbol, count, offset, kind);
}

/** cudaMemcpyFromSymbol_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                                 size_t offset, enum cudaMemcpyKind kind) {
  FROM_SYMBOL(cudaMemcpyFromSymbol_ptds, 1, 0, 0, dst, symbol, count, offset, kind);
}

/** cudaMemcpyFromSymbolAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                                 size_t offset, enum cudaMemcpyKind kind,
                                                 cudaStream_t stream) {
  FROM_SYMBOL(cudaMemcpyFromSymbolAsync, 0, 1, stream, dst, symbol, count, offset, kind, stream);
}

/** cudaMemcpyFromSymbolAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                      size_t offset, enum cudaMemcpyKind kind,
                                                      cudaStream_t stream) {
  FROM_SYMBOL(cudaMemcpyFromSymbolAsync_ptsz, 1, 1, stream, dst, symbol, count, offset, kind,
              stream);
}

/* Sets. */
#define SET(sym, ptsz, async, stream, ...)                                             \
  MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMSET, (__VA_ARGS__),                          \
             emit_set(c.corr, count, dev_ptr, value, async))
#define SET2D(sym, ptsz, async, stream, ...)                                           \
  MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMSET, (__VA_ARGS__),                          \
             emit_set(c.corr, (uint64_t)width * height, dev_ptr, value, async))
#define SET3D(sym, ptsz, async, stream, ...)                                           \
  MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMSET, (__VA_ARGS__),                          \
             emit_set(c.corr, (uint64_t)extent.width * extent.height * extent.depth,  \
                      pitched.ptr, value, async))

/** cudaMemset, traced. */
CTP_EXPORT cudaError_t cudaMemset(void *dev_ptr, int value, size_t count) {
  SET(cudaMemset, 0, 0, 0, dev_ptr, value, count);
}

/** cudaMemset_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemset_ptds(void *dev_ptr, int value, size_t count) {
  SET(cudaMemset_ptds, 1, 0, 0, dev_ptr, value, count);
}

/** cudaMemsetAsync, traced. */
CTP_EXPORT cudaError_t cudaMemsetAsync(void *dev_ptr, int value, size_t count,
                                       cudaStream_t stream) {
  SET(cudaMemsetAsync, 0, 1, stream, dev_ptr, value, count, stream);
}

/** cudaMemsetAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *dev_ptr, int value, size_t count,
                                            cudaStream_t stream) {
  SET(cudaMemsetAsync_ptsz, 1, 1, stream, dev_ptr, value, count, stream);
}

/** cudaMemset2D, traced. */
CTP_EXPORT cudaError_t cudaMemset2D(void *dev_ptr, size_t pitch, int value, size_t width,
                                    size_t height) {
  SET2D(cudaMemset2D, 0, 0, 0, dev_ptr, pitch, value, width, height);
}

/** cudaMemset2D_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemset2D_ptds(void *dev_ptr, size_t pitch, int value, size_t width,
                                         size_t height) {
  SET2D(cudaMemset2D_ptds, 1, 0, 0, dev_ptr, pitch, value, width, height);
}

/** cudaMemset2DAsync, traced. */
CTP_EXPORT cudaError_t cudaMemset2DAsync(void *dev_ptr, size_t pitch, int value, size_t width,
                                         size_t height, cudaStream_t stream) {
  SET2D(cudaMemset2DAsync, 0, 1, stream, dev_ptr, pitch, value, width, height, stream);
}

/** cudaMemset2DAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *dev_ptr, size_t pitch, int value,
                                              size_t width, size_t height, cudaStream_t stream) {
  SET2D(cudaMemset2DAsync_ptsz, 1, 1, stream, dev_ptr, pitch, value, width, height, stream);
}

/** cudaMemset3D, traced (bytes: the extent's width x height x depth). */
CTP_EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr pitched, int value,
                                    struct cudaExtent extent) {
  SET3D(cudaMemset3D, 0, 0, 0, pitched, value, extent);
}

/** cudaMemset3D_ptds, traced. */
CTP_EXPORT cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitched, int value,
                                         struct cudaExtent extent) {
  SET3D(cudaMemset3D_ptds, 1, 0, 0, pitched, value, extent);
}

/** cudaMemset3DAsync, traced. */
CTP_EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitched, int value,
                                         struct cudaExtent extent, cudaStream_t stream) {
  SET3D(cudaMemset3DAsync, 0, 1, stream, pitched, value, extent, stream);
}

/** cudaMemset3DAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitched, int value,
                                              struct cudaExtent extent, cudaStream_t stream) {
  SET3D(cudaMemset3DAsync_ptsz, 1, 1, stream, pitched, value, extent, stream);
}
