/* Pointer attributes: what the range table knows about an address, answered
 * like the real driver (CUDA_ERROR_INVALID_VALUE for unknown memory from
 * cuPointerGetAttribute, zero values and success from cuPointerGetAttributes). */
#include "sim.h"

/* One attribute of a known range `r` containing p (lock held). */
static CUresult range_attribute(void *data, CUpointer_attribute attribute, const struct sim_mem_range *r,
                                const char *p)
{
  struct sim_ctx *c = sim_primary_ctx(r->device);
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)c; break;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    *(unsigned int *)data = r->type == SIM_MEM_PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    break;
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = (CUdeviceptr)(uintptr_t)p; break;
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    if (r->type == SIM_MEM_DEVICE)
      return CUDA_ERROR_INVALID_VALUE;
    *(void **)data = (void *)p;
    break;
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(int *)data = 1; break;
  case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = r->id; break;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = r->type == SIM_MEM_MANAGED; break;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = r->device; break;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(void **)data = r->base; break;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = r->size; break;
  case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(int *)data = r->type == SIM_MEM_DEVICE; break;
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: *(unsigned long long *)data = 0; break;
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(int *)data = 0; break;
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(unsigned int *)data = 3; break; /* read-write */
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(void **)data = NULL; break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

/** One attribute of a pointer; CUDA_ERROR_INVALID_VALUE for memory the driver
 * does not know (plain pageable host memory). */
SIM_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!data)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  const char *p = (const char *)(uintptr_t)ptr;
  const struct sim_mem_range *r = sim_mem_range_of(p);
  CUresult result = r ? range_attribute(data, attribute, r, p) : CUDA_ERROR_INVALID_VALUE;
  sim_unlock();
  return result;
}

/** Several attributes at once; unknown pointers give zero values and success,
 * as the real driver does. */
SIM_API CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                        void **data, CUdeviceptr ptr)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!attributes || !data)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  const char *p = (const char *)(uintptr_t)ptr;
  const struct sim_mem_range *r = sim_mem_range_of(p);
  CUresult result = CUDA_SUCCESS;
  for (unsigned int i = 0; i < numAttributes && result == CUDA_SUCCESS; i++) {
    if (!data[i])
      continue;
    if (r && range_attribute(data[i], attributes[i], r, p) == CUDA_SUCCESS)
      continue;
    /* Unknown memory (or an attribute that does not apply): a zero value. */
    switch (attributes[i]) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(unsigned int *)data[i] = 0; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = -2; break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: *(unsigned long long *)data[i] = 0; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = 0; break;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(void **)data[i] = NULL; break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: *(int *)data[i] = 0; break;
    default: result = CUDA_ERROR_INVALID_VALUE;
    }
  }
  sim_unlock();
  return result;
}
