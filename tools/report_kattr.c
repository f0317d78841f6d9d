/* The kernel attributes columns of `cutrace report` (report_kattr.h). */
#include "report_kattr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

struct ct_kattr_pending {
  ct_map *launches; /* pending_key -> pending_value */
};

typedef struct pending_key {
  ct_kattr_summary *sum;
  uint64_t attr, device, block_threads, dyn_smem;
} pending_key;

typedef struct pending_value {
  uint64_t count;
  struct ct_device dev; /* the launch's device as the file described it (limits 0: unknown) */
} pending_value;

ct_kattr_pending *ct_kattr_pending_new(void) {
  ct_kattr_pending *p = calloc(1, sizeof *p);
  if (p && !(p->launches = ct_map_new(sizeof(pending_value)))) {
    free(p);
    return NULL;
  }
  return p;
}

int ct_kattr_pending_add(ct_kattr_pending *p, ct_kattr_summary *sum, const ct_activity *a) {
  if (a->detail != CT_DETAIL_LAUNCH || !a->d.launch.attr) return 0;
  const struct ct_launch *l = &a->d.launch;
  pending_key k;
  memset(&k, 0, sizeof k);
  k.sum = sum;
  k.attr = l->attr;
  k.device = a->device;
  k.block_threads = l->block_x * l->block_y * l->block_z;
  k.dyn_smem = l->shmem;
  int created = 0;
  pending_value *v = ct_map_get(p->launches, &k, sizeof k, &created);
  if (!v) return -1;
  if (created) {
    const struct ct_device *dev = ct_kattr_device(a->proc, a->device);
    if (dev) v->dev = *dev;
  }
  v->count++;
  return 0;
}

/* Adds count instances of configuration c to s. */
static void fold(ct_kattr_summary *s, const ct_kattr_config *c) {
  uint64_t smem = c->static_smem + c->dyn_smem;
  if (!s->known) {
    s->regs_min = s->regs_max = c->regs;
    s->smem_min = s->smem_max = smem;
  }
  s->known += c->count;
  if (c->regs < s->regs_min) s->regs_min = c->regs;
  if (c->regs > s->regs_max) s->regs_max = c->regs;
  if (smem < s->smem_min) s->smem_min = smem;
  if (smem > s->smem_max) s->smem_max = smem;
  if (c->occupancy_pct >= 0) {
    if (!s->occ_known || c->occupancy_pct < s->occ_min) s->occ_min = c->occupancy_pct;
    if (!s->occ_known || c->occupancy_pct > s->occ_max) s->occ_max = c->occupancy_pct;
    s->occ_known = 1;
  }
  for (unsigned i = 0; i < s->nconfigs; i++) {
    ct_kattr_config *o = &s->configs[i];
    if (o->regs == c->regs && o->static_smem == c->static_smem && o->dyn_smem == c->dyn_smem &&
        o->block_threads == c->block_threads && o->blocks_per_sm == c->blocks_per_sm &&
        o->local_bytes == c->local_bytes) {
      o->count += c->count;
      return;
    }
  }
  if (s->nconfigs < CT_KATTR_CONFIGS) s->configs[s->nconfigs++] = *c;
  else s->more = 1;
}

void ct_kattr_pending_finish(ct_kattr_pending *p, const ct_kattr_table *t) {
  if (!p) return;
  for (size_t i = 0; i < ct_map_count(p->launches); i++) {
    const void *key;
    const pending_value *v = ct_map_entry(p->launches, i, &key, NULL);
    const pending_key *k = key;
    const struct ct_kernel_attr *a = ct_kattr_find(t, k->attr);
    if (!a) continue; /* its KERNEL_ATTR record was lost */
    ct_kattr_config c = {.count = v->count, .regs = a->regs, .static_smem = a->static_smem,
                         .dyn_smem = k->dyn_smem, .block_threads = k->block_threads,
                         .local_bytes = a->local_bytes};
    c.blocks_per_sm = ct_kattr_blocks(t, k->attr, k->device, k->block_threads, k->dyn_smem);
    c.occupancy_pct = ct_kattr_occupancy_pct(&v->dev, k->block_threads, c.blocks_per_sm);
    fold(k->sum, &c);
  }
  ct_map_free(p->launches);
  free(p);
}

