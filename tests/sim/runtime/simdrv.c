/* Driver loader shared (as a private copy) by the simulated runtime libraries. */
#include "simdrv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

struct simdrv simdrv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CUresult load_result = CUDA_ERROR_NOT_INITIALIZED;

static void load_driver(void)
{
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    load_result = CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    return;
  }
  PFN_cuGetProcAddress_v12000 get_proc =
      (PFN_cuGetProcAddress_v12000)dlsym(lib, "cuGetProcAddress_v2");
  if (!get_proc) {
    load_result = CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
    return;
  }
  CUdriverProcAddressQueryResult status;
#define SIMDRV_RESOLVE(member, name, type, flags)                               \
  {                                                                             \
    void *pfn = NULL;                                                           \
    if (get_proc(name, &pfn, SIMDRV_CUDA_VERSION, flags, &status) != CUDA_SUCCESS \
        || status != CU_GET_PROC_ADDRESS_SUCCESS)                               \
      pfn = NULL;                                                               \
    simdrv.member = (type)pfn;                                                  \
  }
  SIMDRV_FUNCTIONS(SIMDRV_RESOLVE)
#undef SIMDRV_RESOLVE
  if (!simdrv.Init) {
    load_result = CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND;
    return;
  }
  load_result = simdrv.Init(0);
}

CUresult simdrv_load(void)
{
  pthread_once(&load_once, load_driver);
  return load_result;
}

CUresult simdrv_ensure_context(int device)
{
  CUcontext current = NULL;
  if (simdrv.CtxGetCurrent && simdrv.CtxGetCurrent(&current) == CUDA_SUCCESS && current)
    return CUDA_SUCCESS;
  if (!simdrv.DevicePrimaryCtxRetain || !simdrv.CtxSetCurrent || !simdrv.DeviceGet)
    return CUDA_ERROR_NOT_SUPPORTED;
  CUdevice dev;
  CUresult r = simdrv.DeviceGet(&dev, device);
  if (r != CUDA_SUCCESS)
    return r;
  CUcontext ctx;
  r = simdrv.DevicePrimaryCtxRetain(&ctx, dev);
  if (r != CUDA_SUCCESS)
    return r;
  return simdrv.CtxSetCurrent(ctx);
}
