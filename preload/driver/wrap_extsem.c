/*
 * Driver external semaphores: cuSignalExternalSemaphoresAsync and
 * cuWaitExternalSemaphoresAsync (+_ptsz), as CPU spans on their stream
 * (CT_API_DRIVER) like cuStreamWaitValue32 (wrap_streammem.c): a barrier for event
 * chaining when they succeeded, nothing timed on the GPU, and a MEMOP record
 * (CT_MEMOP_EXT_SIGNAL / CT_MEMOP_EXT_WAIT, format 1.10: the semaphores, the first
 * one's fence value). A wait holds its stream until the semaphore's producer outside
 * CUDA signals it; preload/hooks/extsem.c says more (and traces the runtime's).
 */
#include "wrap_common.h"

typedef CUresult (*ext_signal_fn)(const CUexternalSemaphore *,
                                  const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *, unsigned, CUstream);
typedef CUresult (*ext_wait_fn)(const CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *,
                                unsigned, CUstream);

/* A span on stream s without GPU work, a barrier for event chaining when it succeeded,
 * and its MEMOP record of `kind`. */
#define EXT_SEM_BODY(id, ptsz, realp, ra, type, kind)                                        \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, s, 0, real(sems, params, n, s), {             \
    if (r == CUDA_SUCCESS && ctph_chain_on)                                               \
      ctph_stream_barrier(s, ptsz);                                                       \
  }, ctph_emit_ext_sem(c.corr, kind, r == CUDA_SUCCESS && params, n,                      \
                       r == CUDA_SUCCESS && params && n ? params[0].params.fence.value : 0, \
                       r == CUDA_SUCCESS && params && n ? params[0].params.keyedMutex.key : 0))

CTPD_INLINE CUresult ext_signal_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     const CUexternalSemaphore *sems,
                                     const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *params, unsigned n,
                                     CUstream s) {
  EXT_SEM_BODY(id, ptsz, realp, ra, ext_signal_fn, CT_MEMOP_EXT_SIGNAL);
}

CTPD_INLINE CUresult ext_wait_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   const CUexternalSemaphore *sems,
                                   const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *params, unsigned n,
                                   CUstream s) {
  EXT_SEM_BODY(id, ptsz, realp, ra, ext_wait_fn, CT_MEMOP_EXT_WAIT);
}

#define SIGNAL (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *p, unsigned n, CUstream s)
#define WAIT (const CUexternalSemaphore *e, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *p, unsigned n, CUstream s)
CTPD_DEFINE(cuSignalExternalSemaphoresAsync, 0, ext_signal_body, SIGNAL, (e, p, n, s))
CTPD_DEFINE(cuSignalExternalSemaphoresAsync_ptsz, 1, ext_signal_body, SIGNAL, (e, p, n, s))
CTPD_DEFINE(cuWaitExternalSemaphoresAsync, 0, ext_wait_body, WAIT, (e, p, n, s))
CTPD_DEFINE(cuWaitExternalSemaphoresAsync_ptsz, 1, ext_wait_body, WAIT, (e, p, n, s))
