/*
 * Kernel attributes and theoretical occupancy of one trace file (format 1.6 KERNEL_ATTR
 * and OCCUPANCY records; tools/kattr.c): the table report and dump --chrome join
 * launches with (LAUNCH attr, block size, dynamic shared memory, device).
 */
#ifndef CUTRACE_KATTR_H
#define CUTRACE_KATTR_H

#include <stdint.h>

#include "model.h"

typedef struct ct_kattr_table ct_kattr_table;

/* An empty table; NULL when out of memory. */
ct_kattr_table *ct_kattr_new(void);

/* Frees the table (NULL is fine). */
void ct_kattr_free(ct_kattr_table *t);

/* Keeps a KERNEL_ATTR record (by its id). Returns 0, or -1 when out of memory. */
int ct_kattr_add_attr(ct_kattr_table *t, const struct ct_kernel_attr *a);

/* Keeps an OCCUPANCY record. Returns 0, or -1 when out of memory. */
int ct_kattr_add_occupancy(ct_kattr_table *t, const struct ct_occupancy *o);

/* The attributes of id, or NULL when the file has none. */
const struct ct_kernel_attr *ct_kattr_find(const ct_kattr_table *t, uint64_t id);

/* The resident blocks per SM of a launch shape, or -1 when the file does not say. */
int ct_kattr_blocks(const ct_kattr_table *t, uint64_t attr, uint64_t device,
                    uint64_t block_threads, uint64_t dyn_smem);

/* The device record of `device` in p, or NULL. */
const struct ct_device *ct_kattr_device(const ct_proc *p, uint64_t device);

/* Theoretical occupancy in percent: blocks x the block's warps / the SM's warps (the
 * CUDA occupancy calculator's ratio); -1 when the device's limits are unknown (a
 * trace before 1.6 or a driver that did not say). */
double ct_kattr_occupancy_pct(const struct ct_device *dev, uint64_t block_threads, int blocks);

#endif
