/*
 * GPU idle-time analysis (gaps.h). Definitions of the causes and their precedence:
 * docs/gaps.md.
 *
 * Busy intervals. Per device and per stream a "tracker" holds, sorted, the disjoint
 * busy intervals (unions of activities) that a later activity could still touch.
 * Activities come in nondecreasing end time, so a new one merges into the last few
 * intervals. An interval is final once the newest time delivered, minus the window
 * (the longest activity seen plus a margin, at least 1 ms), has passed its end: no
 * later activity can start before that. When an interval becomes final, the gap
 * between it and the previous final interval is classified, with the operation that
 * starts the interval as the one that ended the gap.
 *
 * CPU side. Per thread three bounded rings keep the recent outermost calls, the
 * recent blocking calls (syncs, synchronous copies) and the tracer's own spans, in
 * end order; the classification and the "what each thread did" snapshot read them.
 */
#include "gaps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_FLOOR_NS 1000000ull   /* the smallest finalisation window */
#define WINDOW_MARGIN_NS 100000ull   /* added to the longest activity seen */
#define RING_CALLS 4096              /* recent outermost calls kept per thread */
#define RECENT_ENDS 4096             /* recent activity ends kept per device */
#define RECENT_FINAL 512             /* recent final busy intervals kept per device */
#define PENDING_SYNCS 256            /* syncs per device waiting for their GPU time to be final */
#define OTHER_STREAM_SLACK_NS 50000ull /* an op starting this soon after another stream's ended */
#define SWEEP_EVERY 1024             /* events between checks of every tracker */
#define LITTLE_SYNC_TOTAL_NS 1000000ull /* little syncs worth a finding regardless of count */

static const char *const cause_names[CT_GAP_NCAUSES] = {
    "host_wait", "launch_overhead", "sync", "other_stream", "tracer", "other"};

const char *ct_gap_cause_name(enum ct_gap_cause c) {
  return (unsigned)c < CT_GAP_NCAUSES ? cause_names[c] : "other";
}

void ct_gaps_default_options(ct_gaps_options *o) {
  memset(o, 0, sizeof *o);
  o->launch_threshold_ns = 10000;
  o->top = 10;
  o->launch_bound_min = 20;
  o->repeat_min = 4;
  o->sync_work_ns = 50000;
}

/* ---- state ---------------------------------------------------------------------- */

/* The GPU operation that starts a busy interval, and its call. */
typedef struct opinfo {
  uint64_t stream, type, tid, call_begin, call_end;
  const char *api, *name; /* interned */
  int has_call;
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
} tracker;

typedef struct span_ring_entry {
  uint64_t begin, end;
  const char *name;
  uint8_t is_tracer, is_launch, is_blocking;
} span_ring_entry;

typedef struct ring {
  span_ring_entry *a;
  unsigned cap, n, head; /* head = oldest */
} ring;

typedef struct thstate {
  uint64_t tid, last_end;
  ring calls; /* outermost calls and tracer spans, in end order */
} thstate;

/* Counters of copies of one direction. */
typedef struct copystat {
  uint64_t count, bytes, gpu_ns, cpu_ns, first_ns, last_ns;
  unsigned kinds; /* bit k: a copy of CT_MEMOP_* kind k */
} copystat;

typedef struct devstate {
  tracker t;
  uint64_t device, maxdur;
  const char *name;
  struct { uint64_t end, stream; } ends[RECENT_ENDS];
  unsigned ends_n, ends_head;
  struct { uint64_t start, end; } fin[RECENT_FINAL];
  unsigned fin_n, fin_head;
  /* launch-bound runs */
  uint64_t run_count, run_first, run_last, run_gpu, run_cpu;
  uint64_t lb_kernels, lb_stretches, lb_gpu, lb_cpu, lb_longest, lb_first, lb_last;
  /* copies by CT_MEMOP_* kind */
  copystat pageable, synccopy;
  /* syncs waiting on little GPU work; syncs not judged yet (their time is not final) */
  uint64_t ls_count, ls_cpu, ls_gpu, ls_first, ls_last;
  const char *ls_name;
  struct { uint64_t begin, end; const char *name; } psync[PENDING_SYNCS];
  unsigned psync_n, psync_head;
} devstate;

/* Per-file state. */
typedef struct fstate {
  struct ct_gaps *g;
  unsigned proc;
  ct_proc pcopy;  /* the model's process, its strings interned: valid after the model is gone */
  int have_proc;
  devstate **devs;
  unsigned ndevs;
  tracker **streams;
  unsigned nstreams;
  thstate **threads;
  unsigned nthreads;
  uint64_t wm, events;
  struct { const char *key, *val; unsigned cls; } *names; /* reader string -> interned copy */
  size_t nnames, capnames;
  devstate *last_dev;
  tracker *last_stream;
  thstate *last_thread;
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
  unsigned nfinds;
  ct_gap_detail *top, *top_s;       /* min-heaps by duration */
  unsigned ntop, ntop_s;
  ct_gap_detail *sorted, *sorted_s; /* longest first, rebuilt after each file */
  uint64_t late;
  char **pool; /* interned strings: open addressing */
  size_t npool, cappool;
};

/* ---- small helpers ---------------------------------------------------------------- */

static inline uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t overlap(uint64_t b1, uint64_t e1, uint64_t b2, uint64_t e2) {
  uint64_t b = max_u64(b1, b2), e = min_u64(e1, e2);
  return e > b ? e - b : 0;
}

