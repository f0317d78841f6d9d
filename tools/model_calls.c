/*
 * The model's calls in flight (model_calls.h): a ring indexed by corr, backed by an
 * overflow hash table for the calls whose slot was taken.
 */
#include "model_calls.h"

#include <stdlib.h>
#include <string.h>

#define CALLS_RING_MIN 1024
#define CALLS_RING_MAX (1u << 16) /* 12 MB of slots; wider windows use the overflow */
#define CALLS_GROW_AFTER 64       /* collisions in a stretch before the ring may double */

/* ---- the overflow: linear probing, backward-shift deletion -------------------------- */

/* A scrambling hash: sequential ids taken modulo the capacity would form one long
 * run of occupied slots, and backward-shift deletion would scan all of it. */
static inline size_t chash(uint64_t corr, size_t cap) {
  return (size_t)((corr * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static ct_call *hash_find(const ct_call_hash *h, uint64_t corr) {
  if (!h->cap) return NULL;
  for (size_t i = chash(corr, h->cap);; i = (i + 1) & (h->cap - 1)) {
    if (h->a[i].corr == corr) return &h->a[i];
    if (!h->a[i].corr) return NULL;
  }
}

/* The free slot for a corr known to be absent (h has room). */
static ct_call *hash_slot(const ct_call_hash *h, uint64_t corr) {
  size_t i = chash(corr, h->cap);
  while (h->a[i].corr) i = (i + 1) & (h->cap - 1);
  return &h->a[i];
}

static int hash_grow(ct_call_hash *h) {
  size_t ncap = h->cap ? h->cap * 2 : 256;
  ct_call_hash nh = {.a = calloc(ncap, sizeof(ct_call)), .cap = ncap, .n = h->n};
  if (!nh.a) return -1;
  for (size_t i = 0; i < h->cap; i++)
    if (h->a[i].corr) *hash_slot(&nh, h->a[i].corr) = h->a[i];
  free(h->a);
  *h = nh;
  return 0;
}

/* Stores a copy of *e (whose corr is absent from h); NULL when out of memory. */
static ct_call *hash_put(ct_call_hash *h, const ct_call *e) {
  if ((h->n + 1) * 2 > h->cap && hash_grow(h) < 0) return NULL;
  ct_call *slot = hash_slot(h, e->corr);
  *slot = *e;
  h->n++;
  return slot;
}

static void hash_remove(ct_call_hash *h, ct_call *e) {
  size_t i = (size_t)(e - h->a), mask = h->cap - 1;
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!h->a[j].corr) break;
    size_t home = chash(h->a[j].corr, h->cap);
    /* move a[j] into the hole at i when its home is not in (i, j] */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      h->a[i] = h->a[j];
      i = j;
    }
  }
  h->a[i].corr = 0;
  h->n--;
}

/* ---- the ring ------------------------------------------------------------------------ */

ct_call *ct_calls_find_overflow(const ct_calls *t, uint64_t corr) {
  return hash_find(&t->over, corr);
}

/* Moves everything into a ring of ncap slots; overflow entries whose new slot is free
 * move into the ring. Returns -1 (nothing changed) when out of memory. */
static int ring_resize(ct_calls *t, size_t ncap) {
  ct_call *nr = calloc(ncap, sizeof *nr);
  if (!nr) return -1;
  ct_call_hash nover = {0};
  /* distinct modulo the old size, so distinct modulo a multiple of it */
  for (size_t i = 0; i < t->ring_cap; i++)
    if (t->ring[i].corr) nr[t->ring[i].corr & (ncap - 1)] = t->ring[i];
  for (size_t i = 0; i < t->over.cap; i++) {
    const ct_call *e = &t->over.a[i];
    if (!e->corr) continue;
    ct_call *slot = &nr[e->corr & (ncap - 1)];
    if (!slot->corr) {
      *slot = *e;
    } else if (!hash_put(&nover, e)) {
      free(nr);
      free(nover.a);
      return -1;
    }
  }
  free(t->ring);
  free(t->over.a);
  t->ring = nr;
  t->ring_cap = ncap;
  t->over = nover;
  t->added = t->collided = 0;
  return 0;
}

