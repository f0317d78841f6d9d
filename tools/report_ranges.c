/*
 * `cutrace report --by range`: per NVTX range name, instances, CPU time, and the GPU
 * work launched while the range was open on the launching thread (nested ranges
 * included). See docs/report.md.
 *
 * It reads the records in file order with the reader, not through the model: a
 * thread's records reach the file in the order it emitted them, so the calls made
 * inside a range come before the RANGE record written when the range closed. Each
 * thread keeps the GPU-timed calls made since its last outermost (depth 0) range
 * closed; a RANGE record claims the queued calls that lie inside it, and an outermost
 * one then empties the queue (ranges nest per thread, so nothing later can enclose
 * those calls). A GPU record credits the ranges its call was attributed to, whichever
 * of the two arrives first. Memory: the queued calls (at most QUEUE_MAX per thread;
 * older ones lose their attribution, counted) and the calls whose GPU work is pending.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "report.h"

#define QUEUE_MAX 65536
#define MAX_LEVELS 8  /* ranges credited per call: the innermost 8 */

/* A GPU-timed call, by corr. */
typedef struct call_entry {
  uint64_t gpu_ns, activities, kernels;
  int act_done, final;        /* GPU record seen; no more ranges can claim the call */
  unsigned nrows;
  ct_range_row *rows[MAX_LEVELS];
} call_entry;

/* Calls by corr: open addressing with backward-shift deletion, so that memory
 * follows the calls in flight, not the trace. */
typedef struct call_slot {
  uint64_t corr; /* 0 = empty */
  call_entry e;
} call_slot;

typedef struct call_table {
  call_slot *a;
  size_t cap, n;
} call_table;

static size_t slot_of(uint64_t corr, size_t cap) {
  return (size_t)((corr * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static call_entry *table_find(call_table *t, uint64_t corr, int create) {
  if (t->cap) {
    for (size_t i = slot_of(corr, t->cap); t->a[i].corr; i = (i + 1) & (t->cap - 1))
      if (t->a[i].corr == corr) return &t->a[i].e;
  }
  if (!create) return NULL;
  if ((t->n + 1) * 2 > t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 1024;
    call_slot *na = calloc(ncap, sizeof *na);
    if (!na) return NULL;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->a[i].corr) continue;
      size_t j = slot_of(t->a[i].corr, ncap);
      while (na[j].corr) j = (j + 1) & (ncap - 1);
      na[j] = t->a[i];
    }
    free(t->a);
    t->a = na;
    t->cap = ncap;
  }
  size_t i = slot_of(corr, t->cap);
  while (t->a[i].corr) i = (i + 1) & (t->cap - 1);
  memset(&t->a[i], 0, sizeof t->a[i]);
  t->a[i].corr = corr;
  t->n++;
  return &t->a[i].e;
}

static void table_remove(call_table *t, call_entry *e) {
  size_t i = (size_t)((call_slot *)((char *)e - offsetof(call_slot, e)) - t->a), mask = t->cap - 1;
  for (size_t j = (i + 1) & mask; t->a[j].corr; j = (j + 1) & mask) {
    size_t home = slot_of(t->a[j].corr, t->cap);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t->a[i] = t->a[j];
      i = j;
    }
  }
  t->a[i].corr = 0;
  t->n--;
}

/* A queued call of a thread. */
typedef struct queued {
  uint64_t begin, corr;
} queued;

typedef struct thread_q {
  queued *a;
  size_t n, cap;
} thread_q;

typedef struct ranges_state {
  ct_report *r;
  ct_reader *rd;
  call_table calls; /* corr -> call_entry */
  ct_map *threads;  /* tid -> thread_q */
  uint64_t lost;
  int oom;
} ranges_state;

static void credit(ct_range_row *row, const call_entry *e) {
  row->gpu_ns += e->gpu_ns;
  row->activities += e->activities;
  row->kernels += e->kernels;
}

/* The call entry of corr (created when new); NULL when out of memory. */
static call_entry *entry(ranges_state *s, uint64_t corr) {
  call_entry *e = table_find(&s->calls, corr, 1);
  if (!e) s->oom = 1;
  return e;
}

/* Ends a queued call's attribution; the entry goes once its GPU work was seen too. */
static void finalize(ranges_state *s, uint64_t corr) {
  call_entry *e = table_find(&s->calls, corr, 0);
  if (!e) return;
  if (e->act_done) table_remove(&s->calls, e);
  else e->final = 1;
}

