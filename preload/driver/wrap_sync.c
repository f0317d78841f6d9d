/*
 * Driver synchronisation, waits, host functions and capture, as CPU spans
 * (CT_API_DRIVER): cuCtxSynchronize (the CUDA 2.0 ABI without arguments) and
 * cuCtxSynchronize_v2 (13000, with its context), cuStreamSynchronize,
 * cuEventSynchronize, cuStreamWaitEvent, cuLaunchHostFunc, cuStreamAddCallback, cuGraphUpload,
 * cuStreamBeginCapture_v2, the CUDA 10.0 cuStreamBeginCapture (one argument, global
 * mode), cuStreamBeginCaptureToGraph (12.3: into the program's graph) and
 * cuStreamEndCapture (with _ptsz). Capture begin/end also tell the hooks which
 * streams capture, so that nothing is timed with events inside a capture; a wait on
 * an event, a host function or callback and a graph upload are barriers for event chaining (work
 * the tracer does not time runs on the stream there).
 */
#include "wrap_common.h"

#undef cuStreamBeginCapture /* cuda.h maps it to cuStreamBeginCapture_v2 */

typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*stream_sync_fn)(CUstream);
typedef CUresult (*begin_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*begin_v1_fn)(CUstream);
typedef CUresult (*begin_to_graph_fn)(CUstream, CUgraph, const CUgraphNode *,
                                      const CUgraphEdgeData *, size_t, CUstreamCaptureMode);
typedef CUresult (*upload_fn)(CUgraphExec, CUstream);
typedef CUresult (*callback_fn)(CUstream, CUstreamCallback, void *, unsigned);
typedef CUresult (*end_fn)(CUstream, CUgraph *);
typedef CUresult (*ctx_sync_v2_fn)(CUcontext);
typedef CUresult (*event_sync_fn)(CUevent);
typedef CUresult (*wait_event_fn)(CUstream, CUevent, unsigned);
typedef CUresult (*host_func_fn)(CUstream, CUhostFn, void *);
typedef CUresult (*profiler_fn)(void);

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

