/* Virtual memory management: cuMemAddressReserve / cuMemAddressFree,
 * cuMemCreate / cuMemRelease, cuMemMap / cuMemUnmap, cuMemSetAccess and
 * cuMemGetAllocationGranularity, with host memory underneath so that real bytes
 * move. A reservation is an anonymous PROT_NONE mapping of the host's address
 * space (in the range table as device memory: copies and pointer attributes accept
 * it); a handle is a memfd of its size; cuMemMap maps the memfd over part of a
 * reservation (still PROT_NONE: "all mappings start with no accessibility setup",
 * cuda.h), cuMemSetAccess mprotects it, cuMemUnmap puts the anonymous PROT_NONE
 * pages back. A handle's bytes count against the device's 141 GiB from cuMemCreate
 * until it is released and no longer mapped (cuda.h: "freed when all outstanding
 * mappings to the memory are unmapped"). cuMemCreate and cuMemRelease spend
 * SIMCUDA_ALLOC_US; none of these calls waits for the device (PyTorch synchronises
 * its stream itself before cuMemUnmap: "MemUnmap and MemRelease do not appear to
 * synchronize in all cases", c10/cuda/CUDACachingAllocator.cpp). */
#include "sim.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_VMM_GRANULARITY ((size_t)2 << 20) /* what current GPUs report: 2 MiB */
#define SIM_VMM_MAX 4096                      /* live reservations, mappings */

/* A cuMemCreate handle: CUmemGenericAllocationHandle is its address. */
struct vmm_handle {
  int fd;
  size_t size;
  int device;
  int mappings; /* live cuMemMap mappings of it */
  int released; /* cuMemRelease called: gone once unmapped */
};

struct vmm_range {
  char *base;
  size_t size;
  struct vmm_handle *handle; /* mappings only */
};

static struct vmm_range reserved[SIM_VMM_MAX], mapped[SIM_VMM_MAX];
static size_t reserved_n, mapped_n;

static int multiple(size_t v) { return v % SIM_VMM_GRANULARITY == 0; }

/* The reservation holding all of [p, p+size), or NULL (lock held). */
static struct vmm_range *reservation_of(const char *p, size_t size)
{
  for (size_t i = 0; i < reserved_n; i++)
    if (p >= reserved[i].base && size <= reserved[i].size &&
        (size_t)(p - reserved[i].base) <= reserved[i].size - size)
      return &reserved[i];
  return NULL;
}

/* Bytes of [p, p+size) covered by mappings; *partial set when a mapping sticks out. */
static size_t mapped_bytes(const char *p, size_t size, int *partial)
{
  size_t covered = 0;
  for (size_t i = 0; i < mapped_n; i++) {
    const struct vmm_range *m = &mapped[i];
    if (m->base + m->size <= p || m->base >= p + size)
      continue;
    if (m->base < p || m->base + m->size > p + size)
      *partial = 1;
    covered += m->size;
  }
  return covered;
}

static void handle_destroy(struct vmm_handle *h)
{
  sim_mem_uncharge(h->size);
  close(h->fd);
  free(h);
}

static int prop_ok(const CUmemAllocationProp *prop)
{
  return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
         prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
         sim_check_device(prop->location.id) == CUDA_SUCCESS;
}

/** The granularity of cuMemCreate sizes and cuMemMap offsets: 2 MiB. */
SIM_API CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!granularity || !prop_ok(prop))
    return CUDA_ERROR_INVALID_VALUE;
  *granularity = SIM_VMM_GRANULARITY;
  return CUDA_SUCCESS;
}

