/*
 * The aggregation behind `cutrace report`: per kernel, CUDA entry point, kind of
 * memory operation and GEMM shape, exact counts and totals plus a bounded-memory
 * median (stats.h), fed from the trace model's joined events. One ct_report can take
 * several files (merged tables) or one each (--per-process).
 */
#ifndef CUTRACE_REPORT_H
#define CUTRACE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "output.h"
#include "queues.h"
#include "report_alloc.h"
#include "report_kattr.h"
#include "stats.h"

/* A row of the kernels table (GPU time of kernels, library GEMMs and graph launches). */
typedef struct ct_kernel_row {
  ct_dur_stats d;
  uint64_t type;         /* CT_GPU_* of the first activity */
  uint64_t lib_calls;    /* instances launched inside a library call (a cuBLAS GEMM) */
  char launched_by[48];  /* that library call's entry point ("" when none) */
  /* the slowest instance: its GPU start, that time after its process's start, the
   * process, and which instance it was (1 = the first) */
  uint64_t max_start_ns, max_offset_ns, max_pid, max_instance;
  ct_kattr_summary attrs; /* registers, shared memory, occupancy (format 1.6) */
} ct_kernel_row;

/* Whether a kernels row has an outlier worth naming: at least 3 instances, the slowest
 * more than 4x the median and at least 20 us above it (the article's "one GEMM outlier
 * doubles the mean"; a first call paying for setup). */
int ct_kernel_outlier(const ct_kernel_row *row);

/* A row of the CUDA API table (CPU time of one entry point). */
typedef struct ct_api_row {
  ct_dur_stats d;        /* rows of inner calls (depth > 0) have "\0inner" after the name */
  uint64_t errors;  /* calls that returned nonzero */
  uint64_t driver;  /* calls flagged CT_API_DRIVER */
  uint64_t polls;   /* event/stream queries: the polls its coalesced records stand for */
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
  ct_dur_stats d;        /* per call: its GPU time (its own activity, or its kernels' sum) */
  uint64_t kernels;      /* GPU activities that timed the calls */
  uint64_t inner_timed;  /* calls timed by the kernels they launched (CT_API_INNER_TIMED) */
} ct_gemm_row;

/* A row of the NVTX ranges table (--by range): d holds the ranges' CPU durations. */
typedef struct ct_range_row {
  ct_dur_stats d;
  uint64_t kernels;     /* kernels, GEMMs and graphs launched inside (nested ranges too) */
  uint64_t activities;  /* all GPU work launched inside, copies and sets included */
  uint64_t gpu_ns;      /* GPU time of that work */
} ct_range_row;

/* The key of a CUDA graphs row: the process, its exec id (GRAPH_LAUNCH.exec) and the
 * version of the exec's inventory (format 1.13: one row per version; 0 in older files,
 * and for launches of an exec without an inventory). */
typedef struct ct_graph_key {
  uint64_t pid, exec;    /* exec 0: launches whose exec is unknown (format < 1.2) */
  uint64_t version;
} ct_graph_key;

#define CT_GRAPH_TOP 8 /* kernel names kept per exec (the largest counts) */

/* What one graph exec runs, from its GRAPH and GRAPH_KERNEL records (format 1.2). */
typedef struct ct_graph_inv {
  int known;             /* a GRAPH record was seen (else instantiated before tracing) */
  struct ct_graph g;     /* the latest inventory (an exec update replaces it) */
  unsigned ntop;
  struct ct_graph_top {
    uint64_t count;
    const char *name;    /* mangled, truncated to 191 bytes; one copy per distinct name
                            for the whole run (report_graphs.c), never NULL */
    int has_attr;        /* format 1.6: attr holds its first node's configuration */
    ct_kattr_config attr;
  } top[CT_GRAPH_TOP];   /* count descending */
} ct_graph_inv;

/* Takes a GRAPH record (forgetting the kernels of an earlier one). */
void ct_graph_inv_set(ct_graph_inv *inv, const struct ct_graph *g);

/* Takes a GRAPH_KERNEL record: kept when among the CT_GRAPH_TOP largest counts; cfg
 * (NULL: unknown) its first node's attributes and occupancy. */
void ct_graph_inv_kernel(ct_graph_inv *inv, const struct ct_graph_kernel *k, const char *name,
                         const ct_kattr_config *cfg);

/* An inventory's kernels as "mangled:count;..." (count descending; "" for none), into
 * out (truncated to len). */
