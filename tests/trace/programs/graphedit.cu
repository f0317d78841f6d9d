// Graph execs edited in place (test_graphedit.py): kernels swapped in an instantiated
// graph without a new instantiation, as vLLM and TensorRT-LLM patch their graphs.
//   exec 1: a capture of 2 ge_a launches, instantiated and launched ITERS times; then
//           cudaGraphExecKernelNodeSetParams gives node 0, then node 1, ge_b
//           (ITERS launches after each), then node 1 ge_b again at another block size
//           (the function unchanged); launched ITERS times more;
//   exec 2: a capture of 1 ge_a, instantiated and launched ITERS times; then the
//           driver's cuGraphExecKernelNodeSetParams (12000) gives its node ge_drv (a
//           function of a module loaded with cuModuleLoadData), ITERS launches; then
//           cuGraphExecNodeSetParams (12020) gives it ge_drv2 (the same module),
//           ITERS launches;
//   exec 3: a capture of a set, a copy and a ge_a launch: the set and the copy given
//           other parameters (cudaGraphExecMemsetNodeSetParams,
//           cudaGraphExecMemcpyNodeSetParams1D, the driver's
//           cuGraphExecMemsetNodeSetParams), and a set's parameters refused for the
//           kernel node (its error kept); ITERS launches;
//   exec 4: a graph with one child graph node (of exec 2's graph, 1 ge_a) given exec
//           1's graph by cuGraphExecChildGraphNodeSetParams; ITERS launches.
// Prints "graphedit: ok" when every call succeeded.
// usage: graphedit [ITERS]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_proc.h"

#define N 32

__global__ void ge_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void ge_b(float *x) { x[threadIdx.x] *= 2.0f; }

