/* The JSON document of `cutrace diff` (schema cutrace-diff/1, docs/diff.md): options,
 * the two sides' inputs, the headline, the compared tables and their status counts. */
#include <math.h>
#include <stdio.h>

#include "cli_select.h"
#include "cmd_diff.h"
#include "identity.h"

/* A JSON number: integer ns and bytes, 2 decimals for percentages, counts exact or 3. */
static void json_value(ct_json *j, const char *key, double v, int unit) {
  ct_json_key(j, key);
  if (unit == DU_PCT) ct_json_double(j, v, 2);
  else if (unit != DU_COUNT || v == floor(v)) ct_json_int(j, (int64_t)llround(v));
  else ct_json_double(j, v, 3);
}

static void json_row(const diff_cli *c, ct_json *j, const ct_diff_table *dt, const ct_diff_row *r) {
  ct_diff_norm n = ct_diff_normalise(c, r);
  ct_json_begin_object(j);
  ct_json_kv_string(j, "name", r->label);
  ct_json_kv_string(j, "status", ct_diff_status_name(r->status));
  json_value(j, "calls_before", n.calls[0], DU_COUNT);
  json_value(j, "calls_after", n.calls[1], DU_COUNT);
  json_value(j, "total_before_ns", n.total[0], DU_NS);
  json_value(j, "total_after_ns", n.total[1], DU_NS);
  json_value(j, "delta_ns", r->delta_ns, DU_NS);
  double dp = ct_diff_ratio(n.total[0], n.total[1]);
  ct_json_kv_double(j, "delta_pct", 100 * (dp - 1), 2); /* NaN: null */
  json_value(j, "avg_before_ns", n.avg[0], DU_NS);
  json_value(j, "avg_after_ns", n.avg[1], DU_NS);
  double ap = r->before.calls && r->after.calls ? ct_diff_ratio(n.avg[0], n.avg[1]) : NAN;
  ct_json_kv_double(j, "avg_delta_pct", 100 * (ap - 1), 2);
  if (dt->t == CT_TABLE_KERNELS) {
    ct_json_kv_string(j, "mangled", r->key);
    /* format 1.6: registers, shared memory, occupancy of each side */
    const ct_kernel_row *kb = r->before_row, *ka = r->after_row;
    ct_kattr_json_as(j, "attributes_before", kb ? &kb->attrs : NULL);
    ct_kattr_json_as(j, "attributes_after", ka ? &ka->attrs : NULL);
  }
  if (dt->t == CT_TABLE_APIS) ct_json_kv_bool(j, "inner", ct_report_api_is_inner(r->key, r->klen));
  if (dt->t == CT_TABLE_MEMCPY) {
    const ct_memop_key *k = r->key;
    ct_json_kv_string(j, "kind", ct_memop_kind_name(k->kind));
    ct_json_kv_string(j, "src", ct_mem_type_name(k->src));
    ct_json_kv_string(j, "dst", ct_mem_type_name(k->dst));
  }
  if (dt->t == CT_TABLE_MEMCPY || dt->t == CT_TABLE_RANGES) {
    int bytes = dt->t == CT_TABLE_MEMCPY;
    json_value(j, bytes ? "bytes_before" : "gpu_before_ns", n.aux[0], bytes ? DU_BYTES : DU_NS);
    json_value(j, bytes ? "bytes_after" : "gpu_after_ns", n.aux[1], bytes ? DU_BYTES : DU_NS);
  }
  if (dt->t == CT_TABLE_GEMMS) {
    const ct_gemm_key *g = r->key;
    ct_json_key(j, "api");
    ct_json_string_n(j, (const char *)r->key + sizeof *g, r->klen - sizeof *g);
    const uint64_t f[4] = {g->m, g->n, g->k, g->batch ? g->batch : 1};
    static const char *const fk[4] = {"m", "n", "k", "batch"};
    for (int i = 0; i < 4; i++) ct_json_kv_uint(j, fk[i], f[i]);
    ct_json_kv_bool(j, "transa", g->transa != 0);
    ct_json_kv_bool(j, "transb", g->transb != 0);
    ct_json_kv_string(j, "atype", ct_data_type_name(g->atype));
    ct_json_kv_string(j, "btype", ct_data_type_name(g->btype));
    ct_json_kv_string(j, "ctype", ct_data_type_name(g->ctype));
    ct_json_kv_uint(j, "epilogue", g->epilogue); /* cublasLtEpilogue_t; 0: none */
    ct_json_kv_uint(j, "compute_type", g->compute_type); /* cublasComputeType_t */
    ct_json_kv_string(j, "compute_type_name",
                      ct_gemm_compute_name((const char *)r->key + sizeof *g, r->klen - sizeof *g, g->compute_type));
  }
  ct_json_end_object(j);
}

