/*
 * Internal state of the GPU idle-time analysis (gaps.h), shared by its files:
 *   gaps.c          the public API, the model callbacks, moving a file's results into g
 *   gaps_state.c    interned strings, per-device / per-stream / per-thread lookups, rings
 *   gaps_busy.c     busy intervals per device and stream, finalisation, idle accounting
 *   gaps_cause.c    the cause of each gap (precedence in docs/gaps.md)
 *   gaps_threads.c  what each CPU thread did during the largest gaps, the top-N heaps
 *   gaps_findings.c launch-bound runs, copy patterns, little syncs, and their findings
 *   gaps_graphs.c   repeated kernel sequences: CUDA-graph candidates
 *   gaps_launches.c launches whose GPU time has not come yet: they hold finalisation back
 *   gaps_rows.c     the range and call site of every gap handed to the callback (CSV)
 *
 * Busy intervals. Per device and per stream a "tracker" holds, sorted, the disjoint
 * busy intervals (unions of activities) that a later activity could still touch.
 * Activities come in nondecreasing end time, so a new one merges into the last few
 * intervals. An interval is final once the newest time delivered, minus the window
 * (the longest activity seen plus a margin, at least 1 ms), has passed its end, and
 * so has the begin of every call still waiting for its GPU record (gaps_launches.c):
 * no later activity can start before that. When an interval becomes final, the gap
 * between it and the previous final interval is classified, with the operation that
 * starts the interval as the one that ended the gap.
 *
 * CPU side. Per thread three bounded rings keep the recent outermost calls, the
 * recent blocking calls (syncs, synchronous copies) and the tracer's own spans, in
 * end order; the classification and the "what each thread did" snapshot read them.
 */
#ifndef CUTRACE_GAPS_INTERNAL_H
#define CUTRACE_GAPS_INTERNAL_H

#include "gaps.h"
#include "pauses.h"

#include <stddef.h>
#include <stdint.h>

#define WINDOW_FLOOR_NS 1000000ull   /* the smallest finalisation window */
#define WINDOW_MARGIN_NS 100000ull   /* added to the longest activity seen */
#define RING_CALLS 4096              /* recent outermost calls kept per thread */
#define RING_RANGES 1024             /* recent closed NVTX ranges kept per thread */
#define RECENT_ENDS 4096             /* recent activity ends kept per device */
#define RECENT_FINAL 512             /* recent final busy intervals kept per device */
#define RECENT_KERNELS 256           /* kernels kept per device until communication starts */
#define PENDING_SYNCS 256            /* syncs per device waiting for their GPU time to be final */
#define LS_AFTER_RING 16             /* little syncs' gaps' parts after the return kept per device */
#define MEET_PAIRS 64 /* kernel pairs per device whose waits meet alloc or little-sync gaps */
#define SYNC_GAP_SLACK_NS 50000ull   /* a sync gap starting this soon after a little sync returned */
#define OTHER_STREAM_SLACK_NS 50000ull /* an op starting this soon after another stream's ended */
#define LAUNCHES_WAITING 4096       /* launches per file whose GPU record has not come (a power of 2) */
#define LAUNCH_WAIT_NS 2000000000ull /* in a file that lost records, a launch holds finalisation
                                        back this long at most */
#define LAUNCH_HOLD_OPEN 65536       /* open busy intervals of one device (its trackers together)
                                        at which the calls it waits for stop waiting */
#define SWEEP_EVERY 1024             /* events between checks of every tracker */
#define LITTLE_SYNC_TOTAL_NS 1000000ull /* little syncs worth a finding regardless of count */
#define EXPOSED_COMM_SHARE 0.05       /* exposed communication worth a finding: of the span */
#define SLOW_CALL_TOTAL_NS 100000ull  /* launching calls' time in gaps worth a finding */
#define SLOW_CALL_SHARE 0.05          /* ... and of the device's idle time */
#define SLOW_CALL_MEDIAN_NS 50000ull  /* a launching call this long per gap is slow */
#define HOST_BOUND_TOTAL_NS 100000ull /* time outside CUDA in host_wait gaps worth a finding */
#define HOST_BOUND_SHARE 0.05         /* ... and of the device's idle time */
#define SLOW_CALL_FIRST_NS 1000000ull /* a first call this long (10x the others' median,
                                         which is fast) is a warm-up */