void ct_graph_inv_top_csv(const ct_graph_inv *inv, char *out, size_t len);

/* The inventories of one file's graph execs by (exec, version), for labelling each
 * graph launch with what it ran (dump --chrome/--perfetto/--csv): a ct_map of
 * ct_graph_inv keyed by struct ct_graph_inv_key. Version 0 holds each exec's latest
 * inventory (the only one of a file older than format 1.13). */
struct ct_graph_inv_key {
  uint64_t exec, version;
};
struct ct_map;
/* Takes a GRAPH record. Returns 0, or -1 when out of memory. */
int ct_graph_invs_graph(struct ct_map *m, const struct ct_graph *g);
/* Takes a GRAPH_KERNEL record (cfg as ct_graph_inv_kernel). Returns 0, or -1 when out of
 * memory. */
int ct_graph_invs_kernel(struct ct_map *m, const struct ct_graph_kernel *k, const char *name,
                         const ct_kattr_config *cfg);
/* What a launch of exec made at inventory version `version` (GRAPH_LAUNCH) ran: that
 * version's inventory; the exec's latest when version is 0 (older files) or unknown.
 * NULL when the exec has none (its inventory's `known` may also be 0). */
const ct_graph_inv *ct_graph_invs_find(struct ct_map *m, uint64_t exec, uint64_t version);

/* A row of the CUDA graphs table: one exec at one inventory version, its launches and
 * that inventory. */
typedef struct ct_graph_row {
  ct_dur_stats d;        /* GPU time of its timed launches (CT_GPU_GRAPH activities) */
  uint64_t launches;     /* successful graph launch calls */
  ct_graph_inv inv;      /* not kept in a process's folded row */
  /* A process's folded row (key exec CT_GRAPH_FOLDED, version 0) holds the (exec,
   * version) keys met once the table had CT_GRAPH_ROWS rows: */
  int fold;              /* 1 in a folded row */
  uint64_t folded;       /* inventories (GRAPH records) folded in; 0 in other rows */
  uint64_t folded_exec;  /* the exec of every key folded in, 0 when several */
  uint64_t folded_first, folded_last; /* their lowest and highest version */
} ct_graph_row;

/* Rows the graphs table keeps (exec versions of all processes): past it, each new
 * (exec, version) of a process goes to that process's one folded row, counted, so that
 * a loop updating its exec to another graph at every step for a million steps needs
 * about 4 MB, not a row each (about 1 KiB). */
#define CT_GRAPH_ROWS 4096
#define CT_GRAPH_FOLDED UINT64_MAX /* the exec of a process's folded row's key */

/* Feeding the graphs table (report_graphs.c): a span (graph launches counted), an
 * activity (graph GPU time), an inventory and one of its kernels. Return 0, or -1
 * when out of memory. */
struct ct_report;
int ct_graphs_span(struct ct_report *r, const ct_span *s);
int ct_graphs_activity(struct ct_report *r, const ct_activity *a, uint64_t dur);
int ct_graphs_inventory(struct ct_report *r, uint64_t pid, const struct ct_graph *g);
int ct_graphs_kernel(struct ct_report *r, uint64_t pid, const struct ct_graph_kernel *k,
                     const char *name, const ct_kattr_config *cfg);

/* 1 when the report holds graph launches (the graphs table is printed). */
int ct_graphs_launched(const struct ct_report *r);

/* ---- memory allocations (report_alloc.c, format 1.5 ALLOC records; matching: report_alloc.h) */

/* A row of the memory allocations table: the allocation and release calls of one kind
 * of memory on one device of one process, and the live bytes they left. */
typedef struct ct_alloc_row {
  ct_dur_stats d;           /* CPU time of every call of the row (allocations and releases) */
  uint64_t allocs, bytes, alloc_ns;       /* allocations: calls, bytes asked for, time */
  uint64_t frees, freed_bytes, free_ns;   /* releases: calls, the bytes they released, time */
  uint64_t unmatched_frees; /* releases of pointers whose allocation is not in the trace */
  uint64_t live, peak;      /* bytes allocated and not yet released: now, and at most */
} ct_alloc_row;

/* Feeds a span (successful calls with an ALLOC record count). Returns 0, or -1 when out
 * of memory. */
int ct_allocs_span(struct ct_report *r, const ct_span *s);

/* Forgets the live allocations of the file just read (its rows stay). */
void ct_allocs_file_done(struct ct_report *r);


