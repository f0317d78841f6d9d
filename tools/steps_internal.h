/*
 * What the files behind `cutrace steps` share (not a public interface):
 *   steps.c          choosing the range, collecting the steps (ct_steps_read)
 *   steps_measure.c  the pass over the model and the gaps analysis that measures them
 *   steps_union.c    busy time as a union of intervals, folded as it becomes final
 *   steps_summary.c  statistics, outliers and their reasons
 */
#ifndef CUTRACE_STEPS_INTERNAL_H
#define CUTRACE_STEPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "steps.h"

/*
 * Measures f's steps (f->steps sorted, intervals set) from one read of the model with
 * the gaps analysis. Returns 0 clean, 1 partial, -1 unreadable (f->st set).
 */
int ct_steps_measure(const char *path, ct_steps_file *f);

/* One busy block [start, end). */
typedef struct ct_busy_block {
  uint64_t start, end;
} ct_busy_block;

/*
 * The union of intervals given roughly in end order (the model's delivery order):
 * disjoint blocks sorted by start. Blocks that end before a horizon (no later interval
 * can reach them) are handed to a fold function and dropped, so memory stays bounded
 * by the blocks within the longest interval's reach.
 */
typedef struct ct_busy_union {
  ct_busy_block *b;
  size_t head, n, cap;   /* live blocks: b[head .. n) */
} ct_busy_union;

/* Called with each block as it becomes final. */
typedef void (*ct_busy_fold_fn)(void *user, uint64_t start, uint64_t end);

/* Adds [start, end) to u (merging what it overlaps or touches). Returns 0, -1 out of memory. */
int ct_busy_add(ct_busy_union *u, uint64_t start, uint64_t end);

/* Folds (hands to fn, drops) every block ending before horizon; all when horizon is
 * UINT64_MAX. */
void ct_busy_fold(ct_busy_union *u, uint64_t horizon, ct_busy_fold_fn fn, void *user);

/* Frees u's blocks (fold them first). */
void ct_busy_free(ct_busy_union *u);

#endif
