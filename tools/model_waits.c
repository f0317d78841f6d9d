/*
 * The model's give-up rule (model_waits.h): per (device, stream), how far its
 * delivered GPU work has come, and the calls waiting on it.
 */
#include "model_waits.h"

#include <stdlib.h>
#include <string.h>

static size_t stream_home(uint64_t device, uint64_t stream, size_t cap) {
  return (size_t)(((stream ^ (device << 56)) * 0x9E3779B97F4A7C15ull) >> 23) & (cap - 1);
}

static int streams_grow(ct_waits *w) {
  size_t ncap = w->cap ? w->cap * 2 : 16;
  ct_wait_stream *na = calloc(ncap, sizeof *na);
  if (!na) return -1;
  for (size_t i = 0; i < w->cap; i++) {
    if (!w->a[i].used) continue;
    size_t j = stream_home(w->a[i].device, w->a[i].stream, ncap);
    while (na[j].used) j = (j + 1) & (ncap - 1);
    na[j] = w->a[i];
  }
  free(w->a);
  w->a = na;
  w->cap = ncap;
  w->last = NULL;
  return 0;
}

/* The state of (device, stream), created when missing; NULL when out of memory. */
static ct_wait_stream *stream_get(ct_waits *w, uint64_t device, uint64_t stream) {
  if (w->last && w->last->device == device && w->last->stream == stream) return w->last;
  if ((w->n + 1) * 2 > w->cap && streams_grow(w) < 0) return NULL;
  size_t i = stream_home(device, stream, w->cap);
  while (w->a[i].used && (w->a[i].device != device || w->a[i].stream != stream))
    i = (i + 1) & (w->cap - 1);
  ct_wait_stream *s = &w->a[i];
  if (!s->used) {
    s->used = 1;
    s->device = device;
    s->stream = stream;
    w->n++;
  }
  return w->last = s;
}

int ct_waits_add(ct_waits *w, uint64_t device, uint64_t stream, uint64_t corr) {
  ct_wait_stream *s = stream_get(w, device, stream);
  if (!s) return -1;
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint64_t *nq = malloc(ncap * sizeof *nq);
    if (!nq) return -1;
    for (size_t i = 0; i < s->n; i++) nq[i] = s->q[(s->head + i) & (s->cap - 1)];
    free(s->q);
    s->q = nq;
    s->cap = ncap;
    s->head = 0;
  }
  s->q[(s->head + s->n++) & (s->cap - 1)] = corr;
  return 0;
}

void ct_waits_progress(ct_waits *w, ct_calls *calls, uint64_t device, uint64_t stream,
                       uint64_t corr, uint64_t key, uint64_t window, int may_give_up) {
  ct_wait_stream *s = stream_get(w, device, stream);
  if (!s) return;
  if (corr > s->top_corr) s->top_corr = corr;
  if (key > s->mark_key + window) { /* the last mark is a window old: it becomes safe */
    s->safe_corr = s->mark_corr;
    s->mark_corr = s->top_corr;
    s->mark_key = key;
  }
  while (s->n) {
    uint64_t c = s->q[s->head];
    ct_call *e = ct_calls_find(calls, c);
    if (e && ct_call_waits(e)) {
      if (!may_give_up || c >= s->safe_corr) return; /* the front still has a chance */
      ct_calls_remove(calls, e);
      w->given_up++;
    }
    s->head = (s->head + 1) & (s->cap - 1);
    s->n--;
  }
}

void ct_waits_free(ct_waits *w) {
  for (size_t i = 0; i < w->cap; i++) free(w->a[i].q);
  free(w->a);
  memset(w, 0, sizeof *w);
}