const ct_kattr_config *ct_kattr_top(const ct_kattr_summary *s) {
  const ct_kattr_config *top = NULL;
  for (unsigned i = 0; i < s->nconfigs; i++)
    if (!top || s->configs[i].count > top->count) top = &s->configs[i];
  return top;
}

void ct_kattr_text_cells(ct_table *tb, const ct_kattr_summary *s) {
  if (!s->known) {
    ct_table_cell(tb, "-");
    ct_table_cell(tb, "-");
    ct_table_cell(tb, "-");
    return;
  }
  if (s->regs_min == s->regs_max) ct_table_cell(tb, "%llu", (unsigned long long)s->regs_min);
  else ct_table_cell(tb, "%llu-%llu", (unsigned long long)s->regs_min,
                     (unsigned long long)s->regs_max);
  if (s->smem_min == s->smem_max) ct_table_cell(tb, "%llu", (unsigned long long)s->smem_min);
  else ct_table_cell(tb, "%llu-%llu", (unsigned long long)s->smem_min,
                     (unsigned long long)s->smem_max);
  if (!s->occ_known) ct_table_cell(tb, "-");
  else if (s->occ_min == s->occ_max) ct_table_cell(tb, "%.0f", s->occ_min);
  else ct_table_cell(tb, "%.0f-%.0f", s->occ_min, s->occ_max);
}

void ct_kattr_csv_cells(ct_table *tb, const ct_kattr_summary *s) {
  const ct_kattr_config *c = ct_kattr_top(s);
  if (!c) {
    for (int i = 0; i < 6; i++) ct_table_cell(tb, "%s", "");
    ct_table_cell(tb, "0");
    return;
  }
  ct_table_cell(tb, "%llu", (unsigned long long)c->regs);
  ct_table_cell(tb, "%llu", (unsigned long long)c->static_smem);
  ct_table_cell(tb, "%llu", (unsigned long long)c->dyn_smem);
  ct_table_cell(tb, "%llu", (unsigned long long)c->block_threads);
  if (c->blocks_per_sm >= 0) ct_table_cell(tb, "%d", c->blocks_per_sm);
  else ct_table_cell(tb, "%s", "");
  if (c->occupancy_pct >= 0) ct_table_cell(tb, "%.2f", c->occupancy_pct);
  else ct_table_cell(tb, "%s", "");
  ct_table_cell(tb, "%u%s", s->nconfigs, s->more ? "+" : "");
}

int ct_kattr_config_of(const ct_kattr_table *t, const ct_proc *proc, uint64_t attr,
                       uint64_t device, uint64_t block_threads, uint64_t dyn_smem,
                       ct_kattr_config *c) {
  const struct ct_kernel_attr *a = ct_kattr_find(t, attr);
  if (!a) return 0;
  *c = (ct_kattr_config){.regs = a->regs, .static_smem = a->static_smem, .dyn_smem = dyn_smem,
                         .block_threads = block_threads, .local_bytes = a->local_bytes};
  c->blocks_per_sm = ct_kattr_blocks(t, attr, device, block_threads, dyn_smem);
  c->occupancy_pct =
      ct_kattr_occupancy_pct(ct_kattr_device(proc, device), block_threads, c->blocks_per_sm);
  return 1;
}

void ct_kattr_config_members(ct_json *j, const ct_kattr_config *c) {
  ct_json_kv_uint(j, "regs", c->regs);
  ct_json_kv_uint(j, "smem_static", c->static_smem);
  ct_json_kv_uint(j, "smem_dynamic", c->dyn_smem);
  ct_json_kv_uint(j, "local_bytes", c->local_bytes);
  ct_json_kv_uint(j, "block_threads", c->block_threads);
  ct_json_key(j, "blocks_per_sm");
  if (c->blocks_per_sm >= 0) ct_json_int(j, c->blocks_per_sm);
  else ct_json_null(j);
  ct_json_key(j, "occupancy_pct");
  if (c->occupancy_pct >= 0) ct_json_double(j, c->occupancy_pct, 4);
  else ct_json_null(j);
}

