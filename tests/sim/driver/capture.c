/* Stream capture and its error rules.
 *
 * While a stream captures, its launches, copies, fills and (external) event
 * records are appended to a graph instead of being executed. Rules modelled on
 * the CUDA programming guide's description of capture modes:
 * - syncing or querying a capturing stream fails with
 *   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture;
 * - a potentially unsafe call (event query/sync, context or legacy-stream sync,
 *   synchronous copies, allocation) is refused, invalidating the capture, when
 *   the calling thread's own non-relaxed capture is active, or, for a thread in
 *   global mode, when any other thread has a global-mode capture active;
 * - an operation on the legacy stream while a blocking stream of the context
 *   captures fails with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and invalidates it;
 * - an event recorded during capture makes cuEventQuery / Synchronize /
 *   ElapsedTime fail with CUDA_ERROR_CAPTURED_EVENT. */
#include "graph.h"

/* The CUDA 10 entry points are defined under their own names below. */
#undef cuStreamBeginCapture
#undef cuStreamGetCaptureInfo

#include <stdlib.h>

static struct sim_capture *captures; /* active captures */
static unsigned long long next_capture_id = 1;
static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static int capture_is_active(const struct sim_capture *c)
{
  for (struct sim_capture *a = captures; a; a = a->next)
    if (a == c)
      return 1;
  return 0;
}

int sim_capture_forbids_unsafe_call(void)
{
  if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
    return 0;
  pthread_t self = pthread_self();
  int forbid = 0;
  for (struct sim_capture *c = captures; c; c = c->next) {
    int mine = pthread_equal(c->owner, self);
    if ((mine && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        || (!mine && thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
      c->invalidated = 1;
      forbid = 1;
    }
  }
  return forbid;
}

CUresult sim_capture_add(struct sim_stream *s, const struct sim_op *op)
{
  struct sim_capture *c = s->capture;
  if (c->invalidated)
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  if (op->kind == SIM_OP_EVENT) {
    op->event->recorded_in_capture = 1;
    op->event->capture = c;
    if (!op->external) /* only external records become graph nodes */
      return CUDA_SUCCESS;
  }
  if (sim_graph_append(c->graph, op) != 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  /* the program's graph is already live: its new node gets its handle now (a new
   * graph's nodes get theirs when the capture ends) */
  if (c->user_graph && sim_handle_add(c->graph->nodes[c->graph->count - 1], SIM_KIND_GRAPH_NODE) != 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  return CUDA_SUCCESS;
}

void sim_capture_invalidate(struct sim_stream *s)
{
  if (s->capture)
    s->capture->invalidated = 1;
}

CUresult sim_capture_check_legacy(struct sim_stream *s)
{
  CUresult r = CUDA_SUCCESS;
  for (struct sim_stream *o = s->ctx->streams; o; o = o->ctx_next)
    if (o->capture && !(o->flags & CU_STREAM_NON_BLOCKING)) {
      o->capture->invalidated = 1;
      r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
  return r;
}

int sim_capture_join(struct sim_stream *s, struct sim_event *e)
{
  if (!capture_is_active(e->capture))
    return 1; /* that capture has ended: nothing to wait for */
  if (s->capture == e->capture)
    return 1;
  if (s->capture)
    return 0;
  s->capture = e->capture;
  return 1;
}

void sim_capture_forget_stream(struct sim_stream *s)
{
  if (s->capture && s->capture->origin == s) {
    s->capture->invalidated = 1;
    s->capture->origin = NULL;
  }
  s->capture = NULL;
}

/* Detaches every stream of the context from `c` (lock held). */
static void detach_streams(struct sim_capture *c)
{
  if (c->ctx->legacy->capture == c)
    c->ctx->legacy->capture = NULL;
  for (struct sim_stream *o = c->ctx->streams; o; o = o->ctx_next)
    if (o->capture == c)
      o->capture = NULL;
}

/* Begins a capture of the stream into `into` (an existing graph, cuStreamBeginCaptureToGraph),
 * or into a new graph when it is NULL. */
static CUresult begin_capture(CUstream hStream, CUstreamCaptureMode mode, int per_thread,
                              struct sim_graph *into)
{
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
      && mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && s->is_legacy)
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  else if (r == CUDA_SUCCESS && s->capture)
    r = CUDA_ERROR_ILLEGAL_STATE;
  struct sim_capture *c = NULL;
  if (r == CUDA_SUCCESS) {
    c = calloc(1, sizeof *c);
    if (c) {
      c->user_graph = into != NULL;
      c->graph = into ? into : sim_graph_new();
    }
    if (!c || !c->graph) {
      free(c);
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (r == CUDA_SUCCESS) {
    c->ctx = s->ctx;
    c->origin = s;
    c->mode = mode;
    c->owner = pthread_self();
    c->id = next_capture_id++;
    c->next = captures;
    captures = c;
    s->capture = c;
  }
  sim_unlock();
  return r;
}

/** Begins capturing the stream into a graph (mode: global, thread-local, relaxed). */
SIM_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
  return begin_capture(hStream, mode, 0, NULL);
}

/** cuStreamBeginCapture_v2 through the per-thread default stream entry point. */
SIM_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
  return begin_capture(hStream, mode, 1, NULL);
}

/** The CUDA 10.0 form: global mode. */
SIM_API CUresult cuStreamBeginCapture(CUstream hStream)
{
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 0, NULL);
}

/** The CUDA 10.0 form through the per-thread default stream entry point. */
SIM_API CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, 1, NULL);
}

/* cuStreamBeginCaptureToGraph: the graph must be live; the dependencies only have to be
 * nodes of it (sim graphs are sequences: captured work is appended after its nodes). */
static CUresult begin_capture_to_graph(CUstream hStream, CUgraph hGraph, const CUgraphNode *deps,
                                       const CUgraphEdgeData *edges, size_t num_deps,
                                       CUstreamCaptureMode mode, int per_thread)
{
  (void)edges;
  if (num_deps && !deps)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(hGraph) == SIM_KIND_GRAPH;
  sim_unlock();
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  return begin_capture(hStream, mode, per_thread, (struct sim_graph *)hGraph);
}

/** Begins capturing the stream into an existing graph (CUDA 12.3). */
SIM_API CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,
                                             const CUgraphEdgeData *dependencyData, size_t numDependencies,
                                             CUstreamCaptureMode mode)
{
  return begin_capture_to_graph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode, 0);
}