/* A copy of s that lives as long as g; "" when s is NULL or out of memory. */
static const char *intern(struct ct_gaps *g, const char *s) {
  if (!s) return NULL;
  if ((g->npool + 1) * 2 > g->cappool) {
    size_t ncap = g->cappool ? g->cappool * 2 : 256;
    char **np = calloc(ncap, sizeof *np);
    if (!np) return "";
    for (size_t i = 0; i < g->cappool; i++) {
      if (!g->pool[i]) continue;
      uint64_t h = 1469598103934665603ull;
      for (const char *p = g->pool[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
      size_t j = h & (ncap - 1);
      while (np[j]) j = (j + 1) & (ncap - 1);
      np[j] = g->pool[i];
    }
    free(g->pool);
    g->pool = np;
    g->cappool = ncap;
  }
  uint64_t h = 1469598103934665603ull;
  for (const char *p = s; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  size_t j = h & (g->cappool - 1);
  while (g->pool[j]) {
    if (!strcmp(g->pool[j], s)) return g->pool[j];
    j = (j + 1) & (g->cappool - 1);
  }
  char *c = strdup(s);
  if (!c) return "";
  g->pool[j] = c;
  g->npool++;
  return c;
}

#define NAME_SYNCHRONIZE 1 /* "...Synchronize..." */
#define NAME_ASYNC 2       /* "...Async..." */
#define NAME_MEMCPY 4      /* "cudaMemcpy..." or "cuMemcpy..." */
#define NAME_LAUNCH 8      /* a call that launches kernels: "...Launch...", cuBLAS GEMMs */

/* The interned copy of a string owned by the reader (which frees its strings when the
 * file is closed, before the last intervals are final), cached by address, with the
 * NAME_* class bits of the name in *cls (may be NULL). */
static const char *keep(fstate *f, const char *s, unsigned *cls) {
  if (cls) *cls = 0;
  if (!s) return NULL;
  if ((f->nnames + 1) * 2 > f->capnames) {
    size_t ncap = f->capnames ? f->capnames * 2 : 1024;
    typeof(f->names) nn = calloc(ncap, sizeof *nn);
    if (!nn) return intern(f->g, s);
    for (size_t i = 0; i < f->capnames; i++) {
      if (!f->names[i].key) continue;
      size_t j = ((uintptr_t)f->names[i].key >> 4) * 0x9E3779B97F4A7C15ull >> 40 & (ncap - 1);
      while (nn[j].key) j = (j + 1) & (ncap - 1);
      nn[j] = f->names[i];
    }
    free(f->names);
    f->names = nn;
    f->capnames = ncap;
  }
  size_t j = ((uintptr_t)s >> 4) * 0x9E3779B97F4A7C15ull >> 40 & (f->capnames - 1);
  while (f->names[j].key) {
    if (f->names[j].key == s) {
      if (cls) *cls = f->names[j].cls;
      return f->names[j].val;
    }
    j = (j + 1) & (f->capnames - 1);
  }
  f->names[j].key = s;
  f->names[j].val = intern(f->g, s);
  f->names[j].cls = (strstr(s, "Synchronize") ? NAME_SYNCHRONIZE : 0) |
                    (strstr(s, "Async") ? NAME_ASYNC : 0) |
                    (!strncmp(s, "cudaMemcpy", 10) || !strncmp(s, "cuMemcpy", 8) ? NAME_MEMCPY : 0) |
                    (strstr(s, "Launch") || ct_api_category(s) == CT_CAT_GEMM ? NAME_LAUNCH : 0);
  if (cls) *cls = f->names[j].cls;
  f->nnames++;
  return f->names[j].val;
}

static int ring_init(ring *r, unsigned cap) {
  r->a = malloc(cap * sizeof *r->a);
  r->cap = cap;
  r->n = r->head = 0;
  return r->a ? 0 : -1;
}

static void ring_push(ring *r, const span_ring_entry *e) {
  if (r->n < r->cap) {
    r->a[(r->head + r->n++) % r->cap] = *e;
  } else {
    r->a[r->head] = *e;
    r->head = (r->head + 1) % r->cap;
  }
}

/* Entry i of the ring counted from the newest (0 = newest). */
static inline const span_ring_entry *ring_back(const ring *r, unsigned i) {
  return &r->a[(r->head + r->n - 1 - i) % r->cap];
}

/* ---- lookups ----------------------------------------------------------------------- */

static void tracker_init(tracker *t, devstate *d, uint64_t stream) {
  memset(t, 0, sizeof *t);
  t->dev = d;
  t->stream = stream;
}

static devstate *get_dev(fstate *f, uint64_t device) {
  if (f->last_dev && f->last_dev->device == device) return f->last_dev;
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == device) return f->last_dev = f->devs[i];
  devstate **nd = realloc(f->devs, (f->ndevs + 1) * sizeof *nd);
  devstate *d = calloc(1, sizeof *d);
  if (!nd || !d) {
    if (nd) f->devs = nd;
    free(d);
    f->oom = 1;
    return NULL;
  }
  f->devs = nd;
  d->device = device;
  d->name = "";
  tracker_init(&d->t, d, UINT64_MAX);
  f->devs[f->ndevs++] = d;
  return f->last_dev = d;
}

static tracker *get_stream(fstate *f, devstate *d, uint64_t stream) {
  tracker *t = f->last_stream;
  if (t && t->dev == d && t->stream == stream) return t;
  for (unsigned i = 0; i < f->nstreams; i++)
    if (f->streams[i]->dev == d && f->streams[i]->stream == stream) return f->last_stream = f->streams[i];
  tracker **ns = realloc(f->streams, (f->nstreams + 1) * sizeof *ns);
  t = malloc(sizeof *t);
  if (!ns || !t) {
    if (ns) f->streams = ns;
    free(t);
    f->oom = 1;
    return NULL;
  }
  f->streams = ns;
  tracker_init(t, d, stream);
  f->streams[f->nstreams++] = t;
  return f->last_stream = t;
}

static thstate *find_thread(fstate *f, uint64_t tid) {
  if (f->last_thread && f->last_thread->tid == tid) return f->last_thread;
  for (unsigned i = 0; i < f->nthreads; i++)
    if (f->threads[i]->tid == tid) return f->last_thread = f->threads[i];
  return NULL;
}

static thstate *get_thread(fstate *f, uint64_t tid) {
  thstate *th = find_thread(f, tid);
  if (th) return th;
  thstate **nt = realloc(f->threads, (f->nthreads + 1) * sizeof *nt);
  th = calloc(1, sizeof *th);
  if (!nt || !th || ring_init(&th->calls, RING_CALLS)) {
    if (nt) f->threads = nt;
    if (th) free(th->calls.a);
    free(th);
    f->oom = 1;
    return NULL;
  }
  f->threads = nt;
  th->tid = tid;
  f->threads[f->nthreads++] = th;
  return f->last_thread = th;
}

/* ---- classification ------------------------------------------------------------------ */

/* Whether an op on a stream other than `stream` ended within [b - tol, b + slack]: the
 * mapped GPU times of two streams' operations can disagree by an event's resolution. */
static int other_stream_ended_near(const devstate *d, uint64_t stream, uint64_t b, uint64_t tol,
                                   uint64_t slack) {
  unsigned lo = 0, hi = d->ends_n; /* ring ordered by end, oldest first */
  uint64_t from = b > tol ? b - tol : 0;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (d->ends[(d->ends_head + mid) % RECENT_ENDS].end < from) lo = mid + 1;
    else hi = mid;
  }
  for (unsigned i = lo; i < d->ends_n; i++) {
    const typeof(d->ends[0]) *e = &d->ends[(d->ends_head + i) % RECENT_ENDS];
    if (e->end > b + slack) break;
    if (e->stream != stream) return 1;
  }
  return 0;
}

/* How the launching thread spent a gap: in the tracer's own work, in blocking calls
 * (syncs, synchronous copies), issuing work (launch calls, and the call of the op that
 * ended the gap), and the rest (outside CUDA or in other calls). */
typedef struct gap_use {
  uint64_t tracer, blocking, issuing, rest;
} gap_use;

static gap_use thread_use(const thstate *th, uint64_t a, uint64_t b, const opinfo *op) {
  gap_use u = {0, 0, 0, 0};
  uint64_t sum = 0;
  for (unsigned i = 0; th && i < th->calls.n; i++) {
    const span_ring_entry *e = ring_back(&th->calls, i);
    if (e->end <= a) break;
    uint64_t ov = overlap(e->begin, e->end, a, b);
    if (!ov) continue;
    if (e->is_tracer) u.tracer += ov;
    else if (e->is_launch || (e->begin == op->call_begin && e->end == op->call_end)) u.issuing += ov;
    else if (e->is_blocking) u.blocking += ov;
    else continue;
    sum += ov;
  }
  u.rest = b - a > sum ? b - a - sum : 0;
  return u;
}

/* The cause of the gap [a, b] of tracker t ended by op (precedence in docs/gaps.md). */
static enum ct_gap_cause classify(fstate *f, const tracker *t, uint64_t a, uint64_t b,
                                  const opinfo *op) {
  uint64_t thr = f->g->o.launch_threshold_ns;
  if (b - a < thr) return CT_GAP_LAUNCH_OVERHEAD;
  if (!op->has_call) return CT_GAP_OTHER;
  /* Fed: the call began before the GPU went idle, or the op then sat queued longer than
   * the CPU was late with it: what the GPU waited for at the end was not the CPU. */
  int queued_longer = op->call_end < b && b - op->call_end > (op->call_end > a ? op->call_end - a : 0);
  if (op->call_begin < a || queued_longer) {
    if (t->stream != UINT64_MAX &&
        other_stream_ended_near(t->dev, t->stream, b, max_u64(thr, OTHER_STREAM_SLACK_NS), thr))
      return CT_GAP_OTHER_STREAM;
    if (op->call_begin < a && op->call_end > a) return CT_GAP_LAUNCH_OVERHEAD;
    return CT_GAP_OTHER;
  }
  /* the CPU was late: the cause is what the launching thread spent most of the gap on */
  gap_use u = thread_use(find_thread(f, op->tid), a, b, op);
  if (u.tracer >= u.blocking && u.tracer >= u.issuing && u.tracer >= u.rest) return CT_GAP_TRACER;
  if (u.blocking >= u.issuing && u.blocking >= u.rest) return CT_GAP_SYNC;
  if (u.issuing >= u.rest) return CT_GAP_LAUNCH_OVERHEAD;
  return CT_GAP_HOST_WAIT;
}

/* What thread th did during [a, b]. */
static void snapshot_thread(const thstate *th, uint64_t a, uint64_t b, ct_gap_thread *gt) {
  memset(gt, 0, sizeof *gt);
  gt->tid = th->tid;
  const ring *r = &th->calls;
  unsigned i = 0;
  for (; i < r->n; i++) {
    const span_ring_entry *e = ring_back(r, i);
    if (e->end <= a) break;
    uint64_t ov = overlap(e->begin, e->end, a, b);
    if (!ov) continue;
    if (e->is_tracer) {
      gt->tracer_ns += ov;
    } else {
      gt->ncalls++;
      gt->in_cuda_ns += ov;
    }
    /* keep the longest overlaps, longest first */
    unsigned k = gt->ncall_shown < CT_GAP_MAX_CALLS ? gt->ncall_shown++ : CT_GAP_MAX_CALLS;
    while (k > 0 && overlap(gt->calls[k - 1].begin_ns, gt->calls[k - 1].end_ns, a, b) < ov) {
      if (k < CT_GAP_MAX_CALLS) gt->calls[k] = gt->calls[k - 1];
      k--;
    }
    if (k < CT_GAP_MAX_CALLS) {
      gt->calls[k].name = e->name;
      gt->calls[k].begin_ns = e->begin;
      gt->calls[k].end_ns = e->end;
      gt->calls[k].is_tracer = e->is_tracer;
    }
  }
  if (i == r->n && r->n == r->cap) gt->truncated = 1;
}

static inline int detail_less(const ct_gap_detail *x, const ct_gap_detail *y) {
  uint64_t dx = x->end_ns - x->start_ns, dy = y->end_ns - y->start_ns;
  return dx < dy || (dx == dy && x->start_ns > y->start_ns);
}

static void heap_down(ct_gap_detail *h, unsigned n, unsigned i) {
  for (;;) {
    unsigned c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && detail_less(&h[c + 1], &h[c])) c++;
    if (!detail_less(&h[c], &h[i])) return;
    ct_gap_detail tmp = h[c];
    h[c] = h[i];
    h[i] = tmp;
    i = c;
  }
}

