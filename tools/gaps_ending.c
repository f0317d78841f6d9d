/*
 * GPU idle-time analysis: the call that ended each kept gap, with the innermost NVTX
 * range open on its thread when it began and its symbolised call stack
 * (gaps_internal.h, docs/gaps.md).
 *
 * The call: the GPU operation's own call, or, for an operation launched inside a
 * library call (depth > 0), the outermost call around it (its call_parent), found in
 * the thread's ring of recent calls or, when it ends later, when it arrives.
 *
 * The range: RANGE records come when a range closes (inner ones first), in file
 * order, while gaps are classified a reorder window later. So each thread keeps its
 * last RING_RANGES closed push/pop ranges (searched when a gap is kept), and every
 * RANGE record is also offered to the kept gaps of its thread (a range that closes
 * after the gap was kept). The innermost range is the one that began last among
 * those open at the call's start. Memory: the rings and the kept gaps only.
 *
 * The stack: STACK and MODULE records are kept per file (stacks.c, memory per unique
 * node) and the kept gaps' stacks are symbolised when the file is done.
 */
#include "gaps_internal.h"
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

/* Offers range [b, e] named name to a call on its thread: kept when it is open at the
 * call's start and more inner than the one the call has. */
static void offer_range(ct_gap_call *c, uint64_t b, uint64_t e, const char *name) {
  if (b > c->begin_ns || e < c->begin_ns) return;
  if (c->range && b <= c->range_begin_ns) return;
  c->range = name;
  c->range_begin_ns = b;
  c->range_end_ns = e;
}

/* The thread's closed ranges seen so far, offered to c. */
static void ranges_so_far(fstate *f, ct_gap_call *c) {
  const thstate *th = ct_gaps_find_thread(f, c->tid);
  if (!th || !th->ranges) return;
  for (unsigned i = 0; i < th->ranges_n; i++) {
    const range_entry *r = &th->ranges[(th->ranges_head + i) % RING_RANGES];
    offer_range(c, r->begin, r->end, r->name);
  }
}

/* The outermost call with correlation id corr in the thread's ring of calls, or NULL. */
const span_ring_entry *ct_gaps_find_outer_call(fstate *f, uint64_t tid, uint64_t corr,
                                               uint64_t inner_end) {
  const thstate *th = ct_gaps_find_thread(f, tid);
  if (!th) return NULL;
  const ring *r = &th->calls;
  for (unsigned i = 0; i < r->n; i++) {
    const span_ring_entry *e = ring_back(r, i);
    if (e->corr == corr && !e->is_tracer) return e;
    if (!r->disorder && e->end + r->max_dur < inner_end) break; /* older ones end before it */
  }
  return NULL;
}

void ct_gaps_ending_init(fstate *f, ct_gap_detail *d, const opinfo *op) {
  ct_gap_call *c = &d->ending;
  memset(c, 0, sizeof *c);
  if (!op->has_call) return;
  c->known = 1;
  c->tid = op->tid;
  c->api = op->api;
  c->corr = op->corr;
  c->begin_ns = op->call_begin;
  c->stack = op->stack;
  if (op->depth && op->parent) {
    c->nested = 1;
    const span_ring_entry *e = ct_gaps_find_outer_call(f, op->tid, op->parent, op->call_end);
    if (e) {
      c->api = e->name;
      c->corr = e->corr;
      c->begin_ns = e->begin;
      c->stack = e->stack ? e->stack : op->stack;
    } else { /* it ends later: completed by ct_gaps_ending_on_span */
      c->parent = op->parent;
      f->pending_parents++;
    }
  }
  ranges_so_far(f, c);
  if (c->begin_ns > f->kept_call_max) f->kept_call_max = c->begin_ns;
}

/* Calls fn on the ending call of every kept gap of file f. */
static void each_kept(fstate *f, void (*fn)(fstate *f, ct_gap_call *c, const void *arg),
                      const void *arg) {
  struct ct_gaps *g = f->g;
  for (unsigned i = 0; g->top && i < g->ntop; i++)
    if (g->top[i].proc == f->proc && g->top[i].ending.known) fn(f, &g->top[i].ending, arg);
  for (unsigned i = 0; g->top_s && i < g->ntop_s; i++)
    if (g->top_s[i].proc == f->proc && g->top_s[i].ending.known) fn(f, &g->top_s[i].ending, arg);
}

