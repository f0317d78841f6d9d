/*
 * What the parts of the Chrome/Perfetto export share. One walk over the model
 * (chrome.c: tracks, GPU work and the document; chrome_calls.c: the CPU side, calls
 * with their GEMM args, call sites and child kernels, NVTX ranges on the CPU and
 * projected onto the GPU; chrome_queues.c: queue-depth counters; chrome_job.c: GPU rows
 * and ranks) says what to write through an encoder (chr_encoder below): Chrome Trace
 * Event JSON (chrome_json.c) or Perfetto's protobuf trace (chrome_perfetto.c), so that
 * the two outputs cannot drift. Not an interface for other commands: chrome.h is.
 */
#ifndef CUTRACE_CHROME_INTERNAL_H
#define CUTRACE_CHROME_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "chrome.h"
#include "demangle_cache.h"
#include "report.h"
#include "stacks.h"
#include "stats.h"

#define STREAM_TID_SHIFT 100000ull
#define TRACER_TID_BASE 1000000000ull  /* synthetic tracks of the tracer's own work */
#define GAP_DEVICE_TID 1500000000ull   /* the "GPU idle" track of a device */
#define GAP_STREAM_TID 1600000000ull   /* + stream: the idle track of a stream */
#define PAUSE_TID 1700000000ull        /* the process's "not recorded" track (pauses) */
#define GPU_ROW_PID_BASE 1000000000ull /* several files: GPU rows are base + file * 1000 + device */
#define GPU_ROW_FILE_STRIDE 1000ull

typedef struct chr_encoder chr_encoder;
typedef struct chr_perfetto chr_perfetto;

typedef struct track_key {
  uint64_t pid, tid;
} track_key;

/* What the export keeps per track. */
typedef struct track_state {
  int named;                      /* its thread_name was written */
  uint64_t last_start, last_end;  /* GPU tracks: the slice written last */
  uint64_t poll_end;  /* CPU tracks: the latest end of the poll slices written (polls > 0) */
} track_state;

struct ct_chrome {
  FILE *f;
  ct_chrome_options opt;
  const chr_encoder *enc;    /* JSON or Perfetto protobuf */
  chr_perfetto *pf;          /* the Perfetto encoder's state (chrome_perfetto.c) */
  int nevents;
  unsigned nargs, nitems;    /* JSON: args of the open slice, items of the open list */
  unsigned file_index;
  uint64_t pid;              /* the current file's process id */
  struct ct_job proc_job;    /* the current file's rank (known = 0: none) */
  ct_map *tracks;            /* track_key -> int (named) */
  ct_map *tracer_tracks;     /* (tid, label) -> uint64_t synthetic tid */
  uint64_t next_tracer_tid;
  uint64_t base_ns;          /* wall clock - monotonic clock, from the first process */
  ct_inner_join *inner;      /* library calls held until their child kernels are known */
  ct_stacks *stacks;         /* the current file's call stacks (format 1.1) */
  ct_map *call_sites;        /* stack id -> its call site's label (char *), per file */
  ct_map *graphs;            /* (exec, version) -> ct_graph_inv, per file (1.2; 1.13) */
  ct_map *queues;            /* (device, stream) -> its queue, per file (--queues) */
  struct ct_corr_table live_allocs; /* the current file's live allocations by pointer */
  ct_map *memory;            /* ct_alloc_key -> uint64_t live bytes, per file */
  ct_map *memory_totals;     /* Kineto device (type, id) -> uint64_t live bytes, per file */
  struct ct_corr_table held; /* nested calls and ranges waiting for their outer one
                                (chrome_order.c), per file */
  ct_map *held_names;        /* their names' copies */
  size_t held_total;
  struct ct_kattr_table *kattr; /* kernel attributes, per file (format 1.6; NULL: none) */
  int have_base;
  uint64_t ranges;           /* NVTX ranges of the current file (0: no projection pass) */
  ct_map *range_extents;     /* tid -> ct_range_extent of the current file's ranges */
  uint64_t open_pause;       /* begin of a pause seen open and not yet closed (0: none) */
  char open_pause_why[32];
  /* devices seen, for deviceProperties (chrome_job.c) */
  struct ct_device devices[64];
  char device_names[64][96];
  char device_pci[64][32], device_uuid[64][48];
  uint64_t device_row[64];   /* several files: the GPU's process row (its pid) */
  uint64_t device_owner[64]; /* several files: the pid of the process that used it */
  struct ct_job device_job[64];
  unsigned ndevices;
  unsigned proc_devices;     /* DEVICE records of the current file taken so far */
  /* ranks of the files (format 1.4 JOB records), for distributedInfo (chrome_job.c) */
  struct ct_job job;         /* the first file's with a rank */
  uint64_t ranks[64];        /* distinct ranks seen, in order of appearance */
  unsigned nranks;
  char *out;                 /* JSON: the output buffer (chrome_out.h) and its fill */
  size_t out_len;
  ct_demangle_cache demangle; /* kernels' demangled names (zeroed: found by their bytes) */
  struct chr_key_text {      /* JSON: arg keys (literals) by address, as "key": */
    const char *key;
    size_t len;
    char text[40];
  } key_cache[256];
  struct chr_track_slot {    /* the tracks used last: their slots in tracks */
    uint64_t pid, tid;
    track_state *ts;
  } track_cache[16];
};

