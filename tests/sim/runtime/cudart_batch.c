/* Batched copies and managed-memory prefetches and discards of the simulated
 * libcudart, each one driver call as in the real runtime: cudaMemcpyBatchAsync ->
 * cuMemcpyBatchAsync (13.0 ABI: cuMemcpyBatchAsync_v2), cudaMemPrefetchAsync ->
 * cuMemPrefetchAsync (12.2 ABI: cuMemPrefetchAsync_v2), cudaMemPrefetchBatchAsync,
 * cudaMemDiscardBatchAsync, cudaMemDiscardAndPrefetchBatchAsync -> the driver's of
 * the same names. The runtime structs and enums (cudaMemcpyAttributes,
 * cudaMemLocation, cudaMemcpy3DBatchOp) have the driver's layout and values, so they
 * pass through as they are (cudaMemcpy3DBatchAsync -> cuMemcpy3DBatchAsync_v2). The _ptsz forms use the driver's per-thread variants. */
#include "cudart_internal.h"

_Static_assert(sizeof(struct cudaMemcpyAttributes) == sizeof(CUmemcpyAttributes), "attrs layout");
_Static_assert(sizeof(struct cudaMemLocation) == sizeof(CUmemLocation), "location layout");
_Static_assert(sizeof(struct cudaMemcpy3DBatchOp) == sizeof(CUDA_MEMCPY3D_BATCH_OP), "3-D op layout");

static cudaError_t memcpy_batch(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t count,
                                struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemcpyBatchAsync));
  return rt_check(RT_PICK(pt, MemcpyBatchAsync)((CUdeviceptr *)dsts, (CUdeviceptr *)srcs, (size_t *)sizes,
                                                count, (CUmemcpyAttributes *)attrs, attrsIdxs, numAttrs,
                                                stream));
}

/** A batch of stream-ordered copies. */
SIM_EXPORT cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs, const size_t *sizes,
                                            size_t count, struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                            size_t numAttrs, cudaStream_t stream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, 0);
}

/** A batch of stream-ordered copies (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs, const size_t *sizes,
                                                 size_t count, struct cudaMemcpyAttributes *attrs,
                                                 size_t *attrsIdxs, size_t numAttrs, cudaStream_t stream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, stream, 1);
}

static cudaError_t prefetch(const void *ptr, size_t count, struct cudaMemLocation loc, unsigned int flags,
                            cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemPrefetchAsync));
  CUmemLocation l = {.type = (CUmemLocationType)loc.type, .id = loc.id};
  return rt_check(RT_PICK(pt, MemPrefetchAsync)((CUdeviceptr)(uintptr_t)ptr, count, l, flags, stream));
}

/** Prefetch of managed memory to a location. */
SIM_EXPORT cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                            unsigned int flags, cudaStream_t stream)
{
  return prefetch(devPtr, count, location, flags, stream, 0);
}

/** Prefetch of managed memory (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, struct cudaMemLocation location,
                                                 unsigned int flags, cudaStream_t stream)
{
  return prefetch(devPtr, count, location, flags, stream, 1);
}

static cudaError_t prefetch_batch(void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *locs,
                                  size_t *locIdxs, size_t numLocs, unsigned long long flags, cudaStream_t stream,
                                  int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemPrefetchBatchAsync));
  return rt_check(RT_PICK(pt, MemPrefetchBatchAsync)((CUdeviceptr *)dptrs, sizes, count, (CUmemLocation *)locs,
                                                     locIdxs, numLocs, flags, stream));
}

/** A batch of prefetches. */
SIM_EXPORT cudaError_t cudaMemPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
                                                 struct cudaMemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                 size_t numPrefetchLocs, unsigned long long flags,
                                                 cudaStream_t stream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream, 0);
}

/** A batch of prefetches (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                                      struct cudaMemLocation *prefetchLocs,
                                                      size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                                      unsigned long long flags, cudaStream_t stream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, stream, 1);
}

static cudaError_t discard_batch(void **dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                 cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemDiscardBatchAsync));
  return rt_check(RT_PICK(pt, MemDiscardBatchAsync)((CUdeviceptr *)dptrs, sizes, count, flags, stream));
}

/** A batch of discards of managed memory. */
SIM_EXPORT cudaError_t cudaMemDiscardBatchAsync(void **dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                                cudaStream_t stream)
{
  return discard_batch(dptrs, sizes, count, flags, stream, 0);
}

/** A batch of discards (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemDiscardBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                                     unsigned long long flags, cudaStream_t stream)
{
  return discard_batch(dptrs, sizes, count, flags, stream, 1);
}

static cudaError_t discard_prefetch_batch(void **dptrs, size_t *sizes, size_t count, struct cudaMemLocation *locs,
                                          size_t *locIdxs, size_t numLocs, unsigned long long flags,
                                          cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemDiscardAndPrefetchBatchAsync));
  return rt_check(RT_PICK(pt, MemDiscardAndPrefetchBatchAsync)((CUdeviceptr *)dptrs, sizes, count,
                                                               (CUmemLocation *)locs, locIdxs, numLocs, flags,
                                                               stream));
}

/** A batch of discards, each range then prefetched. */
SIM_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void **dptrs, size_t *sizes, size_t count,
                                                           struct cudaMemLocation *prefetchLocs,
                                                           size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                                           unsigned long long flags, cudaStream_t stream)
{
  return discard_prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                                stream, 0);
}

/** A batch of discards and prefetches (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(void **dptrs, size_t *sizes, size_t count,
                                                                struct cudaMemLocation *prefetchLocs,
                                                                size_t *prefetchLocIdxs, size_t numPrefetchLocs,
                                                                unsigned long long flags, cudaStream_t stream)
{
  return discard_prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags,
                                stream, 1);
}

static cudaError_t memcpy_3d_batch(size_t num_ops, struct cudaMemcpy3DBatchOp *ops, unsigned long long flags,
                                   cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, Memcpy3DBatchAsync));
  return rt_check(RT_PICK(pt, Memcpy3DBatchAsync)(num_ops, (CUDA_MEMCPY3D_BATCH_OP *)ops, flags, stream));
}

/** A batch of stream-ordered 3-D copies. */
SIM_EXPORT cudaError_t cudaMemcpy3DBatchAsync(size_t numOps, struct cudaMemcpy3DBatchOp *opList,
                                              unsigned long long flags, cudaStream_t stream)
{
  return memcpy_3d_batch(numOps, opList, flags, stream, 0);
}

/** A batch of stream-ordered 3-D copies (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t numOps, struct cudaMemcpy3DBatchOp *opList,
                                                   unsigned long long flags, cudaStream_t stream)
{
  return memcpy_3d_batch(numOps, opList, flags, stream, 1);
}
