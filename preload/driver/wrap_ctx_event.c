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

/*
 * cuCtxFromGreenCtx and cuGreenCtxDestroy: no record. The context a green context is
 * converted to has a NULL stream of its own, apart from the device's primary context's
 * (the legacy stream, id 0): the hooks remember the converted context (whatever the
 * caller and whether tracing is on) so that work on the NULL stream while it is current
 * gets a stream id of its own (preload/hooks/streams.c), and forget it when the green
 * context is destroyed (its address may then serve another context).
 */
typedef CUresult (*from_green_fn)(CUcontext *, CUgreenCtx);
typedef CUresult (*green_destroy_fn)(CUgreenCtx);

CTPD_INLINE CUresult from_green_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUcontext *out, CUgreenCtx green) {
  (void)id, (void)ptsz, (void)ra;
  if (!realp)
    return CTPD_NO_REAL;
  CUresult r = ((from_green_fn)realp)(out, green);
  if (r == CUDA_SUCCESS && out && *out)
    ctph_green_context_seen(green, *out);
  return r;
}

CTPD_INLINE CUresult green_destroy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUgreenCtx green) {
  (void)id, (void)ptsz, (void)ra;
  if (!realp)
    return CTPD_NO_REAL;
  CUresult r = ((green_destroy_fn)realp)(green);
  if (r == CUDA_SUCCESS && green)
    ctph_green_context_destroyed(green);
  return r;
}

CTPD_DEFINE(cuCtxFromGreenCtx, 0, from_green_body, (CUcontext *out, CUgreenCtx green),
            (out, green))
CTPD_DEFINE(cuGreenCtxDestroy, 0, green_destroy_body, (CUgreenCtx green), (green))

/*
 * cuCtxCreate (the 3.2, 11.4 and 12.5 ABIs) and cuCtxDestroy: no record. A created
 * context has a NULL stream and per-thread default streams of its own, apart from
 * its device's primary context's: the hooks remember it (whatever the caller and
 * whether tracing is on) so that work on those streams gets stream ids of its own
 * (preload/hooks/streams.c), and forget it when it is destroyed (its address may
 * then serve another context, whose streams get new ids).
 */
typedef CUresult (*create_v2_fn)(CUcontext *, unsigned, CUdevice);
typedef CUresult (*create_v3_fn)(CUcontext *, CUexecAffinityParam *, int, unsigned, CUdevice);
typedef CUresult (*create_v4_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*ctx_destroy_fn)(CUcontext);

/* The body of the cuCtxCreate wrappers: the real call CALL, then the context it made
 * remembered. */
#define CTX_CREATE_BODY(fn_type, CALL)                                                  \
  (void)id, (void)ptsz, (void)ra;                                                       \
  if (!realp)                                                                           \
    return CTPD_NO_REAL;                                                                \
  fn_type real = (fn_type)realp;                                                        \
  CUresult r = CALL;                                                                    \
  if (r == CUDA_SUCCESS && out && *out)                                                 \
    ctph_context_created(*out);                                                         \
  return r;

CTPD_INLINE CUresult create_v2_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUcontext *out, unsigned flags, CUdevice dev) {
  CTX_CREATE_BODY(create_v2_fn, real(out, flags, dev))
}

CTPD_INLINE CUresult create_v3_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUcontext *out, CUexecAffinityParam *params, int n,
                                    unsigned flags, CUdevice dev) {
  CTX_CREATE_BODY(create_v3_fn, real(out, params, n, flags, dev))
}

CTPD_INLINE CUresult create_v4_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUcontext *out, CUctxCreateParams *params, unsigned flags,
                                    CUdevice dev) {
  CTX_CREATE_BODY(create_v4_fn, real(out, params, flags, dev))
}

CTPD_INLINE CUresult ctx_destroy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUcontext ctx) {
  (void)id, (void)ptsz, (void)ra;
  if (!realp)
    return CTPD_NO_REAL;
  uint64_t tag = ctph_context_tag(ctx); /* read first: the address is free once it returns */
  CUresult r = ((ctx_destroy_fn)realp)(ctx);
  if (r == CUDA_SUCCESS && ctx)
    ctph_context_destroyed(ctx, tag);
  return r;
}

CTPD_DEFINE(cuCtxCreate_v2, 0, create_v2_body, (CUcontext *out, unsigned flags, CUdevice dev),
            (out, flags, dev))
CTPD_DEFINE(cuCtxCreate_v3, 0, create_v3_body,
            (CUcontext *out, CUexecAffinityParam *params, int n, unsigned flags, CUdevice dev),
            (out, params, n, flags, dev))
CTPD_DEFINE(cuCtxCreate_v4, 0, create_v4_body,
            (CUcontext *out, CUctxCreateParams *params, unsigned flags, CUdevice dev),
            (out, params, flags, dev))
CTPD_DEFINE(cuCtxDestroy_v2, 0, ctx_destroy_body, (CUcontext ctx), (ctx))
