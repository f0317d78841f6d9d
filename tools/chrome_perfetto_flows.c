/*
 * Flows of the Perfetto encoder (chrome_perfetto.h, docs/dump.md "Flows"): a call's
 * slice carries flow_ids only once the flow's end, its GPU work's slice with
 * terminating_flow_ids, is written too. A call is usually written before its GPU work
 * is known (the model delivers both in end order), so a slice that starts a flow whose
 * end is not written yet waits in a queue, and so does every later slice of its track
 * (a track's slices keep their order in the file: trace_processor breaks ties of
 * timestamps by it, chrome_order.c). Its interned strings are written at once, in a
 * packet of their own, so that later packets can use them.
 *
 * The queue's head is written as soon as it is decided: with flow_ids once its flow's
 * end was written; without them once it waited too long (its end STALE_NS behind the
 * newest slice written, as report_inner.c gives up on a library call's kernels; more
 * than QUEUE_MAX slices or QUEUE_MAX_BYTES queued), or at the end of its input file or
 * of the document (a GPU record lost, or outside --from/--to; a file's flow ids are
 * its own). Before the interning state is cleared (every INTERN_MAX distinct strings)
 * everything queued is written, flows not ended yet with their ids (their ends are
 * likely still to come; the queued events use the old table's iids).
 *
 * Memory: the queue's bounds, and the ids of flows whose end came before their start
 * (a synchronous copy ends before its call returns), at most ENDED_MAX.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_perfetto.h"

#define QUEUE_MAX 65536 /* CUTRACE_PERFETTO_FLOW_QUEUE_MAX: fewer, for the tests */
#define QUEUE_MAX_BYTES (64u << 20)
#define ENDED_MAX 65536
#define STALE_NS 2000000000ull /* the model's largest reorder window */

/* A slice (or instant) waiting to be written. */
typedef struct pf_item {
  uint64_t flow;            /* the flow it starts (0: none) */
  uint64_t begin_ns, end_ns, track;
  int instant, decided, with_flow;
  uint8_t *event;           /* its TrackEvent, without flow_ids */
  size_t n;
} pf_item;

struct pf_queue {
  pf_item *a;
  size_t first, n, cap;     /* items a[first .. first + n) */
  uint64_t base;            /* the sequence number of a[0] */
  size_t bytes, max;        /* bytes of the events queued; the most items queued */
  uint64_t newest;          /* the latest end of a slice closed */
  ct_corr_table waiting;    /* flow id -> uint64_t sequence number of its item */
  ct_corr_table ended;      /* flow ids whose end was written before their start */
  uint64_t *per_track;      /* items queued per track uuid (uuids are small numbers) */
  size_t ntracks;
};

/* The queue, made on first use (NULL when out of memory). */
static pf_queue *queue_of(chr_perfetto *pf) {
  if (pf->queue) return pf->queue;
  pf_queue *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  const char *max = getenv("CUTRACE_PERFETTO_FLOW_QUEUE_MAX");
  q->max = max && atoi(max) > 0 ? (size_t)atoi(max) : QUEUE_MAX;
  ct_corr_init(&q->waiting, sizeof(uint64_t));
  ct_corr_init(&q->ended, 1);
  return pf->queue = q;
}

/* The number of items of track queued (NULL when out of memory). */
static uint64_t *track_count(pf_queue *q, uint64_t track) {
  if (track >= q->ntracks) {
    size_t n = track + 64 > q->ntracks * 2 ? track + 64 : q->ntracks * 2;
    uint64_t *na = realloc(q->per_track, n * sizeof *na);
    if (!na) return NULL;
    memset(na + q->ntracks, 0, (n - q->ntracks) * sizeof *na);
    q->per_track = na;
    q->ntracks = n;
  }
  return &q->per_track[track];
}

/* 1 when items of track are queued. */
static int track_queued(const pf_queue *q, uint64_t track) {
  return q && q->n && track < q->ntracks && q->per_track[track];
}

/* Writes a slice's packets: its begin (the strings it interned when interned is not
 * NULL, its event, with flow_ids when flow) and, unless an instant, its end. event is
 * changed (flow_ids appended). */
static void write_slice(ct_chrome *c, const pb_buf *interned, pb_buf *event, uint64_t flow,
                        uint64_t begin_ns, uint64_t end_ns, uint64_t track, int instant) {
  chr_perfetto *pf = c->pf;
  if (flow) pb_fixed64(event, TE_FLOW_IDS, flow);
  pb_uint(&pf->packet, PKT_TIMESTAMP, begin_ns);
  pf_packet_start(pf, 1);
  if (interned && interned->n) pb_message(&pf->packet, PKT_INTERNED_DATA, interned);
  pb_message(&pf->packet, PKT_TRACK_EVENT, event);
  pf_write_packet(c);
  if (instant) return;
  pb_clear(&pf->scratch);
  pb_uint(&pf->scratch, TE_TYPE, TYPE_SLICE_END);
  pb_uint(&pf->scratch, TE_TRACK_UUID, track);
  pb_uint(&pf->packet, PKT_TIMESTAMP, end_ns);
  pf_packet_start(pf, 0);
  pb_message(&pf->packet, PKT_TRACK_EVENT, &pf->scratch);
  pf_write_packet(c);
}

/* Writes the queue's head and drops it; an undecided one with its flow id when
 * optimistic. */
