/*
 * Driver synchronisation, waits, host functions and capture, as CPU spans
 * (CT_API_DRIVER): cuCtxSynchronize (the CUDA 2.0 ABI without arguments) and
 * cuCtxSynchronize_v2 (13000, with its context), cuStreamSynchronize,
 * cuEventSynchronize, cuStreamWaitEvent, cuLaunchHostFunc, cuStreamBeginCapture_v2
 * and cuStreamEndCapture (with _ptsz). Capture begin/end also tell the hooks which
 * streams capture, so that nothing is timed with events inside a capture; a wait on
 * an event and a host function are barriers for event chaining (work the tracer
 * does not time runs on the stream there).
 */
#include "wrap_common.h"

typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*begin_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_fn)(CUstream, CUgraph *);
typedef CUresult (*ctx_sync_v2_fn)(CUcontext);
typedef CUresult (*event_sync_fn)(CUevent);
typedef CUresult (*wait_event_fn)(CUstream, CUevent, unsigned);
typedef CUresult (*host_func_fn)(CUstream, CUhostFn, void *);

/* A span without GPU work; AFTER runs after the real call when traced. */
#define SPAN_BODY(id, ptsz, realp, ra, type, stream, CALL, AFTER) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, 0, CALL, AFTER, (void)0)

CTPD_INLINE CUresult ctx_sync_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   int unused) {
  (void)unused;
  SPAN_BODY(id, ptsz, realp, ra, ctx_sync_fn, CTPH_NO_STREAM, real(), (void)0);
}

CTPD_INLINE CUresult stream_sync_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUstream s) {
  SPAN_BODY(id, ptsz, realp, ra, stream_sync_fn, s, real(s), (void)0);
}

CTPD_INLINE CUresult ctx_sync_v2_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUcontext ctx) {
  SPAN_BODY(id, ptsz, realp, ra, ctx_sync_v2_fn, CTPH_NO_STREAM, real(ctx), (void)0);
}

CTPD_INLINE CUresult event_sync_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUevent e) {
  SPAN_BODY(id, ptsz, realp, ra, event_sync_fn, CTPH_NO_STREAM, real(e), (void)0);
}

CTPD_INLINE CUresult wait_event_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUstream s, CUevent e, unsigned flags) {
  SPAN_BODY(id, ptsz, realp, ra, wait_event_fn, s, real(s, e, flags), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult host_func_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUstream s, CUhostFn fn, void *user) {
  SPAN_BODY(id, ptsz, realp, ra, host_func_fn, s, real(s, fn, user), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult begin_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUstream s, CUstreamCaptureMode mode) {
  SPAN_BODY(id, ptsz, realp, ra, begin_fn, s, real(s, mode), {
    if (r == CUDA_SUCCESS)
      ctph_capture_begun(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult end_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                              CUstream s, CUgraph *graph) {
  SPAN_BODY(id, ptsz, realp, ra, end_fn, s, real(s, graph), {
    ctph_capture_ended(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_DEFINE(cuCtxSynchronize, 0, ctx_sync_body, (void), (0))
CTPD_DEFINE(cuStreamSynchronize, 0, stream_sync_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamSynchronize_ptsz, 1, stream_sync_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamBeginCapture_v2, 0, begin_body, (CUstream s, CUstreamCaptureMode mode),
            (s, mode))
CTPD_DEFINE(cuStreamBeginCapture_v2_ptsz, 1, begin_body, (CUstream s, CUstreamCaptureMode mode),
            (s, mode))
CTPD_DEFINE(cuStreamEndCapture, 0, end_body, (CUstream s, CUgraph *graph), (s, graph))
CTPD_DEFINE(cuStreamEndCapture_ptsz, 1, end_body, (CUstream s, CUgraph *graph), (s, graph))
CTPD_DEFINE(cuCtxSynchronize_v2, 0, ctx_sync_v2_body, (CUcontext ctx), (ctx))
CTPD_DEFINE(cuEventSynchronize, 0, event_sync_body, (CUevent e), (e))
CTPD_DEFINE(cuStreamWaitEvent, 0, wait_event_body, (CUstream s, CUevent e, unsigned flags),
            (s, e, flags))
CTPD_DEFINE(cuStreamWaitEvent_ptsz, 1, wait_event_body, (CUstream s, CUevent e, unsigned flags),
            (s, e, flags))
CTPD_DEFINE(cuLaunchHostFunc, 0, host_func_body, (CUstream s, CUhostFn fn, void *user),
            (s, fn, user))
CTPD_DEFINE(cuLaunchHostFunc_ptsz, 1, host_func_body, (CUstream s, CUhostFn fn, void *user),
            (s, fn, user))
