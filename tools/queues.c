/* A stream's queue of operations in flight, rebuilt from a trace (see queues.h). */
#include "queues.h"

#include <stdlib.h>

static ct_queued_op *at(const ct_queue *q, uint32_t i) { return &q->ops[(q->head + i) % q->cap]; }

/* Operations i > 0 of the ring whose call began by t (begins ascend: a binary search). */
static uint64_t begun_by(const ct_queue *q, uint64_t t) {
  uint32_t lo = 1, hi = q->n; /* the first index in [1, n) whose begin is after t */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (at(q, mid)->begin <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/* Drops the oldest operation, telling fn the depth once it ended. */
static void pop(ct_queue *q, ct_queue_fn fn, void *user) {
  uint64_t end = at(q, 0)->end;
  if (fn) fn(user, end, begun_by(q, end));
  q->head = (q->head + 1) % q->cap;
  q->n--;
}

static int grow(ct_queue *q) {
  uint32_t cap = q->cap ? q->cap * 2 : 64;
  ct_queued_op *ops = malloc(cap * sizeof *ops);
  if (!ops) return -1;
  for (uint32_t i = 0; i < q->n; i++) ops[i] = *at(q, i);
  free(q->ops);
  q->ops = ops;
  q->cap = cap;
  q->head = 0;
  return 0;
}

uint64_t ct_queue_add(ct_queue *q, uint64_t begin, uint64_t end, ct_queue_fn fn, void *user) {
  while (q->n && at(q, 0)->end <= begin) pop(q, fn, user);
  uint32_t k = q->n; /* its place by end: the tail, unless it was delivered late */
  while (k && at(q, k - 1)->end > end) k--;
  if (k < q->n) { /* late: what was told since its call began missed it */
    if (end <= q->told) return 1;
    begin = q->told;
  }
  if (k && begin < at(q, k - 1)->begin) begin = at(q, k - 1)->begin;
  if (k < q->n && begin > at(q, k)->begin) begin = at(q, k)->begin; /* begins ascend */
  if (q->n == q->cap && grow(q) < 0) return 0;
  for (uint32_t i = q->n; i > k; i--) *at(q, i) = *at(q, i - 1);
  *at(q, k) = (ct_queued_op){begin, end};
  q->n++;
  int late = k + 1 < q->n;
  if (begin > q->told) q->told = begin;
  if (fn) fn(user, late ? q->told : begin, q->n);
  return late ? k + 1 : q->n;
}

void ct_queue_finish(ct_queue *q, ct_queue_fn fn, void *user) {
  while (q->n) pop(q, fn, user);
  free(q->ops);
  *q = (ct_queue){0};
}
