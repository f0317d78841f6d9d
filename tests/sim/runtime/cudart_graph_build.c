/* Graphs built by the program in the simulated libcudart: cudaGraphCreate, a capture
 * into an existing graph (cudaStreamBeginCaptureToGraph, CUDA 12.3) and cudaGraphUpload
 * (+_ptsz), each one driver call as the real runtime makes it. */
#include "cudart_internal.h"

#include <string.h>

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

/** The nodes of a graph (one driver call). */
SIM_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
  RT_ENTER();
  RT_NEED(simdrv.GraphGetNodes);
  return rt_check(simdrv.GraphGetNodes(graph, nodes, numNodes));
}

/** Gives an instantiated graph's kernel node another kernel or configuration: the
 * host stub (or cudaKernel_t) is resolved to its driver function, then one driver
 * call, as the real runtime does. */
SIM_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaKernelNodeParams *p)
{
  RT_ENTER();
  if (!p)
    return rt_fail(cudaErrorInvalidValue);
  CUfunction f;
  cudaError_t e = rt_kernel_function(p->func, &f);
  if (e != cudaSuccess)
    return e;
  RT_NEED(simdrv.GraphExecKernelNodeSetParams);
  CUDA_KERNEL_NODE_PARAMS_v2 d;
  memset(&d, 0, sizeof d);
  d.func = f;
  d.gridDimX = p->gridDim.x, d.gridDimY = p->gridDim.y, d.gridDimZ = p->gridDim.z;
  d.blockDimX = p->blockDim.x, d.blockDimY = p->blockDim.y, d.blockDimZ = p->blockDim.z;
  d.sharedMemBytes = p->sharedMemBytes;
  d.kernelParams = p->kernelParams;
  d.extra = p->extra;
  return rt_check(simdrv.GraphExecKernelNodeSetParams(exec, node, &d));
}

/** Gives an instantiated graph's set node other parameters (one driver call). */
SIM_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemsetParams *p)
{
  RT_ENTER();
  if (!p)
    return rt_fail(cudaErrorInvalidValue);
  RT_NEED(simdrv.GraphExecMemsetNodeSetParams);
  CUDA_MEMSET_NODE_PARAMS d;
  memset(&d, 0, sizeof d);
  d.dst = (CUdeviceptr)p->dst;
  d.pitch = p->pitch;
  d.value = p->value;
  d.elementSize = p->elementSize;
  d.width = p->width;
  d.height = p->height;
  return rt_check(simdrv.GraphExecMemsetNodeSetParams(exec, node, &d, NULL));
}

/** Gives an instantiated graph's child graph node another graph (one driver call). */
SIM_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec,
                                                            cudaGraphNode_t node,
                                                            cudaGraph_t child)
{
  RT_ENTER();
  RT_NEED(simdrv.GraphExecChildGraphNodeSetParams);
  return rt_check(simdrv.GraphExecChildGraphNodeSetParams(exec, node, child));
}

/** Gives an instantiated graph's copy node a 1-D copy (one driver call, unified
 * addressing as the runtime uses it). */
SIM_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                          void *dst, const void *src, size_t count,
                                                          enum cudaMemcpyKind kind)
{
  RT_ENTER();
  (void)kind;
  RT_NEED(simdrv.GraphExecMemcpyNodeSetParams);
  CUDA_MEMCPY3D d;
  memset(&d, 0, sizeof d);
  d.srcMemoryType = d.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  d.srcDevice = (CUdeviceptr)src;
  d.dstDevice = (CUdeviceptr)dst;
  d.WidthInBytes = count;
  d.Height = d.Depth = 1;
  return rt_check(simdrv.GraphExecMemcpyNodeSetParams(exec, node, &d, NULL));
}
