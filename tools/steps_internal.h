/*
 * What the files behind `cutrace steps` share (not a public interface):
 *   steps.c          choosing the range, collecting the steps (ct_steps_read)
 *   steps_measure.c  the pass over the model and the gaps analysis that measures them
 *   steps_union.c    busy time as a union of intervals, folded as it becomes final
 *   steps_summary.c  statistics, outliers and their reasons
 *   steps_rows.c     the measured steps: the newest in memory, the older ones in a
 *                    temporary file; the cursor that reads them back
 *   steps_spans.c    the range instances sorted and the steps' spans, in bounded memory
 *                    (temporary files past CT_STEPS_SPANS_MEM)
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

/* ---- the range instances sorted, the steps' spans (steps_spans.c) ---------------- */

#ifndef CT_STEPS_SPANS_MEM /* (a test build sets both small) */
#define CT_STEPS_SPANS_MEM 65536 /* instances sorted, spans kept in memory (2.5 MiB) */
#endif
#ifndef CT_STEPS_SPANS_PAGE
#define CT_STEPS_SPANS_PAGE 4096 /* spans read back from the file at a time */
#endif

/* A matching range instance as ct_range_each handed it over. */
typedef struct ct_step_instance {
  uint64_t tid, begin_ns, end_ns, gpu_first_ns, gpu_last_ns;
} ct_step_instance;

typedef struct ct_instance_sorter ct_instance_sorter;

/* An empty sorter, or NULL when out of memory. */
ct_instance_sorter *ct_instance_sorter_new(void);

/* Adds an instance (past CT_STEPS_SPANS_MEM, sorted runs go to a temporary file).
 * Returns 0, -1 when out of memory. */
int ct_instance_sorter_add(ct_instance_sorter *s, const ct_step_instance *in);

/* Calls fn for every instance added, by begin (the enclosing one first at equal begins,
 * then by thread and GPU span); fn returns 0, or -1 to stop. Once per sorter. Returns
 * 0, -1 when out of memory, the temporary file could not be read, or fn stopped. */
int ct_instance_sorter_each(ct_instance_sorter *s,
                            int (*fn)(void *user, const ct_step_instance *in), void *user);

/* Frees the sorter and closes its file; NULL is ignored. */
void ct_instance_sorter_free(ct_instance_sorter *s);

/* Creates f->spans, empty. Returns 0, -1 when out of memory. */
int ct_step_spans_new(ct_steps_file *f);

/* Appends the next step's span (its interval end is set from the next one's begin, or
 * by ct_step_spans_finish) and counts it in f->nsteps. Returns 0, -1 out of memory. */
int ct_step_spans_append(ct_steps_file *f, const ct_step_span *sp);

/* Stores the last span, its interval ending at the later of its range end and its GPU
 * span end. Returns 0, -1 when out of memory. */
int ct_step_spans_finish(ct_steps_file *f);

/* Step i's span (i < f->nsteps, once finished); valid until the next call. When the
 * temporary file cannot be read, a span of zeros (ct_step_spans_failed says so). */
const ct_step_span *ct_step_span_at(const ct_steps_file *f, size_t i);

/* The number of steps beginning at or before t (a binary search). */
size_t ct_steps_begun_search(const ct_steps_file *f, uint64_t t);

/* 1 when a span could not be read back from the temporary file. */
int ct_step_spans_failed(const ct_steps_file *f);

/* Frees the spans and closes their file; NULL is ignored. */
void ct_step_spans_free(struct ct_step_spans *s);

/* One busy block [start, end). */
typedef struct ct_busy_block {
  uint64_t start, end;
} ct_busy_block;

/*
 * The union of intervals given roughly in end order (the model's delivery order):
 * disjoint blocks sorted by start. Blocks that end before a horizon (no later interval
 * should reach them) are handed to a fold function; they are kept CT_BUSY_KEEP_NS more
 * (at most CT_BUSY_KEEP_BLOCKS), so that an interval reaching them after all (delivered
 * late, or longer than any before) adds only the time they do not cover, folded at
 * once: nothing is counted twice. Memory stays bounded by the blocks within the longest
 * interval's reach and the time kept.
 */
#define CT_BUSY_KEEP_NS 10000000000ull /* 10 s of trace time */
#define CT_BUSY_KEEP_BLOCKS (1u << 16)
typedef struct ct_busy_union {
  ct_busy_block *b;
  size_t head, n, cap;   /* folded blocks kept: b[0 .. head); live blocks: b[head .. n) */
  uint64_t forgotten;    /* the end of the newest folded block no longer kept: time before
                            it is final (an interval reaching into it adds what lies after) */
} ct_busy_union;

/* Called with each block as it becomes final. */
typedef void (*ct_busy_fold_fn)(void *user, uint64_t start, uint64_t end);

/* Adds [start, end) to u (merging what it overlaps or touches); the parts that lie among
 * the folded blocks and that they do not cover are folded at once (fn). Returns 0, -1
 * when out of memory. */
int ct_busy_add(ct_busy_union *u, uint64_t start, uint64_t end, ct_busy_fold_fn fn, void *user);

/* Folds (hands to fn) every block ending before horizon; all when horizon is
 * UINT64_MAX. */
void ct_busy_fold(ct_busy_union *u, uint64_t horizon, ct_busy_fold_fn fn, void *user);

/* Frees u's blocks (fold them first). */
void ct_busy_free(ct_busy_union *u);

#endif
