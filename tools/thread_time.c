/* A thread's time in the poll records of one entry point, counted once (thread_time.h). */
#include "thread_time.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Disjoint covered intervals kept per (process, thread, entry point, depth class): the
 * spins of one round overlap (at most 4 open at once in the preload), so a few suffice;
 * when full, the one that ended first is forgotten (the records come nearly in end
 * order: a later record reaching back past it is rare and would be counted whole). */
#define COVERED_MAX 8

typedef struct covered {
  unsigned n;
  uint64_t begin[COVERED_MAX], end[COVERED_MAX]; /* sorted by begin, disjoint */
} covered;

struct ct_thread_time {
  ct_map *keys; /* key bytes -> covered */
};

ct_thread_time *ct_thread_time_new(void) {
  ct_thread_time *t = calloc(1, sizeof *t);
  if (t && !(t->keys = ct_map_new(sizeof(covered)))) {
    free(t);
    return NULL;
  }
  return t;
}

void ct_thread_time_free(ct_thread_time *t) {
  if (!t) return;
  ct_map_free(t->keys);
  free(t);
}

int ct_span_is_poll(const ct_span *s) {
  return s->polls || (s->name && (strstr(s->name, "EventQuery") || strstr(s->name, "StreamQuery")));
}

/* Adds [b, e) to c; returns how much of it c did not cover yet. */
static uint64_t cover(covered *c, uint64_t b, uint64_t e) {
  uint64_t already = 0, nb = b, ne = e;
  uint64_t begin[COVERED_MAX + 1], end[COVERED_MAX + 1];
  unsigned k = 0, out = 0;
  for (; k < c->n && c->end[k] < b; k++, out++) /* before [b, e): kept */
    begin[out] = c->begin[k], end[out] = c->end[k];
  for (; k < c->n && c->begin[k] <= e; k++) { /* overlapping or touching: merged into it */
    uint64_t ob = c->begin[k] > b ? c->begin[k] : b, oe = c->end[k] < e ? c->end[k] : e;
    if (oe > ob) already += oe - ob;
    if (c->begin[k] < nb) nb = c->begin[k];
    if (c->end[k] > ne) ne = c->end[k];
  }
  begin[out] = nb, end[out] = ne, out++;
  for (; k < c->n; k++, out++) /* after it: kept */
    begin[out] = c->begin[k], end[out] = c->end[k];
  unsigned drop = out > COVERED_MAX; /* one too many: forget the earliest (it ended first) */
  c->n = out - drop;
  memcpy(c->begin, begin + drop, c->n * sizeof begin[0]);
  memcpy(c->end, end + drop, c->n * sizeof end[0]);
  return e - b - already;
}

uint64_t ct_thread_time_add(ct_thread_time *t, const ct_span *s, int *oom) {
  uint64_t dur = s->end_ns > s->begin_ns ? s->end_ns - s->begin_ns : 0;
  if (!dur || !ct_span_is_poll(s)) return dur;
  unsigned char key[24 + 128];
  uint64_t pid = s->proc ? s->proc->rec.pid : 0, inner = s->depth != 0;
  size_t n = strlen(s->name) < 128 ? strlen(s->name) : 128;
  memcpy(key, &pid, 8);
  memcpy(key + 8, &s->tid, 8);
  memcpy(key + 16, &inner, 8);
  memcpy(key + 24, s->name, n);
  covered *c = ct_map_get(t->keys, key, 24 + n, NULL);
  if (!c) {
    if (oom) *oom = 1;
    return dur;
  }
  return cover(c, s->begin_ns, s->end_ns);
}
