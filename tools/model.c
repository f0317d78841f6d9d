/*
 * The trace model (model.h): one file's records streamed through ct_reader,
 * strings resolved, API + detail + GPU records joined by corr, and spans and
 * activities delivered in nondecreasing end time through a reorder buffer.
 *
 * Reorder buffer. Each span or activity waits as a "pending" event keyed by its
 * end time (ties broken by file order) until the newest end time seen exceeds
 * key + window; then it is released in key order. Unless the caller fixes the
 * window, it adapts: 20 ms at first, then 4x the largest lateness seen (how far
 * an arriving event's end lies behind the newest end), at most 2 s. The preload's
 * writer drains every thread's buffer every few ms, so the window stays small and
 * so does the memory it holds. The buffer is a binary heap,
 * fronted by a few sorted runs: the input is mostly a handful of interleaved
 * in-order sequences (one per thread, one per GPU poller), so an event that does
 * not go back in time relative to some run's tail is appended to that run (O(1))
 * and only the rest go into the heap. The release order is exactly the heap's:
 * the smallest (key, seq) among the run heads and the heap top. An event whose key
 * is below the last released key can no longer be placed in order: it is
 * delivered at once with late = 1 and counted.
 *
 * Joining. A table keyed by corr (model_calls.h) holds, per call in flight, the call's API
 * fields and its detail record (LAUNCH, MEMOP or GEMM). Spans and activities look
 * their entry up when they are released, so either file order joins as long as
 * both records arrive within the window. An activity whose call has not arrived is
 * not released (nor anything after it) until it does, for at most JOIN_WAIT_NS of
 * trace time: a call's record can come later than the window has grown to so far
 * (its thread descheduled between the call's end and its record, or a slow first
 * stack capture: 21 ms under load, with the window still at its first 20 ms). Once
 * the file has reported drops it is not waited for (a dropped call never comes), so
 * a trace with drops keeps the window's memory. A kernel whose LAUNCH names a
 * KERNEL_ATTR record or whose shape's OCCUPANCY record was not read yet, and a span
 * whose STACK node or one of its ancestors was not read yet, wait the same way
 * (awaits_join, model_ready.h). The preload writes a call's detail
 * record before its API record (since 2026-12-03), so the detail is in the table
 * whenever the span is delivered, however far apart the two land; in older files it
 * comes right after: an API record releases nothing until the next event is added, so
 * that its detail record is read before an activity it unblocks is delivered. An
 * entry is freed once its span was delivered and either its activity was delivered
 * too or the call was not marked CT_API_TIMED (no GPU record will follow). Once the file reported drops or damage,
 * a call whose GPU record never comes (dropped), or whose GPU work was delivered
 * without it, is given up on once its stream's later GPU work was delivered a window
 * earlier (model_waits.h); and a call of which only the detail record came is given
 * up on 2 s of trace time later (sweep_stranded_details). Memory is
 * therefore bounded by the window and the calls whose GPU work is still outstanding,
 * not by the trace.
 */
#include "model.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_calls.h"
#include "model_ready.h"
#include "model_waits.h"
#include "progress.h"
#include "reader.h"
#include "ring.h"

#define MAX_WINDOW_NS 2000000000ull    /* the adaptive window's bound once it holds more
                                          than join_hold events (window_now) */
#define LATE_WINDOW_NS CT_MODEL_MAX_WINDOW_NS /* its bound otherwise (keys + window cannot
                                                wrap) */
#define START_WINDOW_NS CT_MODEL_START_WINDOW_NS /* nor starts below this */
#define JOIN_WAIT_NS CT_MODEL_JOIN_WAIT_NS /* how long an activity waits for its call ... */
#define NRUNS 8
#define PEND_FIELDS 12 /* the most fields of API (12 since 1.1), TRACER, GPU */

void (*ct_model_progress_hook)(const char *path, uint64_t records) = NULL;

/* ---- pending events ---------------------------------------------------------- */

typedef struct pend {
  uint64_t key, seq;
  uint8_t kind, late;
  uint64_t v[PEND_FIELDS];
} pend;

static inline int pend_less(const pend *a, const pend *b) {
  return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

/* A sorted run: a growable ring of pending events in nondecreasing (key, seq). */
typedef struct run {
  pend *a;
  size_t cap, head, n; /* cap is a power of two */
} run;

/* A slot at the tail of r for a new event (filled by the caller); NULL when out of memory. */
static pend *run_append(run *r) {
  if (r->n == r->cap) {
    size_t ncap = r->cap ? r->cap * 2 : 256;
    pend *na = ct_ring_copy(r->a, sizeof *na, r->cap, r->head, r->n, ncap);
    if (!na) return NULL;
    free(r->a);
    r->a = na;
    r->cap = ncap;
    r->head = 0;
  }
  return &r->a[(r->head + r->n++) & (r->cap - 1)];
}

static inline const pend *run_front(const run *r) { return r->n ? &r->a[r->head] : NULL; }
static inline const pend *run_back(const run *r) {
  return r->n ? &r->a[(r->head + r->n - 1) & (r->cap - 1)] : NULL;
}
static inline void run_pop(run *r) {
  r->head = (r->head + 1) & (r->cap - 1);
  r->n--;
}

/* A binary min-heap of pending events. */
typedef struct heap {
  pend *a;
  size_t n, cap;
} heap;

static int heap_push(heap *h, const pend *p) {
  if (h->n == h->cap) {
    size_t ncap = h->cap ? h->cap * 2 : 256;
    pend *na = realloc(h->a, ncap * sizeof *na);
    if (!na) return -1;
    h->a = na;
    h->cap = ncap;
  }
  size_t i = h->n++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!pend_less(p, &h->a[parent])) break;
    h->a[i] = h->a[parent];
    i = parent;
  }
  h->a[i] = *p;
  return 0;
}

