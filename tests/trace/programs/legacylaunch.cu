// The launch API of CUDA 1.x-3.x through cuGetProcAddress (version 2000), on functions
// of a module loaded with cuModuleLoadData (test_legacylaunch.py):
//   old_one:   block 64 x 2 x 1, 8 parameter bytes, cuLaunch (1 x 1 grid, legacy stream);
//   old_grid:  block 32 x 1 x 1, 128 bytes of dynamic shared memory, cuLaunchGrid 4 x 3;
//   old_async: block 128 x 1 x 1, cuLaunchGridAsync 5 x 1 on a created stream;
//   old_bare:  no block shape set: cuLaunchGrid 1 x 1 fails (CUDA_ERROR_INVALID_VALUE);
//   old_one again: block 256 x 1 x 1 and 64 bytes of shared memory, then a refused shape
//              (0 x 1 x 1, CUDA_ERROR_INVALID_VALUE) that changes nothing, cuLaunchGrid 2 x 1.
// Prints "legacylaunch: ok" when every call answered as listed.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "driver_proc.h"

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int e_ = (int)(call);                                                               \
    if (e_) {                                                                           \
      fprintf(stderr, "legacylaunch: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

#define PROC(type, name) ((type)driver_proc(name, 2000, 0))

int main() {
  CHECK(cudaFree(0));  // the runtime's primary context, current
  CUstream s;
  CHECK(cudaStreamCreateWithFlags((cudaStream_t *)&s, cudaStreamNonBlocking));
  typedef CUresult (*load_fn)(CUmodule *, const void *);
  typedef CUresult (*get_fn)(CUfunction *, CUmodule, const char *);
  typedef CUresult (*shape_fn)(CUfunction, int, int, int);
  typedef CUresult (*size_fn)(CUfunction, unsigned);
  typedef CUresult (*seti_fn)(CUfunction, int, unsigned);
  typedef CUresult (*launch_fn)(CUfunction);
  typedef CUresult (*grid_fn)(CUfunction, int, int);
  typedef CUresult (*grid_async_fn)(CUfunction, int, int, CUstream);
  typedef CUresult (*sync_fn)(void);
  load_fn load = (load_fn)driver_proc("cuModuleLoadData", 2000, 0);
  get_fn get = (get_fn)driver_proc("cuModuleGetFunction", 2000, 0);
  shape_fn shape = PROC(shape_fn, "cuFuncSetBlockShape");
  size_fn shared = PROC(size_fn, "cuFuncSetSharedSize");
  size_fn param_size = PROC(size_fn, "cuParamSetSize");
  seti_fn seti = PROC(seti_fn, "cuParamSeti");
  launch_fn launch = PROC(launch_fn, "cuLaunch");
  grid_fn grid = PROC(grid_fn, "cuLaunchGrid");
  grid_async_fn grid_async = PROC(grid_async_fn, "cuLaunchGridAsync");
  sync_fn sync = PROC(sync_fn, "cuCtxSynchronize");
  CHECK(!load || !get || !shape || !shared || !param_size || !seti || !launch || !grid ||
        !grid_async || !sync);
  CUmodule mod;
  CUfunction one, grd, async, bare;
  CHECK(load(&mod, "legacylaunch image"));
  CHECK(get(&one, mod, "old_one"));
  CHECK(get(&grd, mod, "old_grid"));
  CHECK(get(&async, mod, "old_async"));
  CHECK(get(&bare, mod, "old_bare"));
  CHECK(shape(one, 64, 2, 1));
  CHECK(param_size(one, 8));
  CHECK(seti(one, 0, 7));
  CHECK(launch(one));
  CHECK(shape(grd, 32, 1, 1));
  CHECK(shared(grd, 128));
  CHECK(grid(grd, 4, 3));
  CHECK(shape(async, 128, 1, 1));
  CHECK(grid_async(async, 5, 1, s));
  CHECK(grid(bare, 1, 1) != CUDA_ERROR_INVALID_VALUE);
  CHECK(shape(one, 256, 1, 1));
  CHECK(shared(one, 64));
  CHECK(shape(one, 0, 1, 1) != CUDA_ERROR_INVALID_VALUE);
  CHECK(grid(one, 2, 1));
  CHECK(sync());
  printf("legacylaunch: ok\n");
  return 0;
}
