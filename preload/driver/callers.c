/*
 * Who called a driver wrapper, by return address (a handful of call sites, cached
 * in a small lock-free table). Calls from the CUDA runtime whose entry points the
 * runtime-level hooks wrap (the libcudart that dlsym(RTLD_NEXT) finds from here:
 * its own call is already the span), from libcuda itself (its internal calls
 * through its exported names) and from libtrace.so only forward: a runtime call
 * that reaches the driver stays ONE span. Anything else (the app, cuBLAS, Triton
 * launchers, a libcudart loaded RTLD_LOCAL and called through dlsym handles as
 * XLA's stubs do, whose calls the runtime hooks never see) is traced.
 */
#include <dlfcn.h>
#include <string.h>

#include "driver_internal.h"

#define CACHE_SIZE 512
/* (return address << 2) | class; 0 = empty. */
static uint64_t cache[CACHE_SIZE];

enum { CALLER_TRACED = 1, CALLER_PASSES = 2 };

/* 1 when the libcudart mapped at base is the one the runtime-level hooks forward to. */
static int runtime_hooked(const void *base) {
  void *fn = ctph_real_resolve(CTPH_ID_cudaMalloc);
  Dl_info info;
  return fn && dladdr(fn, &info) && info.dli_fbase == base;
}

static int classify(const void *ra) {
  Dl_info info;
  if (!dladdr(ra, &info) || !info.dli_fname)
    return CALLER_TRACED;
  if (ctpd_in_self(ra))
    return CALLER_PASSES;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  if (strncmp(base, "libcudart.so", 12) == 0)
    return runtime_hooked(info.dli_fbase) ? CALLER_PASSES : CALLER_TRACED;
  if (strncmp(base, "libcuda.so", 10) == 0)
    return CALLER_PASSES;
  return CALLER_TRACED;
}

int ctpd_caller_passes(const void *ra) {
  uint64_t key = (uint64_t)(uintptr_t)ra << 2;
  unsigned h = (unsigned)(((uint64_t)(uintptr_t)ra * 0x9E3779B97F4A7C15ull) >> 55) % CACHE_SIZE;
  for (unsigned i = 0; i < 8; i++) {
    uint64_t v = __atomic_load_n(&cache[(h + i) % CACHE_SIZE], __ATOMIC_RELAXED);
    if ((v & ~3ull) == key)
      return (v & 3) == CALLER_PASSES;
    if (!v)
      break;
  }
  int saved = errno;
  int cls = classify(ra);
  errno = saved;
  for (unsigned i = 0; i < 8; i++) {
    uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&cache[(h + i) % CACHE_SIZE], &expected, key | (uint64_t)cls,
                                    0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
        (expected & ~3ull) == key)
      break;
  }
  return cls == CALLER_PASSES;
}
