/*
 * The trace model every cutrace command reads through: it turns one trace file's
 * records into joined, time-ordered events, streaming, with memory bounded by
 * what is in flight (open calls, GPU work not yet completed) and the reorder
 * window — never by the trace's length.
 *
 * Delivery order: events are delivered in nondecreasing END time (span end_ns,
 * activity end_ns), which is nearly the order the preload writes them in. Records
 * that arrive later than the reorder window are still delivered (with late = 1),
 * and counted.
 *
 * Joining: an activity (GPU record) is delivered with the call that caused it
 * (API record with the same corr, and its LAUNCH / MEMOP / GEMM detail record),
 * whichever of them the file holds first: an activity whose call has not been read
 * waits for it (and holds back what follows it) until both CT_MODEL_JOIN_WAIT_NS (2 s)
 * of trace time have passed and more than CT_MODEL_JOIN_HOLD events are held back (a
 * memory bound, not a time bound: a starved writer thread lands one thread's buffer
 * seconds of trace time after another's), unless the file reported drops; so does a kernel whose LAUNCH names a KERNEL_ATTR record, or
 * whose launch shape's OCCUPANCY record, was not read yet (format 1.6: written by the
 * thread that launched the function, the shape, first), and a span whose STACK node or
 * one of its ancestors was not read yet (tools/model_ready.h). A span is delivered with its detail record and, when its GPU
 * work is known by then, the activity's times. Once the file reported drops or damage,
 * a call still waiting for its GPU record (or call) once its stream's later work was
 * delivered a window earlier is given up on (ct_model_stats.calls_given_up): a record
 * that late comes unjoined. A detail record (the preload writes it before its API
 * record) waits for its call; once the file reported drops or damage, one whose API
 * and GPU records have not come within 2 s of trace time is given up on too.
 */
#ifndef CUTRACE_MODEL_H
#define CUTRACE_MODEL_H

#include <stdint.h>

#include "apis.h"
#include "cutrace/format.h"
#include "model_select.h"

/* How long a span or activity waits for a record it names (its call, KERNEL_ATTR,
 * OCCUPANCY, STACK): until this much trace time has passed since its end AND more than
 * CT_MODEL_JOIN_HOLD events wait behind it (model.c, awaits_join). The second bound is
 * in events because the records that can come between a GPU record and its call are
 * those of one writer round (every thread's buffer drained up to one snapshot), however
 * long that round took: at most the threads' buffers' worth (CUTRACE_BUFFER_KB, 1 MiB
 * each: about 10,000 API records) unless the tracer dropped records. */
#define CT_MODEL_JOIN_WAIT_NS 2000000000ull
#define CT_MODEL_JOIN_HOLD (1u << 19) /* events (120 bytes each: 60 MiB) */

/* The adaptive reorder window's first value, and the most any window can be. A reader
 * that knows how late the file's records come (dump --csv's first pass) fixes the
 * window to that lateness, so that nothing is delivered out of end order. */
#define CT_MODEL_START_WINDOW_NS 20000000ull
#define CT_MODEL_MAX_WINDOW_NS 3600000000000ull

/* One traced process (one trace file). */
typedef struct ct_proc {
  const char *path;          /* the trace file */
  struct ct_process rec;     /* the PROCESS record (zeros until seen) */
  const char *host, *exe;    /* resolved strings ("" when unknown) */
  const char *cmdline;       /* arguments joined with spaces */
  unsigned ndevices;
  struct ct_device devices[16];
  const char *device_names[16];
  const char *device_pci[16], *device_uuid[16]; /* format 1.4; "" when unknown */
  struct ct_job job;         /* the JOB record (format 1.4); known = 0 when none */
  const char *job_source, *job_id, *visible_devices; /* its strings ("" when none) */
} ct_proc;

/* Which detail a span or activity carries. */
enum ct_detail { CT_DETAIL_NONE, CT_DETAIL_LAUNCH, CT_DETAIL_MEMOP, CT_DETAIL_GEMM,
                 CT_DETAIL_GRAPH, /* a graph launch: d.graph.exec (format 1.2) */
                 CT_DETAIL_ALLOC, /* an allocation or release: d.alloc (format 1.5) */
                 CT_DETAIL_POLL   /* a query standing for a sequence of polls: d.poll (1.12) */ };

/* The detail record of a call, as its `detail` says. */
typedef union ct_detail_data {
  struct ct_launch launch;
  struct ct_memop memop;
  struct ct_gemm gemm;
  struct ct_graph_launch graph;
  struct ct_alloc alloc;
  struct ct_poll poll;
} ct_detail_data;

