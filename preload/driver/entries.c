/* The driver.def table: names, versions and the two wrappers' slots of each entry. */
#include <dlfcn.h>

#include "driver_internal.h"

#define CTPD(sym, proc, pt, twin, minv, maxv, family) \
  extern void *ctpd_slot_##sym CTPD_HIDDEN;           \
  extern void ctpd_w_##sym(void) CTPD_HIDDEN;
#include "driver.def"
#undef CTPD

const struct ctpd_entry ctpd_entries[] = {
#define CTPD(sym, proc, pt, twin, minv, maxv, family) \
  {#sym, proc, pt, twin, minv, maxv, (void *)ctpd_w_##sym, &ctpd_slot_##sym},
#include "driver.def"
#undef CTPD
};

const unsigned ctpd_entry_count = sizeof ctpd_entries / sizeof ctpd_entries[0];

void *ctpd_next_in_libcuda(enum ctph_id id) {
  static void *local[CTPH_ID_COUNT];
  void *p = __atomic_load_n(&local[id], __ATOMIC_ACQUIRE);
  if (p || !ctpd_real_dlsym)
    return p;
  int saved = errno;
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (lib) {
    p = ctpd_real_dlsym(lib, ctph_hook_name(id));
    if (p && ctpd_in_self(p))
      p = NULL;
    if (p)
      __atomic_store_n(&local[id], p, __ATOMIC_RELEASE);
    dlclose(lib);
  }
  errno = saved;
  return p;
}
