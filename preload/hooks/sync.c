/*
 * Synchronisation, allocation and capture calls, recorded as CPU spans (they
 * explain gaps; a successful allocation or release also gets its ALLOC record);
 * capture begin/end also keep track of which streams are capturing so that nothing
 * is timed inside a capture. Device reset and module teardown first
 * collect the outstanding GPU timings, while the context still exists.
 */
#include "hooks_internal.h"

#include <cuda_profiler_api.h>

CTP_EXPORT __typeof__(cudaStreamSynchronize) cudaStreamSynchronize_ptsz;
CTP_EXPORT __typeof__(cudaStreamWaitEvent) cudaStreamWaitEvent_ptsz;
CTP_EXPORT __typeof__(cudaStreamBeginCapture) cudaStreamBeginCapture_ptsz;
CTP_EXPORT __typeof__(cudaStreamEndCapture) cudaStreamEndCapture_ptsz;
CTP_EXPORT __typeof__(cudaStreamBeginCaptureToGraph) cudaStreamBeginCaptureToGraph_ptsz;
CTP_EXPORT __typeof__(cudaGraphUpload) cudaGraphUpload_ptsz;
CTP_EXPORT __typeof__(cudaStreamAddCallback) cudaStreamAddCallback_ptsz;
CTP_EXPORT void __cudaUnregisterFatBinary(void **fat_cubin_handle);
CTP_EXPORT __typeof__(cudaMallocAsync) cudaMallocAsync_ptsz;
CTP_EXPORT __typeof__(cudaFreeAsync) cudaFreeAsync_ptsz;
CTP_EXPORT __typeof__(cudaEventRecord) cudaEventRecord_ptsz;
CTP_EXPORT __typeof__(cudaEventRecordWithFlags) cudaEventRecordWithFlags_ptsz;
CTP_EXPORT __typeof__(cudaLaunchHostFunc) cudaLaunchHostFunc_ptsz;

/* Forward, and when tracing record one span with no GPU work; AFTER runs after
 * the real call whether traced or not (r holds the result). */
#define SPAN_BODY(sym, ptsz, stream, call_args, AFTER)                                 \
  __typeof__(&sym) real = CTPH_REAL(sym);                                              \
  if (!real)                                                                           \
    return cudaErrorSharedObjectSymbolNotFound;                                        \
  ctph_call c;                                                                         \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, 0, (CUstream)(stream), 0);                  \
  cudaError_t r = real call_args;                                                      \
  int saved_ = errno;                                                                  \
  AFTER;                                                                               \
  errno = saved_;                                                                      \
  CTPH_FINISH(c, r, (void)0);                                                          \
  return r

/* SPAN_BODY of an allocation or release: when the call succeeded, its ALLOC detail
 * record (format 1.5; PTR is read after the call, wrap_alloc.c writes the record),
 * before the API record (CTPH_FINISH). */
#define ALLOC_SPAN(sym, ptsz, stream, call_args, PTR, BYTES, KIND, RELEASE)              \
  __typeof__(&sym) real = CTPH_REAL(sym);                                              \
  if (!real)                                                                           \
    return cudaErrorSharedObjectSymbolNotFound;                                        \
  ctph_call c;                                                                         \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, 0, (CUstream)(stream), 0);                  \
  cudaError_t r = real call_args;                                                      \
  CTPH_FINISH(c, r, if (r == cudaSuccess) ctph_emit_alloc(c.corr, (PTR), (BYTES), (KIND), (RELEASE))); \
  return r

/** cudaDeviceSynchronize, traced. */
CTP_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  SPAN_BODY(cudaDeviceSynchronize, 0, CTPH_NO_STREAM, (), (void)0);
}

/** cudaStreamSynchronize, traced. */
CTP_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  SPAN_BODY(cudaStreamSynchronize, 0, stream, (stream), (void)0);
}