/* ---- state ---------------------------------------------------------------------- */

/* The GPU operation that starts a busy interval, and its call. */
typedef struct opinfo {
  uint64_t stream, type, tid, call_begin, call_end;
  const char *api, *name; /* interned */
  int has_call;
  uint64_t corr, depth, parent, stack; /* its call's (see ct_activity) */
  /* a kernel that waited on its launch after the previous kernel its thread launched on
   * its stream (the waits a CUDA-graph candidate counts, gaps_graphs.c): that kernel's
   * end, else 0; short_kernel: no longer than its launch call, within 25% (a kernel a
   * launch-bound run counts) */
  uint64_t wait_from;
  const char *wait_after; /* ... and that kernel's name (interned) */
  int short_kernel;
} opinfo;

typedef struct ivl {
  uint64_t start, end;
  opinfo op;
} ivl;

struct devstate;

/* Busy intervals and idle totals of one device or one stream. */
typedef struct tracker {
  ivl *q;
  size_t head, n, cap; /* open intervals are q[head..n) */
  int have_final;
  uint64_t final_end;
  ct_gaps_usage u;
  struct devstate *dev;
  uint64_t stream; /* UINT64_MAX for the device tracker */
  int silent;      /* busy time only, no gaps (the communication / compute unions) */
} tracker;

/* The busy unions kept per device for communication / compute overlap (docs/gaps.md,
 * "Communication"): communication kernels, other kernels, and all kernels. Overlap =
 * comm + compute - kernels. */
enum { OV_COMM, OV_COMPUTE, OV_KERNELS, OV_N };

typedef struct span_ring_entry {
  uint64_t begin, end;
  uint64_t corr, stack;   /* the call's correlation id and STACK node */
  const char *name;
  uint8_t is_tracer, is_launch, is_blocking;
  uint8_t is_alloc;       /* hooks.def category ALLOC or FREE (cudaMalloc, cuMemFree_v2, ...) */
  uint8_t stream_role;    /* STREAM_ROLE_*: what the call does to its stream */
  uint64_t stream;        /* the call's stream (meaningful with a stream_role) */
} span_ring_entry;

/* What a call does to the stream it names (span_ring_entry.stream_role). */
enum { STREAM_ROLE_NONE, STREAM_ROLE_WORK /* queues GPU work: launches, copies, sets, GEMMs, graphs */,
       STREAM_ROLE_VALUE_WAIT /* holds the stream until a memory value is written:
                                 cuStreamWaitValue32/64, a cuStreamBatchMemOp with a wait
                                 (or without its format-1.9 MEMOP record) */,
       STREAM_ROLE_EXT_WAIT /* holds the stream until external semaphores are signalled:
                               cudaWaitExternalSemaphoresAsync, cuWaitExternalSemaphoresAsync
                               (MEMOP kind ext_wait, format 1.10; older files: by the name) */ };

/* A ring of recent spans in end order; cap is a power of two. */
typedef struct ring {
  span_ring_entry *a;
  unsigned cap, n, head; /* head = oldest */
  unsigned max_cap;      /* cap grows (doubling, from a small start) up to this */
  uint64_t max_dur;      /* the longest span ever pushed */
  unsigned disorder;     /* pushes left until an entry pushed out of end order leaves */
} ring;

/* A closed NVTX push/pop range of a thread (gaps_ending.c). */
typedef struct range_entry {
  uint64_t begin, end;
  const char *name; /* interned */
} range_entry;

