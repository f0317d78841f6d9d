/* Module registration and kernel launches of the simulated libcudart.
 * Registration maps each host stub to its mangled device name; the fat binary
 * is loaded lazily through the driver (cuModuleLoadData) and the kernel is
 * found by that name (cuModuleGetFunction), then launched with cuLaunchKernel. */
#include "cudart_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The wrapper nvcc passes to __cudaRegisterFatBinary (crt/host_runtime.h's
 * __fatDeviceText): magic, version, the fat binary image, unused. */
struct rt_fatbin_wrapper {
  int magic;
  int version;
  const void *image;
  void *unused;
};

struct rt_module {
  const void *image;
  CUmodule module; /* NULL until loaded */
};

/* A registered __global__ function; a pointer to one is the cudaKernel_t. */
struct rt_kernel {
  struct rt_module *module;
  const void *host_stub;
  const char *device_name;
  CUfunction function; /* NULL until loaded */
};

struct rt_variable {
  struct rt_module *module;
  const void *host_shadow;
  const char *device_name;
  size_t size;
};

#define RT_MAX_KERNELS 4096
#define RT_MAX_VARIABLES 1024

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_kernel kernels[RT_MAX_KERNELS];
static size_t kernel_count;
static struct rt_variable variables[RT_MAX_VARIABLES];
static size_t variable_count;
static struct rt_module *modules[RT_MAX_KERNELS];
static size_t module_count;

struct rt_launch_config {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
};

#define RT_CONFIG_DEPTH 16
static __thread struct rt_launch_config config_stack[RT_CONFIG_DEPTH];
static __thread int config_depth;

/** Registers one module's fat binary; returns the handle nvcc passes back. */
SIM_EXPORT void **__cudaRegisterFatBinary(void *fat_cubin)
{
  struct rt_module *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  const struct rt_fatbin_wrapper *w = fat_cubin;
  m->image = w ? w->image : NULL;
  pthread_mutex_lock(&registry_lock);
  if (module_count < RT_MAX_KERNELS)
    modules[module_count++] = m;
  pthread_mutex_unlock(&registry_lock);
  return (void **)m;
}

/** Marks the end of a module's registrations (loading stays lazy). */
SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **handle)
{
  (void)handle;
}

/** Forgets a module at exit (the driver releases its copy with the context). */
SIM_EXPORT void __cudaUnregisterFatBinary(void **handle)
{
  (void)handle;
}

/** Records the host stub -> device name mapping of a __global__ function. */
SIM_EXPORT void __cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                       const char *device_name, int thread_limit, uint3 *tid,
                                       uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
  (void)device_name, (void)thread_limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
  pthread_mutex_lock(&registry_lock);
  if (kernel_count < RT_MAX_KERNELS) {
    struct rt_kernel *k = &kernels[kernel_count++];
    k->module = (struct rt_module *)handle;
    k->host_stub = host_fun;
    k->device_name = device_fun;
  }
  pthread_mutex_unlock(&registry_lock);
}

/** Records a __device__/__constant__ variable's host shadow and device name. */
SIM_EXPORT void __cudaRegisterVar(void **handle, char *host_var, char *device_address,
                                  const char *device_name, int ext, size_t size, int constant, int global)
{
  (void)device_name, (void)ext, (void)constant, (void)global;
  pthread_mutex_lock(&registry_lock);
  if (variable_count < RT_MAX_VARIABLES) {
    struct rt_variable *v = &variables[variable_count++];
    v->module = (struct rt_module *)handle;
    v->host_shadow = host_var;
    v->device_name = device_address;
    v->size = size;
  }
  pthread_mutex_unlock(&registry_lock);
}

/* Loads the module into the current context (registry_lock held). */
static cudaError_t load_module(struct rt_module *m)
{
  if (m->module)
    return cudaSuccess;
  if (!m->image)
    return cudaErrorInvalidKernelImage;
  CUresult r = simdrv.ModuleLoadData(&m->module, m->image);
  if (r != CUDA_SUCCESS) {
    m->module = NULL;
    return r == CUDA_ERROR_NO_BINARY_FOR_GPU ? cudaErrorNoKernelImageForDevice : rt_from_driver(r);
  }
  return cudaSuccess;
}

