/*
 * GPU idle-time analysis: every device gap grouped by what ended it (its cause, the
 * outermost call around the operation that ended it, and that call's call site), and
 * the "slow launching call" finding: the calls that held the launching thread while
 * the device sat idle (docs/gaps.md, "Idle by what ended it" and "slow_launch_call").
 *
 * Per device gap the ending call is the operation's own call or, for a kernel launched
 * inside a library call (depth > 0), the outermost call around it, found in the
 * thread's ring of recent calls or, when it ends later, when it arrives (a bounded list
 * of gaps waiting for it). Its time inside the gap is the overlap of that call with the
 * gap. Groups are keyed by (device, cause, call, STACK node) while reading and merged
 * by the call site's text at the end of the file; at most MAX_GROUPS per file, the
 * rest in one "(more ending calls)" group per device and cause. Medians come from
 * stats.h's duration summaries (a log histogram: within 3.1%); the first (earliest)
 * call's time is kept apart from the others', for the warm-up test.
 *
 * For host_wait gaps the launching thread's time outside CUDA calls inside the gap is
 * kept too (the gap less its calls' time there): the "host-bound launch" finding, the
 * CPU busy with its own work while the GPU waited for the launch at one call site.
 *
 * A gap can begin while a call that queued work is still running after its launch (a
 * library call that launches its kernel, then goes on with host work or cleanup): that
 * call, on the launching thread, running at the gap's start and not the ending call, is
 * the gap's leading call; its time inside the gap is kept in LEAD groups (by call and
 * stack, not listed as rows) and added to that call's slow-launching-call totals.
 */
#include "gaps_internal.h"
#include "stacks.h"
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 1024
#define PENDING_ENDS 512
#define PEND_BUCKETS 1024 /* the waiting gaps by (thread, outermost call): a power of two */
#define INDEX_SLOTS 4096 /* the groups' hash index: used while at most half full */
#define ANY_CAUSE CT_GAP_NCAUSES /* a group over every cause (at the end): a call's totals */
#define LEAD (CT_GAP_NCAUSES + 1) /* a call running when gaps began, after its own launch */
#define MORE_CALLS "(more ending calls)"

/* ---- groups -------------------------------------------------------------------------- */

typedef struct ender_group {
  uint64_t device;
  unsigned cause;          /* enum ct_gap_cause, or ANY_CAUSE */
  const char *api;         /* interned; NULL: the call is not in the trace */
  int nested;
  uint64_t stack;          /* while reading; merged by site at the end */
  const char *site;        /* interned, at the end */
  uint64_t count, idle_ns, incall_ns, first_a, last_b;
  uint64_t first_incall;   /* the earliest gap's ending call's time inside it */
  uint64_t outside_ns;     /* host_wait: the launching thread's time outside CUDA calls */
  uint64_t tid;            /* the first gap's launching thread */
  uint64_t tail_ns, tail_count; /* as a leading call: its time inside gaps, those gaps */
  uint64_t lead_first, lead_last; /* ... the first such gap's start, the last one's end */
  uint64_t held_alloc_ns, held_lsync_ns; /* its time inside gaps of cause alloc and inside
                                            the gaps a little sync's return opened
                                            (ending them or leading them) */
  uint64_t held_launch_ns; /* its gaps' ending launch calls' time inside them, for kernels
                              a launch-bound run counts (opinfo.short_kernel) */
  uint64_t first_alloc, first_lsync, first_launch; /* the first call's parts of the three
                                                      above (a first_call finding's overlap) */
  int other_threads;       /* gaps launched by another thread than tid */
  ct_dur_stats idle;       /* the gaps */
  ct_dur_stats rest;       /* the other gaps' ending calls' time inside them */
  int merged;              /* folded into another group at the end */
} ender_group;

typedef struct pending_end {
  uint64_t device, a, b, tid, parent, stack, call_begin, call_end, outside;
  uint64_t seq;     /* arrival order: the oldest of gaps that began at once came first */
  unsigned cause;
  int lsync;        /* a little sync's return opened it (fstate.ls_state LS_YES) */
  uint64_t launch;  /* the launch call's time inside it when a launch-bound run counts its kernel */
  unsigned next, prev; /* the next and previous slot + 1 in its thread's bucket, 0: none */
  unsigned heap_at; /* its place in the heap by beginning */
  const char *api;
} pending_end;

