// The deprecated multi-device cooperative launch (test_coopmulti.py), simulated GPU with
// two devices (SIMCUDA_DEVICES=2), shared cudart. A non-blocking stream on each device
// (S0, S1) and the function cm_part of a module loaded on each (cuModuleLoadData).
//   cm_busy (planted 2 ms) on S1, then, device 0 current,
//   cuLaunchCooperativeKernelMultiDevice (cuGetProcAddress 9000) of cm_part: grid 4,
//   block 128, 256 bytes of shared memory, on S0 and S1: by default each kernel waits for
//   the earlier work of both streams (cm_busy);
//   the same with CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC;
//   the same with an empty list: CUDA_ERROR_INVALID_VALUE (1).
// Prints "coopmulti: ok"; exit status 1 when any call answered something unexpected.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "driver_proc.h"

#define CHECK(call)                                                                  \
  do {                                                                               \
    int e_ = (int)(call);                                                            \
    if (e_) {                                                                        \
      fprintf(stderr, "coopmulti: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void cm_busy(float *x) { x[threadIdx.x] += 1.0f; }

typedef CUresult (*multi_fn)(CUDA_LAUNCH_PARAMS *, unsigned, unsigned);

int main() {
  cudaStream_t s[2];
  CUfunction f[2];
  float *x = NULL;
  for (int d = 0; d < 2; d++) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
    CUmodule m;
    CHECK(cuModuleLoadData(&m, "coopmulti image"));
    CHECK(cuModuleGetFunction(&f[d], m, "cm_part"));
    if (d == 1) CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  }
  cm_busy<<<1, 32, 0, s[1]>>>(x);  // device 1 current
  CHECK(cudaGetLastError());
  CHECK(cudaSetDevice(0));
  multi_fn multi = (multi_fn)driver_proc("cuLaunchCooperativeKernelMultiDevice", 9000, 0);
  CHECK(!multi);
  CUDA_LAUNCH_PARAMS p[2];
  for (int d = 0; d < 2; d++) {
    p[d].function = f[d];
    p[d].gridDimX = 4, p[d].gridDimY = 1, p[d].gridDimZ = 1;
    p[d].blockDimX = 128, p[d].blockDimY = 1, p[d].blockDimZ = 1;
    p[d].sharedMemBytes = 256;
    p[d].hStream = (CUstream)s[d];
    p[d].kernelParams = NULL;
  }
  CHECK(multi(p, 2, 0));
  CHECK(multi(p, 2, CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC));
  CHECK(multi(p, 0, 0) != CUDA_ERROR_INVALID_VALUE);
  for (int d = 0; d < 2; d++) {
    CHECK(cudaSetDevice(d));
    CHECK(cudaDeviceSynchronize());
  }
  printf("coopmulti: ok\n");
  return 0;
}
