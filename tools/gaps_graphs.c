/*
 * GPU idle-time analysis: CUDA-graph candidates (docs/gaps.md, "graph_candidate").
 *
 * Per launching thread and stream, the last GRAPH_MAX_LEN kernels are kept in a small
 * history (a copy, set or graph launch of that thread on that stream empties it, and so
 * does any operation another thread, or a call outside the trace, put on that stream in
 * between: the thread's kernels are then no longer consecutive on it). After
 * each kernel, every sequence of the last k kernels (k = 2..16) is hashed (the names'
 * text, the thread, the stream and k) and counted in a fixed table of GRAPH_SLOTS
 * entries, GRAPH_WAYS to a bucket; when a bucket is full the entry with the fewest
 * repetitions, the oldest of those, gives way. An occurrence counts only when it starts
 * after the previous counted one ended (instances do not overlap: in AAAA the sequence
 * AA counts twice, not three times). Memory is fixed: it does not grow with the trace.
 * The table is not cleared when made: a bucket is cleared when first used (a bitmap
 * says which are), so a file costs what it uses, not the 3.5 MiB (a directory of
 * thousands of rank files).
 *
 * The idle time inside an instance is the sum of the gaps between its consecutive
 * kernels in which the GPU waited for the launch: the next kernel's launch call ended
 * after the previous kernel had ended (launch overhead or host wait on that stream),
 * the time a captured graph would not spend.
 */
#include "gaps_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define GRAPH_MAX_LEN 16     /* longest sequence considered */
#define GRAPH_RING 256       /* kernels kept per history: the sequences ending at up to
                                GRAPH_RING - GRAPH_MAX_LEN kernels not counted yet */
#define GRAPH_PENDING 4096   /* kernels of a file waiting to be counted, at most */
#define GRAPH_SLOTS 16384    /* sequences counted per file (3.5 MiB) */
#define GRAPH_WAYS 4         /* entries per bucket */
#define GRAPH_BUCKETS (GRAPH_SLOTS / GRAPH_WAYS)
#define GRAPH_HISTORIES 256  /* launching (thread, stream) pairs followed at once */
#define GRAPH_NOISE_SHARE 20 /* idle below 1/20 (5%) of the instances' span: no finding */
#define GRAPH_NAME_CACHE 256 /* interned name -> hash of its text, direct-mapped */
#define GRAPH_STREAM_OWNERS 64 /* stream -> thread of its last operation, direct-mapped */
#define GRAPH_NO_THREAD UINT64_MAX /* an operation whose call is not in the trace */

/* One kernel of a history; cum_* are running sums over the history's kernels. */
typedef struct graph_kernel {
  const char *name;
  uint64_t name_hash; /* of the text: the table's layout must not depend on addresses */
  uint64_t start, end;
  uint64_t cum_idle; /* idle waited on launches, up to and including this kernel's gap */
  uint64_t cum_incall; /* the part of it inside the kernels' own launch calls */
  uint64_t cum_gpu;  /* GPU time, including this kernel */
  uint64_t idle, incall; /* this kernel's own wait (less other streams' work), in calls */
  uint64_t raw_idle, raw_incall; /* ... before other streams' work was taken off */
  uint64_t wait_lo, wait_hi; /* the wait: the previous kernel's end, this one's start (0: none) */
  uint64_t seq;      /* its place among the file's kernels (1, 2, ...): instances overlap by
                        kernels, not by times (a kernel mapped to 0 ns ends where it starts) */
} graph_kernel;

/* The recent kernels one thread launched on one stream. */
typedef struct graph_history {
  uint64_t tid, stream, device, used;
  uint64_t n;                    /* kernels seen */
  uint64_t counted;              /* the kernels whose sequences are counted: [0, counted) */
  uint32_t gen;                  /* bumped when emptied or reused (pending entries go stale) */
  graph_kernel k[GRAPH_RING];    /* ring: k[(n - 1) % GRAPH_RING] is the newest */
} graph_history;

/* A kernel whose sequences wait to be counted until the device's GPU time around its
 * wait is final: an operation of another stream running during the wait and ending
 * after the kernel is delivered after it, and is not idle. */
