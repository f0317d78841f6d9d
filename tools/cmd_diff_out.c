/* The output of `cutrace diff` (cmd_diff.h): the headline and the compared tables as
 * aligned text, CSV blocks or one JSON document (schema cutrace-diff/1, docs/diff.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd_diff.h"

int ct_diff_cli_tables(const diff_cli *c, enum ct_report_table out[3]) {
  if (c->by != CT_TABLE_KERNELS) {
    out[0] = c->by;
    return 1;
  }
  out[0] = CT_TABLE_KERNELS;
  out[1] = CT_TABLE_MEMCPY;
  out[2] = CT_TABLE_GEMMS;
  return 3;
}

enum unit { U_COUNT, U_NS, U_BYTES, U_PCT };

/* A value in one unit: text with human units (sign: a leading + or -), CSV raw. */
static const char *fmt_value(char *b, size_t len, double v, int unit, int text, int sign) {
  char u[32];
  if (!text) {
    if (unit == U_PCT) snprintf(b, len, "%.2f", v);
    else if (unit != U_COUNT || v == floor(v)) snprintf(b, len, "%.0f", round(v) + 0.0);
    else snprintf(b, len, "%.3f", v);
    return b;
  }
  double a = fabs(v);
  int zero = unit == U_NS || unit == U_BYTES ? llround(a) == 0 : a == 0;
  const char *s = !sign || zero ? "" : v > 0 ? "+" : "-";
  if (unit == U_PCT) snprintf(b, len, "%s%.1f%s", s, a, sign ? " pt" : "%");
  else if (unit == U_NS) snprintf(b, len, "%s%s", s, ct_fmt_duration((uint64_t)llround(a), u, sizeof u));
  else if (unit == U_BYTES) snprintf(b, len, "%s%s", s, ct_fmt_bytes((uint64_t)llround(a), u, sizeof u));
  else snprintf(b, len, a == floor(a) ? "%s%.0f" : "%s%.2f", s, a);
  return b;
}

/* A JSON number: integer ns and bytes, 2 decimals for percentages, counts exact or 3. */
static void json_value(ct_json *j, const char *key, double v, int unit) {
  ct_json_key(j, key);
  if (unit == U_PCT) ct_json_double(j, v, 2);
  else if (unit != U_COUNT || v == floor(v)) ct_json_int(j, (int64_t)llround(v));
  else ct_json_double(j, v, 3);
}

/* after / before, or NaN when before is 0 (text "-", CSV empty, JSON null). */
static double ratio(double before, double after) { return before != 0 ? after / before : NAN; }

static const char *fmt_ratio(char *b, size_t len, double r, int text, int pct) {
  if (isnan(r)) snprintf(b, len, text ? "-" : "");
  else if (pct) snprintf(b, len, text ? "%+.1f%%" : "%.2f", 100 * (r - 1));
  else snprintf(b, len, text ? "%.2fx" : "%.4f", r);
  return b;
}

/* ---- headline ---------------------------------------------------------------------- */

static void headline_values(const diff_cli *c, double v[2][CT_DM_COUNT]) {
  for (int k = 0; k < 2; k++) {
    ct_diff_side_totals(&c->sides[k], v[k]);
    for (int m = 0; m < CT_DM_COUNT; m++)
      if (ct_diff_metric_unit((enum ct_diff_metric)m) != U_PCT) v[k][m] /= (double)c->instances[k];
  }
}