/* ---- kernel attributes (chrome_kattr.c) ---- */

/* Model callbacks: keep the current file's KERNEL_ATTR and OCCUPANCY records. */
void chr_on_kernel_attr(void *user, const ct_proc *p, const struct ct_kernel_attr *a,
                        const char *name);
void chr_on_occupancy(void *user, const ct_proc *p, const struct ct_occupancy *o);

/* Forgets the current file's attributes (at its end). */
void chr_kattr_finish(ct_chrome *c);

/* The kernel attribute args of a launch's slice (Kineto's names, chrome_kattr.c), with
 * "shared memory" static + dynamic. Returns 1 when written, 0 when the launch's function
 * attributes are unknown (the caller then writes "shared memory" as the dynamic part). */
int chr_put_kernel_attr_args(ct_chrome *c, const ct_activity *a);

/* ---- which processes and GPUs a document covers (chrome_job.c) ---- */

/* Takes the current file's DEVICE records not yet taken (they arrive with the first
 * work on each device, after on_process), one entry per device index. */
void chr_note_devices(ct_chrome *c, const ct_proc *p);

/* 1 when the document holds several files: each file's GPUs are rows of their own. */
static inline int chr_multi(const ct_chrome *c) { return c->opt.files > 1; }

/* The process row (pid) of a device of the current file: the device index for a
 * single-file document (Kineto's), else GPU_ROW_PID_BASE + file * 1000 + device. */
uint64_t chr_gpu_pid(const ct_chrome *c, uint64_t device);

/* The process row's name of a device of the current file ("GPU 0"; several files:
 * "rank 1 GPU 0 (NAME)" or "pid 1234 GPU 0 (NAME)", NAME once its DEVICE record came). */
void chr_gpu_row_name(const ct_chrome *c, uint64_t device, char *buf, size_t len);

/* Writes the "deviceProperties" member (Kineto's fields, plus pciBusId and uuid when
 * known: format 1.4). */
void chr_put_device_properties(ct_chrome *c);

/* Kineto's top-level "cuda_driver_version" and "cuda_runtime_version" (13000 = 13.0,
 * as CUDA gives them), each preceded by a comma, from the first device that knows it
 * (format 1.6 DEVICE records); nothing when no device does. */
void chr_put_cuda_versions(ct_chrome *c);

/* Notes a file's rank (its JOB record; known = 0: none) for distributedInfo. */
void chr_note_job(ct_chrome *c, const struct ct_job *job);

/* Writes the "distributedInfo" member: the rank's JOB values when every file with a
 * rank has the same one; the ranks seen when they differ; rank 0 of 1 when none. */
void chr_put_distributed_info(ct_chrome *c);

