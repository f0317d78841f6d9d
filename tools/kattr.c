/* Kernel attributes and occupancy of one trace file (kattr.h). */
#include "kattr.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

struct ct_kattr_table {
  ct_map *attrs;  /* id -> struct ct_kernel_attr */
  ct_map *shapes; /* shape_key -> int blocks + 1 */
};

typedef struct shape_key {
  uint64_t attr, device, block_threads, dyn_smem;
} shape_key;

ct_kattr_table *ct_kattr_new(void) {
  ct_kattr_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->attrs = ct_map_new(sizeof(struct ct_kernel_attr));
  t->shapes = ct_map_new(sizeof(int));
  if (!t->attrs || !t->shapes) {
    ct_kattr_free(t);
    return NULL;
  }
  return t;
}

void ct_kattr_free(ct_kattr_table *t) {
  if (!t) return;
  if (t->attrs) ct_map_free(t->attrs);
  if (t->shapes) ct_map_free(t->shapes);
  free(t);
}

int ct_kattr_add_attr(ct_kattr_table *t, const struct ct_kernel_attr *a) {
  struct ct_kernel_attr *slot = ct_map_get(t->attrs, &a->id, sizeof a->id, NULL);
  if (!slot) return -1;
  *slot = *a;
  return 0;
}

int ct_kattr_add_occupancy(ct_kattr_table *t, const struct ct_occupancy *o) {
  shape_key k = {o->attr, o->device, o->block_threads, o->dyn_smem};
  int *slot = ct_map_get(t->shapes, &k, sizeof k, NULL);
  if (!slot) return -1;
  *slot = (int)(o->blocks_per_sm < 1u << 20 ? o->blocks_per_sm : 1u << 20) + 1;
  return 0;
}

const struct ct_kernel_attr *ct_kattr_find(const ct_kattr_table *t, uint64_t id) {
  int created = 0;
  if (!t || !id) return NULL;
  /* ct_map has no plain lookup: a missing id gets a zeroed slot (id 0), never returned */
  struct ct_kernel_attr *slot = ct_map_get(t->attrs, &id, sizeof id, &created);
  return slot && !created && slot->id == id ? slot : NULL;
}

int ct_kattr_blocks(const ct_kattr_table *t, uint64_t attr, uint64_t device,
                    uint64_t block_threads, uint64_t dyn_smem) {
  if (!t || !attr) return -1;
  shape_key k = {attr, device, block_threads, dyn_smem};
  int *slot = ct_map_get(t->shapes, &k, sizeof k, NULL);
  return slot && *slot ? *slot - 1 : -1;
}

const struct ct_device *ct_kattr_device(const ct_proc *p, uint64_t device) {
  for (unsigned i = 0; p && i < p->ndevices && i < 16; i++)
    if (p->devices[i].device == device) return &p->devices[i];
  return NULL;
}

double ct_kattr_occupancy_pct(const struct ct_device *dev, uint64_t block_threads, int blocks) {
  if (!dev || blocks < 0 || !dev->warp_size || dev->max_threads_per_sm < dev->warp_size)
    return -1;
  uint64_t warps = (block_threads + dev->warp_size - 1) / dev->warp_size;
  uint64_t sm_warps = dev->max_threads_per_sm / dev->warp_size;
  return 100.0 * (double)((uint64_t)blocks * warps) / (double)sm_warps;
}
