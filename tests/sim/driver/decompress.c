/* cuMemBatchDecompressAsync (+_ptsz; cuGetProcAddress 12060): decompressions by the
 * copy engines, on a stream. The arguments are checked as cuda.h documents them (count
 * and the array given, flags 0, each operation's src and dst device memory of at least
 * srcNumBytes / dstNumBytes, a known algorithm, the padding zero; *errorIndex names the
 * first bad operation, or (size_t)-1). Each operation is then one operation on the
 * stream lasting as long as a device-to-device copy of dstNumBytes; the simulator
 * decompresses nothing: dst is left as it is, and *dstActBytes (when given) is set to
 * dstNumBytes at enqueue time. Refused inside a capture (no graph node for it). */
#include "legacy.h"

#include <string.h>

/* 1 when [p, p + n) lies in one device allocation. */
static int device_range(const void *p, size_t n)
{
  char *base;
  size_t size;
  return p && sim_mem_lookup((char *)p, &base, &size, NULL) == SIM_MEM_DEVICE && n <= size
         && (size_t)((const char *)p - base) <= size - n;
}

static int params_ok(const CUmemDecompressParams *d)
{
  for (size_t i = 0; i < sizeof d->padding; i++)
    if (d->padding[i])
      return 0;
  return (d->algo == CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE || d->algo == CU_MEM_DECOMPRESS_ALGORITHM_SNAPPY
          || d->algo == CU_MEM_DECOMPRESS_ALGORITHM_LZ4)
         && d->srcNumBytes && d->dstNumBytes && device_range(d->src, d->srcNumBytes)
         && device_range(d->dst, d->dstNumBytes);
}

static CUresult batch_decompress(CUmemDecompressParams *params, size_t count, unsigned int flags,
                                 size_t *error_index, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (error_index)
    *error_index = (size_t)-1;
  if (!count || !params || flags)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++)
    if (!params_ok(&params[i])) {
      if (error_index)
        *error_index = i;
      r = CUDA_ERROR_INVALID_VALUE;
    }
  if (r == CUDA_SUCCESS && s->capture) {
    sim_capture_invalidate(s);
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
    struct sim_op op = {.kind = SIM_OP_PREFETCH};
    strcpy(op.name, "decompress");
    op.duration_ns = sim_transfer_ns(params[i].dstNumBytes, sim_knobs.d2d_gbps);
    if (params[i].dstActBytes)
      *params[i].dstActBytes = (cuuint32_t)params[i].dstNumBytes;
    r = sim_submit(s, &op, NULL);
    if (r != CUDA_SUCCESS && error_index)
      *error_index = i;
  }
  sim_unlock();
  return r;
}

/** A batch of decompressions on the stream (see the top of the file). */
SIM_API CUresult cuMemBatchDecompressAsync(CUmemDecompressParams *paramsArray, size_t count, unsigned int flags,
                                           size_t *errorIndex, CUstream stream)
{
  return batch_decompress(paramsArray, count, flags, errorIndex, stream, 0);
}

/** cuMemBatchDecompressAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemBatchDecompressAsync_ptsz(CUmemDecompressParams *paramsArray, size_t count,
                                                unsigned int flags, size_t *errorIndex, CUstream stream)
{
  return batch_decompress(paramsArray, count, flags, errorIndex, stream, 1);
}
