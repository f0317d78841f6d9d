/*
 * GPU idle-time analysis (cutrace gaps): per device and per stream the span, busy
 * and idle time, every idle gap attributed to exactly one cause, the largest gaps
 * with what every CPU thread was doing meanwhile, and findings that name a fix.
 * Definitions and precedence of the causes: docs/gaps.md.
 *
 * Streaming: the model (model.h) delivers activities in end order; the analysis
 * keeps, per device and per stream, only the busy intervals that a later activity
 * could still touch (a window of the longest activity seen, at least 1 ms), per
 * thread bounded rings of recent calls, and top-N heaps. Memory never grows with
 * the length of the trace.
 */
#ifndef CUTRACE_GAPS_H
#define CUTRACE_GAPS_H

#include <stdint.h>

#include "model.h"

/* One GPU idle gap as the analysis classified it. */
typedef struct ct_gap_info {
  const ct_proc *proc;          /* the process (trace file) it belongs to */
  uint64_t device;              /* device index */
  uint64_t stream;              /* stream id, or UINT64_MAX for a whole-device gap (no stream busy) */
  uint64_t start_ns, end_ns;    /* host clock */
  const char *cause;            /* "host_wait", "launch_overhead", "sync", "alloc", "other_stream",
                                   "tracer", "other", "external_wait" */
  const char *ended_by;         /* entry point of the call whose GPU work ended the gap, or NULL */
  uint64_t tid, corr;           /* that call's thread and correlation id (0: not known; kept by
                                   ct_gaps_set_callback's and ct_gaps_each's, not gap_spill.h) */
  const char *inside_call;      /* a device gap's host_wait spent inside one call (docs/gaps.md,
                                   inside_call), or NULL; ct_gaps_set_callback's and gap_spill.h's */
  uint64_t inside_ns;           /* its time in the gap */
  /* With ct_gaps_set_row_context only (NULL otherwise): the innermost NVTX push/pop range
   * open on tid when the ending call began ("" an unnamed one; NULL none or unknown), and
   * that call's call site ("fn (file.c:12)"; NULL without stacks). docs/gaps.md, "CSV". */
  const char *range;
  const char *callsite;
} ct_gap_info;

/*
 * Reads one trace file and calls fn for every gap of at least min_ns (device gaps and
 * per-stream gaps), in the order found. Returns like ct_model_read (0 clean, 1 partial,
 * -1 unreadable) and fills *st. The gap and its strings are valid during the call only.
 */
int ct_gaps_each(const char *path, uint64_t min_ns, void (*fn)(void *user, const ct_gap_info *gap),
                 void *user, ct_model_stats *st);

/* The causes, in the order of the idle breakdown. */
enum ct_gap_cause {
  CT_GAP_HOST_WAIT,
  CT_GAP_LAUNCH_OVERHEAD,
  CT_GAP_SYNC,
  CT_GAP_ALLOC,
  CT_GAP_OTHER_STREAM,
  CT_GAP_TRACER,
  CT_GAP_OTHER,
  CT_GAP_EXTERNAL_WAIT, /* the stream waited on an external semaphore: a producer outside
                           CUDA (Vulkan, another process) */
  CT_GAP_NCAUSES
};

/* The cause's name as in JSON ("host_wait", ...). */
const char *ct_gap_cause_name(enum ct_gap_cause c);

/* Thresholds of the analysis (docs/gaps.md). */
typedef struct ct_gaps_options {
  uint64_t min_gap_ns;          /* gaps shorter than this are not listed (still counted): 0 */
  uint64_t launch_threshold_ns; /* a gap this short is launch overhead: 10 us */
  unsigned top;                 /* how many of the largest gaps to keep: 10 */
  uint64_t launch_bound_min;    /* kernels in a row shorter than their launch call: 20 */
  uint64_t repeat_min;          /* copies or syncs before a finding names them: 4 */
  uint64_t sync_work_ns;        /* a sync waiting on less GPU work than this is "little": 50 us */
  uint64_t graph_min;           /* repetitions of a kernel sequence before a graph candidate: 10 */
} ct_gaps_options;

/* Fills *o with the defaults above. */
void ct_gaps_default_options(ct_gaps_options *o);

