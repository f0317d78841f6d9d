/*
 * The queue of one CUDA stream rebuilt from a trace: which operations were queued and
 * not yet finished at any time, from each operation's call begin (when it was about to
 * be queued) and GPU end. Work on a stream runs in order and the trace model delivers
 * GPU records in end order, so the operations still queued form a ring ascending in
 * both call begin and end; memory is the operations in flight (CUDA queues at most
 * about 1024 per stream). A record the model delivered late (ct_activity.late: its end
 * before ends already delivered) takes its place in end order, so it stops counting
 * when it ended; it is counted from the latest begin already told (the depth told
 * before, since its call began, missed it), or not at all when it ended by then. Used by report's streams table (the depth each call found)
 * and dump --chrome's queue counter tracks (every change of the depth).
 */
#ifndef CUTRACE_QUEUES_H
#define CUTRACE_QUEUES_H

#include <stdint.h>

/* One queued operation: its call's begin and its GPU end. */
typedef struct ct_queued_op {
  uint64_t begin, end;
} ct_queued_op;

/* A stream's queue; zero it to start. */
typedef struct ct_queue {
  ct_queued_op *ops;   /* ring of the operations queued at the latest begin */
  uint32_t cap, head, n;
  uint64_t told;       /* the latest begin told */
} ct_queue;

/* Told each change of a queue's depth: from time t on, depth operations are queued. */
typedef void (*ct_queue_fn)(void *user, uint64_t t, uint64_t depth);

/*
 * Adds an operation whose call began at begin and which ended on the GPU at end, in
 * delivery (end) order. First forgets the operations that ended by begin (telling fn,
 * when not NULL, the depth after each of those ends), then tells fn the depth at
 * begin. Returns that depth (this operation included), or 0 when out of memory (the
 * operation is then not queued). A begin earlier than an earlier operation's (calls
 * from several threads) is counted as if it came at that later begin. An operation
 * that ends before operations already queued (delivered late) goes in its place by
 * end, counted from the latest begin told: the depth returned is 1 + the operations
 * queued ahead of it; one that ended by the latest begin told is not queued (depth 1).
 */
uint64_t ct_queue_add(ct_queue *q, uint64_t begin, uint64_t end, ct_queue_fn fn, void *user);

/* Empties the queue at the end of a file: tells fn (when not NULL) the depth after each
 * remaining end, then frees the ring. */
void ct_queue_finish(ct_queue *q, ct_queue_fn fn, void *user);

#endif
