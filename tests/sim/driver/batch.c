/* Batched copies and managed-memory prefetches.
 *
 * cuMemcpyBatchAsync (CUDA 12.8 ABI, with failIdx) and cuMemcpyBatchAsync_v2 (13.0):
 * the arguments are checked as the real driver documents them (not the legacy
 * stream; every copy covered by an attribute entry: attrsIdxs[0] == 0, increasing,
 * below count, numAttrs <= count; srcAccessOrder set), then each copy is enqueued
 * in order as one copy operation (one truth-log line each) with cuMemcpyAsync's
 * rules. A copy refused half-way leaves the earlier ones enqueued (*failIdx says
 * which one failed).
 *
 * cuMemcpy3DBatchAsync (12.8, failIdx) and _v2 (13.0): each operation one 3-D copy,
 * its extent in elements: 1 byte between pointers, the array's element size when an
 * operand is an array (array.c; rowLength / layerHeight 0: tightly packed).
 *
 * cuMemPrefetchAsync (8.0 ABI: a device ordinal, CU_DEVICE_CPU for the host),
 * cuMemPrefetchAsync_v2 (12.2: a CUmemLocation) and cuMemPrefetchBatchAsync (13.0):
 * each range must lie in managed memory; a prefetch is a SIM_OP_PREFETCH operation
 * that moves no bytes and lasts as long as a pinned copy of its size (the simulator
 * does not track where managed pages live: every prefetch migrates all of them).
 * cuMemDiscardBatchAsync (13.0): each range (managed memory) is one operation of the
 * copy latency that leaves the bytes as they are (their content is undefined after a
 * discard); cuMemDiscardAndPrefetchBatchAsync is modelled as cuMemPrefetchBatchAsync.
 * Prefetches and discards are refused inside a stream capture
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture invalidated): the simulator's
 * graphs have no prefetch node.
 */
#include "legacy.h"

#include <string.h>

/* Checks a batch's attribute list (the real driver's documented rules). */
static CUresult check_attrs(size_t count, const CUmemcpyAttributes *attrs, const size_t *idxs,
                            size_t num_attrs)
{
  if (!num_attrs || num_attrs > count || !attrs || !idxs || idxs[0] != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < num_attrs; i++) {
    if (i && idxs[i] <= idxs[i - 1])
      return CUDA_ERROR_INVALID_VALUE;
    if (idxs[i] >= count || attrs[i].srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_INVALID
        || attrs[i].srcAccessOrder >= CU_MEMCPY_SRC_ACCESS_ORDER_MAX)
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

/* Whether hStream (as a _ptsz entry point or not sees it) is the legacy stream. */
static CUresult stream_check(CUstream hStream, int per_thread, int allow_legacy)
{
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && !allow_legacy && s->is_legacy)
    r = CUDA_ERROR_INVALID_VALUE;
  sim_unlock();
  return r;
}

static CUresult memcpy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                             CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                             size_t *failIdx, CUstream hStream, int per_thread)
{
  if (failIdx)
    *failIdx = SIZE_MAX;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count || !dsts || !srcs || !sizes)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_attrs(count, attrs, attrsIdxs, numAttrs);
  if (r == CUDA_SUCCESS)
    r = stream_check(hStream, per_thread, 0);
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
    r = sim_copy_linear_async(dsts[i], srcs[i], sizes[i], hStream, per_thread);
    if (r != CUDA_SUCCESS && failIdx)
      *failIdx = i;
  }
  return r;
}

/** A batch of copies (CUDA 12.8 ABI, with failIdx). */
SIM_API CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                    CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                    size_t *failIdx, CUstream hStream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 0);
}

/** cuMemcpyBatchAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                         CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                         size_t *failIdx, CUstream hStream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream, 1);
}

/** A batch of copies (CUDA 13.0 ABI, what cuda.h's cuMemcpyBatchAsync means). */
SIM_API CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                       CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                       CUstream hStream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 0);
}

/** cuMemcpyBatchAsync_v2, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                            CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                            CUstream hStream)
{
  return memcpy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, hStream, 1);
}

/* ---- 3-D batches ---- */

/* One operand of a 3-D batch operation as a side of a CUDA_MEMCPY3D (c's src or dst
 * fields): an array at its offset (elements of `element` bytes), or a pointer whose
 * rows and layers hold rowLength x layerHeight elements (0: tightly packed). */