static void print_headline(const diff_cli *c, const double v[2][CT_DM_COUNT]) {
  int text = c->fmt == CT_OUT_TEXT;
  if (text) {
    printf("cutrace diff: BEFORE %s (%zu file%s) -> AFTER %s (%zu file%s)\n", c->paths[0],
           c->ninputs[0], c->ninputs[0] == 1 ? "" : "s", c->paths[1], c->ninputs[1],
           c->ninputs[1] == 1 ? "" : "s");
    if (c->per_range)
      printf("per instance of NVTX range '%s': %llu before, %llu after\n", c->per_range,
             (unsigned long long)c->instances[0], (unsigned long long)c->instances[1]);
    putchar('\n');
  }
  static const char *const text_h[] = {"", "Before", "After", "Delta", "Ratio"};
  static const char *const csv_h[] = {"table", "metric", "before", "after", "delta", "ratio"};
  ct_table *tb = text ? ct_table_new(NULL, 5, text_h, "lrrrr") : ct_table_new(NULL, 6, csv_h, NULL);
  if (!tb) return;
  for (int m = 0; m < CT_DM_COUNT; m++) {
    int unit = ct_diff_metric_unit((enum ct_diff_metric)m);
    char b[64];
    int cause = m >= CT_DM_IDLE_CAUSE && m < CT_DM_IDLE_CAUSE + CT_GAP_NCAUSES;
    if (text && cause && v[0][m] == 0 && v[1][m] == 0) continue; /* no such idle time */
    ct_table_row(tb);
    if (!text) ct_table_cell(tb, "summary");
    ct_table_cell(tb, "%s", text ? ct_diff_metric_label((enum ct_diff_metric)m)
                                 : ct_diff_metric_id((enum ct_diff_metric)m));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[0][m], unit, text, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[1][m], unit, text, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[1][m] - v[0][m], unit, text, 1));
    ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, ratio(v[0][m], v[1][m]), text, 0));
  }
  ct_table_print(tb, stdout, c->fmt);
  ct_table_free(tb);
}

/* ---- tables ------------------------------------------------------------------------ */

static const char *const table_titles[CT_NTABLES] = {
    [CT_TABLE_KERNELS] = "GPU kernels (GPU time)", [CT_TABLE_APIS] = "CUDA API calls (CPU time)",
    [CT_TABLE_MEMCPY] = "Memory operations (GPU time)", [CT_TABLE_GEMMS] = "GEMMs (GPU time)",
    [CT_TABLE_RANGES] = "NVTX ranges (CPU time open; GPU time of the work inside)"};

/* A row's normalised numbers: [0] before, [1] after. */
typedef struct norm {
  double calls[2], total[2], aux[2], avg[2];
} norm;

static norm normalise(const diff_cli *c, const ct_diff_row *r) {
  norm n;
  const ct_diff_vals *v[2] = {&r->before, &r->after};
  for (int k = 0; k < 2; k++) {
    double per = (double)c->instances[k];
    n.calls[k] = v[k]->calls / per;
    n.total[k] = v[k]->total_ns / per;
    n.aux[k] = v[k]->aux / per;
    n.avg[k] = v[k]->calls ? (double)v[k]->total_ns / v[k]->calls : 0;
  }
  return n;
}

static ct_table *new_table(const diff_cli *c, const ct_diff_table *dt) {
  static const char *const text_h[] = {"Status", "Delta", "Delta %", "Before", "After",
                                       "Calls before", "Calls after", "Avg before", "Avg after",
                                       "Avg delta"};
  static const char *const csv_h[] = {"table", "status", "name", "calls_before", "calls_after",
                                      "total_before_ns", "total_after_ns", "delta_ns", "delta_pct",
                                      "avg_before_ns", "avg_after_ns", "avg_delta_pct"};
  const char *h[16];
  int n = 0, text = c->fmt == CT_OUT_TEXT;
  const char *const *src = text ? text_h : csv_h;
  for (int i = 0; i < (text ? 10 : 12); i++) h[n++] = src[i];
  if (dt->t == CT_TABLE_MEMCPY) {
    h[n++] = text ? "Bytes before" : "bytes_before";
    h[n++] = text ? "Bytes after" : "bytes_after";
  } else if (dt->t == CT_TABLE_RANGES) {
    h[n++] = text ? "GPU before" : "gpu_before_ns";
    h[n++] = text ? "GPU after" : "gpu_after_ns";
  } else if (!text && dt->t == CT_TABLE_KERNELS) {
    h[n++] = "mangled";
  }
  if (text) h[n++] = "Name";
  char title[256], align[16];
  int tn = snprintf(title, sizeof title, "%s:", table_titles[dt->t]);
  const char *sep = " ";
  for (int s = 0; s < CT_DIFF_NSTATUS; s++)
    if (dt->counts[s] && tn < (int)sizeof title) {
      tn += snprintf(title + tn, sizeof title - tn, "%s%zu %s", sep, dt->counts[s],
                     ct_diff_status_name((enum ct_diff_status)s));
      sep = ", ";
    }
  if (!dt->n) snprintf(title + tn, sizeof title - tn, " no rows on either side");
  for (int i = 0; i < n; i++) align[i] = i == 0 || i == n - 1 ? 'l' : 'r';
  align[n] = 0;
  return ct_table_new(text ? title : NULL, n, h, text ? align : NULL);
}

