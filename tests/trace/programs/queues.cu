/*
 * Two ways to feed a stream, for test_queues.py (simulated GPU, shared cudart):
 * - starved (stream 1): FEW tiny kernels, each launched after the CPU slept 300 us, so
 *   every launch finds the stream's queue empty and the kernel (1 us by
 *   SIMCUDA_KERNEL_US) runs shorter than its launch call;
 * - fed (stream 2): DEEP long kernels launched back to back with no wait, so the k-th
 *   launch finds k operations queued (itself included) and starts k-1 kernel
 *   durations after its call returned.
 * The kernels compute nothing on the simulator; names and durations are what counts.
 * usage: queues [FEW [DEEP]]; exit status 0 when every CUDA call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>

__global__ void tiny_step(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void heavy_step(float *x) { x[threadIdx.x] *= 2.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "queues: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(int argc, char **argv) {
  int few = argc > 1 ? atoi(argv[1]) : 20;
  int deep = argc > 2 ? atoi(argv[2]) : 40;
  float *x = NULL, *y = NULL;
  cudaStream_t starved, fed;
  check(cudaMalloc(&x, 1024 * sizeof *x), "cudaMalloc x");
  check(cudaMalloc(&y, 1024 * sizeof *y), "cudaMalloc y");
  check(cudaStreamCreateWithFlags(&starved, cudaStreamNonBlocking), "stream starved");
  check(cudaStreamCreateWithFlags(&fed, cudaStreamNonBlocking), "stream fed");
  for (int i = 0; i < few && !failed; i++) {
    usleep(300);
    tiny_step<<<1, 32, 0, starved>>>(x);
    check(cudaGetLastError(), "launch tiny_step");
  }
  check(cudaStreamSynchronize(starved), "sync starved");
  for (int i = 0; i < deep && !failed; i++) {
    heavy_step<<<1, 32, 0, fed>>>(y);
    check(cudaGetLastError(), "launch heavy_step");
  }
  check(cudaStreamSynchronize(fed), "sync fed");
  check(cudaStreamDestroy(starved), "destroy starved");
  check(cudaStreamDestroy(fed), "destroy fed");
  check(cudaFree(x), "free x");
  check(cudaFree(y), "free y");
  printf("queues: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