/* Busy and idle time of a device or a stream. */
typedef struct ct_gaps_usage {
  uint64_t first_ns, last_ns;   /* first GPU activity start, last end (span) */
  uint64_t busy_ns, idle_ns;    /* union of activities; span - busy - unrecorded */
  uint64_t unrecorded_ns;       /* time between activities that touched a pause of the
                                   tracer (PAUSE records): not idle, not known */
  uint64_t gaps;                /* idle gaps found */
  uint64_t idle_by_cause[CT_GAP_NCAUSES];
  uint64_t gaps_by_cause[CT_GAP_NCAUSES];
  uint64_t activities;
} ct_gaps_usage;

/* The time of u's span the tracer recorded: the span less its unrecorded time. */
static inline uint64_t ct_gaps_observed_ns(const ct_gaps_usage *u) {
  uint64_t span = u->last_ns - u->first_ns;
  return span > u->unrecorded_ns ? span - u->unrecorded_ns : 0;
}

/* A traced process (one input file). */
typedef struct ct_gaps_proc {
  char *path, *host, *cmdline;
  uint64_t pid, start_ns, realtime_ns; /* realtime_ns: wall clock at start_ns (0 unknown) */
  uint64_t first_ns;                   /* first event of the file: "trace start" */
  uint64_t pauses, paused_ns;          /* the tracer's pauses (format 1.3) and their time
                                          between the file's first and last event */
  const char *pause_why;               /* the first pause's reason, NULL when none */
  struct ct_job job;                   /* its rank in a distributed job (format 1.4;
                                          known = 0 when none) */
} ct_gaps_proc;

/* Communication kernels (NCCL's, NVSHMEM's: "nccl" or "nvshmem" in the name) against
 * the other kernels of a device (HTA's comm/compute overlap): the busy time of the
 * communication kernels' union, and the part of it during which other kernels ran
 * too. exposed = comm - overlap: communication the device spent doing nothing else,
 * what overlapping it with compute would save. All 0 when the device ran no
 * communication kernel. */
typedef struct ct_gaps_comm {
  uint64_t comm_ns, overlap_ns, exposed_ns;
  uint64_t comm_kernels;
} ct_gaps_comm;

/* Idle time of a device that two kinds of findings may both claim, measured gap by gap
 * (docs/gaps.md, "Findings add up"): the waits a CUDA-graph candidate may count, the
 * launch calls of kernels a launch-bound run may count, and the launching threads' copy
 * and set calls, inside gaps of cause alloc (alloc_in_loop claims them whole) and
 * inside the gaps that a little sync's return opened (sync_little_work claims those
 * whole). */
enum ct_gaps_meet {
  CT_MEET_GRAPH_ALLOC,
  CT_MEET_GRAPH_LSYNC,
  CT_MEET_LAUNCH_ALLOC,
  CT_MEET_LAUNCH_LSYNC,
  CT_MEET_COPY_ALLOC,
  CT_MEET_COPY_LSYNC,
  CT_MEET_N
};

typedef struct ct_gaps_device {
  unsigned proc;                /* index into ct_gaps_procs */
  uint64_t device;
  const char *name;             /* "" when unknown */
  ct_gaps_usage u;
  ct_gaps_comm comm;
  uint64_t findings_ns;         /* its findings' adds_ns summed: at most u.idle_ns */
  uint64_t meet[CT_MEET_N];     /* enum ct_gaps_meet */
} ct_gaps_device;

typedef struct ct_gaps_stream {
  unsigned proc;
  uint64_t device, stream;
  ct_gaps_usage u;
} ct_gaps_stream;

#define CT_GAP_MAX_THREADS 8
#define CT_GAP_MAX_CALLS 3