/* Keeps the gap among the largest when it is one of them. */
static void top_consider(fstate *f, const tracker *t, uint64_t a, uint64_t b,
                         enum ct_gap_cause cause, const opinfo *op) {
  struct ct_gaps *g = f->g;
  int is_stream = t->stream != UINT64_MAX;
  ct_gap_detail *h = is_stream ? g->top_s : g->top;
  unsigned *n = is_stream ? &g->ntop_s : &g->ntop;
  if (!h || !g->o.top) return;
  if (*n == g->o.top) { /* only when longer than the shortest kept (ties: the earlier wins) */
    uint64_t shortest = h[0].end_ns - h[0].start_ns;
    if (b - a < shortest || (b - a == shortest && a >= h[0].start_ns)) return;
  }
  ct_gap_detail d;
  memset(&d, 0, sizeof d);
  d.start_ns = a;
  d.end_ns = b;
  d.proc = f->proc;
  d.device = t->dev->device;
  d.stream = t->stream;
  d.cause = cause;
  d.has_call = op->has_call;
  d.op_stream = op->stream;
  d.op_type = op->type;
  d.tid = op->tid;
  d.call_begin_ns = op->call_begin;
  d.call_end_ns = op->call_end;
  d.op_name = op->name;
  d.api = op->api;
  if (!is_stream) {
    const thstate *lt = op->has_call ? find_thread(f, op->tid) : NULL;
    if (lt) {
      snapshot_thread(lt, a, b, &d.threads[d.nthreads++]);
      d.threads[0].launching = 1;
    }
    for (unsigned i = 0; i < f->nthreads; i++) {
      const thstate *th = f->threads[i];
      if (th == lt || th->last_end < a) continue;
      if (d.nthreads == CT_GAP_MAX_THREADS) d.threads_omitted++;
      else snapshot_thread(th, a, b, &d.threads[d.nthreads++]);
    }
  }
  if (*n < g->o.top) {
    unsigned i = (*n)++;
    h[i] = d;
    while (i > 0 && detail_less(&h[i], &h[(i - 1) / 2])) {
      ct_gap_detail tmp = h[i];
      h[i] = h[(i - 1) / 2];
      h[(i - 1) / 2] = tmp;
      i = (i - 1) / 2;
    }
  } else {
    h[0] = d;
    heap_down(h, *n, 0);
  }
}

