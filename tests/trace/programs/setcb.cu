// 3-D sets and stream callbacks (test_setcb.py), on one non-blocking stream S:
//   cudaMemset3D of a 64 x 8 x 4 extent (2048 bytes) in a pitched 64 x 8 x 4 allocation,
//   cudaMemset3DAsync of 48 x 8 x 4 (1536 bytes) on S,
//   cudaStreamAddCallback on S, then cuStreamAddCallback (cuGetProcAddress 5000) on S.
// Prints "setcb: ok" when every call succeeded and both callbacks ran.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <unistd.h>

#include "driver_proc.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    int e_ = (int)(call);                                                        \
    if (e_) {                                                                    \
      fprintf(stderr, "setcb: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

static int callbacks;

static void CUDART_CB runtime_callback(cudaStream_t, cudaError_t status, void *) {
  if (status == cudaSuccess) __atomic_add_fetch(&callbacks, 1, __ATOMIC_SEQ_CST);
}

static void CUDA_CB driver_callback(CUstream, CUresult status, void *) {
  if (status == CUDA_SUCCESS) __atomic_add_fetch(&callbacks, 1, __ATOMIC_SEQ_CST);
}

typedef CUresult (*add_callback_fn)(CUstream, CUstreamCallback, void *, unsigned);

int main() {
  cudaStream_t s;
  void *p;
  size_t pitch;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaMallocPitch(&p, &pitch, 64, 8 * 4));
  cudaPitchedPtr pp = make_cudaPitchedPtr(p, pitch, 64, 8);
  CHECK(cudaMemset3D(pp, 1, make_cudaExtent(64, 8, 4)));
  CHECK(cudaMemset3DAsync(pp, 2, make_cudaExtent(48, 8, 4), s));
  CHECK(cudaStreamAddCallback(s, runtime_callback, NULL, 0));
  add_callback_fn add = (add_callback_fn)driver_proc("cuStreamAddCallback", 5000, 0);
  CHECK(!add);
  CHECK(add((CUstream)s, driver_callback, NULL, 0));
  CHECK(cudaStreamSynchronize(s));
  // the simulator may still be returning from the last callback: up to 5 s
  for (int i = 0; i < 5000 && __atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) != 2; i++) usleep(1000);
  CHECK(__atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) != 2);
  printf("setcb: ok\n");
  return 0;
}
