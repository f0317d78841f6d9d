/*
 * NVTX ranges with the GPU work launched inside them (report.h: ct_range_each), behind
 * `cutrace report --by range` (per range name: instances, CPU time, GPU work; see
 * docs/report.md) and the gpu_user_annotation slices of `cutrace dump --chrome`.
 *
 * It reads the records in file order with the reader, not through the model: a
 * thread's records reach the file in the order it emitted them, so the calls made
 * inside a range come before the RANGE record written when the range closed. Each
 * thread queues the GPU-timed calls made since its last outermost (depth 0) range
 * closed (range_queue.h: every one of them, the older ones in a temporary file); a
 * RANGE record claims the queued calls that began inside it, and an outermost one then
 * empties the queue (ranges nest per thread, so nothing later can enclose those calls).
 * A queued call holds its GPU work once its GPU record was read; until then (and for a
 * GPU record read before its call) an entry by corr holds what is known, with the
 * ranges that claimed the call. A range instance is handed over once the GPU records of
 * all the calls it claimed were read (they may come before or after it). A library call
 * timed by its child launches (CT_API_INNER_TIMED) is not queued: its children are.
 * Memory: CT_RANGE_QUEUE_MEM queued calls per thread, the calls whose GPU work is
 * pending and the ranges waiting for it.
 * Given the extents of each thread's ranges (ct_range_each_within: dump has read them
 * already), a call that no range can claim is not kept at all; its GPU record is
 * recognised by a ring of the corrs skipped (SKIP_RING, indexed by corr; cleared a block
 * at a time when first written, so that a file pays for what it uses). Without them,
 * when a thread's queue is about to go to its temporary file while no range has
 * looked into it since it was last emptied (a thread making calls outside any range,
 * or inside one long range), the extents are read then, once (the RANGE records only:
 * read_extents): the calls no range can claim leave the queues (a thread without
 * ranges keeps none) and later ones are not kept, so the file holds only calls that a
 * range may still claim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "range_queue.h"
#include "reader.h"
#include "report.h"

#define MAX_LEVELS 8  /* ranges credited per call: the innermost 8 */
#define AHEAD 16      /* records read ahead of their handling (see ct_range_each) */
#define INLINE_LEVELS 2 /* of those, kept in the call's entry (the rest allocated apart) */
#define SKIP_RING 65536 /* corrs of calls not kept whose GPU record may still come */
#define SKIP_BLOCK 64   /* entries of the ring cleared together, on first write */

/* A range instance waiting for the GPU work of the calls it claimed. */
typedef struct range_inst {
  ct_range_span r;
  uint64_t pending;               /* claimed calls whose GPU record is still to come */
  struct range_inst *prev, *next; /* the waiting list */
} range_inst;

/* A call by corr, while only one of its API and GPU records was read: a queued call
 * whose GPU record is to come (with the ranges that claimed it), or a GPU record whose
 * call is to come. */
typedef struct call_entry {
  uint64_t device, stream, start, end; /* its GPU work (act_done) */
  struct ct_range_queue *q;   /* queued: its thread's queue, */
  uint64_t seq;               /* and its place there */
  uint8_t act_done;           /* its GPU record came first */
  uint8_t queued;             /* its call was queued; its GPU record is to come */
  uint8_t is_copy;            /* a copy or set (else a kernel, GEMM or graph) */
  uint8_t ninst;              /* ranges that claimed it */
  uint8_t unselected;         /* its GPU work is not selected (act_done) */
  range_inst *inst[INLINE_LEVELS];
  range_inst **more;          /* the claims past INLINE_LEVELS, NULL when none */
} call_entry;

/* The i-th range that claimed e. */
static range_inst *claim_at(const call_entry *e, unsigned i) {
  return i < INLINE_LEVELS ? e->inst[i] : e->more[i - INLINE_LEVELS];
}

/* Records that ri claimed e (ignored past MAX_LEVELS). Returns 0, -1 out of memory. */
static int add_claim(call_entry *e, range_inst *ri) {
  if (e->ninst == MAX_LEVELS) return 0;
  if (e->ninst < INLINE_LEVELS) {
    e->inst[e->ninst++] = ri;
    return 0;
  }
  if (!e->more && !(e->more = malloc((MAX_LEVELS - INLINE_LEVELS) * sizeof *e->more))) return -1;
  e->more[e->ninst++ - INLINE_LEVELS] = ri;
  return 0;
}

