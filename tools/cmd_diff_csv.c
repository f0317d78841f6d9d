/* The CSV-only parts of `cutrace diff` (cmd_diff.h): the columns each row table adds
 * after the common ones, so that a row carries every field the text and JSON show (a
 * kernel's attributes, a copy's kind and memory types, a GEMM's shape, an inner call),
 * and the `inputs` block naming each side's files. docs/diff.md lists the columns. */
#include <math.h>
#include <stdio.h>

#include "cmd_diff.h"

static const char *const kernel_cols[] = {"mangled", "regs_before", "regs_after", "smem_before",
                                          "smem_after", "occupancy_pct_before",
                                          "occupancy_pct_after", NULL};
static const char *const memcpy_cols[] = {"bytes_before", "bytes_after", "kind", "src", "dst",
                                          NULL};
static const char *const gemm_cols[] = {"api", "m", "n", "k", "batch", "transa", "transb",
                                        "atype", "btype", "ctype", "epilogue", "compute_type",
                                        "compute_type_name", "atype_name", "btype_name",
                                        "ctype_name", NULL};
static const char *const api_cols[] = {"inner", NULL};
static const char *const range_cols[] = {"gpu_before_ns", "gpu_after_ns", NULL};

int ct_diff_csv_extra_headers(enum ct_report_table t, const char **h, int max) {
  const char *const *cols = t == CT_TABLE_KERNELS ? kernel_cols
                            : t == CT_TABLE_MEMCPY ? memcpy_cols
                            : t == CT_TABLE_GEMMS  ? gemm_cols
                            : t == CT_TABLE_APIS   ? api_cols
                            : t == CT_TABLE_RANGES ? range_cols
                                                   : NULL;
  int n = 0;
  for (; cols && cols[n] && n < max; n++) h[n] = cols[n];
  return n;
}

/* A kernel attribute of one side as the text shows it: "32" or "32-40"; empty when the
 * side has no attributes (a trace before format 1.6, or no such kernel). */
static void range_cell(ct_table *tb, const ct_kattr_summary *s, uint64_t lo, uint64_t hi) {
  if (!s || !s->known) ct_table_cell(tb, "%s", "");
  else if (lo == hi) ct_table_cell(tb, "%llu", (unsigned long long)lo);
  else ct_table_cell(tb, "%llu-%llu", (unsigned long long)lo, (unsigned long long)hi);
}

static void occupancy_cell(ct_table *tb, const ct_kattr_summary *s) {
  if (!s || !s->known || !s->occ_known) ct_table_cell(tb, "%s", "");
  else if (s->occ_min == s->occ_max) ct_table_cell(tb, "%.2f", s->occ_min);
  else ct_table_cell(tb, "%.2f-%.2f", s->occ_min, s->occ_max);
}

static void kernel_cells(ct_table *tb, const ct_diff_row *r) {
  const ct_kernel_row *row[2] = {r->before_row, r->after_row};
  const ct_kattr_summary *s[2] = {row[0] ? &row[0]->attrs : NULL, row[1] ? &row[1]->attrs : NULL};
  ct_table_cell(tb, "%s", (const char *)r->key);
  for (int k = 0; k < 2; k++) range_cell(tb, s[k], s[k] ? s[k]->regs_min : 0, s[k] ? s[k]->regs_max : 0);
  for (int k = 0; k < 2; k++) range_cell(tb, s[k], s[k] ? s[k]->smem_min : 0, s[k] ? s[k]->smem_max : 0);
  for (int k = 0; k < 2; k++) occupancy_cell(tb, s[k]);
}

static void gemm_cells(ct_table *tb, const ct_diff_row *r) {
  const ct_gemm_key *g = r->key;
  ct_table_cell(tb, "%.*s", (int)(r->klen - sizeof *g), (const char *)r->key + sizeof *g);
  const uint64_t f[4] = {g->m, g->n, g->k, g->batch ? g->batch : 1};
  for (int i = 0; i < 4; i++) ct_table_cell(tb, "%llu", (unsigned long long)f[i]);
  ct_table_cell(tb, "%d", g->transa != 0);
  ct_table_cell(tb, "%d", g->transb != 0);
  /* the operand types as report's CSV writes them: the recorded cudaDataType numbers, and
   * their names (f32, bf16) at the end, beside compute_type_name */
  const uint64_t types[3] = {g->atype, g->btype, g->ctype};
  for (int i = 0; i < 3; i++) ct_table_cell(tb, "%llu", (unsigned long long)types[i]);
  ct_table_cell(tb, "%llu", (unsigned long long)g->epilogue);
  ct_table_cell(tb, "%llu", (unsigned long long)g->compute_type);
  ct_table_cell(tb, "%s", ct_gemm_compute_name((const char *)r->key + sizeof *g, r->klen - sizeof *g, g->compute_type));
  for (int i = 0; i < 3; i++) ct_table_cell(tb, "%s", ct_data_type_name(types[i]));
}

void ct_diff_csv_extra_cells(ct_table *tb, enum ct_report_table t, const ct_diff_row *r,
                             const ct_diff_norm *n) {
  switch (t) {
  case CT_TABLE_KERNELS:
    kernel_cells(tb, r);
    break;
  case CT_TABLE_MEMCPY: {
    const ct_memop_key *k = r->key;
    for (int s = 0; s < 2; s++) ct_table_cell(tb, "%.0f", round(n->aux[s]) + 0.0);
    ct_table_cell(tb, "%s", ct_memop_kind_name(k->kind));
    ct_table_cell(tb, "%s", ct_mem_type_name(k->src));
    ct_table_cell(tb, "%s", ct_mem_type_name(k->dst));
    break;
  }
  case CT_TABLE_GEMMS:
    gemm_cells(tb, r);
    break;
  case CT_TABLE_APIS:
    ct_table_cell(tb, "%d", ct_report_api_is_inner(r->key, r->klen));
    break;
  case CT_TABLE_RANGES:
    for (int s = 0; s < 2; s++) ct_table_cell(tb, "%.0f", round(n->aux[s]) + 0.0);
    break;
  default:
    break;
  }
}

void ct_diff_csv_inputs(const diff_cli *c) {
  static const char *const h[] = {"table", "side", "path", "status", "pid", "host", "rank"};
  ct_table *tb = ct_table_new(NULL, 7, h, NULL);
  if (!tb) return;
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < c->ninputs[k]; i++) {
      const diff_input *in = &c->inputs[k][i];
      ct_table_row(tb);
      ct_table_cell(tb, "inputs");
      ct_table_cell(tb, "%s", k ? "after" : "before");
      ct_table_cell(tb, "%s", in->path);
      ct_table_cell(tb, "%s", in->status);
      if (in->has_id && in->id.has_process)
        ct_table_cell(tb, "%llu", (unsigned long long)in->id.proc.pid);
      else ct_table_cell(tb, "%s", "");
      ct_table_cell(tb, "%s", in->has_id ? in->id.host : "");
      if (in->has_id && (in->id.job.known & CT_JOB_RANK))
        ct_table_cell(tb, "%llu", (unsigned long long)in->id.job.rank);
      else ct_table_cell(tb, "%s", "");
    }
  ct_table_print(tb, stdout, CT_OUT_CSV);
  ct_table_free(tb);
}
