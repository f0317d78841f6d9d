/*
 * The model's give-up rule for calls whose other half never comes (tools/model.c):
 * a call whose span was delivered and which promised GPU work (CT_API_TIMED) waits
 * for its GPU record, and a GPU record delivered without its call keeps the call's
 * detail for a span that may come late. When the record was dropped (a DROP record,
 * a lost frame) the wait never ends, and without a rule the calls-in-flight table
 * would grow with the number of such calls.
 *
 * The rule follows stream order: work on one stream completes in submission order,
 * and the model delivers GPU work in end order, so once a later call's GPU work on
 * the same (device, stream) was delivered, the record of an earlier call on it
 * could only still come as a late record (behind the reorder window). Such a call is
 * given up on (its entry freed, counted) once the stream's delivered work passed it
 * at least one reorder window of trace time earlier: records that late are already
 * out of order (delivered with late = 1), and would now be delivered without their
 * call. Only once the file has reported drops (a DROP record) or the reader met damage:
 * otherwise every record does come, and one can come later than that without being
 * lost (the poller emits a thread's GPU records in launch order, so a kernel queued
 * behind long work on another stream holds back that thread's later records), so on
 * clean traces nothing is given up and every output is as before. Memory: per stream,
 * the waiting calls of about one window (8 bytes each while nothing is given up).
 */
#ifndef CUTRACE_MODEL_WAITS_H
#define CUTRACE_MODEL_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "cutrace/format.h"
#include "model_calls.h"

/* One stream's progress and the calls that wait on it. */
typedef struct ct_wait_stream {
  uint64_t device, stream;  /* the key (used: 1 once set) */
  uint8_t used;
  uint64_t top_corr;        /* the highest corr of the stream's delivered GPU work */
  uint64_t mark_corr, mark_key; /* top_corr when GPU work ending at mark_key was delivered */
  uint64_t safe_corr;       /* calls below it were passed a window ago: given up on */
  uint64_t *q;              /* waiting calls' corrs, a ring, in the order they began to wait */
  size_t head, n, cap;
} ct_wait_stream;

/* The streams: zero-initialised is empty. */
typedef struct ct_waits {
  ct_wait_stream *a;
  size_t cap, n;            /* open addressing; cap a power of two (0: none yet) */
  ct_wait_stream *last;     /* the stream looked up last */
  uint64_t given_up;        /* calls given up on so far */
} ct_waits;

/* 1 when call e waits for a record that may never come: its span was delivered and its
 * GPU work promised but neither read nor delivered, or its GPU work was delivered
 * without the call. */
static inline int ct_call_waits(const ct_call *e) {
  return (e->span_done && !e->act_done && !e->gpu_seen && (e->flags & CT_API_TIMED)) ||
         (e->act_done && !e->has_call);
}

/* Notes that call corr, on (device, stream), waits (ct_call_waits). Returns 0, or -1
 * when out of memory (the call then just stays in flight). */
int ct_waits_add(ct_waits *w, uint64_t device, uint64_t stream, uint64_t corr);

/* GPU work of call corr on (device, stream), ending at key, was delivered, the reorder
 * window being window: advances the stream and, when may_give_up, gives up on (removes
 * from calls) the waiting calls the stream passed at least a window ago. */
void ct_waits_progress(ct_waits *w, ct_calls *calls, uint64_t device, uint64_t stream,
                       uint64_t corr, uint64_t key, uint64_t window, int may_give_up);

/* Frees the streams' memory. */
void ct_waits_free(ct_waits *w);

#endif