struct enders_state {
  ender_group *grp;
  unsigned n, cap, last[LEAD + 1];
  unsigned index[INDEX_SLOTS]; /* group + 1 by hash of its key, 0: empty */
  const char *more;            /* MORE_CALLS, interned */
  /* gaps waiting for their outermost call: slots found by thread through buckets (a
   * thread's waiting gaps are claimed or settled by its own outermost calls), and by beginning through a binary min-heap (the one to give up on when the
   * list is full); free slots chained through next */
  unsigned npend, free_slot; /* free_slot: first free slot + 1, 0: the next unused one */
  unsigned bucket[PEND_BUCKETS]; /* first slot + 1 */
  uint64_t seq;
  /* not cleared when made (54 KiB: ENDERS_CLEARED): slots are taken in order, the heap
   * read only as far as npend */
  pending_end pend[PENDING_ENDS];
  unsigned heap[PENDING_ENDS];   /* slots, the earliest gap first */
};

/* The part of enders_state cleared when it is made. */
#define ENDERS_CLEARED offsetof(struct enders_state, pend)

static unsigned key_slot(uint64_t device, unsigned cause, const char *api, uint64_t stack) {
  uint64_t h = (device * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uintptr_t)api * 0xbf58476d1ce4e5b9ull) ^
               (stack * 0x94d049bb133111ebull) ^ cause;
  h ^= h >> 31;
  return (unsigned)(h * 0x9e3779b97f4a7c15ull >> 52) & (INDEX_SLOTS - 1);
}

static int same_key(const ender_group *e, uint64_t device, unsigned cause, const char *api,
                    uint64_t stack) {
  return e->device == device && e->cause == cause && e->api == api && e->stack == stack;
}

/* The group of (device, cause, api, stack), created when new; NULL when out of memory. */
static ender_group *group_for(fstate *f, uint64_t device, unsigned cause, const char *api, int nested,
                              uint64_t stack) {
  struct enders_state *s = f->enders;
  unsigned h = s->last[cause];
  if (h < s->n && same_key(&s->grp[h], device, cause, api, stack)) return &s->grp[h];
  int indexed = s->n < INDEX_SLOTS / 2;
  unsigned slot = key_slot(device, cause, api, stack);
  if (indexed) {
    for (; s->index[slot]; slot = (slot + 1) & (INDEX_SLOTS - 1))
      if (same_key(&s->grp[s->index[slot] - 1], device, cause, api, stack)) {
        s->last[cause] = s->index[slot] - 1;
        return &s->grp[s->last[cause]];
      }
  } else { /* more groups than the index holds (hundreds of devices): look through them */
    for (unsigned i = 0; i < s->n; i++)
      if (same_key(&s->grp[i], device, cause, api, stack)) {
        s->last[cause] = i;
        return &s->grp[i];
      }
  }
  if (s->n >= MAX_GROUPS && api != s->more) {
    if (!s->more) s->more = ct_gaps_intern(f->g, MORE_CALLS);
    return group_for(f, device, cause, s->more, 0, 0);
  }
  if (s->n == s->cap) {
    unsigned ncap = s->cap ? s->cap * 2 : 16;
    ender_group *ng = realloc(s->grp, ncap * sizeof *ng);
    if (!ng) {
      f->oom = 1;
      return NULL;
    }
    s->grp = ng;
    s->cap = ncap;
  }
  ender_group *e = &s->grp[s->n];
  memset(e, 0, sizeof *e);
  e->device = device;
  e->cause = cause;
  e->api = api;
  e->nested = nested;
  e->stack = stack;
  if (indexed) s->index[slot] = s->n + 1; /* the empty slot the probe ended on */
  s->last[cause] = s->n++;
  return e;
}

/* A call's time inside one gap it ended, and the parts of it that other findings claim
 * (held_alloc_ns, held_lsync_ns, held_launch_ns of a group). */
typedef struct call_held {
  uint64_t incall, alloc, lsync, launch;
} call_held;

/* Makes gap a's call (h) e's first call when it is earlier, the other one going to the rest. */
static void take_first(ender_group *e, uint64_t a, call_held h) {
  if (e->count && a >= e->first_a) {
    ct_dur_add(&e->rest, h.incall);
    return;
  }
  if (e->count) ct_dur_add(&e->rest, e->first_incall);
  e->first_a = a;
  e->first_incall = h.incall;
  e->first_alloc = h.alloc;
  e->first_lsync = h.lsync;
  e->first_launch = h.launch;
}

static void group_add(ender_group *e, uint64_t a, uint64_t b, uint64_t incall, uint64_t outside,
                      uint64_t tid, int lsync, uint64_t launch) {
  if (!e) return;
  e->held_launch_ns += launch;
  if (e->cause == CT_GAP_ALLOC) e->held_alloc_ns += incall;
  if (lsync) e->held_lsync_ns += incall;
  if (!e->count) e->tid = tid;
  else if (e->tid != tid) e->other_threads = 1;
  e->outside_ns += outside;
  take_first(e, a, (call_held){incall, e->cause == CT_GAP_ALLOC ? incall : 0, lsync ? incall : 0, launch});
  e->count++;
  e->idle_ns += b - a;
  e->incall_ns += incall;
  e->last_b = max_u64(e->last_b, b);
  ct_dur_add(&e->idle, b - a);
}

