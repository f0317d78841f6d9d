/*
 * Which of the records a span or activity names were read (model_ready.h): KERNEL_ATTR
 * ids, STACK nodes with their ancestors, launch shapes' OCCUPANCY records.
 */
#include "model_ready.h"

#include <stdlib.h>
#include <string.h>

/* Sets id's bit; 0 when out of memory. */
static int bits_set(ct_id_bits *b, uint64_t id) {
  if (id / 8 >= b->n) {
    size_t n = b->n ? b->n : 64;
    while (n <= id / 8) n *= 2;
    uint8_t *nb = realloc(b->bits, n);
    if (!nb) return 0;
    memset(nb + b->n, 0, n - b->n);
    b->bits = nb;
    b->n = n;
  }
  b->bits[id / 8] |= (uint8_t)(1u << (id % 8));
  return 1;
}

static inline int bits_has(const ct_id_bits *b, uint64_t id) {
  return id / 8 < b->n && (b->bits[id / 8] >> (id % 8) & 1);
}

/* 1 when id is never waited for: none, beyond the ids noted, or memory ran out. */
static inline int always_ready(const ct_ready *r, uint64_t id) {
  return !id || id >= CT_READY_MAX_ID || r->oom;
}

void ct_ready_attr_settle(ct_ready *r, uint64_t id) {
  if (!always_ready(r, id) && !bits_set(&r->attrs, id)) r->oom = 1;
}

int ct_ready_attr(const ct_ready *r, uint64_t id) {
  return always_ready(r, id) || bits_has(&r->attrs, id);
}

int ct_ready_stack(const ct_ready *r, uint64_t id) {
  return always_ready(r, id) || bits_has(&r->stacks, id);
}

void ct_ready_stack_settle(ct_ready *r, uint64_t id) {
  if (!always_ready(r, id) && !bits_set(&r->stacks, id)) r->oom = 1;
}

void ct_ready_stack_read(ct_ready *r, uint64_t id, uint64_t parent) {
  if (always_ready(r, id)) return;
  if (!ct_ready_stack(r, parent)) {
    if (r->n_orphans == r->cap_orphans && r->cap_orphans < CT_READY_MAX_ORPHANS) {
      size_t ncap = r->cap_orphans ? r->cap_orphans * 2 : 16;
      ct_orphan *na = realloc(r->orphans, ncap * sizeof *na);
      if (na) {
        r->orphans = na;
        r->cap_orphans = ncap;
      }
    }
    if (r->n_orphans < r->cap_orphans) {
      r->orphans[r->n_orphans++] = (ct_orphan){id, parent};
      return;
    }
    /* no room to remember it: it does not wait */
  }
  ct_ready_stack_settle(r, id);
  /* the orphans this made ready, and theirs (a pass finds each newly ready one; few
   * nodes ever come before their parent) */
  for (int changed = 1; changed && r->n_orphans;) {
    changed = 0;
    for (size_t i = 0; i < r->n_orphans;) {
      if (ct_ready_stack(r, r->orphans[i].parent)) {
        ct_ready_stack_settle(r, r->orphans[i].id);
        r->orphans[i] = r->orphans[--r->n_orphans];
        changed = 1;
      } else {
        i++;
      }
    }
  }
}

static size_t shape_home(const ct_shape *s, size_t cap) {
  uint64_t h = s->attr * 0x9E3779B97F4A7C15ull;
  h ^= (s->device + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= s->block_threads * 0x165667B19E3779F9ull;
  h ^= s->dyn_smem * 0xD6E8FEB86659FD93ull;
  return (size_t)(h ^ h >> 29) & (cap - 1);
}

static inline int shape_equal(const ct_shape *a, const ct_shape *b) {
  return a->attr == b->attr && a->device == b->device && a->block_threads == b->block_threads &&
         a->dyn_smem == b->dyn_smem;
}

int ct_ready_shape(const ct_ready *r, const ct_shape *s) {
  if (!s->attr || r->oom || r->n_shapes >= CT_READY_MAX_SHAPES) return 1;
  if (!r->cap_shapes) return 0;
  for (size_t i = shape_home(s, r->cap_shapes); r->shapes[i].attr;
       i = (i + 1) & (r->cap_shapes - 1))
    if (shape_equal(&r->shapes[i], s)) return 1;
  return 0;
}

void ct_ready_shape_settle(ct_ready *r, const ct_shape *s) {
  if (ct_ready_shape(r, s)) return;
  if ((r->n_shapes + 1) * 2 > r->cap_shapes) {
    size_t ncap = r->cap_shapes ? r->cap_shapes * 2 : 64;
    ct_shape *na = calloc(ncap, sizeof *na);
    if (!na) {
      r->oom = 1;
      return;
    }
    for (size_t i = 0; i < r->cap_shapes; i++) {
      if (!r->shapes[i].attr) continue;
      size_t j = shape_home(&r->shapes[i], ncap);
      while (na[j].attr) j = (j + 1) & (ncap - 1);
      na[j] = r->shapes[i];
    }
    free(r->shapes);
    r->shapes = na;
    r->cap_shapes = ncap;
  }
  size_t i = shape_home(s, r->cap_shapes);
  while (r->shapes[i].attr) i = (i + 1) & (r->cap_shapes - 1);
  r->shapes[i] = *s;
  r->n_shapes++;
}

void ct_ready_free(ct_ready *r) {
  free(r->attrs.bits);
  free(r->stacks.bits);
  free(r->orphans);
  free(r->shapes);
  memset(r, 0, sizeof *r);
}