static void table_row(const diff_cli *c, ct_table *tb, const ct_diff_table *dt,
                      const ct_diff_row *r) {
  int text = c->fmt == CT_OUT_TEXT;
  norm n = normalise(c, r);
  char b[64];
  ct_table_row(tb);
  if (!text) {
    ct_table_cell(tb, "%s", ct_report_table_ids[dt->t]);
    ct_table_cell(tb, "%s", ct_diff_status_name(r->status));
    ct_table_cell(tb, "%s", r->label);
    for (int k = 0; k < 2; k++) ct_table_cell(tb, "%s", fmt_value(b, sizeof b, n.calls[k], U_COUNT, 0, 0));
  } else {
    ct_table_cell(tb, "%s", ct_diff_status_name(r->status));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, r->delta_ns, U_NS, 1, 1));
    ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, ratio(n.total[0], n.total[1]), 1, 1));
  }
  for (int k = 0; k < 2; k++) ct_table_cell(tb, "%s", fmt_value(b, sizeof b, n.total[k], U_NS, text, 0));
  if (text) {
    for (int k = 0; k < 2; k++) ct_table_cell(tb, "%s", fmt_value(b, sizeof b, n.calls[k], U_COUNT, 1, 0));
  } else {
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, r->delta_ns, U_NS, 0, 1));
    ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, ratio(n.total[0], n.total[1]), 0, 1));
  }
  for (int k = 0; k < 2; k++) /* text: "-" for the side without calls */
    ct_table_cell(tb, "%s", text && !(k ? r->after.calls : r->before.calls)
                                ? "-" : fmt_value(b, sizeof b, n.avg[k], U_NS, text, 0));
  ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, r->before.calls && r->after.calls ? ratio(n.avg[0], n.avg[1]) : NAN, text, 1));
  if (dt->t == CT_TABLE_MEMCPY || dt->t == CT_TABLE_RANGES)
    for (int k = 0; k < 2; k++)
      ct_table_cell(tb, "%s", fmt_value(b, sizeof b, n.aux[k], dt->t == CT_TABLE_MEMCPY ? U_BYTES : U_NS, text, 0));
  else if (!text && dt->t == CT_TABLE_KERNELS)
    ct_table_cell(tb, "%s", (const char *)r->key);
  if (text) ct_table_cell(tb, "%s", r->label);
}