/* What one CPU thread did during a gap. */
typedef struct ct_gap_thread {
  uint64_t tid;
  const char *name;             /* from the thread's THREAD record, or NULL */
  int tracer_thread;            /* one of the tracer's own threads (shown only when it did
                                   tracer work during the gap) */
  int launching;                /* this thread made the call that ended the gap */
  int truncated;                /* its call history did not reach back to the gap's start */
  uint64_t ncalls;              /* intercepted calls overlapping the gap */
  uint64_t in_cuda_ns;          /* time of the gap spent inside them */
  uint64_t tracer_ns;           /* time of the gap spent in the tracer's own work */
  unsigned ncall_shown;
  struct {
    const char *name;
    uint64_t begin_ns, end_ns;
    int is_tracer;
  } calls[CT_GAP_MAX_CALLS];    /* the longest overlapping calls */
} ct_gap_thread;

/* A symbolised frame of a call stack (strings live as long as the analysis). */
typedef struct ct_gap_frame {
  const char *function, *file, *module; /* "" when unknown; see stacks.h for fallbacks */
  unsigned line;                        /* 0 when unknown */
  const char *note;                     /* NULL, "build-id mismatch" or "file missing" */
} ct_gap_frame;

#define CT_GAP_MAX_FRAMES 48

/* The call that ended a gap: the call of the GPU operation that ended it or, when that
 * operation was launched inside a library call (depth > 0: a cuBLAS kernel), the
 * outermost call around it. */
typedef struct ct_gap_call {
  int known;                  /* 1: that call is in the trace */
  int nested;                 /* the operation's own call was inside it (depth > 0) */
  const char *api;            /* its entry point ("cudaLaunchKernel", "cublasSgemm_v2") */
  uint64_t tid, corr, begin_ns;
  uint64_t stack;             /* its STACK node (0: none recorded) */
  uint64_t parent;            /* internal: the outermost call's corr while not yet seen */
  const char *range;          /* innermost NVTX push/pop range open on tid at begin_ns, or NULL */
  uint64_t range_begin_ns, range_end_ns;
  const ct_gap_frame *frames; /* its stack, innermost first (NULL when none) */
  unsigned nframes;
  unsigned site;              /* the first frame outside CUDA's libraries (== nframes: none) */
  const char *callsite;       /* that frame as text ("fn (file.c:12)", as gaps_rows.c's), or NULL */
} ct_gap_call;

/* One of the largest gaps, with its context. Strings live as long as the analysis. */
typedef struct ct_gap_detail {
  unsigned proc;
  uint64_t device, stream;      /* stream: UINT64_MAX for a device gap */
  uint64_t start_ns, end_ns;
  enum ct_gap_cause cause;
  /* the GPU operation that ended the gap, and its call */
  int has_call;
  uint64_t op_stream, op_type, tid, call_begin_ns, call_end_ns;
  const char *op_name, *api;   /* kernel (mangled) or copy label; entry point */
  ct_gap_call ending;           /* the call that ended it, with its range and stack */
  /* host_wait: the intercepted call (no launch, allocation or blocking call, not the
   * ending call) in which the launching thread spent at least half the gap (a module
   * load, a graph instantiation, a library's host-side call), and its time there; NULL
   * when none: the thread was mostly outside CUDA */
  const char *inside_call;
  uint64_t inside_ns;
  unsigned nthreads;
  uint64_t threads_omitted;
  ct_gap_thread threads[CT_GAP_MAX_THREADS];
} ct_gap_detail;

enum ct_finding_kind {
  CT_FIND_LAUNCH_BOUND,    /* runs of kernels shorter than their launch calls */
  CT_FIND_PAGEABLE_COPY,   /* copies from or to pageable memory, repeated */
  CT_FIND_SYNC_COPY,       /* synchronous copies, repeated */
  CT_FIND_LITTLE_SYNC,     /* syncs that waited on little GPU work */
  CT_FIND_EXPOSED_COMM,    /* communication kernels not overlapped by compute */
  CT_FIND_GRAPH_CANDIDATE, /* a repeated kernel sequence waiting on its launches */
  CT_FIND_ALLOC,           /* repeated gaps spent allocating and freeing memory */
  CT_FIND_SLOW_CALL,       /* launching calls that held the thread while the device was idle */
  CT_FIND_HOST_BOUND       /* host_wait gaps ending at one call site, the CPU outside CUDA */
};

