/*
 * Busy time as a union of intervals (steps_internal.h: ct_busy_union). Intervals come
 * nearly in end order, so a new one almost always lands at or near the tail: the
 * search for the blocks it overlaps runs backwards from there.
 *
 * Folded blocks stay in the array, before the live ones (b[0 .. head)), for
 * CT_BUSY_KEEP_NS of trace time behind the horizon (at most CT_BUSY_KEEP_BLOCKS): an
 * interval that comes after its time was folded (a record the model delivered late, or
 * a kernel longer than any before) adds only what they do not cover, folded at once,
 * so no time is counted twice. Time before the blocks no longer kept is taken as final:
 * an interval reaching into it adds only what lies after it.
 */
#include <stdlib.h>
#include <string.h>

#include "steps_internal.h"

/* Room for one more block; -1 when out of memory. */
static int reserve(ct_busy_union *u) {
  if (u->n < u->cap) return 0;
  size_t ncap = u->cap ? u->cap * 2 : 2; /* one union per step: most hold a block or two */
  ct_busy_block *nb = realloc(u->b, ncap * sizeof *nb);
  if (!nb) return -1;
  u->b = nb;
  u->cap = ncap;
  return 0;
}

/* Inserts [start, end) at index i (among the folded blocks) and folds it. */
static int fold_new(ct_busy_union *u, size_t i, uint64_t start, uint64_t end, ct_busy_fold_fn fn,
                    void *user) {
  if (reserve(u) < 0) return -1;
  memmove(&u->b[i + 1], &u->b[i], (u->n - i) * sizeof *u->b);
  u->b[i] = (ct_busy_block){start, end};
  u->n++;
  u->head++;
  fn(user, start, end);
  return 0;
}

/* The part of [*start, end) that overlaps or precedes the newest folded block: the pieces
 * the folded blocks do not cover are kept and folded at once. Returns 1 when nothing is
 * left (else *start is past every folded block), 0, -1 when out of memory. */
static int add_to_folded(ct_busy_union *u, uint64_t *start, uint64_t end, ct_busy_fold_fn fn,
                         void *user) {
  size_t lo = 0, hi = u->head; /* the first folded block that ends after start */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (u->b[mid].end <= *start) lo = mid + 1;
    else hi = mid;
  }
  uint64_t at = *start;
  for (size_t i = lo; i < u->head && at < end; i++) {
    if (u->b[i].start >= end) { /* the rest lies between two folded blocks */
      if (fold_new(u, i, at, end, fn, user) < 0) return -1;
      return 1;
    }
    if (at < u->b[i].start) {
      if (fold_new(u, i, at, u->b[i].start, fn, user) < 0) return -1;
      i++;
    }
    if (u->b[i].end > at) at = u->b[i].end;
  }
  *start = at;
  return at >= end;
}

int ct_busy_add(ct_busy_union *u, uint64_t start, uint64_t end, ct_busy_fold_fn fn, void *user) {
  if (end < start) return 0;
  if (u->forgotten && start < u->forgotten) {
    if (end <= u->forgotten) return 0;
    start = u->forgotten;
  }
  if (u->head && start < u->b[u->head - 1].end) {
    int rc = add_to_folded(u, &start, end, fn, user);
    if (rc) return rc < 0 ? -1 : 0;
  }
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
  if (reserve(u) < 0) return -1;
  memmove(&u->b[k + 1], &u->b[k], (u->n - k) * sizeof *u->b);
  u->b[k] = (ct_busy_block){start, end};
  u->n++;
  return 0;
}

/* Drops the folded blocks no longer kept (behind horizon by more than CT_BUSY_KEEP_NS,
 * or beyond CT_BUSY_KEEP_BLOCKS), once they are many enough to be worth the move. */
static void forget(ct_busy_union *u, uint64_t horizon) {
  if (!u->head || u->b[0].end + CT_BUSY_KEEP_NS >= horizon) {
    if (u->head <= CT_BUSY_KEEP_BLOCKS) return;
  }
  size_t lo = 0, hi = u->head; /* the first folded block still kept (ends ascend) */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (u->b[mid].end + CT_BUSY_KEEP_NS < horizon) lo = mid + 1;
    else hi = mid;
  }
  size_t drop = lo;
  if (u->head - drop > CT_BUSY_KEEP_BLOCKS) drop = u->head - CT_BUSY_KEEP_BLOCKS;
  if (!drop || (drop < 64 && drop * 2 < u->n)) return;
  if (u->b[drop - 1].end > u->forgotten) u->forgotten = u->b[drop - 1].end;
  memmove(u->b, &u->b[drop], (u->n - drop) * sizeof *u->b);
  u->n -= drop;
  u->head -= drop;
}

void ct_busy_fold(ct_busy_union *u, uint64_t horizon, ct_busy_fold_fn fn, void *user) {
  while (u->head < u->n && (horizon == UINT64_MAX || u->b[u->head].end < horizon)) {
    fn(user, u->b[u->head].start, u->b[u->head].end);
    u->head++;
  }
  if (horizon != UINT64_MAX) forget(u, horizon);
}

void ct_busy_free(ct_busy_union *u) {
  free(u->b);
  memset(u, 0, sizeof *u);
}