/* A gap [a, b] of tracker t was found: classify, count, report. */
static void emit_gap(fstate *f, tracker *t, uint64_t a, uint64_t b, const opinfo *op) {
  enum ct_gap_cause c = classify(f, t, a, b, op);
  t->u.gaps++;
  t->u.gaps_by_cause[c]++;
  t->u.idle_by_cause[c] += b - a;
  t->u.idle_ns += b - a;
  if (b - a < f->g->o.min_gap_ns) return;
  if (f->g->fn) {
    ct_gap_info gi = {&f->pcopy, t->dev->device, t->stream, a, b, ct_gap_cause_name(c),
                      op->has_call ? op->api : NULL};
    f->g->fn(f->g->user, &gi);
  }
  top_consider(f, t, a, b, c, op);
}

/* ---- busy intervals ----------------------------------------------------------------- */

/* Adds the busy time [s, e] of op to t. */
static void tracker_add(fstate *f, tracker *t, uint64_t s, uint64_t e, const opinfo *op) {
  t->u.activities++;
  if (t->have_final && s < t->final_end) {
    if (t->stream == UINT64_MAX) f->g->late++;
    if (e <= t->final_end) return;
    s = t->final_end;
  }
  size_t i = t->n;
  while (i > t->head && t->q[i - 1].start > e) i--;
  size_t j = i;
  ivl nv = {s, e, *op};
  while (j > t->head && t->q[j - 1].end >= s) {
    j--;
    if (t->q[j].start <= nv.start) {
      nv.start = t->q[j].start;
      nv.op = t->q[j].op;
    }
    if (t->q[j].end > nv.end) nv.end = t->q[j].end;
  }
  if (j < i) { /* q[j..i) collapse into nv */
    t->q[j] = nv;
    memmove(t->q + j + 1, t->q + i, (t->n - i) * sizeof *t->q);
    t->n -= i - j - 1;
    return;
  }
  if (t->n == t->cap) {
    if (t->head > 0) {
      memmove(t->q, t->q + t->head, (t->n - t->head) * sizeof *t->q);
      t->n -= t->head;
      i -= t->head;
      t->head = 0;
    } else {
      size_t ncap = t->cap ? t->cap * 2 : 64;
      ivl *nq = realloc(t->q, ncap * sizeof *nq);
      if (!nq) {
        f->oom = 1;
        return;
      }
      t->q = nq;
      t->cap = ncap;
    }
  }
  memmove(t->q + i + 1, t->q + i, (t->n - i) * sizeof *t->q);
  t->q[i] = nv;
  t->n++;
}