/* Counts gap [a, b] of cause c ended by the call api (with its stack) that spent
 * [call_begin, call_end] on launching thread tid, which spent outside of the gap outside
 * CUDA calls; lsync: a little sync's return opened the gap. Returns the group + 1 (0:
 * none), *incall the call's time inside the gap. */
static unsigned count_gap(fstate *f, uint64_t device, unsigned c, uint64_t a, uint64_t b, const char *api,
                          int nested, uint64_t stack, uint64_t call_begin, uint64_t call_end,
                          uint64_t tid, uint64_t outside, int lsync, uint64_t launch, uint64_t *incall) {
  *incall = api ? overlap(call_begin, call_end, a, b) : 0;
  ender_group *e = group_for(f, device, c, api, nested, stack);
  group_add(e, a, b, *incall, outside, tid, lsync, launch);
  return e ? (unsigned)(e - f->enders->grp) + 1 : 0;
}

/* ---- gaps waiting for their outermost call ------------------------------------------- */

static unsigned pend_bucket(uint64_t tid) {
  uint64_t h = tid * 0x9e3779b97f4a7c15ull;
  h ^= h >> 31;
  return (unsigned)(h * 0x94d049bb133111ebull >> 54) & (PEND_BUCKETS - 1);
}

static int pend_before(const struct enders_state *s, unsigned x, unsigned y) {
  const pending_end *p = &s->pend[x], *q = &s->pend[y];
  return p->a != q->a ? p->a < q->a : p->seq < q->seq;
}

static void heap_set(struct enders_state *s, unsigned at, unsigned slot) {
  s->heap[at] = slot;
  s->pend[slot].heap_at = at;
}

/* Moves the heap's entry at `at` up or down to its place. */
static void heap_fix(struct enders_state *s, unsigned at) {
  unsigned slot = s->heap[at];
  while (at > 0 && pend_before(s, slot, s->heap[(at - 1) / 2])) {
    heap_set(s, at, s->heap[(at - 1) / 2]);
    at = (at - 1) / 2;
  }
  for (;;) {
    unsigned c = 2 * at + 1;
    if (c >= s->npend) break;
    if (c + 1 < s->npend && pend_before(s, s->heap[c + 1], s->heap[c])) c++;
    if (!pend_before(s, s->heap[c], slot)) break;
    heap_set(s, at, s->heap[c]);
    at = c;
  }
  heap_set(s, at, slot);
}

/* Adds a waiting gap (the list not full). */
static void pend_add(struct enders_state *s, const pending_end *p) {
  unsigned slot = s->free_slot ? s->free_slot - 1 : s->npend;
  if (s->free_slot) s->free_slot = s->pend[slot].next;
  s->pend[slot] = *p;
  s->pend[slot].seq = s->seq++;
  unsigned b = pend_bucket(p->tid);
  s->pend[slot].next = s->bucket[b];
  s->pend[slot].prev = 0;
  if (s->bucket[b]) s->pend[s->bucket[b] - 1].prev = slot + 1;
  s->bucket[b] = slot + 1;
  heap_set(s, s->npend++, slot);
  heap_fix(s, s->npend - 1);
}

/* Takes waiting gap slot out of its bucket and the heap (its data stays readable until
 * the next pend_add). */
static void pend_remove(struct enders_state *s, unsigned slot) {
  pending_end *p = &s->pend[slot];
  if (p->prev) s->pend[p->prev - 1].next = p->next;
  else s->bucket[pend_bucket(p->tid)] = p->next;
  if (p->next) s->pend[p->next - 1].prev = p->prev;
  unsigned at = p->heap_at;
  s->npend--;
  if (at < s->npend) {
    heap_set(s, at, s->heap[s->npend]);
    heap_fix(s, at);
  }
  p->next = s->free_slot;
  s->free_slot = slot + 1;
}

/* Counts a waiting gap with its own call (its outermost one never came). */
static void count_own_call(fstate *f, const pending_end *p) {
  uint64_t incall;
  count_gap(f, p->device, p->cause, p->a, p->b, p->api, 1, p->stack, p->call_begin, p->call_end, p->tid,
            p->outside, p->lsync, p->launch, &incall);
}