/* Removes e from the table. */
static void remove_call(ct_corr_table *calls, call_entry *e) {
  free(e->more);
  ct_corr_remove(calls, e);
}

/* Where each stream's display of GPU work stands (see credit). */
typedef struct stream_pos {
  uint64_t last_start, last_end;
} stream_pos;

typedef struct ranges_state {
  ct_reader *rd;
  ct_range_fn fn;
  void *user;
  ct_corr_table calls; /* corr -> call_entry */
  ct_map *threads;     /* tid -> ct_range_queue (slots stay in place) */
  uint64_t last_tid;   /* the thread of the last call queued, */
  ct_range_queue *last_q; /* and its queue (NULL: none yet) */
  ct_map *streams;     /* (device, stream) -> stream_pos */
  range_inst waiting;  /* list head */
  uint64_t queued_in_memory; /* calls in the threads' queues' memory */
  uint64_t lost;
  int oom, file_failed;
  int window_known;    /* --from/--to resolved against the trace's start */
  uint64_t from, to;   /* ranges outside [from, to] are not handed over */
  const ct_select *select;      /* --device, --stream, --kernel (NULL: all GPU work) */
  ct_select_cache select_cache;
  ct_map *extents;     /* tid -> ct_range_extent, or NULL: every timed call is kept */
  struct skip_ring *skipped; /* with extents: the corrs of calls not kept */
  const char *path;    /* the file, for read_extents */
  ct_map *own_extents; /* the extents read_extents read (freed at the end) */
  int extents_tried;   /* read_extents was called */
} ranges_state;

/* The corrs of calls not kept, by corr % SKIP_RING (0: none); a block of SKIP_BLOCK
 * entries is cleared when first written, read as empty before. */
typedef struct skip_ring {
  uint64_t live[SKIP_RING / SKIP_BLOCK / 64]; /* bit b: block b cleared */
  uint64_t corr[SKIP_RING];
} skip_ring;

/* A new, empty ring (its entries not cleared yet), or NULL when out of memory. */
static skip_ring *skip_ring_new(void) {
  skip_ring *r = malloc(sizeof *r);
  if (r) memset(r->live, 0, sizeof r->live);
  return r;
}

/* Whether corr is in the ring. */
static int skip_ring_has(const skip_ring *r, uint64_t corr) {
  size_t i = corr % SKIP_RING, b = i / SKIP_BLOCK;
  return ((r->live[b / 64] >> (b % 64)) & 1) && r->corr[i] == corr;
}

/* Sets corr's entry to value (corr, or 0 to forget it). */
static void skip_ring_set(skip_ring *r, uint64_t corr, uint64_t value) {
  size_t i = corr % SKIP_RING, b = i / SKIP_BLOCK;
  if (!((r->live[b / 64] >> (b % 64)) & 1)) {
    memset(&r->corr[b * SKIP_BLOCK], 0, SKIP_BLOCK * sizeof r->corr[0]);
    r->live[b / 64] |= 1ull << (b % 64);
  }
  r->corr[i] = value;
}

/* Hands r over and frees it. */
static void hand_over(ranges_state *s, range_inst *r) {
  if (r->r.end_ns >= s->from && r->r.begin_ns <= s->to) s->fn(s->user, &r->r);
  if (r->prev) {
    r->prev->next = r->next;
    r->next->prev = r->prev;
  }
  free(r);
}

/* Adds a call's GPU work (done) to a range: totals, and its stream's extent. */
static void credit(range_inst *ri, const ct_queued_call *e) {
  if (e->unselected) return; /* the range's GPU work is the selection's */
  ct_range_span *r = &ri->r;
  r->gpu_ns += e->end > e->start ? e->end - e->start : 0;
  r->activities++;
  r->kernels += !e->is_copy;
  unsigned i = 0;
  while (i < r->nstreams && (r->streams[i].device != e->device || r->streams[i].stream != e->stream))
    i++;
  if (i == r->nstreams) {
    if (i == CT_RANGE_STREAMS) return;
    r->streams[r->nstreams++] = (struct ct_range_stream){e->device, e->stream, e->start, e->end};
    return;
  }
  if (e->start < r->streams[i].start_ns) r->streams[i].start_ns = e->start;
  if (e->end > r->streams[i].end_ns) r->streams[i].end_ns = e->end;
}

