/*
 * Library calls timed by their child launches (report.h: ct_inner_join), and the
 * corr-keyed table it and `--by range` keep their calls in flight in.
 *
 * A cuBLAS call flagged CT_API_INNER_TIMED has no GPU activity of its own: each
 * kernel it launched through the driver is a depth-1 API record (`parent` = the
 * library call's corr) with its own activity. The model delivers spans and
 * activities in end order, so a library call's child spans come before the library
 * call's span (they end inside it), while the children's activities come before or
 * after it (the GPU may finish them before or after the call returns). The join
 * counts, per library call, the child calls that promised GPU work (CT_API_TIMED)
 * and the child activities seen; once the library call's span was seen and every
 * promised activity arrived, the call is complete and handed to the consumer.
 * Memory: one entry per library call in flight. Entries that stay incomplete
 * (a lost record) are handed over anyway once they are STALE_NS behind the newest
 * event, checked whenever the table doubles past SWEEP_MIN, and at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define STALE_NS 2000000000ull /* the model's largest reorder window */
#define SWEEP_MIN 4096

/* ---- corr table -------------------------------------------------------------------- */

/* A slot: the corr (0 = empty) followed by the value. */
static size_t slot_bytes(const ct_corr_table *t) { return 8 + ((t->value_size + 7) & ~(size_t)7); }

static unsigned char *slot_at(const ct_corr_table *t, size_t i) { return t->a + i * slot_bytes(t); }

static uint64_t slot_corr(const unsigned char *s) {
  uint64_t c;
  memcpy(&c, s, 8);
  return c;
}

/* Where corr's probe starts: blocks of 8 consecutive ids start at 8 neighbouring slots
 * (calls made together are looked up together: fewer cache misses), the blocks
 * scattered by a multiplicative hash (sequential blocks would form one long run of
 * occupied slots for probes and backward-shift deletion to walk). */
static size_t home_of(uint64_t corr, size_t cap) {
  return (size_t)((((corr >> 3) * 0x9E3779B97F4A7C15ull) >> 20) * 8 + (corr & 7)) & (cap - 1);
}

void ct_corr_init(ct_corr_table *t, size_t value_size) {
  memset(t, 0, sizeof *t);
  t->value_size = value_size;
}

static int corr_grow(ct_corr_table *t) {
  size_t ncap = t->cap ? t->cap * 2 : 1024, sb = slot_bytes(t);
  unsigned char *na = calloc(ncap, sb);
  if (!na) return -1;
  for (size_t i = 0; i < t->cap; i++) {
    const unsigned char *s = slot_at(t, i);
    if (!slot_corr(s)) continue;
    size_t j = home_of(slot_corr(s), ncap);
    while (slot_corr(na + j * sb)) j = (j + 1) & (ncap - 1);
    memcpy(na + j * sb, s, sb);
  }
  free(t->a);
  t->a = na;
  t->cap = ncap;
  return 0;
}

void *ct_corr_find(ct_corr_table *t, uint64_t corr, int create) {
  if (!corr) return NULL;
  if (t->cap)
    for (size_t i = home_of(corr, t->cap); slot_corr(slot_at(t, i)); i = (i + 1) & (t->cap - 1))
      if (slot_corr(slot_at(t, i)) == corr) return slot_at(t, i) + 8;
  if (!create || ((t->n + 1) * 2 > t->cap && corr_grow(t) < 0)) return NULL;
  size_t i = home_of(corr, t->cap);
  while (slot_corr(slot_at(t, i))) i = (i + 1) & (t->cap - 1);
  unsigned char *s = slot_at(t, i);
  memset(s, 0, slot_bytes(t));
  memcpy(s, &corr, 8);
  t->n++;
  return s + 8;
}

void ct_corr_prefetch(const ct_corr_table *t, uint64_t corr) {
  if (t->cap) __builtin_prefetch(slot_at(t, home_of(corr, t->cap)));
}

void ct_corr_remove(ct_corr_table *t, void *value) {
  size_t sb = slot_bytes(t), mask = t->cap - 1;
  size_t i = (size_t)((unsigned char *)value - 8 - t->a) / sb;
  for (size_t j = (i + 1) & mask; slot_corr(slot_at(t, j)); j = (j + 1) & mask) {
    size_t home = home_of(slot_corr(slot_at(t, j)), t->cap);
    if (((j - home) & mask) >= ((j - i) & mask)) { /* its home is not in (i, j] */
      memcpy(slot_at(t, i), slot_at(t, j), sb);
      i = j;
    }
  }
  memset(slot_at(t, i), 0, 8);
  t->n--;
}

void *ct_corr_slot(const ct_corr_table *t, size_t i, uint64_t *corr) {
  const unsigned char *s = slot_at(t, i);
  if (!slot_corr(s)) return NULL;
  if (corr) *corr = slot_corr(s);
  return (void *)(s + 8);
}

void ct_corr_free(ct_corr_table *t) {
  free(t->a);
  t->a = NULL;
  t->cap = t->n = 0;
}

/* ---- the join -------------------------------------------------------------------------- */

/* What the join keeps per library call. */
typedef struct inner_entry {
  ct_inner_call call;
  ct_span span;      /* the library call's span, when has_span */
  int has_span;
  int64_t pending;   /* child calls that promised GPU work minus child activities seen */
  uint64_t touched;  /* newest time seen for it */
} inner_entry;

