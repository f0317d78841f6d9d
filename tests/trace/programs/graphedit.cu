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
//   exec 4: a graph with one child graph node (of exec 2's graph, 1 ge_a), ITERS
//           launches; the child given a capture of 1 ge_b (the same topology, as CUDA
//           requires) by cuGraphExecChildGraphNodeSetParams, ITERS launches; given
//           exec 2's graph back by the runtime's cudaGraphExecChildGraphNodeSetParams,
//           ITERS launches; destroyed with the driver's cuGraphExecDestroy;
//   exec 5: exec 2's graph (1 ge_a) instantiated, ITERS launches; cudaGraphExecUpdate to
//           a capture of 1 ge_b, ITERS launches; updated again to another capture of 1
//           ge_b (the same inventory), ITERS launches; destroyed (cudaGraphExecDestroy);
//   exec 6: exec 1's graph (2 ge_a) instantiated after that (the handle may be exec
//           5's), launched once, destroyed.
// Prints "graphedit: ok" when every call succeeded.
// With CHURN > 0 it only instantiates a graph of 64 ge_a nodes CHURN times, edits one
// node of each exec (ge_b), launches every 1000th and destroys each (even ones with
// cudaGraphExecDestroy, odd ones with cuGraphExecDestroy), and prints the growth of
// its resident memory between the CHURN/10-th exec and the last:
// "graphedit churn: N execs, rss growth K kB".
// usage: graphedit [ITERS [CHURN]]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
typedef CUresult (*destroy_fn)(CUgraphExec);

static int launch_n(cudaGraphExec_t e, cudaStream_t s, int n) {
  for (int i = 0; i < n; i++)
    if (cudaGraphLaunch(e, s) != cudaSuccess) return 1;
  return cudaStreamSynchronize(s) != cudaSuccess;
}

/* Kernel node parameters that run ge_b(x) (args: {&x}, kept by the caller). */
static cudaKernelNodeParams ge_b_params(void **args) {
  cudaKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = (void *)ge_b;
  p.gridDim = dim3(1);
  p.blockDim = dim3(N);
  p.kernelParams = args;
  return p;
}

/* The process's resident memory in kB (0 when unknown). */
static long rss_kb(void) {
  long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#define CHURN_NODES 64

/* CHURN mode (see the top): execs made, edited and destroyed n times. */
static int churn(cudaStream_t s, float *x, int n) {
  destroy_fn destroy = (destroy_fn)driver_proc("cuGraphExecDestroy", 10000, 0);
  CHECK(!destroy);
  cudaGraph_t g;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < CHURN_NODES; i++) ge_a<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphNode_t nodes[CHURN_NODES];
  size_t count = CHURN_NODES;
  CHECK(cudaGraphGetNodes(g, nodes, &count));
  CHECK(count != CHURN_NODES);
  void *args[] = {&x};
  cudaKernelNodeParams p = ge_b_params(args);
  long base = 0;
  for (int i = 0; i < n; i++) {
    if (i == n / 10) base = rss_kb();
    cudaGraphExec_t e;
    CHECK(cudaGraphInstantiate(&e, g, 0));
    CHECK(cudaGraphExecKernelNodeSetParams(e, nodes[i % CHURN_NODES], &p));
    if (i % 1000 == 0) CHECK(launch_n(e, s, 1));
    if (i % 2) CHECK(destroy((CUgraphExec)e));
    else CHECK(cudaGraphExecDestroy(e));
  }
  printf("graphedit churn: %d execs, rss growth %ld kB\n", n, rss_kb() - base);
  return 0;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 3;
  int churns = argc > 2 ? atoi(argv[2]) : 0;
  cudaStream_t s;
  float *x;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  if (churns > 0) return churn(s, x, churns);

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
  cudaKernelNodeParams p = ge_b_params(args);
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
  CHECK(launch_n(e4, s, iters));
  cudaGraph_t g4b;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  ge_b<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g4b));
  CHECK(child_edit((CUgraphExec)e4, child, (CUgraph)g4b));
  CHECK(launch_n(e4, s, iters));
  CHECK(cudaGraphExecChildGraphNodeSetParams(e4, (cudaGraphNode_t)child, g2));
  CHECK(launch_n(e4, s, iters));
  destroy_fn destroy = (destroy_fn)driver_proc("cuGraphExecDestroy", 10000, 0);
  CHECK(!destroy);
  CHECK(destroy((CUgraphExec)e4));

  // exec 5: updated to another graph, then to an equal one
  cudaGraphExec_t e5;
  CHECK(cudaGraphInstantiate(&e5, g2, 0));
  CHECK(launch_n(e5, s, iters));
  cudaGraph_t g5[2];
  for (int i = 0; i < 2; i++) {
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    ge_b<<<1, N, 0, s>>>(x);
    CHECK(cudaStreamEndCapture(s, &g5[i]));
    cudaGraphExecUpdateResultInfo info;
    CHECK(cudaGraphExecUpdate(e5, g5[i], &info));
    CHECK(launch_n(e5, s, iters));
  }
  CHECK(cudaGraphExecDestroy(e5));

  // exec 6: instantiated after exec 5's destruction
  cudaGraphExec_t e6;
  CHECK(cudaGraphInstantiate(&e6, g1, 0));
  CHECK(launch_n(e6, s, 1));
  CHECK(cudaGraphExecDestroy(e6));
  printf("graphedit: ok\n");
  return 0;
}
