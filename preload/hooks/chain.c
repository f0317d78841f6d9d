/*
 * Event chaining (opt-in, CUTRACE_EVENT_CHAIN=1): fewer than two events per
 * operation on busy streams.
 *
 * When a thread queues operation i+1 on the same stream right after operation i
 * and i's end event has not completed yet, i+1 will start exactly when i ends: its
 * start is i's end event, and no start event is recorded. This is only right when
 * nothing else runs on the stream in between, so chaining is restricted to:
 * - app-created non-blocking streams (no implicit legacy-stream synchronisation),
 *   used by one thread only (a second thread marks the stream shared for good);
 * - consecutive timed operations of that thread on that stream, with no barrier
 *   (cudaStreamWaitEvent, capture begin/end; a context-wide wait on any stream) in
 *   between;
 * - an end event still pending when the next operation is queued (when it has
 *   completed, the stream went idle and a start event is recorded as usual).
 * Work queued on the stream by paths the tracer does not see (driver-level
 * launches of other libraries, host functions) would be folded into the next
 * operation's time: hence opt-in.
 *
 * Event ownership: the launching thread keeps the end event of its last chainable
 * operation (keep_end); the next operation either uses it as its start (the poller
 * recycles it then) or hands it back through `release`. The poller processes a
 * thread's operations in order, so an event is recycled only after its last use.
 */
#include "hooks_internal.h"

int ctph_chain_on;

/* Context-wide waits so far (ctph_barrier_all): a barrier on every stream. */
static uint32_t barriers_all;

/* The calling thread's last chainable operation. */
static __thread struct {
  struct ctph_stream_state *state; /* its stream */
  CUevent held;                    /* its end event, kept for the next operation */
  uint32_t seq;                    /* the stream's barrier count then */
  uint32_t seq_all;                /* barriers_all then */
  int device, valid;
} chain;

/* 1 when the calling thread is, and stays, the stream's only user. */
static int sole_user(struct ctph_stream_state *st) {
  uint64_t me = ctp_tid(), owner = __atomic_load_n(&st->owner_tid, __ATOMIC_ACQUIRE);
  if (owner == me)
    return 1;
  if (!owner && __atomic_compare_exchange_n(&st->owner_tid, &owner, me, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
    return 1;
  if (owner != CTPH_SHARED)
    __atomic_store_n(&st->owner_tid, CTPH_SHARED, __ATOMIC_RELEASE);
  return 0;
}

int ctph_chain_start(ctph_call *c) {
  struct ctph_stream_state *st = c->state;
  if (!st || !st->chainable || !sole_user(st))
    return 0;
  if (!chain.valid || chain.state != st || !chain.held || chain.device != c->device ||
      chain.seq != __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE) ||
      chain.seq_all != __atomic_load_n(&barriers_all, __ATOMIC_ACQUIRE))
    return 0;
  if (ctph_drv.EventQuery(chain.held) != CUDA_ERROR_NOT_READY)
    return 0; /* the stream went idle: the next operation needs its own start */
  c->ev_start = chain.held;
  c->chained = 1;
  return 1;
}

void ctph_chain_prepare(const ctph_call *c, struct ctph_pending *p) {
  struct ctph_stream_state *st = c->state;
  p->start_shared = (uint8_t)c->chained;
  p->keep_end = st && st->chainable && st->owner_tid != CTPH_SHARED;
  if (!c->chained && chain.held) {
    p->release = chain.held; /* the previous end event: its last user is gone */
    p->release_device = (uint16_t)chain.device;
  }
}

void ctph_chain_commit(const ctph_call *c, const struct ctph_pending *p) {
  /* The held event went into p (as its start or as its release). */
  chain.held = p->keep_end ? p->end : NULL;
  chain.state = c->state;
  chain.device = c->device;
  chain.seq = c->state ? __atomic_load_n(&c->state->seq, __ATOMIC_ACQUIRE) : 0;
  chain.seq_all = __atomic_load_n(&barriers_all, __ATOMIC_ACQUIRE);
  chain.valid = p->keep_end;
}

void ctph_chain_break(void) { chain.valid = 0; }

void ctph_barrier_all(void) { __atomic_fetch_add(&barriers_all, 1, __ATOMIC_RELEASE); }
