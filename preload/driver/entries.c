/* The driver.def table: names, versions and the two wrappers' slots of each entry. */
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