/* 1 when no range of the extents can claim a call of tid beginning at begin. */
static int unclaimable(ranges_state *s, uint64_t tid, uint64_t begin) {
  const ct_range_extent *x = ct_map_get(s->extents, &tid, sizeof tid, NULL);
  return x && (!x->known || begin < x->begin_ns || begin > x->end_ns);
}

/* Forgets call corr, which no range can claim: its entry if its GPU record came
 * first, else the record when it comes (by the skip ring). */
static void skip_call(ranges_state *s, uint64_t corr) {
  call_entry *e = ct_corr_find(&s->calls, corr, 0);
  if (e) remove_call(&s->calls, e);
  else skip_ring_set(s->skipped, corr, corr);
}

/* Reads the extents of every thread's ranges (the RANGE records alone) into a map of
 * its own, and uses them from now on: what no range can claim leaves the queues.
 * Nothing changes when the file cannot be read or memory is short. */
static void read_extents(ranges_state *s) {
  s->extents_tried = 1;
  char msg[256];
  ct_reader *rd = ct_reader_open(s->path, msg, sizeof msg);
  ct_map *x = ct_map_new(sizeof(ct_range_extent));
  skip_ring *skipped = skip_ring_new();
  int ok = rd && x && skipped;
  ct_record rec;
  if (ok) ct_reader_skip_kinds(rd, ~(1ull << CT_KIND_RANGE)); /* not even decoded */
  while (ok && ct_reader_next(rd, &rec))
    if (rec.kind == CT_KIND_RANGE && ct_range_extent_add(x, &rec.u.range) < 0) ok = 0;
  if (rd) ct_reader_close(rd);
  if (!ok) {
    ct_map_free(x);
    free(skipped);
    return;
  }
  s->extents = s->own_extents = x;
  s->skipped = skipped;
  for (size_t i = 0; i < ct_map_count(s->threads); i++) {
    const void *key;
    size_t len;
    uint64_t tid;
    ct_range_queue *q = ct_map_entry(s->threads, i, &key, &len);
    memcpy(&tid, key, sizeof tid);
    const ct_range_extent *e = ct_map_get(x, &tid, sizeof tid, NULL);
    size_t before = q->n;
    if (e && !e->known) ct_range_queue_clear(q); /* no range on the thread */
    else if (e && ct_range_queue_drop_before(q, e->begin_ns) < 0) s->file_failed = s->oom = 1;
    s->queued_in_memory -= before - q->n;
  }
}

static void on_api(ranges_state *s, const struct ct_api *a) {
  if (!a->corr || !(a->flags & CT_API_TIMED) || (a->flags & CT_API_INNER_TIMED)) return;
  ct_range_queue *q = s->last_q && s->last_tid == a->tid
                          ? s->last_q : ct_map_get(s->threads, &a->tid, sizeof a->tid, NULL);
  if (!q) {
    s->oom = 1;
    return;
  }
  /* its queue about to go to the file, no range looking into it: is it worth keeping? */
  if (!s->extents && !s->extents_tried && q->n == q->cap && q->cap >= CT_RANGE_QUEUE_MEM &&
      !q->claims)
    read_extents(s);
  if (s->extents && unclaimable(s, a->tid, a->begin_ns)) {
    skip_call(s, a->corr);
    return;
  }
  s->last_tid = a->tid;
  s->last_q = q;
  ct_queued_call c = {.begin = a->begin_ns, .corr = a->corr};
  call_entry *e = ct_corr_find(&s->calls, a->corr, 1); /* new, unless its GPU record came */
  if (!e) {
    s->oom = 1;
    return;
  }
  if (e->act_done) { /* its GPU record came first: the call is queued done */
    c.done = 1;
    c.is_copy = e->is_copy;
    c.unselected = e->unselected;
    c.device = e->device;
    c.stream = e->stream;
    c.start = e->start;
    c.end = e->end;
    remove_call(&s->calls, e);
    e = NULL;
  }
  uint64_t seq, forgotten = 0;
  size_t before = q->n;
  int rc = ct_range_queue_push(q, &c, &seq, &forgotten);
  s->queued_in_memory += q->n - before;
  if (rc < 0) {
    if (e) remove_call(&s->calls, e);
    s->oom = 1;
    return;
  }
  if (rc > 0) { /* no temporary file: the oldest calls lose their attribution, counted */
    s->lost += forgotten;
    s->file_failed = 1;
  }
  if (!e) return;
  e->queued = 1;
  e->q = q;
  e->seq = seq;
}

