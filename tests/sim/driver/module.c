/* Modules, libraries, functions and kernels. Any image is accepted (kernels do
 * not run); a function or kernel handle remembers its name, which sets its
 * modelled duration (SIMCUDA_KERNEL_US). Globals get real backing memory. */
#include "module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_GLOBAL_DEFAULT_SIZE 65536 /* when the image does not say */

static struct sim_module *module_new(const void *image)
{
  struct sim_module *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->image = image;
  if (sim_handle_add(m, SIM_KIND_MODULE) != 0) {
    free(m);
    return NULL;
  }
  return m;
}

/* The function called `name` in `m`, created on first use (lock held). */
static struct sim_function *module_function(struct sim_module *m, const char *name)
{
  for (struct sim_function *f = m->functions; f; f = f->next)
    if (strcmp(f->name, name) == 0)
      return f;
  size_t len = strlen(name);
  struct sim_function *f = calloc(1, sizeof *f + len + 1);
  if (!f)
    return NULL;
  memcpy(f->name, name, len + 1);
  f->module = m;
  f->max_dynamic_shared = 48 * 1024;
  f->loaded = 1;
  f->duration_ns = sim_kernel_duration_ns(f->name);
  sim_kernel_attrs(f->name, &f->regs, &f->static_smem, &f->local_bytes);
  /* as on hardware: static + dynamic shared memory within 48 KiB unless raised */
  f->max_dynamic_shared = f->static_smem < 48 * 1024 ? 48 * 1024 - f->static_smem : 0;
  if (sim_handle_add(f, SIM_KIND_FUNCTION) != 0) {
    free(f);
    return NULL;
  }
  f->next = m->functions;
  m->functions = f;
  return f;
}

/* The global called `name` in `m`, allocated on first use (lock held). */
static struct sim_global *module_global(struct sim_module *m, const char *name)
{
  for (struct sim_global *g = m->globals; g; g = g->next)
    if (strcmp(g->name, name) == 0)
      return g;
  size_t len = strlen(name);
  struct sim_global *g = calloc(1, sizeof *g + len + 1);
  if (!g)
    return NULL;
  memcpy(g->name, name, len + 1);
  g->size = sim_image_symbol_size(m->image, name);
  if (!g->size)
    g->size = SIM_GLOBAL_DEFAULT_SIZE;
  g->address = sim_mem_alloc_internal(g->size);
  if (!g->address) {
    free(g);
    return NULL;
  }
  g->next = m->globals;
  m->globals = g;
  return g;
}

static CUresult load_module(CUmodule *module, const void *image)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!module || !image)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_module *m = module_new(image);
  sim_unlock();
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *module = (CUmodule)m;
  return CUDA_SUCCESS;
}

/** Loads a module from any image (cubin, PTX or fat binary: not inspected). */
SIM_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
  return load_module(module, image);
}

/** cuModuleLoadData with JIT options (ignored). */
SIM_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
  return load_module(module, image);
}

/** Loads a module from a fat binary. */
SIM_API CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
  return load_module(module, fatCubin);
}

/** Loads a module from a file (which must exist and be readable). */
SIM_API CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
  if (!fname)
    return CUDA_ERROR_INVALID_VALUE;
  FILE *f = fopen(fname, "rb");
  if (!f)
    return CUDA_ERROR_FILE_NOT_FOUND;
  fclose(f);
  /* The file name stands in for the image: only its existence matters here. */
  return load_module(module, strdup(fname));
}

/** Unloads a module (its function handles become invalid). */
SIM_API CUresult cuModuleUnload(CUmodule hmod)
{
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(hmod) != SIM_KIND_MODULE)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    struct sim_module *m = (struct sim_module *)hmod;
    sim_handle_remove(m);
    for (struct sim_function *f = m->functions; f; f = f->next)
      sim_handle_remove(f); /* names stay allocated: graphs may still refer to them */
  }
  sim_unlock();
  return r;
}