#define CHECK(call)                                                              \
  do {                                                                           \
    int e_ = (int)(call);                                                        \
    if (e_) {                                                                    \
      fprintf(stderr, "graphedit: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

typedef CUresult (*load_fn)(CUmodule *, const void *);
typedef CUresult (*get_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*kernel_edit_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*node_edit_fn)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);
typedef CUresult (*memset_edit_fn)(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *,
                                   CUcontext);
typedef CUresult (*child_edit_fn)(CUgraphExec, CUgraphNode, CUgraph);
typedef CUresult (*add_child_fn)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph);

static int launch_n(cudaGraphExec_t e, cudaStream_t s, int n) {
  for (int i = 0; i < n; i++)
    if (cudaGraphLaunch(e, s) != cudaSuccess) return 1;
  return cudaStreamSynchronize(s) != cudaSuccess;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 3;
  cudaStream_t s;
  float *x;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&x, N * sizeof(float)));

  // exec 1: runtime edits
  cudaGraph_t g1;
  cudaGraphExec_t e1;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 2; i++) ge_a<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g1));
  CHECK(cudaGraphInstantiate(&e1, g1, 0));
  CHECK(launch_n(e1, s, iters));
  cudaGraphNode_t nodes[2];
  size_t count = 2;
  CHECK(cudaGraphGetNodes(g1, nodes, &count));
  CHECK(count != 2);
  void *args[] = {&x};
  cudaKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = (void *)ge_b;
  p.gridDim = dim3(1);
  p.blockDim = dim3(N);
  p.kernelParams = args;
  CHECK(cudaGraphExecKernelNodeSetParams(e1, nodes[0], &p));
  CHECK(launch_n(e1, s, iters));
  CHECK(cudaGraphExecKernelNodeSetParams(e1, nodes[1], &p));
  CHECK(launch_n(e1, s, iters));
  p.blockDim = dim3(N / 2);
  CHECK(cudaGraphExecKernelNodeSetParams(e1, nodes[1], &p));
  CHECK(launch_n(e1, s, iters));

  // exec 2: driver edits
  load_fn load = (load_fn)driver_proc("cuModuleLoadData", 2000, 0);
  get_fn get = (get_fn)driver_proc("cuModuleGetFunction", 2000, 0);
  kernel_edit_fn kernel_edit = (kernel_edit_fn)driver_proc("cuGraphExecKernelNodeSetParams", 12000, 0);
  node_edit_fn node_edit = (node_edit_fn)driver_proc("cuGraphExecNodeSetParams", 12020, 0);
  CHECK(!load || !get || !kernel_edit || !node_edit);
  CUmodule mod;
  CUfunction drv, drv2;
  CHECK(load(&mod, "graphedit image"));
  CHECK(get(&drv, mod, "ge_drv"));
  CHECK(get(&drv2, mod, "ge_drv2"));
  cudaGraph_t g2;
  cudaGraphExec_t e2;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  ge_a<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g2));
  CHECK(cudaGraphInstantiate(&e2, g2, 0));
  CHECK(launch_n(e2, s, iters));
  cudaGraphNode_t node;
  count = 1;
  CHECK(cudaGraphGetNodes(g2, &node, &count));
  CUDA_KERNEL_NODE_PARAMS_v2 kp;
  memset(&kp, 0, sizeof kp);
  kp.func = drv;
  kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
  kp.blockDimX = 64, kp.blockDimY = kp.blockDimZ = 1;
  kp.kernelParams = args;
  CHECK(kernel_edit((CUgraphExec)e2, (CUgraphNode)node, &kp));
  CHECK(launch_n(e2, s, iters));
  CUgraphNodeParams np;
  memset(&np, 0, sizeof np);
  np.type = CU_GRAPH_NODE_TYPE_KERNEL;
  np.kernel.func = drv2;
  np.kernel.gridDimX = np.kernel.gridDimY = np.kernel.gridDimZ = 1;
  np.kernel.blockDimX = 128, np.kernel.blockDimY = np.kernel.blockDimZ = 1;
  np.kernel.kernelParams = args;
  CHECK(node_edit((CUgraphExec)e2, (CUgraphNode)node, &np));
  CHECK(launch_n(e2, s, iters));

  // exec 3: set and copy nodes edited (no inventory change)
  memset_edit_fn memset_edit = (memset_edit_fn)driver_proc("cuGraphExecMemsetNodeSetParams", 10020, 0);
  child_edit_fn child_edit = (child_edit_fn)driver_proc("cuGraphExecChildGraphNodeSetParams", 11010, 0);
  add_child_fn add_child = (add_child_fn)driver_proc("cuGraphAddChildGraphNode", 10000, 0);
  CHECK(!memset_edit || !child_edit || !add_child);
  float *y;
  CHECK(cudaMalloc(&y, N * sizeof(float)));
  cudaGraph_t g3;
  cudaGraphExec_t e3;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemsetAsync(x, 0, N * sizeof(float), s));
  CHECK(cudaMemcpyAsync(y, x, N * sizeof(float), cudaMemcpyDeviceToDevice, s));
  ge_a<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g3));
  CHECK(cudaGraphInstantiate(&e3, g3, 0));
  cudaGraphNode_t three[3];
  count = 3;
  CHECK(cudaGraphGetNodes(g3, three, &count));
  CHECK(count != 3);
  cudaMemsetParams mp;
  memset(&mp, 0, sizeof mp);
  mp.dst = x;
  mp.value = 7;
  mp.elementSize = 1;
  mp.width = N * sizeof(float);
  mp.height = 1;
  CHECK(cudaGraphExecMemsetNodeSetParams(e3, three[0], &mp));
  CHECK(cudaGraphExecMemcpyNodeSetParams1D(e3, three[1], x, y, N * sizeof(float),
                                           cudaMemcpyDeviceToDevice));
  CUDA_MEMSET_NODE_PARAMS dp;
  memset(&dp, 0, sizeof dp);
  dp.dst = (CUdeviceptr)x;
  dp.value = 9;
  dp.elementSize = 1;
  dp.width = N * sizeof(float);
  dp.height = 1;
  CHECK(memset_edit((CUgraphExec)e3, (CUgraphNode)three[0], &dp, NULL));
  CHECK(cudaGraphExecMemsetNodeSetParams(e3, three[2], &mp) == cudaSuccess);  // a kernel node
  cudaGetLastError();
  CHECK(launch_n(e3, s, iters));

  // exec 4: a child graph node given another graph
  cudaGraph_t g4;
  cudaGraphExec_t e4;
  CUgraphNode child;
  CHECK(cudaGraphCreate(&g4, 0));
  CHECK(add_child(&child, (CUgraph)g4, NULL, 0, (CUgraph)g2));
  CHECK(cudaGraphInstantiate(&e4, g4, 0));
  CHECK(child_edit((CUgraphExec)e4, child, (CUgraph)g1));
  CHECK(launch_n(e4, s, iters));
  printf("graphedit: ok\n");
  return 0;
}