/** cudaStreamSynchronize_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  SPAN_BODY(cudaStreamSynchronize_ptsz, 1, stream, (stream), (void)0);
}

/** cudaEventSynchronize, traced. */
CTP_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  SPAN_BODY(cudaEventSynchronize, 0, CTPH_NO_STREAM, (event), (void)0);
}

/** cudaStreamWaitEvent, traced. */
CTP_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                           unsigned int flags) {
  SPAN_BODY(cudaStreamWaitEvent, 0, stream, (stream, event, flags),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaStreamWaitEvent_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                unsigned int flags) {
  SPAN_BODY(cudaStreamWaitEvent_ptsz, 1, stream, (stream, event, flags),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaMalloc, traced. */
CTP_EXPORT cudaError_t cudaMalloc(void **dev_ptr, size_t size) {
  ALLOC_SPAN(cudaMalloc, 0, CTPH_NO_STREAM, (dev_ptr, size), dev_ptr ? *dev_ptr : NULL, size,
             CT_ALLOC_DEVICE, 0);
}

/** cudaMallocHost, traced. */
CTP_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size) {
  ALLOC_SPAN(cudaMallocHost, 0, CTPH_NO_STREAM, (ptr, size), ptr ? *ptr : NULL, size,
             CT_ALLOC_PINNED, 0);
}

/** cudaHostAlloc, traced. */
CTP_EXPORT cudaError_t cudaHostAlloc(void **host_ptr, size_t size, unsigned int flags) {
  ALLOC_SPAN(cudaHostAlloc, 0, CTPH_NO_STREAM, (host_ptr, size, flags),
             host_ptr ? *host_ptr : NULL, size, CT_ALLOC_PINNED, 0);
}

/** cudaMallocManaged, traced. */
CTP_EXPORT cudaError_t cudaMallocManaged(void **dev_ptr, size_t size, unsigned int flags) {
  ALLOC_SPAN(cudaMallocManaged, 0, CTPH_NO_STREAM, (dev_ptr, size, flags),
             dev_ptr ? *dev_ptr : NULL, size, CT_ALLOC_MANAGED, 0);
}

/** cudaFree, traced. */
CTP_EXPORT cudaError_t cudaFree(void *dev_ptr) {
  ALLOC_SPAN(cudaFree, 0, CTPH_NO_STREAM, (dev_ptr), dev_ptr, 0, CT_ALLOC_DEVICE, 1);
}

/** cudaFreeHost, traced. */
CTP_EXPORT cudaError_t cudaFreeHost(void *ptr) {
  ALLOC_SPAN(cudaFreeHost, 0, CTPH_NO_STREAM, (ptr), ptr, 0, CT_ALLOC_PINNED, 1);
}

/** cudaMallocPitch, traced. */
CTP_EXPORT cudaError_t cudaMallocPitch(void **dev_ptr, size_t *pitch, size_t width, size_t height) {
  ALLOC_SPAN(cudaMallocPitch, 0, CTPH_NO_STREAM, (dev_ptr, pitch, width, height),
             dev_ptr ? *dev_ptr : NULL, pitch ? (uint64_t)*pitch * height : 0, CT_ALLOC_DEVICE, 0);
}

/** cudaMallocAsync (stream-ordered allocation), traced. */
CTP_EXPORT cudaError_t cudaMallocAsync(void **dev_ptr, size_t size, cudaStream_t stream) {
  ALLOC_SPAN(cudaMallocAsync, 0, stream, (dev_ptr, size, stream), dev_ptr ? *dev_ptr : NULL,
             size, CT_ALLOC_ASYNC, 0);
}

/** cudaMallocAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaMallocAsync_ptsz(void **dev_ptr, size_t size, cudaStream_t stream) {
  ALLOC_SPAN(cudaMallocAsync_ptsz, 1, stream, (dev_ptr, size, stream),
             dev_ptr ? *dev_ptr : NULL, size, CT_ALLOC_ASYNC, 0);
}

/** cudaFreeAsync, traced. */
CTP_EXPORT cudaError_t cudaFreeAsync(void *dev_ptr, cudaStream_t stream) {
  ALLOC_SPAN(cudaFreeAsync, 0, stream, (dev_ptr, stream), dev_ptr, 0, CT_ALLOC_ASYNC, 1);
}

/** cudaFreeAsync_ptsz, traced. */
CTP_EXPORT cudaError_t cudaFreeAsync_ptsz(void *dev_ptr, cudaStream_t stream) {
  ALLOC_SPAN(cudaFreeAsync_ptsz, 1, stream, (dev_ptr, stream), dev_ptr, 0, CT_ALLOC_ASYNC, 1);
}

/** cudaHostRegister (page-locking existing host memory: slow, worth seeing), traced. */
CTP_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  ALLOC_SPAN(cudaHostRegister, 0, CTPH_NO_STREAM, (ptr, size, flags), ptr, size,
             CT_ALLOC_REGISTERED, 0);
}

/** cudaHostUnregister, traced. */
CTP_EXPORT cudaError_t cudaHostUnregister(void *ptr) {
  ALLOC_SPAN(cudaHostUnregister, 0, CTPH_NO_STREAM, (ptr), ptr, 0, CT_ALLOC_REGISTERED, 1);
}

/** cudaEventRecord, traced (the app's own event: a span, no GPU work of its own). */
CTP_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  SPAN_BODY(cudaEventRecord, 0, stream, (event, stream), (void)0);
}