static CUresult operand_side(const CUmemcpy3DOperand *o, const CUextent3D *e, size_t element, CUmemorytype *type,
                             CUdeviceptr *device, CUarray *array, size_t *x, size_t *y, size_t *z, size_t *pitch,
                             size_t *height)
{
  if (o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY) {
    *type = CU_MEMORYTYPE_ARRAY;
    *array = o->op.array.array;
    *x = o->op.array.offset.x * element;
    *y = o->op.array.offset.y;
    *z = o->op.array.offset.z;
    return CUDA_SUCCESS;
  }
  if (o->type != CU_MEMCPY_OPERAND_TYPE_POINTER)
    return CUDA_ERROR_INVALID_VALUE;
  size_t row = o->op.ptr.rowLength ? o->op.ptr.rowLength : e->width;
  size_t layer = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e->height;
  if (row < e->width || layer < e->height)
    return CUDA_ERROR_INVALID_VALUE;
  *type = CU_MEMORYTYPE_UNIFIED;
  *device = o->op.ptr.ptr;
  *pitch = row * element;
  *height = layer;
  return CUDA_SUCCESS;
}

/* The CUDA_MEMCPY3D of one operation: elements of 1 byte between pointers, else of the
 * array's element size (two arrays: the same size, else CUDA_ERROR_INVALID_VALUE). */
static CUresult op_to_3d(const CUDA_MEMCPY3D_BATCH_OP *o, CUDA_MEMCPY3D *c)
{
  if (!o->extent.width || !o->extent.height || !o->extent.depth
      || o->srcAccessOrder == CU_MEMCPY_SRC_ACCESS_ORDER_INVALID || o->srcAccessOrder >= CU_MEMCPY_SRC_ACCESS_ORDER_MAX)
    return CUDA_ERROR_INVALID_VALUE;
  int src_array = o->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY, dst_array = o->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY;
  size_t se = src_array ? sim_array_element_size(o->src.op.array.array) : 1;
  size_t de = dst_array ? sim_array_element_size(o->dst.op.array.array) : 1;
  if (!se || !de)
    return CUDA_ERROR_INVALID_HANDLE;
  if (src_array && dst_array && se != de)
    return CUDA_ERROR_INVALID_VALUE;
  size_t element = src_array ? se : de;
  *c = (CUDA_MEMCPY3D){.WidthInBytes = o->extent.width * element, .Height = o->extent.height,
                       .Depth = o->extent.depth};
  CUresult r = operand_side(&o->src, &o->extent, element, &c->srcMemoryType, &c->srcDevice, &c->srcArray,
                            &c->srcXInBytes, &c->srcY, &c->srcZ, &c->srcPitch, &c->srcHeight);
  if (r == CUDA_SUCCESS)
    r = operand_side(&o->dst, &o->extent, element, &c->dstMemoryType, &c->dstDevice, &c->dstArray,
                     &c->dstXInBytes, &c->dstY, &c->dstZ, &c->dstPitch, &c->dstHeight);
  return r;
}

static CUresult memcpy_3d_batch(size_t num_ops, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *failIdx,
                                unsigned long long flags, CUstream hStream, int per_thread)
{
  if (failIdx)
    *failIdx = SIZE_MAX;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!num_ops || !ops || flags)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = stream_check(hStream, per_thread, 0);
  for (size_t i = 0; r == CUDA_SUCCESS && i < num_ops; i++) {
    CUDA_MEMCPY3D c;
    r = op_to_3d(&ops[i], &c);
    if (r == CUDA_SUCCESS)
      r = sim_copy_3d_async(&c, hStream, per_thread);
    if (r != CUDA_SUCCESS && failIdx)
      *failIdx = i;
  }
  return r;
}

/** A batch of 3-D copies (CUDA 12.8 ABI, with failIdx). */
SIM_API CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                      unsigned long long flags, CUstream hStream)
{
  return memcpy_3d_batch(numOps, opList, failIdx, flags, hStream, 0);
}

/** cuMemcpy3DBatchAsync (12.8 ABI), per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                           unsigned long long flags, CUstream hStream)
{
  return memcpy_3d_batch(numOps, opList, failIdx, flags, hStream, 1);
}

/** A batch of 3-D copies (CUDA 13.0 ABI). */
SIM_API CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
                                         CUstream hStream)
{
  return memcpy_3d_batch(numOps, opList, NULL, flags, hStream, 0);
}

/** cuMemcpy3DBatchAsync_v2, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                              unsigned long long flags, CUstream hStream)
{
  return memcpy_3d_batch(numOps, opList, NULL, flags, hStream, 1);
}

/* ---- prefetches ---- */

