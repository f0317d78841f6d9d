/*
 * A library that uses the CUDA runtime, for dt_app's "extension" case: loaded with
 * dlopen(RTLD_LOCAL) the way Python loads an extension module, so its libcudart is
 * only in its own lookup scope, not in the global one that dlsym(RTLD_NEXT) searches.
 */
#include <cuda_runtime_api.h>

/** cudaMalloc, cudaMemset of 1 KiB, cudaDeviceSynchronize, cudaFree: their results
 * packed as r1 * 1000000 + r2 * 10000 + r3 * 100 + r4 (0 when all succeed). */
__attribute__((visibility("default"))) int dt_ext_work(void) {
  void *p = 0;
  int r1 = cudaMalloc(&p, 1024);
  int r2 = cudaMemset(p, 0, 1024);
  int r3 = cudaDeviceSynchronize();
  int r4 = cudaFree(p);
  return r1 * 1000000 + r2 * 10000 + r3 * 100 + r4;
}