/* Counts the waiting gap that began first with its own call, removes it. */
static void flush_oldest(fstate *f) {
  struct enders_state *s = f->enders;
  unsigned slot = s->heap[0];
  pend_remove(s, slot);
  count_own_call(f, &s->pend[slot]);
}

/* Counts the leading call of gap [a, b] (cause c) ended by op: the launching thread's
 * outermost call running at a (the GPU drained while it held the thread), other than
 * the ending call (corr ending_corr) and not a blocking one (a sync or a synchronous
 * copy waits for the GPU by design: the syncs' finding); its time inside the gap. */
static unsigned count_lead(fstate *f, uint64_t device, unsigned c, uint64_t a, uint64_t b, uint64_t tid,
                           uint64_t ending_corr, uint64_t *held_out) {
  *held_out = 0;
  const thstate *th = ct_gaps_find_thread(f, tid);
  if (!th || !th->calls.n) return 0;
  const ring *r = &th->calls;
  /* the thread's outermost calls do not overlap: the one running at a is the oldest
   * non-tracer call ending after a. In end order: found by bisection (entries older
   * than index hi end at or before a); out of order, by a scan. */
  unsigned lo = 0, hi = r->n;
  if (!r->disorder) {
    while (lo < hi) {
      unsigned mid = (lo + hi) / 2;
      if (ring_back(r, mid)->end > a) lo = mid + 1;
      else hi = mid;
    }
  }
  for (unsigned i = hi; i-- > 0;) {
    const span_ring_entry *e = ring_back(r, i);
    if (e->end <= a || e->is_tracer) continue;
    if (e->begin >= a) return 0; /* nothing ran at a (the oldest one ending after it began later) */
    if (e->corr == ending_corr || e->is_blocking) return 0;
    ender_group *g = group_for(f, device, LEAD, e->name, 0, e->stack);
    if (g) {
      uint64_t held = overlap(e->begin, e->end, a, b);
      if (!g->tail_count) {
        g->tid = tid;
        g->lead_first = a;
      } else if (g->tid != tid) {
        g->other_threads = 1;
      }
      g->lead_first = min_u64(g->lead_first, a);
      g->lead_last = max_u64(g->lead_last, b);
      g->tail_ns += held;
      g->tail_count++;
      if (c == CT_GAP_ALLOC) g->held_alloc_ns += held;
      if (f->ls_state == LS_YES) g->held_lsync_ns += held;
      *held_out = held;
    }
    return g ? (unsigned)(g - f->enders->grp) + 1 : 0;
  }
  return 0;
}

/* The little syncs' claim on the gap being counted (fstate.ls_state): when it is not
 * known yet whether a little sync's return opened it, its ending call's group (end, + 1)
 * and leading call's (lead) with their time in it wait with the gap in the device's
 * sgap ring (ct_gaps_enders_held_lsync); LS_YES was counted already. */
static void lsync_later(fstate *f, const tracker *t, unsigned end, uint64_t end_ns, unsigned lead,
                        uint64_t lead_ns) {
  if (f->ls_state != LS_PENDING) return;
  struct sync_gap *sg = &t->dev->sgap[f->ls_slot];
  sg->end_group = end;
  sg->end_ns = end_ns;
  sg->lead_group = lead;
  sg->lead_ns = lead_ns;
}

void ct_gaps_enders_held_lsync(fstate *f, const struct sync_gap *sg) {
  if (!f->enders) return;
  if (sg->end_group && sg->end_group <= f->enders->n) {
    ender_group *e = &f->enders->grp[sg->end_group - 1];
    e->held_lsync_ns += sg->end_ns;
    if (e->count && e->first_a == sg->a) e->first_lsync += sg->end_ns; /* its first call's gap */
  }
  if (sg->lead_group && sg->lead_group <= f->enders->n)
    f->enders->grp[sg->lead_group - 1].held_lsync_ns += sg->lead_ns;
}

/* A device gap [a, b] of cause c ended by op (gaps_busy.c); outside: for host_wait, the
 * launching thread's time outside CUDA calls in it (ct_gaps_classify). */