static void heap_pop(heap *h) {
  pend last = h->a[--h->n];
  size_t i = 0, n = h->n;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && pend_less(&h->a[c + 1], &h->a[c])) c++;
    if (!pend_less(&h->a[c], &last)) break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (n) h->a[i] = last;
}

/* ---- the model state ----------------------------------------------------------- */

typedef struct model {
  ct_reader *r;
  const ct_model_ops *ops;
  void *user;
  ct_model_stats *st;
  uint64_t window;
  int adaptive;       /* the window grows with the lateness seen (no fixed window given) */
  ct_proc proc;
  char *cmdline;
  int proc_sent;
  run runs[NRUNS];
  unsigned runs_used; /* bit i: runs[i] is not empty */
  heap h;
  size_t pending;     /* events in the runs and the heap */
  uint64_t join_hold; /* ... and how many events it holds back first (CT_MODEL_JOIN_HOLD) */
  ct_calls calls;
  ct_waits waits;     /* calls that may wait for ever, by stream (model_waits.h) */
  int lossy;          /* the file reported drops, or the reader met damage (checked every
                         1024 records): waiting calls may be given up on */
  uint64_t seq, max_end, last_key, blocked_key;
  uint64_t next_sweep; /* trace time of the next sweep_stranded_details */
  uint64_t stranded_given_up; /* calls of which only the detail came, given up on */
  int released_any;
  int release_due;    /* the last event added was a call's: release before the next */
  /* per string id: cached api category/layer (0 = not computed) */
  uint8_t *api_cache;
  size_t api_cache_n;
  ct_ready ready;     /* the KERNEL_ATTR, STACK and OCCUPANCY records read (model_ready.h) */
  int oom;
  /* the time filter (ct_model_options from/to) */
  ct_model_options opt;
  int filtering;      /* a bound is set */
  int bounds_known;   /* from_ns/to_ns resolved against the trace's start */
  int after_to_sent;  /* the pause after `to` was delivered */
  uint64_t from_ns, to_ns;
  ct_select_cache select_cache; /* the kernel pattern's answers (opt.select) */
} model;

static ct_model_options default_options;

void ct_model_set_defaults(const ct_model_options *opts) {
  if (opts) default_options = *opts;
  else memset(&default_options, 0, sizeof default_options);
}

void ct_model_get_defaults(ct_model_options *opts) { *opts = default_options; }

static const char *str(const model *m, uint64_t id) {
  if (!id) return NULL;
  return ct_reader_string(m->r, id, NULL);
}

static const char *str_or_empty(const model *m, uint64_t id) {
  const char *s = str(m, id);
  return s ? s : "";
}

/* Category and layer of the entry point named by string id, cached per id: a cache
 * byte holds 0x80 | layer << 4 | category (0 = not computed yet). */
static void api_kind(model *m, uint64_t id, enum ct_api_category *cat, enum ct_api_layer *layer) {
  if (id < (1u << 24) && id >= m->api_cache_n) {
    size_t n = m->api_cache_n ? m->api_cache_n : 256;
    while (n <= id) n *= 2;
    uint8_t *nc = realloc(m->api_cache, n);
    if (nc) {
      memset(nc + m->api_cache_n, 0, n - m->api_cache_n);
      m->api_cache = nc;
      m->api_cache_n = n;
    }
  }
  if (id < m->api_cache_n && m->api_cache[id]) {
    *cat = (enum ct_api_category)(m->api_cache[id] & 0x0f);
    *layer = (enum ct_api_layer)((m->api_cache[id] >> 4) & 0x07);
    return;
  }
  const char *name = str(m, id);
  *cat = ct_api_category(name);
  *layer = ct_api_layer(name);
  _Static_assert(CT_CAT_OTHER < 16 && CT_LAYER_CUBLASLT < 8, "api cache packing");
  if (id < m->api_cache_n) m->api_cache[id] = (uint8_t)(0x80 | (*layer << 4) | *cat);
}

static void send_process(model *m) {
  if (m->proc_sent) return;
  m->proc_sent = 1;
  if (m->ops->on_process) m->ops->on_process(m->user, &m->proc);
}

/* ---- the time filter ------------------------------------------------------------ */

static uint64_t resolve_bound(const ct_time_bound *b, uint64_t start, uint64_t unset) {
  if (!b->set) return unset;
  return b->absolute ? b->ns : start + b->ns;
}

void ct_model_default_window(uint64_t start_ns, uint64_t *from, uint64_t *to) {
  *from = resolve_bound(&default_options.from, start_ns, 0);
  *to = resolve_bound(&default_options.to, start_ns, UINT64_MAX);
}

