// A host polling several targets round-robin (test_rrpolls.py; NCCL-watchdog style),
// simulated GPU, shared cudart. Streams S0, S1, S2 and D (all non-blocking).
//   phase 1: rr_short on D; rr_long0/1/2 (planted 100, 150, 200 ms) on S0/S1/S2, an event
//            recorded after each; cudaEventQuery on e0, e1, e2, e0, e1, ... (a ready
//            event leaves the round) until all three are ready; rr_short on D again:
//            D idles for the whole round, waiting for the GPU, not host time.
//   phase 2: the same with the driver's cuStreamQuery (cuGetProcAddress 2000) on S0,
//            S1, S2 round-robin.
// Prints "rrpolls: ok" and, per phase and target, the not-ready answers it saw (6
// numbers); exit status 1 when any call answered something else.
//
// `rrpolls fork`: rr_long0 on S0, one cudaEventQuery of its event (not ready), fork();
// the child makes one traced call (cudaDeviceSynchronize) and exits; the parent waits for
// it, then polls the event until ready. Prints "rrpolls: fork ok N" (N the parent's
// not-ready answers, the first included).
//
// `rrpolls bench N K` (bench/callgrind of coalesced polls): kernels of SIMCUDA_KERNEL_US
// on K streams (1..3), then exactly N cudaEventQuery polls round-robin over their K
// events, all expected not ready (the kernels outlast them), then a synchronisation.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver_proc.h"

#define CHECK(call)                                                                \
  do {                                                                             \
    int e_ = (int)(call);                                                          \
    if (e_) {                                                                      \
      fprintf(stderr, "rrpolls: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

__global__ void rr_short(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void rr_long0(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void rr_long1(float *x) { x[threadIdx.x] *= 3.0f; }
__global__ void rr_long2(float *x) { x[threadIdx.x] *= 4.0f; }

typedef CUresult (*stream_query_fn)(CUstream);

/* Launches the three long kernels (the first k), one event after each. */
static int launch_longs(float *x, cudaStream_t *s, cudaEvent_t *e, int k) {
  for (int i = 0; i < k; i++) {
    if (i == 0) rr_long0<<<1, 32, 0, s[0]>>>(x + 32);
    if (i == 1) rr_long1<<<1, 32, 0, s[1]>>>(x + 64);
    if (i == 2) rr_long2<<<1, 32, 0, s[2]>>>(x + 96);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e[i], s[i]));
  }
  return 0;
}

int main(int argc, char **argv) {
  cudaStream_t s[3], d;
  cudaEvent_t e[3];
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  for (int i = 0; i < 3; i++) {
    CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&e[i], cudaEventDisableTiming));
  }
  CHECK(cudaStreamCreateWithFlags(&d, cudaStreamNonBlocking));
  if (argc == 4 && argv[1][0] == 'b') {
    long n = atol(argv[2]);
    int k = atoi(argv[3]);
    CHECK(k < 1 || k > 3 || launch_longs(x, s, e, k));
    long not_ready = 0;
    for (long i = 0; i < n; i++) {
      cudaError_t r = cudaEventQuery(e[i % k]);
      if (r == cudaErrorNotReady) not_ready++;
      else CHECK(r);
    }
    CHECK(cudaDeviceSynchronize());
    printf("rrpolls: bench %ld polls, %ld not ready\n", n, not_ready);
    return 0;
  }
  if (argc == 2 && argv[1][0] == 'f') {
    CHECK(launch_longs(x, s, e, 1));
    long not_ready = 0;
    CHECK(cudaEventQuery(e[0]) != cudaErrorNotReady);
    not_ready++;
    pid_t child = fork();
    CHECK(child < 0);
    if (child == 0) {
      cudaDeviceSynchronize();
      exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) != child || status != 0);
    cudaError_t r;
    while ((r = cudaEventQuery(e[0])) == cudaErrorNotReady) not_ready++;
    CHECK(r);
    printf("rrpolls: fork ok %ld\n", not_ready);
    return 0;
  }
  stream_query_fn drv_query = (stream_query_fn)driver_proc("cuStreamQuery", 2000, 0);
  CHECK(!drv_query);
  long n[2][3] = {{0, 0, 0}, {0, 0, 0}};
  for (int phase = 0; phase < 2; phase++) {
    rr_short<<<1, 32, 0, d>>>(x);
    CHECK(cudaGetLastError());
    CHECK(launch_longs(x, s, e, 3));
    int done[3] = {0, 0, 0}, left = 3;
    for (int i = 0; left; i = (i + 1) % 3) {
      if (done[i]) continue;
      int r = phase == 0 ? (int)cudaEventQuery(e[i]) : (int)drv_query((CUstream)s[i]);
      if (r == (phase == 0 ? (int)cudaErrorNotReady : (int)CUDA_ERROR_NOT_READY)) {
        n[phase][i]++;
        continue;
      }
      CHECK(r);
      done[i] = 1;
      left--;
    }
    rr_short<<<1, 32, 0, d>>>(x);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  printf("rrpolls: ok %ld %ld %ld %ld %ld %ld\n", n[0][0], n[0][1], n[0][2], n[1][0], n[1][1],
         n[1][2]);
  return 0;
}
