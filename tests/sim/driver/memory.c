/* Device, pinned and managed memory. Device memory is host memory (so real bytes
 * move); every allocation or registration is kept in a sorted range table so that
 * pointer attributes answer like the real driver: device / host (page-locked) /
 * managed, and CUDA_ERROR_INVALID_VALUE for plain pageable memory. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#define SIM_ALLOC_ALIGN 256
#define SIM_TOTAL_MEM ((size_t)141 << 30)


static struct sim_mem_range *ranges;
static size_t range_count, range_capacity;
static size_t device_bytes_used;
static unsigned long long next_buffer_id = 1;

/* Index of the first range whose base is > p. */
static size_t upper_bound(const char *p)
{
  size_t lo = 0, hi = range_count;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranges[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The range containing p, or NULL (lock held). */
static struct sim_mem_range *range_of(const void *p)
{
  size_t i = upper_bound(p);
  if (i == 0)
    return NULL;
  struct sim_mem_range *r = &ranges[i - 1];
  size_t extent = r->size ? r->size : 1;
  return (const char *)p < r->base + extent ? r : NULL;
}

const struct sim_mem_range *sim_mem_range_of(const void *p)
{
  return range_of(p);
}

/* Whether [p, p+size) overlaps a known range (lock held). */
static int overlaps(const char *p, size_t size)
{
  size_t i = upper_bound(p + size - 1);
  return i > 0 && ranges[i - 1].base + ranges[i - 1].size > p;
}

static int range_insert(const struct sim_mem_range *r)
{
  if (range_count == range_capacity) {
    size_t cap = range_capacity ? range_capacity * 2 : 64;
    struct sim_mem_range *grown = realloc(ranges, cap * sizeof *grown);
    if (!grown)
      return -1;
    ranges = grown;
    range_capacity = cap;
  }
  size_t i = upper_bound(r->base);
  memmove(&ranges[i + 1], &ranges[i], (range_count - i) * sizeof *ranges);
  ranges[i] = *r;
  ranges[i].id = next_buffer_id++;
  range_count++;
  return 0;
}

static void range_erase(struct sim_mem_range *r)
{
  size_t i = (size_t)(r - ranges);
  memmove(&ranges[i], &ranges[i + 1], (range_count - i - 1) * sizeof *ranges);
  range_count--;
}

enum sim_mem_type sim_mem_lookup(const void *p, char **base, size_t *size, int *device)
{
  struct sim_mem_range *r = range_of(p);
  if (!r)
    return SIM_MEM_NONE;
  if (base) *base = r->base;
  if (size) *size = r->size;
  if (device) *device = r->device;
  return r->type;
}

/* Allocates `size` bytes of the given type in the current context; a
 * `stream_ordered` allocation is legal during capture. */
static CUresult allocate_common(void **out, size_t size, enum sim_mem_type type, unsigned int flags,
                                int stream_ordered)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  if (size == 0)
    return CUDA_ERROR_INVALID_VALUE;
  int counts = type != SIM_MEM_PINNED;
  if (!stream_ordered)
    sim_spin_us(sim_knobs.alloc_us); /* the driver's own time (SIMCUDA_ALLOC_US) */
  sim_lock();
  if (!stream_ordered && sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (counts && size > SIM_TOTAL_MEM - device_bytes_used) {
    sim_unlock();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  void *p = NULL;
  if (posix_memalign(&p, SIM_ALLOC_ALIGN, size) != 0 || !p) {
    sim_unlock();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  struct sim_mem_range range = {.base = p, .size = size, .type = type, .device = c->device, .owned = 1,
                            .flags = flags};
  if (range_insert(&range) != 0) {
    sim_unlock();
    free(p);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (counts)
    device_bytes_used += size;
  sim_unlock();
  *out = p;
  return CUDA_SUCCESS;
}

static CUresult allocate(void **out, size_t size, enum sim_mem_type type, unsigned int flags)
{
  return allocate_common(out, size, type, flags, 0);
}

/* Frees a driver allocation of one of the given types; waits for the device (all
 * of the context's work) first, as the real cuMemFree does, then spends
 * SIMCUDA_ALLOC_US. */
static CUresult release(void *p, enum sim_mem_type want1, enum sim_mem_type want2)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!p)
    return CUDA_SUCCESS;
  sim_lock();
  if (sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  struct sim_mem_range *range = range_of(p);
  if (!range || range->base != p || !range->owned || (range->type != want1 && range->type != want2)) {
    sim_unlock();
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (range->type != SIM_MEM_PINNED)
    device_bytes_used -= range->size;
  range_erase(range);
  uint64_t until = sim_ctx_tail_ns(c);
  sim_unlock();
  sim_wait_until(until);
  sim_spin_us(sim_knobs.alloc_us);
  free(p);
  return CUDA_SUCCESS;
}

/** Allocates device memory (host memory underneath). */
SIM_API CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
  return allocate((void **)dptr, bytesize, SIM_MEM_DEVICE, 0);
}

/** Allocates pitched device memory; the pitch is the width rounded up to 512. */
SIM_API CUresult cuMemAllocPitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                 unsigned int ElementSizeBytes)
{
  if (!pPitch || !WidthInBytes || !Height
      || (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
    return CUDA_ERROR_INVALID_VALUE;
  size_t pitch = (WidthInBytes + 511) / 512 * 512;
  CUresult r = allocate((void **)dptr, pitch * Height, SIM_MEM_DEVICE, 0);
  if (r == CUDA_SUCCESS)
    *pPitch = pitch;
  return r;
}

/** Frees device or managed memory (waits for the device first). */
SIM_API CUresult cuMemFree(CUdeviceptr dptr)
{
  return release((void *)(uintptr_t)dptr, SIM_MEM_DEVICE, SIM_MEM_MANAGED);
}

/** Allocates managed memory (flags CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST). */
SIM_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
    return CUDA_ERROR_INVALID_VALUE;
  return allocate((void **)dptr, bytesize, SIM_MEM_MANAGED, flags);
}

/** Allocates page-locked host memory. */
SIM_API CUresult cuMemAllocHost(void **pp, size_t bytesize)
{
  return allocate(pp, bytesize, SIM_MEM_PINNED, 0);
}

/** Allocates page-locked host memory with CU_MEMHOSTALLOC_* flags. */
SIM_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
  if (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
    return CUDA_ERROR_INVALID_VALUE;
  return allocate(pp, bytesize, SIM_MEM_PINNED, Flags);
}

/** Frees page-locked host memory from cuMemAllocHost / cuMemHostAlloc. */
SIM_API CUresult cuMemFreeHost(void *p)
{
  return release(p, SIM_MEM_PINNED, SIM_MEM_PINNED);
}

/** Page-locks an existing host range. */
SIM_API CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!p || !bytesize || (Flags & ~0xfu))
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  if (overlaps(p, bytesize))
    r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  else {
    struct sim_mem_range range = {.base = p, .size = bytesize, .type = SIM_MEM_PINNED, .device = c->device,
                              .flags = Flags};
    if (range_insert(&range) != 0)
      r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  return r;
}

/** Undoes cuMemHostRegister (p must be the registered base). */
SIM_API CUresult cuMemHostUnregister(void *p)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_mem_range *range = range_of(p);
  if (!range || range->base != p || range->owned || range->type != SIM_MEM_PINNED)
    r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  else
    range_erase(range);
  sim_unlock();
  return r;
}

/** The device address of mapped page-locked memory (the same address: UVA). */
SIM_API CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
  if (!pdptr || Flags)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_mem_range *range = range_of(p);
  int ok = range && range->type == SIM_MEM_PINNED;
  sim_unlock();
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  *pdptr = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

/** The flags page-locked memory was allocated with. */
SIM_API CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
  if (!pFlags)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_mem_range *range = range_of(p);
  int ok = range && range->type == SIM_MEM_PINNED;
  if (ok)
    *pFlags = range->flags;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** Free and total device memory (141 GiB total). */
SIM_API CUresult cuMemGetInfo(size_t *free_bytes, size_t *total)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!free_bytes || !total)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  *free_bytes = SIM_TOTAL_MEM - device_bytes_used;
  *total = SIM_TOTAL_MEM;
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Base and size of the allocation containing dptr. */
SIM_API CUresult cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
  sim_lock();
  struct sim_mem_range *range = range_of((void *)(uintptr_t)dptr);
  int ok = range && range->type != SIM_MEM_PINNED;
  if (ok) {
    if (pbase) *pbase = (CUdeviceptr)(uintptr_t)range->base;
    if (psize) *psize = range->size;
  }
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, CUstream hStream, int per_thread)
{
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  sim_unlock();
  if (r != CUDA_SUCCESS)
    return r;
  /* Stream-ordered allocation is modelled as an immediate allocation (also
   * during capture, where the real driver would add an allocation node). */
  return allocate_common((void **)dptr, bytesize, SIM_MEM_DEVICE, 0, 1);
}

