/* Streams, events, stream capture and graphs of the simulated libcudart.
 * cudaStream_t, cudaEvent_t, cudaGraph_t and cudaGraphExec_t are the driver's
 * handles, so every call is a direct translation. */
#include "cudart_internal.h"

/** Creates a stream with default flags. */
SIM_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
  if (!stream)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  return rt_check(simdrv.StreamCreate(stream, CU_STREAM_DEFAULT));
}

/** Creates a stream with cudaStream* flags. */
SIM_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
  if (!stream)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  return rt_check(simdrv.StreamCreate(stream, flags));
}

/** Creates a stream with flags and a priority. */
SIM_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority)
{
  if (!stream)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.StreamCreateWithPriority);
  return rt_check(simdrv.StreamCreateWithPriority(stream, flags, priority));
}

/** Destroys a stream once its work is done. */
SIM_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
  RT_ENTER();
  if (stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return rt_fail(cudaErrorInvalidResourceHandle);
  return rt_check(simdrv.StreamDestroy(stream));
}

static cudaError_t stream_query(cudaStream_t stream, int pt)
{
  RT_ENTER();
  return rt_check(RT_PICK(pt, StreamQuery)(stream));
}

/** Returns cudaSuccess when all work on the stream is done, else cudaErrorNotReady. */
SIM_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream) { return stream_query(stream, 0); }
/** cudaStreamQuery where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) { return stream_query(stream, 1); }

static cudaError_t stream_sync(cudaStream_t stream, int pt)
{
  RT_ENTER();
  return rt_check(RT_PICK(pt, StreamSynchronize)(stream));
}

/** Waits for all work on the stream. */
SIM_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) { return stream_sync(stream, 0); }
/** cudaStreamSynchronize where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) { return stream_sync(stream, 1); }

static cudaError_t stream_wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags, int pt)
{
  RT_ENTER();
  return rt_check(RT_PICK(pt, StreamWaitEvent)(stream, event, flags));
}

/** Makes later work on the stream wait for the event. */
SIM_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
  return stream_wait_event(stream, event, flags, 0);
}

/** cudaStreamWaitEvent where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
  return stream_wait_event(stream, event, flags, 1);
}

static cudaError_t launch_host_func(cudaStream_t stream, cudaHostFn_t fn, void *data, int pt)
{
  RT_ENTER();
  return rt_check(RT_PICK(pt, LaunchHostFunc)(stream, fn, data));
}

/** Runs fn(data) on a driver thread once the stream's earlier work is done. */
SIM_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *data)
{
  return launch_host_func(stream, fn, data, 0);
}

/** cudaLaunchHostFunc where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *data)
{
  return launch_host_func(stream, fn, data, 1);
}

static cudaError_t add_callback(cudaStream_t stream, cudaStreamCallback_t fn, void *data, unsigned flags, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamAddCallback));
  return rt_check(RT_PICK(pt, StreamAddCallback)(stream, (CUstreamCallback)fn, data, flags));
}

/** Runs fn(stream, status, data) on a driver thread once the stream's earlier work is done. */
SIM_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t fn, void *data,
                                             unsigned int flags)
{
  return add_callback(stream, fn, data, flags, 0);
}

/** cudaStreamAddCallback where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t fn, void *data,
                                                  unsigned int flags)
{
  return add_callback(stream, fn, data, flags, 1);
}

static cudaError_t stream_get_flags(cudaStream_t stream, unsigned int *flags, int pt)
{
  if (!flags)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamGetFlags));
  return rt_check(RT_PICK(pt, StreamGetFlags)(stream, flags));
}

/** Reports the stream's creation flags. */
SIM_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
  return stream_get_flags(stream, flags, 0);
}

/** cudaStreamGetFlags where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int *flags)
{
  return stream_get_flags(stream, flags, 1);
}

static cudaError_t stream_get_priority(cudaStream_t stream, int *priority, int pt)
{
  if (!priority)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamGetPriority));
  return rt_check(RT_PICK(pt, StreamGetPriority)(stream, priority));
}

/** Reports the stream's priority. */
SIM_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
  return stream_get_priority(stream, priority, 0);
}

/** cudaStreamGetPriority where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int *priority)
{
  return stream_get_priority(stream, priority, 1);
}

/* ---- events ---- */

/** Creates an event with default flags. */
SIM_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
  if (!event)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  return rt_check(simdrv.EventCreate(event, CU_EVENT_DEFAULT));
}

/** Creates an event with cudaEvent* flags. */
SIM_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
  if (!event)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  return rt_check(simdrv.EventCreate(event, flags));
}

/** Destroys an event. */
SIM_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
  RT_ENTER();
  return rt_check(simdrv.EventDestroy(event));
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream, int pt)
{
  RT_ENTER();
  return rt_check(RT_PICK(pt, EventRecord)(event, stream));
}

/** Records the event on the stream. */
SIM_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
  return event_record(event, stream, 0);
}

/** cudaEventRecord where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
  return event_record(event, stream, 1);
}

static cudaError_t event_record_flags(cudaEvent_t event, cudaStream_t stream, unsigned int flags, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, EventRecordWithFlags));
  return rt_check(RT_PICK(pt, EventRecordWithFlags)(event, stream, flags));
}

/** Records the event with cudaEventRecord* flags. */
SIM_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
  return event_record_flags(event, stream, flags, 0);
}

/** cudaEventRecordWithFlags where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                     unsigned int flags)
{
  return event_record_flags(event, stream, flags, 1);
}

/** Returns cudaSuccess once the event has completed, else cudaErrorNotReady. */
SIM_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
  RT_ENTER();
  return rt_check(simdrv.EventQuery(event));
}

