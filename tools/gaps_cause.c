/*
 * GPU idle-time analysis: the cause of each gap (precedence in docs/gaps.md).
 */
#include "gaps_internal.h"

/* Whether an op on a stream other than `stream` ended within [b - tol, b + slack]: the
 * mapped GPU times of two streams' operations can disagree by an event's resolution. */
static int other_stream_ended_near(const devstate *d, uint64_t stream, uint64_t b, uint64_t tol,
                                   uint64_t slack) {
  unsigned lo = 0, hi = d->ends_n; /* ring ordered by end, oldest first */
  uint64_t from = b > tol ? b - tol : 0;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (d->ends[(d->ends_head + mid) % RECENT_ENDS].end < from) lo = mid + 1;
    else hi = mid;
  }
  for (unsigned i = lo; i < d->ends_n; i++) {
    const typeof(d->ends[0]) *e = &d->ends[(d->ends_head + i) % RECENT_ENDS];
    if (e->end > b + slack) break;
    if (e->stream != stream) return 1;
  }
  return 0;
}

/* What the launching thread's last call on op's stream before op's own call did to the
 * stream (STREAM_ROLE_*, NONE when not found): VALUE_WAIT held it on a memory value
 * (cuStreamWaitValue32/64, cuStreamBatchMemOp): the GPU then waited for a write by
 * another stream, the host or a peer, which the trace may not hold; EXT_WAIT on external
 * semaphores, signalled outside CUDA. Looks back over at most 64 of the thread's calls. */
static unsigned last_stream_role(const thstate *th, const opinfo *op) {
  unsigned seen = 0;
  for (unsigned i = th ? ring_skip_after(&th->calls, op->call_begin) : 0; th && i < th->calls.n && seen < 64;
       i++) {
    const span_ring_entry *e = ring_back(&th->calls, i);
    if (e->begin >= op->call_begin) continue; /* op's own call, or later */
    seen++;
    if (e->stream_role == STREAM_ROLE_NONE || e->stream != op->stream) continue;
    return e->stream_role;
  }
  return STREAM_ROLE_NONE;
}

/* How the launching thread spent a gap: in the tracer's own work, in allocation and
 * release calls (cudaMalloc, cudaFree, cuMemFree_v2, ...: a free that first waited for
 * the GPU counts here, not as a sync), in blocking calls (syncs, synchronous copies),
 * issuing work (launch calls, and the call of the op that ended the gap), and the rest
 * (outside CUDA or in other calls). alloc_name: the allocation call with the most time.
 * in_cuda: its time in any call but the tracer's (the gap less it is outside CUDA). */
typedef struct gap_use {
  uint64_t tracer, alloc, blocking, issuing, rest, in_cuda;
  const char *alloc_name;
} gap_use;

static gap_use thread_use(const thstate *th, uint64_t a, uint64_t b, const opinfo *op) {
  gap_use u = {0, 0, 0, 0, 0, 0, NULL};
  uint64_t sum = 0, alloc_best = 0;
  /* blocking calls and all calls as unions (union_add: the overlapping records of
   * targets polled in turn, blocking calls, count once) */
  uint64_t bb = 0, be = 0, ib = 0, ie = 0;
  for (unsigned i = th ? ring_skip_after(&th->calls, b) : 0; th && i < th->calls.n; i++) {
    const span_ring_entry *e = ring_back(&th->calls, i);
    if (e->end <= a) {
      /* older entries end before a too, unless one came out of end order (a TRACER
       * "stacks" record is written when its period ends, after later calls) */
      if (!th->calls.disorder) break;
      continue;
    }
    uint64_t ov = overlap(e->begin, e->end, a, b);
    if (!ov) continue;
    uint64_t cb = max_u64(e->begin, a), ce = min_u64(e->end, b);
    if (!e->is_tracer) union_add(&ib, &ie, &u.in_cuda, cb, ce);
    if (e->is_tracer) u.tracer += ov;
    else if (e->is_launch || (e->begin == op->call_begin && e->end == op->call_end)) u.issuing += ov;
    else if (e->is_alloc) {
      u.alloc += ov;
      if (ov > alloc_best) {
        alloc_best = ov;
        u.alloc_name = e->name;
      }
    } else if (e->is_blocking) {
      union_add(&bb, &be, &u.blocking, cb, ce);
      continue; /* in sum below */
    } else continue;
    sum += ov;
  }
  union_add(&bb, &be, &u.blocking, 0, 0);
  union_add(&ib, &ie, &u.in_cuda, 0, 0);
  sum += u.blocking;
  u.rest = b - a > sum ? b - a - sum : 0;
  return u;
}

