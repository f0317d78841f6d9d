/*
 * Context-wide event records and waits, as CPU spans with no stream (CT_API_DRIVER):
 * cuCtxRecordEvent, cuCtxWaitEvent (CUDA 12.5) and their green-context forms
 * cuGreenCtxRecordEvent, cuGreenCtxWaitEvent (12.4). A record captures all work of a
 * context queued so far; a wait holds all later work of a context (of a primary
 * context: also of its green contexts) until the event completed: like
 * cuStreamWaitEvent on every stream at once, so a successful wait is a barrier for
 * event chaining on every stream (ctph_barrier_all). There is no runtime form.
 */
#include "wrap_common.h"

typedef CUresult (*ctx_event_fn)(CUcontext, CUevent);
typedef CUresult (*green_event_fn)(CUgreenCtx, CUevent);

CTPD_INLINE CUresult ctx_record_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUcontext ctx, CUevent e) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, ctx_event_fn, CTPH_NO_STREAM, 0, real(ctx, e), (void)0,
                 (void)0);
}

CTPD_INLINE CUresult ctx_wait_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUcontext ctx, CUevent e) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, ctx_event_fn, CTPH_NO_STREAM, 0, real(ctx, e), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_barrier_all();
  }, (void)0);
}

CTPD_INLINE CUresult green_record_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUgreenCtx ctx, CUevent e) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, green_event_fn, CTPH_NO_STREAM, 0, real(ctx, e), (void)0,
                 (void)0);
}

CTPD_INLINE CUresult green_wait_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUgreenCtx ctx, CUevent e) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, green_event_fn, CTPH_NO_STREAM, 0, real(ctx, e), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_barrier_all();
  }, (void)0);
}

CTPD_DEFINE(cuCtxRecordEvent, 0, ctx_record_body, (CUcontext ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuCtxWaitEvent, 0, ctx_wait_body, (CUcontext ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuGreenCtxRecordEvent, 0, green_record_body, (CUgreenCtx ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuGreenCtxWaitEvent, 0, green_wait_body, (CUgreenCtx ctx, CUevent e), (ctx, e))
