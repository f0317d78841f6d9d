/* A ring buffer's growth, shared by the post-processor's queues (model.c's runs,
 * dump --csv's and gaps' held rows, dump_csv_ranges.c's closed ranges, gaps' per-thread
 * calls, steps' work unions): entries kept in an array of a power-of-two capacity, the
 * oldest at head, indexed by (head + i) & (cap - 1). */
#ifndef CUTRACE_TOOLS_RING_H
#define CUTRACE_TOOLS_RING_H

#include <stdlib.h>
#include <string.h>

/*
 * A new array of new_cap (>= n) elements of elem bytes: the n entries of the ring a
 * (cap entries, the oldest at head) in order from index 0, the rest zeroed. NULL when
 * out of memory (a is left as it is). The caller frees a and sets head to 0.
 */
static inline void *ct_ring_copy(const void *a, size_t elem, size_t cap, size_t head, size_t n,
                                 size_t new_cap) {
  char *na = calloc(new_cap, elem);
  if (!na || !n) return na;
  size_t first = cap - head < n ? cap - head : n; /* from head to the array's end */
  memcpy(na, (const char *)a + head * elem, first * elem);
  memcpy(na + first * elem, a, (n - first) * elem);
  return na;
}

#endif