/* ---- encoders: what the walk writes, in each output's own terms ---- */

/* What a track is, for the formats that tell them apart (Perfetto's TrackDescriptor:
 * a thread, a custom track under a CPU process, a custom track under a GPU row). */
enum chr_track_kind { CHR_TRACK_THREAD, CHR_TRACK_PROCESS, CHR_TRACK_GPU };

/* What a counter track holds: JSON's category and the name of its value's arg, and
 * whether its values are bytes (Perfetto's CounterDescriptor unit). */
typedef struct chr_counter_kind {
  const char *cat, *key;
  int bytes;
} chr_counter_kind;

extern const chr_counter_kind chr_queue_counter;  /* --queues: "queue", "depth" */
extern const chr_counter_kind chr_memory_counter; /* live bytes: "memory", "bytes" */

/*
 * One output format. Every event is a slice (slice_open, its args, slice_close), a
 * counter value, or a flow. Flows: JSON writes them as s/f events after the GPU
 * slice (flow), Perfetto as flow ids on the two slices (flow_out on the call,
 * flow_in on the GPU work); the walk says all three, each encoder writes the one its
 * format has. Args: a key (a string literal: encoders may know it by its address) and
 * a value; lists ([1,2,3]) and dicts ({"name": 4}) are opened with arg_list, filled
 * with item_* (key NULL in a list; a dict's keys need not be literals) and closed.
 */
struct chr_encoder {
  int (*begin)(ct_chrome *c); /* the document's opening; 0, or -1 when out of memory */
  int (*end)(ct_chrome *c);    /* its closing; 0, or -1 when writing failed */
  /* Names a process row: a CPU process, or (gpu = 1) a GPU's row; sort: its sort
   * index, UINT64_MAX for none (a rename). */
  void (*process)(ct_chrome *c, uint64_t pid, const char *name, int gpu, uint64_t sort);
  /* Names track tid of row pid (sorted by tid). */
  void (*track)(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
                const char *name);
  /* Opens a slice [begin, end] named name (name_len bytes) on track (pid, tid). */
  void (*slice_open)(ct_chrome *c, const char *cat, const char *name, size_t name_len,
                     uint64_t pid, uint64_t tid, uint64_t begin, uint64_t end);
  /* Opens an instant event (thread scope) named name on thread track (pid, tid) at ts:
   * JSON's ph "i" with s "t", Perfetto's TYPE_INSTANT; its args follow, slice_close
   * closes it. */
  void (*instant_open)(ct_chrome *c, const char *cat, const char *name, uint64_t pid,
                       uint64_t tid, uint64_t ts);
  /* Opens a gpu_user_annotation slice: an NVTX range of depth depth projected onto
   * the stream track (pid, tid). */
  void (*gpu_range_open)(ct_chrome *c, const char *name, size_t name_len, uint64_t pid,
                         uint64_t tid, uint64_t depth, uint64_t begin, uint64_t end);
  void (*arg_u64)(ct_chrome *c, const char *key, uint64_t v);
  void (*arg_i64)(ct_chrome *c, const char *key, int64_t v);
  void (*arg_f3)(ct_chrome *c, const char *key, double v);      /* 3 decimals in JSON */
  void (*arg_time)(ct_chrome *c, const char *key, uint64_t ns); /* JSON: us, Perfetto: ns */
  void (*arg_str)(ct_chrome *c, const char *key, const char *s); /* s NULL: null / absent */
  void (*arg_list)(ct_chrome *c, const char *key, int dict);
  void (*item_u64)(ct_chrome *c, const char *key, uint64_t v);
  void (*item_str)(ct_chrome *c, const char *key, const char *s);
  void (*list_close)(ct_chrome *c, int dict);
  void (*flow_out)(ct_chrome *c, uint64_t id); /* the open slice starts flow id */
  void (*flow_in)(ct_chrome *c, uint64_t id);  /* the open slice ends flow id */
  void (*slice_close)(ct_chrome *c);
  /* The flow id from (cpu_pid, cpu_tid) at cpu_ts to the slice at (pid, tid, ts). */
  void (*flow)(ct_chrome *c, uint64_t id, uint64_t cpu_pid, uint64_t cpu_tid, uint64_t cpu_ts,
               uint64_t pid, uint64_t tid, uint64_t ts);
  /* The current file's calls and GPU work are all written (its flows end in it). */
  void (*file_end)(ct_chrome *c);
  /* A counter of kind k named name on row pid takes value v at ts. */
  void (*counter)(ct_chrome *c, const chr_counter_kind *k, uint64_t pid, const char *name,
                  uint64_t ts, uint64_t v);
};

