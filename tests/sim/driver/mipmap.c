/* CUDA mipmapped arrays: cuMipmappedArrayCreate and cuMipmappedArrayDestroy. A
 * mipmapped array here is its size only (its levels cannot be reached:
 * cuMipmappedArrayGetLevel is not simulated): the sum over its levels of max(1, Width >> l)
 * x max(1, Height >> l) x max(1, Depth >> l) elements (a 0 extent counts as 1; a layered
 * or cubemap array's Depth, its layers or faces, does not shrink), charged against the
 * device's memory. Levels: 1 up to 1 + log2 of the largest extent, as the real driver
 * allows. Formats as array.c's. */
#include "sim.h"

#include <stdlib.h>

struct sim_mipmap {
  CUDA_ARRAY3D_DESCRIPTOR desc;
  unsigned levels;
  size_t bytes;
};

static size_t shrink(size_t n, unsigned level)
{
  return n >> level ? n >> level : 1;
}

/* The bytes of `levels` levels of d's array; 0 when they overflow. */
static size_t mipmap_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, size_t element)
{
  int fixed_depth = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  size_t total = 0;
  for (unsigned l = 0; l < levels; l++) {
    size_t h = d->Height ? shrink(d->Height, l) : 1;
    size_t z = !d->Depth ? 1 : fixed_depth ? d->Depth : shrink(d->Depth, l);
    size_t level;
    if (__builtin_mul_overflow(shrink(d->Width, l), h, &level) || __builtin_mul_overflow(level, z, &level)
        || __builtin_mul_overflow(level, element, &level) || __builtin_add_overflow(total, level, &total))
      return 0;
  }
  return total;
}

/** Creates a mipmapped CUDA array of numMipmapLevels levels. */
SIM_API CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                        unsigned int numMipmapLevels)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *ctx;
  CUresult r = sim_require_ctx(&ctx);
  if (r != CUDA_SUCCESS)
    return r;
  size_t element;
  if (!pHandle)
    return CUDA_ERROR_INVALID_VALUE;
  r = sim_array_check(pMipmappedArrayDesc, &element);
  if (r != CUDA_SUCCESS)
    return r;
  const CUDA_ARRAY3D_DESCRIPTOR *d = pMipmappedArrayDesc;
  size_t largest = d->Width > d->Height ? d->Width : d->Height;
  if (!(d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) && d->Depth > largest)
    largest = d->Depth;
  unsigned most = 1;
  while (largest >> most)
    most++;
  if (!numMipmapLevels || numMipmapLevels > most)
    return CUDA_ERROR_INVALID_VALUE;
  size_t bytes = mipmap_bytes(d, numMipmapLevels, element);
  if (!bytes)
    return CUDA_ERROR_OUT_OF_MEMORY;
  struct sim_mipmap *m = calloc(1, sizeof *m);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m->desc = *d;
  m->levels = numMipmapLevels;
  m->bytes = bytes;
  sim_lock();
  r = sim_mem_charge(bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS && sim_handle_add(m, SIM_KIND_MIPMAP) != 0) {
    sim_mem_uncharge(bytes);
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  if (r != CUDA_SUCCESS) {
    free(m);
    return r;
  }
  *pHandle = (CUmipmappedArray)m;
  return CUDA_SUCCESS;
}

/** Destroys a mipmapped array once the context's work has finished (as cuArrayDestroy). */
SIM_API CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *ctx;
  CUresult r = sim_require_ctx(&ctx);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_mipmap *m = hMipmappedArray && sim_handle_kind(hMipmappedArray) == SIM_KIND_MIPMAP
                             ? (struct sim_mipmap *)hMipmappedArray
                             : NULL;
  if (!m) {
    sim_unlock();
    return CUDA_ERROR_INVALID_HANDLE;
  }
  sim_handle_remove(m);
  sim_mem_uncharge(m->bytes);
  uint64_t until = sim_ctx_tail_ns(ctx);
  sim_unlock();
  sim_wait_until(until);
  free(m);
  return CUDA_SUCCESS;
}