/* Makes final every interval of t that ends before horizon, classifying the gaps. */
static void tracker_finalize(fstate *f, tracker *t, uint64_t horizon) {
  while (t->head < t->n && t->q[t->head].end < horizon) {
    ivl F = t->q[t->head++];
    if (t->head == t->n) t->head = t->n = 0;
    if (!t->have_final) {
      t->have_final = 1;
      t->u.first_ns = F.start;
    } else {
      if (F.start < t->final_end) F.start = t->final_end;
      if (F.start > t->final_end) emit_gap(f, t, t->final_end, F.start, &F.op);
    }
    t->u.busy_ns += F.end - F.start;
    t->final_end = t->u.last_ns = F.end;
    if (t->stream == UINT64_MAX) {
      devstate *d = t->dev;
      unsigned k;
      if (d->fin_n < RECENT_FINAL) {
        k = (d->fin_head + d->fin_n++) % RECENT_FINAL;
      } else {
        k = d->fin_head;
        d->fin_head = (d->fin_head + 1) % RECENT_FINAL;
      }
      d->fin[k].start = F.start;
      d->fin[k].end = F.end;
    }
  }
}

static uint64_t window_of(const devstate *d) {
  return max_u64(WINDOW_FLOOR_NS, d->maxdur + WINDOW_MARGIN_NS);
}

static void judge_syncs(fstate *f, devstate *d, uint64_t horizon);

static void finalize_dev(fstate *f, devstate *d, uint64_t horizon_override) {
  uint64_t w = window_of(d);
  uint64_t h = horizon_override ? horizon_override : f->wm > w ? f->wm - w : 0;
  tracker_finalize(f, &d->t, h);
  judge_syncs(f, d, h);
  for (unsigned i = 0; i < f->nstreams; i++)
    if (f->streams[i]->dev == d) tracker_finalize(f, f->streams[i], h);
}

/* GPU busy time of device d within [b, e]: recent final intervals and open ones. */
static uint64_t busy_between(const devstate *d, uint64_t b, uint64_t e) {
  uint64_t sum = 0;
  for (unsigned i = 0; i < d->fin_n; i++) {
    unsigned k = (d->fin_head + i) % RECENT_FINAL;
    sum += overlap(d->fin[k].start, d->fin[k].end, b, e);
  }
  for (size_t i = d->t.head; i < d->t.n; i++) sum += overlap(d->t.q[i].start, d->t.q[i].end, b, e);
  return sum;
}

/* ---- findings ------------------------------------------------------------------------- */

static void close_run(fstate *f, devstate *d) {
  if (d->run_count >= f->g->o.launch_bound_min && d->run_count) {
    d->lb_stretches++;
    d->lb_kernels += d->run_count;
    d->lb_gpu += d->run_gpu;
    d->lb_cpu += d->run_cpu;
    if (d->run_count > d->lb_longest) {
      d->lb_longest = d->run_count;
      d->lb_first = d->run_first;
      d->lb_last = d->run_last;
    }
  }
  d->run_count = d->run_gpu = d->run_cpu = 0;
}

static void add_copy(copystat *c, unsigned kind, uint64_t bytes, uint64_t gpu, uint64_t cpu,
                     uint64_t s, uint64_t e) {
  if (!c->count++) c->first_ns = s;
  c->kinds |= 1u << kind;
  c->bytes += bytes;
  c->gpu_ns += gpu;
  c->cpu_ns += cpu;
  c->last_ns = max_u64(c->last_ns, e);
}

/* Launch-bound runs and copy patterns, per activity in delivery order. */
static void findings_on_activity(fstate *f, devstate *d, const ct_activity *a) {
  uint64_t dur = a->end_ns - a->start_ns;
  uint64_t call = a->has_call && a->call_end_ns > a->call_begin_ns ? a->call_end_ns - a->call_begin_ns : 0;
  if (a->type == CT_GPU_KERNEL || a->type == CT_GPU_GEMM) {
    if (a->has_call && dur < call + call / 4) { /* no longer than its launch, within 25% */
      if (!d->run_count) d->run_first = a->start_ns;
      d->run_count++;
      d->run_last = max_u64(d->run_last, a->end_ns);
      d->run_gpu += dur;
      d->run_cpu += call;
    } else {
      close_run(f, d);
    }
    return;
  }
  close_run(f, d);
  if (a->type != CT_GPU_MEMCPY) return;
  uint64_t kind = 0, bytes = 0;
  int pageable = 0, sync = 0;
  if (a->detail == CT_DETAIL_MEMOP) {
    kind = a->d.memop.kind < 8 ? a->d.memop.kind : 0;
    bytes = a->d.memop.bytes;
    pageable = a->d.memop.src_mem == CT_MEM_PAGEABLE || a->d.memop.dst_mem == CT_MEM_PAGEABLE;
    sync = !a->d.memop.async;
  } else if (a->api) {
    sync = !strstr(a->api, "Async");
  }
  if (pageable) add_copy(&d->pageable, (unsigned)kind, bytes, dur, call, a->start_ns, a->end_ns);
  if (sync && a->has_call) add_copy(&d->synccopy, (unsigned)kind, bytes, dur, call, a->start_ns, a->end_ns);
}