/** Waits for the event. */
SIM_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
  RT_ENTER();
  return rt_check(simdrv.EventSynchronize(event));
}

/** Milliseconds between two completed events. */
SIM_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
  if (!ms)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.EventElapsedTime);
  return rt_check(simdrv.EventElapsedTime(ms, start, end));
}

/* ---- capture and graphs ---- */

static cudaError_t begin_capture(cudaStream_t stream, enum cudaStreamCaptureMode mode, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamBeginCapture));
  return rt_check(RT_PICK(pt, StreamBeginCapture)(stream, (CUstreamCaptureMode)mode));
}

/** Starts capturing the stream's work into a graph. */
SIM_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
  return begin_capture(stream, mode, 0);
}

/** cudaStreamBeginCapture where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
  return begin_capture(stream, mode, 1);
}

static cudaError_t end_capture(cudaStream_t stream, cudaGraph_t *graph, int pt)
{
  if (!graph)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamEndCapture));
  return rt_check(RT_PICK(pt, StreamEndCapture)(stream, graph));
}

/** Ends a capture and returns the captured graph. */
SIM_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
  return end_capture(stream, graph, 0);
}

/** cudaStreamEndCapture where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *graph)
{
  return end_capture(stream, graph, 1);
}

static cudaError_t is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status, int pt)
{
  if (!status)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamIsCapturing));
  CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = RT_PICK(pt, StreamIsCapturing)(stream, &s);
  *status = (enum cudaStreamCaptureStatus)s;
  return rt_check(r);
}

/** Reports whether the stream is capturing. */
SIM_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
  return is_capturing(stream, status, 0);
}

/** cudaStreamIsCapturing where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *status)
{
  return is_capturing(stream, status, 1);
}

static cudaError_t capture_info(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                unsigned long long *id, cudaGraph_t *graph,
                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges,
                                size_t *num_deps, int pt)
{
  if (!status)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamGetCaptureInfo));
  CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t cid = 0;
  CUresult r = RT_PICK(pt, StreamGetCaptureInfo)(stream, &s, id ? &cid : NULL, graph,
                                                 (const CUgraphNode **)deps,
                                                 (const CUgraphEdgeData **)edges, num_deps);
  *status = (enum cudaStreamCaptureStatus)s;
  if (id)
    *id = cid;
  return rt_check(r);
}

/** Reports a stream's capture status, capture id, graph and dependencies. */
SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                unsigned long long *id, cudaGraph_t *graph,
                                                const cudaGraphNode_t **deps,
                                                const cudaGraphEdgeData **edges, size_t *num_deps)
{
  return capture_info(stream, status, id, graph, deps, edges, num_deps, 0);
}

/** cudaStreamGetCaptureInfo where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                                     enum cudaStreamCaptureStatus *status,
                                                     unsigned long long *id, cudaGraph_t *graph,
                                                     const cudaGraphNode_t **deps,
                                                     const cudaGraphEdgeData **edges, size_t *num_deps)
{
  return capture_info(stream, status, id, graph, deps, edges, num_deps, 1);
}

/** Swaps the calling thread's capture interaction mode. */
SIM_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
  if (!mode)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.ThreadExchangeStreamCaptureMode);
  return rt_check(simdrv.ThreadExchangeStreamCaptureMode((CUstreamCaptureMode *)mode));
}

/* Both flag forms: the real runtime does not re-enter its exported entry points. */
static cudaError_t instantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
  if (!exec)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.GraphInstantiateWithFlags);
  return rt_check(simdrv.GraphInstantiateWithFlags(exec, graph, flags));
}

/** Instantiates a graph (CUDA 13 signature: exec, graph, flags). */
SIM_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags)
{
  return instantiate(exec, graph, flags);
}

/** Instantiates a graph with cudaGraphInstantiate* flags. */
SIM_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                     unsigned long long flags)
{
  return instantiate(exec, graph, flags);
}

static cudaError_t instantiate_params(cudaGraphExec_t *exec, cudaGraph_t graph,
                                      cudaGraphInstantiateParams *params, int pt)
{
  if (!exec || !params)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, GraphInstantiateWithParams));
  return rt_check(RT_PICK(pt, GraphInstantiateWithParams)(exec, graph,
                                                          (CUDA_GRAPH_INSTANTIATE_PARAMS *)params));
}

/** Instantiates a graph with a parameter block (flags, upload stream; results out). */
SIM_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams *params)
{
  return instantiate_params(exec, graph, params, 0);
}

/** cudaGraphInstantiateWithParams where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                           cudaGraphInstantiateParams *params)
{
  return instantiate_params(exec, graph, params, 1);
}

/** Updates an instantiated graph from a graph of the same shape. */
SIM_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                           cudaGraphExecUpdateResultInfo *info)
{
  if (!info)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.GraphExecUpdate);
  return rt_check(simdrv.GraphExecUpdate(exec, graph, (CUgraphExecUpdateResultInfo *)info));
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, GraphLaunch));
  return rt_check(RT_PICK(pt, GraphLaunch)(exec, stream));
}

/** Launches an instantiated graph on the stream. */
SIM_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
  return graph_launch(exec, stream, 0);
}

/** cudaGraphLaunch where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
{
  return graph_launch(exec, stream, 1);
}

/** Destroys an instantiated graph. */
SIM_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
  RT_ENTER();
  RT_NEED(simdrv.GraphExecDestroy);
  return rt_check(simdrv.GraphExecDestroy(exec));
}

/** Destroys a graph. */
SIM_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
  RT_ENTER();
  RT_NEED(simdrv.GraphDestroy);
  return rt_check(simdrv.GraphDestroy(graph));
}
