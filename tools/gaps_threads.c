/*
 * GPU idle-time analysis: what each CPU thread did during a gap, and the heaps of
 * the largest device and stream gaps (gaps_internal.h).
 */
#include "gaps_internal.h"

#include <stdlib.h>
#include <string.h>

/* What thread th did during [a, b]. */
static void snapshot_thread(const thstate *th, uint64_t a, uint64_t b, ct_gap_thread *gt) {
  memset(gt, 0, sizeof *gt);
  gt->tid = th->tid;
  gt->name = th->name;
  gt->tracer_thread = is_tracer_thread(th);
  const ring *r = &th->calls;
  /* tracer spans nest (a poll inside a flush): their time is the union of their parts
   * within [a, b], merged in the ring's order (newest end first); so is the time in
   * calls: the records of targets a thread polls in turn overlap (each spans its own
   * first poll to its answer, preload/hooks/poll.c), and summed they would count the
   * thread's time in them once per target (more than the gap) */
  uint64_t tb = 0, te = 0, cb_ = 0, ce_ = 0;
  unsigned i = ring_skip_after(r, b);
  for (; i < r->n; i++) {
    const span_ring_entry *e = ring_back(r, i);
    if (e->end <= a) {
      if (!r->disorder) break; /* older entries end before a too */
      continue;
    }
    uint64_t ov = overlap(e->begin, e->end, a, b);
    if (!ov) continue;
    if (e->is_tracer) {
      uint64_t cb = e->begin > a ? e->begin : a, ce = e->end < b ? e->end : b;
      if (te > tb && ce >= tb && cb <= te) { /* touches the current block: extend it */
        if (cb < tb) tb = cb;
        if (ce > te) te = ce;
      } else {
        gt->tracer_ns += te - tb;
        tb = cb;
        te = ce;
      }
    } else {
      gt->ncalls++;
      union_add(&cb_, &ce_, &gt->in_cuda_ns, max_u64(e->begin, a), min_u64(e->end, b));
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
  gt->tracer_ns += te - tb;
  union_add(&cb_, &ce_, &gt->in_cuda_ns, 0, 0);
  if (gt->in_cuda_ns > b - a) gt->in_cuda_ns = b - a; /* calls met out of end order */
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

/* For a host_wait gap [a, b] ended by op: the launching thread's intercepted call
 * (not a launch, allocation or blocking call, not op's own) with the most time in the
 * gap, when that is at least half the gap: *ns its time there. NULL otherwise. */
const char *ct_gaps_host_wait_inside(const thstate *th, uint64_t a, uint64_t b, const opinfo *op,
                                     uint64_t *ns) {
  const char *best = NULL;
  *ns = 0;
  for (unsigned i = th ? ring_skip_after(&th->calls, b) : 0; th && i < th->calls.n; i++) {
    const span_ring_entry *e = ring_back(&th->calls, i);
    if (e->end <= a) {
      if (!th->calls.disorder) break; /* older entries end before a too */
      continue;
    }
    if (e->is_tracer || e->is_launch || e->is_alloc || e->is_blocking ||
        (e->begin == op->call_begin && e->end == op->call_end))
      continue;
    uint64_t ov = overlap(e->begin, e->end, a, b);
    if (ov > *ns) {
      *ns = ov;
      best = e->name;
    }
  }
  if (2 * *ns < b - a) {
    *ns = 0;
    return NULL;
  }
  return best;
}

/* Keeps the gap among the largest when it is one of them. */
void ct_gaps_top_consider(fstate *f, const tracker *t, uint64_t a, uint64_t b,
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
  ct_gaps_ending_init(f, &d, op);
  if (!is_stream) {
    const thstate *lt = op->has_call ? ct_gaps_find_thread(f, op->tid) : NULL;
    if (lt) {
      snapshot_thread(lt, a, b, &d.threads[d.nthreads++]);
      d.threads[0].launching = 1;
      if (cause == CT_GAP_HOST_WAIT) d.inside_call = ct_gaps_host_wait_inside(lt, a, b, op, &d.inside_ns);
    }
    for (unsigned i = 0; i < f->nthreads; i++) {
      const thstate *th = f->threads[i];
      if (th == lt || th->last_end < a) continue;
      ct_gap_thread gt;
      snapshot_thread(th, a, b, &gt);
      if (gt.tracer_thread && !gt.tracer_ns) continue; /* a tracer thread, idle then */
      if (d.nthreads == CT_GAP_MAX_THREADS) d.threads_omitted++;
      else d.threads[d.nthreads++] = gt;
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

static int cmp_detail_desc(const void *x, const void *y) {
  const ct_gap_detail *a = x, *b = y;
  return detail_less(a, b) ? 1 : detail_less(b, a) ? -1 : 0;
}

/* Names and filters the threads of one kept gap of file f (see ct_gaps_name_threads). */
static void name_gap_threads(fstate *f, ct_gap_detail *d) {
  if (d->proc != f->proc) return;
  unsigned kept = 0;
  for (unsigned k = 0; k < d->nthreads; k++) {
    ct_gap_thread *t = &d->threads[k];
    const thstate *th = ct_gaps_find_thread(f, t->tid);
    if (th) {
      t->name = th->name;
      t->tracer_thread = is_tracer_thread(th);
    }
    if (t->tracer_thread && !t->tracer_ns && !t->launching) continue;
    d->threads[kept++] = *t;
  }
  d->nthreads = kept;
}

void ct_gaps_name_threads(fstate *f) {
  struct ct_gaps *g = f->g;
  for (unsigned i = 0; g->top && i < g->ntop; i++) name_gap_threads(f, &g->top[i]);
}

/* Rebuilds the longest-first copies of the top-N heaps. */
void ct_gaps_sort_tops(struct ct_gaps *g) {
  if (g->sorted) memcpy(g->sorted, g->top, g->ntop * sizeof *g->top);
  if (g->sorted_s) memcpy(g->sorted_s, g->top_s, g->ntop_s * sizeof *g->top_s);
  if (g->sorted) qsort(g->sorted, g->ntop, sizeof *g->sorted, cmp_detail_desc);
  if (g->sorted_s) qsort(g->sorted_s, g->ntop_s, sizeof *g->sorted_s, cmp_detail_desc);
}
