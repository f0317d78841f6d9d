/*
 * GPU idle-time analysis: interned strings, per-device, per-stream and per-thread
 * state lookups, and the per-thread rings of recent calls (gaps_internal.h).
 */
#include "gaps_internal.h"
#include "ring.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

/* A copy of s that lives as long as g; "" when s is NULL or out of memory. */
const char *ct_gaps_intern(struct ct_gaps *g, const char *s) {
  if (!s) return NULL;
  if ((g->npool + 1) * 2 > g->cappool) {
    size_t ncap = g->cappool ? g->cappool * 2 : 256;
    char **np = calloc(ncap, sizeof *np);
    if (!np) return "";
    for (size_t i = 0; i < g->cappool; i++) {
      if (!g->pool[i]) continue;
      uint64_t h = 1469598103934665603ull;
      for (const char *p = g->pool[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
      size_t j = h & (ncap - 1);
      while (np[j]) j = (j + 1) & (ncap - 1);
      np[j] = g->pool[i];
    }
    free(g->pool);
    g->pool = np;
    g->cappool = ncap;
  }
  uint64_t h = 1469598103934665603ull;
  for (const char *p = s; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  size_t j = h & (g->cappool - 1);
  while (g->pool[j]) {
    if (!strcmp(g->pool[j], s)) return g->pool[j];
    j = (j + 1) & (g->cappool - 1);
  }
  char *c = strdup(s);
  if (!c) return "";
  g->pool[j] = c;
  g->npool++;
  return c;
}

/* The interned copy of a string owned by the reader (which frees its strings when the
 * file is closed, before the last intervals are final), cached by address, with the
 * NAME_* class bits of the name in *cls (may be NULL). */
const char *ct_gaps_keep(fstate *f, const char *s, unsigned *cls) {
  if (cls) *cls = 0;
  if (!s) return NULL;
  if ((f->nnames + 1) * 2 > f->capnames) {
    size_t ncap = f->capnames ? f->capnames * 2 : 1024;
    typeof(f->names) nn = calloc(ncap, sizeof *nn);
    if (!nn) return ct_gaps_intern(f->g, s);
    for (size_t i = 0; i < f->capnames; i++) {
      if (!f->names[i].key) continue;
      size_t j = ((uintptr_t)f->names[i].key >> 4) * 0x9E3779B97F4A7C15ull >> 40 & (ncap - 1);
      while (nn[j].key) j = (j + 1) & (ncap - 1);
      nn[j] = f->names[i];
    }
    free(f->names);
    f->names = nn;
    f->capnames = ncap;
  }
  size_t j = ((uintptr_t)s >> 4) * 0x9E3779B97F4A7C15ull >> 40 & (f->capnames - 1);
  while (f->names[j].key) {
    if (f->names[j].key == s) {
      if (cls) *cls = f->names[j].cls;
      return f->names[j].val;
    }
    j = (j + 1) & (f->capnames - 1);
  }
  f->names[j].key = s;
  f->names[j].val = ct_gaps_intern(f->g, s);
  f->names[j].cls = (strstr(s, "Synchronize") ? NAME_SYNCHRONIZE : 0) |
                    (strstr(s, "Async") ? NAME_ASYNC : 0) |
                    (!strncmp(s, "cudaMemcpy", 10) || !strncmp(s, "cuMemcpy", 8) ? NAME_MEMCPY : 0) |
                    (strcasestr(s, "nccl") || strcasestr(s, "nvshmem") ? NAME_COMM : 0) |
                    (strstr(s, "WaitValue") || strstr(s, "BatchMemOp") ? NAME_VALUE_WAIT : 0) |
                    (strstr(s, "WaitExternalSemaphores") ? NAME_EXT_WAIT : 0) |
                    (strstr(s, "EventQuery") || strstr(s, "StreamQuery") ? NAME_POLL : 0) |
                    ((strstr(s, "Launch") && !strstr(s, "HostFunc")) ||
                             ct_api_category(s) == CT_CAT_GEMM
                         ? NAME_LAUNCH
                         : 0);
  if (cls) *cls = f->names[j].cls;
  f->nnames++;
  return f->names[j].val;
}

/* A ring that starts with room for 64 entries and doubles up to max_cap: a thread
 * making few calls (a thread-per-request server has tens of thousands) costs little. */
static int ring_init(ring *r, unsigned max_cap) {
  _Static_assert((RING_CALLS & (RING_CALLS - 1)) == 0, "ring capacity: a power of two");
  r->cap = max_cap < 64 ? max_cap : 64;
  r->max_cap = max_cap;
  r->a = malloc(r->cap * sizeof *r->a);
  r->n = r->head = 0;
  r->max_dur = 0;
  r->disorder = 0;
  return r->a ? 0 : -1;
}

/* Doubles a full ring's room (its entries moved to the start); stays full when out of
 * memory (the oldest entries are then dropped, as at max_cap). */
static void ring_grow(ring *r) {
  span_ring_entry *a = ct_ring_copy(r->a, sizeof *a, r->cap, r->head, r->n, 2 * (size_t)r->cap);
  if (!a) return;
  free(r->a);
  r->a = a;
  r->head = 0;
  r->cap *= 2;
}

/* Appends e to the ring, dropping the oldest entry when it is full at its largest; a
 * ring is full (n == cap) only at max_cap, or when it could not grow. */
void ct_gaps_ring_push(ring *r, const span_ring_entry *e) {
  if (r->n && e->end < ring_back(r, 0)->end) r->disorder = r->max_cap;
  else if (r->disorder) r->disorder--;
  if (e->end > e->begin && e->end - e->begin > r->max_dur) r->max_dur = e->end - e->begin;
  if (r->n < r->cap) {
    r->a[(r->head + r->n++) & (r->cap - 1)] = *e;
  } else {
    r->a[r->head] = *e;
    r->head = (r->head + 1) & (r->cap - 1);
  }
  if (r->n == r->cap && r->cap < r->max_cap) ring_grow(r);
}

/* ---- lookups ----------------------------------------------------------------------- */

static void tracker_init(tracker *t, devstate *d, uint64_t stream) {
  memset(t, 0, sizeof *t);
  t->dev = d;
  t->stream = stream;
}

/* The state of a device, created on first use; NULL when out of memory (f->oom set). */
devstate *ct_gaps_get_dev(fstate *f, uint64_t device) {
  if (f->last_dev && f->last_dev->device == device) return f->last_dev;
  for (unsigned i = 0; i < f->ndevs; i++)
    if (f->devs[i]->device == device) return f->last_dev = f->devs[i];
  devstate **nd = realloc(f->devs, (f->ndevs + 1) * sizeof *nd);
  devstate *d = malloc(sizeof *d);
  if (d) memset(d, 0, DEVSTATE_CLEARED); /* the rings are read only as far as written */
  if (!nd || !d) {
    if (nd) f->devs = nd;
    free(d);
    f->oom = 1;
    return NULL;
  }
  f->devs = nd;
  d->device = device;
  d->name = "";
  tracker_init(&d->t, d, UINT64_MAX);
  for (int k = 0; k < OV_N; k++) {
    tracker_init(&d->ov[k], d, UINT64_MAX - 1 - (uint64_t)k);
    d->ov[k].silent = 1;
  }
  f->devs[f->ndevs++] = d;
  return f->last_dev = d;
}

/* Indexes t by (its device state, its stream) in f's stream index; 0, or -1 when out of
 * memory. */
static int index_stream(fstate *f, tracker *t) {
  uint64_t key[2] = {(uint64_t)(uintptr_t)t->dev, t->stream};
  tracker **slot = ct_map_get(f->stream_index, key, sizeof key, NULL);
  if (!slot) return -1;
  *slot = t;
  return 0;
}

/* The tracker of stream on device d, created on first use; NULL when out of memory. A
 * file with more than STREAMS_SCANNED streams (a program making a stream per request
 * has tens of thousands) finds them through an index: a scan per activity made gaps
 * quadratic in their number; below it a scan is cheaper than hashing the key. */
#define STREAMS_SCANNED 8
tracker *ct_gaps_get_stream(fstate *f, devstate *d, uint64_t stream) {
  tracker *t = f->last_stream;
  if (t && t->dev == d && t->stream == stream) return t;
  if (f->stream_index) {
    uint64_t key[2] = {(uint64_t)(uintptr_t)d, stream};
    tracker **slot = ct_map_find(f->stream_index, key, sizeof key);
    if (slot && *slot) return f->last_stream = *slot;
  } else {
    for (unsigned i = 0; i < f->nstreams; i++)
      if (f->streams[i]->dev == d && f->streams[i]->stream == stream)
        return f->last_stream = f->streams[i];
  }
  if (f->nstreams == f->capstreams) {
    unsigned cap = f->capstreams ? 2 * f->capstreams : 16;
    tracker **ns = realloc(f->streams, cap * sizeof *ns);
    if (!ns) {
      f->oom = 1;
      return NULL;
    }
    f->streams = ns;
    f->capstreams = cap;
  }
  if (!(t = malloc(sizeof *t))) {
    f->oom = 1;
    return NULL;
  }
  tracker_init(t, d, stream);
  d->nstreams++;
  f->streams[f->nstreams++] = t;
  if (f->stream_index) {
    if (index_stream(f, t) < 0) f->oom = 1;
  } else if (f->nstreams > STREAMS_SCANNED) {
    if (!(f->stream_index = ct_map_new(sizeof(tracker *)))) f->oom = 1;
    for (unsigned i = 0; f->stream_index && i < f->nstreams; i++)
      if (index_stream(f, f->streams[i]) < 0) f->oom = 1;
  }
  return f->last_stream = t;
}

/* The state of a thread, or NULL when it made no call yet. */
thstate *ct_gaps_find_thread(fstate *f, uint64_t tid) {
  if (f->last_thread && f->last_thread->tid == tid) return f->last_thread;
  for (unsigned i = 0; i < f->nthreads; i++)
    if (f->threads[i]->tid == tid) return f->last_thread = f->threads[i];
  return NULL;
}

/* The state of a thread, created on first use; NULL when out of memory. */
thstate *ct_gaps_get_thread(fstate *f, uint64_t tid) {
  thstate *th = ct_gaps_find_thread(f, tid);
  if (th) return th;
  thstate **nt = realloc(f->threads, (f->nthreads + 1) * sizeof *nt);
  th = calloc(1, sizeof *th);
  if (!nt || !th || ring_init(&th->calls, RING_CALLS)) {
    if (nt) f->threads = nt;
    if (th) free(th->calls.a);
    free(th);
    f->oom = 1;
    return NULL;
  }
  f->threads = nt;
  th->tid = tid;
  f->threads[f->nthreads++] = th;
  return f->last_thread = th;
}
