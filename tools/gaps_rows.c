/*
 * GPU idle-time analysis: every gap handed to the callback (ct_gaps_set_callback) with
 * the NVTX range and the call site of the call that ended it (ct_gaps_set_row_context;
 * docs/gaps.md, "CSV").
 *
 * The range is the one `dump --csv` gives that call's row (its nvtx_range), found the
 * same way, with the same per-thread ranges (dump_csv_ranges.c): the innermost push/pop
 * range open on the call's thread when it began. RANGE records are written when a
 * range closes (inner ones first), so a gap whose call sits in a range still open is
 * held until that range's record comes, and the gaps found after it wait behind it
 * (the callback sees them in the order found). Held gaps are at most hold_max
 * (ROWS_HOLD_DEFAULT, CUTRACE_GAPS_HOLD_MAX for the tests); when full, the oldest is
 * handed over with its range from a first pass over the file's RANGE records: the long
 * ranges, those around at least long_calls = hold_max / 4 calls of their thread, which a
 * range still open after its thread made that many calls is (a call ends a device and a
 * stream gap at most, so a single thread's rows held behind one come from about hold_max
 * / 2 later calls: twice the margin). When its thread made fewer calls after it (other
 * threads' gaps filled the queue) it is counted (ct_gaps_rows_unresolved): its range may
 * be one not closed yet. Memory: the held gaps (136 bytes each), each
 * thread's ranges of the last 10 s (at most 2^18), its long ranges and about SAMPLES
 * samples of its calls (16 bytes each), and a call site per stack node.
 *
 * The call site: the ending call's stack (or, for an operation launched inside a library
 * call, that outermost call's stack when it has one, as "Idle by what ended it" does),
 * symbolised once per stack node (a cache by node id, memory per unique node).
 */
#include "gaps_internal.h"
#include "ring.h"
#include "dump_csv_internal.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "cutrace/format.h"

#define ROWS_HOLD_DEFAULT 65536u /* gaps held at most (CUTRACE_GAPS_HOLD_MAX) */
#define SAMPLES 512              /* samples of how many calls a thread made, per long_calls */

/* A gap waiting for its range, or behind one that does. */
typedef struct held_gap {
  ct_gap_info gi;    /* its strings are the analysis's (interned) but for range */
  uint64_t tid, t;   /* the ending call's thread and begin */
  char *range;       /* a copy of the range's name, NULL when none */
  uint8_t pending;   /* the range is not known yet */
} held_gap;

/* How many calls a thread made after a time: every long_calls / SAMPLES-th call (every
 * call when that is 0), the latest begin so far and the count of calls then, in a ring
 * reaching at least long_calls calls back. */
typedef struct row_thread {
  uint64_t calls, max_begin;
  uint64_t (*samples)[2]; /* {max_begin, calls} */
  unsigned head, n, cap;
} row_thread;

/* A call site known for a stack node. */
typedef struct site_entry {
  const char *text; /* interned; NULL when none */
  int known;
} site_entry;

struct gap_rows {
  csv_ranges *ranges; /* per thread: its ranges (dump_csv_ranges.c) */
  held_gap *q;        /* a ring (cap a power of two) */
  size_t head, n, cap;
  uint64_t head_seq;  /* the sequence number of q[head] */
  size_t hold_max;
  int prescanned;        /* the file's long ranges are known (not standard input) */
  uint64_t long_calls;   /* calls of its thread in a range that make it long */
  uint64_t sample_every; /* a thread's calls per sample (row_thread) */
  ct_map *sites;      /* stack node -> site_entry */
  uint64_t last_stack;
  const char *last_site;
  ct_map *threads;          /* tid -> row_thread */
  uint64_t last_tid;        /* the thread of the last call counted, */
  row_thread *last_thread;  /* and its entry (map slots stay in place) */
  uint64_t last_range_tid;  /* the thread of the last gap's call, */
  csv_thread *last_range_thread; /* and its ranges */
};

/* At least how many calls thread tid made (delivered so far) that began after t: those
 * since the oldest sample whose latest begin is after t (a lower bound). */