/* Delivers a pause the filter made: [begin, end], or open to the trace's end (end 0). */
static void filter_pause(model *m, uint64_t begin, uint64_t end) {
  if (!m->ops->on_pause) return;
  struct ct_pause p = {.begin_ns = begin, .end_ns = 0};
  m->ops->on_pause(m->user, &m->proc, &p, "filter");
  if (!end) return;
  p.end_ns = end;
  m->ops->on_pause(m->user, &m->proc, &p, "filter");
}

/* Resolves the bounds against the trace's start (its PROCESS record's start_ns, else
 * first_time, the first event seen) and delivers the pause before `from`. */
static void filter_start(model *m, uint64_t first_time) {
  if (!m->filtering || m->bounds_known) return;
  uint64_t start = m->proc.rec.start_ns ? m->proc.rec.start_ns : first_time;
  if (!start) return; /* no time yet */
  send_process(m);
  m->bounds_known = 1;
  m->from_ns = resolve_bound(&m->opt.from, start, 0);
  m->to_ns = resolve_bound(&m->opt.to, start, UINT64_MAX);
  if (m->from_ns > start) filter_pause(m, start, m->from_ns);
}

/* 1 when [begin, end] lies outside the filter (the caller then drops it). */
static int filtered_out(model *m, uint64_t begin, uint64_t end) {
  if (!m->filtering) return 0;
  filter_start(m, begin);
  if (!m->bounds_known) return 0;
  if (begin > m->to_ns && !m->after_to_sent) { /* the first event after `to` */
    m->after_to_sent = 1;
    filter_pause(m, m->to_ns, 0);
  }
  return end < m->from_ns || begin > m->to_ns;
}

/* Fills a detail union from an entry. */
static void fill_detail(const ct_call *e, enum ct_detail *kind, void *d) {
  *kind = (enum ct_detail)e->detail;
  uint64_t v[1 + CALL_DETAIL_FIELDS];
  v[0] = e->corr;
  memcpy(v + 1, e->d, sizeof e->d);
  size_t n = e->detail == CT_DETAIL_LAUNCH ? sizeof(struct ct_launch)
             : e->detail == CT_DETAIL_MEMOP ? sizeof(struct ct_memop)
             : e->detail == CT_DETAIL_GEMM  ? sizeof(struct ct_gemm)
             : e->detail == CT_DETAIL_GRAPH ? sizeof(struct ct_graph_launch)
             : e->detail == CT_DETAIL_ALLOC ? sizeof(struct ct_alloc)
             : e->detail == CT_DETAIL_POLL  ? sizeof(struct ct_poll)
                                            : 0;
  memcpy(d, v, n);
}

/* The reorder window in force: the adaptive window (4x the largest lateness seen), but
 * at most MAX_WINDOW_NS while the buffer holds more than join_hold events. A writer
 * round that came seconds late (a starved writer thread) lands one thread's records
 * seconds of trace time behind another's: within the memory bound they are still put
 * in order, beyond it the 2 s window of old keeps memory to 2 s of trace time. */
static inline uint64_t window_now(const model *m) {
  return m->window > MAX_WINDOW_NS && m->pending > m->join_hold ? MAX_WINDOW_NS : m->window;
}

static void note_times(model *m, uint64_t b, uint64_t e) {
  if (b && b < m->st->first_ns) m->st->first_ns = b;
  if (e > m->st->last_ns) m->st->last_ns = e;
}

/* GPU work g, ending at key, was delivered: its stream advances; calls waiting on it
 * are given up on only once the file reported drops or damage (model_waits.h). */
static void progress(model *m, const struct ct_gpu *g, uint64_t key) {
  ct_waits_progress(&m->waits, &m->calls, g->device, g->stream, g->corr, key, window_now(m),
                    m->lossy);
}

/* Frees a call entry when nothing more will be joined with it; else, when what it
 * waits for may never come, has it wait on (device, stream) (model_waits.h). */
static void maybe_free(model *m, ct_call *e, uint64_t device, uint64_t stream) {
  if (e->span_done && (e->act_done || !(e->flags & CT_API_TIMED))) ct_calls_remove(&m->calls, e);
  else if (ct_call_waits(e) && ct_waits_add(&m->waits, device, stream, e->corr) < 0) m->oom = 1;
}

static void deliver_span(model *m, const pend *p) {
  ct_span s;
  memset(&s, 0, sizeof s);
  s.proc = &m->proc;
  s.late = p->late;
  if (p->kind == CT_KIND_TRACER) {
    const struct ct_tracer *t = (const struct ct_tracer *)p->v;
    s.is_tracer = 1;
    s.tid = t->tid;
    s.name = str_or_empty(m, t->what);
    s.begin_ns = t->begin_ns;
    s.end_ns = t->end_ns;
    s.amount = t->amount;
    s.category = CT_CAT_OTHER;
  } else {
    const struct ct_api *a = (const struct ct_api *)p->v;
    s.tid = a->tid;
    s.name = str_or_empty(m, a->name);
    s.begin_ns = a->begin_ns;
    s.end_ns = a->end_ns;
    s.corr = a->corr;
    s.device = a->device;
    s.stream = a->stream;
    s.result = a->result;
    s.depth = a->depth;
    s.flags = a->flags;
    s.stack = a->stack;
    s.parent = a->parent;
    api_kind(m, a->name, &s.category, &s.layer);
    ct_call *e = a->corr ? ct_calls_find(&m->calls, a->corr) : NULL;
    if (e && filtered_out(m, s.begin_ns, s.end_ns)) {
      e->span_done = 1;
      maybe_free(m, e, a->device, a->stream);
      return;
    }
    if (e) {
      fill_detail(e, &s.detail, &s.d);
      if (s.detail == CT_DETAIL_LAUNCH) s.kernel = str(m, s.d.launch.kernel);
      if (s.detail == CT_DETAIL_POLL) s.polls = s.d.poll.polls;
      s.gpu_pending = (a->flags & CT_API_TIMED) && !e->act_done;
      e->span_done = 1;
      maybe_free(m, e, a->device, a->stream);
    }
  }
  if (filtered_out(m, s.begin_ns, s.end_ns)) return;
  m->st->spans++;
  note_times(m, s.begin_ns, s.end_ns);
  if (m->ops->on_span) m->ops->on_span(m->user, &s);
}