void ct_gaps_enders_on_gap(fstate *f, const tracker *t, uint64_t a, uint64_t b, enum ct_gap_cause c,
                           const opinfo *op, uint64_t outside) {
  if (!f->enders) {
    if (!(f->enders = malloc(sizeof *f->enders))) {
      f->oom = 1;
      return;
    }
    memset(f->enders, 0, ENDERS_CLEARED); /* the waiting gaps' slots are taken in order */
  }
  uint64_t device = t->dev->device, incall, held;
  int lsync = f->ls_state == LS_YES;
  uint64_t launch = op->short_kernel ? overlap(op->call_begin, op->call_end, a, b) : 0;
  if (!op->has_call) {
    count_gap(f, device, c, a, b, NULL, 0, 0, 0, 0, 0, 0, lsync, 0, &incall);
    return;
  }
  unsigned lead = count_lead(f, device, (unsigned)c, a, b, op->tid, op->depth && op->parent ? op->parent : op->corr,
                             &held);
  if (!op->depth || !op->parent) {
    unsigned end = count_gap(f, device, c, a, b, op->api, 0, op->stack, op->call_begin, op->call_end, op->tid,
                             outside, lsync, launch, &incall);
    lsync_later(f, t, end, incall, lead, held);
    return;
  }
  const span_ring_entry *e = ct_gaps_find_outer_call(f, op->tid, op->parent, op->call_end);
  if (e) {
    unsigned end = count_gap(f, device, c, a, b, e->name, 1, e->stack ? e->stack : op->stack, e->begin, e->end,
                             op->tid, outside, lsync, launch, &incall);
    lsync_later(f, t, end, incall, lead, held);
    return;
  }
  lsync_later(f, t, 0, 0, lead, held); /* the ending call's part waits with the gap: lost then */
  if (f->enders->npend == PENDING_ENDS) flush_oldest(f); /* waited long enough */
  pend_add(f->enders, &(pending_end){.device = device, .a = a, .b = b, .tid = op->tid,
                                     .parent = op->parent, .stack = op->stack,
                                     .call_begin = op->call_begin, .call_end = op->call_end,
                                     .outside = outside, .cause = (unsigned)c, .api = op->api,
                                     .lsync = lsync, .launch = launch});
}

/* An outermost call: completes the gaps of its thread waiting for it, and counts with
 * their own call those of its thread waiting for another outermost call although their
 * launch ended before this one began (the thread's outermost calls do not overlap and
 * are recorded in the order they end: theirs was lost, a dropped record). */
void ct_gaps_enders_on_span(fstate *f, const ct_span *sp, const char *name) {
  struct enders_state *s = f->enders;
  unsigned next;
  for (unsigned at = s->bucket[pend_bucket(sp->tid)]; at; at = next) {
    unsigned slot = at - 1;
    const pending_end *p = &s->pend[slot];
    next = p->next;
    if (p->tid != sp->tid) continue;
    if (p->parent == sp->corr) {
      pend_remove(s, slot);
      uint64_t incall;
      count_gap(f, p->device, p->cause, p->a, p->b, name, 1, sp->stack ? sp->stack : p->stack,
                sp->begin_ns, sp->end_ns, p->tid, p->outside, p->lsync, p->launch, &incall);
    } else if (p->call_end <= sp->begin_ns) {
      pend_remove(s, slot);
      count_own_call(f, p);
    }
  }
}

/* Whether gaps wait for their outermost call. */
int ct_gaps_enders_waiting(const fstate *f) { return f->enders && f->enders->npend; }

const char *ct_gaps_site_text(fstate *f, uint64_t stack) {
  if (!stack || !f->stacks) return NULL;
  const ct_frame *fr[CT_GAP_MAX_FRAMES];
  unsigned site, n = ct_stacks_resolve(f->stacks, stack, fr, CT_GAP_MAX_FRAMES, &site);
  if (site >= n) return NULL;
  const ct_frame *s = fr[site];
  const char *base = strrchr(s->file, '/');
  base = base ? base + 1 : s->file;
  char buf[512];
  if (ct_frame_is_python(s->note)) snprintf(buf, sizeof buf, "%s:%u %s", base, s->line, s->function);
  else if (*s->file && s->line) snprintf(buf, sizeof buf, "%s (%s:%u)", s->function, base, s->line);
  else snprintf(buf, sizeof buf, "%s", s->function);
  return ct_gaps_intern(f->g, buf);
}

/* ---- at the end of a file -------------------------------------------------------------- */

static uint64_t device_idle(fstate *f, uint64_t device) {
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == device) return f->devs[i]->t.u.idle_ns;
  return 0;
}

/* The device gaps of cause alloc on the device (alloc_in_loop's count). */
static uint64_t device_alloc_gaps(fstate *f, uint64_t device) {
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == device) return f->devs[i]->al_count;
  return 0;
}

