/*
 * Call sites for test_callsite.py (runs on the simulated GPU, built with -g and a
 * shared cudart). ITERATIONS times: launch_a twice (kernels queued back to back),
 * a host pause of PAUSE_US (the GPU goes idle: a planted gap), then, inside the NVTX
 * range "phase_b" (itself inside "iteration"), launch_b once, which ends the gap.
 * The launches sit on the lines marked `CALLSITE:`; the test reads them from here.
 * usage: callsite [ITERATIONS [PAUSE_US]]; exit status 0 when CUDA succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N 4096

__global__ void callsite_kernel_a(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void callsite_kernel_b(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "callsite: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

static __attribute__((noinline)) void launch_a(float *x) {
  callsite_kernel_a<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_a */
  check(cudaGetLastError(), "launch callsite_kernel_a");
}

static __attribute__((noinline)) void launch_b(float *x) {
  callsite_kernel_b<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_b */
  check(cudaGetLastError(), "launch callsite_kernel_b");
}

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 4;
  int pause_us = argc > 2 ? atoi(argv[2]) : 3000;
  float *x = NULL;
  check(cudaMalloc(&x, N * sizeof(float)), "cudaMalloc");
  check(cudaMemset(x, 0, N * sizeof(float)), "cudaMemset");
  for (int i = 0; i < iterations; i++) {
    nvtxRangePushA("iteration");
    launch_a(x);
    launch_a(x);
    usleep(pause_us); /* the GPU finishes the a kernels and waits: the planted gap */
    nvtxRangePushA("phase_b");
    launch_b(x);
    nvtxRangePop();
    nvtxRangePop();
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(x), "cudaFree");
  return failed;
}