/* GPU record g of call e (NULL: none in flight) is not delivered: when the call was
 * delivered first, promising it (gpu_pending), the consumer is told. */
static void withhold(model *m, ct_call *e, const struct ct_gpu *g) {
  if (!e) return;
  if (e->span_done && !e->act_done && (e->flags & CT_API_TIMED) && m->ops->on_withheld)
    m->ops->on_withheld(m->user, &m->proc, g->corr, g->device, g->stream);
  e->act_done = 1;
  maybe_free(m, e, g->device, g->stream);
}

static void deliver_activity(model *m, const pend *p) {
  const struct ct_gpu *g = (const struct ct_gpu *)p->v;
  ct_activity a;
  memset(&a, 0, sizeof a);
  a.proc = &m->proc;
  a.late = p->late;
  a.corr = g->corr;
  a.device = g->device;
  a.stream = g->stream;
  a.start_ns = g->start_ns;
  a.end_ns = g->end_ns;
  a.type = g->type;
  a.name = str(m, g->name);
  ct_call *e = g->corr ? ct_calls_find(&m->calls, g->corr) : NULL;
  if (filtered_out(m, a.start_ns, a.end_ns)) {
    withhold(m, e, g);
    if (g->corr) progress(m, g, p->key);
    return;
  }
  if (e) {
    fill_detail(e, &a.detail, &a.d);
    if (e->has_call) {
      a.has_call = 1;
      a.tid = e->tid;
      a.call_begin_ns = e->begin;
      a.call_end_ns = e->end;
      a.call_flags = e->flags;
      a.call_depth = e->depth;
      a.call_stack = e->stack;
      a.call_parent = e->parent;
      a.api = str(m, e->name);
    }
  }
  if (!a.name) {
    if (a.detail == CT_DETAIL_LAUNCH) a.name = str(m, a.d.launch.kernel);
    else if (a.detail == CT_DETAIL_MEMOP) a.name = ct_memop_label(a.d.memop.kind);
  }
  if (!a.name) {
    switch (a.type) {
    case CT_GPU_MEMCPY: a.name = "memcpy"; break;
    case CT_GPU_MEMSET: a.name = "memset"; break;
    case CT_GPU_GEMM: a.name = a.api ? a.api : "gemm"; break;
    case CT_GPU_GRAPH: a.name = "graph"; break;
    default: a.name = "(unknown kernel)"; break;
    }
  }
  if (m->opt.select &&
      !ct_select_activity(m->opt.select, &m->select_cache, a.device, a.stream, a.name)) {
    m->st->unselected++;
    withhold(m, e, g);
    if (g->corr) progress(m, g, p->key);
    return;
  }
  if (!a.has_call) {
    m->st->unmatched_activities++;
    if (a.corr && !m->st->dropped) m->st->joins_missed++;
  }
  m->st->activities++;
  note_times(m, a.start_ns, a.end_ns);
  if (m->ops->on_activity) m->ops->on_activity(m->user, &a);
  if (e) {
    e->act_done = 1;
    e->act_alone = !e->has_call;
    maybe_free(m, e, g->device, g->stream);
  }
  if (g->corr) progress(m, g, p->key);
}

static void deliver(model *m, const pend *p) {
  send_process(m);
  if (p->kind == CT_KIND_GPU) deliver_activity(m, p);
  else deliver_span(m, p);
}

/* The smallest pending event: a run index, NRUNS for the heap, or -1 when empty. */
static int pend_min(const model *m) {
  int best = -1;
  const pend *bp = NULL;
  for (unsigned used = m->runs_used; used; used &= used - 1) {
    int i = __builtin_ctz(used);
    const pend *f = &m->runs[i].a[m->runs[i].head];
    if (!bp || pend_less(f, bp)) {
      bp = f;
      best = i;
    }
  }
  if (m->h.n && (!bp || pend_less(&m->h.a[0], bp))) best = NRUNS;
  return best;
}

/* Activity p is released without its call: its wait ran out (awaits_join). */
static void note_given_up(model *m, const pend *p) {
  m->st->joins_given_up++;
}

/* The index in ct_call.d (the detail's fields after corr) of a LAUNCH record's field,
 * and in a pending API event's fields of its stack. */
#define LAUNCH_AT(field) (offsetof(struct ct_launch, field) / sizeof(uint64_t) - 1)
#define API_STACK_AT (offsetof(struct ct_api, stack) / sizeof(uint64_t))

