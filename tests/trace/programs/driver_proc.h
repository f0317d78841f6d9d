/* A driver entry point as a runtime finds it: cuGetProcAddress_v2 of libcuda.so.1 (the
 * simulator's), for the test programs that call the driver's own functions. */
#ifndef CUTRACE_TEST_DRIVER_PROC_H
#define CUTRACE_TEST_DRIVER_PROC_H

#include <cuda.h>
#include <dlfcn.h>

/* The driver entry point `name` at ABI `version` (flags 2: the per-thread form), or NULL. */
static void *driver_proc(const char *name, int version, cuuint64_t flags) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY);
  typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                  CUdriverProcAddressQueryResult *);
  get_proc_fn get_proc = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  void *fn = NULL;
  CUdriverProcAddressQueryResult status;
  if (!get_proc || get_proc(name, &fn, version, flags, &status) != CUDA_SUCCESS) return NULL;
  return fn;
}

#endif
