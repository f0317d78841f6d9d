/*
 * The comparison behind `cutrace diff BEFORE AFTER` (docs/diff.md): each side is read
 * into the report's tables (report.h: per kernel, entry point, kind of memory
 * operation, GEMM shape, NVTX range) and the gaps analysis (gaps.h: busy and idle time
 * by cause), both fed by one streaming read of each file (model_tee.h); then the rows of one table are matched by their report
 * key across the sides, classified (added, removed, slower, faster, same) and ranked
 * by how much their total time changed. Memory is that of the two reports and the two
 * analyses: it grows with the number of distinct names, never with the records.
 *
 * --per-range NAME divides every count and time of a side by the instances of NVTX
 * range NAME in it (a training step), so runs of different lengths compare per
 * instance. Nothing here prints or exits: the command (cmd_diff.c) does.
 */
#ifndef CUTRACE_DIFF_H
#define CUTRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "gaps.h"
#include "report.h"

/* The headline's measures, in display order. */
enum ct_diff_metric {
  CT_DM_WALL,        /* first to last event of the side's files, ns */
  CT_DM_BUSY,        /* GPU busy (union of activities), summed over devices, ns */
  CT_DM_BUSY_PCT,    /* busy share of the devices' recorded spans, percent (never normalised) */
  CT_DM_IDLE,        /* GPU idle, summed over devices, ns; then one row per cause: */
  CT_DM_IDLE_CAUSE,  /* ... CT_GAP_NCAUSES rows, in enum ct_gap_cause order */
  CT_DM_UNRECORDED = CT_DM_IDLE_CAUSE + CT_GAP_NCAUSES, /* span the tracer paused in (1.3) */
  CT_DM_COMM,        /* communication kernels (NCCL, NVSHMEM): their union's busy ns */
  CT_DM_COMM_EXPOSED, /* the part of it with no compute kernel beside it, ns */
  CT_DM_KERNEL_NS,   /* kernels, GEMMs, graphs: GPU ns */
  CT_DM_KERNELS,     /* their activities (kernel launches) */
  CT_DM_MEMOP_NS,    /* copies and sets: GPU ns */
  CT_DM_BYTES,       /* bytes copied (sets excluded) */
  CT_DM_API_CALLS,   /* outermost intercepted calls */
  CT_DM_API_NS,      /* their CPU time, ns */
  CT_DM_COUNT
};

/* The metric's JSON/CSV id ("wall_span_ns", "idle_host_wait_ns", ...). */
const char *ct_diff_metric_id(enum ct_diff_metric m);

/* The metric's text label ("Wall span (first to last event)", "  host_wait", ...). */
const char *ct_diff_metric_label(enum ct_diff_metric m);

/* 1 for metrics in ns, 2 in bytes, 3 in percent, 0 for counts. */
int ct_diff_metric_unit(enum ct_diff_metric m);

/* One side (BEFORE or AFTER): every file of it merged. */
typedef struct ct_diff_side {
  ct_report r;               /* the report's tables; ranges too when asked */
  ct_gaps *g;                /* busy and idle time per device */
  int ranges;                /* also read NVTX ranges (--by range, --per-range) */
  uint64_t files, unreadable;
  uint64_t first_ns, last_ns; /* first and last event of all its files (0: none) */
} ct_diff_side;

/* Starts an empty side; ranges: also read the NVTX ranges. Returns 0, or -1 when out
 * of memory. */
int ct_diff_side_init(ct_diff_side *s, int ranges);

/*
 * Reads one trace file into s: the report's tables and the gaps analysis in one
 * streaming pass, and, when asked, the ranges in a second (report_ranges.c reads the
 * raw records, not the model's events). Returns 0 clean, 1 partial (what could be read
 * is counted), -1 unreadable, with st->message saying why (the first problem seen).
 */
int ct_diff_side_add_file(ct_diff_side *s, const char *path, ct_model_stats *st);

/* The headline's values of s (raw: not normalised), indexed by enum ct_diff_metric. */
void ct_diff_side_totals(const ct_diff_side *s, double v[CT_DM_COUNT]);

/* How many instances of NVTX range name s holds (0 when none, or when s was started
 * without ranges). */
uint64_t ct_diff_side_instances(const ct_diff_side *s, const char *name);

/* Frees the side's tables and analysis. */
void ct_diff_side_free(ct_diff_side *s);

/* ---- rows (diff_rows.c) ------------------------------------------------------------ */

enum ct_diff_status { CT_DIFF_SLOWER, CT_DIFF_FASTER, CT_DIFF_ADDED, CT_DIFF_REMOVED,
                      CT_DIFF_SAME, CT_DIFF_NSTATUS };

/* "slower", "faster", "added", "removed", "same". */
const char *ct_diff_status_name(enum ct_diff_status st);

/* A row's numbers on one side, raw (not normalised). */
typedef struct ct_diff_vals {
  uint64_t calls, total_ns;  /* instances and their summed time (GPU; CPU for apis, ranges) */
  uint64_t aux;              /* memcpy: bytes; ranges: GPU time of the work inside; else 0 */
} ct_diff_vals;

/* One name (report key) compared. */
typedef struct ct_diff_row {
  char *label;               /* demangled kernel, "HtoD pageable -> device", GEMM shape... */
  const void *key;           /* the report's key (of the side that has it) */
  size_t klen;
  ct_diff_vals before, after;
  const void *before_row, *after_row; /* the report rows (NULL: the side has none) */
  double delta_ns;           /* after - before total, each divided by its side's `per` */
  enum ct_diff_status status;
} ct_diff_row;

/* How two sides compare: the per-instance divisors and the threshold. */
typedef struct ct_diff_options {
  double per_before, per_after; /* 1, or the instances of the --per-range range */
  double threshold_pct;         /* same = avg within this percent and the same calls */
} ct_diff_options;

/* The rows of one table, in order: |delta_ns| descending, then label, then key. */
typedef struct ct_diff_table {
  enum ct_report_table t;
  ct_diff_row *rows;
  size_t n;
  size_t counts[CT_DIFF_NSTATUS]; /* rows of each status */
} ct_diff_table;

/*
 * Matches table t of the two reports by key, classifies and sorts the rows into *out.
 * Returns 0, or -1 when out of memory (out is then empty). The rows point into both
 * reports: free out before them.
 */
int ct_diff_table_build(ct_diff_table *out, enum ct_report_table t, const ct_report *before,
                        const ct_report *after, const ct_diff_options *o);

/* Frees the rows of a table. */
void ct_diff_table_free(ct_diff_table *tb);

/*
 * The status of a row from its raw values: added / removed when one side has no
 * calls; same when the calls per instance are equal and the average differs by at
 * most threshold_pct percent of the before average; else slower when the normalised
 * total grew (or, equal, when the average grew), faster otherwise.
 */
enum ct_diff_status ct_diff_classify(const ct_diff_vals *before, const ct_diff_vals *after,
                                     const ct_diff_options *o);

#endif