/* 1 when p should not be released yet: p is an activity whose call, the KERNEL_ATTR
 * record its LAUNCH names or its launch shape's OCCUPANCY record (format 1.6) is not in
 * the file so far, or a span whose STACK node or one of the node's ancestors (format
 * 1.1) is not; the file has reported no drops (which may have taken it), and less than
 * JOIN_WAIT_NS of trace time has passed since its end. The first thread to launch a
 * function writes its KERNEL_ATTR record, the first to launch a shape its OCCUPANCY
 * record, the first to call from a call path its STACK records; another thread's launch
 * or call can reach the file first (the writer drains threads' buffers one by one, the
 * first thread may be preempted), and a consumer writing events as delivered (dump
 * --chrome) would write the kernel without its attributes or occupancy, the call
 * without its call site or with a truncated stack. A record waited for in vain is
 * settled (model_ready.h): what names it later does not wait again. */
static int awaits_join(model *m, const pend *p) {
  if (m->st->dropped) return 0;
  int expired = p->key + JOIN_WAIT_NS < m->max_end && m->pending > m->join_hold;
  if (p->kind == CT_KIND_API) {
    uint64_t stack = p->v[API_STACK_AT];
    if (ct_ready_stack(&m->ready, stack)) return 0;
    if (!expired) return 1;
    ct_ready_stack_settle(&m->ready, stack);
    return 0;
  }
  if (p->kind != CT_KIND_GPU || !p->v[0]) return 0;
  const ct_call *e = ct_calls_find(&m->calls, p->v[0]);
  if (!e) return 0;
  if (!e->has_call) {
    if (expired) note_given_up(m, p);
    return !expired;
  }
  if (e->detail != CT_DETAIL_LAUNCH || !e->d[LAUNCH_AT(attr)]) return 0;
  uint64_t attr = e->d[LAUNCH_AT(attr)];
  if (!ct_ready_attr(&m->ready, attr)) {
    if (!expired) return 1;
    ct_ready_attr_settle(&m->ready, attr);
  }
  const struct ct_gpu *g = (const struct ct_gpu *)p->v;
  ct_shape shape = {attr, g->device,
                    e->d[LAUNCH_AT(block_x)] * e->d[LAUNCH_AT(block_y)] * e->d[LAUNCH_AT(block_z)],
                    e->d[LAUNCH_AT(shmem)]};
  if (!ct_ready_shape(&m->ready, &shape)) {
    if (!expired) return 1;
    ct_ready_shape_settle(&m->ready, &shape);
  }
  return 0;
}

/* Releases every pending event with key + window < newest end, except that an
 * activity waiting for its call or kernel attributes (awaits_join) holds back itself and all after it
 * (all when drain). */
static void release(model *m, int drain) {
  for (;;) {
    int i = pend_min(m);
    if (i < 0) {
      m->blocked_key = UINT64_MAX;
      return;
    }
    const pend *f = i == NRUNS ? &m->h.a[0] : run_front(&m->runs[i]);
    if (!drain && (!(f->key + window_now(m) < m->max_end) || awaits_join(m, f))) {
      m->blocked_key = f->key;
      return;
    }
    if (f->key > m->last_key) m->last_key = f->key; /* a late event held (add_pending) is older */
    m->released_any = 1;
    m->pending--;
    if (i == NRUNS) {
      pend p = *f;
      heap_pop(&m->h);
      deliver(m, &p);
    } else {
      run_pop(&m->runs[i]); /* *f stays valid until the next push */
      if (!m->runs[i].n) m->runs_used &= ~(1u << i);
      deliver(m, f);
    }
  }
}

/* Fills a pending event from a record. */
static inline void pend_fill(pend *p, uint8_t kind, const ct_record *rec, uint64_t key,
                             uint64_t seq, uint8_t late) {
  p->key = key;
  p->seq = seq;
  p->kind = kind;
  p->late = late;
  memcpy(p->v, rec->u.v, sizeof p->v);
}

/* Adds a span or activity to the reorder buffer; then releases what is due, or with
 * hold (an API record) only when the next event is added: the call's detail record,
 * right after it in the file, is read by then, for an activity the call releases. */