/** cuStreamBeginCaptureToGraph through the per-thread default stream entry point. */
SIM_API CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                  const CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData,
                                                  size_t numDependencies, CUstreamCaptureMode mode)
{
  return begin_capture_to_graph(hStream, hGraph, dependencies, dependencyData, numDependencies, mode, 1);
}

static CUresult end_capture(CUstream hStream, CUgraph *phGraph, int per_thread)
{
  if (!phGraph)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  struct sim_capture *c = r == CUDA_SUCCESS ? s->capture : NULL;
  if (r == CUDA_SUCCESS && !c)
    r = CUDA_ERROR_ILLEGAL_STATE;
  else if (r == CUDA_SUCCESS && c->origin != s)
    r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  else if (r == CUDA_SUCCESS && c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->owner, pthread_self()))
    r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  if (r != CUDA_SUCCESS) {
    sim_unlock();
    return r;
  }
  for (struct sim_capture **p = &captures; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  detach_streams(c);
  if (c->user_graph) { /* the program's own graph: it keeps what was captured */
    *phGraph = c->invalidated ? NULL : (CUgraph)c->graph;
    r = c->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
  } else if (c->invalidated) {
    sim_graph_free(c->graph);
    *phGraph = NULL;
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else if (sim_graph_register(c->graph) != 0) {
    sim_graph_free(c->graph);
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    *phGraph = (CUgraph)c->graph;
  }
  sim_unlock();
  free(c);
  return r;
}

/** Ends the capture begun on this stream and returns its graph. */
SIM_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
  return end_capture(hStream, phGraph, 0);
}

/** cuStreamEndCapture through the per-thread default stream entry point. */
SIM_API CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
  return end_capture(hStream, phGraph, 1);
}

/* Capture state of a stream (lock held). */
static CUstreamCaptureStatus status_of(const struct sim_stream *s)
{
  if (!s->capture)
    return CU_STREAM_CAPTURE_STATUS_NONE;
  return s->capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

static CUresult capture_info(CUstream hStream, int per_thread, CUstreamCaptureStatus *status,
                             cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                             size_t *num_deps)
{
  if (!status)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS) {
    *status = status_of(s);
    struct sim_capture *c = s->capture;
    if (id && c)
      *id = c->id;
    if (graph)
      *graph = c ? (CUgraph)c->graph : NULL;
    if (edges)
      *edges = NULL;
    size_t n = c ? sim_graph_tail(c->graph, deps) : 0;
    if (!c && deps)
      *deps = NULL;
    if (num_deps)
      *num_deps = n;
  }
  sim_unlock();
  return r;
}

/** Whether a stream is capturing (none / active / invalidated). */
SIM_API CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
  return capture_info(hStream, 0, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

/** cuStreamIsCapturing through the per-thread default stream entry point. */
SIM_API CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
  return capture_info(hStream, 1, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

/** Capture status, id, graph and current dependencies (cuda.h 13 form). */
SIM_API CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,
                                           size_t *numDependencies_out)
{
  return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                      numDependencies_out);
}

/** cuStreamGetCaptureInfo_v3 through the per-thread default stream entry point. */
SIM_API CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out,
                                                const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
  return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                      numDependencies_out);
}

/** The CUDA 11.3 form (no edge data). */
SIM_API CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                           cuuint64_t *id_out, CUgraph *graph_out,
                                           const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
  return capture_info(hStream, 0, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                      numDependencies_out);
}

/** The CUDA 11.3 form through the per-thread default stream entry point. */
SIM_API CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                                cuuint64_t *id_out, CUgraph *graph_out,
                                                const CUgraphNode **dependencies_out, size_t *numDependencies_out)
{
  return capture_info(hStream, 1, captureStatus_out, id_out, graph_out, dependencies_out, NULL,
                      numDependencies_out);
}

/** The CUDA 10.1 form (status and id). */
SIM_API CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                        cuuint64_t *id_out)
{
  return capture_info(hStream, 0, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

/** The CUDA 10.1 form through the per-thread default stream entry point. */
SIM_API CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                                             cuuint64_t *id_out)
{
  return capture_info(hStream, 1, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

/** Swaps the calling thread's capture interaction mode. */
SIM_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
  if (!mode || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
                && *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
    return CUDA_ERROR_INVALID_VALUE;
  CUstreamCaptureMode old = thread_mode;
  thread_mode = *mode;
  *mode = old;
  return CUDA_SUCCESS;
}