static uint64_t calls_after(struct gap_rows *r, uint64_t tid, uint64_t t) {
  row_thread *th = ct_map_get(r->threads, &tid, sizeof tid, NULL);
  if (!th || !th->n) return 0;
  unsigned lo = 0, hi = th->n; /* the first sample after t (max_begin never decreases) */
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (th->samples[(th->head + mid) % th->cap][0] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo < th->n ? th->calls - th->samples[(th->head + lo) % th->cap][1] : 0;
}

void ct_gaps_set_row_context(ct_gaps *g) { g->row_context = 1; }

uint64_t ct_gaps_rows_unresolved(const ct_gaps *g) { return g->rows_unresolved; }

void ct_gaps_rows_begin(fstate *f, const char *path) {
  f->g->rows_unresolved = 0;
  struct gap_rows *r = calloc(1, sizeof *r);
  if (!r) {
    f->oom = 1;
    return;
  }
  r->hold_max = ROWS_HOLD_DEFAULT;
  const char *env = getenv("CUTRACE_GAPS_HOLD_MAX"); /* for the tests */
  if (env && strtoul(env, NULL, 10) > 1) r->hold_max = strtoul(env, NULL, 10);
  r->long_calls = r->hold_max / 4 ? r->hold_max / 4 : 1;
  r->sample_every = r->long_calls / SAMPLES ? r->long_calls / SAMPLES : 1;
  r->ranges = csv_ranges_new(r->long_calls);
  r->sites = ct_map_new(sizeof(site_entry));
  r->threads = ct_map_new(sizeof(row_thread));
  if (!r->ranges || !r->sites || !r->threads) {
    csv_ranges_free(r->ranges);
    ct_map_free(r->sites);
    ct_map_free(r->threads);
    free(r);
    f->oom = 1;
    return;
  }
  if ((r->prescanned = strcmp(path, "-") != 0)) csv_ranges_prescan(r->ranges, path, NULL);
  f->rows = r;
}

/* The call site of stack node id (0: none), symbolised once. */
static const char *site_of(fstate *f, struct gap_rows *r, uint64_t stack) {
  if (!stack) return NULL;
  if (stack == r->last_stack) return r->last_site;
  site_entry *e = ct_map_get(r->sites, &stack, sizeof stack, NULL);
  if (!e) return ct_gaps_site_text(f, stack);
  if (!e->known) {
    e->text = ct_gaps_site_text(f, stack);
    e->known = 1;
  }
  r->last_stack = stack;
  r->last_site = e->text;
  return e->text;
}

/* Hands the oldest held gap over (force: with what is known of its range) and drops it. */
static void pop_row(fstate *f, struct gap_rows *r, int force) {
  held_gap *h = &r->q[r->head];
  if (h->pending && force) {
    csv_thread *tr = csv_ranges_thread(r->ranges, h->tid);
    const char *name = tr ? csv_range_long(tr, h->t) : NULL;
    /* once its thread made long_calls calls since, a range still open around it holds
     * them all: it is long, and known */
    if (!r->prescanned || calls_after(r, h->tid, h->t) < r->long_calls)
      f->g->rows_unresolved++;
    h->range = name ? strdup(name) : NULL;
  }
  h->gi.range = h->range;
  f->g->fn(f->g->user, &h->gi);
  free(h->range);
  r->head = (r->head + 1) & (r->cap - 1);
  r->n--;
  r->head_seq++;
}

/* Hands over the held gaps at the head that wait for nothing. */
static void flush_ready(fstate *f, struct gap_rows *r) {
  while (r->n && !r->q[r->head].pending) pop_row(f, r, 0);
}

/* Room for one more held gap (growing the ring, or handing over the oldest when full);
 * NULL when out of memory. */
static held_gap *push_slot(fstate *f, struct gap_rows *r) {
  if (r->n && r->n >= r->hold_max) pop_row(f, r, 1);
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 256;
    held_gap *q = ct_ring_copy(r->q, sizeof *q, r->cap, r->head, r->n, cap);
    if (!q) return NULL;
    free(r->q);
    r->q = q;
    r->cap = cap;
    r->head = 0;
  }
  return &r->q[(r->head + r->n) & (r->cap - 1)];
}

