/* Stream memory operations: cuStreamWriteValue32/64, cuStreamWaitValue32/64 and
 * cuStreamBatchMemOp, in the CUDA 8.0/9.0 ABI (the plain names) and the 11.7 one
 * (_v2, what cuda.h 13 means), each with _ptsz. Both ABIs take the same arguments.
 *
 * A write is a SIM_OP_VALUE operation on its stream (truth-log kind "value", name
 * "write32"/"write64", no duration); like copies, its bytes land when it is enqueued,
 * and the context remembers when the GPU performs it (the last 64 writes).
 * A wait is resolved when it is enqueued, as the simulator's streams are timed then:
 * when the value in memory satisfies the condition, the stream waits until the
 * remembered write of that address that put it there (no wait when the host or a
 * copy wrote it, or the write is forgotten); when it does not, the simulator cannot
 * know when it will (a later host or peer write) and returns
 * CUDA_ERROR_NOT_SUPPORTED. Both are refused inside a stream capture
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture invalidated): the
 * simulator's graphs have no memory-operation node.
 */
#include "legacy.h"

#include <string.h>

#define SIM_VALUE_WRITES 64

/* The writes performed on the GPU most recently (lock held): address and GPU time. */
static struct {
  const char *addr;
  uint64_t done_ns;
} recent_writes[SIM_VALUE_WRITES];
static unsigned recent_next;