struct ct_inner_join {
  ct_corr_table calls; /* library call corr -> inner_entry */
  ct_map *names;       /* name -> its copy (char *): calls outlive the file's reader */
  ct_inner_done_fn done;
  void *user;
  uint64_t newest, sweep_at;
  int oom;
};

ct_inner_join *ct_inner_new(ct_inner_done_fn done, void *user) {
  ct_inner_join *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  ct_corr_init(&j->calls, sizeof(inner_entry));
  if (!(j->names = ct_map_new(sizeof(char *)))) {
    free(j);
    return NULL;
  }
  j->done = done;
  j->user = user;
  j->sweep_at = SWEEP_MIN;
  return j;
}

/* A copy of name that lives as long as the join (name itself when out of memory). */
static const char *keep_name(ct_inner_join *j, const char *name) {
  if (!name) return NULL;
  int created = 0;
  char **copy = ct_map_get(j->names, name, strlen(name), &created);
  if (copy && !*copy) *copy = strdup(name);
  if (!copy || !*copy) j->oom = 1;
  return copy && *copy ? *copy : name;
}

/* Hands e over and forgets it. */
static void complete(ct_inner_join *j, inner_entry *e, uint64_t corr) {
  e->call.corr = corr;
  e->call.span = e->has_span ? &e->span : NULL;
  e->call.complete = e->has_span && e->pending == 0;
  if (j->done) j->done(j->user, &e->call);
  ct_corr_remove(&j->calls, e);
}

/* Hands over the entries left STALE_NS behind (a record of theirs was lost), or all
 * of them. A removal shifts later entries back into the freed slot, never into one
 * already passed, so slot i is looked at again after each removal. */
static void sweep(ct_inner_join *j, int all) {
  for (size_t i = 0; i < j->calls.cap;) {
    uint64_t corr;
    inner_entry *e = ct_corr_slot(&j->calls, i, &corr);
    if (e && (all || e->touched + STALE_NS < j->newest)) complete(j, e, corr);
    else i++;
  }
  j->sweep_at = j->calls.n * 2 > SWEEP_MIN ? j->calls.n * 2 : SWEEP_MIN;
}

/* The entry of library call corr, created when new (NULL when out of memory). */
static inner_entry *entry_of(ct_inner_join *j, uint64_t corr, uint64_t when) {
  if (when > j->newest) j->newest = when;
  if (j->calls.n >= j->sweep_at) sweep(j, 0);
  inner_entry *e = ct_corr_find(&j->calls, corr, 1);
  if (!e) j->oom = 1;
  else if (when > e->touched) e->touched = when;
  return e;
}

int ct_inner_span(ct_inner_join *j, const ct_span *s) {
  if (s->is_tracer || !s->corr) return 0;
  if (s->depth > 0 && s->parent) {
    if (!(s->flags & CT_API_TIMED)) return 0;
    inner_entry *e = entry_of(j, s->parent, s->end_ns);
    if (e) e->pending++;
    return 0;
  }
  inner_entry *e = ct_corr_find(&j->calls, s->corr, 0);
  if (!e && !(s->flags & CT_API_INNER_TIMED)) return 0; /* no children: nothing to join */
  if (!e && !(e = entry_of(j, s->corr, s->end_ns))) return 0;
  e->span = *s;
  e->span.name = keep_name(j, s->name);
  e->span.kernel = keep_name(j, s->kernel);
  e->has_span = 1;
  if (e->pending <= 0) complete(j, e, s->corr);
  return 1;
}

const char *ct_inner_activity(ct_inner_join *j, const ct_activity *a) {
  if (!a->has_call || !a->call_depth || !a->call_parent) return NULL;
  inner_entry *e = entry_of(j, a->call_parent, a->end_ns);
  if (!e) return NULL;
  ct_inner_call *c = &e->call;
  uint64_t dur = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  if (!c->kernels || a->start_ns < c->first_start) c->first_start = a->start_ns;
  if (a->end_ns > c->last_end) c->last_end = a->end_ns;
  c->kernels++;
  c->gpu_ns += dur;
  unsigned i = 0;
  int kernel = a->type != CT_GPU_MEMCPY && a->type != CT_GPU_MEMSET;
  while (kernel && i < c->nnames && strcmp(c->names[i], a->name)) i++;
  if (kernel && i == c->nnames && i < CT_INNER_NAMES) c->names[c->nnames++] = keep_name(j, a->name);
  const char *via = e->has_span ? e->span.name : NULL;
  e->pending--;
  if (e->has_span && e->pending <= 0) complete(j, e, a->call_parent);
  return via;
}

int ct_inner_finish(ct_inner_join *j) {
  sweep(j, 1);
  int oom = j->oom;
  j->oom = 0;
  return oom ? -1 : 0;
}

void ct_inner_free(ct_inner_join *j) {
  if (!j) return;
  ct_corr_free(&j->calls);
  for (size_t i = 0; i < ct_map_count(j->names); i++)
    free(*(char **)ct_map_entry(j->names, i, NULL, NULL));
  ct_map_free(j->names);
  free(j);
}
