/* External semaphores in the simulated libcudart: cudaImportExternalSemaphore,
 * cudaDestroyExternalSemaphore, cudaSignalExternalSemaphoresAsync and
 * cudaWaitExternalSemaphoresAsync (+_ptsz), each one driver call (a
 * cudaExternalSemaphore_t is the driver's CUexternalSemaphore). The parameters are
 * copied field by field into the driver's structures (fence value, keyed-mutex key and
 * timeout, flags). What the driver then does: tests/sim/driver/extsem.c. */
#include "cudart_internal.h"

#include <stdlib.h>

/** Imports an external semaphore (the driver's view of the handle). */
SIM_EXPORT cudaError_t cudaImportExternalSemaphore(cudaExternalSemaphore_t *extSem_out,
                                                   const struct cudaExternalSemaphoreHandleDesc *semHandleDesc)
{
  if (!semHandleDesc)
    return rt_fail(cudaErrorInvalidValue);
  CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC d = {.type = (CUexternalSemaphoreHandleType)semHandleDesc->type,
                                           .flags = semHandleDesc->flags};
  d.handle.fd = semHandleDesc->handle.fd;
  RT_ENTER();
  RT_NEED(simdrv.ImportExternalSemaphore);
  return rt_check(simdrv.ImportExternalSemaphore((CUexternalSemaphore *)extSem_out, &d));
}

/** Destroys an imported external semaphore. */
SIM_EXPORT cudaError_t cudaDestroyExternalSemaphore(cudaExternalSemaphore_t extSem)
{
  RT_ENTER();
  RT_NEED(simdrv.DestroyExternalSemaphore);
  return rt_check(simdrv.DestroyExternalSemaphore((CUexternalSemaphore)extSem));
}

static cudaError_t signal_sems(const cudaExternalSemaphore_t *sems, const struct cudaExternalSemaphoreSignalParams *p,
                               unsigned n, cudaStream_t stream, int pt)
{
  if (n && (!sems || !p))
    return rt_fail(cudaErrorInvalidValue);
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *d = calloc(n ? n : 1, sizeof *d);
  if (!d)
    return rt_fail(cudaErrorMemoryAllocation);
  for (unsigned i = 0; i < n; i++) {
    d[i].params.fence.value = p[i].params.fence.value;
    d[i].params.keyedMutex.key = p[i].params.keyedMutex.key;
    d[i].flags = p[i].flags;
  }
  RT_ENTER();
  cudaError_t e = simdrv.SignalExternalSemaphoresAsync
                      ? rt_check(RT_PICK(pt, SignalExternalSemaphoresAsync)((const CUexternalSemaphore *)sems, d, n,
                                                                            (CUstream)stream))
                      : rt_fail(cudaErrorNotSupported);
  free(d);
  return e;
}

static cudaError_t wait_sems(const cudaExternalSemaphore_t *sems, const struct cudaExternalSemaphoreWaitParams *p,
                             unsigned n, cudaStream_t stream, int pt)
{
  if (n && (!sems || !p))
    return rt_fail(cudaErrorInvalidValue);
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *d = calloc(n ? n : 1, sizeof *d);
  if (!d)
    return rt_fail(cudaErrorMemoryAllocation);
  for (unsigned i = 0; i < n; i++) {
    d[i].params.fence.value = p[i].params.fence.value;
    d[i].params.keyedMutex.key = p[i].params.keyedMutex.key;
    d[i].params.keyedMutex.timeoutMs = p[i].params.keyedMutex.timeoutMs;
    d[i].flags = p[i].flags;
  }
  RT_ENTER();
  cudaError_t e = simdrv.WaitExternalSemaphoresAsync
                      ? rt_check(RT_PICK(pt, WaitExternalSemaphoresAsync)((const CUexternalSemaphore *)sems, d, n,
                                                                          (CUstream)stream))
                      : rt_fail(cudaErrorNotSupported);
  free(d);
  return e;
}

/** Signals external semaphores on a stream. */
SIM_EXPORT cudaError_t cudaSignalExternalSemaphoresAsync(const cudaExternalSemaphore_t *extSemArray,
                                                         const struct cudaExternalSemaphoreSignalParams *paramsArray,
                                                         unsigned int numExtSems, cudaStream_t stream)
{
  return signal_sems(extSemArray, paramsArray, numExtSems, stream, 0);
}

/** cudaSignalExternalSemaphoresAsync where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaSignalExternalSemaphoresAsync_ptsz(const cudaExternalSemaphore_t *extSemArray,
                                                              const struct cudaExternalSemaphoreSignalParams *paramsArray,
                                                              unsigned int numExtSems, cudaStream_t stream)
{
  return signal_sems(extSemArray, paramsArray, numExtSems, stream, 1);
}

/** Makes a stream wait on external semaphores. */
SIM_EXPORT cudaError_t cudaWaitExternalSemaphoresAsync(const cudaExternalSemaphore_t *extSemArray,
                                                       const struct cudaExternalSemaphoreWaitParams *paramsArray,
                                                       unsigned int numExtSems, cudaStream_t stream)
{
  return wait_sems(extSemArray, paramsArray, numExtSems, stream, 0);
}

/** cudaWaitExternalSemaphoresAsync where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaWaitExternalSemaphoresAsync_ptsz(const cudaExternalSemaphore_t *extSemArray,
                                                            const struct cudaExternalSemaphoreWaitParams *paramsArray,
                                                            unsigned int numExtSems, cudaStream_t stream)
{
  return wait_sems(extSemArray, paramsArray, numExtSems, stream, 1);
}