typedef struct graph_pending {
  unsigned hist;
  uint32_t gen;
  uint64_t index, device, wait_hi;
} graph_pending;

/* A counted sequence. */
typedef struct graph_seq {
  uint64_t key, tid, stream, device;
  uint64_t count, gpu_ns, idle_ns, span_ns, first_ns, last_end;
  uint64_t incall_ns; /* the part of idle_ns inside the kernels' launch calls */
  uint64_t last_seq; /* the seq of the last counted instance's last kernel */
  unsigned len;
  const char *names[GRAPH_MAX_LEN];
} graph_seq;

struct graph_state {
  graph_history *hist;
  unsigned nhist;
  uint64_t clock;
  uint64_t kernels; /* kernels seen: the next graph_kernel's seq */
  graph_pending *pend; /* a ring of GRAPH_PENDING, in arrival order */
  unsigned pend_head, pend_n;
  struct { const char *name; uint64_t hash; } names[GRAPH_NAME_CACHE];
  struct { uint64_t stream, tid; int set; } owners[GRAPH_STREAM_OWNERS];
  uint64_t live[GRAPH_BUCKETS / 64]; /* bit b: bucket b cleared and in use */
  graph_seq slots[GRAPH_SLOTS];      /* last: not cleared when made (see above) */
};

static inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* The hash of an interned name's text (FNV-1a), through a small cache by address. */
static uint64_t name_hash(struct graph_state *gs, const char *name) {
  unsigned slot = (unsigned)(((uintptr_t)name >> 3) % GRAPH_NAME_CACHE);
  if (gs->names[slot].name == name) return gs->names[slot].hash;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *)name; p && *p; p++)
    h = (h ^ *p) * 0x100000001b3ull;
  gs->names[slot].name = name;
  gs->names[slot].hash = h;
  return h;
}

/* Kernel i of the history (0 = its first; the last GRAPH_RING are kept). */
static inline graph_kernel *hist_at(graph_history *h, uint64_t i) { return &h->k[i % GRAPH_RING]; }

static void count_seq(struct graph_state *gs, graph_history *h, uint64_t end, unsigned len, uint64_t key);

/* Counts the sequences ending at h's first kernel not counted yet, once its wait is less
 * the other streams' work known now (what was not known when it came off its own and
 * the later kernels' running sums). */
static void count_next(fstate *f, struct graph_state *gs, graph_history *h) {
  uint64_t j = h->counted;
  graph_kernel *k = hist_at(h, j);
  if (k->wait_hi) {
    const devstate *d = ct_gaps_get_dev(f, h->device);
    uint64_t idle = k->raw_idle;
    if (d && d->nstreams > 1) {
      uint64_t busy = ct_gaps_busy_between(d, k->wait_lo, k->wait_hi);
      idle = idle > busy ? idle - busy : 0;
    }
    uint64_t incall = min_u64(k->raw_incall, idle);
    if (idle < k->idle) { /* it only shrinks: more of the other streams' work is known */
      uint64_t di = k->idle - idle, dc = k->incall > incall ? k->incall - incall : 0;
      for (uint64_t m = j; m < h->n; m++) {
        hist_at(h, m)->cum_idle -= di;
        hist_at(h, m)->cum_incall -= dc;
      }
      k->idle = idle;
      k->incall -= dc;
    }
  }
  uint64_t hash = mix64(h->tid * 0x9e3779b97f4a7c15ull ^ h->stream);
  unsigned depth = j + 1 < GRAPH_MAX_LEN ? (unsigned)(j + 1) : GRAPH_MAX_LEN;
  for (unsigned len = 1; len <= depth; len++) {
    hash = mix64(hash ^ hist_at(h, j + 1 - len)->name_hash);
    if (len >= 2) count_seq(gs, h, j, len, hash ^ len);
  }
  h->counted++;
}

/* Counts every kernel of h not counted yet, then empties it (its kernels are no longer
 * followed by the next: a copy or another thread's work came between). */
static void empty_history(fstate *f, struct graph_state *gs, graph_history *h) {
  while (h->counted < h->n) count_next(f, gs, h);
  h->n = h->counted = 0;
  h->gen++;
}