/* Whether a call blocks the CPU until GPU work completes (cls: NAME_* bits of its name). */
static int is_blocking(const ct_span *s, unsigned cls) {
  if (cls & NAME_SYNCHRONIZE) return 1;
  if (cls & NAME_ASYNC) return 0;
  if (s->detail == CT_DETAIL_MEMOP) return !s->d.memop.async && s->d.memop.kind != CT_MEMOP_MEMSET;
  return (cls & NAME_MEMCPY) != 0;
}

/* Judges a sync call whose time is final: counted when it waited on little GPU work. */
static void judge_sync(fstate *f, devstate *d, uint64_t begin, uint64_t end, const char *name) {
  uint64_t busy = busy_between(d, begin, end);
  if (!busy || busy >= f->g->o.sync_work_ns) return; /* nothing to wait on, or enough */
  if (!d->ls_count++) {
    d->ls_first = begin;
    d->ls_name = name;
  }
  d->ls_last = end;
  d->ls_cpu += end - begin;
  d->ls_gpu += busy;
}

/* Judges the pending syncs that end before horizon (all GPU work overlapping them is final). */
static void judge_syncs(fstate *f, devstate *d, uint64_t horizon) {
  while (d->psync_n && d->psync[d->psync_head].end < horizon) {
    judge_sync(f, d, d->psync[d->psync_head].begin, d->psync[d->psync_head].end,
               d->psync[d->psync_head].name);
    d->psync_head = (d->psync_head + 1) % PENDING_SYNCS;
    d->psync_n--;
  }
}

/* A sync call: judged once the GPU time around it is final (GPU clocks mapped onto the
 * host clock may put the end of the work it waited on just after the call's end). */
static void findings_on_sync(fstate *f, const ct_span *s, const char *name) {
  devstate *d = NULL;
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == s->device) d = f->devs[i];
  if (!d) return; /* no GPU work on that device yet: nothing to judge */
  if (d->psync_n == PENDING_SYNCS) judge_syncs(f, d, d->psync[d->psync_head].end + 1);
  unsigned k = (d->psync_head + d->psync_n++) % PENDING_SYNCS;
  d->psync[k].begin = s->begin_ns;
  d->psync[k].end = s->end_ns;
  d->psync[k].name = name;
}

/* ---- model callbacks ------------------------------------------------------------------ */

static void sweep(fstate *f) {
  for (unsigned i = 0; i < f->ndevs; i++) finalize_dev(f, f->devs[i], 0);
}

static void note_time(fstate *f, uint64_t t) {
  if (t > f->wm) f->wm = t;
  if (++f->events % SWEEP_EVERY == 0) sweep(f);
}

/* Copies the model's process (whose strings die with the model) when it changed. */
static void keep_proc(fstate *f, const ct_proc *p) {
  if (!p || (f->have_proc && f->pcopy.ndevices == p->ndevices)) return;
  f->pcopy = *p;
  f->have_proc = 1;
  f->pcopy.path = intern(f->g, p->path);
  f->pcopy.host = intern(f->g, p->host);
  f->pcopy.exe = intern(f->g, p->exe);
  f->pcopy.cmdline = intern(f->g, p->cmdline);
  for (unsigned i = 0; i < p->ndevices && i < 16; i++)
    f->pcopy.device_names[i] = intern(f->g, p->device_names[i]);
}

static void on_process(void *user, const ct_proc *p) {
  fstate *f = user;
  f->have_proc = 0;
  keep_proc(f, p);
  ct_gaps_proc *gp = &f->g->procs[f->proc];
  free(gp->host);
  free(gp->cmdline);
  gp->host = strdup(p->host ? p->host : "");
  gp->cmdline = strdup(p->cmdline ? p->cmdline : "");
  gp->pid = p->rec.pid;
  gp->start_ns = p->rec.start_ns;
  gp->realtime_ns = p->rec.realtime_ns;
}