static void on_api(ranges_state *s, const struct ct_api *a) {
  if (!a->corr || !(a->flags & CT_API_TIMED)) return;
  thread_q *q = ct_map_get(s->threads, &a->tid, sizeof a->tid, NULL);
  if (!q) {
    s->oom = 1;
    return;
  }
  if (q->n == QUEUE_MAX) { /* too many calls outside any closed range: forget the oldest */
    finalize(s, q->a[0].corr);
    memmove(q->a, q->a + 1, (q->n - 1) * sizeof *q->a);
    q->n--;
    s->lost++;
  }
  if (q->n == q->cap) {
    size_t ncap = q->cap ? q->cap * 2 : 64;
    queued *na = realloc(q->a, ncap * sizeof *na);
    if (!na) {
      s->oom = 1;
      return;
    }
    q->a = na;
    q->cap = ncap;
  }
  q->a[q->n++] = (queued){a->begin_ns, a->corr};
}

static void on_range(ranges_state *s, const struct ct_range *rg) {
  size_t len = 0;
  const char *name = ct_reader_string(s->rd, rg->name, &len);
  if (!name) name = "(unnamed range)", len = strlen(name);
  ct_range_row *row = ct_map_get(s->r->maps[CT_TABLE_RANGES], name, len, NULL);
  if (!row) {
    s->oom = 1;
    return;
  }
  ct_dur_add(&row->d, rg->end_ns > rg->begin_ns ? rg->end_ns - rg->begin_ns : 0);
  thread_q *q = ct_map_get(s->threads, &rg->tid, sizeof rg->tid, NULL);
  if (!q) return;
  for (size_t i = 0; i < q->n; i++) {
    if (q->a[i].begin < rg->begin_ns || q->a[i].begin > rg->end_ns) continue;
    call_entry *e = entry(s, q->a[i].corr);
    if (!e || e->nrows == MAX_LEVELS) continue;
    e->rows[e->nrows++] = row;
    if (e->act_done) credit(row, e);
  }
  if (rg->depth == 0) { /* nothing later can enclose the queued calls */
    for (size_t i = 0; i < q->n; i++) finalize(s, q->a[i].corr);
    q->n = 0;
  }
}

static void on_gpu(ranges_state *s, const struct ct_gpu *g) {
  if (!g->corr) return;
  call_entry *e = entry(s, g->corr);
  if (!e || e->act_done) return;
  e->act_done = 1;
  e->gpu_ns = g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
  e->activities = 1;
  e->kernels = g->type != CT_GPU_MEMCPY && g->type != CT_GPU_MEMSET;
  for (unsigned i = 0; i < e->nrows; i++) credit(e->rows[i], e);
  if (e->final) table_remove(&s->calls, e);
}

int ct_report_add_ranges(ct_report *r, const char *path, ct_model_stats *st,
                         struct ct_process *proc_out) {
  memset(st, 0, sizeof *st);
  if (proc_out) memset(proc_out, 0, sizeof *proc_out);
  ranges_state s = {.r = r};
  s.rd = ct_reader_open(path, st->message, sizeof st->message);
  if (!s.rd) return -1;
  s.threads = ct_map_new(sizeof(thread_q));
  ct_record rec;
  while (s.threads && ct_reader_next(s.rd, &rec)) {
    if (rec.kind == CT_KIND_API) on_api(&s, &rec.u.api);
    else if (rec.kind == CT_KIND_RANGE) on_range(&s, &rec.u.range);
    else if (rec.kind == CT_KIND_GPU) on_gpu(&s, &rec.u.gpu);
    else if (rec.kind == CT_KIND_PROCESS && proc_out) *proc_out = rec.u.process;
  }
  const ct_read_status *rs = ct_reader_status(s.rd);
  st->records = rs->records;
  st->damaged = rs->damaged;
  st->has_end = rs->clean_end;
  int rc = 0;
  if (rs->damaged) {
    snprintf(st->message, sizeof st->message, "%s; %llu records read before it", rs->message,
             (unsigned long long)rs->records);
    rc = 1;
  } else if (s.oom || !s.threads) {
    snprintf(st->message, sizeof st->message, "out of memory: some ranges are missing");
    rc = 1;
  }
  r->range_calls_lost += s.lost;
  for (size_t i = 0; s.threads && i < ct_map_count(s.threads); i++)
    free(((thread_q *)ct_map_entry(s.threads, i, NULL, NULL))->a);
  ct_map_free(s.threads);
  free(s.calls.a);
  ct_reader_close(s.rd);
  return rc;
}