static void pop(ct_chrome *c, pf_queue *q, int optimistic) {
  pf_item *it = &q->a[q->first];
  if (it->flow && !it->decided) {
    uint64_t *seq = ct_corr_find(&q->waiting, it->flow, 0);
    if (seq) ct_corr_remove(&q->waiting, seq);
  }
  int with_flow = it->with_flow || (optimistic && !it->decided);
  pb_clear(&c->pf->scratch);
  pb_raw(&c->pf->scratch, it->event, it->n);
  write_slice(c, NULL, &c->pf->scratch, with_flow ? it->flow : 0, it->begin_ns, it->end_ns,
              it->track, it->instant);
  uint64_t *count = track_count(q, it->track);
  if (count && *count) --*count;
  q->bytes -= it->n;
  free(it->event);
  q->first++;
  if (!--q->n) { /* empty: start again at the front */
    q->base += q->first;
    q->first = 0;
  }
}

/* Writes the decided items at the head, and undecided ones too while the queue is over
 * its bounds (all: every item; optimistic: see pop). */
static void release(ct_chrome *c, pf_queue *q, int all, int optimistic) {
  while (q->n && (all || q->a[q->first].decided || q->a[q->first].end_ns + STALE_NS < q->newest ||
                  q->n > q->max || q->bytes > QUEUE_MAX_BYTES))
    pop(c, q, optimistic);
}

void pf_flows_flush(ct_chrome *c, int optimistic) {
  if (c->pf->queue) release(c, c->pf->queue, 1, optimistic);
}

/* Appends the open slice to the queue; 0, or -1 when out of memory. */
static int push(ct_chrome *c, pf_queue *q, uint64_t flow, int decided) {
  chr_perfetto *pf = c->pf;
  if (q->first + q->n == q->cap) {
    if (q->first) { /* move the items to the front */
      memmove(q->a, q->a + q->first, q->n * sizeof *q->a);
      q->base += q->first;
      q->first = 0;
    } else {
      size_t ncap = q->cap ? q->cap * 2 : 256;
      pf_item *na = realloc(q->a, ncap * sizeof *na);
      if (!na) return -1;
      q->a = na;
      q->cap = ncap;
    }
  }
  uint64_t *count = track_count(q, pf->track);
  uint8_t *copy = malloc(pf->event.n ? pf->event.n : 1);
  uint64_t *seq = flow && !decided ? ct_corr_find(&q->waiting, flow, 1) : NULL;
  if (!count || !copy || (flow && !decided && !seq)) {
    free(copy);
    return -1;
  }
  memcpy(copy, pf->event.p, pf->event.n);
  size_t at = q->first + q->n;
  q->a[at] = (pf_item){flow, pf->begin_ns, pf->end_ns, pf->track, pf->instant, decided,
                       decided && flow, copy, pf->event.n};
  if (seq) *seq = q->base + at;
  ++*count;
  q->n++;
  q->bytes += pf->event.n;
  return 0;
}

void pf_flows_close(ct_chrome *c, uint64_t flow) {
  chr_perfetto *pf = c->pf;
  pf_queue *q = flow || pf->queue ? queue_of(pf) : NULL;
  if (q && pf->end_ns > q->newest) q->newest = pf->end_ns;
  int decided = 1;
  if (flow && q) {
    void *e = ct_corr_find(&q->ended, flow, 0);
    if (e) ct_corr_remove(&q->ended, e); /* its end is written: drawn */
    else decided = 0;
  }
  if (decided && !track_queued(q, pf->track)) { /* nothing to wait for: now */
    write_slice(c, &pf->interned, &pf->event, flow, pf->begin_ns, pf->end_ns, pf->track,
                pf->instant);
    return;
  }
  if (pf->interned.n) { /* its strings now, for the packets written before it */
    pf_packet_start(pf, 1);
    pb_message(&pf->packet, PKT_INTERNED_DATA, &pf->interned);
    pf_write_packet(c);
  }
  if (push(c, q, flow, decided) < 0) { /* out of memory: now, without the flow */
    pf->failed = 1;
    write_slice(c, NULL, &pf->event, 0, pf->begin_ns, pf->end_ns, pf->track, pf->instant);
    return;
  }
  release(c, q, 0, 0);
}

void pf_flow_end(ct_chrome *c, uint64_t flow) {
  pf_queue *q = queue_of(c->pf);
  if (!q) return;
  uint64_t *seq = ct_corr_find(&q->waiting, flow, 0);
  if (seq) { /* its start waits in the queue: drawn; written by the next release */
    pf_item *it = &q->a[*seq - q->base];
    it->decided = it->with_flow = 1;
    ct_corr_remove(&q->waiting, seq);
    return;
  }
  if (q->ended.n >= ENDED_MAX) { /* starts never written (outside the window): forget */
    ct_corr_free(&q->ended);
    ct_corr_init(&q->ended, 1);
  }
  ct_corr_find(&q->ended, flow, 1);
}

void pf_flows_release(ct_chrome *c) {
  if (c->pf->queue) release(c, c->pf->queue, 0, 0);
}

void pf_flows_file_end(ct_chrome *c) {
  pf_queue *q = c->pf->queue;
  if (!q) return;
  release(c, q, 1, 0);
  q->newest = 0;
  ct_corr_free(&q->ended);
  ct_corr_init(&q->ended, 1);
}

void pf_flows_free(chr_perfetto *pf) {
  pf_queue *q = pf->queue;
  if (!q) return;
  for (size_t i = 0; i < q->n; i++) free(q->a[q->first + i].event);
  free(q->a);
  ct_corr_free(&q->waiting);
  ct_corr_free(&q->ended);
  free(q->per_track);
  free(q);
  pf->queue = NULL;
}
