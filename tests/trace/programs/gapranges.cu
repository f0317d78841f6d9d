/*
 * Gaps whose NVTX range closes long after them, for test_gapranges.py (runs on the
 * simulated GPU, built with -g and a shared cudart). EPOCHS times, inside the range
 * "epoch": a launch, a host pause of PAUSE_US (a planted gap), launch_epoch (ends it,
 * in "epoch" and no inner range), then STEPS ranges "step" of one launch_step each,
 * every 100th after a pause of PAUSE_US / 10 (gaps ended in "step"); "epoch" closes
 * after them, STEPS ranges after its gap. Then, outside any range, a pause and
 * launch_free (a gap ended in no range). The launches sit on the lines marked
 * `CALLSITE:`; the test reads them from here.
 * usage: gapranges [EPOCHS [STEPS [PAUSE_US]]]; exit status 0 when CUDA succeeded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N 1024

__global__ void gapranges_kernel(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "gapranges: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

static __attribute__((noinline)) void launch_first(float *x) {
  gapranges_kernel<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_first */
  check(cudaGetLastError(), "launch_first");
}

static __attribute__((noinline)) void launch_epoch(float *x) {
  gapranges_kernel<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_epoch */
  check(cudaGetLastError(), "launch_epoch");
}

static __attribute__((noinline)) void launch_step(float *x) {
  gapranges_kernel<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_step */
  check(cudaGetLastError(), "launch_step");
}

static __attribute__((noinline)) void launch_free(float *x) {
  gapranges_kernel<<<N / 256, 256>>>(x, N); /* CALLSITE: launch_free */
  check(cudaGetLastError(), "launch_free");
}

int main(int argc, char **argv) {
  int epochs = argc > 1 ? atoi(argv[1]) : 2;
  int steps = argc > 2 ? atoi(argv[2]) : 1100;
  int pause_us = argc > 3 ? atoi(argv[3]) : 3000;
  float *x = NULL;
  check(cudaMalloc(&x, N * sizeof(float)), "cudaMalloc");
  for (int e = 0; e < epochs; e++) {
    nvtxRangePushA("epoch");
    launch_first(x);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    usleep(pause_us); /* the GPU is idle: the planted gap, ended in "epoch" */
    launch_epoch(x);
    for (int s = 0; s < steps; s++) {
      nvtxRangePushA("step");
      if (s % 100 == 99) {
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        usleep(pause_us / 10); /* a gap ended in "step" */
      }
      launch_step(x);
      nvtxRangePop();
    }
    nvtxRangePop(); /* "epoch" closes, steps ranges after its gap */
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    usleep(pause_us); /* a gap ended outside any range */
    launch_free(x);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(x), "cudaFree");
  if (!failed) printf("gapranges ok\n");
  return failed;
}