typedef struct thstate {
  uint64_t tid, last_end;
  ring calls;                     /* outermost calls and tracer spans, in end order */
  range_entry *ranges;            /* the last RING_RANGES closed ranges (allocated on first) */
  unsigned ranges_n, ranges_head;
  const char *name;               /* interned, from its THREAD record; NULL when unnamed */
  uint64_t api_spans, tracer_spans;
  uint64_t copy_end;              /* the latest end of its copy and set calls (is_copy_call) */
} thstate;

/* Whether a call queues copy or set work: work on a stream, no kernel launch. */
static inline int is_copy_call(const span_ring_entry *e) {
  return !e->is_tracer && !e->is_launch && e->stream_role == STREAM_ROLE_WORK;
}

/* Whether th is one of the tracer's own threads: named "cutrace-..." by its THREAD
 * record (cutrace-writer, cutrace-poller), or, unnamed, one that made only TRACER spans. */
static inline int is_tracer_thread(const thstate *th) {
  if (th->name) return __builtin_strncmp(th->name, "cutrace-", 8) == 0;
  return th->tracer_spans && !th->api_spans;
}

/* Counters of copies of one direction. */
typedef struct copystat {
  uint64_t count, bytes, gpu_ns, cpu_ns, first_ns, last_ns;
  unsigned kinds; /* bit k: a copy of CT_MEMOP_* kind k */
} copystat;

typedef struct devstate {
  tracker t;
  tracker ov[OV_N];       /* silent unions, in use once a communication kernel was seen */
  int has_comm;
  /* the last kernels before the first communication kernel, replayed into ov then (kr) */
  unsigned kr_n, kr_head;
  uint64_t device, maxdur;
  size_t open;       /* open busy intervals in its trackers (device, ov, its streams) */
  unsigned nstreams; /* streams with work on it so far */
  const char *name;
  unsigned ends_n, ends_head; /* ends: recent activity ends */
  unsigned fin_n, fin_head;   /* fin: recent final busy intervals */
  /* launch-bound runs */
  uint64_t run_count, run_first, run_last, run_gpu, run_cpu;
  uint64_t lb_kernels, lb_stretches, lb_gpu, lb_cpu, lb_longest, lb_first, lb_last;
  /* copies by CT_MEMOP_* kind */
  copystat pageable, synccopy, both; /* both: copies pageable and synchronous */
  uint64_t copy_in_gaps; /* the launching threads' copy and set calls' time inside device gaps */
  /* idle time two kinds of findings may both claim, measured gap by gap (CT_MEET_*; the
   * graph candidates' parts there only when pairs[] is full or the gap waited to be
   * matched: any candidate of the device may count them) */
  uint64_t meet[CT_MEET_N];
  /* the graph candidates' waits inside alloc gaps (ns[0]) and inside gaps a little
   * sync's return opened (ns[1]), by the pair of kernels around the wait, on one thread
   * and stream (a candidate counts the pairs of its sequence) */
  unsigned npairs;
  struct meet_pair {
    uint64_t tid, stream;
    const char *prev, *next;
    uint64_t ns[2];
  } pairs[MEET_PAIRS];
  /* transfer rates by CT_MEMOP_* kind: copies from or to pageable memory, and between
   * pinned memory and the device (bytes and GPU time) */
  struct { uint64_t bytes, gpu_ns; } rate_pageable[16], rate_pinned[16];
  /* syncs waiting on little GPU work; syncs not judged yet (their time is not final) */
  uint64_t ls_count, ls_cpu, ls_gpu, ls_first, ls_last;
  const char *ls_name;
  unsigned psync_n, psync_head; /* psync: syncs not judged yet */
  /* the device gaps of cause sync that a little sync's return opened: how many, their
   * idle, and their idle after the sync returned; the sync gaps and the little syncs
   * not matched yet (either can be known first) */
  uint64_t ls_gaps, ls_gap_idle, ls_after_idle;
  /* the part of ls_after_idle that later little syncs' calls - GPU hold too (a sync that
   * began before its kernel started, inside the previous gap: counted once) */
  uint64_t ls_twice;
  unsigned lsa_n, lsa_head;     /* lsafter: the latest gaps' parts after the return */
  unsigned sgap_n, sgap_head;   /* sgap: sync gaps not matched yet */
  unsigned lsync_n, lsync_head; /* lsync: little syncs not matched yet */
  /* device gaps caused by allocation calls: count, idle, time in the calls, first start,
   * last end, and the entry point with the most time in them (names: interned) */
  uint64_t al_count, al_idle, al_cpu, al_first, al_last;
  const char *al_names[4];
  uint64_t al_name_ns[4];
  /* The rings (94 KiB): only the entries their counters above count are read, so they
   * are not cleared when the device is made (DEVSTATE_CLEARED: a fixed cost per file). */
  struct { uint64_t start, end; } kr[RECENT_KERNELS];
  struct { uint64_t end, stream; } ends[RECENT_ENDS];
  struct { uint64_t start, end; } fin[RECENT_FINAL];
  struct { uint64_t begin, end; const char *name; } psync[PENDING_SYNCS];
  struct sync_gap {
    uint64_t a, b, max_after;
    /* what the other findings may claim of it, counted when a little sync's return
     * turns out to have opened it: CT_MEET_* parts, and the ending and leading calls'
     * groups (gaps_enders.c, + 1; 0: none) with their time inside it */
    uint64_t meet[CT_MEET_N], end_ns, lead_ns;
    unsigned end_group, lead_group;
  } sgap[PENDING_SYNCS];
  struct { uint64_t begin, end; } lsync[PENDING_SYNCS];
  struct { uint64_t from, to; } lsafter[LS_AFTER_RING];
} devstate;