/* Takes the oldest pending kernel off the list, counting it (and any of its history's
 * kernels before it) unless its history was emptied since. */
static void settle_front(fstate *f, struct graph_state *gs) {
  graph_pending e = gs->pend[gs->pend_head];
  gs->pend_head = (gs->pend_head + 1) % GRAPH_PENDING;
  gs->pend_n--;
  graph_history *h = &gs->hist[e.hist];
  if (h->gen != e.gen) return;
  while (h->counted <= e.index && h->counted < h->n) count_next(f, gs, h);
}

void ct_gaps_graphs_settle(fstate *f, uint64_t device, uint64_t horizon) {
  struct graph_state *gs = f->graphs;
  while (gs && gs->pend_n && gs->pend[gs->pend_head].device == device &&
         gs->pend[gs->pend_head].wait_hi < horizon)
    settle_front(f, gs);
}

/* The history of (tid, stream): found, made, or the least recently used one reused. */
static graph_history *get_history(fstate *f, struct graph_state *gs, uint64_t tid, uint64_t stream,
                                  uint64_t device) {
  graph_history *lru = NULL;
  for (unsigned i = 0; i < gs->nhist; i++) {
    graph_history *h = &gs->hist[i];
    if (h->tid == tid && h->stream == stream) {
      h->used = ++gs->clock;
      return h;
    }
    if (!lru || h->used < lru->used) lru = h;
  }
  graph_history *h = lru;
  if (gs->nhist < GRAPH_HISTORIES) {
    h = &gs->hist[gs->nhist++];
    h->gen = 0;
  } else {
    empty_history(f, gs, h); /* its kernels counted, its pending entries stale */
  }
  h->n = h->counted = 0; /* the kernels are written as they come */
  h->tid = tid;
  h->stream = stream;
  h->device = device;
  h->used = ++gs->clock;
  return h;
}

/* Whether bucket b has been cleared (its entries are counted sequences or empty). */
static inline int bucket_live(const struct graph_state *gs, unsigned b) {
  return (gs->live[b / 64] >> (b % 64)) & 1;
}

/* The entries of bucket b, cleared on first use. */
static graph_seq *get_bucket(struct graph_state *gs, unsigned b) {
  graph_seq *bucket = &gs->slots[(size_t)b * GRAPH_WAYS];
  if (!bucket_live(gs, b)) {
    memset(bucket, 0, GRAPH_WAYS * sizeof *bucket);
    gs->live[b / 64] |= 1ull << (b % 64);
  }
  return bucket;
}

/* Counts one occurrence of the sequence of the len kernels of h ending at kernel end. */
static void count_seq(struct graph_state *gs, graph_history *h, uint64_t end, unsigned len, uint64_t key) {
  graph_seq *bucket = get_bucket(gs, (unsigned)(key % GRAPH_BUCKETS)), *e = NULL;
  for (unsigned w = 0; w < GRAPH_WAYS && !e; w++)
    if (bucket[w].count && bucket[w].key == key && bucket[w].len == len &&
        bucket[w].tid == h->tid && bucket[w].stream == h->stream)
      e = &bucket[w];
  const graph_kernel *first = hist_at(h, end + 1 - len), *last = hist_at(h, end);
  if (!e) {
    e = &bucket[0];
    for (unsigned w = 1; w < GRAPH_WAYS; w++) /* the least repeated, then the oldest */
      if (bucket[w].count < e->count ||
          (bucket[w].count == e->count && bucket[w].last_end < e->last_end))
        e = &bucket[w];
    memset(e, 0, sizeof *e);
    e->key = key;
    e->len = len;
    e->tid = h->tid;
    e->stream = h->stream;
    e->device = h->device;
    e->first_ns = first->start;
    for (unsigned i = 0; i < len; i++) e->names[i] = hist_at(h, end + 1 - len + i)->name;
  } else if (first->seq <= e->last_seq) {
    return; /* overlaps the previous counted instance */
  }
  e->count++;
  e->last_end = last->end;
  e->last_seq = last->seq;
  e->gpu_ns += last->cum_gpu - first->cum_gpu + (first->end - first->start);
  e->idle_ns += last->cum_idle - first->cum_idle;
  e->incall_ns += last->cum_incall - first->cum_incall;
  e->span_ns += last->end > first->start ? last->end - first->start : 0;
}

