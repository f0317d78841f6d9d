/* legacy_launch: built with -D__NV_LEGACY_LAUNCH, so <<<>>> goes through
 * cudaLaunchKernel(func, grid, block, args, shmem, stream) as CUDA 12 nvcc
 * emitted it, not __cudaGetKernel + __cudaLaunchKernel. Launches legacy_kernel
 * N times on a stream, then a memset + copy back checks the stream works. */
#include "workload.h"

#define WORK_US 10
#define BUFFER_BYTES 4096

/* CUDA-12-style launched work: lasts `ns` on a real GPU. */
__global__ void legacy_kernel(long long ns) { wl_gpu_spin_ns(ns); }

int main(int argc, char **argv)
{
  wl_prog = "legacy_launch";
  wl_arg args[] = {{"N", 1, 10000000, 100}};
  wl_parse_args(argc, argv, args, 1);
  const long n = args[0].value;

  cudaStream_t stream;
  WL_CHECK(cudaStreamCreate(&stream));
  unsigned char *device, host[BUFFER_BYTES];
  WL_CHECK(cudaMalloc((void **)&device, BUFFER_BYTES));
  for (long i = 0; i < n; i++) {
    legacy_kernel<<<1, 1, 0, stream>>>(WORK_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaMemsetAsync(device, 7, BUFFER_BYTES, stream));
  WL_CHECK(cudaStreamSynchronize(stream));
  WL_CHECK(cudaMemcpy(host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost));
  int failures = host[0] != 7 || host[BUFFER_BYTES - 1] != 7;
  printf("legacy_launch: N=%ld launches through cudaLaunchKernel; copy check: %s\n", n,
         failures ? "FAILED" : "ok");
  WL_CHECK(cudaFree(device));
  WL_CHECK(cudaStreamDestroy(stream));
  return failures;
}