/* A range claiming the queued calls that began inside it (ct_range_queue_claim). */
typedef struct claim_ctx {
  ranges_state *s;
  range_inst *ri;
} claim_ctx;

static void claim_call(void *user, ct_queued_call *c) {
  claim_ctx *k = user;
  if (c->ninst == MAX_LEVELS) return;
  if (c->done) {
    credit(k->ri, c);
    c->ninst++;
    return;
  }
  call_entry *e = ct_corr_find(&k->s->calls, c->corr, 0);
  if (!e || !e->queued) { /* (its entry could not be made: out of memory) */
    k->s->oom = 1;
    return;
  }
  if (e->ninst == MAX_LEVELS) return;
  if (add_claim(e, k->ri) < 0) {
    k->s->oom = 1;
    return;
  }
  c->ninst++;
  k->ri->pending++;
}

/* rg's name is name (len bytes), looked up when the record was read. */
static void on_range(ranges_state *s, const struct ct_range *rg, const char *name, size_t len) {
  range_inst *ri = calloc(1, sizeof *ri);
  if (!ri) {
    s->oom = 1;
    return;
  }
  ri->r.tid = rg->tid;
  ri->r.begin_ns = rg->begin_ns;
  ri->r.end_ns = rg->end_ns;
  ri->r.depth = rg->depth;
  ri->r.domain = rg->domain;
  ri->r.flags = rg->flags;
  ri->r.name = name;
  ri->r.name_len = len;
  ct_range_queue *q = ct_map_get(s->threads, &rg->tid, sizeof rg->tid, NULL);
  if (q) {
    claim_ctx k = {s, ri};
    if (ct_range_queue_claim(q, rg->begin_ns, rg->end_ns, rg->depth == 0, claim_call, &k) < 0)
      s->file_failed = s->oom = 1;
    if (rg->depth == 0) { /* nothing later can enclose the queued calls */
      s->queued_in_memory -= q->n;
      ct_range_queue_clear(q);
    }
  }
  if (!ri->pending) {
    hand_over(s, ri);
    return;
  }
  ri->next = s->waiting.next;
  ri->prev = &s->waiting;
  ri->next->prev = ri;
  s->waiting.next = ri;
}

/* 1 when the selection (s->select) takes g: by its device, stream and name (a record
 * without a name is named by its type, as the model names it without its call). */
static int selected(ranges_state *s, const struct ct_gpu *g) {
  const char *name = g->name ? ct_reader_string(s->rd, g->name, NULL) : NULL;
  if (!name)
    name = g->type == CT_GPU_MEMCPY ? "memcpy" : g->type == CT_GPU_MEMSET ? "memset"
           : g->type == CT_GPU_GRAPH ? "graph" : "";
  return ct_select_activity(s->select, &s->select_cache, g->device, g->stream, name);
}

