/* cuInit, devices and their attributes, primary contexts. */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_DEVICE_NAME "cutrace simulated GPU"
#define SIM_TOTAL_MEM ((size_t)141 << 30)

int sim_initialized;

static struct sim_ctx primary[SIM_MAX_DEVICES];
static int primary_ready[SIM_MAX_DEVICES];


struct sim_ctx *sim_primary_ctx(int device)
{
  if (device < 0 || device >= sim_knobs.devices)
    return NULL;
  if (!primary_ready[device]) {
    if (sim_ctx_setup(&primary[device], device, 0, 1) != 0)
      return NULL;
    primary_ready[device] = 1;
  }
  return &primary[device];
}

CUresult sim_check_device(CUdevice dev)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  return dev >= 0 && dev < sim_knobs.devices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/** Initialises the driver (reads the SIMCUDA_* settings); flags must be 0. */
SIM_API CUresult cuInit(unsigned int Flags)
{
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  sim_knobs_load();
  sim_lock();
  sim_initialized = 1;
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Reports the driver version, 13000 (CUDA 13.0). */
SIM_API CUresult cuDriverGetVersion(int *driverVersion)
{
  if (!driverVersion)
    return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = 13000;
  return CUDA_SUCCESS;
}

/** Gives the device handle of ordinal `ordinal`. */
SIM_API CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= sim_knobs.devices)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

/** Number of simulated devices (SIMCUDA_DEVICES, default 1). */
SIM_API CUresult cuDeviceGetCount(int *count)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  *count = sim_knobs.devices;
  return CUDA_SUCCESS;
}

/** Copies the device name ("cutrace simulated GPU"), truncated to `len`. */
SIM_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!name || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(name, (size_t)len, "%s", SIM_DEVICE_NAME);
  return CUDA_SUCCESS;
}

/** Total device memory: 141 GiB (an H200). */
SIM_API CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  *bytes = SIM_TOTAL_MEM;
  return CUDA_SUCCESS;
}

/** A stable UUID per device: per index of CUDA_VISIBLE_DEVICES (knobs.c), else ordinal. */
SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!uuid)
    return CUDA_ERROR_INVALID_VALUE;
  static const char base[16] = "cutrace-simgpu-";
  memcpy(uuid->bytes, base, 16);
  uuid->bytes[15] = (char)sim_knobs.physical[dev];
  return CUDA_SUCCESS;
}

/** The PCI bus id string of a device, "0000:XX:00.0" (XX = 0x18 + its index, as UUIDs). */
SIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pciBusId || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 0x18 + sim_knobs.physical[dev]);
  return CUDA_SUCCESS;
}

/* The value of one attribute; 0 for attributes the simulator does not model. */
static int attribute_value(CUdevice_attribute attrib, int dev)
{
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
  case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
  case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
  case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
  case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 0x18 + dev;
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: return 0;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
  case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
  case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return dev;
  case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: return 2;
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
  case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 0;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
  case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 32505856;
  case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
  case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
  case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
  default: return 0;
  }
}

/** Reads one device attribute (H200-like values; unmodelled ones are 0). */
SIM_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
    return CUDA_ERROR_INVALID_VALUE;
  *pi = attribute_value(attrib, dev);
  return CUDA_SUCCESS;
}

/** Compute capability 9.0 (deprecated entry point). */
SIM_API CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!major || !minor)
    return CUDA_ERROR_INVALID_VALUE;
  *major = 9;
  *minor = 0;
  return CUDA_SUCCESS;
}

/** Every simulated device can access every other one. */
SIM_API CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
  CUresult r = sim_check_device(dev);
  if (r == CUDA_SUCCESS)
    r = sim_check_device(peerDev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!canAccessPeer)
    return CUDA_ERROR_INVALID_VALUE;
  *canAccessPeer = dev != peerDev;
  return CUDA_SUCCESS;
}

/** Retains (and creates on first use) the primary context of `dev`. */
SIM_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_ctx *c = sim_primary_ctx(dev);
  if (c)
    c->retain_count++;
  sim_unlock();
  if (!c)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

/** Drops one reference to the primary context (it stays usable). */
SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_ctx *c = sim_primary_ctx(dev);
  if (c && c->retain_count > 0)
    c->retain_count--;
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Waits for the primary context's work and drops its references. */
SIM_API CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_ctx *c = sim_primary_ctx(dev);
  uint64_t until = c ? sim_ctx_tail_ns(c) : 0;
  if (c)
    c->retain_count = 0;
  sim_unlock();
  sim_wait_until(until);
  return CUDA_SUCCESS;
}

/** Sets the primary context's flags. */
SIM_API CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_ctx *c = sim_primary_ctx(dev);
  if (c)
    c->flags = flags;
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Reports the primary context's flags and whether it is retained. */
SIM_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
  CUresult r = sim_check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!flags || !active)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_ctx *c = sim_primary_ctx(dev);
  *flags = c ? c->flags : 0;
  *active = c && c->retain_count > 0;
  sim_unlock();
  return CUDA_SUCCESS;
}
