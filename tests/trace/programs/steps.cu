/*
 * A training-like loop for test_steps.py (simulated GPU, shared cudart): NVTX range
 * "init" once (context, buffers), then STEPS (9) iterations, each inside NVTX range
 * "step" holding two nested ranges "fwd" (depth 1) and 4 launches of s_work (each as
 * long as SIMCUDA_KERNEL_US says) and one cudaDeviceSynchronize. Planted:
 *   step 0        setup: cudaMalloc of 64 MiB and a synchronous pageable HtoD copy of it
 *   step SLEEPY   the CPU sleeps SLEEP_MS before its launches (GPU idle: host_wait)
 *   step LONG     its second s_work lasts LONG_FACTOR (5) times as long
 *                 (simcuda_hint_next_launch_ns)
 * The plants are far larger than a step (the test runs 40 ms kernels, 160 ms steps) so a
 * synchronize waking tens of ms late on a loaded machine cannot hide them.
 * usage: steps KERNEL_US   (the s_work duration the environment set, for the hint)
 * Exit status 0 when every CUDA call succeeded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define STEPS 9
#define SLEEPY 3
#define LONG 6
#define SLEEP_MS 600
#define LONG_FACTOR 5
#define SETUP_BYTES (64u << 20)

__global__ void s_work(float *x) { x[threadIdx.x] += 1.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "steps: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

int main(int argc, char **argv) {
  unsigned long long kernel_us = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
  float *x = NULL, *setup = NULL;
  nvtxRangePushA("init");
  check(cudaFree(0), "cudaFree(0)");
  check(cudaMalloc(&x, 4096 * sizeof *x), "cudaMalloc");
  nvtxRangePop();
  /* the simulator's private duration hint (absent on a real GPU: the step is not longer) */
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*hint)(unsigned long long) =
      drv ? (void (*)(unsigned long long))dlsym(drv, "simcuda_hint_next_launch_ns") : NULL;
  char *host = (char *)calloc(1, SETUP_BYTES);
  for (int i = 0; i < STEPS; i++) {
    nvtxRangePushA("step");
    if (i == 0) {
      check(cudaMalloc(&setup, SETUP_BYTES), "cudaMalloc setup");
      check(cudaMemcpy(setup, host, SETUP_BYTES, cudaMemcpyHostToDevice), "cudaMemcpy setup");
    }
    if (i == SLEEPY) usleep(SLEEP_MS * 1000);
    for (int half = 0; half < 2; half++) {
      nvtxRangePushA("fwd");
      for (int k = 0; k < 2; k++) {
        if (i == LONG && half == 0 && k == 1 && hint && kernel_us) hint(LONG_FACTOR * kernel_us * 1000);
        s_work<<<1, 256>>>(x);
        check(cudaGetLastError(), "launch");
      }
      nvtxRangePop();
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    nvtxRangePop();
  }
  check(cudaFree(setup), "cudaFree");
  check(cudaFree(x), "cudaFree");
  free(host);
  printf("steps: %s\n", failed ? "failed" : "ok");
  return failed;
}