static void on_gpu(ranges_state *s, const struct ct_gpu *g) {
  if (!g->corr) return;
  int skipped = s->skipped && skip_ring_has(s->skipped, g->corr);
  call_entry *e = skipped ? NULL : ct_corr_find(&s->calls, g->corr, 1);
  if (!e && !skipped) {
    s->oom = 1;
    return;
  }
  if (e && e->act_done) return;
  uint64_t start = g->start_ns, end = g->end_ns;
  /* Work on one stream runs in order: a start a little before the previous end on the
   * stream is timer error, shown from that end (as dump --chrome shows the slice). */
  uint64_t key[2] = {g->device, g->stream};
  stream_pos *sp = ct_map_get(s->streams, key, sizeof key, NULL);
  if (sp && sp->last_end && start > sp->last_start && start < sp->last_end &&
      end >= sp->last_end)
    start = sp->last_end;
  if (sp) *sp = (stream_pos){start, end};
  if (skipped) { /* no range claims it: only its stream's position mattered */
    skip_ring_set(s->skipped, g->corr, 0);
    return;
  }
  ct_queued_call work = {.device = g->device, .stream = g->stream, .start = start, .end = end,
                         .is_copy = g->type == CT_GPU_MEMCPY || g->type == CT_GPU_MEMSET,
                         .unselected = s->select && !selected(s, g)};
  if (!e->queued) { /* its call is to come: kept until then */
    e->act_done = 1;
    e->is_copy = work.is_copy;
    e->unselected = work.unselected;
    e->device = work.device;
    e->stream = work.stream;
    e->start = work.start;
    e->end = work.end;
    return;
  }
  range_inst *done[MAX_LEVELS];
  unsigned ndone = 0;
  for (unsigned i = 0; i < e->ninst; i++) {
    range_inst *ri = claim_at(e, i);
    credit(ri, &work);
    if (--ri->pending == 0) done[ndone++] = ri;
  }
  /* a call still queued is done now, for the ranges that may claim it later */
  if (ct_range_queue_has(e->q, e->seq) && ct_range_queue_complete(e->q, e->seq, &work) < 0)
    s->file_failed = s->oom = 1;
  remove_call(&s->calls, e);
  for (unsigned i = 0; i < ndone; i++) hand_over(s, done[i]);
}

int ct_range_extent_add(ct_map *extents, const struct ct_range *r) {
  ct_range_extent *x = ct_map_get(extents, &r->tid, sizeof r->tid, NULL);
  if (!x) return -1;
  if (!x->known || r->begin_ns < x->begin_ns) x->begin_ns = r->begin_ns;
  if (!x->known || r->end_ns > x->end_ns) x->end_ns = r->end_ns;
  x->known = 1;
  return 0;
}

int ct_range_each(const char *path, ct_range_fn fn, void *user, ct_model_stats *st,
                  struct ct_process *proc_out, uint64_t *lost) {
  return ct_range_each_within(path, fn, user, st, proc_out, lost, NULL);
}