/* The slow-launching-call finding of a group over every cause, when it qualifies. */
static void slow_call_finding(fstate *f, const ender_group *e) {
  uint64_t idle = device_idle(f, e->device);
  uint64_t held = e->incall_ns + e->tail_ns; /* ending the gaps, and leading them */
  if (!e->api || !strcmp(e->api, MORE_CALLS) || held < SLOW_CALL_TOTAL_NS ||
      (double)held < SLOW_CALL_SHARE * (double)idle)
    return;
  if (!e->count) { /* it only began gaps: the GPU drained while it held the thread */
    if (!e->tail_count || e->tail_ns / e->tail_count < SLOW_CALL_MEDIAN_NS) return;
    if (e->held_alloc_ns >= held && device_alloc_gaps(f, e->device) >= f->g->o.repeat_min)
      return; /* all inside alloc gaps, which alloc_in_loop names */
    ct_gaps_finding fd = {
        .kind = CT_FIND_SLOW_CALL, .proc = f->proc, .device = e->device, .what = e->api,
        .cpu_ns = e->tail_ns / e->tail_count, .first_ns = e->lead_first, .last_ns = e->lead_last,
        .saving_ns = held, .site = e->site, .pattern = "starts_gaps", .device_idle_ns = idle,
        .after_launch_ns = e->tail_ns, .after_launch_gaps = e->tail_count,
        .tid = e->other_threads ? 0 : e->tid,
        .held_alloc_ns = min_u64(e->held_alloc_ns, held), .held_lsync_ns = min_u64(e->held_lsync_ns, held),
        .held_launch_ns = min_u64(e->held_launch_ns, held),
        .fix = "the GPU ran out of work while this call held the launching thread, and waited "
               "until the thread launched again: queue the next GPU work before making the call, "
               "move it out of the loop (allocate once and reuse, create handles, plans and "
               "descriptors once), or make it on another thread"};
    ct_gaps_add_finding(f->g, &fd);
    return;
  }
  ct_dur_stats all = {0};
  ct_dur_merge(&all, &e->rest);
  ct_dur_add(&all, e->first_incall);
  uint64_t median = ct_dur_median(&all), rest = ct_dur_median(&e->rest);
  ct_dur_free(&all);
  const char *pattern, *fix;
  uint64_t saving;
  /* what other findings claim of the saving: every call's, or the first call's alone */
  uint64_t shared_alloc = e->held_alloc_ns, shared_lsync = e->held_lsync_ns, shared_launch = e->held_launch_ns;
  if (e->count > 1 && e->first_incall >= SLOW_CALL_FIRST_NS && e->first_incall >= 10 * rest &&
      rest < SLOW_CALL_MEDIAN_NS) { /* the others are fast: a warm-up */
    pattern = "first_call";
    saving = e->first_incall;
    shared_alloc = e->first_alloc;
    shared_lsync = e->first_lsync;
    shared_launch = e->first_launch;
    fix = "only the first call was slow (warm-up: a library's first-call heuristics, plan or "
          "module loading, JIT, torch.compile's first call): make one warm-up call before the "
          "timed loop, cache the plan or heuristic (cublasLtMatmulAlgoGetHeuristic once per "
          "shape), or load modules eagerly (CUDA_MODULE_LOADING=EAGER)";
  } else if (median >= SLOW_CALL_MEDIAN_NS) {
    pattern = e->count == 1 ? "one_call" : "every_call";
    saving = held;
    fix = e->tail_ns > e->incall_ns
              ? "it keeps the launching thread after queuing its work while the GPU, done with "
                "that work, waits: find what the call does after its launch (a sync, a copy "
                "back, host-side work, a cleanup) and move it out of the loop or after more "
                "work is queued, or, after a warm-up, capture the loop in a CUDA graph"
              : "it does its setup every time while the GPU waits: move that setup out of the "
                "loop (create handles, plans, heuristics, descriptors and buffers once and "
                "reuse them; no cudaMalloc inside the loop), or, after a warm-up, capture the "
                "loop in a CUDA graph so the calls are not repeated on the CPU";
  } else {
    return;
  }
  ct_gaps_finding fd = {.kind = CT_FIND_SLOW_CALL, .proc = f->proc, .device = e->device,
                        .what = e->api, .count = e->count, .cpu_ns = median,
                        .first_ns = e->first_a, .last_ns = e->last_b, .fix = fix,
                        .idle_ns = e->incall_ns, .saving_ns = saving, .site = e->site,
                        .pattern = pattern, .first_call_ns = e->first_incall,
                        .rest_median_ns = rest, .device_idle_ns = idle,
                        .gaps_idle_ns = e->idle_ns, .nested = e->nested,
                        .after_launch_ns = e->tail_ns, .after_launch_gaps = e->tail_count,
                        .tid = e->other_threads ? 0 : e->tid,
                        .held_alloc_ns = min_u64(shared_alloc, saving),
                        .held_lsync_ns = min_u64(shared_lsync, saving),
                        .held_launch_ns = min_u64(shared_launch, saving)};
  ct_gaps_add_finding(f->g, &fd);
}