static void json_side(const diff_cli *c, ct_json *j, int k) {
  ct_json_key(j, k ? "after" : "before");
  ct_json_begin_object(j);
  ct_json_kv_string(j, "path", c->paths[k]);
  if (c->per_range) ct_json_kv_uint(j, "instances", c->instances[k]);
  ct_json_key(j, "inputs");
  ct_json_begin_array(j);
  for (size_t i = 0; i < c->ninputs[k]; i++) {
    ct_json_begin_object(j);
    ct_json_kv_string(j, "path", c->inputs[k][i].path);
    ct_json_kv_string(j, "status", c->inputs[k][i].status);
    if (c->inputs[k][i].message[0]) ct_json_kv_string(j, "message", c->inputs[k][i].message);
    const diff_input *in = &c->inputs[k][i];
    ct_json_key(j, "pid");
    if (in->has_id && in->id.has_process) ct_json_uint(j, in->id.proc.pid);
    else ct_json_null(j);
    ct_json_kv_string(j, "host", in->has_id ? in->id.host : "");
    ct_json_job(j, in->has_id ? &in->id.job : NULL);
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_end_object(j);
}

static void json_head(const diff_cli *c, ct_json *j, const double v[2][CT_DM_COUNT]) {
  static const char *const by_names[CT_NTABLES] = {
      [CT_TABLE_KERNELS] = "kernel", [CT_TABLE_APIS] = "api", [CT_TABLE_RANGES] = "range"};
  ct_json_kv_string(j, "schema", "cutrace-diff/1");
  cli_selection_json(j);
  ct_json_key(j, "options");
  ct_json_begin_object(j);
  ct_json_kv_string(j, "by", by_names[c->by]);
  ct_json_kv_string(j, "per_range", c->per_range); /* NULL: null */
  ct_json_kv_double(j, "threshold_pct", c->threshold_pct, 3);
  ct_json_kv_uint(j, "limit", c->limit);
  ct_json_end_object(j);
  json_side(c, j, 0);
  json_side(c, j, 1);
  ct_json_key(j, "summary");
  ct_json_begin_object(j);
  for (int m = 0; m < CT_DM_COUNT; m++) {
    int unit = ct_diff_metric_unit((enum ct_diff_metric)m);
    ct_json_key(j, ct_diff_metric_id((enum ct_diff_metric)m));
    ct_json_begin_object(j);
    json_value(j, "before", v[0][m], unit);
    json_value(j, "after", v[1][m], unit);
    json_value(j, "delta", v[1][m] - v[0][m], unit);
    ct_json_kv_double(j, "ratio", ct_diff_ratio(v[0][m], v[1][m]), 4);
    ct_json_end_object(j);
  }
  ct_json_end_object(j);
}

void ct_diff_print_json(const diff_cli *c, const double v[2][CT_DM_COUNT],
                        const ct_diff_table *dts, int nt) {
  ct_json j;
  ct_json_init(&j, stdout, 1);
  ct_json_begin_object(&j);
  json_head(c, &j, v);
  for (int i = 0; i < nt; i++) {
    size_t n = c->limit && dts[i].n > c->limit ? c->limit : dts[i].n;
    ct_json_key(&j, ct_report_table_ids[dts[i].t]);
    ct_json_begin_array(&j);
    for (size_t r = 0; r < n; r++) json_row(c, &j, &dts[i], &dts[i].rows[r]);
    ct_json_end_array(&j);
  }
  ct_json_key(&j, "counts");
  ct_json_begin_object(&j);
  for (int i = 0; i < nt; i++) {
    ct_json_key(&j, ct_report_table_ids[dts[i].t]);
    ct_json_begin_object(&j);
    for (int s = 0; s < CT_DIFF_NSTATUS; s++)
      ct_json_kv_uint(&j, ct_diff_status_name((enum ct_diff_status)s), dts[i].counts[s]);
    ct_json_end_object(&j);
  }
  ct_json_end_object(&j);
  ct_json_kv_string(&j, "status", c->status ? "partial" : "clean");
  ct_json_end_object(&j);
  ct_json_finish(&j);
}