/* Empties the histories on stream that thread tid does not own: an operation of tid
 * came between their kernels. The stream's last thread is remembered, so the scan runs
 * only when the thread putting work on the stream changes. */
static void break_other_threads(fstate *f, struct graph_state *gs, uint64_t stream, uint64_t tid) {
  unsigned slot = (unsigned)(mix64(stream) % GRAPH_STREAM_OWNERS);
  if (gs->owners[slot].set && gs->owners[slot].stream == stream && gs->owners[slot].tid == tid)
    return;
  for (unsigned i = 0; i < gs->nhist; i++)
    if (gs->hist[i].stream == stream && gs->hist[i].tid != tid && gs->hist[i].n) empty_history(f, gs, &gs->hist[i]);
  gs->owners[slot].stream = stream;
  gs->owners[slot].tid = tid;
  gs->owners[slot].set = 1;
}

/* A GPU activity (delivery order: end order, so one stream's in order): a kernel with
 * its call joins its thread's history on its stream; anything else breaks it, and any
 * activity breaks the other threads' histories on that stream. */
uint64_t ct_gaps_graphs_on_activity(fstate *f, const ct_activity *a, const char *name, const char **prev_name) {
  *prev_name = NULL;
  struct graph_state *gs = f->graphs;
  if (gs) break_other_threads(f, gs, a->stream, a->has_call ? a->tid : GRAPH_NO_THREAD);
  if (!a->has_call) return 0;
  if (a->type != CT_GPU_KERNEL && a->type != CT_GPU_GEMM) {
    /* a copy, set or graph launch between two kernels: they are not consecutive */
    for (unsigned i = 0; gs && i < gs->nhist; i++)
      if (gs->hist[i].tid == a->tid && gs->hist[i].stream == a->stream && gs->hist[i].n)
        empty_history(f, gs, &gs->hist[i]);
    return 0;
  }
  if (!gs) {
    /* cleared up to the table (its buckets are cleared when first used); the histories
     * are cleared when taken (get_history) */
    gs = f->graphs = malloc(sizeof *gs);
    if (gs) {
      memset(gs, 0, offsetof(struct graph_state, slots));
      gs->hist = malloc(GRAPH_HISTORIES * sizeof *gs->hist);
      gs->pend = malloc(GRAPH_PENDING * sizeof *gs->pend);
    }
    if (!gs || !gs->hist || !gs->pend) {
      if (gs) free(gs->hist), free(gs->pend);
      free(gs);
      f->graphs = NULL;
      f->oom = 1;
      return 0;
    }
    break_other_threads(f, gs, a->stream, a->tid);
  }
  graph_history *h = get_history(f, gs, a->tid, a->stream, a->device);
  if (h->n - h->counted >= GRAPH_RING - GRAPH_MAX_LEN) count_next(f, gs, h); /* its slot is needed */
  graph_kernel *k = hist_at(h, h->n);
  uint64_t idle = 0, incall = 0, gpu = 0, wait_from = 0, raw_idle = 0, raw_incall = 0;
  if (h->n) {
    const graph_kernel *prev = hist_at(h, h->n - 1);
    /* the GPU waited on this launch: the stream was idle and the call not yet done */
    if (a->start_ns > prev->end && a->call_end_ns > prev->end) {
      idle = raw_idle = a->start_ns - prev->end;
      wait_from = prev->end;
      /* what another stream kept the device busy with meanwhile is not idle (as far
       * as delivered: an operation still running at a's end is not yet) */
      const devstate *d = ct_gaps_get_dev(f, a->device);
      if (d && d->nstreams > 1) {
        uint64_t busy = ct_gaps_busy_between(d, prev->end, a->start_ns);
        idle = idle > busy ? idle - busy : 0;
      }
      *prev_name = prev->name;
      incall = overlap(a->call_begin_ns, a->call_end_ns, prev->end, a->start_ns);
      if (a->call_depth && a->call_parent) { /* launched inside a library call: that call's */
        const span_ring_entry *outer = ct_gaps_find_outer_call(f, a->tid, a->call_parent, a->call_end_ns);
        incall = outer ? overlap(outer->begin, outer->end, prev->end, a->start_ns)
                       : idle; /* still running: the wait is inside it */
      }
      raw_incall = incall;
      incall = min_u64(incall, idle);
    }
    gpu = prev->cum_gpu;
  }
  uint64_t cum_idle = (h->n ? hist_at(h, h->n - 1)->cum_idle : 0) + idle;
  uint64_t cum_incall = (h->n ? hist_at(h, h->n - 1)->cum_incall : 0) + incall;
  *k = (graph_kernel){.name = name, .name_hash = name_hash(gs, name), .start = a->start_ns,
                      .end = a->end_ns, .cum_idle = cum_idle, .cum_incall = cum_incall,
                      .cum_gpu = gpu + (a->end_ns - a->start_ns), .seq = ++gs->kernels,
                      .idle = idle, .incall = incall, .raw_idle = raw_idle, .raw_incall = raw_incall,
                      .wait_lo = wait_from, .wait_hi = wait_from ? a->start_ns : 0};
  h->n++;
  /* its sequences are counted once the GPU time around its wait is final */
  if (gs->pend_n == GRAPH_PENDING) settle_front(f, gs);
  gs->pend[(gs->pend_head + gs->pend_n++) % GRAPH_PENDING] =
      (graph_pending){(unsigned)(h - gs->hist), h->gen, h->n - 1, a->device, a->start_ns};
  return wait_from;
}