/* A CPU span: an intercepted call (API record) or the tracer's own work. */
typedef struct ct_span {
  const ct_proc *proc;
  int is_tracer;                 /* 1: TRACER record (flush, poll, ...) */
  uint64_t tid, begin_ns, end_ns, corr, device, stream, result, depth, flags;
  uint64_t stack;                /* STACK node of the call site (0 = none) */
  uint64_t parent;               /* depth > 0: corr of the enclosing outermost call */
  uint64_t polls;                /* a query with a POLL record (1.12): the polls it stands for, else 0 */
  const char *name;              /* entry point, or the tracer's label */
  enum ct_api_category category; /* from hooks.def (CT_CAT_OTHER for tracer spans) */
  enum ct_api_layer layer;
  enum ct_detail detail;
  ct_detail_data d;
  const char *kernel;            /* LAUNCH: the kernel's mangled name, else NULL */
  uint64_t amount;               /* tracer spans: bytes/events handled */
  int late;
  int gpu_pending;               /* marked CT_API_TIMED and its GPU record not delivered yet */
} ct_span;

/* A GPU activity joined with its call. */
typedef struct ct_activity {
  const ct_proc *proc;
  uint64_t corr, device, stream, start_ns, end_ns, type; /* CT_GPU_* */
  const char *name;       /* kernel mangled name; for copies "memcpy HtoD" etc. */
  int has_call;           /* 1 when the launching call was found */
  uint64_t tid, call_begin_ns, call_end_ns, call_flags;
  uint64_t call_depth;    /* the call's depth (> 0: launched inside a library call) */
  uint64_t call_stack;    /* STACK node of the call site (0 = none) */
  uint64_t call_parent;   /* call_depth > 0: corr of the enclosing outermost call */
  const char *api;        /* the call's entry point, or NULL */
  enum ct_detail detail;
  ct_detail_data d;
  int late;
} ct_activity;

/* What a consumer is told. Any callback may be NULL. */
typedef struct ct_model_ops {
  /* Once the PROCESS record (and DEVICE records seen so far) are known. */
  void (*on_process)(void *user, const ct_proc *proc);
  void (*on_span)(void *user, const ct_span *span);
  void (*on_activity)(void *user, const ct_activity *act);
  /* A stream's first use (STREAM record). */
  void (*on_stream)(void *user, const ct_proc *proc, const struct ct_stream *stream);
  void (*on_thread)(void *user, const ct_proc *proc, const struct ct_thread *thread,
                    const char *name);
  void (*on_range)(void *user, const ct_proc *proc, const struct ct_range *range,
                   const char *name);
  void (*on_drop)(void *user, const ct_proc *proc, const struct ct_drop *drop);
  void (*on_clock)(void *user, const ct_proc *proc, const struct ct_clock *clock);
  /* A call-stack node (format 1.1): delivered as read; a span naming a node waits for
   * it and its ancestors (up to 2 s of trace time, not once the file reported drops),
   * but an activity's call_stack may name it before (ids are process-wide): keep a
   * table, resolve at output time. */
  void (*on_stack)(void *user, const ct_proc *proc, const struct ct_stack *node);
  /* A loaded ELF object (format 1.1); path and build_id resolved ("" when none). */
  void (*on_module)(void *user, const ct_proc *proc, const struct ct_module *module,
                    const char *path, const char *build_id);
  /* A Python code object (format 1.3) that Python frames of STACK nodes name;
   * file and qualname resolved ("" when unknown). */
  void (*on_pycode)(void *user, const ct_proc *proc, const struct ct_pycode *code,
                    const char *file, const char *qualname);
  /* A graph instantiation's inventory (format 1.2), delivered as read: before the
   * launches of its exec that follow it in the file. A later one for the same exec
   * (an exec update) replaces it. */
  void (*on_graph)(void *user, const ct_proc *proc, const struct ct_graph *graph);
  /* One distinct kernel of the inventory just delivered; name "" when unknown. */
  void (*on_graph_kernel)(void *user, const ct_proc *proc, const struct ct_graph_kernel *kernel,
                          const char *name);
  /* A PAUSE record (format 1.3): nothing of the program was recorded from begin_ns to
   * end_ns (0: open, written when the pause began; the same begin_ns comes again with
   * its end). Delivered as read, so before every span and activity recorded after
   * the pause began or ended. why is "delay", "profiler", "nvtx" or "duration". */
  void (*on_pause)(void *user, const ct_proc *proc, const struct ct_pause *pause,
                   const char *why);
  /* A launched function's attributes (format 1.6), delivered as read: before the
   * activities whose LAUNCH names its id (attr), which wait for it (up to 2 s of trace
   * time, not once the file reported drops); another thread's launch may still come
   * first as a span: keep a table, resolve at output time. name "" when unknown. */
  void (*on_kernel_attr)(void *user, const ct_proc *proc, const struct ct_kernel_attr *attr,
                         const char *name);
  /* The resident blocks per SM of one launch shape (format 1.6), delivered as read:
   * before the activities of that shape, which wait for it as for their KERNEL_ATTR
   * (same caveat as on_kernel_attr). */
  void (*on_occupancy)(void *user, const ct_proc *proc, const struct ct_occupancy *occ);
  /* A GPU record that is not delivered (left out by the selection, ct_model_options
   * select, or outside from/to) whose call was delivered first with gpu_pending: what
   * waits for that call's GPU record (gaps_launches.c) stops waiting. corr is the call's;
   * device and stream are the record's. */
  void (*on_withheld)(void *user, const ct_proc *proc, uint64_t corr, uint64_t device,
                      uint64_t stream);
} ct_model_ops;