/** Lazy loading is reported as enabled. */
SIM_API CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
  if (!mode)
    return CUDA_ERROR_INVALID_VALUE;
  *mode = CU_MODULE_LAZY_LOADING;
  return CUDA_SUCCESS;
}

/** The function called `name` in the module (any name is found). */
SIM_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
  if (!hfunc || !name)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(hmod) != SIM_KIND_MODULE)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    struct sim_function *f = module_function((struct sim_module *)hmod, name);
    if (f)
      *hfunc = (CUfunction)f;
    else
      r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  return r;
}

/** Address and size of a module global (backed by real device memory). */
SIM_API CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(hmod) != SIM_KIND_MODULE)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    struct sim_global *g = module_global((struct sim_module *)hmod, name);
    if (!g)
      r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
      if (dptr) *dptr = g->address;
      if (bytes) *bytes = g->size;
    }
  }
  sim_unlock();
  return r;
}

/** Loads a library (the CUDA 12 context-independent loading API) from any image. */
SIM_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!library || !code)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_library *lib = calloc(1, sizeof *lib);
  if (!lib)
    return CUDA_ERROR_OUT_OF_MEMORY;
  sim_lock();
  lib->module = module_new(code);
  int failed = !lib->module || sim_handle_add(lib, SIM_KIND_LIBRARY) != 0;
  sim_unlock();
  if (failed) {
    free(lib);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *library = (CUlibrary)lib;
  return CUDA_SUCCESS;
}

/** Loads a library from a file (which must exist). */
SIM_API CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                       void **jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                       unsigned int numLibraryOptions)
{
  if (!fileName)
    return CUDA_ERROR_INVALID_VALUE;
  FILE *f = fopen(fileName, "rb");
  if (!f)
    return CUDA_ERROR_FILE_NOT_FOUND;
  fclose(f);
  return cuLibraryLoadData(library, strdup(fileName), NULL, NULL, 0, NULL, NULL, 0);
}

/** Unloads a library (its kernel handles become invalid). */
SIM_API CUresult cuLibraryUnload(CUlibrary library)
{
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(library) != SIM_KIND_LIBRARY)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    struct sim_library *lib = (struct sim_library *)library;
    sim_handle_remove(lib);
    for (struct sim_kernel *k = lib->kernels; k; k = k->next)
      sim_handle_remove(k);
  }
  sim_unlock();
  return r;
}

/** The kernel called `name` in the library (any name is found). */
SIM_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
  if (!pKernel || !name)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(library) != SIM_KIND_LIBRARY)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    struct sim_library *lib = (struct sim_library *)library;
    struct sim_kernel *k = lib->kernels;
    while (k && strcmp(k->function->name, name) != 0)
      k = k->next;
    if (!k) {
      struct sim_function *f = module_function(lib->module, name);
      k = f ? calloc(1, sizeof *k) : NULL;
      if (k && sim_handle_add(k, SIM_KIND_KERNEL) != 0) {
        free(k);
        k = NULL;
      }
      if (k) {
        k->library = lib;
        k->function = f;
        k->next = lib->kernels;
        lib->kernels = k;
      }
    }
    if (k)
      *pKernel = (CUkernel)k;
    else
      r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  return r;
}

/** The module underlying a library. */
SIM_API CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
  if (!pMod)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(library) == SIM_KIND_LIBRARY;
  if (ok)
    *pMod = (CUmodule)((struct sim_library *)library)->module;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** Address and size of a library global. */
SIM_API CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{
  CUmodule m;
  CUresult r = cuLibraryGetModule(&m, library);
  return r != CUDA_SUCCESS ? r : cuModuleGetGlobal(dptr, bytes, m, name);
}

/** The function of a kernel in the current context. */
SIM_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
  if (!pFunc)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(kernel) == SIM_KIND_KERNEL;
  if (ok)
    *pFunc = (CUfunction)((struct sim_kernel *)kernel)->function;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** The library a kernel belongs to. */
SIM_API CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
  if (!pLib)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(kernel) == SIM_KIND_KERNEL;
  if (ok)
    *pLib = (CUlibrary)((struct sim_kernel *)kernel)->library;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