/* Whether a covers more launches than b (repetitions x length; ties: more repetitions,
 * then the earlier first instance: of the rotations of a loop's body, the one it began
 * with). */
static int covers_more(const graph_seq *a, const graph_seq *b) {
  uint64_t ca = a->count * a->len, cb = b->count * b->len;
  if (ca != cb) return ca > cb;
  if (a->count != b->count) return a->count > b->count;
  return a->first_ns < b->first_ns;
}

static int by_idle_desc(const void *x, const void *y) {
  const graph_seq *a = *(const graph_seq *const *)x, *b = *(const graph_seq *const *)y;
  if (a->idle_ns != b->idle_ns) return a->idle_ns < b->idle_ns ? 1 : -1;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* "name" of a demangled kernel: its qualified name without the parameters (and a
 * leading "void "), cut to at most 48 characters. */
static void abbreviate(const char *mangled, char *out, size_t len) {
  char buf[1024];
  const char *d = ct_demangle(mangled ? mangled : "?", buf, sizeof buf);
  if (!strncmp(d, "void ", 5)) d += 5;
  size_t n = strcspn(d, "(");
  if (n > 48) {
    memcpy(out, d, 45);
    memcpy(out + 45, "...", 4);
    return;
  }
  if (n >= len) n = len - 1;
  memcpy(out, d, n);
  out[n] = 0;
}

/* The shortest p dividing e's length such that e is its first p names repeated (1 for
 * tiny > tiny > tiny, 2 for a > b > a > b); e's length when there is none. */
static unsigned sequence_period(const graph_seq *e) {
  for (unsigned p = 1; p < e->len; p++) {
    if (e->len % p) continue;
    unsigned k = p;
    while (k < e->len && (e->names[k] == e->names[k - p] ||
                          (e->names[k] && e->names[k - p] && !strcmp(e->names[k], e->names[k - p]))))
      k++;
    if (k == e->len) return p;
  }
  return e->len;
}

/* The waits of candidate e's kernel pairs inside alloc gaps (held[0]) and inside gaps
 * a little sync's return opened (held[1]) on its device (devstate.pairs, each pair once),
 * with the device's waits not kept by pair (any candidate's). */
static void meet_held(fstate *f, const graph_seq *e, uint64_t held[2]) {
  const devstate *d = NULL;
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == e->device) d = f->devs[i];
  held[0] = held[1] = 0;
  if (!d) return;
  held[0] = d->meet[CT_MEET_GRAPH_ALLOC];
  held[1] = d->meet[CT_MEET_GRAPH_LSYNC];
  for (unsigned k = 0; k + 1 < e->len; k++) {
    unsigned seen = 0;
    while (seen < k && (e->names[seen] != e->names[k] || e->names[seen + 1] != e->names[k + 1])) seen++;
    if (seen < k) continue; /* the pair came earlier in the sequence */
    for (unsigned i = 0; i < d->npairs; i++) {
      const struct meet_pair *m = &d->pairs[i];
      if (m->tid == e->tid && m->stream == e->stream && m->prev == e->names[k] && m->next == e->names[k + 1]) {
        held[0] += m->ns[0];
        held[1] += m->ns[1];
      }
    }
  }
}

