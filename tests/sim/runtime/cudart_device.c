/* Initialisation, device selection and device queries of the simulated libcudart. */
#include "cudart_internal.h"

#include <stdatomic.h>
#include <string.h>

static __thread int thread_device = 0;
static __thread unsigned thread_context_generation = 0;
/* Bumped by cudaDeviceReset: every thread then makes the context current again. */
static atomic_uint context_generation = 1;

int rt_current_device(void)
{
  return thread_device;
}

static cudaError_t load_error(CUresult r)
{
  if (r == CUDA_ERROR_SHARED_OBJECT_INIT_FAILED || r == CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND)
    return cudaErrorInsufficientDriver;
  return rt_from_driver(r);
}

static cudaError_t make_context_current(int device)
{
  CUdevice dev;
  CUresult r = simdrv.DeviceGet(&dev, device);
  if (r != CUDA_SUCCESS)
    return rt_fail(cudaErrorInvalidDevice);
  CUcontext ctx;
  r = simdrv.DevicePrimaryCtxRetain(&ctx, dev);
  if (r == CUDA_SUCCESS)
    r = simdrv.CtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS)
    return rt_check(r);
  thread_context_generation = atomic_load(&context_generation);
  return cudaSuccess;
}

cudaError_t rt_enter(void)
{
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return rt_fail(load_error(r));
  if (thread_context_generation == atomic_load(&context_generation))
    return cudaSuccess;
  if (!simdrv.DeviceGet || !simdrv.DevicePrimaryCtxRetain || !simdrv.CtxSetCurrent)
    return rt_fail(cudaErrorInsufficientDriver);
  return make_context_current(thread_device);
}

/** Reports the number of devices (0 and an error when there is no driver). */
SIM_EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
  if (!count)
    return rt_fail(cudaErrorInvalidValue);
  *count = 0;
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return rt_fail(load_error(r));
  RT_NEED(simdrv.DeviceGetCount);
  return rt_check(simdrv.DeviceGetCount(count));
}

/** Selects the device used by the calling thread. */
SIM_EXPORT cudaError_t cudaSetDevice(int device)
{
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return rt_fail(load_error(r));
  int count = 0;
  if (simdrv.DeviceGetCount(&count) != CUDA_SUCCESS || device < 0 || device >= count)
    return rt_fail(cudaErrorInvalidDevice);
  thread_device = device;
  return make_context_current(device);
}

/** Reports the device used by the calling thread. */
SIM_EXPORT cudaError_t cudaGetDevice(int *device)
{
  if (!device)
    return rt_fail(cudaErrorInvalidValue);
  *device = thread_device;
  return cudaSuccess;
}

/** Reports the driver's CUDA version, 0 when no driver is installed. */
SIM_EXPORT cudaError_t cudaDriverGetVersion(int *version)
{
  if (!version)
    return rt_fail(cudaErrorInvalidValue);
  *version = 0;
  if (simdrv_load() != CUDA_SUCCESS && !simdrv.DriverGetVersion)
    return cudaSuccess;
  if (simdrv.DriverGetVersion)
    return rt_check(simdrv.DriverGetVersion(version));
  return cudaSuccess;
}

