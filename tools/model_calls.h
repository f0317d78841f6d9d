/*
 * The model's calls in flight, by corr (tools/model.c): per call, its API fields and
 * its detail record, until its span and its GPU work have both been delivered.
 *
 * Correlation ids come from one process-wide counter, so the calls in flight at any
 * moment are a window of nearly consecutive ids. The table is a ring indexed by
 * corr modulo its size: a lookup is one compare, neighbouring calls share cache
 * lines, and a removal just empties the slot. A call whose slot is taken goes to an
 * overflow hash table: when the slot holds an older call (one that stays in flight:
 * its GPU record was dropped, or comes long after), that one moves to the overflow
 * and the newer call takes the slot. When more than an eighth of the calls added in
 * a stretch collide, the ring doubles (up to CALLS_RING_MAX slots): the window of
 * ids in flight is wider than the ring. Memory therefore follows the calls in
 * flight, never the trace's length.
 */
#ifndef CUTRACE_MODEL_CALLS_H
#define CUTRACE_MODEL_CALLS_H

#include <stddef.h>
#include <stdint.h>

#define CALL_DETAIL_FIELDS 12 /* the most fields after corr of LAUNCH, MEMOP, GEMM, ... */

/* One call in flight. */
typedef struct ct_call {
  uint64_t corr;                  /* 0 = empty slot */
  uint8_t has_call, detail, span_done, act_done;
  uint8_t gpu_seen;               /* its GPU record was read (delivered or pending) */
  uint8_t act_alone;              /* its GPU work was delivered before its call was read */
  uint64_t tid, name, begin, end, flags;
  uint64_t depth, stack, parent;
  uint64_t detail_at;             /* the newest end time read when its detail record came */
  uint64_t d[CALL_DETAIL_FIELDS]; /* the detail record's fields after corr */
} ct_call;

/* Open addressing with linear probing (the overflow). */
typedef struct ct_call_hash {
  ct_call *a;
  size_t cap, n; /* cap is a power of two (0: none yet) */
} ct_call_hash;

/* The table: zero-initialised is empty. */
typedef struct ct_calls {
  ct_call *ring;
  size_t ring_cap;          /* a power of two (0: none yet) */
  ct_call_hash over;        /* calls whose ring slot was taken */
  size_t added, collided;   /* calls added and sent to the overflow since the ring grew */
  size_t n, peak;           /* calls in flight now, and the most at once */
} ct_calls;

/* The overflow's entry for corr, or NULL. */
ct_call *ct_calls_find_overflow(const ct_calls *t, uint64_t corr);

/* The entry of corr (not 0), or NULL when it is not in flight. */
static inline ct_call *ct_calls_find(const ct_calls *t, uint64_t corr) {
  if (t->ring_cap) {
    ct_call *e = &t->ring[corr & (t->ring_cap - 1)];
    if (e->corr == corr) return e;
  }
  return t->over.n ? ct_calls_find_overflow(t, corr) : NULL;
}

/* The entry of corr (not 0), created when missing with every field but d[] zero (d[]
 * is read only after the detail record filled it); NULL when out of memory. The
 * pointer is valid until the next ct_calls_get or ct_calls_remove. */
ct_call *ct_calls_get(ct_calls *t, uint64_t corr);

/* Removes e, an entry returned by ct_calls_find or ct_calls_get. */
void ct_calls_remove(ct_calls *t, ct_call *e);

/* Removes every entry for which stale(e, arg) is 1; returns how many. */
size_t ct_calls_sweep(ct_calls *t, int (*stale)(const ct_call *e, void *arg), void *arg);

/* Frees the table's memory (it is empty again). */
void ct_calls_free(ct_calls *t);

#endif