void ct_gaps_rows_add(fstate *f, ct_gap_info *gi, const opinfo *op) {
  struct gap_rows *r = f->rows;
  if (!r || !op->has_call) {
    if (!r || !r->n) {
      f->g->fn(f->g->user, gi);
      return;
    }
  }
  const char *range = NULL;
  int pending = 0;
  csv_thread *tr = NULL;
  if (op->has_call) {
    uint64_t stack = op->stack;
    if (op->depth && op->parent) { /* the outermost call's stack, as the enders table's */
      const span_ring_entry *e = ct_gaps_find_outer_call(f, op->tid, op->parent, op->call_end);
      if (e && e->stack) stack = e->stack;
    }
    gi->callsite = site_of(f, r, stack);
    if (!r->last_range_thread || r->last_range_tid != op->tid) {
      r->last_range_thread = csv_ranges_thread(r->ranges, op->tid);
      r->last_range_tid = op->tid;
    }
    tr = r->last_range_thread;
    if (tr && tr->has_ranges) {
      int k = csv_range_known(tr, op->call_begin, &range);
      if (k < 0) f->g->rows_unresolved++;
      pending = k == 0;
    }
  }
  if (!pending && !r->n) {
    gi->range = range;
    f->g->fn(f->g->user, gi);
    return;
  }
  held_gap *h = push_slot(f, r);
  char *copy = range ? strdup(range) : NULL;
  if (!h || (range && !copy)) { /* out of memory: out of order, rather than lost */
    free(copy);
    f->oom = 1;
    f->g->rows_unresolved += pending;
    gi->range = range;
    f->g->fn(f->g->user, gi);
    return;
  }
  *h = (held_gap){*gi, op->tid, op->call_begin, copy, (uint8_t)pending};
  uint64_t seq = r->head_seq + r->n;
  r->n++;
  if (pending && csv_thread_wait(tr, seq, r->head_seq) < 0) {
    h->pending = 0;
    f->g->rows_unresolved++;
    f->oom = 1;
  }
}

void ct_gaps_rows_on_span(fstate *f, const ct_span *s) {
  struct gap_rows *r = f->rows;
  if (s->is_tracer) return;
  if (!r->last_thread || r->last_tid != s->tid) {
    r->last_thread = ct_map_get(r->threads, &s->tid, sizeof s->tid, NULL);
    r->last_tid = s->tid;
  }
  row_thread *th = r->last_thread;
  if (!th) return;
  if (s->begin_ns > th->max_begin) th->max_begin = s->begin_ns;
  if (++th->calls % r->sample_every) return;
  if (!th->samples) {
    th->cap = (unsigned)(r->long_calls / r->sample_every + 2);
    if (!(th->samples = malloc(th->cap * sizeof *th->samples))) {
      f->oom = 1;
      th->cap = 0;
      return;
    }
  }
  unsigned k = ring_next_slot(&th->head, &th->n, th->cap);
  th->samples[k][0] = th->max_begin;
  th->samples[k][1] = th->calls;
}

/* The held gap of sequence number seq (still held). */
static held_gap *row_at(struct gap_rows *r, uint64_t seq) {
  return &r->q[(r->head + (size_t)(seq - r->head_seq)) & (r->cap - 1)];
}

void ct_gaps_rows_on_range(fstate *f, const struct ct_range *rg, const char *name) {
  struct gap_rows *r = f->rows;
  if (rg->flags & CT_RANGE_STARTEND) return;
  csv_thread *tr = csv_ranges_thread(r->ranges, rg->tid);
  if (!tr) return;
  const csv_range *e = csv_ranges_add(tr, rg, name, f->wm);
  if (!e) {
    f->oom = 1;
    return;
  }
  size_t kept = 0;
  for (size_t i = 0; i < tr->npending; i++) {
    uint64_t seq = tr->pending[i];
    if (seq < r->head_seq) continue; /* handed over already (the queue was full) */
    held_gap *h = row_at(r, seq);
    if (!h->pending) continue;
    if (rg->begin_ns <= h->t && h->t <= rg->end_ns) { /* the first to close around it */
      h->range = e->name ? strdup(e->name) : NULL;
      h->pending = 0;
    } else if (rg->depth == 0 && rg->begin_ns > h->t) { /* nothing was open around it */
      h->pending = 0;
    } else {
      tr->pending[kept++] = seq;
    }
  }
  tr->npending = kept;
  flush_ready(f, r);
}

void ct_gaps_rows_end(fstate *f) {
  struct gap_rows *r = f->rows;
  if (!r) return;
  /* the file ended: no range closes around the gaps still waiting */
  for (size_t i = 0; i < r->n; i++) r->q[(r->head + i) & (r->cap - 1)].pending = 0;
  while (r->n) pop_row(f, r, 0);
  free(r->q);
  csv_ranges_free(r->ranges);
  ct_map_free(r->sites);
  for (size_t i = 0; i < ct_map_count(r->threads); i++)
    free(((row_thread *)ct_map_entry(r->threads, i, NULL, NULL))->samples);
  ct_map_free(r->threads);
  free(r);
  f->rows = NULL;
}