/* Checks that [addr, addr + size) is known memory, aligned to size. */
static CUresult check_address(CUdeviceptr addr, size_t size)
{
  char *base;
  size_t extent;
  char *p = (char *)(uintptr_t)addr;
  if (addr % size || sim_mem_lookup(p, &base, &extent, NULL) == SIM_MEM_NONE || (size_t)(p - base) + size > extent)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult sim_stream_resolve_uncaptured(CUstream hStream, int per_thread, struct sim_stream **s)
{
  CUresult r = sim_stream_resolve(hStream, per_thread, s);
  if (r == CUDA_SUCCESS && (*s)->capture) {
    sim_capture_invalidate(*s);
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return r;
}

/* Enqueues the write of `size` bytes of value at addr (lock held). */
static CUresult write_value(struct sim_stream *s, CUdeviceptr addr, uint64_t value, size_t size,
                            unsigned int flags)
{
  if (flags & ~(unsigned)CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = check_address(addr, size);
  if (r != CUDA_SUCCESS)
    return r;
  char *p = (char *)(uintptr_t)addr;
  if (size == 4) {
    uint32_t v = (uint32_t)value;
    memcpy(p, &v, 4);
  } else {
    memcpy(p, &value, 8);
  }
  struct sim_op op = {.kind = SIM_OP_VALUE};
  strcpy(op.name, size == 4 ? "write32" : "write64");
  uint64_t end = 0;
  r = sim_submit(s, &op, &end);
  if (r == CUDA_SUCCESS) {
    recent_writes[recent_next % SIM_VALUE_WRITES].addr = p;
    recent_writes[recent_next % SIM_VALUE_WRITES].done_ns = end;
    recent_next++;
  }
  return r;
}

/* Whether `now` (the value in memory) satisfies a wait for `value` under flags. */
static int condition_holds(uint64_t now, uint64_t value, size_t size, unsigned int flags)
{
  if (size == 4) {
    now = (uint32_t)now;
    value = (uint32_t)value;
  }
  switch (flags & ~(unsigned)CU_STREAM_WAIT_VALUE_FLUSH) {
  case CU_STREAM_WAIT_VALUE_GEQ:
    return size == 4 ? (int32_t)((uint32_t)now - (uint32_t)value) >= 0 : (int64_t)(now - value) >= 0;
  case CU_STREAM_WAIT_VALUE_EQ: return now == value;
  case CU_STREAM_WAIT_VALUE_AND: return (now & value) != 0;
  case CU_STREAM_WAIT_VALUE_NOR: return (size == 4 ? (uint32_t)~(now | value) : ~(now | value)) != 0;
  default: return -1;
  }
}

/* Makes s wait until the value at addr satisfies the condition (lock held). */
static CUresult wait_value(struct sim_stream *s, CUdeviceptr addr, uint64_t value, size_t size,
                           unsigned int flags)
{
  CUresult r = check_address(addr, size);
  if (r != CUDA_SUCCESS)
    return r;
  const char *p = (const char *)(uintptr_t)addr;
  uint64_t now = 0;
  memcpy(&now, p, size);
  int holds = condition_holds(now, value, size, flags);
  if (holds < 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (!holds)
    return CUDA_ERROR_NOT_SUPPORTED; /* satisfied later by the host or a peer: not simulated */
  unsigned n = recent_next < SIM_VALUE_WRITES ? recent_next : SIM_VALUE_WRITES;
  for (unsigned i = 1; i <= n; i++) { /* newest first */
    unsigned k = (recent_next - i) % SIM_VALUE_WRITES;
    if (recent_writes[k].addr == p) {
      if (recent_writes[k].done_ns > s->tail_ns)
        s->tail_ns = recent_writes[k].done_ns;
      break;
    }
  }
  return CUDA_SUCCESS;
}

static CUresult one_op(CUstream hStream, int per_thread, int wait, CUdeviceptr addr, uint64_t value,
                       size_t size, unsigned int flags)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve_uncaptured(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS)
    r = wait ? wait_value(s, addr, value, size, flags) : write_value(s, addr, value, size, flags);
  sim_unlock();
  return r;
}

static CUresult batch(CUstream hStream, int per_thread, unsigned int count, CUstreamBatchMemOpParams *ops,
                      unsigned int flags)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (flags || (count && !ops))
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve_uncaptured(hStream, per_thread, &s);
  for (unsigned i = 0; r == CUDA_SUCCESS && i < count; i++) {
    const CUstreamBatchMemOpParams *o = &ops[i];
    switch (o->operation) {
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
      r = wait_value(s, o->waitValue.address, o->waitValue.value, 4, o->waitValue.flags);
      break;
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      r = wait_value(s, o->waitValue.address, o->waitValue.value64, 8, o->waitValue.flags);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
      r = write_value(s, o->writeValue.address, o->writeValue.value, 4, o->writeValue.flags);
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      r = write_value(s, o->writeValue.address, o->writeValue.value64, 8, o->writeValue.flags);
      break;
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
    case CU_STREAM_MEM_OP_BARRIER:
      break; /* nothing to order: the simulator's writes land at once */
    default:
      r = CUDA_ERROR_INVALID_VALUE;
    }
  }
  sim_unlock();
  return r;
}

/* Every name and ABI: (name, per_thread, wait, value type, size). */
#define SIM_VALUE_OPS(X)                                             \
  X(cuStreamWaitValue32, 0, 1, cuuint32_t, 4)                        \
  X(cuStreamWaitValue32_ptsz, 1, 1, cuuint32_t, 4)                   \
  X(cuStreamWaitValue32_v2, 0, 1, cuuint32_t, 4)                     \
  X(cuStreamWaitValue32_v2_ptsz, 1, 1, cuuint32_t, 4)                \
  X(cuStreamWaitValue64, 0, 1, cuuint64_t, 8)                        \
  X(cuStreamWaitValue64_ptsz, 1, 1, cuuint64_t, 8)                   \
  X(cuStreamWaitValue64_v2, 0, 1, cuuint64_t, 8)                     \
  X(cuStreamWaitValue64_v2_ptsz, 1, 1, cuuint64_t, 8)                \
  X(cuStreamWriteValue32, 0, 0, cuuint32_t, 4)                       \
  X(cuStreamWriteValue32_ptsz, 1, 0, cuuint32_t, 4)                  \
  X(cuStreamWriteValue32_v2, 0, 0, cuuint32_t, 4)                    \
  X(cuStreamWriteValue32_v2_ptsz, 1, 0, cuuint32_t, 4)               \
  X(cuStreamWriteValue64, 0, 0, cuuint64_t, 8)                       \
  X(cuStreamWriteValue64_ptsz, 1, 0, cuuint64_t, 8)                  \
  X(cuStreamWriteValue64_v2, 0, 0, cuuint64_t, 8)                    \
  X(cuStreamWriteValue64_v2_ptsz, 1, 0, cuuint64_t, 8)

#define SIM_DEFINE_VALUE_OP(name, pt, wait, T, size)                                       \
  /** A stream memory operation (see the CUDA driver API of the same name). */            \
  SIM_API CUresult name(CUstream stream, CUdeviceptr addr, T value, unsigned int flags)    \
  {                                                                                        \
    return one_op(stream, pt, wait, addr, value, size, flags);                             \
  }
SIM_VALUE_OPS(SIM_DEFINE_VALUE_OP)

/** A batch of stream memory operations (CUDA 8.0 ABI). */
SIM_API CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
                                    unsigned int flags)
{
  return batch(stream, 0, count, paramArray, flags);
}

/** cuStreamBatchMemOp, per-thread default stream entry point. */
SIM_API CUresult cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
                                         unsigned int flags)
{
  return batch(stream, 1, count, paramArray, flags);
}

/** A batch of stream memory operations (CUDA 11.7 ABI). */
SIM_API CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
                                       unsigned int flags)
{
  return batch(stream, 0, count, paramArray, flags);
}

/** cuStreamBatchMemOp_v2, per-thread default stream entry point. */
SIM_API CUresult cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                            CUstreamBatchMemOpParams *paramArray, unsigned int flags)
{
  return batch(stream, 1, count, paramArray, flags);
}
