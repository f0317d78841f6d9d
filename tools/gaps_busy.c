/*
 * GPU idle-time analysis: busy intervals per device and per stream, their
 * finalisation, and the idle accounting of each gap found (gaps_internal.h).
 */
#include "gaps_internal.h"

#include <stdlib.h>
#include <string.h>

/* A gap [a, b] of tracker t was found: classify, count, report. */
static void emit_gap(fstate *f, tracker *t, uint64_t a, uint64_t b, const opinfo *op) {
  if (t->silent) return;
  if (__builtin_expect(f->pauses.n != 0, 0) && ct_pauses_touch(&f->pauses, a, b)) {
    t->u.unrecorded_ns += b - a; /* the tracer was paused: nobody knows what happened */
    return;
  }
  uint64_t outside_cuda;
  f->ls_state = LS_NO; /* set by the little syncs' matching (ct_gaps_findings_on_sync_gap) */
  enum ct_gap_cause c = ct_gaps_classify(f, t, a, b, op, &outside_cuda);
  t->u.gaps++;
  t->u.gaps_by_cause[c]++;
  t->u.idle_by_cause[c] += b - a;
  t->u.idle_ns += b - a;
  if (t->stream == UINT64_MAX) {
    ct_gaps_enders_on_gap(f, t, a, b, c, op, outside_cuda);
    ct_gaps_findings_on_gap(f, t->dev, a, b, c, op);
  }
  if (b - a < f->g->o.min_gap_ns) return;
  if (f->g->fn) {
    ct_gap_info gi = {&f->pcopy, t->dev->device, t->stream, a, b, ct_gap_cause_name(c),
                      op->has_call ? op->api : NULL, op->has_call ? op->tid : 0,
                      op->has_call ? op->corr : 0, NULL, 0, NULL, NULL};
    if (c == CT_GAP_HOST_WAIT && t->stream == UINT64_MAX && op->has_call)
      gi.inside_call = ct_gaps_host_wait_inside(ct_gaps_find_thread(f, op->tid), a, b, op,
                                                &gi.inside_ns);
    if (f->rows) ct_gaps_rows_add(f, &gi, op);
    else f->g->fn(f->g->user, &gi);
  }
  ct_gaps_top_consider(f, t, a, b, c, op);
}

/* ---- busy intervals ----------------------------------------------------------------- */

/* Adds the busy time [s, e] of op to t. */
void ct_gaps_tracker_add(fstate *f, tracker *t, uint64_t s, uint64_t e, const opinfo *op) {
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
    t->dev->open -= i - j - 1;
    return;
  }
  if (t->n == t->cap) {
    /* Compact only when at least half the room is free: a queue kept nearly full of
     * open intervals would otherwise be moved whole every few additions. */
    if (t->cap && t->head >= t->cap / 2) {
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
  t->dev->open++;
}

/* Makes final every interval of t that ends before horizon, classifying the gaps. */
void ct_gaps_tracker_finalize(fstate *f, tracker *t, uint64_t horizon) {
  while (t->head < t->n && t->q[t->head].end < horizon) {
    ivl F = t->q[t->head++];
    t->dev->open--;
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
      unsigned k = ring_next_slot(&d->fin_head, &d->fin_n, RECENT_FINAL);
      d->fin[k].start = F.start;
      d->fin[k].end = F.end;
    }
  }
}

/* The finalisation window of d: the longest activity seen plus a margin, at least 1 ms. */
uint64_t ct_gaps_window(const devstate *d) {
  return max_u64(WINDOW_FLOOR_NS, d->maxdur + WINDOW_MARGIN_NS);
}

/* Finalises d and its streams up to the watermark minus the window, held back to the
 * oldest call still waiting for its GPU record (or up to horizon_override). */
void ct_gaps_finalize_dev(fstate *f, devstate *d, uint64_t horizon_override) {
  uint64_t w = ct_gaps_window(d);
  uint64_t h = horizon_override ? horizon_override
                                : ct_gaps_launch_horizon(f, d, f->wm > w ? f->wm - w : 0);
  ct_gaps_tracker_finalize(f, &d->t, h);
  if (d->has_comm)
    for (int k = 0; k < OV_N; k++) ct_gaps_tracker_finalize(f, &d->ov[k], h);
  ct_gaps_judge_syncs(f, d, h);
  ct_gaps_graphs_settle(f, d->device, h);
  for (unsigned i = 0; i < f->nstreams; i++)
    if (f->streams[i]->dev == d) ct_gaps_tracker_finalize(f, f->streams[i], h);
}

/* GPU busy time of device d within [b, e]: recent final intervals and open ones. */
uint64_t ct_gaps_busy_between(const devstate *d, uint64_t b, uint64_t e) {
  /* final intervals are disjoint and in time order: skip those ending by b */
  unsigned lo = 0, hi = d->fin_n;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (d->fin[(d->fin_head + mid) % RECENT_FINAL].end <= b) lo = mid + 1;
    else hi = mid;
  }
  uint64_t sum = 0;
  for (unsigned i = lo; i < d->fin_n; i++) {
    unsigned k = (d->fin_head + i) % RECENT_FINAL;
    if (d->fin[k].start >= e) break;
    sum += overlap(d->fin[k].start, d->fin[k].end, b, e);
  }
  for (size_t i = d->t.head; i < d->t.n && d->t.q[i].start < e; i++)
    sum += overlap(d->t.q[i].start, d->t.q[i].end, b, e);
  return sum;
}