/** Stream-ordered allocation (allocated at once in the simulator). */
SIM_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_async(dptr, bytesize, hStream, 0);
}

/** cuMemAllocAsync through the per-thread default stream entry point. */
SIM_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
  return alloc_async(dptr, bytesize, hStream, 1);
}

/* The default memory pool of each device, as handles only: the simulator has no
 * pools, an allocation from one is an ordinary stream-ordered allocation. */
static char default_pools[SIM_MAX_DEVICES];

/** The device's default memory pool (a handle cuMemAllocFromPoolAsync accepts). */
SIM_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!pool)
    return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= sim_knobs.devices)
    return CUDA_ERROR_INVALID_DEVICE;
  *pool = (CUmemoryPool)(void *)&default_pools[dev];
  return CUDA_SUCCESS;
}

static CUresult alloc_from_pool(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                CUstream hStream, int per_thread)
{
  const char *p = (const char *)(void *)pool;
  if (!p || p < default_pools || p >= default_pools + SIM_MAX_DEVICES)
    return CUDA_ERROR_INVALID_VALUE;
  return alloc_async(dptr, bytesize, hStream, per_thread);
}

/** Stream-ordered allocation from a pool (a default pool: allocated at once). */
SIM_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                         CUstream hStream)
{
  return alloc_from_pool(dptr, bytesize, pool, hStream, 0);
}