/* One configuration as a JSON object. */
static void config_json(ct_json *j, const ct_kattr_config *c) {
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "launches", c->count);
  ct_kattr_config_members(j, c);
  ct_json_end_object(j);
}

void ct_kattr_json(ct_json *j, const ct_kattr_summary *s) { ct_kattr_json_as(j, "attributes", s); }

void ct_kattr_json_as(ct_json *j, const char *key, const ct_kattr_summary *s) {
  ct_json_key(j, key);
  if (!s || !s->known) {
    ct_json_null(j);
    return;
  }
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "launches", s->known);
  ct_json_kv_uint(j, "regs_min", s->regs_min);
  ct_json_kv_uint(j, "regs_max", s->regs_max);
  ct_json_kv_uint(j, "smem_min", s->smem_min);
  ct_json_kv_uint(j, "smem_max", s->smem_max);
  ct_json_key(j, "occupancy_pct_min");
  if (s->occ_known) ct_json_double(j, s->occ_min, 4);
  else ct_json_null(j);
  ct_json_key(j, "occupancy_pct_max");
  if (s->occ_known) ct_json_double(j, s->occ_max, 4);
  else ct_json_null(j);
  ct_json_kv_bool(j, "more_configs", s->more);
  /* the configurations, most launches first (ties: first seen first) */
  ct_json_key(j, "configs");
  ct_json_begin_array(j);
  int done[CT_KATTR_CONFIGS] = {0};
  for (unsigned n = 0; n < s->nconfigs; n++) {
    unsigned best = CT_KATTR_CONFIGS;
    for (unsigned i = 0; i < s->nconfigs; i++)
      if (!done[i] && (best == CT_KATTR_CONFIGS || s->configs[i].count > s->configs[best].count))
        best = i;
    done[best] = 1;
    config_json(j, &s->configs[best]);
  }
  ct_json_end_array(j);
  ct_json_end_object(j);
}

/* "32" or "32-40" of an integer range. */
static void range_text(char *b, size_t len, uint64_t lo, uint64_t hi) {
  if (lo == hi) snprintf(b, len, "%llu", (unsigned long long)lo);
  else snprintf(b, len, "%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
}

/* Appends "what before -> after" to buf when the two texts differ. */
static void append_change(char *buf, size_t len, const char *what, const char *b, const char *a,
                          const char *unit) {
  if (!strcmp(a, b)) return;
  size_t n = strlen(buf);
  snprintf(buf + n, len - n, "%s%s %s -> %s%s", n ? ", " : "", what, b, a, unit);
}

int ct_kattr_change(const ct_kattr_summary *before, const ct_kattr_summary *after, char *buf,
                    size_t len) {
  buf[0] = 0;
  if (!before || !after || !before->known || !after->known) return 0;
  char b[48], a[48];
  range_text(b, sizeof b, before->regs_min, before->regs_max);
  range_text(a, sizeof a, after->regs_min, after->regs_max);
  append_change(buf, len, "regs", b, a, "");
  range_text(b, sizeof b, before->smem_min, before->smem_max);
  range_text(a, sizeof a, after->smem_min, after->smem_max);
  append_change(buf, len, "smem", b, a, "");
  if (before->occ_known && after->occ_known) {
    ct_kattr_summary o[2] = {*before, *after};
    char *t[2] = {b, a};
    for (int k = 0; k < 2; k++) {
      if (o[k].occ_min == o[k].occ_max) snprintf(t[k], 48, "%.0f", o[k].occ_min);
      else snprintf(t[k], 48, "%.0f-%.0f", o[k].occ_min, o[k].occ_max);
    }
    append_change(buf, len, "occ", b, a, " %");
  }
  return buf[0] != 0;
}