/* The part of a devstate cleared when it is made: all but its rings. */
#define DEVSTATE_CLEARED offsetof(devstate, kr)

/* Whether the device gap being counted was opened by a little sync's return (it claims
 * the whole gap: sync_little_work): not (or not a gap it looks at), yes, or not known
 * until a sync is judged (the gap waits in the device's sgap ring, fstate.ls_slot). */
enum { LS_NO, LS_YES, LS_PENDING };

/* Per-file state. */
typedef struct fstate {
  struct ct_gaps *g;
  unsigned proc;
  ct_proc pcopy;  /* the model's process, its strings interned: valid after the model is gone */
  int have_proc;
  devstate **devs;
  unsigned ndevs;
  tracker **streams;
  unsigned nstreams, capstreams;
  struct ct_map *stream_index; /* (devstate *, stream id) -> tracker * (stats.h's map) */
  thstate **threads;
  unsigned nthreads;
  uint64_t wm, events;
  struct { const char *key, *val; unsigned cls; } *names; /* reader string -> interned copy */
  size_t nnames, capnames;
  devstate *last_dev;
  tracker *last_stream;
  thstate *last_thread;
  struct ct_stacks *stacks;  /* the file's STACK and MODULE records (stacks.h) */
  unsigned pending_parents;  /* kept gaps whose ending call's outermost call is not seen yet */
  uint64_t kept_call_max;    /* the latest begin of a kept gap's ending call (a range that
                                begins after it cannot enclose any of them) */
  ct_pause_list pauses;      /* the tracer's pauses: gaps touching them are unrecorded */
  struct graph_state *graphs; /* repeated kernel sequences (gaps_graphs.c), made on first kernel */
  struct enders_state *enders; /* device gaps by what ended them (gaps_enders.c), made on first gap */
  /* the device gap being counted: whether a little sync's return opened it (LS_*), and
   * when not known yet, its slot in the device's sgap ring */
  int ls_state;
  unsigned ls_slot;
  /* calls that promised a GPU record not delivered yet, by corr (gaps_launches.c) */
  struct launch_wait { uint64_t corr, begin; } *launches;
  unsigned launches_head, launches_n;
  unsigned launches_done; /* ... of which their record came (not at the front yet) */
  uint64_t waits_cut; /* calls that stopped waiting before their GPU record came */
  int lossy;          /* the file lost records (DROP, a "gpu_lost" tracer span) */
  uint64_t comm_soon; /* bit d: a call launched a communication kernel on device d < 64
                         (its communication / compute unions start at its next kernel) */
  struct gap_rows *rows; /* the callback's gaps waiting for their range (gaps_rows.c) */
  int oom;
} fstate;