/* Adds the file's graph candidates to the analysis (at the end of its file): per
 * launching thread the sequence repeated at least graph_min times that covers the most
 * launches, when the idle inside its instances is at least 5% of their span; ranked by
 * that idle time. Frees the state. */
void ct_gaps_graph_findings(fstate *f) {
  struct graph_state *gs = f->graphs;
  if (!gs) return;
  while (gs->pend_n) settle_front(f, gs); /* the file is done: every GPU time is final */
  for (unsigned i = 0; i < gs->nhist; i++) empty_history(f, gs, &gs->hist[i]);
  struct ct_gaps *g = f->g;
  const graph_seq *best[GRAPH_SLOTS];
  unsigned nbest = 0;
  for (unsigned i = 0; i < GRAPH_SLOTS; i++) {
    if (!bucket_live(gs, i / GRAPH_WAYS)) {
      i += GRAPH_WAYS - 1; /* never used: nothing counted */
      continue;
    }
    const graph_seq *e = &gs->slots[i];
    if (!e->count || e->count < g->o.graph_min) continue;
    unsigned b = 0;
    while (b < nbest && best[b]->tid != e->tid) b++;
    if (b == nbest) best[nbest++] = e;
    else if (covers_more(e, best[b])) best[b] = e;
  }
  unsigned keep = 0;
  for (unsigned i = 0; i < nbest; i++)
    if (best[i]->idle_ns && best[i]->idle_ns * GRAPH_NOISE_SHARE >= best[i]->span_ns)
      best[keep++] = best[i];
  qsort(best, keep, sizeof *best, by_idle_desc);
  for (unsigned i = 0; i < keep; i++) {
    const graph_seq *e = best[i];
    /* a loop of one kernel counted as tiny > tiny > tiny is named tiny, x3 the repetitions */
    unsigned period = sequence_period(e);
    char what[GRAPH_MAX_LEN * 52 + 1] = "", name[52];
    for (unsigned k = 0; k < period; k++) {
      abbreviate(e->names[k], name, sizeof name);
      if (k) strcat(what, " > ");
      strcat(what, name);
    }
    uint64_t held[2];
    meet_held(f, e, held);
    ct_gaps_finding fd = {.kind = CT_FIND_GRAPH_CANDIDATE, .proc = f->proc, .device = e->device,
                          .what = ct_gaps_intern(g, what), .count = e->count * (e->len / period),
                          .gpu_ns = e->gpu_ns, .first_ns = e->first_ns,
                          .last_ns = e->last_end, .tid = e->tid, .stream = e->stream,
                          .length = period, .idle_ns = e->idle_ns, .span_ns = e->span_ns,
                          .saving_ns = e->idle_ns, .in_calls_ns = e->incall_ns,
                          .held_alloc_ns = min_u64(held[0], e->idle_ns),
                          .held_lsync_ns = min_u64(held[1], e->idle_ns),
                          .fix = "capture the sequence into a CUDA graph (cudaStreamBeginCapture, "
                                 "torch.cuda.graphs / torch.cuda.CUDAGraph) or use "
                                 "torch.compile(mode=\"reduce-overhead\"); or fuse the kernels"};
    ct_gaps_add_finding(g, &fd);
  }
  free(gs->hist);
  free(gs->pend);
  free(gs);
  f->graphs = NULL;
}
