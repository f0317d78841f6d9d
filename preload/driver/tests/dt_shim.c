/* dt_shim: a second preload that also wraps cuLaunchKernel (as another tool
 * would), counts the launches it sees and forwards to the next definition found
 * with dlsym(RTLD_NEXT, ...). Prints "dt_shim: N launches" on stderr at exit. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

static unsigned long launches;

__attribute__((visibility("default"))) CUresult
cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shmem, CUstream stream, void **params, void **extra) {
  static __typeof__(&cuLaunchKernel) next;
  if (!next)
    next = (__typeof__(&cuLaunchKernel))dlsym(RTLD_NEXT, "cuLaunchKernel");
  if (!next)
    return CUDA_ERROR_NOT_FOUND;
  __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
  return next(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "dt_shim: %lu launches\n", launches);
}
