/* External semaphores: cuImportExternalSemaphore, cuDestroyExternalSemaphore and the
 * stream operations cuSignalExternalSemaphoresAsync / cuWaitExternalSemaphoresAsync
 * (+_ptsz). Nothing outside the process exists here: an imported semaphore (any
 * handle type; the handle is not used) is a fence value and the GPU time a CUDA
 * stream last signalled it. A signal sets the value (params.fence.value) when its
 * stream reaches it (the stream's work queued before it is done); it takes no stream
 * time. A wait is resolved when it is queued, as the simulator's streams are timed
 * then: when a CUDA signal already set a value at least the one waited for
 * (params.fence.value; a keyed mutex or binary semaphore: any signal), the stream
 * waits until that signal; otherwise the producer outside CUDA signals
 * SIMCUDA_EXTSEM_US (default 0) after the wait was queued, and the stream waits until
 * then. Neither is logged in the truth log (no GPU operation). Both are refused inside
 * a stream capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture invalidated):
 * the simulator's graphs have no semaphore node. */
#include "sim.h"

#include <stdlib.h>

CUresult cuSignalExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *,
                                              unsigned int, CUstream);
CUresult cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *,
                                            unsigned int, CUstream);

struct sim_ext_sem {
  CUexternalSemaphoreHandleType type;
  int signalled;        /* a CUDA stream signalled it */
  uint64_t value;       /* the last signalled fence value */
  uint64_t signal_ns;   /* when the GPU performs that signal */
};

/** Imports an external semaphore (the handle itself is not used). */
SIM_API CUresult cuImportExternalSemaphore(CUexternalSemaphore *extSem_out,
                                           const CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC *semHandleDesc)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *ctx;
  CUresult r = sim_require_ctx(&ctx);
  if (r != CUDA_SUCCESS)
    return r;
  if (!extSem_out || !semHandleDesc || semHandleDesc->type < CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD
      || semHandleDesc->type > CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_WIN32)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_ext_sem *e = calloc(1, sizeof *e);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  e->type = semHandleDesc->type;
  sim_lock();
  int failed = sim_handle_add(e, SIM_KIND_EXT_SEM) != 0;
  sim_unlock();
  if (failed) {
    free(e);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *extSem_out = (CUexternalSemaphore)e;
  return CUDA_SUCCESS;
}

/** Destroys an imported external semaphore. */
SIM_API CUresult cuDestroyExternalSemaphore(CUexternalSemaphore extSem)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_lock();
  int ok = extSem && sim_handle_kind(extSem) == SIM_KIND_EXT_SEM;
  if (ok)
    sim_handle_remove(extSem);
  sim_unlock();
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  free(extSem);
  return CUDA_SUCCESS;
}

/* The semaphores of a call, all live (lock held): CUDA_ERROR_INVALID_HANDLE if not. */
static CUresult check_sems(const CUexternalSemaphore *sems, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    if (!sems[i] || sim_handle_kind(sems[i]) != SIM_KIND_EXT_SEM)
      return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

static CUresult signal_sems(const CUexternalSemaphore *sems, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *params,
                            unsigned n, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (n && (!sems || !params))
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve_uncaptured(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS)
    r = check_sems(sems, n);
  if (r == CUDA_SUCCESS) {
    uint64_t at = sim_stream_ready_ns(s);
    uint64_t now = sim_now_ns();
    if (at < now)
      at = now;
    for (unsigned i = 0; i < n; i++) {
      struct sim_ext_sem *e = (struct sim_ext_sem *)sems[i];
      e->signalled = 1;
      e->value = params[i].params.fence.value;
      e->signal_ns = at;
    }
  }
  sim_unlock();
  return r;
}

static CUresult wait_sems(const CUexternalSemaphore *sems, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *params,
                          unsigned n, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (n && (!sems || !params))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t external_ns = sim_now_ns() + (uint64_t)(sim_knobs.extsem_us * 1000.0);
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve_uncaptured(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS)
    r = check_sems(sems, n);
  for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++) {
    const struct sim_ext_sem *e = (const struct sim_ext_sem *)sems[i];
    uint64_t until = e->signalled && e->value >= params[i].params.fence.value ? e->signal_ns : external_ns;
    if (until > s->tail_ns)
      s->tail_ns = until;
  }
  sim_unlock();
  return r;
}

/** Signals external semaphores on a stream. */
SIM_API CUresult cuSignalExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
                                                 const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray,
                                                 unsigned int numExtSems, CUstream stream)
{
  return signal_sems(extSemArray, paramsArray, numExtSems, stream, 0);
}

/** cuSignalExternalSemaphoresAsync on the per-thread default stream's terms. */
SIM_API CUresult cuSignalExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *extSemArray,
                                                      const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *paramsArray,
                                                      unsigned int numExtSems, CUstream stream)
{
  return signal_sems(extSemArray, paramsArray, numExtSems, stream, 1);
}

/** Makes a stream wait on external semaphores. */
SIM_API CUresult cuWaitExternalSemaphoresAsync(const CUexternalSemaphore *extSemArray,
                                               const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray,
                                               unsigned int numExtSems, CUstream stream)
{
  return wait_sems(extSemArray, paramsArray, numExtSems, stream, 0);
}

/** cuWaitExternalSemaphoresAsync on the per-thread default stream's terms. */
SIM_API CUresult cuWaitExternalSemaphoresAsync_ptsz(const CUexternalSemaphore *extSemArray,
                                                    const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *paramsArray,
                                                    unsigned int numExtSems, CUstream stream)
{
  return wait_sems(extSemArray, paramsArray, numExtSems, stream, 1);
}
