/*
 * Kernel names. nvcc's module constructors call __cudaRegisterFunction(handle,
 * host stub, mangled device name, ...) once per __global__ function; nvcc-13 launch
 * stubs call __cudaGetKernel(&kernel, stub) and launch the cudaKernel_t. Both the
 * stub and the cudaKernel_t map to the mangled name (kept as registered: demangling
 * belongs to the tools), interned on first launch.
 */
#include <vector_types.h>

#include "hooks_internal.h"
#include "map.h"

/* The registration entry points have no public C header (crt/host_runtime.h is C++
 * only); prototypes as nvcc-generated code calls them. */
CTP_EXPORT void __cudaRegisterFunction(void **fat_cubin_handle, const char *host_fun,
                                       char *device_fun, const char *device_name,
                                       int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim,
                                       dim3 *gdim, int *wsize);
CTP_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);

/* host stub or cudaKernel_t -> (v1 = const char *mangled name, v2 = string id). */
static struct ctph_map kernel_names = CTPH_MAP_INIT(12);
/* Bumped when a known stub is registered again with another name. */
static unsigned names_generation;

/** Forwards the registration and remembers the stub's mangled name. */
CTP_EXPORT void __cudaRegisterFunction(void **fat_cubin_handle, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bdim, dim3 *gdim, int *wsize) {
  __typeof__(&__cudaRegisterFunction) real = CTPH_REAL(__cudaRegisterFunction);
  if (host_fun && device_fun) {
    int inserted;
    struct ctph_map_slot *s =
        ctph_map_insert(&kernel_names, (uintptr_t)host_fun, 0, (uintptr_t)device_fun, 0, &inserted);
    if (s && !inserted && s->v1 != (uintptr_t)device_fun) {
      /* The stub's address now belongs to another kernel (a module was reloaded).
       * Stored under the map's mutex: a store through s could land in a table that
       * another thread's insert has just copied, and the old name would stay. */
      uint64_t name = (uintptr_t)device_fun, none = 0;
      (void)ctph_map_store(&kernel_names, (uintptr_t)host_fun, 0, &name, &none);
      __atomic_fetch_add(&names_generation, 1, __ATOMIC_RELEASE);
    }
  }
  if (real)
    real(fat_cubin_handle, host_fun, device_fun, device_name, thread_limit, tid, bid, bdim, gdim,
         wsize);
}

/** Forwards __cudaGetKernel and maps the returned cudaKernel_t to the stub's name. */
CTP_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func) {
  __typeof__(&__cudaGetKernel) real = CTPH_REAL(__cudaGetKernel);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  cudaError_t r = real(kernel, func);
  if (r == cudaSuccess && kernel && *kernel) {
    int saved = errno;
    struct ctph_map_slot *stub = ctph_map_find(&kernel_names, (uintptr_t)func, 0);
    if (stub) {
      int inserted;
      ctph_map_insert(&kernel_names, (uintptr_t)*kernel, 0,
                      __atomic_load_n(&stub->v1, __ATOMIC_RELAXED), 0, &inserted);
    }
    errno = saved;
  }
  return r;
}

/* The last kernel this thread looked up (launch loops repeat one kernel), valid
 * while names_generation has not moved. */
static __thread const void *last_func;
static __thread uint64_t last_id;
static __thread unsigned last_generation;

/* The string id of the kernel behind a host stub or cudaKernel_t (0 if unknown). */
uint64_t ctph_kernel_name_id(const void *func) {
  unsigned generation = __atomic_load_n(&names_generation, __ATOMIC_ACQUIRE);
  if (CTP_LIKELY(func == last_func && last_id && generation == last_generation))
    return last_id;
  struct ctph_map_slot *s = ctph_map_find(&kernel_names, (uintptr_t)func, 0);
  if (!s)
    return 0;
  uint64_t id = __atomic_load_n(&s->v2, __ATOMIC_RELAXED);
  if (CTP_LIKELY(id)) {
    last_func = func, last_id = id, last_generation = generation;
    return id;
  }
  const char *name = (const char *)(uintptr_t)__atomic_load_n(&s->v1, __ATOMIC_RELAXED);
  int saved = errno;
  id = name ? ctp_intern(name) : 0;
  errno = saved;
  __atomic_store_n(&s->v2, id, __ATOMIC_RELAXED);
  return id;
}
