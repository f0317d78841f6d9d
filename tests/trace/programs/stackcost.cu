// Bursts of launches with the host asleep between them (test_stackcost.py), simulated
// GPU, shared cudart: 5 bursts of 64 launches of sc_step, each followed by a device
// synchronise, then 20 ms of sleep outside CUDA. Prints one line per sleep,
// "SLEEP begin_ns end_ns" (CLOCK_MONOTONIC, the clock of the trace), then
// "stackcost: ok"; exit status 1 when a CUDA call failed.
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    int e_ = (int)(call);                                                           \
    if (e_) {                                                                       \
      fprintf(stderr, "stackcost: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

__global__ void sc_step(float *x) { x[threadIdx.x] += 1.0f; }

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main() {
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  for (int burst = 0; burst < 5; burst++) {
    for (int i = 0; i < 64; i++) {
      sc_step<<<1, 32>>>(x);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    if (burst == 4) break;
    unsigned long long begin = now_ns();
    usleep(20000);
    unsigned long long end = now_ns();
    printf("SLEEP %llu %llu\n", begin, end);
  }
  CHECK(cudaFree(x));
  printf("stackcost: ok\n");
  return 0;
}