static void json_row(const diff_cli *c, ct_json *j, const ct_diff_table *dt, const ct_diff_row *r) {
  norm n = normalise(c, r);
  ct_json_begin_object(j);
  ct_json_kv_string(j, "name", r->label);
  ct_json_kv_string(j, "status", ct_diff_status_name(r->status));
  json_value(j, "calls_before", n.calls[0], U_COUNT);
  json_value(j, "calls_after", n.calls[1], U_COUNT);
  json_value(j, "total_before_ns", n.total[0], U_NS);
  json_value(j, "total_after_ns", n.total[1], U_NS);
  json_value(j, "delta_ns", r->delta_ns, U_NS);
  double dp = ratio(n.total[0], n.total[1]);
  ct_json_kv_double(j, "delta_pct", 100 * (dp - 1), 2); /* NaN: null */
  json_value(j, "avg_before_ns", n.avg[0], U_NS);
  json_value(j, "avg_after_ns", n.avg[1], U_NS);
  double ap = r->before.calls && r->after.calls ? ratio(n.avg[0], n.avg[1]) : NAN;
  ct_json_kv_double(j, "avg_delta_pct", 100 * (ap - 1), 2);
  if (dt->t == CT_TABLE_KERNELS) ct_json_kv_string(j, "mangled", r->key);
  if (dt->t == CT_TABLE_APIS) ct_json_kv_bool(j, "inner", ct_report_api_is_inner(r->key, r->klen));
  if (dt->t == CT_TABLE_MEMCPY) {
    const ct_memop_key *k = r->key;
    ct_json_kv_string(j, "kind", ct_memop_kind_name(k->kind));
    ct_json_kv_string(j, "src", ct_mem_type_name(k->src));
    ct_json_kv_string(j, "dst", ct_mem_type_name(k->dst));
  }
  if (dt->t == CT_TABLE_MEMCPY || dt->t == CT_TABLE_RANGES) {
    int bytes = dt->t == CT_TABLE_MEMCPY;
    json_value(j, bytes ? "bytes_before" : "gpu_before_ns", n.aux[0], bytes ? U_BYTES : U_NS);
    json_value(j, bytes ? "bytes_after" : "gpu_after_ns", n.aux[1], bytes ? U_BYTES : U_NS);
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
  }
  ct_json_end_object(j);
}

/* ---- the document ------------------------------------------------------------------- */

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
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_end_object(j);
}

static void json_head(const diff_cli *c, ct_json *j, const double v[2][CT_DM_COUNT]) {
  static const char *const by_names[CT_NTABLES] = {[CT_TABLE_KERNELS] = "kernel",
                                                   [CT_TABLE_APIS] = "api", [CT_TABLE_RANGES] = "range"};
  ct_json_kv_string(j, "schema", "cutrace-diff/1");
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
    ct_json_kv_double(j, "ratio", ratio(v[0][m], v[1][m]), 4);
    ct_json_end_object(j);
  }
  ct_json_end_object(j);
}

int ct_diff_print(const diff_cli *c) {
  double v[2][CT_DM_COUNT];
  headline_values(c, v);
  enum ct_report_table ts[3];
  int nt = ct_diff_cli_tables(c, ts), rc = 0;
  ct_json j;
  if (c->fmt == CT_OUT_JSON) {
    ct_json_init(&j, stdout, 1);
    ct_json_begin_object(&j);
    json_head(c, &j, v);
  } else {
    print_headline(c, v);
  }
  ct_diff_table dts[3];
  for (int i = 0; i < nt; i++) {
    if (ct_diff_table_build(&dts[i], ts[i], &c->sides[0].r, &c->sides[1].r, &c->o) < 0) rc = -1;
    const ct_diff_table *dt = &dts[i];
    size_t n = c->limit && dt->n > c->limit ? c->limit : dt->n;
    if (c->fmt == CT_OUT_JSON) {
      ct_json_key(&j, ct_report_table_ids[ts[i]]);
      ct_json_begin_array(&j);
      for (size_t r = 0; r < n; r++) json_row(c, &j, dt, &dt->rows[r]);
      ct_json_end_array(&j);
      continue;
    }
    ct_table *tb = new_table(c, dt);
    if (!tb) continue;
    for (size_t r = 0; r < n; r++) table_row(c, tb, dt, &dt->rows[r]);
    putchar('\n');
    ct_table_print(tb, stdout, c->fmt);
    ct_table_free(tb);
  }
  if (c->fmt == CT_OUT_JSON) {
    ct_json_key(&j, "counts");
    ct_json_begin_object(&j);
    for (int i = 0; i < nt; i++) {
      ct_json_key(&j, ct_report_table_ids[ts[i]]);
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
  for (int i = 0; i < nt; i++) ct_diff_table_free(&dts[i]);
  return rc;
}
