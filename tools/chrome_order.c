/*
 * Outer slices first (chrome_internal.h, docs/dump.md "Nesting"): the model delivers
 * calls in the order they end and NVTX ranges as read (RANGE records are written when
 * a range ends), so a nested call or range comes before the one around it. When the
 * two begin in the same ns, the viewers nest them in file order (trace_processor
 * sorts by time, ties in file order; Perfetto's protobuf the same), so the inner one,
 * written first, would become the parent. Calls of depth > 0 are therefore held until
 * their outermost call (`parent`) is written, and ranges of depth > 0 until the next
 * range of depth 0 of their thread; then the group is written in arrival order,
 * except that a slice goes before the slices it encloses that begin in the same ns
 * (longer first; same end: lower depth first). Without such ties the order on each
 * track is the one it was. Memory: the nested slices whose outer one is still to come
 * (a library call's launches until it is written), at most HOLD_MAX in all (then
 * every group is written as it stands), and one copy of each distinct name.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"

#define HOLD_MAX 16384
#define RANGE_GROUP (1ull << 63) /* group key of a thread's nested ranges: tid | this */

/* A call or range waiting for its outer slice. */
typedef struct held_slice {
  int is_range, has_alloc;
  ct_span span;               /* a call: names kept (keep_name) */
  const ct_inner_call *inner; /* the outer call being written: its child kernels, or NULL */
  chr_alloc_view alloc;
  struct ct_range range;
  const char *range_name;
} held_slice;

/* The nested slices held for one outer call (key: its corr) or one thread's ranges. */
typedef struct held_group {
  held_slice *a;
  size_t n, cap;
} held_group;

/* A copy of name that lives until chr_order_finish (one per distinct name). */
static const char *keep_name(ct_chrome *c, const char *name) {
  if (!name) return NULL;
  if (!c->held_names && !(c->held_names = ct_map_new(sizeof(char *)))) return NULL;
  char **copy = ct_map_get(c->held_names, name, strlen(name), NULL);
  if (copy && !*copy) *copy = strdup(name);
  return copy ? *copy : NULL;
}

static uint64_t begin_of(const held_slice *h) { return h->is_range ? h->range.begin_ns : h->span.begin_ns; }
static uint64_t end_of(const held_slice *h) { return h->is_range ? h->range.end_ns : h->span.end_ns; }
static uint64_t depth_of(const held_slice *h) { return h->is_range ? h->range.depth : h->span.depth; }

/* 1 when x, come after y, is around y and begins in the same ns: x goes first. */
static int goes_before(const held_slice *x, const held_slice *y) {
  if (begin_of(x) != begin_of(y) || x->is_range != y->is_range) return 0;
  return end_of(x) > end_of(y) || (end_of(x) == end_of(y) && depth_of(x) < depth_of(y));
}

static void write_held(ct_chrome *c, const held_slice *h) {
  if (h->is_range) chr_write_range(c, &h->range, h->range_name);
  else chr_write_call(c, &h->span, h->inner, h->has_alloc ? &h->alloc : NULL);
}

/* Writes group g's slices and then last (may be NULL), in arrival order but each
 * before the slices it goes_before; empties g. */
static void write_group(ct_chrome *c, held_group *g, const held_slice *last) {
  size_t n = g->n + (last != NULL);
  const held_slice *stack_order[64];
  const held_slice **order = n <= 64 ? stack_order : malloc(n * sizeof *order);
  if (!order) { /* out of memory: as they came */
    for (size_t i = 0; i < g->n; i++) write_held(c, &g->a[i]);
    if (last) write_held(c, last);
  } else {
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      const held_slice *x = i < g->n ? &g->a[i] : last;
      size_t at = m;
      for (size_t j = 0; j < m; j++)
        if (goes_before(x, order[j])) {
          at = j;
          break;
        }
      memmove(order + at + 1, order + at, (m - at) * sizeof *order);
      order[at] = x;
      m++;
    }
    for (size_t i = 0; i < m; i++) write_held(c, order[i]);
    if (order != stack_order) free(order);
  }
  c->held_total -= g->n;
  free(g->a);
  g->a = NULL;
  g->n = g->cap = 0;
}

