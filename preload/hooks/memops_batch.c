/*
 * Batch copies and managed-memory prefetches and discards of the runtime:
 * cudaMemcpyBatchAsync, cudaMemcpy3DBatchAsync, cudaMemPrefetchAsync, cudaMemPrefetchBatchAsync,
 * cudaMemDiscardBatchAsync, cudaMemDiscardAndPrefetchBatchAsync (CUDA 13 signatures,
 * each with its _ptsz form), and the MEMOP records they share with the driver's
 * forms (preload/driver/wrap_batch.c). A discard-and-prefetch batch is a prefetch
 * (its MEMOP kind; the entry point says the pages were discarded first).
 *
 * One call is one MEMOP record and, when outermost, one GPU record (CT_GPU_MEMCPY)
 * timed on its stream from before its first operation to after its last: a batch's
 * copies run in no defined order, so the call is what the stream does; `count` says
 * how many copies or ranges it held and `bytes` their total. A single prefetch's
 * return bounds its start (it returns before it is done); a batch's does not: its
 * first operations may start while the call still submits the rest.
 */
#include "hooks_internal.h"

/* The _ptsz forms have no prototype when compiling without per-thread default
 * stream; same argument lists as the plain forms. */
CTP_EXPORT __typeof__(cudaMemcpyBatchAsync) cudaMemcpyBatchAsync_ptsz;
CTP_EXPORT __typeof__(cudaMemcpy3DBatchAsync) cudaMemcpy3DBatchAsync_ptsz;

_Static_assert(sizeof(struct cudaMemcpy3DBatchOp) == sizeof(CUDA_MEMCPY3D_BATCH_OP),
               "the runtime's 3-D batch operation has the driver's layout");
CTP_EXPORT __typeof__(cudaMemPrefetchAsync) cudaMemPrefetchAsync_ptsz;
CTP_EXPORT __typeof__(cudaMemPrefetchBatchAsync) cudaMemPrefetchBatchAsync_ptsz;
CTP_EXPORT __typeof__(cudaMemDiscardBatchAsync) cudaMemDiscardBatchAsync_ptsz;
CTP_EXPORT __typeof__(cudaMemDiscardAndPrefetchBatchAsync) cudaMemDiscardAndPrefetchBatchAsync_ptsz;

static void emit_memop(const struct ct_memop *m) {
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop = *m;
  ctp_emit(&r);
}

uint64_t ctph_batch_bytes(int ok, const size_t *sizes, size_t count) {
  uint64_t bytes = 0;
  if (ok && sizes)
    for (size_t i = 0; i < count; i++)
      bytes += sizes[i];
  return bytes;
}

/* Adds copy i (bytes, the CT_MEM_* of its sides) to a batch's MEMOP: the direction and
 * memory types the copies share, CT_MEMOP_MIXED / CT_MEM_UNKNOWN where they differ. */
static void batch_add(struct ct_memop *m, size_t i, uint64_t bytes, int src_mem, int dst_mem) {
  uint64_t dir = (uint64_t)ctph_copy_direction(src_mem, dst_mem);
  m->bytes += bytes;
  if (i == 0) {
    m->kind = dir;
    m->src_mem = (uint64_t)src_mem;
    m->dst_mem = (uint64_t)dst_mem;
    return;
  }
  if (m->kind != dir)
    m->kind = CT_MEMOP_MIXED;
  if (m->src_mem != (uint64_t)src_mem)
    m->src_mem = CT_MEM_UNKNOWN;
  if (m->dst_mem != (uint64_t)dst_mem)
    m->dst_mem = CT_MEM_UNKNOWN;
}

void ctph_emit_copy_batch(uint64_t corr, int ok, const uint64_t *dsts, const uint64_t *srcs,
                          const size_t *sizes, size_t count) {
  struct ct_memop m = {.corr = corr, .async = 1, .count = count};
  if (ok && dsts && srcs && sizes)
    for (size_t i = 0; i < count; i++)
      batch_add(&m, i, sizes[i], ctph_memory_type((const void *)(uintptr_t)srcs[i]),
                ctph_memory_type((const void *)(uintptr_t)dsts[i]));
  emit_memop(&m);
}

/* CT_MEM_* of a 3-D batch operand: a pointer's from the driver, an array is device memory. */
static int operand_memory(const CUmemcpy3DOperand *o) {
  return o->type == CU_MEMCPY_OPERAND_TYPE_ARRAY
             ? CT_MEM_DEVICE
             : ctph_memory_type((const void *)(uintptr_t)o->op.ptr.ptr);
}