/** Loads a module now; returns 1 on success. */
SIM_EXPORT char __cudaInitModule(void **handle)
{
  if (rt_enter() != cudaSuccess)
    return 0;
  pthread_mutex_lock(&registry_lock);
  cudaError_t e = load_module((struct rt_module *)handle);
  pthread_mutex_unlock(&registry_lock);
  return e == cudaSuccess;
}

void rt_forget_modules(void)
{
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < module_count; i++)
    modules[i]->module = NULL;
  for (size_t i = 0; i < kernel_count; i++)
    kernels[i].function = NULL;
  pthread_mutex_unlock(&registry_lock);
}

/* Finds the kernel for a host stub or a cudaKernel_t. */
static struct rt_kernel *find_kernel(const void *func)
{
  const struct rt_kernel *k = func;
  if (k >= kernels && k < kernels + RT_MAX_KERNELS)
    return (struct rt_kernel *)k;
  struct rt_kernel *found = NULL;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < kernel_count && !found; i++)
    if (kernels[i].host_stub == func)
      found = &kernels[i];
  pthread_mutex_unlock(&registry_lock);
  return found;
}

/* Resolves the driver function of a kernel, loading its module first (cudart_internal.h). */
cudaError_t rt_kernel_function(const void *func, CUfunction *out)
{
  RT_ENTER();
  struct rt_kernel *k = find_kernel(func);
  if (!k)
    return rt_fail(cudaErrorInvalidDeviceFunction);
  cudaError_t e = cudaSuccess;
  pthread_mutex_lock(&registry_lock);
  if (!k->function) {
    e = load_module(k->module);
    if (e == cudaSuccess) {
      CUresult r = simdrv.ModuleGetFunction(&k->function, k->module->module, k->device_name);
      if (r != CUDA_SUCCESS) {
        k->function = NULL;
        e = r == CUDA_ERROR_NOT_FOUND ? cudaErrorInvalidDeviceFunction : rt_from_driver(r);
      }
    }
  }
  *out = k->function;
  pthread_mutex_unlock(&registry_lock);
  return rt_fail(e);
}

cudaError_t rt_symbol_address(const void *symbol, CUdeviceptr *address, size_t *size)
{
  struct rt_variable *v = NULL;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < variable_count && !v; i++)
    if (variables[i].host_shadow == symbol)
      v = &variables[i];
  cudaError_t e = v ? load_module(v->module) : cudaErrorInvalidSymbol;
  CUmodule mod = v && e == cudaSuccess ? v->module->module : NULL;
  pthread_mutex_unlock(&registry_lock);
  if (e != cudaSuccess)
    return rt_fail(e);
  if (!simdrv.ModuleGetGlobal)
    return rt_fail(cudaErrorNotSupported);
  CUresult r = simdrv.ModuleGetGlobal(address, size, mod, v->device_name);
  if (r != CUDA_SUCCESS)
    return rt_fail(cudaErrorInvalidSymbol);
  return cudaSuccess;
}

/** Pushes the <<<grid, block, shmem, stream>>> configuration of a launch. */
SIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_mem, void *stream)
{
  if (config_depth >= RT_CONFIG_DEPTH)
    return 1;
  struct rt_launch_config *c = &config_stack[config_depth++];
  c->grid = grid;
  c->block = block;
  c->shared_mem = shared_mem;
  c->stream = stream;
  return 0;
}

/** Pops the configuration pushed by __cudaPushCallConfiguration. */
SIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared_mem, void *stream)
{
  if (config_depth <= 0)
    return rt_fail(cudaErrorMissingConfiguration);
  struct rt_launch_config *c = &config_stack[--config_depth];
  *grid = c->grid;
  *block = c->block;
  *shared_mem = c->shared_mem;
  *(cudaStream_t *)stream = c->stream;
  return cudaSuccess;
}

/** Returns the cudaKernel_t of a host stub. */
SIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
  if (!kernel)
    return rt_fail(cudaErrorInvalidValue);
  struct rt_kernel *k = find_kernel(func);
  if (!k)
    return rt_fail(cudaErrorInvalidDeviceFunction);
  *kernel = (cudaKernel_t)k;
  return cudaSuccess;
}