/* ---- streams: launch delay and queue depth (report_streams.c) ------------------------ */

/* The key of a streams row. */
typedef struct ct_stream_key {
  uint64_t pid, device, stream;
} ct_stream_key;

/* A row of the streams table: every GPU operation run on one stream of one process, how
 * long after its call returned it started (launch delay, as HTA defines it) and how many
 * operations were queued on the stream when its call began (this one included). */
typedef struct ct_stream_row {
  ct_dur_stats d;            /* GPU time of each operation */
  ct_dur_stats delay;        /* ops with a known call: start - call end, 0 when it started
                                before the call returned */
  ct_dur_stats depth;        /* ops with a known call: queue depth when the call began */
  uint64_t started_in_call;  /* ops that started before their call returned */
  uint64_t empty_queue;      /* ops whose call found nothing else queued (depth 1) */
  uint64_t kernels;          /* kernels, GEMMs and graphs with a known launch call */
  uint64_t short_kernels;    /* of those, ran shorter on the GPU than their launch call */
  uint64_t first_start, last_end;
  ct_queue queue;            /* while a file is read: the operations in flight */
} ct_stream_row;

/* Feeds one activity to the streams table. Returns 0, or -1 when out of memory. */
int ct_streams_activity(struct ct_report *r, const ct_activity *a, uint64_t dur);

/* Forgets the queues of the file just read (its rows stay). */
void ct_streams_file_done(struct ct_report *r);

/* Frees what a streams row holds beyond its first ct_dur_stats. */
void ct_streams_row_free(ct_stream_row *row);

/* ---- calls in flight by corr (report_inner.c) ------------------------------------ */

/* An open-addressing table from corr (nonzero) to fixed-size values. Values move when
 * the table grows or an entry is removed: do not keep their addresses across calls. */
typedef struct ct_corr_table {
  unsigned char *a;
  size_t cap, n, value_size;
} ct_corr_table;

/* Starts an empty table of value_size-byte values. */
void ct_corr_init(ct_corr_table *t, size_t value_size);

/* The value of corr, created zeroed when missing and create is set; NULL when absent,
 * when corr is 0, or when out of memory. */
void *ct_corr_find(ct_corr_table *t, uint64_t corr, int create);

/* Starts fetching the slot where corr's entry would be into the cache (a hint). */
void ct_corr_prefetch(const ct_corr_table *t, uint64_t corr);

/* Removes the entry whose value ct_corr_find returned. */
void ct_corr_remove(ct_corr_table *t, void *value);

/* Slot i (0 <= i < t->cap): its value and corr, or NULL when the slot is empty. */
void *ct_corr_slot(const ct_corr_table *t, size_t i, uint64_t *corr);

/* Frees the table's memory. */
void ct_corr_free(ct_corr_table *t);

/* ---- library calls timed by their child launches (report_inner.c) -------------------- */

#define CT_INNER_NAMES 8 /* distinct child kernel names kept per library call */

/* A library call (e.g. a cuBLAS GEMM flagged CT_API_INNER_TIMED) joined with the GPU
 * activities of the kernels it launched (child calls with parent = its corr). */
typedef struct ct_inner_call {
  uint64_t corr;
  const ct_span *span;       /* the library call; NULL when its span was never seen */
  int complete;              /* span seen and every promised child activity arrived */
  uint64_t kernels, gpu_ns;  /* child activities (copies and sets too) and their GPU time */
  uint64_t first_start, last_end;
  unsigned nnames;
  const char *names[CT_INNER_NAMES]; /* distinct kernel names (mangled), first seen first */
} ct_inner_call;

typedef struct ct_inner_join ct_inner_join;

/* Called once per library call when it is complete (or given up: see complete), at
 * the latest from ct_inner_finish. The strings call points to live until
 * ct_inner_free; call itself only during the callback. */
typedef void (*ct_inner_done_fn)(void *user, const ct_inner_call *call);

/* A new join handing complete calls to done. NULL when out of memory. */
ct_inner_join *ct_inner_new(ct_inner_done_fn done, void *user);

/* Feeds every span in delivery order. Returns 1 when s is a library call whose
 * children the join collects (its done call will carry it), else 0. */
int ct_inner_span(ct_inner_join *j, const ct_span *s);

/* Feeds every activity. Returns the entry point of the library call that launched it
 * when that is known already, else NULL (the call's done callback names it later). */