uint64_t ctph_array_element_size(const void *array) {
  if (!array || !ctph_driver_load() || !ctph_drv.Array3DGetDescriptor)
    return 1;
  int saved = errno;
  /* no stream work, but which calls a global-mode capture forbids is not documented
   * call by call: while any capture is active, asked in relaxed mode (as kernel_attrs.c) */
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  int relaxed = CTP_UNLIKELY(__atomic_load_n(&ctph_captures_active, __ATOMIC_RELAXED)) &&
                ctph_drv.ThreadExchangeStreamCaptureMode &&
                ctph_drv.ThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
  CUDA_ARRAY3D_DESCRIPTOR d;
  CUresult r = ctph_drv.Array3DGetDescriptor(&d, (CUarray)(uintptr_t)array);
  if (relaxed)
    ctph_drv.ThreadExchangeStreamCaptureMode(&mode);
  errno = saved;
  if (r != CUDA_SUCCESS)
    return 1;
  uint64_t channels = d.NumChannels;
  switch (d.Format) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return channels;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    return 2 * channels;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
    return 4 * channels;
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 1;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2:
  case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return 2;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4:
  case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2:
  case CU_AD_FORMAT_UNORM_INT_101010_2: return 4;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 8;
  default: return 1;
  }
}

/* Bytes per element of a 3-D batch operation: 1 between pointers, else its (first)
 * array operand's. */
static uint64_t op_element_size(const CUDA_MEMCPY3D_BATCH_OP *o) {
  if (o->src.type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
    return ctph_array_element_size(o->src.op.array.array);
  if (o->dst.type == CU_MEMCPY_OPERAND_TYPE_ARRAY)
    return ctph_array_element_size(o->dst.op.array.array);
  return 1;
}

void ctph_emit_copy3d_batch(uint64_t corr, int ok, const CUDA_MEMCPY3D_BATCH_OP *ops, size_t count) {
  struct ct_memop m = {.corr = corr, .async = 1, .count = count};
  if (ok && ops)
    for (size_t i = 0; i < count; i++)
      batch_add(&m, i,
                (uint64_t)ops[i].extent.width * ops[i].extent.height * ops[i].extent.depth *
                    op_element_size(&ops[i]),
                operand_memory(&ops[i].src), operand_memory(&ops[i].dst));
  emit_memop(&m);
}

void ctph_emit_prefetch(uint64_t corr, uint64_t bytes, uint64_t count, uint64_t value) {
  struct ct_memop m = {.corr = corr, .bytes = bytes, .kind = CT_MEMOP_PREFETCH,
                       .src_mem = CT_MEM_MANAGED, .dst_mem = CT_MEM_MANAGED, .async = 1,
                       .value = value, .count = count};
  emit_memop(&m);
}

void ctph_emit_discard(uint64_t corr, uint64_t bytes, uint64_t count) {
  struct ct_memop m = {.corr = corr, .bytes = bytes, .kind = CT_MEMOP_DISCARD,
                       .src_mem = CT_MEM_MANAGED, .dst_mem = CT_MEM_MANAGED, .async = 1,
                       .count = count};
  emit_memop(&m);
}

void ctph_emit_stream_ops(uint64_t corr, int ok, const CUstreamBatchMemOpParams *ops,
                          unsigned count) {
  struct ct_memop m = {.corr = corr, .kind = CT_MEMOP_STREAM_OPS, .async = 1, .count = count};
  for (unsigned i = 0; ok && ops && i < count; i++) {
    switch (ops[i].operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64: m.value++; break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32: m.bytes += 4; break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64: m.bytes += 8; break;
    default: break; /* flushes, barriers, later kinds: neither wait nor write */
    }
  }
  emit_memop(&m);
}

/* The MEMOP value of a prefetch's destination: 1 + device ordinal, 0 for the host. */
static uint64_t location_value(struct cudaMemLocation loc) {
  return loc.type == cudaMemLocationTypeDevice && loc.id >= 0 ? 1 + (uint64_t)loc.id : 0;
}

#define COPY_BATCH(sym, ptsz)                                                               \
  CTPH_MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMCPY,                                         \
                  (dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream),         \
                  ctph_emit_copy_batch(c.corr, r == cudaSuccess, (const uint64_t *)dsts,    \
                                       (const uint64_t *)srcs, sizes, count))

/** cudaMemcpyBatchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpyBatchAsync(void *const *dsts, const void *const *srcs,
                                            const size_t *sizes, size_t count,
                                            struct cudaMemcpyAttributes *attrs, size_t *attrs_idxs,
                                            size_t num_attrs, cudaStream_t stream) {
  COPY_BATCH(cudaMemcpyBatchAsync, 0);
}

/** cudaMemcpyBatchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpyBatchAsync_ptsz(void *const *dsts, const void *const *srcs,
                                                 const size_t *sizes, size_t count,
                                                 struct cudaMemcpyAttributes *attrs,
                                                 size_t *attrs_idxs, size_t num_attrs,
                                                 cudaStream_t stream) {
  COPY_BATCH(cudaMemcpyBatchAsync_ptsz, 1);
}

#define COPY3D_BATCH(sym, ptsz)                                                             \
  CTPH_MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMCPY, (num_ops, ops, flags, stream),          \
                  ctph_emit_copy3d_batch(c.corr, r == cudaSuccess,                          \
                                         (const CUDA_MEMCPY3D_BATCH_OP *)ops, num_ops))

/** cudaMemcpy3DBatchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DBatchAsync(size_t num_ops, struct cudaMemcpy3DBatchOp *ops,
                                              unsigned long long flags, cudaStream_t stream) {
  COPY3D_BATCH(cudaMemcpy3DBatchAsync, 0);
}

/** cudaMemcpy3DBatchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemcpy3DBatchAsync_ptsz(size_t num_ops, struct cudaMemcpy3DBatchOp *ops,
                                                   unsigned long long flags,
                                                   cudaStream_t stream) {
  COPY3D_BATCH(cudaMemcpy3DBatchAsync_ptsz, 1);
}

/* A single prefetch returns before it is done (asynchronous to the host), so its
 * return bounds its start (call.c), as for an asynchronous pinned copy. */
#define PREFETCH(sym, ptsz)                                                                 \
  CTPH_MEMOP_BODY_AFTER(sym, ptsz, stream, CT_GPU_MEMCPY, (ptr, count, location, flags, stream), \
                        c.returns_early = 1,                                                \
                        ctph_emit_prefetch(c.corr, count, 0, location_value(location)))

/** cudaMemPrefetchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count,
                                            struct cudaMemLocation location, unsigned int flags,
                                            cudaStream_t stream) {
  PREFETCH(cudaMemPrefetchAsync, 0);
}

/** cudaMemPrefetchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *ptr, size_t count,
                                                 struct cudaMemLocation location,
                                                 unsigned int flags, cudaStream_t stream) {
  PREFETCH(cudaMemPrefetchAsync_ptsz, 1);
}

#define PREFETCH_BATCH(sym, ptsz)                                                           \
  CTPH_MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMCPY,                                         \
                  (ptrs, sizes, count, locs, loc_idxs, num_locs, flags, stream),            \
                  ctph_emit_prefetch(c.corr, ctph_batch_bytes(r == cudaSuccess, sizes, count), \
                                     count,                                                 \
                                     r == cudaSuccess && locs && num_locs                   \
                                         ? location_value(locs[0]) : 0))

/** cudaMemPrefetchBatchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemPrefetchBatchAsync(void **ptrs, size_t *sizes, size_t count,
                                                 struct cudaMemLocation *locs, size_t *loc_idxs,
                                                 size_t num_locs, unsigned long long flags,
                                                 cudaStream_t stream) {
  PREFETCH_BATCH(cudaMemPrefetchBatchAsync, 0);
}

/** cudaMemPrefetchBatchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemPrefetchBatchAsync_ptsz(void **ptrs, size_t *sizes, size_t count,
                                                      struct cudaMemLocation *locs,
                                                      size_t *loc_idxs, size_t num_locs,
                                                      unsigned long long flags,
                                                      cudaStream_t stream) {
  PREFETCH_BATCH(cudaMemPrefetchBatchAsync_ptsz, 1);
}

#define DISCARD_BATCH(sym, ptsz)                                                            \
  CTPH_MEMOP_BODY(sym, ptsz, stream, CT_GPU_MEMCPY, (ptrs, sizes, count, flags, stream),    \
                  ctph_emit_discard(c.corr, ctph_batch_bytes(r == cudaSuccess, sizes, count), count))

/** cudaMemDiscardBatchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemDiscardBatchAsync(void **ptrs, size_t *sizes, size_t count,
                                                unsigned long long flags, cudaStream_t stream) {
  DISCARD_BATCH(cudaMemDiscardBatchAsync, 0);
}

/** cudaMemDiscardBatchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemDiscardBatchAsync_ptsz(void **ptrs, size_t *sizes, size_t count,
                                                     unsigned long long flags, cudaStream_t stream) {
  DISCARD_BATCH(cudaMemDiscardBatchAsync_ptsz, 1);
}

/** cudaMemDiscardAndPrefetchBatchAsync, traced. */
CTP_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync(void **ptrs, size_t *sizes, size_t count,
                                                           struct cudaMemLocation *locs,
                                                           size_t *loc_idxs, size_t num_locs,
                                                           unsigned long long flags,
                                                           cudaStream_t stream) {
  PREFETCH_BATCH(cudaMemDiscardAndPrefetchBatchAsync, 0);
}

/** cudaMemDiscardAndPrefetchBatchAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMemDiscardAndPrefetchBatchAsync_ptsz(void **ptrs, size_t *sizes,
                                                                size_t count,
                                                                struct cudaMemLocation *locs,
                                                                size_t *loc_idxs, size_t num_locs,
                                                                unsigned long long flags,
                                                                cudaStream_t stream) {
  PREFETCH_BATCH(cudaMemDiscardAndPrefetchBatchAsync_ptsz, 1);
}
