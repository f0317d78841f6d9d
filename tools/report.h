/*
 * The aggregation behind `cutrace report`: per kernel, CUDA entry point, kind of
 * memory operation and GEMM shape, exact counts and totals plus a bounded-memory
 * median (stats.h), fed from the trace model's joined events. One ct_report can take
 * several files (merged tables) or one each (--per-process).
 */
#ifndef CUTRACE_REPORT_H
#define CUTRACE_REPORT_H

#include <stdint.h>

#include "model.h"
#include "output.h"
#include "stats.h"

/* A row of the kernels table (GPU time of kernels, library GEMMs and graph launches). */
typedef struct ct_kernel_row {
  ct_dur_stats d;
  uint64_t type; /* CT_GPU_* of the first activity */
} ct_kernel_row;

/* A row of the CUDA API table (CPU time of one entry point). */
typedef struct ct_api_row {
  ct_dur_stats d;
  uint64_t errors;  /* calls that returned nonzero */
  uint64_t driver;  /* calls flagged CT_API_DRIVER */
} ct_api_row;

/* The key of a memory-operation row. */
typedef struct ct_memop_key {
  uint64_t kind, src, dst; /* CT_MEMOP_* (0 = unknown), CT_MEM_* */
} ct_memop_key;

typedef struct ct_memop_row {
  ct_dur_stats d;
  uint64_t bytes;
} ct_memop_row;

/* The key of a GEMM row; the entry point's name follows it in the map key. */
typedef struct ct_gemm_key {
  uint64_t m, n, k, batch, transa, transb, atype, btype, ctype, compute_type, epilogue;
} ct_gemm_key;

typedef struct ct_gemm_row {
  ct_dur_stats d;
} ct_gemm_row;

/* A row of the NVTX ranges table (--by range): d holds the ranges' CPU durations. */
typedef struct ct_range_row {
  ct_dur_stats d;
  uint64_t kernels;     /* kernels, GEMMs and graphs launched inside (nested ranges too) */
  uint64_t activities;  /* all GPU work launched inside, copies and sets included */
  uint64_t gpu_ns;      /* GPU time of that work */
} ct_range_row;

/* Which table a map is. */
enum ct_report_table { CT_TABLE_KERNELS, CT_TABLE_APIS, CT_TABLE_MEMCPY, CT_TABLE_GEMMS,
                       CT_TABLE_RANGES, CT_NTABLES };

typedef struct ct_report {
  ct_map *maps[CT_NTABLES];
  uint64_t gpu_total_ns;   /* all GPU activity time (kernels, GEMMs, graphs, copies, sets) */
  uint64_t activities, spans, unmatched;
  uint64_t range_calls_lost; /* --by range: calls whose attribution was given up */
} ct_report;

/* Starts an empty report. Returns 0, or -1 when out of memory. */
int ct_report_init(ct_report *r);

/* Frees a report's rows. */
void ct_report_free(ct_report *r);

/*
 * Reads one trace file into r (ct_model_read's result: 0 clean, 1 partial, -1
 * unreadable; st gets the file's stats and message). proc_out, when not NULL, gets a
 * copy of the file's PROCESS record.
 */
int ct_report_add_file(ct_report *r, const char *path, ct_model_stats *st,
                       struct ct_process *proc_out);

/*
 * Reads one trace file's NVTX ranges into r's ranges table (--by range), crediting
 * each with the GPU work launched inside it (report_ranges.c). Returns 0 clean, 1
 * partial, -1 unreadable, with st->message saying why; proc_out (may be NULL) gets
 * the PROCESS record.
 */
int ct_report_add_ranges(ct_report *r, const char *path, ct_model_stats *st,
                         struct ct_process *proc_out);

/*
 * The rows of table t sorted by key ("total", "calls", "avg" descending, "name"
 * ascending; ties by name), as an array of ct_map entry indices of length
 * ct_map_count(r->maps[t]) (malloc'd; NULL when out of memory or empty).
 */
size_t *ct_report_sorted(const ct_report *r, enum ct_report_table t, const char *sort);

/* Ids of the tables as JSON keys and the CSV "table" column: kernels, apis, memcpy, gemms. */
extern const char *const ct_report_table_ids[CT_NTABLES];

/* A table for the rows of table t in fmt (text or CSV); CSV columns start with "table"
 * and, when pid_col, "pid". NULL when out of memory. */
ct_table *ct_report_new_table(enum ct_report_table t, enum ct_out_format fmt, const char *title,
                              int pid_col);

/* Fills the current row of tb (after any prefix cells) with row (key, value) of table t:
 * CSV cells are raw integers, text cells human units. */
void ct_report_csv_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                       const void *key, size_t klen, const void *value);
void ct_report_text_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *value);

/* Writes row (key, value) of table t as one JSON object. */
void ct_report_json_row(ct_json *j, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *value);

/* Short names of cudaDataType values ("f32", "f16", "bf16", ...). */
const char *ct_data_type_name(uint64_t type);

/* Names of CT_MEMOP_* kinds as nsys/Kineto write them ("HtoD", "memset", ...). */
const char *ct_memop_kind_name(uint64_t kind);

/* Names of CT_MEM_* memory types ("pinned", "pageable", "device", ...). */
const char *ct_mem_type_name(uint64_t mem);

#endif