/* The host-bound-launch finding of a host_wait group, when it qualifies: the launching
 * thread's time outside CUDA inside the gaps at least 100 us, 5% of the device's idle
 * time and half the gaps' idle time. */
static void host_bound_finding(fstate *f, const ender_group *e) {
  uint64_t idle = device_idle(f, e->device);
  if (e->cause != CT_GAP_HOST_WAIT || !e->api || !strcmp(e->api, MORE_CALLS) || e->count < f->g->o.repeat_min ||
      e->outside_ns < HOST_BOUND_TOTAL_NS || (double)e->outside_ns < HOST_BOUND_SHARE * (double)idle ||
      2 * e->outside_ns < e->idle_ns)
    return;
  const thstate *th = e->other_threads ? NULL : ct_gaps_find_thread(f, e->tid);
  ct_gaps_finding fd = {
      .kind = CT_FIND_HOST_BOUND, .proc = f->proc, .device = e->device, .what = e->api,
      .count = e->count, .cpu_ns = e->idle_ns - e->outside_ns, .first_ns = e->first_a,
      .last_ns = e->last_b, .idle_ns = e->outside_ns, .saving_ns = e->outside_ns, .site = e->site,
      .device_idle_ns = idle, .gaps_idle_ns = e->idle_ns, .nested = e->nested,
      .rest_median_ns = ct_dur_median(&e->idle), .tid = e->other_threads ? 0 : e->tid,
      .thread_name = th ? th->name : NULL,
      .fix = "overlap the CPU's work with the GPU's: enqueue the next GPU work before the host "
             "work (launch earlier, keep work queued ahead; no .item()/.cpu()/printing of GPU "
             "values in the loop), move the host work off the launching thread (a worker thread "
             "or process, DataLoader num_workers and pin_memory), give each launch more work "
             "(larger batches), or capture the GPU part in a CUDA graph so a step costs the CPU "
             "one launch"};
  ct_gaps_add_finding(f->g, &fd);
}

/* Moves a cause's group into the analysis's list. */
static void publish(fstate *f, const ender_group *e) {
  struct ct_gaps *g = f->g;
  if (g->nenders == g->cap_enders) {
    unsigned ncap = g->cap_enders ? 2 * g->cap_enders : 64;
    ct_gaps_ender *ne = realloc(g->enders, ncap * sizeof *ne);
    if (!ne) {
      f->oom = 1;
      return;
    }
    g->enders = ne;
    g->cap_enders = ncap;
  }
  g->enders[g->nenders++] = (ct_gaps_ender){f->proc, e->device, (enum ct_gap_cause)e->cause, e->api,
                                            e->nested, e->site, e->count, e->idle_ns,
                                            ct_dur_median(&e->idle), e->incall_ns, e->first_a,
                                            e->last_b, device_idle(f, e->device)};
}

/* Adds group o's gaps to e. */
static void merge_group(ender_group *e, const ender_group *o) {
  if (!e->count) e->tid = o->tid;
  else if (e->tid != o->tid) e->other_threads = 1;
  e->other_threads |= o->other_threads;
  if (o->count) /* a leading call's group has none */
    take_first(e, o->first_a, (call_held){o->first_incall, o->first_alloc, o->first_lsync, o->first_launch});
  ct_dur_merge(&e->rest, &o->rest);
  ct_dur_merge(&e->idle, &o->idle);
  e->count += o->count;
  e->idle_ns += o->idle_ns;
  e->incall_ns += o->incall_ns;
  e->last_b = max_u64(e->last_b, o->last_b);
  e->nested |= o->nested;
  e->outside_ns += o->outside_ns;
  if (o->tail_count) {
    e->lead_first = e->tail_count ? min_u64(e->lead_first, o->lead_first) : o->lead_first;
    e->lead_last = max_u64(e->lead_last, o->lead_last);
  }
  e->tail_ns += o->tail_ns;
  e->tail_count += o->tail_count;
  e->held_alloc_ns += o->held_alloc_ns;
  e->held_lsync_ns += o->held_lsync_ns;
  e->held_launch_ns += o->held_launch_ns;
}

static void free_groups(ender_group *grp, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    ct_dur_free(&grp[i].idle);
    ct_dur_free(&grp[i].rest);
  }
  free(grp);
}

/* Frees a histogram and empties its summary (merging it adds nothing then). */
static void drop_stats(ct_dur_stats *d) {
  ct_dur_free(d);
  *d = (ct_dur_stats){0};
}

