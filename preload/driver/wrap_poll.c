/*
 * The driver's queries, cuEventQuery and cuStreamQuery (+_ptsz), traced as coalesced
 * polls (CT_API_DRIVER; the coalescing is preload/hooks/poll.c's). The runtime's own
 * calls to them pass untraced (callers.c): a cudaEventQuery stays one sequence.
 */
#include "wrap_common.h"

typedef CUresult (*event_query_fn)(CUevent);
typedef CUresult (*stream_query_fn)(CUstream);

CTPD_INLINE CUresult event_query_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUevent e) {
  event_query_fn real = (event_query_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (ctpd_caller_passes(ra)) /* the runtime's own query, inside its traced poll */
    return real(e);
  CTPH_POLL_BODY(CUresult, id, ptsz, CT_API_DRIVER, (uintptr_t)e, CTPH_NO_STREAM,
                 CTP_UNLIKELY(!ctph_on()), real(e), CUDA_ERROR_NOT_READY);
}

CTPD_INLINE CUresult stream_query_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUstream s) {
  stream_query_fn real = (stream_query_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (ctpd_caller_passes(ra)) /* the runtime's own query, inside its traced poll */
    return real(s);
  CTPH_POLL_BODY(CUresult, id, ptsz, CT_API_DRIVER, (uintptr_t)s, s, CTP_UNLIKELY(!ctph_on()),
                 real(s), CUDA_ERROR_NOT_READY);
}

CTPD_DEFINE(cuEventQuery, 0, event_query_body, (CUevent e), (e))
CTPD_DEFINE(cuStreamQuery, 0, stream_query_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamQuery_ptsz, 1, stream_query_body, (CUstream s), (s))