static void on_activity(void *user, const ct_activity *a) {
  fstate *f = user;
  keep_proc(f, a->proc);
  if (a->end_ns < a->start_ns) return;
  devstate *d = get_dev(f, a->device);
  if (!d) return;
  if (!*d->name)
    for (unsigned i = 0; i < f->pcopy.ndevices && i < 16; i++)
      if (f->pcopy.devices[i].device == a->device && f->pcopy.device_names[i])
        d->name = f->pcopy.device_names[i];
  uint64_t dur = a->end_ns - a->start_ns;
  if (dur > d->maxdur) d->maxdur = dur;
  opinfo op = {a->stream, a->type, a->tid, a->call_begin_ns, a->call_end_ns, keep(f, a->api, NULL),
               keep(f, a->name, NULL), a->has_call};
  tracker_add(f, &d->t, a->start_ns, a->end_ns, &op);
  tracker *st = get_stream(f, d, a->stream);
  if (st) tracker_add(f, st, a->start_ns, a->end_ns, &op);
  unsigned k;
  if (d->ends_n < RECENT_ENDS) {
    k = (d->ends_head + d->ends_n++) % RECENT_ENDS;
  } else {
    k = d->ends_head;
    d->ends_head = (d->ends_head + 1) % RECENT_ENDS;
  }
  d->ends[k].end = a->end_ns;
  d->ends[k].stream = a->stream;
  findings_on_activity(f, d, a);
  if (a->end_ns > f->wm) f->wm = a->end_ns;
  uint64_t w = window_of(d), h = f->wm > w ? f->wm - w : 0;
  tracker_finalize(f, &d->t, h);
  if (d->psync_n) judge_syncs(f, d, h);
  if (st) tracker_finalize(f, st, h);
  note_time(f, a->end_ns);
}

static void on_span(void *user, const ct_span *s) {
  fstate *f = user;
  keep_proc(f, s->proc);
  if (s->is_tracer || s->depth == 0) {
    thstate *th = get_thread(f, s->tid);
    unsigned cls;
    const char *name = keep(f, s->name, &cls);
    if (th) {
      span_ring_entry e = {s->begin_ns, s->end_ns, name, (uint8_t)s->is_tracer,
                           (uint8_t)(!s->is_tracer && (cls & NAME_LAUNCH)),
                           (uint8_t)(!s->is_tracer && is_blocking(s, cls))};
      ring_push(&th->calls, &e);
      th->last_end = max_u64(th->last_end, s->end_ns);
    }
    if (!s->is_tracer && (cls & NAME_SYNCHRONIZE)) findings_on_sync(f, s, name);
  }
  note_time(f, s->end_ns);
}

/* ---- results ---------------------------------------------------------------------------- */

static void add_finding(struct ct_gaps *g, const ct_gaps_finding *fd) {
  ct_gaps_finding *nf = realloc(g->finds, (g->nfinds + 1) * sizeof *nf);
  if (!nf) return;
  g->finds = nf;
  g->finds[g->nfinds++] = *fd;
}

static void device_findings(fstate *f, devstate *d) {
  struct ct_gaps *g = f->g;
  ct_gaps_finding fd;
  close_run(f, d);
  if (d->lb_stretches) {
    fd = (ct_gaps_finding){CT_FIND_LAUNCH_BOUND, f->proc, d->device, "kernels", d->lb_kernels,
                           d->lb_stretches, 0, d->lb_gpu, d->lb_cpu, d->lb_first, d->lb_last,
                           d->lb_longest,
                           "launch-bound: CUDA graphs or torch.compile(mode='reduce-overhead') "
                           "would help (or fuse the kernels)"};
    add_finding(g, &fd);
  }
  for (int sync = 0; sync < 2; sync++) {
    const copystat *c = sync ? &d->synccopy : &d->pageable;
    if (!c->count || c->count < g->o.repeat_min) continue;
    char dirs[64] = "";
    for (unsigned k = 0; k < 8; k++) {
      if (!(c->kinds & (1u << k))) continue;
      const char *label = ct_memop_label(k);
      if (!strncmp(label, "memcpy ", 7)) label += 7;
      snprintf(dirs + strlen(dirs), sizeof dirs - strlen(dirs), "%s%s", *dirs ? "," : "", label);
    }
    fd = (ct_gaps_finding){sync ? CT_FIND_SYNC_COPY : CT_FIND_PAGEABLE_COPY, f->proc, d->device,
                           intern(g, dirs), c->count, 0, c->bytes, c->gpu_ns, c->cpu_ns,
                           c->first_ns, c->last_ns, 0,
                           sync ? "use cudaMemcpyAsync with pinned memory and synchronise once "
                                  "where the data is needed"
                                : "use pinned memory (cudaHostAlloc/cudaHostRegister) and "
                                  "cudaMemcpyAsync"};
    add_finding(g, &fd);
  }
  if (d->ls_count && (d->ls_count >= g->o.repeat_min || d->ls_cpu >= LITTLE_SYNC_TOTAL_NS)) {
    fd = (ct_gaps_finding){CT_FIND_LITTLE_SYNC, f->proc, d->device, d->ls_name, d->ls_count, 0, 0,
                           d->ls_gpu, d->ls_cpu, d->ls_first, d->ls_last, 0,
                           "remove the sync or move it to where its result is needed"};
    add_finding(g, &fd);
  }
}

/* Finalises everything of a file and moves its results into g. */
static void finish_file(fstate *f) {
  struct ct_gaps *g = f->g;
  for (unsigned i = 0; i < f->ndevs; i++) finalize_dev(f, f->devs[i], UINT64_MAX);
  ct_gaps_device *nd = realloc(g->devs, (g->ndevs + f->ndevs) * sizeof *nd);
  if (nd) {
    g->devs = nd;
    for (unsigned i = 0; i < f->ndevs; i++)
      g->devs[g->ndevs++] = (ct_gaps_device){f->proc, f->devs[i]->device, f->devs[i]->name,
                                             f->devs[i]->t.u};
  }
  ct_gaps_stream *ns = realloc(g->streams, (g->nstreams + f->nstreams) * sizeof *ns);
  if (ns) {
    g->streams = ns;
    for (unsigned i = 0; i < f->nstreams; i++)
      g->streams[g->nstreams++] = (ct_gaps_stream){f->proc, f->streams[i]->dev->device,
                                                   f->streams[i]->stream, f->streams[i]->u};
  }
  for (unsigned i = 0; i < f->ndevs; i++) device_findings(f, f->devs[i]);
  for (unsigned i = 0; i < f->ndevs; i++) {
    free(f->devs[i]->t.q);
    free(f->devs[i]);
  }
  for (unsigned i = 0; i < f->nstreams; i++) {
    free(f->streams[i]->q);
    free(f->streams[i]);
  }
  for (unsigned i = 0; i < f->nthreads; i++) {
    free(f->threads[i]->calls.a);
    free(f->threads[i]);
  }
  free(f->devs);
  free(f->streams);
  free(f->threads);
  free(f->names);
}

