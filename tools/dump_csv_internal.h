/*
 * What the two parts of the CSV export share: dump_csv_row.c formats a row's columns
 * (all but the last two) into a line buffer; dump_csv.c walks the model, holds rows
 * until their NVTX range and library call are known, and writes them.
 */
#ifndef CUTRACE_DUMP_CSV_INTERNAL_H
#define CUTRACE_DUMP_CSV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "demangle_cache.h"
#include "dump_csv.h"
#include "kattr.h"
#include "stats.h"

/* A growable byte buffer (a row being formatted). */
typedef struct csv_buf {
  char *p;
  size_t n, cap;
  int oom; /* a grow failed: the buffer holds less than was put */
} csv_buf;

/* Appends len bytes. */
void csv_put(csv_buf *b, const char *s, size_t len);
/* Appends s as one CSV field (quoted when it must be), then a comma unless last. */
void csv_put_text(csv_buf *b, const char *s, int last);
/* Appends a number field (then a comma). */
void csv_put_u64(csv_buf *b, uint64_t v);
/* Appends an empty field (a comma). */
void csv_put_empty(csv_buf *b);

/* ---- NVTX ranges per thread (dump_csv_ranges.c) ---- */

/* A closed NVTX push/pop range. */
typedef struct csv_range {
  uint64_t begin, end, depth;
  char *name;
} csv_range;

/* What the export keeps per thread of the current file. */
typedef struct csv_thread {
  int has_ranges;            /* the file has push/pop ranges of this thread */
  csv_range *ring;           /* the ranges seen and kept, in closing order: a ring */
  unsigned n, head, ring_cap; /* (ring_cap a power of two) */
  uint64_t d0_begin;         /* the latest begin of a depth-0 range seen */
  uint64_t last_end;         /* first pass over a whole file (END read, no damage): the
                                latest end of its ranges, after which none holds a
                                call; 0 when not known */
  uint64_t forgotten_end;    /* the latest end of a range dropped from the ring */
  csv_range *longr;          /* its long ranges (first pass), in closing order */
  size_t nlong, long_cap;
  uint64_t *recent;          /* first pass: begins of its latest calls (a ring) */
  size_t nrecent, recent_cap, recent_head;
  uint64_t calls;            /* its call rows so far (second pass) */
  uint64_t *pending;         /* seqs of held rows waiting for their range */
  size_t npending, cap;
} csv_thread;

typedef struct csv_ranges csv_ranges;

/* Per-thread ranges of one file; a range holding long_calls of its thread's calls is
 * long. NULL when out of memory. */
csv_ranges *csv_ranges_new(size_t long_calls);
void csv_ranges_free(csv_ranges *rs);

/* The entry of thread tid, created when new (NULL when out of memory). */
csv_thread *csv_ranges_thread(csv_ranges *rs, uint64_t tid);

/* First pass over path: which threads have push/pop ranges, and their long ranges; and
 * *lateness, the most any span or activity record comes behind the latest end of those
 * before it in the file (0 when none, or when the file cannot be read; lateness NULL:
 * not measured, and the GPU and TRACER records not read). */
void csv_ranges_prescan(csv_ranges *rs, const char *path, uint64_t *lateness);

/* Keeps a range of tr just read (newest: the latest end of a row). Returns its entry
 * (valid until the next call), NULL when out of memory. */
const csv_range *csv_ranges_add(csv_thread *tr, const struct ct_range *r, const char *name,
                                uint64_t newest);

/* The innermost range of tr around time t as far as seen: 1 known (*name; NULL for
 * none), 0 not yet (a range still to close may hold it), -1 never (forgotten). */
int csv_range_known(const csv_thread *tr, uint64_t t, const char **name);

/* The innermost long range of tr around t, or NULL. */
const char *csv_range_long(const csv_thread *tr, uint64_t t);

/* Adds row seq to the rows of tr waiting for their range (pending, in rising seqs;
 * those before head_seq, written already, are forgotten when it is full). 0, or -1 out
 * of memory (not added). dump --csv's rows and gaps' (gaps_rows.c) wait this way. */
int csv_thread_wait(csv_thread *tr, uint64_t seq, uint64_t head_seq);

/* Standard input cannot be read twice (the first pass over the ranges, then the rows):
 * copies it into an unlinked temporary file (TMPDIR, else /tmp) and names that as
 * /proc/self/fd/N in path. Returns its descriptor, or -1 (errno says why). */
int csv_spool_stdin(char *path, size_t cap);

/* Takes the spooled path's "PATH: " off the front of a reader's message (which then
 * names no file, like one about "-"). */
void csv_spool_message(char *message, const char *spooled);

/* The header row (every column, CRLF-terminated). */
extern const char csv_header[];

struct ct_graph_inv;

/* Formats the columns of an activity's row up to, not including, library_call (each
 * followed by a comma). attrs: the file's kernel attributes (NULL: none); inv: what a
 * graph launch ran (NULL: not known or not a graph launch). */
void csv_format_activity(csv_buf *b, ct_demangle_cache *d, const ct_activity *a,
                         const ct_kattr_table *attrs, const struct ct_graph_inv *inv);

/* The same for an intercepted call's row. */
void csv_format_call(csv_buf *b, const ct_span *s, const struct ct_graph_inv *inv);

#endif
