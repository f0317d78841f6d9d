/*
 * The hooks map's removals (map.c, ctph_map_remove_if: backward shift).
 *
 * Churn (one thread): 100,000 distinct keys inserted and removed in turn, at most LIVE
 * alive at once, keys of two key2 values; after each step every live key reads back
 * its values and the key just removed is absent; the table never grows past its first
 * 64 slots (bounded by the live count, not by the keys ever seen); a compare-and-remove
 * with the wrong v1 removes nothing.
 *
 * Race (ROUNDS rounds): a small table gets TRANSIENT keys, then STABLE keys (placed
 * behind the transients in their clusters); READERS threads read the stable keys with
 * ctph_map_get while a churner removes the transients (each removal moves the stable
 * keys behind it back toward their home slots) and inserts and removes more; every
 * read must find its key with its values (a reader that copied a slot while a removal
 * moved it would see another key's values, or miss it). The number of stable keys
 * whose slot moved is printed (the race did happen).
 *
 * Exit 0 when nothing was wrong, 1 otherwise (the counts printed).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "../map.h"

#define LIVE 24
#define CHURN_KEYS 100000u
#define STABLE 24
#define TRANSIENT 20
#define READERS 2
#define ROUNDS 300
#define CHURN_STEPS 3000u

static uint64_t value1(uint64_t key) { return key * 3 + 1; }
static uint64_t value2(uint64_t key) { return key ^ 0xabcdefull; }

/* One-thread churn; returns the number of wrong answers. */
static long churn(void) {
  static struct ctph_map m = CTPH_MAP_INIT(6);
  long wrong = 0;
  uint64_t capacity = 0;
  for (uint64_t k = 1; k <= CHURN_KEYS; k++) {
    int inserted = 0;
    if (!ctph_map_insert(&m, k, k & 1, value1(k), value2(k), &inserted) || !inserted)
      wrong++;
    if (k > LIVE) {
      uint64_t gone = k - LIVE;
      if (ctph_map_remove_if(&m, gone, gone & 1, value1(gone) + 1) != -1)
        wrong++; /* wrong v1: must stay */
      if (ctph_map_remove_if(&m, gone, gone & 1, value1(gone)) != 0)
        wrong++;
      if (ctph_map_get(&m, gone, gone & 1, NULL, NULL))
        wrong++;
    }
    for (uint64_t j = k > LIVE ? k - LIVE + 1 : 1; j <= k; j++) {
      uint64_t a = 0, b = 0;
      if (!ctph_map_get(&m, j, j & 1, &a, &b) || a != value1(j) || b != value2(j))
        wrong++;
    }
    if (ctph_map_capacity(&m) > capacity)
      capacity = ctph_map_capacity(&m);
  }
  printf("map_remove churn: %u keys, at most %d alive, table %llu slots, %ld wrong\n",
         CHURN_KEYS, LIVE, (unsigned long long)capacity, wrong);
  return wrong + (capacity != 64);
}

struct round {
  struct ctph_map map;
  int churning, readers_ready;
  long reads, misses, mismatched;
};

static void *reader(void *arg) {
  struct round *r = arg;
  long reads = 0, misses = 0, mismatched = 0;
  int ready = 0;
  while (__atomic_load_n(&r->churning, __ATOMIC_ACQUIRE)) {
    if (!ready++)
      __atomic_add_fetch(&r->readers_ready, 1, __ATOMIC_RELEASE);
    for (uint64_t k = 1; k <= STABLE; k++) {
      uint64_t a = 0, b = 0;
      if (!ctph_map_get(&r->map, k, 0, &a, &b))
        misses++;
      else if (a != value1(k) || b != value2(k))
        mismatched++;
      reads++;
    }
  }
  __atomic_add_fetch(&r->reads, reads, __ATOMIC_RELAXED);
  __atomic_add_fetch(&r->misses, misses, __ATOMIC_RELAXED);
  __atomic_add_fetch(&r->mismatched, mismatched, __ATOMIC_RELAXED);
  return NULL;
}

/* Once the readers read: removes the transient keys 1000 .. 1000 + TRANSIENT - 1
 * inserted before the stable ones, inserting 1000 + TRANSIENT, ... in turn. */
static void *churner(void *arg) {
  struct round *r = arg;
  while (__atomic_load_n(&r->readers_ready, __ATOMIC_ACQUIRE) < READERS)
    sched_yield();
  for (uint64_t i = 0; i < CHURN_STEPS; i++) {
    uint64_t k = 1000 + TRANSIENT + i;
    int inserted;
    ctph_map_remove_if(&r->map, k - TRANSIENT, 0, value1(k - TRANSIENT));
    ctph_map_insert(&r->map, k, 0, value1(k), value2(k), &inserted);
  }
  __atomic_store_n(&r->churning, 0, __ATOMIC_RELEASE);
  return NULL;
}

static struct round *rounds[ROUNDS]; /* reachable: the tables are never freed */

int main(void) {
  long wrong = churn();
  long reads = 0, misses = 0, mismatched = 0, moved = 0, grown = 0;
  for (int i = 0; i < ROUNDS; i++) {
    struct round *r = rounds[i] = calloc(1, sizeof *r);
    if (!r)
      return 77;
    r->map = (struct ctph_map)CTPH_MAP_INIT(6);
    r->churning = 1;
    struct ctph_map_slot *at[STABLE + 1];
    for (uint64_t k = 1000; k < 1000 + TRANSIENT; k++) {
      int inserted;
      ctph_map_insert(&r->map, k, 0, value1(k), value2(k), &inserted);
    }
    for (uint64_t k = 1; k <= STABLE; k++) {
      int inserted;
      at[k] = ctph_map_insert(&r->map, k, 0, value1(k), value2(k), &inserted);
    }
    pthread_t c, rd[READERS];
    for (int j = 0; j < READERS; j++)
      pthread_create(&rd[j], NULL, reader, r);
    pthread_create(&c, NULL, churner, r);
    pthread_join(c, NULL);
    for (int j = 0; j < READERS; j++)
      pthread_join(rd[j], NULL);
    for (uint64_t k = 1; k <= STABLE; k++)
      moved += ctph_map_find(&r->map, k, 0) != at[k];
    grown += ctph_map_capacity(&r->map) != 64;
    reads += r->reads, misses += r->misses, mismatched += r->mismatched;
  }
  printf("map_remove race: %ld reads during removals, %ld missed, %ld mismatched; %ld stable "
         "slots moved, %ld tables grown\n", reads, misses, mismatched, moved, grown);
  return wrong || misses || mismatched || grown || !moved ? 1 : 0;
}
