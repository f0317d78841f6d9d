/* cuInit, devices and their attributes, primary and created contexts, the
 * per-thread context stack. */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_DEVICE_NAME "cutrace simulated GPU"
#define SIM_TOTAL_MEM ((size_t)141 << 30)
#define SIM_CTX_STACK 16

int sim_initialized;

static struct sim_ctx primary[SIM_MAX_DEVICES];
static int primary_ready[SIM_MAX_DEVICES];
static unsigned long long next_ctx_id = 1;

static __thread struct sim_ctx *ctx_stack[SIM_CTX_STACK];
static __thread int ctx_depth;

int sim_device_count(void)
{
  return sim_knobs.devices;
}

/* Sets up a context's fields and legacy stream (lock held). Returns 0 or -1. */
static int ctx_setup(struct sim_ctx *c, int device, unsigned int flags, int is_primary)
{
  memset(c, 0, sizeof *c);
  c->device = device;
  c->flags = flags;
  c->primary = is_primary;
  c->id = next_ctx_id++;
  c->legacy = sim_stream_new_legacy(c);
  if (!c->legacy || sim_handle_add(c, SIM_KIND_CONTEXT) != 0)
    return -1;
  return 0;
}

struct sim_ctx *sim_primary_ctx(int device)
{
  if (device < 0 || device >= sim_knobs.devices)
    return NULL;
  if (!primary_ready[device]) {
    if (ctx_setup(&primary[device], device, 0, 1) != 0)
      return NULL;
    primary_ready[device] = 1;
  }
  return &primary[device];
}

struct sim_ctx *sim_current_ctx(void)
{
  return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

CUresult sim_require_ctx(struct sim_ctx **out)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *c = sim_current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  *out = c;
  return CUDA_SUCCESS;
}

static CUresult check_device(CUdevice dev)
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  *bytes = SIM_TOTAL_MEM;
  return CUDA_SUCCESS;
}

/** A stable UUID per device ordinal. */
SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
  CUresult r = check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!uuid)
    return CUDA_ERROR_INVALID_VALUE;
  static const char base[16] = "cutrace-simgpu-";
  memcpy(uuid->bytes, base, 16);
  uuid->bytes[15] = (char)dev;
  return CUDA_SUCCESS;
}

/** The PCI bus id string of a device, "0000:XX:00.0". */
SIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
  CUresult r = check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pciBusId || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", 0x18 + dev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
  if (r == CUDA_SUCCESS)
    r = check_device(peerDev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
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
  CUresult r = check_device(dev);
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

/* Resolves an explicit context argument (NULL = current). */
static CUresult ctx_arg(CUcontext ctx, struct sim_ctx **out)
{
  if (!ctx)
    return sim_require_ctx(out);
  sim_lock();
  enum sim_kind k = sim_handle_kind(ctx);
  sim_unlock();
  if (k != SIM_KIND_CONTEXT)
    return CUDA_ERROR_INVALID_CONTEXT;
  *out = (struct sim_ctx *)ctx;
  return CUDA_SUCCESS;
}

/** Creates a new context on `dev` and pushes it on this thread's stack. */
SIM_API CUresult cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                             CUdevice dev)
{
  (void)ctxCreateParams;
  CUresult r = check_device(dev);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  if (ctx_depth >= SIM_CTX_STACK)
    return CUDA_ERROR_OUT_OF_MEMORY;
  struct sim_ctx *c = malloc(sizeof *c);
  if (!c)
    return CUDA_ERROR_OUT_OF_MEMORY;
  sim_lock();
  int failed = ctx_setup(c, dev, flags, 0);
  sim_unlock();
  if (failed) {
    free(c);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  ctx_stack[ctx_depth++] = c;
  *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

/** Destroys a created context (its handle becomes invalid; memory is kept). */
SIM_API CUresult cuCtxDestroy(CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!ctx || c->primary)
    return CUDA_ERROR_INVALID_CONTEXT;
  sim_lock();
  uint64_t until = sim_ctx_tail_ns(c);
  sim_handle_remove(c);
  sim_unlock();
  sim_wait_until(until);
  for (int i = 0; i < ctx_depth; i++)
    if (ctx_stack[i] == c) {
      memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof ctx_stack[0]);
      ctx_depth--;
      i--;
    }
  return CUDA_SUCCESS;
}

