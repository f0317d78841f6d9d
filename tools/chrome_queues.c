/*
 * dump --chrome --queues: one counter track per stream, "stream N queue", holding the
 * number of operations queued on the stream and not yet finished (HTA's queue length),
 * from each operation's call begin and GPU end (tools/queues.h). The counter changes
 * at every call begin (+1) and every operation end; it is written as the activities
 * arrive, so memory is the operations in flight per stream.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chrome_internal.h"

const chr_counter_kind chr_queue_counter = {"queue", "depth", 0};

/* The queue of one (device, stream) of the current file, and where its counter goes. */
typedef struct stream_queue {
  ct_queue q;
  uint64_t last_depth; /* the last counter value written (to skip repeats) */
  int written;
} stream_queue;

typedef struct counter_ctx {
  ct_chrome *c;
  stream_queue *sq;
  uint64_t device, stream;
} counter_ctx;

/* Writes one counter value (a "C" event) unless it repeats the last one. */
static void put_counter(void *user, uint64_t t, uint64_t depth) {
  counter_ctx *x = user;
  stream_queue *sq = x->sq;
  if (sq->written && sq->last_depth == depth) return;
  sq->written = 1;
  sq->last_depth = depth;
  ct_chrome *c = x->c;
  char name[96];
  if (c->file_index && !chr_multi(c))
    snprintf(name, sizeof name, "stream %llu (pid %llu) queue", (unsigned long long)x->stream,
             (unsigned long long)c->pid);
  else
    snprintf(name, sizeof name, "stream %llu queue", (unsigned long long)x->stream);
  c->enc->counter(c, &chr_queue_counter, chr_gpu_pid(c, x->device), name, t, depth);
}

void chr_queue_activity(ct_chrome *c, const ct_activity *a) {
  if (!c->opt.queues) return;
  if (!c->queues && !(c->queues = ct_map_new(sizeof(stream_queue)))) return;
  uint64_t key[2] = {a->device, a->stream};
  stream_queue *sq = ct_map_get(c->queues, key, sizeof key, NULL);
  if (!sq) return;
  counter_ctx x = {c, sq, a->device, a->stream};
  ct_queue_add(&sq->q, a->has_call ? a->call_begin_ns : a->start_ns, a->end_ns, put_counter, &x);
}

void chr_queues_finish(ct_chrome *c) {
  if (!c->queues) return;
  for (size_t i = 0; i < ct_map_count(c->queues); i++) {
    const void *k;
    stream_queue *sq = ct_map_entry(c->queues, i, &k, NULL);
    const uint64_t *key = k;
    counter_ctx x = {c, sq, key[0], key[1]};
    ct_queue_finish(&sq->q, put_counter, &x);
  }
  ct_map_free(c->queues);
  c->queues = NULL;
}