int ct_range_each_within(const char *path, ct_range_fn fn, void *user, ct_model_stats *st,
                         struct ct_process *proc_out, uint64_t *lost, ct_map *extents) {
  memset(st, 0, sizeof *st);
  if (proc_out) memset(proc_out, 0, sizeof *proc_out);
  ranges_state s = {.fn = fn, .user = user, .to = UINT64_MAX, .extents = extents, .path = path};
  s.waiting.next = s.waiting.prev = &s.waiting;
  ct_model_options defaults;
  ct_model_get_defaults(&defaults);
  s.select = ct_select_active(defaults.select) ? defaults.select : NULL;
  ct_corr_init(&s.calls, sizeof(call_entry));
  s.rd = ct_reader_open(path, st->message, sizeof st->message);
  if (!s.rd) return -1;
  if (extents && !(s.skipped = skip_ring_new()))
    s.extents = NULL; /* out of memory: every timed call is kept, as without extents */
  ct_reader_skip_kinds(s.rd, ~(1ull << CT_KIND_PROCESS | 1ull << CT_KIND_API |
                               1ull << CT_KIND_RANGE | 1ull << CT_KIND_GPU |
                               1ull << CT_KIND_DROP)); /* not decoded */
  s.threads = ct_map_new(sizeof(ct_range_queue));
  s.streams = ct_map_new(sizeof(stream_pos));
  /* Records are read AHEAD ahead of their handling, so that a GPU record's call entry
   * is fetched into the cache (the table scatters consecutive corrs) before it is looked
   * up; a range's name is looked up when its record is read, as without the read-ahead. */
  struct ahead {
    ct_record rec;
    const char *name;
    size_t name_len;
  } ring[AHEAD];
  size_t head = 0, queued = 0;
  int more = s.threads && s.streams;
  for (;;) {
    while (more && queued < AHEAD) {
      struct ahead *a = &ring[(head + queued) % AHEAD];
      if (!(more = ct_reader_next(s.rd, &a->rec))) break;
      if (a->rec.kind == CT_KIND_RANGE)
        a->name = ct_reader_string(s.rd, a->rec.u.range.name, &a->name_len);
      else if (a->rec.kind == CT_KIND_GPU)
        ct_corr_prefetch(&s.calls, a->rec.u.gpu.corr);
      else if (a->rec.kind == CT_KIND_API)
        ct_corr_prefetch(&s.calls, a->rec.u.api.corr);
      queued++;
    }
    if (!queued) break;
    struct ahead *a = &ring[head];
    head = (head + 1) % AHEAD;
    queued--;
    const ct_record rec = a->rec;
    if (!s.window_known && (rec.kind == CT_KIND_PROCESS || rec.kind == CT_KIND_API)) {
      /* the window (--from/--to) counts from the PROCESS record's start, else the first call */
      uint64_t start = rec.kind == CT_KIND_PROCESS ? rec.u.process.start_ns : rec.u.api.begin_ns;
      s.window_known = start != 0;
      ct_model_default_window(start, &s.from, &s.to);
    }
    if (rec.kind == CT_KIND_API) on_api(&s, &rec.u.api);
    else if (rec.kind == CT_KIND_RANGE) on_range(&s, &rec.u.range, a->name, a->name_len);
    else if (rec.kind == CT_KIND_GPU) on_gpu(&s, &rec.u.gpu);
    else if (rec.kind == CT_KIND_PROCESS && proc_out) *proc_out = rec.u.process;
    else if (rec.kind == CT_KIND_DROP) st->dropped += rec.u.drop.count; /* the lost-records line */
    if (s.calls.n + s.queued_in_memory > st->calls_peak)
      st->calls_peak = s.calls.n + s.queued_in_memory;
  }
  /* ranges whose GPU work never came (lost records): what they have */
  while (s.waiting.next != &s.waiting) hand_over(&s, s.waiting.next);
  const ct_read_status *rs = ct_reader_status(s.rd);
  st->records = rs->records;
  st->damaged = rs->damaged;
  st->has_end = rs->clean_end;
  int rc = 0;
  if (rs->damaged) {
    snprintf(st->message, sizeof st->message, "%s; %llu record%s read before it", rs->message,
             (unsigned long long)rs->records, rs->records == 1 ? "" : "s");
    rc = 1;
  } else if (s.file_failed && s.oom) {
    snprintf(st->message, sizeof st->message,
             "reading back a temporary file failed: some ranges miss GPU work");
    rc = 1;
  } else if (s.oom || !s.threads || !s.streams) {
    snprintf(st->message, sizeof st->message, "out of memory: some ranges are missing");
    rc = 1;
  }
  if (lost) *lost += s.lost;
  for (size_t i = 0; s.threads && i < ct_map_count(s.threads); i++)
    ct_range_queue_free(ct_map_entry(s.threads, i, NULL, NULL));
  ct_map_free(s.threads);
  ct_map_free(s.streams);
  for (size_t i = 0; i < s.calls.cap; i++) {
    call_entry *e = ct_corr_slot(&s.calls, i, NULL);
    if (e) free(e->more);
  }
  ct_corr_free(&s.calls);
  free(s.skipped);
  ct_map_free(s.own_extents);
  ct_reader_close(s.rd);
  return rc;
}

/* ---- report --by range ---------------------------------------------------------------- */

typedef struct ranges_feed {
  ct_report *r;
  int oom;
} ranges_feed;

static void add_range_row(void *user, const ct_range_span *rs) {
  ranges_feed *f = user;
  const char *name = rs->name;
  size_t len = rs->name_len;
  if (!name) name = "(unnamed range)", len = strlen(name);
  ct_range_row *row = ct_map_get(f->r->maps[CT_TABLE_RANGES], name, len, NULL);
  if (!row) {
    f->oom = 1;
    return;
  }
  ct_dur_add(&row->d, rs->end_ns > rs->begin_ns ? rs->end_ns - rs->begin_ns : 0);
  row->gpu_ns += rs->gpu_ns;
  row->activities += rs->activities;
  row->kernels += rs->kernels;
}

int ct_report_add_ranges(ct_report *r, const char *path, ct_model_stats *st,
                         struct ct_process *proc_out) {
  ranges_feed f = {.r = r};
  int rc = ct_range_each(path, add_range_row, &f, st, proc_out, &r->range_calls_lost);
  if (f.oom && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: some ranges are missing");
    rc = 1;
  }
  return rc;
}
