// A host polling the GPU instead of blocking (test_polls.py), simulated GPU, shared cudart.
// Streams A and B (non-blocking). Each phase launches pl_short on A, then pl_long on B
// (100 ms, SIMCUDA_KERNEL_US in test_polls.py), then polls B's work until done, then
// launches pl_short on A again: A sits idle for the whole poll, which is waiting (cause
// sync), not the host's own time.
//   phase 1: cudaEventQuery(ev) on an event recorded after pl_long, busy spin;
//   phase 2: cudaStreamQuery(B), 100 us of sleep between polls;
//   phase 3: the driver's cuEventQuery (cuGetProcAddress 2000), busy spin.
// Prints "polls: ok N1 N2 N3", Ni the not-ready answers phase i saw, each phase ending
// with one success; exit status 1 when any call returned something else.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <unistd.h>

#include "driver_proc.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    int e_ = (int)(call);                                                        \
    if (e_) {                                                                    \
      fprintf(stderr, "polls: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

__global__ void pl_short(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void pl_long(float *x) { x[threadIdx.x] *= 2.0f; }

typedef CUresult (*event_query_fn)(CUevent);

int main() {
  cudaStream_t a, b;
  cudaEvent_t ev;
  float *x;
  long n[3] = {0, 0, 0};
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  event_query_fn drv_query = (event_query_fn)driver_proc("cuEventQuery", 2000, 0);
  CHECK(!drv_query);
  for (int phase = 0; phase < 3; phase++) {
    pl_short<<<1, 32, 0, a>>>(x);
    CHECK(cudaGetLastError());
    pl_long<<<1, 32, 0, b>>>(x + 32);
    CHECK(cudaGetLastError());
    if (phase != 1) CHECK(cudaEventRecord(ev, b));
    int r;
    for (;;) {
      if (phase == 0) r = cudaEventQuery(ev);
      else if (phase == 1) r = cudaStreamQuery(b);
      else r = drv_query((CUevent)ev);
      if (r != (phase == 2 ? (int)CUDA_ERROR_NOT_READY : (int)cudaErrorNotReady)) break;
      n[phase]++;
      if (phase == 1) usleep(100);
    }
    CHECK(r);
    CHECK(n[phase] == 0); // the work is long: at least one poll must see it busy
  }
  pl_short<<<1, 32, 0, a>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  printf("polls: ok %ld %ld %ld\n", n[0], n[1], n[2]);
  return 0;
}
