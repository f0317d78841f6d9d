/* One driver-level launch per simulated cuBLAS/cuBLASLt call. */
#include "simkernel.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct named_function {
  struct named_function *next;
  CUfunction function;
  char name[];
};

static pthread_mutex_t functions_lock = PTHREAD_MUTEX_INITIALIZER;
static struct named_function *functions;

CUresult simkernel_init(void)
{
  CUresult r = simdrv_load();
  if (r != CUDA_SUCCESS)
    return r;
  return simdrv_ensure_context(0);
}

int simkernel_compute_enabled(void)
{
  const char *v = getenv("SIMCUBLAS_COMPUTE");
  return !(v && strcmp(v, "0") == 0);
}

void simkernel_host_work(const char *var)
{
  int saved = errno;
  const char *v = getenv(var);
  unsigned long us = v ? strtoul(v, NULL, 10) : 0;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  uint64_t until = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec + us * 1000ull;
  while (us) { /* a busy wait: host work, not a sleep */
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec >= until)
      break;
  }
  errno = saved;
}

static double gemm_tflops(void)
{
  const char *v = getenv("SIMCUDA_GEMM_TFLOPS");
  double t = v ? strtod(v, NULL) : 0.0;
  return t > 0.0 ? t : 50.0;
}

/* Finds or loads the function called `name` (functions_lock held). */
static CUresult lookup(const char *name, CUfunction *out)
{
  for (struct named_function *f = functions; f; f = f->next)
    if (strcmp(f->name, name) == 0) {
      *out = f->function;
      return CUDA_SUCCESS;
    }
  if (!simdrv.ModuleLoadData || !simdrv.ModuleGetFunction)
    return CUDA_ERROR_NOT_SUPPORTED;
  size_t len = strlen(name);
  char *ptx = malloc(len + 128);
  if (!ptx)
    return CUDA_ERROR_OUT_OF_MEMORY;
  snprintf(ptx, len + 128, ".version 8.0\n.target sm_90\n.address_size 64\n"
           ".visible .entry %s()\n{\n  ret;\n}\n", name);
  CUmodule module;
  CUresult r = simdrv.ModuleLoadData(&module, ptx);
  free(ptx);
  if (r != CUDA_SUCCESS)
    return r;
  struct named_function *f = malloc(sizeof *f + len + 1);
  if (!f)
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy(f->name, name, len + 1);
  r = simdrv.ModuleGetFunction(&f->function, module, name);
  if (r != CUDA_SUCCESS) {
    free(f);
    return r;
  }
  f->next = functions;
  functions = f;
  *out = f->function;
  return CUDA_SUCCESS;
}

CUresult simkernel_launch(const char *name, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          CUstream stream, double flops)
{
  CUresult r = simkernel_init();
  if (r != CUDA_SUCCESS)
    return r;
  CUfunction f;
  pthread_mutex_lock(&functions_lock);
  r = lookup(name, &f);
  pthread_mutex_unlock(&functions_lock);
  if (r != CUDA_SUCCESS)
    return r;
  if (simdrv.hint_next_launch_ns) {
    double ns = flops / (gemm_tflops() * 1e3);
    if (ns < 3000.0)
      ns = 3000.0;
    simdrv.hint_next_launch_ns((unsigned long long)ns);
  }
  if (!grid_x) grid_x = 1;
  if (!grid_y) grid_y = 1;
  if (!grid_z) grid_z = 1;
  if (grid_y > 65535) grid_y = 65535;
  if (grid_z > 65535) grid_z = 65535;
  return simdrv.LaunchKernel(f, grid_x, grid_y, grid_z, 128, 1, 1, 0, stream, NULL, NULL);
}

void simkernel_gemm_name(char *buf, size_t size, cudaDataType type, int tf32, int transa, int transb,
                         const char *epilogue)
{
  const char *types = "f32f32_f32f32_f32", *tile = "128x128x16";
  if (type == CUDA_R_16F) {
    types = "f16f16_f16f32_f32";
    tile = "128x256x64";
  } else if (type == CUDA_R_16BF) {
    types = "bf16bf16_bf16f32_f32";
    tile = "128x256x64";
  } else if (type == CUDA_R_64F) {
    types = "f64f64_f64f64_f64";
  } else if (type == CUDA_C_32F) {
    types = "c32c32_c32c32_c32";
  } else if (type == CUDA_C_64F) {
    types = "c64c64_c64c64_c64";
  } else if (tf32) {
    types = "f32f32_tf32f32_f32";
    tile = "128x128x32";
  }
  snprintf(buf, size,
           "sm90_xmma_gemm_%s_%c%c_n_tilesize%s_warpgroupsize1x1x1_%sexecute_segment_k_off_kernel__5x_cublas",
           types, transa ? 't' : 'n', transb ? 't' : 'n', tile, epilogue ? epilogue : "");
}
