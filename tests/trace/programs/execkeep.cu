// Graph exec destroys that fail (test_execkeep.py): the exec lives on, and so must what
// the tracer knows of it. On the simulated GPU a destroy is refused while the calling
// thread captures (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900; the capture invalidated).
//   exec E: a capture of 1 ek_a on stream S, instantiated, launched once;
//   on stream C (global-mode capture begun): cudaGraphExecDestroy(E) refused (900), the
//   capture ended (invalidated: 901); E launched;
//   E's node given ek_b (cudaGraphExecKernelNodeSetParams): a new inventory; E launched;
//   again with the driver's cuGraphExecDestroy (cuGetProcAddress 10000): refused (900),
//   the capture ended (901); E launched;
//   E destroyed (cudaGraphExecDestroy: success) and destroyed again (stale: 1).
// Prints "execkeep: ok"; exit status 1 when a call answered something unexpected.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "driver_proc.h"

#define N 32

__global__ void ek_a(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void ek_b(float *x) { x[threadIdx.x] *= 2.0f; }

#define EXPECT(call, want)                                                             \
  do {                                                                                 \
    int e_ = (int)(call);                                                              \
    if (e_ != (int)(want)) {                                                           \
      fprintf(stderr, "execkeep: %s answered %d, want %d (line %d)\n", #call, e_,      \
              (int)(want), __LINE__);                                                  \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)
#define CHECK(call) EXPECT(call, 0)

typedef CUresult (*destroy_fn)(CUgraphExec);

/* A destroy of e refused inside a global-mode capture of c, the capture ended. */
static int refused_destroy(cudaGraphExec_t e, cudaStream_t c, destroy_fn driver_destroy) {
  cudaGraph_t none = NULL;
  CHECK(cudaStreamBeginCapture(c, cudaStreamCaptureModeGlobal));
  if (driver_destroy)
    EXPECT(driver_destroy((CUgraphExec)e), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  else
    EXPECT(cudaGraphExecDestroy(e), cudaErrorStreamCaptureUnsupported);
  EXPECT(cudaStreamEndCapture(c, &none), cudaErrorStreamCaptureInvalidated);
  (void)cudaGetLastError();
  return 0;
}

int main() {
  cudaStream_t s, c;
  float *x;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  destroy_fn driver_destroy = (destroy_fn)driver_proc("cuGraphExecDestroy", 10000, 0);
  CHECK(!driver_destroy);

  cudaGraph_t g;
  cudaGraphExec_t e;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  ek_a<<<1, N, 0, s>>>(x);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&e, g, 0));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));

  if (refused_destroy(e, c, NULL)) return 1;
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));

  cudaGraphNode_t node;
  size_t count = 1;
  CHECK(cudaGraphGetNodes(g, &node, &count));
  void *args[] = {&x};
  cudaKernelNodeParams p;
  memset(&p, 0, sizeof p);
  p.func = (void *)ek_b;
  p.gridDim = dim3(1);
  p.blockDim = dim3(N);
  p.kernelParams = args;
  CHECK(cudaGraphExecKernelNodeSetParams(e, node, &p));
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));

  if (refused_destroy(e, c, driver_destroy)) return 1;
  CHECK(cudaGraphLaunch(e, s));
  CHECK(cudaStreamSynchronize(s));

  CHECK(cudaGraphExecDestroy(e));
  EXPECT(cudaGraphExecDestroy(e), cudaErrorInvalidValue);
  printf("execkeep: ok\n");
  return 0;
}