struct ct_gaps {
  ct_gaps_options o;
  void (*fn)(void *user, const ct_gap_info *gap);
  void *user;
  ct_gaps_proc *procs;
  unsigned nprocs;
  ct_gaps_device *devs;
  unsigned ndevs;
  ct_gaps_stream *streams;
  unsigned nstreams;
  ct_gaps_finding *finds;
  unsigned nfinds, cap_finds;
  ct_gap_detail *top, *top_s;       /* min-heaps by duration */
  unsigned ntop, ntop_s;
  ct_gap_detail *sorted, *sorted_s; /* longest first, rebuilt after each file */
  uint64_t late;
  uint64_t waits_cut; /* calls that stopped waiting before their GPU record came (fstate's) */
  char **pool; /* interned strings: open addressing */
  size_t npool, cappool;
  ct_gap_frame **stacks; /* symbolised stacks of kept gaps (gaps_ending.c) */
  size_t nstacks;
  ct_gaps_ender *enders;  /* device gaps grouped by what ended them (gaps_enders.c) */
  unsigned nenders, cap_enders;
  int unsorted; /* files added since enders and findings were last sorted */
  int row_context;          /* the callback's gaps carry range and callsite (gaps_rows.c) */
  uint64_t rows_unresolved; /* ... of the last file, handed over without their range */
};

/* ---- small helpers ---------------------------------------------------------------- */

static inline uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t overlap(uint64_t b1, uint64_t e1, uint64_t b2, uint64_t e2) {
  uint64_t b = max_u64(b1, b2), e = min_u64(e1, e2);
  return e > b ? e - b : 0;
}

/* The union of intervals met newest end first (a thread's calls ring): *blk_b..*blk_e is
 * the block being merged; [b, e] extends it when they touch, else the block's length
 * goes to *total and [b, e] starts the next. Call with b == e == 0 to add the last
 * block. A thread's outermost calls overlap only when it polls several targets in turn
 * (each poll record spans its own first poll to its answer, preload/hooks/poll.c). */
static inline void union_add(uint64_t *blk_b, uint64_t *blk_e, uint64_t *total, uint64_t b,
                             uint64_t e) {
  if (*blk_e > *blk_b && e >= *blk_b && b <= *blk_e) {
    if (b < *blk_b) *blk_b = b;
    if (e > *blk_e) *blk_e = e;
    return;
  }
  *total += *blk_e - *blk_b;
  *blk_b = b;
  *blk_e = e;
}
#define NAME_SYNCHRONIZE 1 /* "...Synchronize..." */
#define NAME_ASYNC 2       /* "...Async..." */
#define NAME_MEMCPY 4      /* "cudaMemcpy..." or "cuMemcpy..." */
#define NAME_LAUNCH 8      /* a call that launches kernels: "...Launch...", cuBLAS GEMMs */
#define NAME_COMM 16       /* a communication kernel: NCCL's ("nccl...") or NVSHMEM's */
#define NAME_VALUE_WAIT 32 /* "...WaitValue..." or "...BatchMemOp...": a stream memory wait */
#define NAME_EXT_WAIT 64   /* "...WaitExternalSemaphores...": a wait on an external producer */
#define NAME_POLL 128      /* "...EventQuery" or "...StreamQuery...": polls of GPU work (one record per
                              spin since format 1.12): the thread waits, as in a sync */


/* The slot for the next entry of a fixed ring of cap entries that keeps the newest
 * (head = oldest, n = entries): appends while there is room, else reuses the oldest. */
