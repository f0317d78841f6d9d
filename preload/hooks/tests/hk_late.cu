/* hk_late: event chaining when the host is late inside a launch call.
 *
 *   hk_late ROUNDS   each round, on one non-blocking stream, four times: k_long, then
 *                    an operation queued while k_long runs but made late by
 *                    hk_late_shim (the call sleeps LATE_US before it submits; k_long
 *                    ends meanwhile), a stream synchronisation; the operations:
 *                    k_next, a pinned cudaMemcpyAsync, a cudaMemsetAsync, a graph
 *                    launch of k_graph, a pinned cuMemcpyHtoDAsync (the driver's,
 *                    found with dlsym). Then, on time: k_long, two k_next and a
 *                    cudaMemcpyAsync from pageable memory (which returns only once
 *                    done), a stream synchronisation; k_long and a pageable
 *                    cuMemcpyHtoDAsync, a synchronisation. Last, k_long and a k_next
 *                    submitted on time whose call returns late (the shim sleeps
 *                    LATE_US after the runtime returned), a synchronisation.
 *
 * Preload hk_late_shim.so (after libtrace.so when traced): without it the program
 * says so and exits with status 2. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define LATE_US 4000u

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "hk_late: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
              cudaGetErrorName(e_));                                                   \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

__global__ void k_long(int v) {}
__global__ void k_next(int v) {}
__global__ void k_graph(int v) {}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  void (*arm)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "hk_late_arm");
  void (*arm_after)(unsigned) = (void (*)(unsigned))dlsym(RTLD_DEFAULT, "hk_late_arm_after");
  CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream) =
      (CUresult(*)(CUdeviceptr, const void *, size_t, CUstream))dlsym(RTLD_DEFAULT,
                                                                       "cuMemcpyHtoDAsync_v2");
  if (!arm || !arm_after || !htod_async) {
    fprintf(stderr, "hk_late: preload hk_late_shim.so\n");
    return 2;
  }
  const size_t bytes = 65536;
  void *pinned, *dev;
  void *pageable = calloc(1, bytes);
  if (!pageable)
    return 1;
  CHECK(cudaMallocHost(&pinned, bytes));
  CHECK(cudaMalloc(&dev, bytes));
  cudaStream_t s, side;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  /* the graph is captured on its own stream: a capture ends event chains */
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(side, cudaStreamCaptureModeGlobal));
  k_graph<<<1, 1, 0, side>>>(0);
  CHECK(cudaStreamEndCapture(side, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < rounds; r++) {
    for (int op = 0; op < 5; op++) {
      k_long<<<1, 1, 0, s>>>(r);
      arm(LATE_US);
      if (op == 0)
        k_next<<<1, 1, 0, s>>>(r);
      else if (op == 1)
        CHECK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
      else if (op == 2)
        CHECK(cudaMemsetAsync(dev, r, bytes, s));
      else if (op == 3)
        CHECK(cudaGraphLaunch(exec, s));
      else if (htod_async((CUdeviceptr)dev, pinned, bytes, s) != CUDA_SUCCESS)
        return 1;
      CHECK(cudaGetLastError());
      CHECK(cudaStreamSynchronize(s));
    }
    k_long<<<1, 1, 0, s>>>(r);
    k_next<<<1, 1, 0, s>>>(-r);
    k_next<<<1, 1, 0, s>>>(-r);
    CHECK(cudaMemcpyAsync(dev, pageable, bytes, cudaMemcpyHostToDevice, s));
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    k_long<<<1, 1, 0, s>>>(r);
    if (htod_async((CUdeviceptr)dev, pageable, bytes, s) != CUDA_SUCCESS)
      return 1;
    CHECK(cudaStreamSynchronize(s));
    k_long<<<1, 1, 0, s>>>(r);
    arm_after(LATE_US);
    k_next<<<1, 1, 0, s>>>(r);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(side));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(dev));
  CHECK(cudaFreeHost(pinned));
  free(pageable);
  printf("late: %d rounds of 5 late operations, 5 on time, 1 returning late\n", rounds);
  return 0;
}
