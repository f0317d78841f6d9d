/*
 * cuGetProcAddress and cuGetProcAddress_v2: forward with the same arguments, then
 * hand back our wrapper when the name, ABI version and per-thread flag match a
 * driver.def entry. Each entry's wrapper forwards to the pointer the first lookup
 * returned; a later lookup that returns another pointer for it gets that pointer
 * unwrapped (never a wrong forward). The name "cuGetProcAddress" itself is answered
 * with the wrapper of the right arity: 4 arguments at versions 11030..11999, 5 from
 * 12000 (cudaTypedefs.h PFN_cuGetProcAddress_v11030 / _v12000).
 */
#include <dlfcn.h>
#include <string.h>

#include "driver_internal.h"

typedef CUresult (*get_proc4_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*get_proc5_fn)(const char *, void **, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult *);

CTP_EXPORT CUresult ctpd_x_cuGetProcAddress(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags) __asm__("cuGetProcAddress");
CTP_EXPORT CUresult ctpd_x_cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *status)
    __asm__("cuGetProcAddress_v2");

static void *real_get_proc4, *real_get_proc5; /* what the slot wrappers forward to */

static const struct ctpd_entry *find_proc(const char *name, int version, cuuint64_t flags) {
  int pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  for (unsigned i = 0; i < ctpd_entry_count; i++) {
    const struct ctpd_entry *e = &ctpd_entries[i];
    if (version >= e->min_version && version < e->max_version &&
        (!e->has_twin || e->per_thread == pt) && strcmp(e->proc_name, name) == 0)
      return e;
  }
  return NULL;
}

void *ctpd_wrap_entry(const struct ctpd_entry *e, void *real) {
  if (ctpd_in_self(real))
    return real; /* already ours (handed around by the app) */
  void *expected = NULL;
  if (__atomic_compare_exchange_n(e->real_slot, &expected, real, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return e->wrapper;
  return expected == real ? e->wrapper : real;
}

static CUresult get_proc4_slot(const char *, void **, int, cuuint64_t);
static CUresult get_proc5_slot(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

/* The cuGetProcAddress wrapper of the arity `four` (1: 4 arguments) for real. */
static void *wrap_get_proc(int four, void *real) {
  if (ctpd_in_self(real))
    return real;
  void **slot = four ? &real_get_proc4 : &real_get_proc5;
  void *expected = NULL;
  if (__atomic_compare_exchange_n(slot, &expected, real, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
      expected == real)
    return four ? (void *)get_proc4_slot : (void *)get_proc5_slot;
  return real;
}

/* What a successful lookup of (symbol, version, flags) that found real returns. */
static void *wrap_proc(const char *symbol, int version, cuuint64_t flags, void *real) {
  if (strcmp(symbol, "cuGetProcAddress") == 0)
    return version >= 12000 ? wrap_get_proc(0, real)
                            : version >= 11030 ? wrap_get_proc(1, real) : real;
  const struct ctpd_entry *e = find_proc(symbol, version, flags);
  return e ? ctpd_wrap_entry(e, real) : real;
}

/* The common part: forwards, then wraps when the caller is not libtrace.so. */
static CUresult get_proc_common(void *real, int four, const void *ra, const char *symbol,
                                void **pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status) {
  if (!real)
    return CUDA_ERROR_NOT_FOUND;
  CUresult r = four ? ((get_proc4_fn)real)(symbol, pfn, version, flags)
                    : ((get_proc5_fn)real)(symbol, pfn, version, flags, status);
  if (r != CUDA_SUCCESS || !symbol || !pfn || !*pfn)
    return r;
  int saved = errno;
  ctpd_usage_init();
  if (!ctpd_in_self(ra))
    *pfn = wrap_proc(symbol, version, flags, *pfn);
  errno = saved;
  return r;
}

static CUresult get_proc4_slot(const char *symbol, void **pfn, int version, cuuint64_t flags) {
  return get_proc_common(__atomic_load_n(&real_get_proc4, __ATOMIC_ACQUIRE), 1,
                         __builtin_return_address(0), symbol, pfn, version, flags, NULL);
}

static CUresult get_proc5_slot(const char *symbol, void **pfn, int version, cuuint64_t flags,
                               CUdriverProcAddressQueryResult *status) {
  return get_proc_common(__atomic_load_n(&real_get_proc5, __ATOMIC_ACQUIRE), 0,
                         __builtin_return_address(0), symbol, pfn, version, flags, status);
}

/** cuGetProcAddress (the CUDA 11.3 ABI, 4 arguments), wrapping what it returns. */
CTP_EXPORT CUresult ctpd_x_cuGetProcAddress(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags) {
  return get_proc_common(ctpd_next(CTPH_ID_cuGetProcAddress), 1, __builtin_return_address(0),
                         symbol, pfn, version, flags, NULL);
}

/** cuGetProcAddress_v2 (5 arguments), wrapping what it returns. */
CTP_EXPORT CUresult ctpd_x_cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *status) {
  return get_proc_common(ctpd_next(CTPH_ID_cuGetProcAddress_v2), 0, __builtin_return_address(0),
                         symbol, pfn, version, flags, status);
}

/* Our own export of name (a hooks.def wrapper), or NULL. */
static void *self_export(const char *name) {
  static void *self;
  void *h = __atomic_load_n(&self, __ATOMIC_ACQUIRE);
  if (!h) {
    Dl_info info;
    if (!dladdr((void *)&self_export, &info) || !info.dli_fname)
      return NULL;
    h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
      return NULL;
    __atomic_store_n(&self, h, __ATOMIC_RELEASE);
  }
  void *p = ctpd_real_dlsym ? ctpd_real_dlsym(h, name) : NULL;
  return p && ctpd_in_self(p) ? p : NULL;
}

void *ctpd_wrap_symbol(const char *name, void *real) {
  for (unsigned i = 0; i < ctpd_entry_count; i++)
    if (strcmp(ctpd_entries[i].symbol, name) == 0) {
      ctpd_usage_init();
      return ctpd_wrap_entry(&ctpd_entries[i], real);
    }
  if (strcmp(name, "cuGetProcAddress_v2") == 0) {
    ctpd_usage_init();
    return wrap_get_proc(0, real);
  }
  if (strcmp(name, "cuGetProcAddress") == 0) {
    ctpd_usage_init();
    return wrap_get_proc(1, real);
  }
  /* A runtime or cuBLAS entry point fetched by handle (as XLA does): our exported
   * wrapper, when the function it forwards to is exactly the one found. */
  for (unsigned id = 0; id < CTPH_ID_COUNT; id++) {
    if (strcmp(ctph_hook_name((enum ctph_id)id), name) != 0)
      continue;
    if (ctph_real_resolve((enum ctph_id)id) == real) {
      void *ours = self_export(name);
      if (ours)
        return ours;
    }
    break;
  }
  return real;
}