static inline unsigned ring_next_slot(unsigned *head, unsigned *n, unsigned cap) {
  if (*n < cap) return (*head + (*n)++) % cap;
  unsigned k = *head;
  *head = (*head + 1) % cap;
  return k;
}

/* Entry i of the ring counted from the newest (0 = newest). */
static inline const span_ring_entry *ring_back(const ring *r, unsigned i) {
  return &r->a[(r->head + r->n - 1 - i) & (r->cap - 1)];
}

/* The first index (from the newest) of an entry that can overlap time before b: the
 * newer ones began at or after b. Skips them by binary search when the ring is in end
 * order (their end lies beyond b plus the longest span); 0 otherwise. */
static inline unsigned ring_skip_after(const ring *r, uint64_t b) {
  if (r->disorder || r->max_dur > UINT64_MAX - b) return 0;
  uint64_t limit = b + r->max_dur;
  unsigned lo = 0, hi = r->n;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (ring_back(r, mid)->end > limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ---- gaps_state.c ------------------------------------------------------------------- */

/* A copy of s that lives as long as g; "" when s is NULL or out of memory. */
const char *ct_gaps_intern(struct ct_gaps *g, const char *s);
/* The interned copy of a string owned by the reader, with its NAME_* bits in *cls. */
const char *ct_gaps_keep(fstate *f, const char *s, unsigned *cls);
/* Appends e to the ring, dropping the oldest entry when full. */
void ct_gaps_ring_push(ring *r, const span_ring_entry *e);
/* The device's state, created on first use; NULL when out of memory (f->oom set). */
devstate *ct_gaps_get_dev(fstate *f, uint64_t device);
/* The stream's tracker, created on first use; NULL when out of memory. */
tracker *ct_gaps_get_stream(fstate *f, devstate *d, uint64_t stream);
/* The thread's state, or NULL when it made no call yet. */
thstate *ct_gaps_find_thread(fstate *f, uint64_t tid);

/* For a host_wait gap [a, b] ended by op: the launching thread th's intercepted call
 * (not a launch, allocation or blocking call, not op's own) with the most time in the
 * gap, when that is at least half the gap: *ns its time there. NULL otherwise
 * (gaps_threads.c; docs/gaps.md, inside_call). */
const char *ct_gaps_host_wait_inside(const thstate *th, uint64_t a, uint64_t b, const opinfo *op,
                                     uint64_t *ns);
/* The thread's state, created on first use; NULL when out of memory. */
thstate *ct_gaps_get_thread(fstate *f, uint64_t tid);

/* ---- gaps_busy.c -------------------------------------------------------------------- */

/* Adds the busy time [s, e] of op to t. */
void ct_gaps_tracker_add(fstate *f, tracker *t, uint64_t s, uint64_t e, const opinfo *op);
/* Makes final every interval of t that ends before horizon, classifying the gaps. */
void ct_gaps_tracker_finalize(fstate *f, tracker *t, uint64_t horizon);
/* The finalisation window of device d. */
uint64_t ct_gaps_window(const devstate *d);
/* Finalises d and its streams up to the watermark minus the window, held back to the
 * oldest call still waiting for its GPU record (or up to horizon_override). */
void ct_gaps_finalize_dev(fstate *f, devstate *d, uint64_t horizon_override);
/* GPU busy time of device d within [b, e]: recent final intervals and open ones. */
uint64_t ct_gaps_busy_between(const devstate *d, uint64_t b, uint64_t e);

/* ---- gaps_cause.c ------------------------------------------------------------------- */

/* The cause of the gap [a, b] of tracker t ended by op; *outside_cuda: for host_wait,
 * the launching thread's time outside CUDA calls during the gap, else 0. */
enum ct_gap_cause ct_gaps_classify(fstate *f, const tracker *t, uint64_t a, uint64_t b,
                                   const opinfo *op, uint64_t *outside_cuda);

/* ---- gaps_threads.c ----------------------------------------------------------------- */

/* Keeps the gap among the largest when it is one of them, with what each thread did. */
void ct_gaps_top_consider(fstate *f, const tracker *t, uint64_t a, uint64_t b,
                          enum ct_gap_cause cause, const opinfo *op);
/* At the end of a file: names the threads of its largest gaps (THREAD records may come
 * after a gap was kept) and drops tracer threads that did no tracer work in them. */
void ct_gaps_name_threads(fstate *f);
/* Rebuilds g's longest-first copies of the top-N heaps. */
void ct_gaps_sort_tops(struct ct_gaps *g);

/* ---- gaps_ending.c ------------------------------------------------------------------ */

/* Fills d->ending for the gap ended by op: the call, or its outermost call, and the
 * innermost range around it as far as seen so far. */
void ct_gaps_ending_init(fstate *f, ct_gap_detail *d, const opinfo *op);
/* An outermost call (depth 0): completes the kept gaps waiting for it. */
void ct_gaps_ending_on_span(fstate *f, const ct_span *s, const char *name);
/* A RANGE record: kept by its thread, and given to the kept gaps whose call it encloses. */
void ct_gaps_ending_on_range(fstate *f, const struct ct_range *r, const char *name);
/* At the end of a file: symbolises the stacks of its kept gaps' ending calls. */
void ct_gaps_ending_finish(fstate *f);

/* The outermost call with correlation id corr in thread tid's ring of calls, or NULL
 * (inner_end: the end of a call inside it). */
const span_ring_entry *ct_gaps_find_outer_call(fstate *f, uint64_t tid, uint64_t corr,
                                               uint64_t inner_end);

/* ---- gaps_enders.c ------------------------------------------------------------------ */

/* A device gap [a, b] of cause c ended by op: counted into the groups by ending call
 * (outside_cuda: for host_wait, the launching thread's time outside CUDA calls in it). */
void ct_gaps_enders_on_gap(fstate *f, const tracker *t, uint64_t a, uint64_t b, enum ct_gap_cause c,
                           const opinfo *op, uint64_t outside_cuda);
/* A gap that waited in the device's sgap ring was opened by a little sync's return: its
 * ending and leading calls' time in it goes to their groups' held_lsync_ns. */
void ct_gaps_enders_held_lsync(fstate *f, const struct sync_gap *sg);
/* The call site of a stack as text ("fn (file.c:12)", "train.py:12 step"), interned; NULL
 * when unknown or the file keeps no stacks. */
const char *ct_gaps_site_text(fstate *f, uint64_t stack);
/* Whether gaps wait for their outermost call (then call ct_gaps_enders_on_span). */
int ct_gaps_enders_waiting(const fstate *f);
/* An outermost call (depth 0): completes the gaps waiting for it. */
void ct_gaps_enders_on_span(fstate *f, const ct_span *s, const char *name);
/* At the end of a file (its stacks still there): merges the groups by call site, adds
 * them to the analysis and the slow-launching-call findings. */
void ct_gaps_enders_finish(fstate *f);
/* Sorts the analysis's groups (most idle first) and findings (largest saving first,
 * then by what they add: ct_gaps_account_findings), when files were added
 * since the last sort (once, when they are asked for). */
void ct_gaps_sort_enders(struct ct_gaps *g);

/* ---- gaps_findings.c ---------------------------------------------------------------- */

/* Launch-bound runs and copy patterns, per activity in delivery order. */
void ct_gaps_findings_on_activity(fstate *f, devstate *d, const ct_activity *a);
/* Whether a call blocks the CPU until GPU work completes (cls: NAME_* bits of its name). */
int ct_gaps_is_blocking(const ct_span *s, unsigned cls);
/* A sync call, judged once the GPU time around it is final. */
void ct_gaps_findings_on_sync(fstate *f, const ct_span *s, const char *name);
/* A device gap [a, b] of cause sync, or launch_overhead: counted into the little syncs'
 * finding when a little sync's return opened it and, launch_overhead, it lasted at most
 * max_after after that return (the pending syncs that ended before b judged first). */
void ct_gaps_findings_on_sync_gap(fstate *f, devstate *d, uint64_t a, uint64_t b, uint64_t max_after);
/* A device gap [a, b] of cause c ended by op: its launching thread's copy and set calls'
 * time in it. */
void ct_gaps_findings_on_gap(fstate *f, devstate *d, uint64_t a, uint64_t b, enum ct_gap_cause c,
                             const opinfo *op);
/* A call was delivered: when it promised a GPU record (CT_API_TIMED), it waits for it. */
void ct_gaps_launch_called(fstate *f, const ct_span *s);

/* A GPU record with corr was delivered (or withheld by the selection): its call no
 * longer waits. */
void ct_gaps_launch_timed(fstate *f, uint64_t corr);

/* The finalisation horizon h of device d held back to the begin of the oldest call still
 * waiting for its GPU record (its GPU work cannot start before its call began); once d
 * holds LAUNCH_HOLD_OPEN open busy intervals, the calls that began before h stop waiting. */
uint64_t ct_gaps_launch_horizon(fstate *f, const devstate *d, uint64_t h);

/* Judges the pending syncs of d that end before horizon. */
void ct_gaps_judge_syncs(fstate *f, devstate *d, uint64_t horizon);
/* Adds d's findings to the analysis (at the end of its file). */
void ct_gaps_device_findings(fstate *f, devstate *d);
/* Appends a finding to the analysis (dropped when out of memory). */
void ct_gaps_add_finding(struct ct_gaps *g, const ct_gaps_finding *fd);
/* Per device, the findings taken one at a time, the one that adds the most on top of
 * those taken before first: each finding's overlap with the findings above it and what
 * it adds (ct_gaps_finding.overlap_ns, adds_ns), and the device's findings_ns, at most
 * its idle time; then the findings reordered so (docs/gaps.md, "Findings add up"). */
void ct_gaps_account_findings(struct ct_gaps *g);

/* ---- gaps_graphs.c ------------------------------------------------------------------ */

/* A GPU activity (name: interned): a kernel is counted into the repeated sequences of
 * its launching thread and stream; a copy, set or graph launch breaks them, and so does
 * another thread's operation on the stream. Returns, for a kernel that waited on its
 * launch after the previous kernel of its thread's history there, that kernel's end (the
 * wait's start) and, in *prev, its name; else 0. */
uint64_t ct_gaps_graphs_on_activity(fstate *f, const ct_activity *a, const char *name, const char **prev);
/* At the end of a file: adds its graph candidates to the analysis and frees their state. */
void ct_gaps_graph_findings(fstate *f);
/* Counts the sequences of device's kernels whose wait ended before horizon (the device's
 * GPU time there is final: the other streams' work in the wait is known). */
void ct_gaps_graphs_settle(fstate *f, uint64_t device, uint64_t horizon);

/* ---- gaps_rows.c ------------------------------------------------------------------- */

struct ct_span;
struct ct_range;

/* Starts a file whose callback gaps carry range and callsite (reads path's RANGE and API
 * records first, unless path is "-"). f->oom on failure. */
void ct_gaps_rows_begin(fstate *f, const char *path);
/* Hands gap gi, ended by op, to the callback now or once its range is known. */
void ct_gaps_rows_add(fstate *f, ct_gap_info *gi, const opinfo *op);
/* A call of the file (counts its thread's calls: how long a held gap has waited). */
void ct_gaps_rows_on_span(fstate *f, const struct ct_span *s);
/* A closed NVTX range: the held gaps it holds, or that no range holds. */
void ct_gaps_rows_on_range(fstate *f, const struct ct_range *r, const char *name);
/* The file's end: hands over every gap still held, frees the file's row state. */
void ct_gaps_rows_end(fstate *f);

#endif