/* A finding: a pattern, measured, and the fix it suggests. */
typedef struct ct_gaps_finding {
  enum ct_finding_kind kind;
  unsigned proc;
  uint64_t device;
  const char *what;        /* copy directions ("HtoD,DtoH"), or the sync entry point */
  uint64_t count;          /* kernels / copies / syncs */
  uint64_t stretches;      /* launch-bound: how many runs */
  uint64_t bytes;          /* copies */
  uint64_t gpu_ns;         /* GPU time of those operations */
  uint64_t cpu_ns;         /* time in their calls */
  uint64_t first_ns, last_ns;     /* launch-bound: the longest run; else first and last
                                     (graph candidate: first instance's start, last's end) */
  uint64_t longest_count;         /* launch-bound: kernels in the longest run */
  const char *fix;
  /* alloc: what = the allocation entry point that took most of those gaps, count =
   * the gaps, idle_ns = their idle time, cpu_ns = the time of allocation calls inside
   * them, first_ns / last_ns = the first gap's start and the last one's end */
  /* graph candidate: what = the kernels ("a > b > c"), count = repetitions, gpu_ns =
   * GPU time of their kernels; the launching thread and stream, the sequence's length,
   * the idle time inside its instances a graph would remove, and their summed span */
  uint64_t tid, stream, length, idle_ns, span_ns;
  /* every finding: the idle time its fix would recover, estimated (docs/gaps.md) */
  uint64_t saving_ns;
  /* slow launching call: what = the call (outermost around the launch, or the launch),
   * count = the gaps it ended, idle_ns = its time inside them, cpu_ns = the median of
   * that per gap, gaps_idle_ns = those gaps' idle time, device_idle_ns = the device's;
   * first_call_ns = the first (earliest) call's time inside its gap, rest_median_ns =
   * the median of the others'; pattern: "first_call" (warm-up), "every_call" or
   * "one_call"; site = its call site ("fn (file.c:12)"), NULL when unknown; nested =
   * the kernel was launched inside it */
  const char *site, *pattern;
  uint64_t first_call_ns, rest_median_ns, device_idle_ns, gaps_idle_ns;
  int nested;
  /* slow launching call: its time inside the gaps that began while it still ran after
   * its own launch (after_launch_gaps of them; gaps ended by any call), part of the
   * saving of every_call / one_call */
  uint64_t after_launch_ns, after_launch_gaps;
  /* pageable copies: the transfer time pinned memory would save, at the rate this
   * trace's pinned copies of the same direction ran (in saving_ns); lower_bound: some
   * direction had no pinned copy to measure, so the saving is at least saving_ns */
  uint64_t transfer_saving_ns;
  int lower_bound;
  /* host-bound launch: what = the ending call, site = its call site, count = the
   * host_wait gaps it ended there, gaps_idle_ns = their idle time, idle_ns = the
   * launching thread's time outside CUDA calls inside them (the saving), cpu_ns = the
   * rest (its time in CUDA calls there), rest_median_ns = the median gap,
   * device_idle_ns; tid and thread_name = the launching thread (tid 0, name NULL when
   * the gaps were launched by several threads; name NULL when unnamed) */
  const char *thread_name;
  /* syncs on little GPU work: sync_gaps = the device gaps of cause sync that their
   * returns opened (idle_ns = those gaps' idle), sync_after_ns = that idle after the
   * syncs returned (the saving's part beyond the calls' time) */
  uint64_t sync_gaps, sync_after_ns;
  /* what the findings share, for their overlap (docs/gaps.md, "Findings add up"):
   * copies: the calls beyond the transfers of the copies both pageable and synchronous
   * (in both copy findings' savings); slow launching call: its time inside alloc gaps
   * and inside the gaps a little sync's return opened (in alloc_in_loop's and
   * sync_little_work's savings) */
  uint64_t shared_copies_ns, held_alloc_ns, held_lsync_ns;
  /* slow launching call: its time inside the gaps it ended with a kernel that a
   * launch-bound run counts (no longer than its launch call: that call's time) */
  uint64_t held_launch_ns;
  /* copies: the launching threads' copy and set calls' time inside the device's gaps (the
   * idle part of the calls beyond the transfers; the transfers' own time, and call time
   * outside the device's gaps, before its first or after its last work, are not idle) */
  uint64_t copies_in_gaps_ns;
  /* graph candidate: the part of idle_ns inside the kernels' own launch calls (the rest:
   * the launching thread elsewhere, e.g. outside CUDA) */
  uint64_t in_calls_ns;
  /* every finding, in the order listed (by what it adds, ct_gaps_account_findings): the
   * part of saving_ns that the findings above it on that device already count (overlap_ns), and what it adds to their total
   * (adds_ns: saving less overlap, at most the device's idle time not yet claimed; 0 for
   * exposed communication, whose saving is busy time, not idle); not_idle_ns: the part of
   * saving_ns that is not idle time in the device's gaps (copies: the transfers at the
   * pinned rate, and calls beyond the transfers not inside gaps; exposed communication:
   * all of it), counted neither in overlap_ns nor in adds_ns */
  uint64_t overlap_ns, adds_ns, not_idle_ns;
} ct_gaps_finding;