/* Totals of one file's reading. */
typedef struct ct_model_stats {
  uint64_t records, spans, activities, unmatched_activities, late, dropped;
  uint64_t first_ns, last_ns;    /* time span covered by spans and activities */
  int has_end;                   /* the END record was seen */
  int damaged;                   /* the reader hit damage: see message */
  char message[300];             /* the reader's first problem, "" when none */
  uint16_t major, minor;
  uint64_t calls_given_up;       /* calls whose other record stopped being waited for
                                    (model_waits.h: dropped or very late records; and
                                    detail records whose call never came) */
  uint64_t calls_peak;           /* the most calls in flight at once (memory) */
  uint64_t unselected;           /* activities the selection (options.select) left out */
  /* GPU activities with a corr delivered without their call (has_call 0), other than
   * on a file that reported drops: joins_missed in all; joins_given_up of them were
   * released because their wait ran out (CT_MODEL_JOIN_WAIT_NS of trace time and more
   * than CT_MODEL_JOIN_HOLD events held back), the rest at the end of the file;
   * calls_after_give_up: calls whose record came after their activity was given up
   * on, the latest late_call_max_ns of trace time behind the newest end read. */
  uint64_t joins_missed, joins_given_up, calls_after_give_up, late_call_max_ns;
  uint64_t join_hold;            /* the events a wait held back before it could end */
} ct_model_stats;

/* One end of a time filter (--from, --to): ns after the trace's start (its PROCESS
 * record's start_ns, else its first event), or an absolute host time (CLOCK_MONOTONIC
 * ns, as `cutrace gaps` prints "host time"). */
typedef struct ct_time_bound {
  int set, absolute;
  uint64_t ns;
} ct_time_bound;

/* Options of the model. */
typedef struct ct_model_options {
  uint64_t window_ns;  /* fixed reorder window (at most CT_MODEL_MAX_WINDOW_NS: above,
                          that); 0 = adaptive (CT_MODEL_START_WINDOW_NS growing to 4x the
                          largest lateness seen). Either is at most 2 s while the model
                          holds more than join_hold events */
  /* Time filter: only spans, activities, NVTX ranges and pauses that overlap [from, to]
   * are delivered; the time before from and after to is delivered as pauses (why
   * "filter"), so that idle time there is not counted. Unset bounds: no limit. */
  ct_time_bound from, to;
  /* Selection (--device, --stream, --kernel; NULL: everything): only the activities it
   * selects are delivered (ct_model_stats.unselected counts the others); spans, ranges
   * and everything else are delivered as without it. Not copied: must outlive reads. */
  const ct_select *select;
  uint64_t join_hold;  /* events held back before a wait may end (0: the environment's
                          CUTRACE_JOIN_HOLD, else CT_MODEL_JOIN_HOLD) */
} ct_model_options;

/* The options every ct_model_read given NULL opts uses from now on (the CLI's
 * --from/--to for every pass of every command). NULL restores the defaults. */
void ct_model_set_defaults(const ct_model_options *opts);

/* The options set by ct_model_set_defaults (zero when none): the CLI's --from/--to, for
 * advice lines that repeat them. */
void ct_model_get_defaults(ct_model_options *opts);

/* The default time filter resolved for a trace that starts at start_ns: [*from, *to]
 * (0 and UINT64_MAX when unbounded). For readers that do not go through the model. */
void ct_model_default_window(uint64_t start_ns, uint64_t *from, uint64_t *to);

/*
 * Reads one trace file, calling ops in delivery order. Returns 0 for a clean
 * read, 1 when the file was damaged or truncated (every readable event was still
 * delivered; st->message says where it stopped), or -1 when it could not be read
 * at all (st->message says why). opts may be NULL.
 */
int ct_model_read(const char *path, const ct_model_options *opts, const ct_model_ops *ops,
                  void *user, ct_model_stats *st);

/* Demangles a C++ symbol into buf (at most len bytes). Returns buf, or name when it
 * is not a mangled name or cannot be demangled. */
const char *ct_demangle(const char *name, char *buf, unsigned long len);

/* A label for a copy or set: "memcpy HtoD", "memcpy DtoH", "memset", ... */
const char *ct_memop_label(uint64_t kind);

#endif