const char *ct_inner_activity(ct_inner_join *j, const ct_activity *a);

/* Hands over every call still held (after ct_model_read). Returns 0, or -1 when some child
 * could not be joined for lack of memory since the last call. */
int ct_inner_finish(ct_inner_join *j);

/* Frees the join (after ct_inner_finish). */
void ct_inner_free(ct_inner_join *j);

/* ---- NVTX ranges with the GPU work launched inside them (report_ranges.c) ------------ */

#define CT_RANGE_STREAMS 8 /* streams whose extent a range keeps */

/* One NVTX range instance (RANGE record) and the GPU work of the calls made inside it
 * on its thread (nested ranges' included). */
typedef struct ct_range_span {
  uint64_t tid, begin_ns, end_ns, depth, domain, flags; /* as in the RANGE record */
  const char *name;          /* NULL when unknown; not NUL-terminated: name_len bytes */
  size_t name_len;
  uint64_t kernels;          /* kernels, GEMMs and graphs among that work */
  uint64_t activities;       /* all of it, copies and sets included */
  uint64_t gpu_ns;           /* its summed GPU time */
  unsigned nstreams;         /* per stream (first CT_RANGE_STREAMS), its extent: */
  struct ct_range_stream {
    uint64_t device, stream, start_ns, end_ns; /* earliest start, latest end */
  } streams[CT_RANGE_STREAMS];
} ct_range_span;

/* Called once per range, when the GPU work of its calls is known (or at the end). */
typedef void (*ct_range_fn)(void *user, const ct_range_span *range);

/*
 * Reads one trace file's NVTX ranges and calls fn for each with its GPU work. Returns
 * 0 clean, 1 partial, -1 unreadable, with st->message saying why; proc_out (may be
 * NULL) gets the PROCESS record; *lost (may be NULL) is increased by the calls whose
 * attribution was given up (more than 65536 queued outside any range on a thread);
 * st->calls_peak the most calls kept at once.
 */
int ct_range_each(const char *path, ct_range_fn fn, void *user, ct_model_stats *st,
                  struct ct_process *proc_out, uint64_t *lost);

/* Where a thread's ranges lie: from the earliest begin to the latest end of those
 * delivered (a value of a ct_map keyed by the uint64_t tid; known = 0: none). */
typedef struct ct_range_extent {
  uint64_t begin_ns, end_ns;
  int known;
} ct_range_extent;

/* Widens the extent of r's thread in extents (tid -> ct_range_extent) to cover r.
 * Returns 0, -1 when out of memory. */
int ct_range_extent_add(ct_map *extents, const struct ct_range *r);

/*
 * ct_range_each for a caller that has read the file's ranges already (through the
 * model, with the same time filter): extents (tid -> ct_range_extent, filled by
 * ct_range_extent_add; looked up, so not const) says which calls a range can claim,
 * and only those are kept, so a thread without ranges keeps no calls. The ranges
 * handed over are the same as ct_range_each's.
 */
int ct_range_each_within(const char *path, ct_range_fn fn, void *user, ct_model_stats *st,
                         struct ct_process *proc_out, uint64_t *lost, ct_map *extents);

/* Which table a map is. */
enum ct_report_table { CT_TABLE_KERNELS, CT_TABLE_APIS, CT_TABLE_MEMCPY, CT_TABLE_GEMMS,
                       CT_TABLE_GRAPHS, CT_TABLE_STREAMS, CT_TABLE_ALLOCS, CT_TABLE_RANGES,
                       CT_NTABLES };