/** cuMemAllocFromPoolAsync through the per-thread default stream entry point. */
SIM_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                              CUmemoryPool pool, CUstream hStream)
{
  return alloc_from_pool(dptr, bytesize, pool, hStream, 1);
}

static CUresult free_async(CUdeviceptr dptr, CUstream hStream, int per_thread)
{
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS) {
    struct sim_mem_range *range = range_of((void *)(uintptr_t)dptr);
    if (!range || range->base != (char *)(uintptr_t)dptr || !range->owned || range->type != SIM_MEM_DEVICE)
      r = CUDA_ERROR_INVALID_VALUE;
    else {
      device_bytes_used -= range->size;
      range_erase(range);
    }
  }
  sim_unlock();
  /* Earlier copies already moved their bytes, so the memory can go now. */
  if (r == CUDA_SUCCESS)
    free((void *)(uintptr_t)dptr);
  return r;
}

/** Stream-ordered free. */
SIM_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
  return free_async(dptr, hStream, 0);
}

/** cuMemFreeAsync through the per-thread default stream entry point. */
SIM_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
  return free_async(dptr, hStream, 1);
}

CUdeviceptr sim_mem_alloc_internal(size_t size)
{
  void *p = NULL;
  if (!size || posix_memalign(&p, SIM_ALLOC_ALIGN, size) != 0 || !p)
    return 0;
  memset(p, 0, size);
  struct sim_mem_range range = {.base = p, .size = size, .type = SIM_MEM_DEVICE, .device = 0, .owned = 0};
  if (range_insert(&range) != 0) {
    free(p);
    return 0;
  }
  device_bytes_used += size;
  return (CUdeviceptr)(uintptr_t)p;
}

int sim_mem_add_reserved(char *base, size_t size, int device)
{
  struct sim_mem_range range = {.base = base, .size = size, .type = SIM_MEM_DEVICE, .device = device};
  return range_insert(&range);
}

void sim_mem_remove_reserved(char *base)
{
  struct sim_mem_range *r = range_of(base);
  if (r && r->base == base && !r->owned)
    range_erase(r);
}

int sim_mem_charge(size_t size)
{
  if (size > SIM_TOTAL_MEM - device_bytes_used)
    return -1;
  device_bytes_used += size;
  return 0;
}

void sim_mem_uncharge(size_t size)
{
  device_bytes_used -= size < device_bytes_used ? size : device_bytes_used;
}
