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

/* The record body NAME and the wait body NAME_wait for a context handle of type CTX:
 * a span with no stream; a successful wait restarts event chaining everywhere. */
#define CTX_EVENT_BODIES(name, CTX)                                                         \
  typedef CUresult (*name##_fn)(CTX, CUevent);                                             \
  CTPD_INLINE CUresult name(enum ctph_id id, int ptsz, void *realp, const void *ra, CTX ctx, \
                            CUevent e) {                                                   \
    CTPD_SPAN_BODY(id, ptsz, realp, ra, name##_fn, CTPH_NO_STREAM, 0, real(ctx, e), (void)0, \
                   (void)0);                                                               \
  }                                                                                        \
  CTPD_INLINE CUresult name##_wait(enum ctph_id id, int ptsz, void *realp, const void *ra,  \
                                   CTX ctx, CUevent e) {                                   \
    CTPD_SPAN_BODY(id, ptsz, realp, ra, name##_fn, CTPH_NO_STREAM, 0, real(ctx, e), {       \
      if (r == CUDA_SUCCESS && ctph_chain_on)                                              \
        ctph_barrier_all();                                                                \
    }, (void)0);                                                                           \
  }

CTX_EVENT_BODIES(ctx_event, CUcontext)
CTX_EVENT_BODIES(green_event, CUgreenCtx)

CTPD_DEFINE(cuCtxRecordEvent, 0, ctx_event, (CUcontext ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuCtxWaitEvent, 0, ctx_event_wait, (CUcontext ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuGreenCtxRecordEvent, 0, green_event, (CUgreenCtx ctx, CUevent e), (ctx, e))
CTPD_DEFINE(cuGreenCtxWaitEvent, 0, green_event_wait, (CUgreenCtx ctx, CUevent e), (ctx, e))
