/* Function and kernel handles: names, attributes, and the launch path shared
 * by every launch entry point. */
#include "module.h"

#include <stdio.h>
#include <string.h>

/* Resolves a CUfunction or a CUkernel passed as one (lock held). */
struct sim_function *sim_function_of(const void *handle)
{
  switch (sim_handle_kind(handle)) {
  case SIM_KIND_FUNCTION: return (struct sim_function *)handle;
  case SIM_KIND_KERNEL: return ((const struct sim_kernel *)handle)->function;
  default: return NULL;
  }
}

/* Name lookup shared by cuFuncGetName and cuKernelGetName. */
static CUresult handle_name(const char **name, const void *handle, enum sim_kind want)
{
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  enum sim_kind k = sim_handle_kind(handle);
  struct sim_function *f = (k == want || k == SIM_KIND_FUNCTION || k == SIM_KIND_KERNEL)
                               ? sim_function_of(handle) : NULL;
  if (f)
    *name = f->name;
  sim_unlock();
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** The (mangled) name of a function; a CUkernel is accepted too. */
SIM_API CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
  return handle_name(name, hfunc, SIM_KIND_FUNCTION);
}

/** The (mangled) name of a kernel; a CUfunction is accepted too. */
SIM_API CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
  return handle_name(name, hfunc, SIM_KIND_KERNEL);
}

/** The module of a function. */
SIM_API CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
  if (!hmod)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_function *f = sim_function_of(hfunc);
  if (f)
    *hmod = (CUmodule)f->module;
  sim_unlock();
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** Functions are always loaded in the simulator. */
SIM_API CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
  if (!state)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_function *f = sim_function_of(function);
  sim_unlock();
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return CUDA_SUCCESS;
}

/** Loads a function (nothing to do). */
SIM_API CUresult cuFuncLoad(CUfunction function)
{
  sim_lock();
  struct sim_function *f = sim_function_of(function);
  sim_unlock();
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Attribute values of a simulated function: registers, static shared memory and local
 * memory as SIMCUDA_KERNEL_ATTRS planted them (32, 0, 0 by default). */
static int function_attribute(const struct sim_function *f, CUfunction_attribute attrib, int *out)
{
  switch (attrib) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *out = 1024; return 1;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *out = f->static_smem; return 1;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *out = 0; return 1;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *out = f->local_bytes; return 1;
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *out = f->regs; return 1;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION: *out = 90; return 1;
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *out = 90; return 1;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *out = 0; return 1;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *out = f->max_dynamic_shared; return 1;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *out = -1; return 1;
  default: return 0;
  }
}

/** One attribute of a function (or of a CUkernel passed as one). */
SIM_API CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
  if (!pi)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_function *f = sim_function_of(hfunc);
  CUresult r = !f ? CUDA_ERROR_INVALID_HANDLE
                  : function_attribute(f, attrib, pi) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  sim_unlock();
  return r;
}

/** Sets a function attribute (the dynamic shared memory limit is honoured). */
SIM_API CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
  sim_lock();
  struct sim_function *f = sim_function_of(hfunc);
  CUresult r = f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (f && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > 232448)
      r = CUDA_ERROR_INVALID_VALUE;
    else
      f->max_dynamic_shared = value;
  } else if (f && attrib != CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
             && attrib != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH
             && attrib != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT
             && attrib != CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH
             && attrib != CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
             && attrib != CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) {
    r = CUDA_ERROR_INVALID_VALUE;
  }
  sim_unlock();
  return r;
}

/** Accepts a cache preference (not modelled). */
SIM_API CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
  sim_lock();
  struct sim_function *f = sim_function_of(hfunc);
  sim_unlock();
  return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** One attribute of a kernel. */
SIM_API CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
  return cuFuncGetAttribute(pi, attrib, (CUfunction)kernel);
}

/** Sets a kernel attribute. */
SIM_API CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{
  return cuFuncSetAttribute((CUfunction)kernel, attrib, val);
}

/** Accepts a kernel cache preference (not modelled). */
SIM_API CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
  return cuFuncSetCacheConfig((CUfunction)kernel, config);
}

/* Shared by the launch entry points: checks the configuration, charges the
 * modelled host cost and enqueues the kernel. */
CUresult sim_launch(const void *fhandle, const unsigned grid[3], const unsigned block[3], unsigned shared_mem,
                    CUstream hStream, int per_thread, void **params, void **extra, int cooperative)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
    return CUDA_ERROR_INVALID_VALUE;
  if (grid[0] > 2147483647u || grid[1] > 65535 || grid[2] > 65535)
    return CUDA_ERROR_INVALID_VALUE;
  if (block[0] > 1024 || block[1] > 1024 || block[2] > 64
      || (unsigned long long)block[0] * block[1] * block[2] > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (params && extra)
    return CUDA_ERROR_INVALID_VALUE;
  sim_spin_us(sim_knobs.launch_us);
  unsigned long long hinted = sim_next_launch_ns;
  sim_next_launch_ns = 0;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  struct sim_function *f = NULL;
  if (r == CUDA_SUCCESS && !(f = sim_function_of(fhandle)))
    r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS && shared_mem > (unsigned)f->max_dynamic_shared)
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && cooperative) {
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    unsigned long long per_sm = 2048 / threads;
    if (per_sm > 32)
      per_sm = 32;
    if ((unsigned long long)grid[0] * grid[1] * grid[2] > per_sm * 132)
      r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  }
  if (r == CUDA_SUCCESS) {
    struct sim_op op = {.kind = SIM_OP_KERNEL, .full_name = f->name, .func = fhandle,
                        .shared_mem = shared_mem};
    memcpy(op.grid, grid, sizeof op.grid);
    memcpy(op.block, block, sizeof op.block);
    snprintf(op.name, sizeof op.name, "%s", f->name);
    op.duration_ns = hinted ? hinted : f->duration_ns;
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  return r;
}