static cudaError_t check_config(dim3 grid, dim3 block)
{
  if (!grid.x || !grid.y || !grid.z || !block.x || !block.y || !block.z
      || (unsigned long long)block.x * block.y * block.z > 1024 || block.z > 64)
    return rt_fail(cudaErrorInvalidConfiguration);
  return cudaSuccess;
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args, size_t shared_mem,
                          cudaStream_t stream, int pt, int cooperative)
{
  CUfunction f;
  cudaError_t e = rt_kernel_function(func, &f);
  if (e != cudaSuccess)
    return e;
  if (check_config(grid, block))
    return cudaErrorInvalidConfiguration;
  CUresult r;
  if (cooperative) {
    RT_NEED(RT_PICK(pt, LaunchCooperativeKernel));
    r = RT_PICK(pt, LaunchCooperativeKernel)(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                             (unsigned)shared_mem, stream, args);
  } else {
    r = RT_PICK(pt, LaunchKernel)(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                  (unsigned)shared_mem, stream, args, NULL);
  }
  if (r == CUDA_ERROR_INVALID_VALUE)
    return rt_fail(cudaErrorInvalidConfiguration);
  return rt_check(r);
}

/** The launch entry point of nvcc-13 <<<>>> stubs. */
SIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                          size_t shared_mem, cudaStream_t stream)
{
  return launch(kernel, grid, block, args, shared_mem, stream, 0, 0);
}

/** __cudaLaunchKernel for --default-stream per-thread programs. */
SIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                               size_t shared_mem, cudaStream_t stream)
{
  return launch(kernel, grid, block, args, shared_mem, stream, 1, 0);
}

/** Launches a kernel given its host stub (or cudaKernel_t). */
SIM_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                        size_t shared_mem, cudaStream_t stream)
{
  return launch(func, grid, block, args, shared_mem, stream, 0, 0);
}

/** cudaLaunchKernel where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                             size_t shared_mem, cudaStream_t stream)
{
  return launch(func, grid, block, args, shared_mem, stream, 1, 0);
}

/** Launches a cooperative kernel. */
SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                                   size_t shared_mem, cudaStream_t stream)
{
  return launch(func, grid, block, args, shared_mem, stream, 0, 1);
}

/** cudaLaunchCooperativeKernel where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block,
                                                        void **args, size_t shared_mem, cudaStream_t stream)
{
  return launch(func, grid, block, args, shared_mem, stream, 1, 1);
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *config, const void *func, void **args, int pt)
{
  if (!config)
    return rt_fail(cudaErrorInvalidValue);
  CUfunction f;
  cudaError_t e = rt_kernel_function(func, &f);
  if (e != cudaSuccess)
    return e;
  if (check_config(config->gridDim, config->blockDim))
    return cudaErrorInvalidConfiguration;
  RT_NEED(RT_PICK(pt, LaunchKernelEx));
  CUlaunchConfig c;
  memset(&c, 0, sizeof c);
  c.gridDimX = config->gridDim.x;
  c.gridDimY = config->gridDim.y;
  c.gridDimZ = config->gridDim.z;
  c.blockDimX = config->blockDim.x;
  c.blockDimY = config->blockDim.y;
  c.blockDimZ = config->blockDim.z;
  c.sharedMemBytes = (unsigned)config->dynamicSmemBytes;
  c.hStream = config->stream;
  /* cudaLaunchAttribute and CUlaunchAttribute share their layout and ids. */
  c.attrs = (CUlaunchAttribute *)config->attrs;
  c.numAttrs = config->numAttrs;
  return rt_check(RT_PICK(pt, LaunchKernelEx)(&c, f, args, NULL));
}

/** Launches a kernel with a cudaLaunchConfig_t (attributes passed to the driver). */
SIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
  return launch_ex(config, func, args, 0);
}

/** cudaLaunchKernelExC where stream 0 is the per-thread default stream. */
SIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                                void **args)
{
  return launch_ex(config, func, args, 1);
}

/** Returns the mangled device name of a host stub or cudaKernel_t. */
SIM_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func)
{
  if (!name)
    return rt_fail(cudaErrorInvalidValue);
  struct rt_kernel *k = find_kernel(func);
  if (!k)
    return rt_fail(cudaErrorInvalidDeviceFunction);
  *name = k->device_name;
  return cudaSuccess;
}