CTPD_INLINE CUresult callback_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUstream s, CUstreamCallback fn, void *user, unsigned flags) {
  SPAN_BODY(id, ptsz, realp, ra, callback_fn, s, real(s, fn, user, flags), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult begin_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUstream s, CUstreamCaptureMode mode) {
  CTPD_WHILE_PAUSED(begin_fn, real(s, mode), if (r == CUDA_SUCCESS) ctph_capture_begun(s, ptsz));
  SPAN_BODY(id, ptsz, realp, ra, begin_fn, s, real(s, mode), {
    if (r == CUDA_SUCCESS)
      ctph_capture_begun(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult begin_v1_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUstream s) {
  CTPD_WHILE_PAUSED(begin_v1_fn, real(s), if (r == CUDA_SUCCESS) ctph_capture_begun(s, ptsz));
  SPAN_BODY(id, ptsz, realp, ra, begin_v1_fn, s, real(s), {
    if (r == CUDA_SUCCESS)
      ctph_capture_begun(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult begin_to_graph_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         CUstream s, CUgraph graph, const CUgraphNode *deps,
                                         const CUgraphEdgeData *edges, size_t n,
                                         CUstreamCaptureMode mode) {
  CTPD_WHILE_PAUSED(begin_to_graph_fn, real(s, graph, deps, edges, n, mode),
                    if (r == CUDA_SUCCESS) ctph_capture_begun(s, ptsz));
  SPAN_BODY(id, ptsz, realp, ra, begin_to_graph_fn, s, real(s, graph, deps, edges, n, mode), {
    if (r == CUDA_SUCCESS)
      ctph_capture_begun(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

/* A graph upload queues device work the tracer does not time on the stream. */
CTPD_INLINE CUresult upload_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 CUgraphExec exec, CUstream s) {
  SPAN_BODY(id, ptsz, realp, ra, upload_fn, s, real(exec, s), {
    if (r == CUDA_SUCCESS && ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

CTPD_INLINE CUresult end_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                              CUstream s, CUgraph *graph) {
  CTPD_WHILE_PAUSED(end_fn, real(s, graph), ctph_capture_ended(s, ptsz));
  SPAN_BODY(id, ptsz, realp, ra, end_fn, s, real(s, graph), {
    ctph_capture_ended(s, ptsz);
    if (ctph_chain_on)
      ctph_stream_barrier(s, ptsz);
  });
}

/* cuProfilerStart opens a recording window before its span (so the span is in it),
 * cuProfilerStop closes it after (CUTRACE_CAPTURE=profiler; window.c). A program
 * reaching them through cudaProfilerStart/Stop toggles twice: no harm, the same state. */
CTPD_INLINE CUresult profiler_start_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         int unused) {
  (void)unused;
  if (ctph_alive())
    ctp_window_profiler(1);
  SPAN_BODY(id, ptsz, realp, ra, profiler_fn, CTPH_NO_STREAM, real(), (void)0);
}

CTPD_INLINE CUresult profiler_stop_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        int unused) {
  (void)unused;
  profiler_fn real = (profiler_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  CUresult r;
  if (CTPD_UNTRACED(real, ra)) {
    r = real();
  } else {
    ctpd_note_call();
    ctph_call c;
    ctph_call_begin(&c, id, ptsz, 0, CTPH_NO_STREAM, 0);
    c.flags |= CT_API_DRIVER;
    r = real();
    CTPH_FINISH(c, r, (void)0);
  }
  if (ctph_alive())
    ctp_window_profiler(0);
  return r;
}

CTPD_DEFINE(cuCtxSynchronize, 0, ctx_sync_body, (void), (0))
CTPD_DEFINE(cuStreamSynchronize, 0, stream_sync_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamSynchronize_ptsz, 1, stream_sync_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamBeginCapture_v2, 0, begin_body, (CUstream s, CUstreamCaptureMode mode),
            (s, mode))
CTPD_DEFINE(cuStreamBeginCapture_v2_ptsz, 1, begin_body, (CUstream s, CUstreamCaptureMode mode),
            (s, mode))
CTPD_DEFINE(cuStreamBeginCapture, 0, begin_v1_body, (CUstream s), (s))
CTPD_DEFINE(cuStreamBeginCapture_ptsz, 1, begin_v1_body, (CUstream s), (s))
#define TO_GRAPH_PARAMS                                                                  \
  (CUstream s, CUgraph graph, const CUgraphNode *deps, const CUgraphEdgeData *edges, size_t n, \
   CUstreamCaptureMode mode)
CTPD_DEFINE(cuStreamBeginCaptureToGraph, 0, begin_to_graph_body, TO_GRAPH_PARAMS,
            (s, graph, deps, edges, n, mode))
CTPD_DEFINE(cuStreamBeginCaptureToGraph_ptsz, 1, begin_to_graph_body, TO_GRAPH_PARAMS,
            (s, graph, deps, edges, n, mode))
#define CALLBACK_PARAMS (CUstream s, CUstreamCallback fn, void *user, unsigned flags)
CTPD_DEFINE(cuStreamAddCallback, 0, callback_body, CALLBACK_PARAMS, (s, fn, user, flags))
CTPD_DEFINE(cuStreamAddCallback_ptsz, 1, callback_body, CALLBACK_PARAMS, (s, fn, user, flags))
CTPD_DEFINE(cuGraphUpload, 0, upload_body, (CUgraphExec exec, CUstream s), (exec, s))
CTPD_DEFINE(cuGraphUpload_ptsz, 1, upload_body, (CUgraphExec exec, CUstream s), (exec, s))
CTPD_DEFINE(cuStreamEndCapture, 0, end_body, (CUstream s, CUgraph *graph), (s, graph))
CTPD_DEFINE(cuStreamEndCapture_ptsz, 1, end_body, (CUstream s, CUgraph *graph), (s, graph))
CTPD_DEFINE(cuProfilerStart, 0, profiler_start_body, (void), (0))
CTPD_DEFINE(cuProfilerStop, 0, profiler_stop_body, (void), (0))
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