/* At the end of a file: gaps still waiting are counted with their own call; the groups
 * are merged by call site and published (but the leading calls' groups); their calls,
 * over every cause and with their time as leading calls, are judged (the
 * launching-call finding). The histograms move rather than copy: a group merged into
 * another, or published, frees what is no longer needed, and a call's totals take its
 * first group's, so that the histograms held never exceed those held while reading
 * (but one). */
void ct_gaps_enders_finish(fstate *f) {
  struct enders_state *s = f->enders;
  if (!s) return;
  while (s->npend) flush_oldest(f);
  for (unsigned i = 0; i < s->n; i++) s->grp[i].site = ct_gaps_site_text(f, s->grp[i].stack);
  ender_group *calls = calloc(s->n + 1, sizeof *calls); /* by call and site, every cause */
  unsigned ncalls = 0;
  if (!calls) f->oom = 1;
  for (unsigned i = 0; i < s->n; i++) {
    ender_group *e = &s->grp[i];
    if (e->merged) continue;
    for (unsigned k = i + 1; k < s->n; k++) {
      ender_group *o = &s->grp[k];
      if (o->merged || o->device != e->device || o->cause != e->cause || o->api != e->api ||
          o->site != e->site)
        continue;
      o->merged = 1;
      merge_group(e, o);
      drop_stats(&o->idle);
      drop_stats(&o->rest);
    }
    if (e->cause != LEAD) {
      publish(f, e);
      host_bound_finding(f, e);
    }
    drop_stats(&e->idle); /* published: a call's totals need only its calls' times */
    if (!calls) continue;
    unsigned k = 0;
    while (k < ncalls && !(calls[k].device == e->device && calls[k].api == e->api &&
                           calls[k].site == e->site))
      k++;
    if (k == ncalls) { /* the call's first group: its totals, its histogram moved */
      calls[ncalls] = *e;
      calls[ncalls++].cause = ANY_CAUSE;
      e->rest = (ct_dur_stats){0};
    } else {
      merge_group(&calls[k], e);
      drop_stats(&e->rest);
    }
  }
  for (unsigned k = 0; k < ncalls; k++) slow_call_finding(f, &calls[k]);
  if (calls) free_groups(calls, ncalls);
  free_groups(s->grp, s->n);
  free(s);
  f->enders = NULL;
}

static int cmp_enders(const void *x, const void *y) {
  const ct_gaps_ender *a = x, *b = y;
  if (a->idle_ns != b->idle_ns) return a->idle_ns > b->idle_ns ? -1 : 1;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  if (a->proc != b->proc) return a->proc < b->proc ? -1 : 1;
  if (a->device != b->device) return a->device < b->device ? -1 : 1;
  if (a->cause != b->cause) return (int)a->cause - (int)b->cause;
  int c = strcmp(a->api ? a->api : "", b->api ? b->api : "");
  return c ? c : strcmp(a->site ? a->site : "", b->site ? b->site : "");
}

/* Sorts v[0..n) by saving, largest first, stably, through tmp (n entries): a merge sort. */
static void sort_findings(ct_gaps_finding *v, ct_gaps_finding *tmp, unsigned n) {
  if (n < 2) return;
  unsigned half = n / 2;
  sort_findings(v, tmp, half);
  sort_findings(v + half, tmp, n - half);
  unsigned i = 0, k = half, out = 0;
  while (i < half && k < n) tmp[out++] = v[k].saving_ns > v[i].saving_ns ? v[k++] : v[i++];
  while (i < half) tmp[out++] = v[i++];
  memcpy(v, tmp, (size_t)out * sizeof *v); /* v[k..n) already in place */
}

/* Sorts the analysis's groups by idle time, and its findings by the idle time their fix
 * would save (stable: equal savings keep the order they were found in), when files were
 * added since the last sort. */
void ct_gaps_sort_enders(struct ct_gaps *g) {
  if (!g->unsorted) return;
  g->unsorted = 0;
  if (g->nenders > 1) qsort(g->enders, g->nenders, sizeof *g->enders, cmp_enders);
  if (g->nfinds < 2) {
    ct_gaps_account_findings(g);
    return;
  }
  ct_gaps_finding *tmp = malloc(g->nfinds * sizeof *tmp);
  if (tmp) {
    sort_findings(g->finds, tmp, g->nfinds);
    free(tmp);
    ct_gaps_account_findings(g);
    return;
  }
  for (unsigned i = 1; i < g->nfinds; i++) { /* no memory for the merge: in place */
    ct_gaps_finding x = g->finds[i];
    unsigned k = i;
    for (; k > 0 && g->finds[k - 1].saving_ns < x.saving_ns; k--) g->finds[k] = g->finds[k - 1];
    g->finds[k] = x;
  }
  ct_gaps_account_findings(g);
}