typedef struct span_arg {
  const ct_span *s;
  const char *name;
  unsigned waiting;
} span_arg;

static void complete_parent(fstate *f, ct_gap_call *c, const void *arg) {
  span_arg *a = (span_arg *)arg;
  if (!c->parent) return;
  if (c->parent != a->s->corr || c->tid != a->s->tid) {
    a->waiting++;
    return;
  }
  c->parent = 0;
  c->api = a->name;
  c->corr = a->s->corr;
  c->begin_ns = a->s->begin_ns;
  if (a->s->stack) c->stack = a->s->stack;
  c->range = NULL; /* the outermost call began earlier: its ranges may differ */
  ranges_so_far(f, c);
  if (c->begin_ns > f->kept_call_max) f->kept_call_max = c->begin_ns;
}

void ct_gaps_ending_on_span(fstate *f, const ct_span *s, const char *name) {
  span_arg a = {s, name, 0};
  each_kept(f, complete_parent, &a);
  f->pending_parents = a.waiting; /* evicted gaps stop waiting */
}

typedef struct range_arg {
  const struct ct_range *r;
  const char *name; /* interned */
} range_arg;

static void range_to_call(fstate *f, ct_gap_call *c, const void *arg) {
  (void)f;
  const range_arg *a = arg;
  if (c->tid == a->r->tid) offer_range(c, a->r->begin_ns, a->r->end_ns, a->name);
}

void ct_gaps_ending_on_range(fstate *f, const struct ct_range *r, const char *name) {
  if (!f->g->o.top || (r->flags & CT_RANGE_STARTEND) || r->end_ns < r->begin_ns) return;
  thstate *th = ct_gaps_get_thread(f, r->tid);
  if (!th) return;
  if (!th->ranges && !(th->ranges = malloc(RING_RANGES * sizeof *th->ranges))) {
    f->oom = 1;
    return;
  }
  unsigned k = ring_next_slot(&th->ranges_head, &th->ranges_n, RING_RANGES);
  range_arg a = {r, ct_gaps_intern(f->g, name && *name ? name : "(unnamed range)")};
  th->ranges[k] = (range_entry){r->begin_ns, r->end_ns, a.name};
  if (r->begin_ns <= f->kept_call_max) each_kept(f, range_to_call, &a);
}

/* Symbolises c's stack into frames owned by the analysis. */
static void symbolise(fstate *f, ct_gap_call *c, const void *arg) {
  (void)arg;
  if (!c->stack || c->frames || !f->stacks) return;
  const ct_frame *fr[CT_GAP_MAX_FRAMES];
  unsigned site, n = ct_stacks_resolve(f->stacks, c->stack, fr, CT_GAP_MAX_FRAMES, &site);
  if (!n) return;
  struct ct_gaps *g = f->g;
  ct_gap_frame *frames = malloc(n * sizeof *frames);
  ct_gap_frame **ns = realloc(g->stacks, (g->nstacks + 1) * sizeof *ns);
  if (!frames || !ns) {
    free(frames);
    if (ns) g->stacks = ns;
    f->oom = 1;
    return;
  }
  g->stacks = ns;
  g->stacks[g->nstacks++] = frames;
  for (unsigned i = 0; i < n; i++)
    frames[i] = (ct_gap_frame){ct_gaps_intern(g, fr[i]->function), ct_gaps_intern(g, fr[i]->file),
                               ct_gaps_intern(g, fr[i]->module), fr[i]->line, fr[i]->note};
  c->frames = frames;
  c->nframes = n;
  c->site = site;
  c->callsite = ct_gaps_site_text(f, c->stack);
}

void ct_gaps_ending_finish(fstate *f) {
  each_kept(f, symbolise, NULL);
  f->pending_parents = 0;
}