static void add_pending(model *m, uint8_t kind, const ct_record *rec, uint64_t key, int hold) {
  pend p;
  uint64_t seq = m->seq++;
  uint8_t late = 0;
  if (m->release_due) {
    m->release_due = 0;
    if (m->blocked_key + window_now(m) < m->max_end) release(m, 0);
  }
  if (m->released_any && key < m->last_key) {
    /* Later events were delivered already (another thread's buffer reached the file
     * first, more than the window ahead). A late event goes out at once, unless it
     * awaits its call (or attributes, stack): then it is held like any other, so that
     * a correct trace whose calls come after their GPU records is still joined. */
    pend_fill(&p, kind, rec, key, seq, 1);
    m->st->late++;
    if (!awaits_join(m, &p)) {
      deliver(m, &p);
      return;
    }
    late = 1;
  }
  /* the run whose tail is the largest key <= key, else an empty run, else the heap */
  _Static_assert(NRUNS < 32, "runs_used is a bit mask");
  int best = -1;
  uint64_t best_key = 0;
  for (unsigned used = m->runs_used; used; used &= used - 1) {
    int i = __builtin_ctz(used);
    uint64_t tail = run_back(&m->runs[i])->key;
    if (tail <= key && (best < 0 || tail > best_key)) {
      best = i;
      best_key = tail;
    }
  }
  unsigned empty = ~m->runs_used & ((1u << NRUNS) - 1);
  if (best < 0 && empty) best = __builtin_ctz(empty);
  /* a run's slot is filled in place; the heap takes a copy */
  pend *slot = best >= 0 ? run_append(&m->runs[best]) : NULL;
  int rc = 0;
  if (slot) {
    pend_fill(slot, kind, rec, key, seq, late);
    m->runs_used |= 1u << best;
  } else {
    pend_fill(&p, kind, rec, key, seq, late);
    rc = best >= 0 ? -1 : heap_push(&m->h, &p);
  }
  if (rc < 0) {
    m->oom = 1;
    deliver(m, &p); /* out of memory: deliver now rather than lose it */
    return;
  }
  m->pending++;
  if (key > m->max_end) m->max_end = key;
  /* Adaptive window: keep it at least 4x the largest lateness seen so far, so that
   * events arriving that late are still placed in order (window_now bounds it). */
  else if (m->adaptive && (m->max_end - key) * 4 > m->window)
    m->window = m->max_end - key < LATE_WINDOW_NS / 4 ? (m->max_end - key) * 4 : LATE_WINDOW_NS;
  /* blocked_key: the smallest pending key, known since the last release stopped */
  if (key < m->blocked_key) m->blocked_key = key;
  if (hold) m->release_due = 1;
  else if (m->blocked_key + window_now(m) < m->max_end) release(m, 0);
}

static void on_call(model *m, const ct_record *rec) {
  const struct ct_api *a = &rec->u.api;
  if (a->corr) {
    ct_call *e = ct_calls_get(&m->calls, a->corr);
    if (e && e->act_alone && !e->has_call) { /* its GPU work went out without it */
      m->st->calls_after_give_up++;
      uint64_t behind = m->max_end > a->end_ns ? m->max_end - a->end_ns : 0;
      if (behind > m->st->late_call_max_ns) m->st->late_call_max_ns = behind;
    }
    if (e) {
      e->has_call = 1;
      e->tid = a->tid;
      e->name = a->name;
      e->begin = a->begin_ns;
      e->end = a->end_ns;
      e->flags = a->flags;
      e->depth = a->depth;
      e->stack = a->stack;
      e->parent = a->parent;
    } else {
      m->oom = 1;
    }
  }
  add_pending(m, CT_KIND_API, rec, a->end_ns, 1);
}

/* 1 when call e has only its detail record, which came more than JOIN_WAIT_NS of trace
 * time (*newest, the newest end time read) ago: its API record and GPU record were
 * both lost. */
static int detail_stranded(const ct_call *e, void *newest) {
  return e->detail && !e->has_call && !e->gpu_seen &&
         e->detail_at + JOIN_WAIT_NS < *(const uint64_t *)newest;
}

/* Once the file reported drops or damage, every JOIN_WAIT_NS of trace time: gives up on
 * the calls of which only the detail record came (detail_stranded). The preload writes
 * a call's detail before its API record, so a detail alone waits for its call; when
 * both the call and its GPU record were dropped, nothing else would ever free it. */
static void sweep_stranded_details(model *m) {
  if (!m->lossy || m->max_end < m->next_sweep) return;
  m->next_sweep = m->max_end + JOIN_WAIT_NS;
  m->stranded_given_up += ct_calls_sweep(&m->calls, detail_stranded, &m->max_end);
}

static void on_detail(model *m, const ct_record *rec, enum ct_detail kind) {
  uint64_t corr = rec->u.v[0];
  if (!corr) return;
  sweep_stranded_details(m);
  ct_call *e = ct_calls_get(&m->calls, corr);
  if (!e) {
    m->oom = 1;
    return;
  }
  if (!e->has_call) e->detail_at = m->max_end;
  e->detail = (uint8_t)kind;
  memset(e->d, 0, sizeof e->d);
  unsigned n = rec->nfields > 1 ? rec->nfields - 1u : 0;
  if (n > CALL_DETAIL_FIELDS) n = CALL_DETAIL_FIELDS;
  memcpy(e->d, rec->u.v + 1, n * sizeof(uint64_t));
}

static void on_gpu(model *m, const ct_record *rec) {
  if (rec->u.gpu.corr) {
    ct_call *e = ct_calls_get(&m->calls, rec->u.gpu.corr);
    if (e) e->gpu_seen = 1;
    else m->oom = 1;
  }
  add_pending(m, CT_KIND_GPU, rec, rec->u.gpu.end_ns, 0);
}

/* Joins a NUL-separated argument list with spaces (a fresh copy). */
static char *join_args(const ct_reader *r, uint64_t id) {
  size_t len = 0;
  const char *s = id ? ct_reader_string(r, id, &len) : NULL;
  char *out = malloc(len + 1);
  if (!out) return NULL;
  for (size_t i = 0; i < len; i++) out[i] = s[i] ? s[i] : ' ';
  while (len && out[len - 1] == ' ') len--;
  out[len] = 0;
  return out;
}

