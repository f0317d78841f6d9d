/*
 * Allocations matched with their releases (format 1.5 ALLOC records; tools/report_alloc.c):
 * what report's memory allocations table and dump --chrome's memory counters share.
 */
#ifndef CUTRACE_REPORT_ALLOC_H
#define CUTRACE_REPORT_ALLOC_H

#include <stdint.h>

#include "model.h"

/* The key of a memory allocations row. */
typedef struct ct_alloc_key {
  uint64_t pid, device, kind; /* kind: CT_ALLOC_* */
} ct_alloc_key;

struct ct_corr_table;

/* What one allocation or release did to the live allocations of its file. */
typedef struct ct_alloc_change {
  int release;          /* 1: a release (or unregistration) */
  int matched;          /* a release: 1 when its allocation is in the file */
  ct_alloc_key key;     /* where it counts: the allocation's row (a matched release's too;
                           an unmatched release: its own entry point's kind) */
  uint64_t bytes;       /* bytes allocated, or released (an unmatched release: 0) */
  int dropped;          /* an allocation of a pointer still live (its release unseen): */
  ct_alloc_key dropped_key; /* the old allocation, forgotten */
  uint64_t dropped_bytes;
} ct_alloc_change;

/*
 * Matches an ALLOC span with the live allocations of its file (live: pointer ->
 * allocation, a zeroed table started on first use; report and dump --chrome share it)
 * and says what changed in *ch: an allocation is kept by its pointer, a release takes
 * out the allocation of its pointer. Returns 1 for a successful allocation or release,
 * 0 for any other span (nothing changes), -1 when out of memory.
 */
int ct_alloc_match(struct ct_corr_table *live, const ct_span *s, ct_alloc_change *ch);

/* Frees the live allocations of a file (the table is zeroed: ready for the next file). */
void ct_alloc_match_done(struct ct_corr_table *live);

/* Live bytes less bytes, not below 0 (a row's live count after a release). */
static inline uint64_t ct_alloc_less(uint64_t live, uint64_t bytes) {
  return live - (bytes < live ? bytes : live);
}

/* "device", "pinned", "managed", "async", "registered", "vmm", "array" (CT_ALLOC_*), or "?". */
const char *ct_alloc_kind_name(uint64_t kind);

#endif
