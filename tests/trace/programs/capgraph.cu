// Graphs built the three ways a capture can begin besides cudaStreamBeginCapture, each
// then instantiated and launched ITERS times on one stream (test_capgraph.py):
//   1. cudaStreamBeginCaptureToGraph (CUDA 12.3) into a graph made by cudaGraphCreate:
//      3 cg_step launches; the exec is uploaded with cudaGraphUpload first;
//   2. cuStreamBeginCaptureToGraph through cuGetProcAddress (12030): 2 cg_drv launches;
//      uploaded with cuGraphUpload (11010);
//   3. the CUDA 10.0 one-argument cuStreamBeginCapture (cuGetProcAddress version 10000):
//      1 cg_old launch.
// Every capture ends with cudaStreamEndCapture. Prints "capgraph: ok" when every call
// succeeded (the simulated GPU runs no device code: the kernels' sums are not checked).
// usage: capgraph [ITERS]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "driver_proc.h"

#define N 32

__global__ void cg_step(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void cg_drv(float *x) { x[threadIdx.x] += 10.0f; }
__global__ void cg_old(float *x) { x[threadIdx.x] += 100.0f; }

#define CHECK(call)                                                            \
  do {                                                                         \
    int e_ = (int)(call);                                                      \
    if (e_) {                                                                  \
      fprintf(stderr, "capgraph: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

typedef CUresult (*to_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *,
                                size_t, CUstreamCaptureMode);
typedef CUresult (*begin_v1_fn)(CUstream);
typedef CUresult (*upload_fn)(CUgraphExec, CUstream);

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 4;
  cudaStream_t s;
  float *x, host[N];
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  CHECK(cudaMemsetAsync(x, 0, N * sizeof(float), s));

  // 1. runtime capture into the program's graph, runtime upload
  cudaGraph_t g1, out;
  cudaGraphExec_t e1;
  CHECK(cudaGraphCreate(&g1, 0));
  CHECK(cudaStreamBeginCaptureToGraph(s, g1, NULL, NULL, 0, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; i++) cg_step<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &out));
  CHECK(out != g1);
  CHECK(cudaGraphInstantiate(&e1, g1, 0));
  CHECK(cudaGraphUpload(e1, s));

  // 2. driver capture into the program's graph, driver upload
  to_graph_fn to_graph = (to_graph_fn)driver_proc("cuStreamBeginCaptureToGraph", 12030, 0);
  upload_fn upload = (upload_fn)driver_proc("cuGraphUpload", 11010, 0);
  CHECK(!to_graph || !upload);
  cudaGraph_t g2;
  cudaGraphExec_t e2;
  CHECK(cudaGraphCreate(&g2, 0));
  CHECK(to_graph((CUstream)s, (CUgraph)g2, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < 2; i++) cg_drv<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &out));
  CHECK(out != g2);
  CHECK(cudaGraphInstantiate(&e2, g2, 0));
  CHECK(upload((CUgraphExec)e2, (CUstream)s));

  // 3. the CUDA 10.0 form of cuStreamBeginCapture
  begin_v1_fn begin_v1 = (begin_v1_fn)driver_proc("cuStreamBeginCapture", 10000, 0);
  CHECK(!begin_v1);
  cudaGraph_t g3;
  cudaGraphExec_t e3;
  CHECK(begin_v1((CUstream)s));
  cg_old<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g3));
  CHECK(cudaGraphInstantiate(&e3, g3, 0));

  for (int i = 0; i < iters; i++) {
    CHECK(cudaGraphLaunch(e1, s));
    CHECK(cudaGraphLaunch(e2, s));
    CHECK(cudaGraphLaunch(e3, s));
  }
  CHECK(cudaMemcpyAsync(host, x, sizeof host, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  printf("capgraph: ok\n");
  return 0;
}