static void handle(model *m, ct_record *rec) {
  switch (rec->kind) {
  case CT_KIND_STRING:
    if (rec->u.string.id < m->api_cache_n) m->api_cache[rec->u.string.id] = 0;
    return;
  case CT_KIND_PROCESS:
    m->proc.rec = rec->u.process;
    m->proc.host = str_or_empty(m, rec->u.process.host);
    m->proc.exe = str_or_empty(m, rec->u.process.exe);
    free(m->cmdline);
    m->cmdline = join_args(m->r, rec->u.process.cmdline);
    m->proc.cmdline = m->cmdline ? m->cmdline : "";
    return;
  case CT_KIND_DEVICE:
    if (m->proc.ndevices < 16) {
      unsigned i = m->proc.ndevices++;
      m->proc.devices[i] = rec->u.device;
      m->proc.device_names[i] = str_or_empty(m, rec->u.device.name);
      m->proc.device_pci[i] = str_or_empty(m, rec->u.device.pci_bus_id);
      m->proc.device_uuid[i] = str_or_empty(m, rec->u.device.uuid);
    }
    return;
  case CT_KIND_JOB: /* right after PROCESS: known by on_process */
    m->proc.job = rec->u.job;
    m->proc.job_source = str_or_empty(m, rec->u.job.source);
    m->proc.job_id = str_or_empty(m, rec->u.job.job_id);
    m->proc.visible_devices = str_or_empty(m, rec->u.job.visible_devices);
    return;
  default:
    break;
  }
  send_process(m);
  filter_start(m, 0); /* the pause before --from comes before any event */
  switch (rec->kind) {
  case CT_KIND_API: on_call(m, rec); break;
  case CT_KIND_TRACER: add_pending(m, CT_KIND_TRACER, rec, rec->u.tracer.end_ns, 0); break;
  case CT_KIND_LAUNCH: on_detail(m, rec, CT_DETAIL_LAUNCH); break;
  case CT_KIND_MEMOP: on_detail(m, rec, CT_DETAIL_MEMOP); break;
  case CT_KIND_GEMM: on_detail(m, rec, CT_DETAIL_GEMM); break;
  case CT_KIND_GRAPH_LAUNCH: on_detail(m, rec, CT_DETAIL_GRAPH); break;
  case CT_KIND_ALLOC: on_detail(m, rec, CT_DETAIL_ALLOC); break;
  case CT_KIND_POLL: on_detail(m, rec, CT_DETAIL_POLL); break;
  case CT_KIND_GRAPH:
    if (m->ops->on_graph) m->ops->on_graph(m->user, &m->proc, &rec->u.graph);
    break;
  case CT_KIND_GRAPH_KERNEL:
    if (m->ops->on_graph_kernel)
      m->ops->on_graph_kernel(m->user, &m->proc, &rec->u.graph_kernel,
                              str_or_empty(m, rec->u.graph_kernel.name));
    break;
  case CT_KIND_GPU: on_gpu(m, rec); break;
  case CT_KIND_STREAM:
    if (m->ops->on_stream) m->ops->on_stream(m->user, &m->proc, &rec->u.stream);
    break;
  case CT_KIND_THREAD:
    if (m->ops->on_thread)
      m->ops->on_thread(m->user, &m->proc, &rec->u.thread, str(m, rec->u.thread.name));
    break;
  case CT_KIND_RANGE:
    if (filtered_out(m, rec->u.range.begin_ns, rec->u.range.end_ns)) break;
    if (m->ops->on_range)
      m->ops->on_range(m->user, &m->proc, &rec->u.range, str(m, rec->u.range.name));
    break;
  case CT_KIND_DROP:
    m->st->dropped += rec->u.drop.count;
    m->lossy = 1;
    if (m->ops->on_drop) m->ops->on_drop(m->user, &m->proc, &rec->u.drop);
    break;
  case CT_KIND_CLOCK:
    if (m->ops->on_clock) m->ops->on_clock(m->user, &m->proc, &rec->u.clock);
    break;
  case CT_KIND_STACK:
    ct_ready_stack_read(&m->ready, rec->u.stack.id, rec->u.stack.parent);
    if (m->ops->on_stack) m->ops->on_stack(m->user, &m->proc, &rec->u.stack);
    break;
  case CT_KIND_MODULE:
    if (m->ops->on_module)
      m->ops->on_module(m->user, &m->proc, &rec->u.module, str_or_empty(m, rec->u.module.path),
                        str_or_empty(m, rec->u.module.build_id));
    break;
  case CT_KIND_PYCODE:
    if (m->ops->on_pycode)
      m->ops->on_pycode(m->user, &m->proc, &rec->u.pycode, str_or_empty(m, rec->u.pycode.file),
                        str_or_empty(m, rec->u.pycode.qualname));
    break;
  case CT_KIND_PAUSE:
    /* by its begin alone, so that both records of a pause are delivered or neither */
    if (filtered_out(m, rec->u.pause.begin_ns, UINT64_MAX)) break;
    if (m->ops->on_pause)
      m->ops->on_pause(m->user, &m->proc, &rec->u.pause, str_or_empty(m, rec->u.pause.why));
    break;
  case CT_KIND_KERNEL_ATTR:
    ct_ready_attr_settle(&m->ready, rec->u.kernel_attr.id);
    if (m->ops->on_kernel_attr)
      m->ops->on_kernel_attr(m->user, &m->proc, &rec->u.kernel_attr,
                             str_or_empty(m, rec->u.kernel_attr.name));
    break;
  case CT_KIND_OCCUPANCY: {
    const struct ct_occupancy *o = &rec->u.occupancy;
    ct_ready_shape_settle(&m->ready,
                          &(ct_shape){o->attr, o->device, o->block_threads, o->dyn_smem});
    if (m->ops->on_occupancy) m->ops->on_occupancy(m->user, &m->proc, &rec->u.occupancy);
    break;
  }
  case CT_KIND_END: m->st->has_end = 1; break;
  default: break;
  }
}