/* Writes every group held, each in its order (at the end of a file, or when too many
 * slices are held). */
static void write_all(ct_chrome *c) {
  for (size_t i = 0; i < c->held.cap; i++) {
    uint64_t key;
    held_group *g = ct_corr_slot(&c->held, i, &key);
    if (g) write_group(c, g, NULL);
  }
  ct_corr_free(&c->held);
  ct_corr_init(&c->held, sizeof(held_group));
}

/* Appends a copy of h to the group of key; 0, or -1 when out of memory (h not held). */
static int hold(ct_chrome *c, uint64_t key, const held_slice *h) {
  if (!c->held.value_size) ct_corr_init(&c->held, sizeof(held_group));
  if (c->held_total >= HOLD_MAX) write_all(c);
  held_group *g = ct_corr_find(&c->held, key, 1);
  if (!g) return -1;
  if (g->n == g->cap) {
    size_t ncap = g->cap ? g->cap * 2 : 4;
    held_slice *na = realloc(g->a, ncap * sizeof *na);
    if (!na) return -1;
    g->a = na;
    g->cap = ncap;
  }
  g->a[g->n++] = *h;
  c->held_total++;
  return 0;
}

/* The group of key, or NULL when nothing is held for it. */
static held_group *group_of(ct_chrome *c, uint64_t key) {
  return c->held.value_size && c->held.n ? ct_corr_find(&c->held, key, 0) : NULL;
}

/* Writes last after the group of key (when there is one), outer slices first. */
static void write_outer(ct_chrome *c, uint64_t key, const held_slice *last) {
  held_group *g = group_of(c, key);
  if (!g) {
    write_held(c, last);
    return;
  }
  write_group(c, g, last);
  ct_corr_remove(&c->held, g);
}

void chr_order_call(ct_chrome *c, const ct_span *s, const ct_inner_call *inner,
                    const chr_alloc_view *alloc) {
  if ((s->depth == 0 || !s->parent || inner) && !group_of(c, s->corr)) { /* the common case */
    chr_write_call(c, s, inner, alloc);
    return;
  }
  held_slice h = {.span = *s, .inner = inner, .has_alloc = alloc != NULL};
  if (alloc) h.alloc = *alloc;
  if (s->depth > 0 && s->parent && !inner) {
    h.span.name = keep_name(c, s->name);
    h.span.kernel = keep_name(c, s->kernel);
    h.span.proc = NULL;
    if ((!s->name || h.span.name) && (!s->kernel || h.span.kernel) && hold(c, s->parent, &h) == 0)
      return;
    h.span = *s; /* out of memory: now */
  }
  write_outer(c, s->corr, &h);
}

void chr_order_range(ct_chrome *c, const struct ct_range *r, const char *name) {
  held_slice h = {.is_range = 1, .range = *r, .range_name = name};
  if (r->depth > 0 && !(r->flags & CT_RANGE_STARTEND)) {
    h.range_name = keep_name(c, name);
    if ((!name || h.range_name) && hold(c, r->tid | RANGE_GROUP, &h) == 0) return;
    h.range_name = name;
  }
  if (!(r->flags & CT_RANGE_STARTEND)) write_outer(c, r->tid | RANGE_GROUP, &h);
  else write_held(c, &h);
}

void chr_order_finish(ct_chrome *c) {
  if (c->held.value_size) write_all(c);
  ct_corr_free(&c->held);
  memset(&c->held, 0, sizeof c->held);
  for (size_t i = 0; c->held_names && i < ct_map_count(c->held_names); i++)
    free(*(char **)ct_map_entry(c->held_names, i, NULL, NULL));
  ct_map_free(c->held_names);
  c->held_names = NULL;
}
