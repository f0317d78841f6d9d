/*
 * What the files behind `cutrace steps` share (not a public interface):
 *   steps.c          choosing the range, collecting the steps (ct_steps_read)
 *   steps_measure.c  the pass over the model and the gaps analysis that measures them
 *   steps_union.c    busy time as a union of intervals, folded as it becomes final
 *   steps_summary.c  statistics, outliers and their reasons
 *   steps_rows.c     the measured steps: the newest in memory, the older ones in a
 *                    temporary file; the cursor that reads them back
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

#ifndef CT_STEPS_ROWS_MEM /* (a test build sets it small) */
#define CT_STEPS_ROWS_MEM 4096 /* the newest steps kept in memory while measuring */
#endif

/* Creates f->rows, empty. Returns 0, -1 when out of memory. */
int ct_step_rows_new(ct_steps_file *f);

/*
 * The row of step i to add to (created from f->spans when first asked for). The
 * newest CT_STEPS_ROWS_MEM rows asked for are in memory; asking for a later one moves
 * the oldest to the temporary file (or, when it cannot be written, keeps them all in
 * memory). A row already in the file gets a patch row instead (zero, no CPU range):
 * what is added to it is added to the file's row when read, as if added there.
 * *kernel_limit gets how many kernels the row may keep by name (CT_STEP_KERNELS; a
 * patch row any number). Valid until the next call; NULL when out of memory.
 */
ct_step *ct_step_rows_get(ct_steps_file *f, size_t i, unsigned *kernel_limit);

/* Creates the rows never asked for, once measured. Returns 0, -1 when out of memory. */
int ct_step_rows_finish(ct_steps_file *f);

/* Frees the rows and closes their file; NULL is ignored. */
void ct_step_rows_free(struct ct_step_rows *r);

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
