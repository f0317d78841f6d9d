/* The rows of `cutrace diff` (diff.h): one table of two reports matched by key,
 * classified and ranked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static const char *const status_names[CT_DIFF_NSTATUS] = {"slower", "faster", "added", "removed",
                                                          "same"};

const char *ct_diff_status_name(enum ct_diff_status st) {
  return (unsigned)st < CT_DIFF_NSTATUS ? status_names[st] : "?";
}

enum ct_diff_status ct_diff_classify(const ct_diff_vals *b, const ct_diff_vals *a,
                                     const ct_diff_options *o) {
  if (!b->calls) return a->calls ? CT_DIFF_ADDED : CT_DIFF_SAME;
  if (!a->calls) return CT_DIFF_REMOVED;
  double avg_b = (double)b->total_ns / b->calls, avg_a = (double)a->total_ns / a->calls;
  /* equal calls per instance: b.calls / per_b == a.calls / per_a, compared exactly */
  int same_calls = fabs(b->calls * o->per_after - a->calls * o->per_before) < 0.5;
  if (same_calls && fabs(avg_a - avg_b) <= o->threshold_pct / 100.0 * avg_b) return CT_DIFF_SAME;
  double tb = b->total_ns / o->per_before, ta = a->total_ns / o->per_after;
  if (ta != tb) return ta > tb ? CT_DIFF_SLOWER : CT_DIFF_FASTER;
  return avg_a > avg_b ? CT_DIFF_SLOWER : CT_DIFF_FASTER;
}

/* The row's numbers in a report row of table t (every row starts with its durations). */
static ct_diff_vals vals_of(enum ct_report_table t, const void *row) {
  const ct_dur_stats *d = row;
  ct_diff_vals v = {d->count, d->total, 0};
  if (t == CT_TABLE_MEMCPY) v.aux = ((const ct_memop_row *)row)->bytes;
  if (t == CT_TABLE_RANGES) v.aux = ((const ct_range_row *)row)->gpu_ns;
  return v;
}

/* The row's label, malloc'd (NULL when out of memory). */
static char *label_of(enum ct_report_table t, const void *key, size_t klen) {
  char b[4096];
  if (t == CT_TABLE_KERNELS) return strdup(ct_demangle(key, b, sizeof b));
  if (t == CT_TABLE_APIS) {
    snprintf(b, sizeof b, ct_report_api_is_inner(key, klen) ? "%s (inner)" : "%s",
             (const char *)key);
  } else if (t == CT_TABLE_MEMCPY) {
    const ct_memop_key *k = key;
    if (k->kind == CT_MEMOP_MEMSET)
      snprintf(b, sizeof b, "memset %s", ct_mem_type_name(k->dst));
    else
      snprintf(b, sizeof b, "%s %s -> %s", ct_memop_kind_name(k->kind), ct_mem_type_name(k->src),
               ct_mem_type_name(k->dst));
  } else if (t == CT_TABLE_GEMMS) {
    const ct_gemm_key *g = key;
    int n = snprintf(b, sizeof b, "%.*s %llux%llux%llu", (int)(klen - sizeof *g),
                     (const char *)key + sizeof *g, (unsigned long long)g->m,
                     (unsigned long long)g->n, (unsigned long long)g->k);
    if (g->batch > 1) n += snprintf(b + n, sizeof b - n, " x%llu", (unsigned long long)g->batch);
    n += snprintf(b + n, sizeof b - n, " %c%c %s*%s->%s %s", g->transa ? 'T' : 'N',
                  g->transb ? 'T' : 'N', ct_data_type_name(g->atype),
                  ct_data_type_name(g->btype), ct_data_type_name(g->ctype),
                  ct_gemm_compute_name((const char *)key + sizeof *g, klen - sizeof *g, g->compute_type));
    if (g->epilogue)
      snprintf(b + n, sizeof b - n, " epilogue %llu", (unsigned long long)g->epilogue);
  } else {
    snprintf(b, sizeof b, "%.*s", (int)klen, (const char *)key);
  }
  return strdup(b);
}

static int cmp_rows(const void *pa, const void *pb) {
  const ct_diff_row *a = pa, *b = pb;
  double da = fabs(a->delta_ns), db = fabs(b->delta_ns);
  if (da != db) return da > db ? -1 : 1;
  int c = strcmp(a->label, b->label);
  if (c) return c;
  size_t n = a->klen < b->klen ? a->klen : b->klen;
  c = memcmp(a->key, b->key, n);
  return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

void ct_diff_table_free(ct_diff_table *tb) {
  for (size_t i = 0; i < tb->n; i++) free(tb->rows[i].label);
  free(tb->rows);
  tb->rows = NULL;
  tb->n = 0;
}

/* Adds the rows of one report into the table, matched through join (key -> row index). */
static int add_side(ct_diff_table *tb, ct_map *join, const ct_report *r, int after, size_t cap) {
  const ct_map *m = r->maps[tb->t];
  for (size_t i = 0; i < ct_map_count(m); i++) {
    const void *key;
    size_t klen;
    const void *v = ct_map_entry(m, i, &key, &klen);
    int created;
    size_t *slot = ct_map_get(join, key, klen, &created);
    if (!slot) return -1;
    if (created) {
      if (tb->n == cap) return -1; /* cannot happen: cap counts both sides */
      *slot = tb->n;
      ct_diff_row *row = &tb->rows[tb->n++];
      memset(row, 0, sizeof *row);
      row->key = key;
      row->klen = klen;
      if (!(row->label = label_of(tb->t, key, klen))) return -1;
    }
    ct_diff_row *row = &tb->rows[*slot];
    if (after) row->after = vals_of(tb->t, v), row->after_row = v;
    else row->before = vals_of(tb->t, v), row->before_row = v;
  }
  return 0;
}

int ct_diff_table_build(ct_diff_table *out, enum ct_report_table t, const ct_report *before,
                        const ct_report *after, const ct_diff_options *o) {
  memset(out, 0, sizeof *out);
  out->t = t;
  size_t cap = ct_map_count(before->maps[t]) + ct_map_count(after->maps[t]);
  ct_map *join = ct_map_new(sizeof(size_t));
  out->rows = cap ? calloc(cap, sizeof *out->rows) : NULL;
  if (!join || (cap && !out->rows) || add_side(out, join, before, 0, cap) < 0 ||
      add_side(out, join, after, 1, cap) < 0) {
    ct_map_free(join);
    ct_diff_table_free(out);
    return -1;
  }
  ct_map_free(join);
  for (size_t i = 0; i < out->n; i++) {
    ct_diff_row *row = &out->rows[i];
    row->delta_ns = row->after.total_ns / o->per_after - row->before.total_ns / o->per_before;
    row->status = ct_diff_classify(&row->before, &row->after, o);
    out->counts[row->status]++;
  }
  if (out->n) qsort(out->rows, out->n, sizeof *out->rows, cmp_rows);
  return 0;
}