/* Device gaps grouped by what ended them: the cause, the ending call (the outermost
 * call around the operation that ended the gap) and that call's call site. */
typedef struct ct_gaps_ender {
  unsigned proc;
  uint64_t device;
  enum ct_gap_cause cause;
  const char *api;          /* NULL: the operation's call is not in the trace */
  int nested;               /* the operation was launched inside that call */
  const char *site;         /* "fn (file.c:12)", "train.py:12 step"; NULL when unknown */
  uint64_t count, idle_ns;  /* the gaps and their idle time */
  uint64_t median_ns;       /* the median gap (stats.h: within 3.1%) */
  uint64_t incall_ns;       /* the ending calls' time inside the gaps */
  uint64_t first_ns, last_ns; /* the first gap's start, the last one's end */
  uint64_t device_idle_ns;  /* the device's idle time (the share's whole) */
} ct_gaps_ender;

/* An analysis over one or more trace files. */
typedef struct ct_gaps ct_gaps;

/* Creates an analysis (o may be NULL for the defaults). Returns NULL when out of memory. */
ct_gaps *ct_gaps_new(const ct_gaps_options *o);

/*
 * Sets a function called for every gap of at least min_gap_ns (device and stream gaps)
 * as it is classified; the ct_gap_info is valid during the call only.
 */
void ct_gaps_set_callback(ct_gaps *g, void (*fn)(void *user, const ct_gap_info *gap), void *user);

/*
 * Makes the callback's gaps carry range and callsite (call before the first file). A
 * gap whose range is not known yet (it closes later: RANGE records come when a range
 * closes) is held, and the gaps after it with it, so that the callback still sees them
 * in the order found (tools/gaps_rows.c; the memory bound: docs/gaps.md, "CSV"). Each
 * file is read twice (its RANGE and API records first; ct_gaps_add_file copies standard
 * input, "-", into a temporary file for that).
 */
void ct_gaps_set_row_context(ct_gaps *g);

/* The callback's gaps of the last file added that were handed over without knowing their
 * range (they waited too long: docs/gaps.md, "CSV"). */
uint64_t ct_gaps_rows_unresolved(const ct_gaps *g);

/*
 * Analyses one trace file (each process's devices are kept apart). Returns like
 * ct_model_read: 0 clean, 1 partial (damaged; what could be read was used), -1
 * unreadable; fills *st (may be NULL).
 */
int ct_gaps_add_file(ct_gaps *g, const char *path, ct_model_stats *st);

/* One file being analysed through a model read the caller runs (a tee with other
 * consumers: model_tee.h); ct_gaps_add_file is begin, ct_model_read, end. */
typedef struct ct_gaps_file ct_gaps_file;

/* Starts analysing file path into g: *ops and the returned pointer are the consumer
 * to feed the model read with. Returns NULL when out of memory. */
ct_gaps_file *ct_gaps_file_begin(ct_gaps *g, const char *path, const ct_model_ops **ops);

/* Ends the file after the model read that returned rc into st (not NULL): merges its
 * devices, streams and gaps into g and frees gf. Returns rc, or 1 (st->message set)
 * when a clean read ran out of memory in the analysis. */
int ct_gaps_file_end(ct_gaps_file *gf, int rc, ct_model_stats *st);