extern const chr_encoder chr_json_encoder;     /* chrome_json.c */
extern const chr_encoder chr_perfetto_encoder; /* chrome_perfetto.c */

/* Opens a slice on the encoder (name NUL-terminated). */
static inline void chr_slice_open(ct_chrome *c, const char *cat, const char *name, uint64_t pid,
                                  uint64_t tid, uint64_t begin, uint64_t end) {
  c->enc->slice_open(c, cat, name, __builtin_strlen(name), pid, tid, begin, end);
}


/* ---- tracks (chrome_tracks.c) ---- */

/* The state of track (pid, tid), made when new; NULL when out of memory. The tracks
 * used last are found in a small cache (their slots stay where they are). */
static inline track_state *chr_track_get(ct_chrome *c, uint64_t pid, uint64_t tid) {
  struct chr_track_slot *e = &c->track_cache[(tid * 0x9E3779B97F4A7C15ull + pid) >> 60];
  if (e->ts && e->pid == pid && e->tid == tid) return e->ts;
  track_key k = {pid, tid};
  track_state *ts = ct_map_get(c->tracks, &k, sizeof k, NULL);
  if (ts) *e = (struct chr_track_slot){pid, tid, ts};
  return ts;
}

/* Names a track the first time it is used (or again, with force, when a better name
 * arrives). */
void chr_ensure_track(ct_chrome *c, uint64_t pid, uint64_t tid, enum chr_track_kind kind,
                      const char *name, int force);

/* 1 when track (pid, tid) has its name already (a cheap test before making one). */
int chr_track_named(ct_chrome *c, uint64_t pid, uint64_t tid);

/* Appends s (NULL: "(null)", as printf's %s) to buf holding *at bytes, cut to len - 1
 * bytes in all (as snprintf cuts). */
void chr_append(char *buf, size_t len, size_t *at, const char *s);

/* The " (pid P)" that tells apart the tracks of several files sharing a GPU row ("" when
 * the rows are not shared), written into buf. */
const char *chr_shared_row_owner(const ct_chrome *c, char *buf, size_t len);

/* The sort index of the current file's CPU process row. */
uint64_t chr_cpu_row_sort_index(const ct_chrome *c);

/* Names thread tid's track of the current process the first time it is used. */
void chr_ensure_cpu_thread(ct_chrome *c, uint64_t tid);

/* The track id of a stream of the current file (shifted for files after the first). */
uint64_t chr_stream_tid(const ct_chrome *c, uint64_t stream);

/* Names a stream's track (and its device's process) the first time it is used. */
void chr_ensure_gpu_track(ct_chrome *c, uint64_t device, uint64_t stream);

/* Names (again) the process row of a device of the current file when it was named
 * already (its DEVICE record arrived after its first stream). */
void chr_rename_gpu_row(ct_chrome *c, uint64_t device);

/* The synthetic track of the tracer's work labelled what on thread tid. */
uint64_t chr_tracer_track(ct_chrome *c, uint64_t tid, const char *what);

/* ---- the CPU side (chrome_calls.c) ---- */

/* Writes the args of a GEMM call of entry point api (shape, types, compute type number
 * and name; api NULL: unknown) after other args. */
void chr_put_gemm_args(ct_chrome *c, const struct ct_gemm *g, const char *api);