/* Counts a device gap [a, b] caused by allocation calls, for the finding (ct_gaps_device_findings). */
static void note_alloc_gap(devstate *d, uint64_t a, uint64_t b, const gap_use *u) {
  if (!d->al_count++) d->al_first = a;
  d->al_last = b;
  d->al_idle += b - a;
  d->al_cpu += u->alloc;
  if (!u->alloc_name) return;
  unsigned k = 0, n = sizeof d->al_names / sizeof d->al_names[0];
  while (k < n && d->al_names[k] && d->al_names[k] != u->alloc_name) k++;
  if (k == n) return; /* more than four kinds of allocation calls: the first four compete */
  d->al_names[k] = u->alloc_name;
  d->al_name_ns[k] += u->alloc;
}

/* The cause of the gap [a, b] of tracker t ended by op (precedence in docs/gaps.md);
 * *outside_cuda: for host_wait, the launching thread's time outside CUDA calls during
 * the gap (the gap less its calls' time there; the tracer's spans count as outside), 0
 * for the other causes. */
enum ct_gap_cause ct_gaps_classify(fstate *f, const tracker *t, uint64_t a, uint64_t b,
                                  const opinfo *op, uint64_t *outside_cuda) {
  *outside_cuda = 0;
  uint64_t thr = f->g->o.launch_threshold_ns;
  if (b - a < thr) { /* after a little sync: the queue it drained, refilled at once */
    if (t->stream == UINT64_MAX && !t->silent) ct_gaps_findings_on_sync_gap(f, t->dev, a, b, thr);
    return CT_GAP_LAUNCH_OVERHEAD;
  }
  if (!op->has_call) return CT_GAP_OTHER;
  /* Fed: the call began before the GPU went idle, or the op then sat queued longer than
   * the CPU was late with it: what the GPU waited for at the end was not the CPU. */
  int queued_longer = op->call_end < b && b - op->call_end > (op->call_end > a ? op->call_end - a : 0);
  if (op->call_begin < a || queued_longer) {
    unsigned role = last_stream_role(ct_gaps_find_thread(f, op->tid), op);
    if (role == STREAM_ROLE_EXT_WAIT) return CT_GAP_EXTERNAL_WAIT; /* a producer outside CUDA */
    if (t->stream != UINT64_MAX &&
        other_stream_ended_near(t->dev, t->stream, b, max_u64(thr, OTHER_STREAM_SLACK_NS), thr))
      return CT_GAP_OTHER_STREAM;
    if (role == STREAM_ROLE_VALUE_WAIT) return CT_GAP_OTHER_STREAM;
    if (op->call_begin < a && op->call_end > a) return CT_GAP_LAUNCH_OVERHEAD;
    return CT_GAP_OTHER;
  }
  /* the CPU was late: the cause is what the launching thread spent most of the gap on */
  gap_use u = thread_use(ct_gaps_find_thread(f, op->tid), a, b, op);
  if (u.tracer >= u.alloc && u.tracer >= u.blocking && u.tracer >= u.issuing && u.tracer >= u.rest)
    return CT_GAP_TRACER;
  if (u.alloc >= u.blocking && u.alloc >= u.issuing && u.alloc >= u.rest) {
    if (t->stream == UINT64_MAX && !t->silent) note_alloc_gap(t->dev, a, b, &u);
    return CT_GAP_ALLOC;
  }
  if (u.blocking >= u.issuing && u.blocking >= u.rest) {
    if (t->stream == UINT64_MAX && !t->silent) ct_gaps_findings_on_sync_gap(f, t->dev, a, b, UINT64_MAX);
    return CT_GAP_SYNC;
  }
  if (u.issuing >= u.rest) { /* as for a short gap: after a little sync, its cost */
    if (t->stream == UINT64_MAX && !t->silent) ct_gaps_findings_on_sync_gap(f, t->dev, a, b, thr);
    return CT_GAP_LAUNCH_OVERHEAD;
  }
  *outside_cuda = b - a > u.in_cuda ? b - a - u.in_cuda : 0;
  return CT_GAP_HOST_WAIT;
}
