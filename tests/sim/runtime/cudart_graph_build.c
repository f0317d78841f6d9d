/* Graphs built by the program in the simulated libcudart: cudaGraphCreate, a capture
 * into an existing graph (cudaStreamBeginCaptureToGraph, CUDA 12.3) and cudaGraphUpload
 * (+_ptsz), each one driver call as the real runtime makes it. */
#include "cudart_internal.h"

/** Creates an empty graph. */
SIM_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *graph, unsigned int flags)
{
  RT_ENTER();
  RT_NEED(simdrv.GraphCreate);
  return rt_check(simdrv.GraphCreate(graph, flags));
}

static cudaError_t begin_capture_to_graph(cudaStream_t stream, cudaGraph_t graph,
                                          const cudaGraphNode_t *deps, const cudaGraphEdgeData *edges,
                                          size_t num_deps, enum cudaStreamCaptureMode mode, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, StreamBeginCaptureToGraph));
  return rt_check(RT_PICK(pt, StreamBeginCaptureToGraph)(stream, graph, deps, (const CUgraphEdgeData *)edges,
                                                         num_deps, (CUstreamCaptureMode)mode));
}

/** Starts capturing the stream's work into an existing graph. */
SIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t *dependencies,
                                                     const cudaGraphEdgeData *dependencyData,
                                                     size_t numDependencies, enum cudaStreamCaptureMode mode)
{
  return begin_capture_to_graph(stream, graph, dependencies, dependencyData, numDependencies, mode, 0);
}

/** cudaStreamBeginCaptureToGraph where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph,
                                                          const cudaGraphNode_t *dependencies,
                                                          const cudaGraphEdgeData *dependencyData,
                                                          size_t numDependencies,
                                                          enum cudaStreamCaptureMode mode)
{
  return begin_capture_to_graph(stream, graph, dependencies, dependencyData, numDependencies, mode, 1);
}

static cudaError_t graph_upload(cudaGraphExec_t exec, cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, GraphUpload));
  return rt_check(RT_PICK(pt, GraphUpload)(exec, stream));
}

/** Uploads an instantiated graph to the device on the stream, without running it. */
SIM_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream)
{
  return graph_upload(exec, stream, 0);
}

/** cudaGraphUpload where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream)
{
  return graph_upload(exec, stream, 1);
}
