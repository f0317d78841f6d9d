/*
 * External semaphores in the runtime: cudaSignalExternalSemaphoresAsync and
 * cudaWaitExternalSemaphoresAsync (+_ptsz), stream operations that order a stream
 * against work outside CUDA (a Vulkan or Direct3D queue, another process: the
 * semaphore was imported with cudaImportExternalSemaphore). A wait holds its stream
 * until the external producer signals, which the trace cannot see: the GPU may sit
 * idle behind it. Each call is a CPU span on its stream (like cudaStreamWaitEvent),
 * a barrier for event chaining when it succeeded (work the tracer does not time runs
 * there), and carries a MEMOP record (format 1.10): kind CT_MEMOP_EXT_WAIT or
 * CT_MEMOP_EXT_SIGNAL, `count` the semaphores, `value` the first one's fence value
 * (when 0, its keyed-mutex key), so that `cutrace gaps` can name the stream that
 * waited on an external semaphore. Nothing is timed on the GPU. The driver's
 * cuSignalExternalSemaphoresAsync / cuWaitExternalSemaphoresAsync (+_ptsz) are
 * preload/driver/wrap_extsem.c's.
 */
#include "hooks_internal.h"

CTP_EXPORT __typeof__(cudaSignalExternalSemaphoresAsync) cudaSignalExternalSemaphoresAsync_ptsz;
CTP_EXPORT __typeof__(cudaWaitExternalSemaphoresAsync) cudaWaitExternalSemaphoresAsync_ptsz;

void ctph_emit_ext_sem(uint64_t corr, int kind, int ok, unsigned count, uint64_t fence,
                       uint64_t key) {
  ct_record r = {.kind = CT_KIND_MEMOP};
  r.u.memop = (struct ct_memop){.corr = corr, .kind = (uint64_t)kind, .async = 1,
                                .count = count, .value = ok && count ? (fence ? fence : key) : 0};
  ctp_emit(&r);
}

/* A span on stream with no GPU work: a barrier for event chaining when it succeeded,
 * and its MEMOP record (kind, the first parameter's fence value or key when it
 * succeeded), written before the API record. */
#define EXT_SEM_SPAN(sym, ptsz, kind)                                                        \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                  \
  if (!real)                                                                               \
    return cudaErrorSharedObjectSymbolNotFound;                                            \
  ctph_call c;                                                                             \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, 0, (CUstream)stream, 0);                        \
  cudaError_t r = real(sems, params, n, stream);                                           \
  if (r == cudaSuccess && ctph_chain_on) {                                                 \
    int saved_ = errno;                                                                    \
    ctph_stream_barrier((CUstream)stream, ptsz);                                           \
    errno = saved_;                                                                        \
  }                                                                                        \
  CTPH_FINISH(c, r,                                                                        \
              ctph_emit_ext_sem(c.corr, kind, r == cudaSuccess && params, n,               \
                                r == cudaSuccess && params && n ? params[0].params.fence.value : 0, \
                                r == cudaSuccess && params && n ? params[0].params.keyedMutex.key : 0)); \
  return r

#define SIGNAL_PARAMS                                                                        \
  (const cudaExternalSemaphore_t *sems, const struct cudaExternalSemaphoreSignalParams *params, \
   unsigned int n, cudaStream_t stream)
#define WAIT_PARAMS                                                                          \
  (const cudaExternalSemaphore_t *sems, const struct cudaExternalSemaphoreWaitParams *params, \
   unsigned int n, cudaStream_t stream)

/** cudaSignalExternalSemaphoresAsync, traced. */
CTP_EXPORT cudaError_t cudaSignalExternalSemaphoresAsync SIGNAL_PARAMS {
  EXT_SEM_SPAN(cudaSignalExternalSemaphoresAsync, 0, CT_MEMOP_EXT_SIGNAL);
}

/** cudaSignalExternalSemaphoresAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaSignalExternalSemaphoresAsync_ptsz SIGNAL_PARAMS {
  EXT_SEM_SPAN(cudaSignalExternalSemaphoresAsync_ptsz, 1, CT_MEMOP_EXT_SIGNAL);
}

/** cudaWaitExternalSemaphoresAsync, traced. */
CTP_EXPORT cudaError_t cudaWaitExternalSemaphoresAsync WAIT_PARAMS {
  EXT_SEM_SPAN(cudaWaitExternalSemaphoresAsync, 0, CT_MEMOP_EXT_WAIT);
}

/** cudaWaitExternalSemaphoresAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaWaitExternalSemaphoresAsync_ptsz WAIT_PARAMS {
  EXT_SEM_SPAN(cudaWaitExternalSemaphoresAsync_ptsz, 1, CT_MEMOP_EXT_WAIT);
}