/** Reports this runtime's version, 13000. */
SIM_EXPORT cudaError_t cudaRuntimeGetVersion(int *version)
{
  if (!version)
    return rt_fail(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

/** Reads one device attribute (the runtime and driver enumerations agree). */
SIM_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
  if (!value)
    return rt_fail(cudaErrorInvalidValue);
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return rt_fail(load_error(r));
  CUdevice dev;
  if (simdrv.DeviceGet(&dev, device) != CUDA_SUCCESS)
    return rt_fail(cudaErrorInvalidDevice);
  RT_NEED(simdrv.DeviceGetAttribute);
  return rt_check(simdrv.DeviceGetAttribute(value, (CUdevice_attribute)attr, dev));
}

static int attribute(CUdevice dev, CUdevice_attribute attr)
{
  int v = 0;
  if (simdrv.DeviceGetAttribute && simdrv.DeviceGetAttribute(&v, attr, dev) != CUDA_SUCCESS)
    v = 0;
  return v;
}

/** Fills a cudaDeviceProp from the driver's device attributes. */
SIM_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
  if (!prop)
    return rt_fail(cudaErrorInvalidValue);
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return rt_fail(load_error(r));
  CUdevice dev;
  if (simdrv.DeviceGet(&dev, device) != CUDA_SUCCESS)
    return rt_fail(cudaErrorInvalidDevice);
  memset(prop, 0, sizeof *prop);
  if (simdrv.DeviceGetName)
    simdrv.DeviceGetName(prop->name, sizeof prop->name, dev);
  if (simdrv.DeviceTotalMem)
    simdrv.DeviceTotalMem(&prop->totalGlobalMem, dev);
  prop->sharedMemPerBlock = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  prop->regsPerBlock = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  prop->warpSize = attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  prop->memPitch = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_PITCH);
  prop->maxThreadsPerBlock = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  prop->maxThreadsDim[0] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  prop->maxThreadsDim[1] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  prop->maxThreadsDim[2] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  prop->maxGridSize[0] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  prop->maxGridSize[1] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  prop->maxGridSize[2] = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  prop->totalConstMem = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  prop->major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  prop->minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  prop->textureAlignment = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
  prop->multiProcessorCount = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  prop->canMapHostMemory = attribute(dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
  prop->concurrentKernels = attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
  prop->ECCEnabled = attribute(dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
  prop->pciBusID = attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  prop->pciDeviceID = attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  prop->pciDomainID = attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
  prop->asyncEngineCount = attribute(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
  prop->unifiedAddressing = attribute(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  prop->memoryBusWidth = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  prop->l2CacheSize = attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  prop->maxThreadsPerMultiProcessor = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  prop->streamPrioritiesSupported = attribute(dev, CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED);
  prop->sharedMemPerMultiprocessor = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  prop->regsPerMultiprocessor = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  prop->managedMemory = attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
  prop->cooperativeLaunch = attribute(dev, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
  prop->sharedMemPerBlockOptin = (size_t)attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  prop->maxBlocksPerMultiProcessor = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  prop->memoryPoolsSupported = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
  prop->clusterLaunch = attribute(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH);
  return cudaSuccess;
}

/** Waits for all work of the current device. */
SIM_EXPORT cudaError_t cudaDeviceSynchronize(void)
{
  RT_ENTER();
  RT_NEED(simdrv.CtxSynchronize);
  return rt_check(simdrv.CtxSynchronize(NULL));
}

/** cudaProfilerStart: forwards to cuProfilerStart, as the real runtime does. */
SIM_EXPORT cudaError_t cudaProfilerStart(void)
{
  RT_ENTER();
  RT_NEED(simdrv.ProfilerStart);
  return rt_check(simdrv.ProfilerStart());
}

/** cudaProfilerStop: forwards to cuProfilerStop. */
SIM_EXPORT cudaError_t cudaProfilerStop(void)
{
  RT_ENTER();
  RT_NEED(simdrv.ProfilerStop);
  return rt_check(simdrv.ProfilerStop());
}

/** Destroys the current device's primary context; the next call recreates it. */
SIM_EXPORT cudaError_t cudaDeviceReset(void)
{
  RT_ENTER();
  RT_NEED(simdrv.DevicePrimaryCtxReset);
  if (simdrv.CtxSynchronize)
    simdrv.CtxSynchronize(NULL);
  rt_forget_modules();
  CUdevice dev;
  simdrv.DeviceGet(&dev, thread_device);
  CUresult r = simdrv.DevicePrimaryCtxReset(dev);
  atomic_fetch_add(&context_generation, 1);
  return rt_check(r);
}