/* Results, valid until ct_gaps_free. Arrays are in the order first seen. */
const ct_gaps_proc *ct_gaps_procs(const ct_gaps *g, unsigned *n);
const ct_gaps_device *ct_gaps_devices(const ct_gaps *g, unsigned *n);
const ct_gaps_stream *ct_gaps_streams(const ct_gaps *g, unsigned *n);
/* The findings, ordered by what each adds to their total (adds_ns), largest first, then
 * by saving (docs/gaps.md, "Findings add up": the order). */
const ct_gaps_finding *ct_gaps_findings(const ct_gaps *g, unsigned *n);
/* Device gaps grouped by what ended them, most idle time first. */
const ct_gaps_ender *ct_gaps_enders(const ct_gaps *g, unsigned *n);

/* The findings' savings added up over every device (each device's part, its findings'
 * adds_ns summed, at most its idle time) into *saving_ns, and the devices' idle time
 * into *idle_ns (so *saving_ns <= *idle_ns); returns how many devices were summed. */
unsigned ct_gaps_findings_total(const ct_gaps *g, uint64_t *saving_ns, uint64_t *idle_ns);

/* The largest device gaps (longest first), and the largest per-stream gaps. */
const ct_gap_detail *ct_gaps_top(const ct_gaps *g, unsigned *n);
const ct_gap_detail *ct_gaps_top_stream(const ct_gaps *g, unsigned *n);

/* Activities that arrived after the time they cover had been analysed (see docs). */
uint64_t ct_gaps_late(const ct_gaps *g);

/* Calls that stopped waiting for their GPU record before it came (docs/gaps.md "How it
 * streams"): finalisation went past their begin, so GPU work of theirs that comes later
 * is late. */
uint64_t ct_gaps_waits_cut(const ct_gaps *g);

/*
 * The likely straggler among the devices that ran communication kernels (ranks of one
 * job, one file each, or several devices of a process): inside a collective, every
 * other participant's kernel waits for the slowest to arrive, so the device with the
 * least communication time is the one the others waited for. Found when at least two
 * devices communicated and the most communication time is at least 1.25 times and
 * 100 us more than the least. Returns the index into ct_gaps_devices, or -1.
 */
int ct_gaps_comm_straggler(const ct_gaps *g);

/* The straggler rule on communication times: the most (max) is at least 1.25 times and
 * 100 us more than the least (min). */
static inline int ct_gaps_comm_apart(uint64_t min, uint64_t max) {
  return max >= min + 100000 && max * 4 >= min * 5;
}

/* One rank of a distributed job: its GPUs' time summed over its files and devices. */
typedef struct ct_gaps_rank {
  uint64_t rank;
  unsigned files, devices;
  uint64_t observed_ns;         /* the devices' recorded spans (ct_gaps_observed_ns) */
  uint64_t busy_ns, idle_ns;
  uint64_t idle_by_cause[CT_GAP_NCAUSES];
  uint64_t comm_ns, exposed_ns; /* communication kernels, and their time alone (ct_gaps_comm) */
} ct_gaps_rank;

/* The ranks of the inputs side by side (files without a rank, a launcher's, left out). */
typedef struct ct_gaps_ranks {
  ct_gaps_rank *ranks;          /* by rank number; NULL when fewer than 2 ranks */
  unsigned n;
  int most_idle;                /* index of the rank with the lowest busy share (the lower
                                   rank on ties), -1 when none */
  int waited_for;               /* index of the rank with the least communication time, by
                                   the straggler rule (ct_gaps_comm_apart) over ranks; -1 */
  int most_comm;                /* with waited_for: the rank with the most */
} ct_gaps_ranks;

/* Compares the ranks of g's inputs into *out (n = 0 when fewer than two ranks are
 * present). Returns 0, or -1 when out of memory. Free with ct_gaps_ranks_free. */
int ct_gaps_rank_compare(const ct_gaps *g, ct_gaps_ranks *out);

/* Frees what ct_gaps_rank_compare allocated. */
void ct_gaps_ranks_free(ct_gaps_ranks *r);

/* Frees the analysis and its results. */
void ct_gaps_free(ct_gaps *g);

#endif