/** cudaEventRecord_ptsz, traced. */
CTP_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  SPAN_BODY(cudaEventRecord_ptsz, 1, stream, (event, stream), (void)0);
}

/** cudaEventRecordWithFlags, traced. */
CTP_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
                                                unsigned int flags) {
  SPAN_BODY(cudaEventRecordWithFlags, 0, stream, (event, stream, flags), (void)0);
}

/** cudaEventRecordWithFlags_ptsz, traced. */
CTP_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                                     unsigned int flags) {
  SPAN_BODY(cudaEventRecordWithFlags_ptsz, 1, stream, (event, stream, flags), (void)0);
}

/** cudaLaunchHostFunc, traced: work the tracer does not time runs on the stream there,
 * so it ends an event chain. */
CTP_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *data) {
  SPAN_BODY(cudaLaunchHostFunc, 0, stream, (stream, fn, data),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaLaunchHostFunc_ptsz, traced. */
CTP_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *data) {
  SPAN_BODY(cudaLaunchHostFunc_ptsz, 1, stream, (stream, fn, data),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaStreamAddCallback (the older form of cudaLaunchHostFunc), traced: it ends an
 * event chain as a host function does. */
CTP_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t fn,
                                             void *data, unsigned int flags) {
  SPAN_BODY(cudaStreamAddCallback, 0, stream, (stream, fn, data, flags),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaStreamAddCallback_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t fn,
                                                  void *data, unsigned int flags) {
  SPAN_BODY(cudaStreamAddCallback_ptsz, 1, stream, (stream, fn, data, flags),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaStreamBeginCapture, traced; the stream is then known to be capturing. */
CTP_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  SPAN_BODY(cudaStreamBeginCapture, 0, stream, (stream, mode),
            if (r == cudaSuccess) ctph_capture_begun((CUstream)stream, 0);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaStreamBeginCapture_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream,
                                                   enum cudaStreamCaptureMode mode) {
  SPAN_BODY(cudaStreamBeginCapture_ptsz, 1, stream, (stream, mode),
            if (r == cudaSuccess) ctph_capture_begun((CUstream)stream, 1);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaStreamBeginCaptureToGraph (CUDA 12.3: capture into the program's graph), traced;
 * the stream is then known to be capturing. */
CTP_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *deps,
                                                     const cudaGraphEdgeData *edges, size_t n,
                                                     enum cudaStreamCaptureMode mode) {
  SPAN_BODY(cudaStreamBeginCaptureToGraph, 0, stream, (stream, graph, deps, edges, n, mode),
            if (r == cudaSuccess) ctph_capture_begun((CUstream)stream, 0);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaStreamBeginCaptureToGraph_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                          const cudaGraphNode_t *deps,
                                                          const cudaGraphEdgeData *edges, size_t n,
                                                          enum cudaStreamCaptureMode mode) {
  SPAN_BODY(cudaStreamBeginCaptureToGraph_ptsz, 1, stream, (stream, graph, deps, edges, n, mode),
            if (r == cudaSuccess) ctph_capture_begun((CUstream)stream, 1);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaGraphUpload, traced: device work the tracer does not time is queued on the
 * stream, so it ends an event chain. */
CTP_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
  SPAN_BODY(cudaGraphUpload, 0, stream, (exec, stream),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaGraphUpload_ptsz, traced. */
CTP_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  SPAN_BODY(cudaGraphUpload_ptsz, 1, stream, (exec, stream),
            if (r == cudaSuccess && ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaStreamEndCapture, traced (the capture ends even when it failed). */
CTP_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  SPAN_BODY(cudaStreamEndCapture, 0, stream, (stream, graph),
            ctph_capture_ended((CUstream)stream, 0);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 0));
}

/** cudaStreamEndCapture_ptsz, traced. */
CTP_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *graph) {
  SPAN_BODY(cudaStreamEndCapture_ptsz, 1, stream, (stream, graph),
            ctph_capture_ended((CUstream)stream, 1);
            if (ctph_chain_on) ctph_stream_barrier((CUstream)stream, 1));
}

/** cudaProfilerStart, traced; under CUTRACE_CAPTURE=profiler it opens a recording
 * window first, so that its own span is in the window. */
CTP_EXPORT cudaError_t cudaProfilerStart(void) {
  if (ctph_alive())
    ctp_window_profiler(1);
  SPAN_BODY(cudaProfilerStart, 0, CTPH_NO_STREAM, (), (void)0);
}

/** cudaProfilerStop, traced; under CUTRACE_CAPTURE=profiler the window closes after
 * the real call (its span, begun in the window, is still written). */
CTP_EXPORT cudaError_t cudaProfilerStop(void) {
  SPAN_BODY(cudaProfilerStop, 0, CTPH_NO_STREAM, (), if (ctph_alive()) ctp_window_profiler(0));
}

/** cudaDeviceReset, traced: outstanding timings of the device are collected
 * first, and its pooled events forgotten (the reset destroys them). */
CTP_EXPORT cudaError_t cudaDeviceReset(void) {
  __typeof__(&cudaDeviceReset) real = CTPH_REAL(cudaDeviceReset);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  ctph_call c;
  ctph_call_begin(&c, CTPH_ID_cudaDeviceReset, 0, 0, CTPH_NO_STREAM, 0);
  if (ctph_alive()) { /* paused too: the pool must not keep destroyed events */
    int saved = errno;
    int device = ctph_current_device(NULL);
    ctph_gpu_drain(0);
    if (device >= 0) {
      ctph_event_pool_reset(device);
      ctph_clock_forget(device);
    }
    errno = saved;
  }
  cudaError_t r = real();
  CTPH_FINISH(c, r, (void)0);
  return r;
}

/** __cudaUnregisterFatBinary (module teardown at exit): collects outstanding GPU
 * timings while the runtime is still alive, then forwards. No API record. */
CTP_EXPORT void __cudaUnregisterFatBinary(void **fat_cubin_handle) {
  __typeof__(&__cudaUnregisterFatBinary) real = CTPH_REAL(__cudaUnregisterFatBinary);
  if (__atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED)) {
    int saved = errno;
    ctph_gpu_drain(0);
    errno = saved;
  }
  if (real)
    real(fat_cubin_handle);
}