/** Replaces the top of this thread's context stack (NULL pops it). */
SIM_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx) {
    if (ctx_depth > 0)
      ctx_depth--;
    return CUDA_SUCCESS;
  }
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (ctx_depth == 0)
    ctx_depth = 1;
  ctx_stack[ctx_depth - 1] = c;
  return CUDA_SUCCESS;
}

/** Gives this thread's current context (NULL when none). */
SIM_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pctx)
    return CUDA_ERROR_INVALID_VALUE;
  *pctx = (CUcontext)sim_current_ctx();
  return CUDA_SUCCESS;
}

/** Pushes a context on this thread's stack. */
SIM_API CUresult cuCtxPushCurrent(CUcontext ctx)
{
  struct sim_ctx *c;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!ctx)
    return CUDA_ERROR_INVALID_CONTEXT;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (ctx_depth >= SIM_CTX_STACK)
    return CUDA_ERROR_OUT_OF_MEMORY;
  ctx_stack[ctx_depth++] = c;
  return CUDA_SUCCESS;
}

/** Pops this thread's current context. */
SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (ctx_depth == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  struct sim_ctx *c = ctx_stack[--ctx_depth];
  if (pctx)
    *pctx = (CUcontext)c;
  return CUDA_SUCCESS;
}

/** The device of the current context. */
SIM_API CUresult cuCtxGetDevice(CUdevice *device)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device;
  return CUDA_SUCCESS;
}

/** The device of `ctx` (NULL = current). */
SIM_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  *device = c->device;
  return CUDA_SUCCESS;
}

/** The flags of the current context. */
SIM_API CUresult cuCtxGetFlags(unsigned int *flags)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!flags)
    return CUDA_ERROR_INVALID_VALUE;
  *flags = c->flags;
  return CUDA_SUCCESS;
}

/** The unique id of a context. */
SIM_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!ctxId)
    return CUDA_ERROR_INVALID_VALUE;
  *ctxId = c->id;
  return CUDA_SUCCESS;
}

/** The API version of a context (13000). */
SIM_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return CUDA_SUCCESS;
}

/** Stream priorities range from 0 (least) to -5 (greatest), as on an H100/H200. */
SIM_API CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (leastPriority)
    *leastPriority = 0;
  if (greatestPriority)
    *greatestPriority = -5;
  return CUDA_SUCCESS;
}

/* Waits for every operation of `c`; refused while a capture forbids it. */
static CUresult ctx_synchronize(struct sim_ctx *c)
{
  sim_lock();
  if (sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  uint64_t until = sim_ctx_tail_ns(c);
  sim_unlock();
  sim_wait_until(until);
  return CUDA_SUCCESS;
}

/** Waits until every operation in the current context has finished. */
SIM_API CUresult cuCtxSynchronize(void)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

/** Waits until every operation in `ctx` (NULL = current) has finished. */
SIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
  struct sim_ctx *c;
  CUresult r = ctx_arg(ctx, &c);
  return r != CUDA_SUCCESS ? r : ctx_synchronize(c);
}

/** Context limits: fixed, H200-like values; setting is accepted. */
SIM_API CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!pvalue)
    return CUDA_ERROR_INVALID_VALUE;
  switch (limit) {
  case CU_LIMIT_STACK_SIZE: *pvalue = 1024; break;
  case CU_LIMIT_PRINTF_FIFO_SIZE: *pvalue = 1 << 20; break;
  case CU_LIMIT_MALLOC_HEAP_SIZE: *pvalue = 8 << 20; break;
  case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: *pvalue = 2048; break;
  case CU_LIMIT_MAX_L2_FETCH_GRANULARITY: *pvalue = 64; break;
  case CU_LIMIT_PERSISTING_L2_CACHE_SIZE: *pvalue = 0; break;
  default: return CUDA_ERROR_UNSUPPORTED_LIMIT;
  }
  return CUDA_SUCCESS;
}

/** Accepts a context limit (the simulator does not use it). */
SIM_API CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
  size_t ignored;
  (void)value;
  return cuCtxGetLimit(&ignored, limit);
}