/** Reserves `size` bytes of address space (aligned to `alignment`, default 2 MiB). */
SIM_API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  long page = sysconf(_SC_PAGESIZE);
  if (!ptr || !size || flags || size % (size_t)page || (alignment & (alignment - 1)))
    return CUDA_ERROR_INVALID_VALUE;
  if (alignment < SIM_VMM_GRANULARITY)
    alignment = SIM_VMM_GRANULARITY;
  if (size > SIZE_MAX - alignment)
    return CUDA_ERROR_OUT_OF_MEMORY;
  char *raw = mmap(NULL, size + alignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  char *base = (char *)(((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1));
  if (base > raw)
    munmap(raw, (size_t)(base - raw));
  munmap(base + size, (size_t)(raw + size + alignment - (base + size)));
  sim_lock();
  if (reserved_n == SIM_VMM_MAX || sim_mem_add_reserved(base, size, c->device) != 0) {
    sim_unlock();
    munmap(base, size);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  reserved[reserved_n++] = (struct vmm_range){base, size, NULL};
  sim_unlock();
  *ptr = (CUdeviceptr)(uintptr_t)base;
  (void)addr; /* only a hint */
  return CUDA_SUCCESS;
}

/** Frees a reservation: ptr and size as reserved, nothing mapped in it. */
SIM_API CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
  char *base = (char *)(uintptr_t)ptr;
  int partial = 0;
  sim_lock();
  struct vmm_range *res = reservation_of(base, size);
  if (!res || res->base != base || res->size != size || mapped_bytes(base, size, &partial)) {
    sim_unlock();
    return CUDA_ERROR_INVALID_VALUE;
  }
  sim_mem_remove_reserved(base);
  *res = reserved[--reserved_n];
  sim_unlock();
  munmap(base, size);
  return CUDA_SUCCESS;
}

/** Creates `size` bytes of physical memory (a multiple of 2 MiB) on prop's device. */
SIM_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!handle || !prop_ok(prop) || flags || !size || !multiple(size))
    return CUDA_ERROR_INVALID_VALUE;
  sim_spin_us(sim_knobs.alloc_us);
  struct vmm_handle *h = calloc(1, sizeof *h);
  if (!h)
    return CUDA_ERROR_OUT_OF_MEMORY;
  h->size = size;
  h->device = prop->location.id;
  sim_lock();
  int full = sim_mem_charge(size) != 0;
  sim_unlock();
  if (full) {
    free(h);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  h->fd = memfd_create("simcuda-vmm", MFD_CLOEXEC);
  if (h->fd < 0 || ftruncate(h->fd, (off_t)size) != 0) {
    if (h->fd >= 0)
      close(h->fd);
    h->fd = -1;
  }
  sim_lock();
  if (h->fd < 0 || sim_handle_add(h, SIM_KIND_MEM_HANDLE) != 0) {
    sim_mem_uncharge(size);
    sim_unlock();
    if (h->fd >= 0)
      close(h->fd);
    free(h);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
  return CUDA_SUCCESS;
}

/** Releases a handle; its memory goes once no mapping uses it. */
SIM_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
  struct vmm_handle *h = (struct vmm_handle *)(uintptr_t)handle;
  sim_spin_us(sim_knobs.alloc_us);
  sim_lock();
  if (!h || sim_handle_kind(h) != SIM_KIND_MEM_HANDLE) {
    sim_unlock();
    return CUDA_ERROR_INVALID_VALUE;
  }
  sim_handle_remove(h);
  h->released = 1;
  int gone = h->mappings == 0;
  if (gone)
    sim_mem_uncharge(h->size);
  sim_unlock();
  if (gone) {
    close(h->fd);
    free(h);
  }
  return CUDA_SUCCESS;
}

/** Maps [offset, offset+size) of a handle at ptr, inside a reservation, unmapped there. */
SIM_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags)
{
  char *p = (char *)(uintptr_t)ptr;
  struct vmm_handle *h = (struct vmm_handle *)(uintptr_t)handle;
  int partial = 0;
  sim_lock();
  if (flags || !size || !multiple(ptr) || !multiple(size) || !multiple(offset) || !h ||
      sim_handle_kind(h) != SIM_KIND_MEM_HANDLE || offset > h->size || size > h->size - offset ||
      !reservation_of(p, size) || mapped_bytes(p, size, &partial) || mapped_n == SIM_VMM_MAX) {
    sim_unlock();
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (mmap(p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, h->fd, (off_t)offset) == MAP_FAILED) {
    sim_unlock();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  mapped[mapped_n++] = (struct vmm_range){p, size, h};
  h->mappings++;
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Unmaps whole mappings covering exactly [ptr, ptr+size); frees released handles. */
SIM_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
  char *p = (char *)(uintptr_t)ptr;
  int partial = 0;
  sim_lock();
  if (!size || mapped_bytes(p, size, &partial) != size || partial) {
    sim_unlock();
    return CUDA_ERROR_INVALID_VALUE;
  }
  mmap(p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  for (size_t i = 0; i < mapped_n;) {
    struct vmm_range *m = &mapped[i];
    if (m->base < p || m->base >= p + size) {
      i++;
      continue;
    }
    struct vmm_handle *h = m->handle;
    *m = mapped[--mapped_n];
    if (--h->mappings == 0 && h->released)
      handle_destroy(h);
  }
  sim_unlock();
  return CUDA_SUCCESS;
}

/** Sets the access of a fully mapped range: read-write, read-only or none. */
SIM_API CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
  char *p = (char *)(uintptr_t)ptr;
  int prot = PROT_NONE, partial = 0;
  if (!desc || !count || !size)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        sim_check_device(desc[i].location.id) != CUDA_SUCCESS)
      return CUDA_ERROR_INVALID_VALUE;
    if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      prot = PROT_READ | PROT_WRITE;
    else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ)
      prot |= PROT_READ;
    else if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE)
      return CUDA_ERROR_INVALID_VALUE;
  }
  sim_lock();
  CUresult r = mapped_bytes(p, size, &partial) == size && !partial && mprotect(p, size, prot) == 0
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_INVALID_VALUE;
  sim_unlock();
  return r;
}
