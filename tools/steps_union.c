/*
 * Busy time as a union of intervals (steps_internal.h: ct_busy_union). Intervals come
 * nearly in end order, so a new one almost always lands at or near the tail: the
 * search for the blocks it overlaps runs backwards from there.
 */
#include <stdlib.h>
#include <string.h>

#include "steps_internal.h"

int ct_busy_add(ct_busy_union *u, uint64_t start, uint64_t end) {
  if (end < start) return 0;
  size_t k = u->n; /* first block after [start, end] */
  while (k > u->head && u->b[k - 1].start > end) k--;
  size_t j = k; /* first block overlapping or touching it */
  while (j > u->head && u->b[j - 1].end >= start) j--;
  if (j < k) { /* merge b[j .. k) into one block at j */
    if (u->b[j].start < start) start = u->b[j].start;
    if (u->b[k - 1].end > end) end = u->b[k - 1].end;
    u->b[j] = (ct_busy_block){start, end};
    memmove(&u->b[j + 1], &u->b[k], (u->n - k) * sizeof *u->b);
    u->n -= k - j - 1;
    return 0;
  }
  if (u->n == u->cap) {
    if (u->head > u->n / 2) { /* reuse the folded front */
      memmove(u->b, &u->b[u->head], (u->n - u->head) * sizeof *u->b);
      u->n -= u->head;
      k -= u->head;
      u->head = 0;
    } else {
      size_t ncap = u->cap ? u->cap * 2 : 2; /* one union per step: most hold a block or two */
      ct_busy_block *nb = realloc(u->b, ncap * sizeof *nb);
      if (!nb) return -1;
      u->b = nb;
      u->cap = ncap;
    }
  }
  memmove(&u->b[k + 1], &u->b[k], (u->n - k) * sizeof *u->b);
  u->b[k] = (ct_busy_block){start, end};
  u->n++;
  return 0;
}

void ct_busy_fold(ct_busy_union *u, uint64_t horizon, ct_busy_fold_fn fn, void *user) {
  while (u->head < u->n && (horizon == UINT64_MAX || u->b[u->head].end < horizon)) {
    fn(user, u->b[u->head].start, u->b[u->head].end);
    u->head++;
  }
  if (u->head == u->n) u->head = u->n = 0;
}

void ct_busy_free(ct_busy_union *u) {
  free(u->b);
  memset(u, 0, sizeof *u);
}
