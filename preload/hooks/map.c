/* The hooks' open-addressed hash map (see map.h). */
#include "map.h"

#include <errno.h>
#include <stdlib.h>

#define TAG_USED (1ull << 63)

static uint64_t mix(uint64_t key, uint64_t key2) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull ^ (key2 + 0x632BE59BD9B4E019ull);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

static struct ctph_map_slot *probe(struct ctph_map_table *t, uint64_t key, uint64_t tag,
                                   int *empty) {
  for (uint64_t i = mix(key, tag), n = 0; n <= t->mask; i++, n++) {
    struct ctph_map_slot *s = &t->slots[i & t->mask];
    uint64_t st = __atomic_load_n(&s->tag, __ATOMIC_ACQUIRE);
    if (!st) {
      *empty = 1;
      return s;
    }
    /* acquire: ctph_map_get's later read of the move counter stays after it */
    if (st == tag && __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == key) {
      *empty = 0;
      return s;
    }
  }
  *empty = 0;
  return NULL;
}

struct ctph_map_slot *ctph_map_find(struct ctph_map *m, uint64_t key, uint64_t key2) {
  struct ctph_map_table *t = __atomic_load_n(&m->table, __ATOMIC_ACQUIRE);
  if (!t)
    return NULL;
  int empty;
  struct ctph_map_slot *s = probe(t, key, key2 | TAG_USED, &empty);
  return s && !empty ? s : NULL;
}

static struct ctph_map_table *table_new(uint64_t size) {
  struct ctph_map_table *t = calloc(1, sizeof *t + size * sizeof(struct ctph_map_slot));
  if (t)
    t->mask = size - 1;
  return t;
}

/* Copies every slot of old into a table twice its size (lock held). */
static struct ctph_map_table *grow(struct ctph_map_table *old) {
  struct ctph_map_table *t = table_new((old->mask + 1) * 2);
  if (!t)
    return NULL;
  for (uint64_t i = 0; i <= old->mask; i++) {
    struct ctph_map_slot *o = &old->slots[i];
    if (!o->tag)
      continue;
    int empty;
    uint64_t key = __atomic_load_n(&o->key, __ATOMIC_RELAXED);
    struct ctph_map_slot *s = probe(t, key, o->tag, &empty);
    s->key = key;
    s->v1 = __atomic_load_n(&o->v1, __ATOMIC_RELAXED);
    s->v2 = __atomic_load_n(&o->v2, __ATOMIC_RELAXED);
    s->tag = o->tag;
    t->used++;
  }
  t->retired = old;
  return t;
}

struct ctph_map_slot *ctph_map_insert(struct ctph_map *m, uint64_t key, uint64_t key2,
                                      uint64_t v1, uint64_t v2, int *inserted) {
  *inserted = 0;
  struct ctph_map_slot *found = ctph_map_find(m, key, key2);
  if (found)
    return found;
  int saved = errno;
  pthread_mutex_lock(&m->lock);
  struct ctph_map_table *t = m->table;
  if (!t)
    t = table_new(1ull << m->initial_log2);
  else if ((t->used + 1) * 4 > (t->mask + 1) * 3)
    t = grow(t) ?: t;  /* the old table stays readable (t->retired); it is never freed */
  struct ctph_map_slot *s = NULL;
  if (t) {
    if (t != m->table)
      __atomic_store_n(&m->table, t, __ATOMIC_RELEASE);
    int empty;
    s = probe(t, key, key2 | TAG_USED, &empty);
    if (s && empty) {
      /* atomics: the slot may have been emptied by a removal under a reader's eyes */
      __atomic_store_n(&s->key, key, __ATOMIC_RELAXED);
      __atomic_store_n(&s->v1, v1, __ATOMIC_RELAXED);
      __atomic_store_n(&s->v2, v2, __ATOMIC_RELAXED);
      __atomic_store_n(&s->tag, key2 | TAG_USED, __ATOMIC_RELEASE);
      t->used++;
      *inserted = 1;
    }
  }
  pthread_mutex_unlock(&m->lock);
  errno = saved;
  return s;
}

/* The slot of (key, key2) in the current table, NULL when absent; m->lock held, so no
 * growth can move it while the caller changes it. */
static struct ctph_map_slot *find_locked(struct ctph_map *m, uint64_t key, uint64_t key2) {
  struct ctph_map_table *t = m->table;
  int empty = 1;
  struct ctph_map_slot *s = t ? probe(t, key, key2 | TAG_USED, &empty) : NULL;
  return s && !empty ? s : NULL;
}

