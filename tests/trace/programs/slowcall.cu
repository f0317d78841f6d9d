/*
 * GPU idle caused by a slow launching call, for test_slowcall.py (simulated GPU): a
 * "GEMM" library call (cublasSgemm_v2 from libslowblas.so, slowblas.cu) that does
 * host setup for a planted time before it launches its kernel, ITERS times with a
 * cudaDeviceSynchronize after each, so the device sits idle through every call's setup.
 *   slowcall every  : every call spins SPIN_US (the setup is in the loop);
 *   slowcall warmup : only the first call spins WARM_US, the others REST_US (warm-up;
 *                     REST_US stays far under the 50 us that make a call slow, even on
 *                     a loaded host);
 *   slowcall tail   : as every, and each call then goes on TAIL_US after its launch,
 *                     recording events (cudaEventRecord inside it), so that it ends long
 *                     after its kernel: the gaps wait for their outermost call.
 * Then (both modes) SLEEPS times: the host sleeps SLEEP_US, then launches host_step
 * (a host wait ended by a plain launch), and COPIES synchronous pageable copies (small
 * findings that must rank below the slow call's). The lines marked SLOWCALL: and
 * SLEEPLAUNCH: are the call sites test_slowcall.py expects. Prints the plan, then
 * "slowcall: ok" and exits 0 when every CUDA call succeeded.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define ITERS 8
#define SPIN_US 5000
#define WARM_US 40000
#define REST_US 5
#define SLEEPS 3
#define SLEEP_US 3000
#define COPIES 4
#define TAIL_US 30000

extern "C" void slowblas_plan(unsigned first, unsigned rest, unsigned tail);

__global__ void host_step(float *x) { x[threadIdx.x] *= 2.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "slowcall: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

/* One "GEMM" through the library. */
__attribute__((noinline)) static void run_gemm(float *c) {
  const float one = 1.0f;
  cublasStatus_t st = cublasSgemm_v2((cublasHandle_t)0, CUBLAS_OP_N, CUBLAS_OP_N, 32, 1, 1, &one, c, 32, c, 1, &one, c, 32); /* SLOWCALL: */
  if (st != CUBLAS_STATUS_SUCCESS) failed = 1;
}

/* The host busy elsewhere, then a plain launch. */
__attribute__((noinline)) static void sleep_then_launch(float *x) {
  struct timespec ts = {0, SLEEP_US * 1000L};
  nanosleep(&ts, NULL);
  host_step<<<1, 32>>>(x); /* SLEEPLAUNCH: */
}

int main(int argc, char **argv) {
  int warmup = argc > 1 && !strcmp(argv[1], "warmup");
  int tail = argc > 1 && !strcmp(argv[1], "tail");
  float *c = NULL;
  static float host[16384];
  check(cudaMalloc(&c, sizeof host), "cudaMalloc");
  check(cudaMemset(c, 0, sizeof host), "cudaMemset"); /* the device's first work */
  check(cudaDeviceSynchronize(), "sync");
  slowblas_plan(warmup ? WARM_US : SPIN_US, warmup ? REST_US : SPIN_US, tail ? TAIL_US : 0);
  printf("plan mode=%s iters=%d first_us=%d rest_us=%d tail_us=%d sleeps=%d sleep_us=%d "
         "copies=%d\n", warmup ? "warmup" : tail ? "tail" : "every", ITERS,
         warmup ? WARM_US : SPIN_US, warmup ? REST_US : SPIN_US, tail ? TAIL_US : 0, SLEEPS,
         SLEEP_US, COPIES);
  for (int i = 0; i < ITERS; i++) {
    run_gemm(c);
    check(cudaDeviceSynchronize(), "sync gemm");
  }
  for (int i = 0; i < SLEEPS; i++) {
    sleep_then_launch(c);
    check(cudaDeviceSynchronize(), "sync step");
  }
  for (int i = 0; i < COPIES; i++) check(cudaMemcpy(c, host, sizeof host, cudaMemcpyHostToDevice), "copy");
  check(cudaFree(c), "cudaFree");
  printf("slowcall: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
