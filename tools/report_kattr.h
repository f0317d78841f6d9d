/*
 * The kernel attributes columns of `cutrace report` (format 1.6; tools/report_kattr.c):
 * each kernels row keeps the configurations its launches ran with (registers, static
 * and dynamic shared memory, block size, resident blocks per SM, theoretical
 * occupancy), joined at the end of each file, when its KERNEL_ATTR and OCCUPANCY
 * records are all known.
 */
#ifndef CUTRACE_REPORT_KATTR_H
#define CUTRACE_REPORT_KATTR_H

#include <stdint.h>

#include "kattr.h"
#include "output.h"

#define CT_KATTR_CONFIGS 8 /* distinct configurations kept per kernel row */

/* One configuration of a kernel's launches. */
typedef struct ct_kattr_config {
  uint64_t count;                    /* instances */
  uint64_t regs, static_smem, dyn_smem, block_threads, local_bytes;
  int blocks_per_sm;                 /* -1: unknown */
  double occupancy_pct;              /* theoretical; < 0: unknown */
} ct_kattr_config;

/* What a kernels row knows of its attributes. */
typedef struct ct_kattr_summary {
  uint64_t known;                    /* instances whose function attributes are known */
  unsigned nconfigs;                 /* configurations kept */
  int more;                          /* more distinct configurations than kept */
  ct_kattr_config configs[CT_KATTR_CONFIGS];
  uint64_t regs_min, regs_max, smem_min, smem_max; /* smem: static + dynamic */
  double occ_min, occ_max;           /* over the configurations whose occupancy is known */
  int occ_known;
} ct_kattr_summary;

/* The launches of one file waiting for their attributes (joined at its end). */
typedef struct ct_kattr_pending ct_kattr_pending;

/* A new, empty pending set; NULL when out of memory. */
ct_kattr_pending *ct_kattr_pending_new(void);

/* Counts one instance of a kernel whose row summary is sum (stable while the file is
 * read) launched as a says. Returns 0, or -1 when out of memory. */
int ct_kattr_pending_add(ct_kattr_pending *p, ct_kattr_summary *sum, const ct_activity *a);

/* Joins the pending launches with the file's table t, folds them into their rows'
 * summaries and frees p. */
void ct_kattr_pending_finish(ct_kattr_pending *p, const ct_kattr_table *t);

/* The configuration of the most instances (the first seen on a tie), or NULL. */
const ct_kattr_config *ct_kattr_top(const ct_kattr_summary *s);

/* Text cells: "Regs", "Smem" (static + dynamic bytes), "Occ %": one value, a range
 * "min-max" when the configurations differ, "-" when unknown. */
void ct_kattr_text_cells(ct_table *tb, const ct_kattr_summary *s);

/* CSV cells: regs, smem_static, smem_dynamic, block_threads, blocks_per_sm,
 * occupancy_pct (the top configuration; empty when unknown), configs. */
void ct_kattr_csv_cells(ct_table *tb, const ct_kattr_summary *s);

/* The configuration of one launch shape from the file's table: 1 when the function's
 * attributes are known (*c filled, count 0), else 0. */
int ct_kattr_config_of(const ct_kattr_table *t, const ct_proc *proc, uint64_t attr,
                       uint64_t device, uint64_t block_threads, uint64_t dyn_smem,
                       ct_kattr_config *c);

/* The members of one configuration in the open JSON object: regs, smem_static,
 * smem_dynamic, local_bytes, block_threads, blocks_per_sm, occupancy_pct (null when
 * unknown). */
void ct_kattr_config_members(ct_json *j, const ct_kattr_config *c);

/* The JSON "attributes" member of a kernels row (null when unknown). */
void ct_kattr_json(ct_json *j, const ct_kattr_summary *s);

/* The same under another key (diff's "attributes_before", "attributes_after"); s NULL
 * writes null. */
void ct_kattr_json_as(ct_json *j, const char *key, const ct_kattr_summary *s);

/* What changed from one summary to another, as "regs 32 -> 128, smem 0 -> 4096, occ
 * 50 -> 25 %" (ranges "min-max"), into buf; only what differs, only when both are
 * known. Returns 1 when something changed (buf set), else 0 (buf ""). */
int ct_kattr_change(const ct_kattr_summary *before, const ct_kattr_summary *after, char *buf,
                    size_t len);

#endif
