/*
 * The hooks map under growth (map.c): one thread stores into and exchanges the values of
 * a key while another inserts enough keys to double the table many times. Every value
 * stored or exchanged must be the one read back later: a store through a slot found
 * before a growth copied the table lands in the retired table and is lost.
 * Exit 0 when no store was lost, 1 otherwise (the count printed).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../map.h"

#define KEY 7u
#define KEY2 3u
#define ROUNDS 6
#define INSERTS (1u << 17)

struct round {
  struct ctph_map map;
  int growing; /* 1 while the grower inserts */
  long stores, lost, mismatched;
};

/* Inserts INSERTS keys other than KEY, doubling the table 13 times. */
static void *grower(void *arg) {
  struct round *r = arg;
  for (uint64_t k = 1000; k < 1000 + INSERTS; k++) {
    int inserted;
    if (!ctph_map_insert(&r->map, k, 0, k, 0, &inserted))
      break;
  }
  __atomic_store_n(&r->growing, 0, __ATOMIC_RELEASE);
  return NULL;
}

/* The value of KEY as a reader sees it now. */
static uint64_t current(struct round *r, int field) {
  struct ctph_map_slot *s = ctph_map_find(&r->map, KEY, KEY2);
  return !s ? UINT64_MAX : __atomic_load_n(field == 1 ? &s->v1 : &s->v2, __ATOMIC_ACQUIRE);
}

/* Stores 1, 2, 3, ... in turn with ctph_map_store (v2) and ctph_map_exchange (v1), each
 * time checking that the previous value is still there, until the grower is done. */
static void *storer(void *arg) {
  struct round *r = arg;
  uint64_t last = 0;
  while (__atomic_load_n(&r->growing, __ATOMIC_ACQUIRE)) {
    uint64_t v = last + 1, old = 0;
    if (current(r, 2) != last)
      r->lost++;
    if (ctph_map_store(&r->map, KEY, KEY2, NULL, &v) != 0)
      r->lost++;
    if (ctph_map_exchange(&r->map, KEY, KEY2, v, &old) != 0 || old != last)
      r->mismatched++;
    if (current(r, 1) != v)
      r->mismatched++;
    r->stores++;
    last = v;
  }
  if (current(r, 2) != last || current(r, 1) != last)
    r->lost++;
  return NULL;
}

/* Kept reachable: the tables are never freed (readers may still be in them). */
static struct round *rounds[ROUNDS];

int main(void) {
  long stores = 0, lost = 0, mismatched = 0;
  for (int i = 0; i < ROUNDS; i++) {
    struct round *r = rounds[i] = calloc(1, sizeof *r);
    if (!r)
      return 77;
    r->map = (struct ctph_map)CTPH_MAP_INIT(4);
    r->growing = 1;
    int inserted;
    if (!ctph_map_insert(&r->map, KEY, KEY2, 0, 0, &inserted) || !inserted) {
      fprintf(stderr, "map_race: first insert failed\n");
      return 1;
    }
    pthread_t g, s;
    pthread_create(&s, NULL, storer, r);
    pthread_create(&g, NULL, grower, r);
    pthread_join(g, NULL);
    pthread_join(s, NULL);
    stores += r->stores, lost += r->lost, mismatched += r->mismatched;
  }
  printf("map_race: %ld stores during growth, %ld lost, %ld exchanges mismatched\n", stores,
         lost, mismatched);
  return lost || mismatched ? 1 : 0;
}
