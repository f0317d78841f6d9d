/* Function attributes and occupancy of the simulated libcudart: the runtime's
 * cudaFuncGetAttributes / cudaFuncSetAttribute / cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * on a host stub or cudaKernel_t, answered by the driver's function (loaded on first
 * use, cudart_launch.c). */
#include "cudart_internal.h"

#include <string.h>

/* One attribute from the driver, 0 when it cannot say. */
static int function_attribute(CUfunction f, CUfunction_attribute attr)
{
  int v = 0;
  if (!simdrv.FuncGetAttribute || simdrv.FuncGetAttribute(&v, attr, f) != CUDA_SUCCESS)
    v = 0;
  return v;
}

/** Fills cudaFuncAttributes from the driver's function attributes. */
SIM_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
  if (!attr)
    return rt_fail(cudaErrorInvalidValue);
  CUfunction f;
  cudaError_t e = rt_kernel_function(func, &f);
  if (e != cudaSuccess)
    return e;
  memset(attr, 0, sizeof *attr);
  attr->sharedSizeBytes = (size_t)function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  attr->constSizeBytes = (size_t)function_attribute(f, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
  attr->localSizeBytes = (size_t)function_attribute(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  attr->maxThreadsPerBlock = function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  attr->numRegs = function_attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  attr->ptxVersion = function_attribute(f, CU_FUNC_ATTRIBUTE_PTX_VERSION);
  attr->binaryVersion = function_attribute(f, CU_FUNC_ATTRIBUTE_BINARY_VERSION);
  attr->maxDynamicSharedSizeBytes = function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  return cudaSuccess;
}

/** Resident blocks per SM of a kernel (a host stub or cudaKernel_t), from the driver. */
SIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
                                                                     int blockSize, size_t dynamicSMemSize)
{
  if (!numBlocks)
    return rt_fail(cudaErrorInvalidValue);
  CUfunction f;
  cudaError_t e = rt_kernel_function(func, &f);
  if (e != cudaSuccess)
    return e;
  RT_NEED(simdrv.OccupancyMaxActiveBlocksPerMultiprocessor);
  return rt_check(simdrv.OccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, f, blockSize, dynamicSMemSize));
}

/** Sets a function attribute (the runtime and driver enumerations agree). */
SIM_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
  CUfunction f;
  cudaError_t e = rt_kernel_function(func, &f);
  if (e != cudaSuccess)
    return e;
  RT_NEED(simdrv.FuncSetAttribute);
  return rt_check(simdrv.FuncSetAttribute(f, (CUfunction_attribute)attr, value));
}