typedef struct ct_report {
  ct_map *maps[CT_NTABLES];
  uint64_t gpu_total_ns;   /* all GPU activity time (kernels, GEMMs, graphs, copies, sets) */
  uint64_t activities, unmatched;
  uint64_t spans;          /* outermost (depth 0) intercepted calls */
  uint64_t inner_spans;    /* calls made inside another intercepted call (depth > 0) */
  uint64_t range_calls_lost; /* --by range: calls whose attribution was given up */
  uint64_t pauses;         /* the tracer's pauses (format 1.3): the trace covers windows */
  int filtered;            /* --from/--to left time out (the model's "filter" pauses) */
  ct_stream_key last_stream; /* the streams row found last (rows never move) */
  struct ct_stream_row *last_stream_row;
  ct_corr_table live_allocs; /* while a file is read: its live allocations by pointer
                                (report_alloc.c; value_size 0 until the first) */
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

/* One file being read into a report through a model read the caller runs (a tee with
 * other consumers: model_tee.h); ct_report_add_file is begin, ct_model_read, end. */
typedef struct ct_report_file ct_report_file;

/*
 * Starts reading a file into r: *ops and the returned pointer are the consumer to
 * feed the model read with (proc_out as for ct_report_add_file). Returns NULL when
 * out of memory.
 */
ct_report_file *ct_report_file_begin(ct_report *r, struct ct_process *proc_out,
                                     const ct_model_ops **ops);

/*
 * Ends the file after the model read that returned rc into st: settles the library
 * calls still waiting for their kernels and frees rf. Returns rc, or 1 (st->message
 * set) when a clean read ran out of memory here.
 */
int ct_report_file_end(ct_report_file *rf, int rc, ct_model_stats *st);

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

/* Ids of the tables as JSON keys and the CSV "table" column: kernels, apis, memcpy, gemms,
 * graphs, ranges. */
extern const char *const ct_report_table_ids[CT_NTABLES];

/* A table for the rows of table t in fmt (text or CSV); CSV columns start with "table"
 * and, when pid_col, "pid" and "rank" (--per-process; a table with a pid column of its
 * own, ct_report_table_has_pid, then leaves that one out: its row writer's first cell
 * is to be skipped, ct_table_skip_cells). NULL when out of memory. */
ct_table *ct_report_new_table(enum ct_report_table t, enum ct_out_format fmt, const char *title,
                              int pid_col);

/* Whether the CSV rows of table t start with a pid column of their own (streams, allocs). */
int ct_report_table_has_pid(enum ct_report_table t);

/* Whether an API table key (len bytes) is that of inner calls (depth > 0). */
int ct_report_api_is_inner(const void *key, size_t len);

/* Fills the current row of tb (after any prefix cells) with row (key, value) of table t:
 * CSV cells are raw integers, text cells human units. */
void ct_report_csv_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                       const void *key, size_t klen, const void *value);
void ct_report_text_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *value);

/* The graphs table's rows (report_graphs.c), as ct_report_*_row for that table. */
void ct_graphs_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_graphs_text_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_graphs_json_row(ct_json *j, const ct_report *r, const void *key, const void *value);

/* The memory allocations table's rows (report_alloc.c), as ct_report_*_row. */
void ct_allocs_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_allocs_text_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_allocs_json_row(ct_json *j, const ct_report *r, const void *key, const void *value);

/* The streams table's rows (report_streams.c), as ct_report_*_row for that table. */
void ct_streams_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_streams_text_row(ct_table *tb, const ct_report *r, const void *key, const void *value);
void ct_streams_json_row(ct_json *j, const ct_report *r, const void *key, const void *value);

/* Writes row (key, value) of table t as one JSON object. */
void ct_report_json_row(ct_json *j, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *value);

/* Prints, after the kernels table (text), the kernels whose slowest instance stands far
 * above their median (ct_kernel_outlier): at most 5, when and which instance. */
void ct_report_print_outliers(FILE *f, const ct_report *r);

/* Short names of cudaDataType values ("f32", "f16", "bf16", ...). */
const char *ct_data_type_name(uint64_t type);

/* Names of a GEMM record's compute_type: cublasComputeType_t values (64 and up) by their
 * cublas_api.h names less the CUBLAS_COMPUTE_ prefix ("32F", "32F_FAST_TF32", ...);
 * values below 64 are legacy cudaDataType compute types ("legacy_f32"); "?" otherwise. */
const char *ct_compute_type_name(uint64_t type);

/* The compute type of a GEMM call of entry point api (api_len bytes, no NUL needed):
 * ct_compute_type_name's, or "unknown" when it was not recorded: a cuBLASLt call with 0,
 * which cuBLASLt never takes (its compute types are cublasComputeType_t values, 64 and
 * up), is the hook's "the descriptor could not be read" -- where cublasGemmEx's 0 is the
 * legacy CUDA_R_32F a program built before CUDA 11 passes. */
const char *ct_gemm_compute_name(const char *api, size_t api_len, uint64_t type);

/* Names of CT_MEMOP_* kinds as nsys/Kineto write them ("HtoD", "memset", ...). */
const char *ct_memop_kind_name(uint64_t kind);

/* Names of CT_MEM_* memory types ("pinned", "pageable", "device", ...). */
const char *ct_mem_type_name(uint64_t mem);

#endif