/* CUTRACE_JOIN_HOLD when set to a positive number, else CT_MODEL_JOIN_HOLD. */
static uint64_t join_hold_default(void) {
  const char *env = getenv("CUTRACE_JOIN_HOLD");
  char *end;
  unsigned long long v = env ? strtoull(env, &end, 10) : 0;
  return v && !*end ? v : CT_MODEL_JOIN_HOLD;
}

int ct_model_read(const char *path, const ct_model_options *opts, const ct_model_ops *ops,
                  void *user, ct_model_stats *st) {
  static const ct_model_ops no_ops;
  ct_model_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  st->first_ns = UINT64_MAX;
  model *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  m->r = ct_reader_open(path, st->message, sizeof st->message);
  if (!m->r) {
    free(m);
    st->first_ns = 0;
    return -1;
  }
  m->ops = ops ? ops : &no_ops;
  m->user = user;
  m->st = st;
  m->blocked_key = UINT64_MAX;
  m->opt = opts ? *opts : default_options;
  m->adaptive = !m->opt.window_ns;
  m->window = m->adaptive                       ? START_WINDOW_NS
              : m->opt.window_ns > LATE_WINDOW_NS ? LATE_WINDOW_NS
                                                  : m->opt.window_ns;
  m->join_hold = m->opt.join_hold ? m->opt.join_hold : join_hold_default();
  st->join_hold = m->join_hold;
  m->filtering = m->opt.from.set || m->opt.to.set;
  m->proc.path = path;
  m->proc.host = m->proc.exe = m->proc.cmdline = "";
  m->proc.job_source = m->proc.job_id = m->proc.visible_devices = "";
  ct_record rec;
  uint64_t n = 0;
  while (ct_reader_next(m->r, &rec)) {
    handle(m, &rec);
    if ((++n & 0x3ff) == 0 && !m->lossy) m->lossy = ct_reader_status(m->r)->damaged;
    if ((n & 0xfffff) == 0 && ct_model_progress_hook) ct_model_progress_hook(path, n);
  }
  release(m, 1);
  send_process(m);
  const ct_read_status *rs = ct_reader_status(m->r);
  st->records = rs->records;
  st->damaged = rs->damaged;
  st->major = rs->major;
  st->minor = rs->minor;
  if (rs->damaged)
    snprintf(st->message, sizeof st->message, "%s; %llu record%s read before it", rs->message,
             (unsigned long long)rs->records, rs->records == 1 ? "" : "s");
  else if (m->oom)
    snprintf(st->message, sizeof st->message, "out of memory: some events were not joined");
  if (st->first_ns == UINT64_MAX) st->first_ns = 0;
  int rc = rs->damaged || m->oom ? 1 : 0;
  for (int i = 0; i < NRUNS; i++) free(m->runs[i].a);
  free(m->h.a);
  st->calls_given_up = m->waits.given_up + m->stranded_given_up;
  st->calls_peak = m->calls.peak;
  ct_calls_free(&m->calls);
  ct_waits_free(&m->waits);
  free(m->api_cache);
  ct_ready_free(&m->ready);
  free(m->cmdline);
  ct_reader_close(m->r);
  free(m);
  return rc;
}

/* ---- names ----------------------------------------------------------------------- */

/* The C++ ABI's demangler (libstdc++ / libsupc++); declared here to keep this file C. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *ct_demangle(const char *name, char *buf, unsigned long len) {
  if (!name || name[0] != '_' || name[1] != 'Z' || !buf || !len) return name;
  int status = 0;
  char *out = __cxa_demangle(name, NULL, NULL, &status);
  if (!out || status != 0) {
    free(out);
    return name;
  }
  snprintf(buf, len, "%s", out);
  free(out);
  return buf;
}

const char *ct_memop_label(uint64_t kind) {
  switch (kind) {
  case CT_MEMOP_H2D: return "memcpy HtoD";
  case CT_MEMOP_D2H: return "memcpy DtoH";
  case CT_MEMOP_D2D: return "memcpy DtoD";
  case CT_MEMOP_H2H: return "memcpy HtoH";
  case CT_MEMOP_MEMSET: return "memset";
  case CT_MEMOP_P2P: return "memcpy PtoP";
  case CT_MEMOP_PREFETCH: return "prefetch";
  case CT_MEMOP_MIXED: return "memcpy mixed";
  case CT_MEMOP_DISCARD: return "discard";
  case CT_MEMOP_STREAM_OPS: return "stream memory operations";
  case CT_MEMOP_EXT_WAIT: return "external semaphore wait";
  case CT_MEMOP_EXT_SIGNAL: return "external semaphore signal";
  case CT_MEMOP_DECOMPRESS: return "decompression";
  default: return "memcpy";
  }
}