/* CUDA_SUCCESS for a prefetch destination the simulator knows. */
static CUresult check_location(CUmemLocation loc)
{
  if (loc.type == CU_MEM_LOCATION_TYPE_DEVICE)
    return sim_check_device(loc.id) == CUDA_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  if (loc.type == CU_MEM_LOCATION_TYPE_HOST || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA
      || loc.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return CUDA_SUCCESS;
  return CUDA_ERROR_INVALID_VALUE;
}

/* Enqueues the prefetch (or, discard_only, the discard) of [dptr, dptr + n) (managed
 * memory) on the stream: a discard takes the fixed latency only. */
static CUresult managed_op(CUdeviceptr dptr, size_t n, CUstream hStream, int per_thread, int discard_only)
{
  if (!n)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  char *base, *p = (char *)(uintptr_t)dptr;
  size_t size;
  if (r == CUDA_SUCCESS && (sim_mem_lookup(p, &base, &size, NULL) != SIM_MEM_MANAGED || n > size
                            || (size_t)(p - base) > size - n))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && s->capture) {
    sim_capture_invalidate(s);
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (r == CUDA_SUCCESS) {
    struct sim_op op = {.kind = SIM_OP_PREFETCH};
    strcpy(op.name, discard_only ? "discard" : "prefetch");
    op.duration_ns = discard_only ? sim_transfer_ns(0, sim_knobs.pinned_gbps) : sim_transfer_ns(n, sim_knobs.pinned_gbps);
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  return r;
}

static CUresult prefetch(CUdeviceptr dptr, size_t n, CUmemLocation loc, unsigned int flags, CUstream hStream,
                         int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (flags)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_location(loc);
  return r == CUDA_SUCCESS ? managed_op(dptr, n, hStream, per_thread, 0) : r;
}

/* The 8.0 ABI's destination: a device ordinal, or CU_DEVICE_CPU for the host. */
static CUmemLocation device_location(CUdevice dev)
{
  CUmemLocation loc = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev};
  if (dev == CU_DEVICE_CPU)
    loc.type = CU_MEM_LOCATION_TYPE_HOST;
  return loc;
}

/** Prefetch of managed memory to a device or the host (CUDA 8.0 ABI). */
SIM_API CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
  return prefetch(devPtr, count, device_location(dstDevice), 0, hStream, 0);
}

/** cuMemPrefetchAsync (8.0 ABI), per-thread default stream entry point. */
SIM_API CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream)
{
  return prefetch(devPtr, count, device_location(dstDevice), 0, hStream, 1);
}

/** Prefetch of managed memory to a location (CUDA 12.2 ABI, cuda.h 13's cuMemPrefetchAsync). */
SIM_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                       unsigned int flags, CUstream hStream)
{
  return prefetch(devPtr, count, location, flags, hStream, 0);
}

/** cuMemPrefetchAsync_v2, per-thread default stream entry point. */
SIM_API CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream)
{
  return prefetch(devPtr, count, location, flags, hStream, 1);
}

static CUresult prefetch_batch(CUdeviceptr *dptrs, size_t *sizes, size_t count, CUmemLocation *locs,
                               size_t *locIdxs, size_t numLocs, unsigned long long flags, CUstream hStream,
                               int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count || !dptrs || !sizes || flags || !numLocs || numLocs > count || !locs || !locIdxs
      || locIdxs[0] != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < numLocs; i++) {
    if ((i && locIdxs[i] <= locIdxs[i - 1]) || locIdxs[i] >= count)
      return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_location(locs[i]);
    if (r != CUDA_SUCCESS)
      return r;
  }
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
    r = managed_op(dptrs[i], sizes[i], hStream, per_thread, 0);
  return r;
}

/** A batch of prefetches (CUDA 13.0). */
SIM_API CUresult cuMemPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                         CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                         size_t numPrefetchLocs, unsigned long long flags, CUstream hStream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream, 0);
}

/** cuMemPrefetchBatchAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemPrefetchBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                              CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                              size_t numPrefetchLocs, unsigned long long flags,
                                              CUstream hStream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream, 1);
}

/* ---- discards (CUDA 13.0): a discard of each range; with prefetch, a prefetch then ---- */

static CUresult discard_batch(CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags,
                              CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count || !dptrs || !sizes || flags)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = CUDA_SUCCESS;
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
    r = managed_op(dptrs[i], sizes[i], hStream, per_thread, 1);
  return r;
}

/** A batch of discards of managed memory. */
SIM_API CUresult cuMemDiscardBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count, unsigned long long flags,
                                        CUstream hStream)
{
  return discard_batch(dptrs, sizes, count, flags, hStream, 0);
}

/** cuMemDiscardBatchAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemDiscardBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                             unsigned long long flags, CUstream hStream)
{
  return discard_batch(dptrs, sizes, count, flags, hStream, 1);
}

/** A batch of discards, each range then prefetched (modelled as a prefetch: the
 * simulator does not know that discarded pages need no copy). */
SIM_API CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                                   CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                   size_t numPrefetchLocs, unsigned long long flags,
                                                   CUstream hStream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream, 0);
}

/** cuMemDiscardAndPrefetchBatchAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemDiscardAndPrefetchBatchAsync_ptsz(CUdeviceptr *dptrs, size_t *sizes, size_t count,
                                                        CUmemLocation *prefetchLocs, size_t *prefetchLocIdxs,
                                                        size_t numPrefetchLocs, unsigned long long flags,
                                                        CUstream hStream)
{
  return prefetch_batch(dptrs, sizes, count, prefetchLocs, prefetchLocIdxs, numPrefetchLocs, flags, hStream, 1);
}
