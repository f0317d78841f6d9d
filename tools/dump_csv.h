/*
 * CSV export (cutrace dump --csv): one row per GPU activity and/or per intercepted CUDA
 * or library call, RFC 4180, with the columns docs/dump.md lists. Rows are written as
 * the model delivers them (per file, in nondecreasing end time); a row waits only for
 * the NVTX range around its call and the library call it was made in, in a bounded
 * queue (dump_csv.c), so memory does not grow with the trace.
 */
#ifndef CUTRACE_DUMP_CSV_H
#define CUTRACE_DUMP_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* Which rows the table holds. */
enum ct_csv_rows { CT_CSV_ROWS_GPU = 1, CT_CSV_ROWS_CALLS = 2, CT_CSV_ROWS_ALL = 3 };

typedef struct ct_csv ct_csv;

/* Counts of one file's export (beside the model's ct_model_stats). */
typedef struct ct_csv_file_stats {
  uint64_t rows;       /* rows written */
  uint64_t unresolved; /* rows written before their NVTX range or library call was known
                          (the hold limit was reached, or the ranges were forgotten) */
  uint64_t late;       /* rows written out of end order: their record came more than 2 s
                          of trace time late while the model held more than its join_hold
                          events (model.h), so rows ending after them were written */
} ct_csv_file_stats;

/* Starts a table on out (writes the header row); rows: a ct_csv_rows mask. NULL when
 * out of memory. */
ct_csv *ct_csv_begin(FILE *out, unsigned rows);

/* Writes one trace file's rows. Returns like ct_model_read (0 clean, 1 partial: every
 * row before the damage was written, -1 unreadable) and fills *st and *fst. */
int ct_csv_add_file(ct_csv *c, const char *path, ct_model_stats *st, ct_csv_file_stats *fst);

/* Flushes and frees c. Returns 0, or -1 when writing failed (errno says why). */
int ct_csv_end(ct_csv *c);

#endif