/* Model callbacks: calls and tracer spans, NVTX ranges, STACK and MODULE records. */
void chr_on_span(void *user, const ct_span *s);
void chr_on_range(void *user, const ct_proc *p, const struct ct_range *r, const char *name);
void chr_on_stack(void *user, const ct_proc *p, const struct ct_stack *node);
void chr_on_module(void *user, const ct_proc *p, const struct ct_module *m, const char *path,
                   const char *build_id);

/* A PYCODE record (format 1.3): a Python code object the stacks name. */
void chr_on_pycode(void *user, const ct_proc *p, const struct ct_pycode *code, const char *file,
                   const char *qualname);

/* A library call joined with its child kernels (ct_inner_join's callback). */
void chr_on_inner_done(void *user, const ct_inner_call *call);

/* A range's gpu_user_annotation slices (ct_range_each's callback). */
void chr_on_range_gpu(void *user, const ct_range_span *r);

/* Frees the current file's stack table and call-site labels. */
void chr_drop_stacks(ct_chrome *c);

/* Names a device's process row of the current file the first time it is used. */
void chr_ensure_gpu_row(ct_chrome *c, uint64_t device);

/* Writes an intercepted call's slice now (inner: its child kernels' summary, alloc: what
 * an allocation or release did; either may be NULL), and its [memory] event. */
struct chr_alloc_view;
void chr_write_call(ct_chrome *c, const ct_span *s, const ct_inner_call *inner,
                    const struct chr_alloc_view *alloc);

/* Writes an NVTX range's slice now. */
void chr_write_range(ct_chrome *c, const struct ct_range *r, const char *name);

/* ---- outer slices first (chrome_order.c) ---- */

/* Writes a call, or holds it when nested (depth > 0) until its outermost call is
 * written; a call written brings the nested ones held for it, outer slices first
 * (arguments as chr_write_call's). */
void chr_order_call(ct_chrome *c, const ct_span *s, const ct_inner_call *inner,
                    const struct chr_alloc_view *alloc);

/* Writes a range, or holds it when nested (depth > 0) until its thread's next range of
 * depth 0, which brings the ones held, outer slices first. */
void chr_order_range(ct_chrome *c, const struct ct_range *r, const char *name);

/* Writes what is still held (a file's end: outer slices lost or outside the window)
 * and frees the file's copies. */
void chr_order_finish(ct_chrome *c);

/* ---- allocations (chrome_memory.c) ---- */

/* Matches an allocation or release call with the file's live allocations (report's
 * matching, ct_alloc_match). Returns 1 with *ch filled, 0 for other calls. */
int chr_memory_match(ct_chrome *c, const ct_span *s, ct_alloc_change *ch);

/* What an allocation or release call did, as its slice's args and its [memory] event
 * show it: the change and the live bytes right after it (kept with the call when its
 * slice is written later: chrome_order.c). */
typedef struct chr_alloc_view {
  ct_alloc_change ch;
  uint64_t live, total; /* live bytes of its counter, and of its Kineto device */
  int have_live, have_total;
} chr_alloc_view;

/* Applies a change to the live bytes, writes their counters' new values at ts (unless
 * --no-memory) and fills *v. */
void chr_memory_counters(ct_chrome *c, const ct_alloc_change *ch, uint64_t ts, chr_alloc_view *v);

/* The args of an allocation or release call's slice (v NULL: its record's only). */
void chr_put_alloc_args(ct_chrome *c, const ct_span *s, const chr_alloc_view *v);

/* Writes Kineto's "[memory]" instant event of an allocation or release call s, unless
 * --no-memory or nothing known changed (a release whose allocation is not in the
 * trace). */
void chr_memory_instant(ct_chrome *c, const ct_span *s, const chr_alloc_view *v);

/* Forgets the file's live allocations and counters (at its end). */
void chr_memory_finish(ct_chrome *c);

/* ---- queue-depth counters (chrome_queues.c) ---- */

/* With --queues: adds an activity to its stream's queue, writing the counter's changes. */
void chr_queue_activity(ct_chrome *c, const ct_activity *a);

/* Writes the counters' last changes and forgets the file's queues (at its end). */
void chr_queues_finish(ct_chrome *c);

#endif
