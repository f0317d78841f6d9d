/*
 * GPU idle-time analysis: the calls whose GPU time has not been delivered yet, which
 * hold finalisation back (gaps_internal.h, docs/gaps.md "How it streams").
 *
 * Activities reach the analysis in end order, and a busy interval is made final once
 * the newest time delivered minus the window (the longest activity seen so far plus a
 * margin) has passed its end. An activity longer than any seen before (the first
 * 300 ms all-reduce or GEMM of a job, a 3 s NCCL collective, a whole graph) ends late
 * and so is delivered late: the idle time before it, which it covers, would already be
 * final and counted as idle. Its launching call, though, ended long before and was
 * delivered first, marked CT_API_TIMED (a GPU record with its corr follows). The GPU
 * work of a call cannot start before the call began, so while such a call waits for
 * its GPU record the horizon stays before the call's begin, however long the work
 * takes. A call delivered after its GPU record (a synchronous copy ends after its
 * copy) waits for nothing (ct_span.gpu_pending); nor does one whose GPU record the
 * model withheld (a selection left it out: ct_model_ops.on_withheld).
 *
 * Kept per file, not per device: one structure; a call waiting delays the other
 * devices' finalisation but does not change it. Calls that will get no GPU record do
 * not wait: those without CT_API_TIMED, those captured into a graph (CT_API_CAPTURED),
 * those whose work is timed by their child calls (CT_API_INNER_TIMED), and failed calls.
 *
 * Bounded, in this order:
 * - LAUNCHES_WAITING calls, in corr order (the order the calls began; the oldest is the
 *   one the horizon waits for). Calls whose record came leave from the front; when the
 *   list is full they are squeezed out (once they are an eighth of it), else the
 *   oldest stops waiting.
 * - Memory: once a device holds LAUNCH_HOLD_OPEN open busy intervals (its trackers
 *   together, 136 bytes each: 8.5 MiB), the calls that began before its unheld horizon
 *   stop waiting.
 * - A file that lost records (a DROP record, a "gpu_lost" tracer span) may never
 *   deliver a promised record: there a call waits LAUNCH_WAIT_NS of trace time at most.
 * Each call that stops waiting before its record came is counted (waits_cut); at the
 * end of the file everything is made final anyway.
 */
#include "gaps_internal.h"

#include <stdlib.h>

#define DONE UINT64_MAX /* begin of a call whose GPU record came */

static struct launch_wait *at(fstate *f, unsigned i) {
  return &f->launches[(f->launches_head + i) & (LAUNCHES_WAITING - 1)];
}

/* Removes the oldest call from the list, counting it when it still waited. */
static void pop_oldest(fstate *f) {
  if (at(f, 0)->begin != DONE) f->waits_cut++;
  else f->launches_done--;
  f->launches_head = (f->launches_head + 1) & (LAUNCHES_WAITING - 1);
  f->launches_n--;
}

/* Drops the oldest calls that no longer wait: their record came, or, in a file that
 * lost records, they waited too long. */
static void drop_settled(fstate *f) {
  while (f->launches_n) {
    uint64_t b = at(f, 0)->begin;
    if (b != DONE && (!f->lossy || b + LAUNCH_WAIT_NS >= f->wm)) break;
    pop_oldest(f);
  }
}

/* Squeezes out the calls whose record came, keeping the others in order. */
static void compact(fstate *f) {
  unsigned kept = 0;
  for (unsigned i = 0; i < f->launches_n; i++)
    if (at(f, i)->begin != DONE) *at(f, kept++) = *at(f, i);
  f->launches_n = kept;
  f->launches_done = 0;
}

void ct_gaps_launch_called(fstate *f, const ct_span *s) {
  if (s->is_tracer || !s->corr || s->result || !s->gpu_pending ||
      (s->flags & (CT_API_CAPTURED | CT_API_INNER_TIMED)))
    return;
  if (!f->launches) {
    f->launches = malloc(LAUNCHES_WAITING * sizeof *f->launches);
    if (!f->launches) return; /* nothing holds the horizon: as before */
  }
  /* squeezed when an eighth or more came: a list full of waiting calls (work queued
   * deep) does not pay a scan per call */
  if (f->launches_n == LAUNCHES_WAITING && f->launches_done >= LAUNCHES_WAITING / 8) compact(f);
  if (f->launches_n == LAUNCHES_WAITING) pop_oldest(f); /* full of waiting calls */
  /* in corr order: calls are delivered in end order, nearly their begin order */
  unsigned i = f->launches_n++;
  while (i > 0 && at(f, i - 1)->corr > s->corr) {
    *at(f, i) = *at(f, i - 1);
    i--;
  }
  at(f, i)->corr = s->corr;
  at(f, i)->begin = s->begin_ns;
}

void ct_gaps_launch_timed(fstate *f, uint64_t corr) {
  unsigned lo = 0, hi = f->launches_n;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (at(f, mid)->corr < corr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == f->launches_n || at(f, lo)->corr != corr || at(f, lo)->begin == DONE) return;
  at(f, lo)->begin = DONE;
  f->launches_done++;
  if (lo == 0) drop_settled(f);
}

uint64_t ct_gaps_launch_horizon(fstate *f, const devstate *d, uint64_t h) {
  drop_settled(f);
  if (d->open >= LAUNCH_HOLD_OPEN) /* the memory bound: what began before h waits no more */
    while (f->launches_n && at(f, 0)->begin < h) {
      pop_oldest(f);
      drop_settled(f);
    }
  if (!f->launches_n) return h;
  uint64_t b = at(f, 0)->begin;
  return b < h ? b : h;
}