static int cmp_detail_desc(const void *x, const void *y) {
  const ct_gap_detail *a = x, *b = y;
  return detail_less(a, b) ? 1 : detail_less(b, a) ? -1 : 0;
}

static void sort_tops(struct ct_gaps *g) {
  if (g->sorted) memcpy(g->sorted, g->top, g->ntop * sizeof *g->top);
  if (g->sorted_s) memcpy(g->sorted_s, g->top_s, g->ntop_s * sizeof *g->top_s);
  if (g->sorted) qsort(g->sorted, g->ntop, sizeof *g->sorted, cmp_detail_desc);
  if (g->sorted_s) qsort(g->sorted_s, g->ntop_s, sizeof *g->sorted_s, cmp_detail_desc);
}

/* ---- public --------------------------------------------------------------------------------- */

ct_gaps *ct_gaps_new(const ct_gaps_options *o) {
  struct ct_gaps *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  if (o) g->o = *o;
  else ct_gaps_default_options(&g->o);
  if (g->o.top) {
    g->top = calloc(g->o.top, sizeof *g->top);
    g->top_s = calloc(g->o.top, sizeof *g->top_s);
    g->sorted = calloc(g->o.top, sizeof *g->sorted);
    g->sorted_s = calloc(g->o.top, sizeof *g->sorted_s);
    if (!g->top || !g->top_s || !g->sorted || !g->sorted_s) {
      ct_gaps_free(g);
      return NULL;
    }
  }
  return g;
}

void ct_gaps_set_callback(ct_gaps *g, void (*fn)(void *user, const ct_gap_info *gap), void *user) {
  g->fn = fn;
  g->user = user;
}

int ct_gaps_add_file(ct_gaps *g, const char *path, ct_model_stats *st) {
  ct_gaps_proc *np = realloc(g->procs, (g->nprocs + 1) * sizeof *np);
  if (!np) return -1;
  g->procs = np;
  ct_gaps_proc *gp = &g->procs[g->nprocs];
  memset(gp, 0, sizeof *gp);
  gp->path = strdup(path);
  fstate f;
  memset(&f, 0, sizeof f);
  f.g = g;
  f.proc = g->nprocs++;
  static const ct_model_ops ops = {.on_process = on_process, .on_span = on_span,
                                   .on_activity = on_activity};
  ct_model_stats local;
  if (!st) st = &local;
  int rc = ct_model_read(path, NULL, &ops, &f, st);
  gp->first_ns = st->first_ns;
  if (!gp->host) gp->host = strdup("");
  if (!gp->cmdline) gp->cmdline = strdup("");
  finish_file(&f);
  sort_tops(g);
  if (f.oom && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: the analysis is incomplete");
    rc = 1;
  }
  return rc;
}

const ct_gaps_proc *ct_gaps_procs(const ct_gaps *g, unsigned *n) {
  *n = g->nprocs;
  return g->procs;
}
const ct_gaps_device *ct_gaps_devices(const ct_gaps *g, unsigned *n) {
  *n = g->ndevs;
  return g->devs;
}
const ct_gaps_stream *ct_gaps_streams(const ct_gaps *g, unsigned *n) {
  *n = g->nstreams;
  return g->streams;
}
const ct_gaps_finding *ct_gaps_findings(const ct_gaps *g, unsigned *n) {
  *n = g->nfinds;
  return g->finds;
}
const ct_gap_detail *ct_gaps_top(const ct_gaps *g, unsigned *n) {
  *n = g->ntop;
  return g->sorted;
}
const ct_gap_detail *ct_gaps_top_stream(const ct_gaps *g, unsigned *n) {
  *n = g->ntop_s;
  return g->sorted_s;
}
uint64_t ct_gaps_late(const ct_gaps *g) { return g->late; }

void ct_gaps_free(ct_gaps *g) {
  if (!g) return;
  for (unsigned i = 0; i < g->nprocs; i++) {
    free(g->procs[i].path);
    free(g->procs[i].host);
    free(g->procs[i].cmdline);
  }
  for (size_t i = 0; i < g->cappool; i++) free(g->pool[i]);
  free(g->pool);
  free(g->procs);
  free(g->devs);
  free(g->streams);
  free(g->finds);
  free(g->top);
  free(g->top_s);
  free(g->sorted);
  free(g->sorted_s);
  free(g);
}

int ct_gaps_each(const char *path, uint64_t min_ns, void (*fn)(void *user, const ct_gap_info *gap),
                 void *user, ct_model_stats *st) {
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  o.min_gap_ns = min_ns;
  o.top = 0;
  ct_gaps *g = ct_gaps_new(&o);
  if (!g) {
    if (st) snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  ct_gaps_set_callback(g, fn, user);
  int rc = ct_gaps_add_file(g, path, st);
  ct_gaps_free(g);
  return rc;
}
