/*
 * A small open-addressed hash map for the hooks: keys are (key, key2) pairs of
 * integers, values two integers. Lookups are lock-free; inserts take a mutex. The
 * table doubles when 3/4 full (the old table is kept: readers may still be in it).
 *
 * Removal (ctph_map_remove_if) is by backward shift under the mutex: the slots after
 * the removed one move back over it (linear probing leaves no tombstones, so a map
 * whose keys come and go stays the size of its peak live count). A slot can then be
 * rewritten with another key while a reader holds it: a map that removes is read with
 * ctph_map_get, which copies the values out and checks the map's move counter
 * (a sequence lock: odd while slots move), falling back to the mutex when a removal
 * ran meanwhile; ctph_map_find's slot pointer is only for maps that never remove.
 * Every slot field is read and written with atomics (TSan: scripts/tsan map_race).
 */
#ifndef CUTRACE_PRELOAD_HOOKS_MAP_H
#define CUTRACE_PRELOAD_HOOKS_MAP_H

#include <pthread.h>
#include <stdint.h>

#include "trace.h"

struct ctph_map_slot {
  uint64_t tag;   /* 0 = empty, else key2 | 1 << 63 (written last, release) */
  uint64_t key;
  uint64_t v1, v2;
};

struct ctph_map_table {
  uint64_t mask, used;
  struct ctph_map_table *retired; /* the smaller table it replaced (kept: readers may
                                     still be in it; reachable, for leak checkers) */
  struct ctph_map_slot slots[];
};

struct ctph_map {
  struct ctph_map_table *table;  /* NULL until the first insert */
  pthread_mutex_t lock;
  unsigned initial_log2;         /* log2 of the first table's size */
  uint64_t moves;                /* removals' sequence count: odd while slots move */
};

#define CTPH_MAP_INIT(log2) {NULL, PTHREAD_MUTEX_INITIALIZER, (log2), 0}

/* The slot of (key, key2), or NULL when absent. Lock-free. key2 < 2^63. */
struct ctph_map_slot *ctph_map_find(struct ctph_map *m, uint64_t key, uint64_t key2)
    CTP_HIDDEN;

/*
 * The slot of (key, key2), inserting it with values v1, v2 when absent (*inserted
 * is then 1). Returns NULL when memory runs out. The caller may hold no lock.
 */
struct ctph_map_slot *ctph_map_insert(struct ctph_map *m, uint64_t key, uint64_t key2,
                                      uint64_t v1, uint64_t v2, int *inserted) CTP_HIDDEN;

/*
 * Stores v1 and v2 (each unless NULL) in the slot of (key, key2) of the current table,
 * under the insert mutex, so that a concurrent growth cannot lose the store (a store
 * through a slot pointer found earlier may land in a table a growth has copied
 * already). Returns 0, or -1 when the key is absent.
 */
int ctph_map_store(struct ctph_map *m, uint64_t key, uint64_t key2, const uint64_t *v1,
                   const uint64_t *v2) CTP_HIDDEN;

/*
 * Replaces v1 of the slot of (key, key2) with v1 under the insert mutex (as
 * ctph_map_store) and sets *old to the value it replaced. Returns 0, or -1 when the
 * key is absent (*old untouched).
 */
int ctph_map_exchange(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t v1,
                      uint64_t *old) CTP_HIDDEN;

/*
 * Copies the values of (key, key2) into *v1 and *v2 (each unless NULL). Returns 1, or 0
 * when absent. Lock-free unless a removal moved slots during the lookup (then it looks
 * again under the mutex): the reader of a map that removes keys.
 */
int ctph_map_get(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t *v1, uint64_t *v2)
    CTP_HIDDEN;

/*
 * Removes (key, key2) when its v1 is `v1` (a compare and remove), under the insert mutex;
 * the slots after it move back (see the top). Returns 0 when removed, -1 when the key is
 * absent or its v1 is another value.
 */
int ctph_map_remove_if(struct ctph_map *m, uint64_t key, uint64_t key2, uint64_t v1) CTP_HIDDEN;

/* The number of slots of the current table (0 before the first insert). For tests. */
uint64_t ctph_map_capacity(struct ctph_map *m) CTP_HIDDEN;

#endif
