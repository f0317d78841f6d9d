/*
 * GPU idle-time analysis: the calls whose GPU time has not been delivered yet, which
 * hold finalisation back (gaps_internal.h, docs/gaps.md "Finalisation").
 *
 * Activities reach the analysis in end order, and a busy interval is made final once
 * the newest time delivered minus the window (the longest activity seen so far plus a
 * margin) has passed its end. An activity longer than any seen before (the first
 * 300 ms all-reduce or GEMM of a job) ends late and so is delivered late: the idle
 * time before it, which it covers, would already be final and counted as idle. Its
 * launching call, though, ended long before and was delivered first, marked
 * CT_API_TIMED (a GPU record with its corr follows). The GPU work of a call cannot
 * start before the call began, so while such a call waits for its GPU record the
 * horizon stays before the call's begin. A call delivered after its GPU record (a
 * synchronous copy ends after its copy) waits for nothing (ct_span.gpu_pending).
 *
 * Kept per file, not per device: one structure, and a call's device is known for sure
 * only from its GPU record; a call waiting delays the other devices' finalisation but
 * does not change it. Bounded: LAUNCHES_WAITING calls, in corr order (the order the
 * calls began; the oldest is the one the horizon waits for); when full the oldest stops
 * waiting. Calls that will get no GPU record do not wait: those without CT_API_TIMED,
 * those captured into a graph (CT_API_CAPTURED), those whose work is timed by their
 * child calls (CT_API_INNER_TIMED), and failed calls. A call whose record never comes
 * (dropped) waits LAUNCH_WAIT_NS of trace time at most, the model's own bound on how
 * late a record may come; at the end of the file everything is made final anyway.
 */
#include "gaps_internal.h"

#include <stdlib.h>

#define DONE UINT64_MAX /* begin of a call whose GPU record came */

static struct launch_wait *at(fstate *f, unsigned i) {
  return &f->launches[(f->launches_head + i) & (LAUNCHES_WAITING - 1)];
}

/* Drops the oldest calls that no longer wait: their record came or they waited too long. */
static void drop_settled(fstate *f) {
  while (f->launches_n) {
    uint64_t b = at(f, 0)->begin;
    if (b != DONE && b + LAUNCH_WAIT_NS >= f->wm) break;
    f->launches_head = (f->launches_head + 1) & (LAUNCHES_WAITING - 1);
    f->launches_n--;
  }
}

void ct_gaps_launch_called(fstate *f, const ct_span *s) {
  if (s->is_tracer || !s->corr || s->result || !s->gpu_pending ||
      (s->flags & (CT_API_CAPTURED | CT_API_INNER_TIMED)))
    return;
  if (!f->launches) {
    f->launches = malloc(LAUNCHES_WAITING * sizeof *f->launches);
    if (!f->launches) return; /* nothing holds the horizon: as before */
  }
  if (f->launches_n == LAUNCHES_WAITING) { /* the oldest stops waiting */
    f->launches_head = (f->launches_head + 1) & (LAUNCHES_WAITING - 1);
    f->launches_n--;
  }
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
  if (lo == f->launches_n || at(f, lo)->corr != corr) return;
  at(f, lo)->begin = DONE;
  if (lo == 0) drop_settled(f);
}

uint64_t ct_gaps_launch_horizon(fstate *f, uint64_t h) {
  drop_settled(f);
  if (!f->launches_n) return h;
  uint64_t b = at(f, 0)->begin;
  return b < h ? b : h;
}
