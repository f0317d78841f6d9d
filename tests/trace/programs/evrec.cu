// The program's own event records (test_evrec.py), built with a shared and with a
// static runtime: ITERS rounds on one stream of an evrec_step launch, a cudaEventRecord
// and a cudaEventRecordWithFlags (default flags), a cudaStreamWaitEvent on a second
// stream and a cudaEventSynchronize. Prints "evrec: ok" when every call succeeded.
// usage: evrec [ITERS]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define N 32

__global__ void evrec_step(float *x) { x[threadIdx.x] += 1.0f; }

#define CHECK(call)                                                           \
  do {                                                                        \
    int e_ = (int)(call);                                                     \
    if (e_) {                                                                 \
      fprintf(stderr, "evrec: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 5;
  cudaStream_t s, t;
  cudaEvent_t a, b;
  float *x;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreateWithFlags(&b, cudaEventDisableTiming));
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  for (int i = 0; i < iters; i++) {
    evrec_step<<<1, N, 0, s>>>(x);
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaEventRecordWithFlags(b, s, cudaEventRecordDefault));
    CHECK(cudaStreamWaitEvent(t, b, 0));
    CHECK(cudaEventSynchronize(a));
  }
  CHECK(cudaStreamSynchronize(t));
  printf("evrec: ok\n");
  return 0;
}