int ctph_map_store(struct ctph_map *m, uint64_t key, uint64_t key2, const uint64_t *v1,
                   const uint64_t *v2) {
  int saved = errno, rc = -1;
  pthread_mutex_lock(&m->lock);
  struct ctph_map_slot *s = find_locked(m, key, key2);
  if (s) {
    if (v1)
      __atomic_store_n(&s->v1, *v1, __ATOMIC_RELAXED);
    if (v2)
      __atomic_store_n(&s->v2, *v2, __ATOMIC_RELEASE);
    rc = 0;
  }
  pthread_mutex_unlock(&m->lock);
  errno = saved;
  return rc;
}

int ctph_map_exchange(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t v1,
                      uint64_t *old) {
  int saved = errno, rc = -1;
  pthread_mutex_lock(&m->lock);
  struct ctph_map_slot *s = find_locked(m, key, key2);
  if (s) {
    *old = __atomic_exchange_n(&s->v1, v1, __ATOMIC_ACQ_REL);
    rc = 0;
  }
  pthread_mutex_unlock(&m->lock);
  errno = saved;
  return rc;
}


int ctph_map_get(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t *v1, uint64_t *v2) {
  uint64_t a = 0, b = 0, before = __atomic_load_n(&m->moves, __ATOMIC_ACQUIRE);
  struct ctph_map_slot *s = ctph_map_find(m, key, key2);
  if (s) {
    a = __atomic_load_n(&s->v1, __ATOMIC_ACQUIRE);
    b = __atomic_load_n(&s->v2, __ATOMIC_ACQUIRE);
  }
  /* A sequence lock without fences (TSan does not model them): every load above is an
   * acquire, so the counter's second read stays after them, and every store of a move
   * is a release after the counter went odd: a reader that read anything a removal
   * moved reads an odd or later count here. */
  if ((before & 1) || __atomic_load_n(&m->moves, __ATOMIC_RELAXED) != before) {
    int saved = errno;
    pthread_mutex_lock(&m->lock);
    s = find_locked(m, key, key2);
    if (s)
      a = s->v1, b = s->v2;
    pthread_mutex_unlock(&m->lock);
    errno = saved;
  }
  if (s && v1)
    *v1 = a;
  if (s && v2)
    *v2 = b;
  return s != NULL;
}

/* Copies slot `from` over slot `to` (lock held, the move counter odd), tag last; each
 * store a release (ordered after the counter's odd value: see ctph_map_get). */
static void move_slot(struct ctph_map_slot *to, const struct ctph_map_slot *from) {
  __atomic_store_n(&to->key, from->key, __ATOMIC_RELEASE);
  __atomic_store_n(&to->v1, from->v1, __ATOMIC_RELEASE);
  __atomic_store_n(&to->v2, from->v2, __ATOMIC_RELEASE);
  __atomic_store_n(&to->tag, from->tag, __ATOMIC_RELEASE);
}

int ctph_map_remove_if(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t v1) {
  int saved = errno, rc = -1;
  pthread_mutex_lock(&m->lock);
  struct ctph_map_table *t = m->table;
  struct ctph_map_slot *s = find_locked(m, key, key2);
  if (s && s->v1 == v1) {
    /* odd while slots move: readers that overlap look again under the mutex */
    __atomic_store_n(&m->moves, m->moves + 1, __ATOMIC_RELAXED);
    uint64_t hole = (uint64_t)(s - t->slots);
    for (uint64_t j = (hole + 1) & t->mask; t->slots[j].tag; j = (j + 1) & t->mask) {
      const struct ctph_map_slot *c = &t->slots[j];
      uint64_t home = mix(c->key, c->tag) & t->mask;
      /* c may fill the hole when the hole lies on its probe path (home .. j) */
      if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
        move_slot(&t->slots[hole], c);
        hole = j;
      }
    }
    __atomic_store_n(&t->slots[hole].tag, 0, __ATOMIC_RELEASE);
    t->used--;
    __atomic_store_n(&m->moves, m->moves + 1, __ATOMIC_RELEASE);
    rc = 0;
  }
  pthread_mutex_unlock(&m->lock);
  errno = saved;
  return rc;
}

uint64_t ctph_map_capacity(struct ctph_map *m) {
  struct ctph_map_table *t = __atomic_load_n(&m->table, __ATOMIC_ACQUIRE);
  return t ? t->mask + 1 : 0;
}