/*
 * A ring of CALLS_RING_MIN slots that a freed table left, every slot empty (corr 0),
 * for the next table of this thread (the next file read): reading many small files,
 * clearing 1,024 slots (192 KiB) for each was most of the table's cost.
 */
static _Thread_local ct_call *spare_ring;

/* The first ring of a table: the spare one, else a new one. */
static int ring_first(ct_calls *t) {
  if (!spare_ring) return ring_resize(t, CALLS_RING_MIN);
  t->ring = spare_ring;
  t->ring_cap = CALLS_RING_MIN;
  t->added = t->collided = 0;
  spare_ring = NULL;
  return 0;
}

/* A new entry for corr in a free slot. */
static ct_call *fresh(ct_call *slot, uint64_t corr) {
  memset(slot, 0, offsetof(ct_call, d));
  slot->corr = corr;
  return slot;
}

ct_call *ct_calls_get(ct_calls *t, uint64_t corr) {
  if (!t->ring_cap && ring_first(t) < 0) return NULL;
  ct_call *slot = &t->ring[corr & (t->ring_cap - 1)];
  if (slot->corr == corr) return slot;
  if (t->over.n) {
    ct_call *e = hash_find(&t->over, corr);
    if (e) return e;
  }
  t->added++;
  if (++t->n > t->peak) t->peak = t->n;
  if (!slot->corr) return fresh(slot, corr);
  /* the slot is taken: the ring may be narrower than the window of ids in flight */
  if (++t->collided >= CALLS_GROW_AFTER && t->collided * 8 > t->added &&
      t->ring_cap < CALLS_RING_MAX && ring_resize(t, t->ring_cap * 2) == 0) {
    slot = &t->ring[corr & (t->ring_cap - 1)];
    if (!slot->corr) return fresh(slot, corr);
  }
  if (slot->corr > corr) { /* the newer call keeps the slot */
    ct_call e = {.corr = corr};
    ct_call *put = hash_put(&t->over, &e);
    if (!put) t->n--;
    return put;
  }
  if (!hash_put(&t->over, slot)) {
    t->n--;
    return NULL;
  }
  return fresh(slot, corr);
}

void ct_calls_remove(ct_calls *t, ct_call *e) {
  t->n--;
  if ((uintptr_t)e - (uintptr_t)t->ring < t->ring_cap * sizeof *e) e->corr = 0;
  else hash_remove(&t->over, e);
}

size_t ct_calls_sweep(ct_calls *t, int (*stale)(const ct_call *e, void *arg), void *arg) {
  size_t removed = 0;
  for (size_t i = 0; i < t->ring_cap; i++)
    if (t->ring[i].corr && stale(&t->ring[i], arg)) {
      t->ring[i].corr = 0;
      removed++;
    }
  /* a removal shifts later entries of the probe run back into the hole: look at the
   * same slot again (an entry shifted in from the wrapped start is only looked at twice) */
  for (size_t i = 0; i < t->over.cap;) {
    if (t->over.a[i].corr && stale(&t->over.a[i], arg)) {
      hash_remove(&t->over, &t->over.a[i]);
      removed++;
    } else {
      i++;
    }
  }
  t->n -= removed;
  return removed;
}

void ct_calls_free(ct_calls *t) {
  if (t->ring_cap == CALLS_RING_MIN && !spare_ring) {
    /* kept for the next table: only the slots still in flight need clearing */
    if (t->n > t->over.n)
      for (size_t i = 0; i < t->ring_cap; i++) t->ring[i].corr = 0;
    spare_ring = t->ring;
    t->ring = NULL;
  }
  free(t->ring);
  free(t->over.a);
  memset(t, 0, sizeof *t);
}
