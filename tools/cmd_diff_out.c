/* The output of `cutrace diff` (cmd_diff.h): the headline and the compared tables as
 * aligned text or CSV blocks; the JSON document is written by cmd_diff_json.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_select.h"
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

/* A value in one unit: text with human units (sign: a leading + or -), CSV raw. */
static const char *fmt_value(char *b, size_t len, double v, int unit, int text, int sign) {
  char u[32];
  if (!text) {
    if (unit == DU_PCT) snprintf(b, len, "%.2f", v);
    else if (unit != DU_COUNT || v == floor(v)) snprintf(b, len, "%.0f", round(v) + 0.0);
    else snprintf(b, len, "%.3f", v);
    return b;
  }
  double a = fabs(v);
  int zero = unit == DU_NS || unit == DU_BYTES ? llround(a) == 0 : a == 0;
  const char *s = !sign || zero ? "" : v > 0 ? "+" : "-";
  if (unit == DU_PCT) snprintf(b, len, "%s%.1f%s", s, a, sign ? " pt" : "%");
  else if (unit == DU_NS) snprintf(b, len, "%s%s", s, ct_fmt_duration(llround(a), u, sizeof u));
  else if (unit == DU_BYTES) snprintf(b, len, "%s%s", s, ct_fmt_bytes(llround(a), u, sizeof u));
  else snprintf(b, len, a == floor(a) ? "%s%.0f" : "%s%.2f", s, a);
  return b;
}

double ct_diff_ratio(double before, double after) { return before != 0 ? after / before : NAN; }

static const char *fmt_ratio(char *b, size_t len, double r, int text, int pct) {
  if (isnan(r)) snprintf(b, len, text ? "-" : "");
  else if (pct) snprintf(b, len, text ? "%+.1f%%" : "%.2f", 100 * (r - 1));
  else snprintf(b, len, text ? "%.2fx" : "%.4f", r);
  return b;
}

/* ---- headline ---------------------------------------------------------------------- */

void ct_diff_headline(const diff_cli *c, double v[2][CT_DM_COUNT]) {
  for (int k = 0; k < 2; k++) {
    ct_diff_side_totals(&c->sides[k], v[k]);
    for (int m = 0; m < CT_DM_COUNT; m++)
      if (ct_diff_metric_unit((enum ct_diff_metric)m) != DU_PCT) v[k][m] /= (double)c->instances[k];
  }
}

/* The rank of input i of side k, or -1 when unknown. */
static long long input_rank(const diff_cli *c, int k, size_t i) {
  const diff_input *in = &c->inputs[k][i];
  return in->has_id && (in->id.job.known & CT_JOB_RANK) ? (long long)in->id.job.rank : -1;
}

const char *ct_diff_side_ranks(const diff_cli *c, int k, char *buf, size_t len) {
  buf[0] = 0;
  if (c->ninputs[k] == 1 && input_rank(c, k, 0) >= 0) {
    const diff_input *in = &c->inputs[k][0];
    char label[400];
    snprintf(buf, len, ": %s", ct_proc_label(&in->id.job, in->id.proc.pid, in->id.host, label,
                                             sizeof label));
    return buf;
  }
  size_t at = 0;
  unsigned shown = 0;
  for (size_t i = 0; i < c->ninputs[k] && at < len; i++) {
    long long r = input_rank(c, k, i);
    int seen = r < 0;
    for (size_t m = 0; m < i && !seen; m++) seen = input_rank(c, k, m) == r;
    if (seen) continue;
    int w = shown == 8 ? snprintf(buf + at, len - at, ",...")
                       : snprintf(buf + at, len - at, "%s%lld", shown ? "," : ", ranks ", r);
    if (w < 0) break;
    at += (size_t)w;
    if (++shown > 8) break;
  }
  if (at >= len) buf[len - 1] = 0;
  return buf;
}

static void print_headline(const diff_cli *c, const double v[2][CT_DM_COUNT]) {
  int text = c->fmt == CT_OUT_TEXT;
  if (text) {
    char r0[512], r1[512];
    printf("cutrace diff: BEFORE %s (%zu file%s%s) -> AFTER %s (%zu file%s%s)\n", c->paths[0],
           c->ninputs[0], c->ninputs[0] == 1 ? "" : "s", ct_diff_side_ranks(c, 0, r0, sizeof r0),
           c->paths[1], c->ninputs[1], c->ninputs[1] == 1 ? "" : "s",
           ct_diff_side_ranks(c, 1, r1, sizeof r1));
    cli_selection_print(stdout);
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
    if (text && (cause || m == CT_DM_UNRECORDED || m == CT_DM_COMM || m == CT_DM_COMM_EXPOSED) &&
        v[0][m] == 0 && v[1][m] == 0)
      continue; /* no such time on either side */
    ct_table_row(tb);
    if (!text) ct_table_cell(tb, "summary");
    ct_table_cell(tb, "%s", text ? ct_diff_metric_label((enum ct_diff_metric)m)
                                 : ct_diff_metric_id((enum ct_diff_metric)m));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[0][m], unit, text, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[1][m], unit, text, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v[1][m] - v[0][m], unit, text, 1));
    ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, ct_diff_ratio(v[0][m], v[1][m]), text, 0));
  }
  if (!text && c->per_range) { /* the text says it above the headline */
    double in[2] = {(double)c->instances[0], (double)c->instances[1]};
    char b[64];
    ct_table_row(tb);
    ct_table_cell(tb, "summary");
    ct_table_cell(tb, "per_range_instances");
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, in[0], DU_COUNT, 0, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, in[1], DU_COUNT, 0, 0));
    ct_table_cell(tb, "%s", fmt_value(b, sizeof b, in[1] - in[0], DU_COUNT, 0, 1));
    ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, ct_diff_ratio(in[0], in[1]), 0, 0));
  }
  ct_table_print(tb, stdout, c->fmt);
  ct_table_free(tb);
}

/* ---- tables ------------------------------------------------------------------------ */

int ct_diff_prints_block(const diff_cli *c, unsigned bit) {
  return !c->csv_blocks || (c->csv_blocks & bit);
}

static const char *const table_titles[CT_NTABLES] = {
    [CT_TABLE_KERNELS] = "GPU kernels (GPU time)", [CT_TABLE_APIS] = "CUDA API calls (CPU time)",
    [CT_TABLE_MEMCPY] = "Memory operations (GPU time)", [CT_TABLE_GEMMS] = "GEMMs (GPU time)",
    [CT_TABLE_RANGES] = "NVTX ranges (CPU time open; GPU time of the work inside)"};

ct_diff_norm ct_diff_normalise(const diff_cli *c, const ct_diff_row *r) {
  ct_diff_norm n;
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
  const char *h[32];
  int n = 0, text = c->fmt == CT_OUT_TEXT;
  const char *const *src = text ? text_h : csv_h;
  for (int i = 0; i < (text ? 10 : 12); i++) h[n++] = src[i];
  if (!text) {
    n += ct_diff_csv_extra_headers(dt->t, h + n, (int)(sizeof h / sizeof *h) - n);
  } else if (dt->t == CT_TABLE_MEMCPY) {
    h[n++] = "Bytes before";
    h[n++] = "Bytes after";
  } else if (dt->t == CT_TABLE_RANGES) {
    h[n++] = "GPU before";
    h[n++] = "GPU after";
  }
  if (text) h[n++] = "Name";
  char title[256], align[34];
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

/* Adds a cell: value v in unit (text: human units; sign: a leading + or -). */
static void value_cell(ct_table *tb, double v, int unit, int text, int sign) {
  char b[64];
  ct_table_cell(tb, "%s", fmt_value(b, sizeof b, v, unit, text, sign));
}

static void ratio_cell(ct_table *tb, double r, int text, int pct) {
  char b[64];
  ct_table_cell(tb, "%s", fmt_ratio(b, sizeof b, r, text, pct));
}

/* One row: text in the text_h order, CSV in the csv_h order (new_table). */
static void table_row(const diff_cli *c, ct_table *tb, const ct_diff_table *dt,
                      const ct_diff_row *r) {
  int text = c->fmt == CT_OUT_TEXT;
  ct_diff_norm n = ct_diff_normalise(c, r);
  double total_ratio = ct_diff_ratio(n.total[0], n.total[1]);
  ct_table_row(tb);
  if (!text) {
    ct_table_cell(tb, "%s", ct_report_table_ids[dt->t]);
    ct_table_cell(tb, "%s", ct_diff_status_name(r->status));
    ct_table_cell(tb, "%s", r->label);
    for (int k = 0; k < 2; k++) value_cell(tb, n.calls[k], DU_COUNT, 0, 0);
  } else {
    ct_table_cell(tb, "%s", ct_diff_status_name(r->status));
    value_cell(tb, r->delta_ns, DU_NS, 1, 1);
    ratio_cell(tb, total_ratio, 1, 1);
  }
  for (int k = 0; k < 2; k++) value_cell(tb, n.total[k], DU_NS, text, 0);
  if (text) {
    for (int k = 0; k < 2; k++) value_cell(tb, n.calls[k], DU_COUNT, 1, 0);
  } else {
    value_cell(tb, r->delta_ns, DU_NS, 0, 1);
    ratio_cell(tb, total_ratio, 0, 1);
  }
  for (int k = 0; k < 2; k++) { /* text: "-" for the side without calls */
    if (text && !(k ? r->after.calls : r->before.calls)) ct_table_cell(tb, "-");
    else value_cell(tb, n.avg[k], DU_NS, text, 0);
  }
  int both = r->before.calls && r->after.calls;
  ratio_cell(tb, both ? ct_diff_ratio(n.avg[0], n.avg[1]) : NAN, text, 1);
  if (!text) {
    ct_diff_csv_extra_cells(tb, dt->t, r, &n);
    return;
  }
  if (dt->t == CT_TABLE_MEMCPY || dt->t == CT_TABLE_RANGES)
    for (int k = 0; k < 2; k++)
      value_cell(tb, n.aux[k], dt->t == CT_TABLE_MEMCPY ? DU_BYTES : DU_NS, text, 0);
  char change[160];
  const ct_kernel_row *kb = r->before_row, *ka = r->after_row;
  if (dt->t == CT_TABLE_KERNELS && kb && ka &&
      ct_kattr_change(&kb->attrs, &ka->attrs, change, sizeof change))
    ct_table_cell(tb, "%s  [%s]", r->label, change); /* format 1.6 */
  else
    ct_table_cell(tb, "%s", r->label);
}

int ct_diff_print(const diff_cli *c) {
  double v[2][CT_DM_COUNT];
  ct_diff_headline(c, v);
  enum ct_report_table ts[3];
  int nt = ct_diff_cli_tables(c, ts), rc = 0;
  ct_diff_table dts[3];
  for (int i = 0; i < nt; i++)
    if (ct_diff_table_build(&dts[i], ts[i], &c->sides[0].r, &c->sides[1].r, &c->o) < 0) rc = -1;
  if (c->fmt == CT_OUT_JSON) {
    ct_diff_print_json(c, v, dts, nt);
  } else {
    int blocks = 0; /* printed so far: an empty line goes between two */
    if (ct_diff_prints_block(c, DIFF_BLOCK_SUMMARY)) {
      print_headline(c, v);
      blocks++;
    }
    for (int i = 0; i < nt; i++) {
      if (!ct_diff_prints_block(c, 2u << i)) continue;
      ct_table *tb = new_table(c, &dts[i]);
      if (!tb) continue;
      size_t n = c->limit && dts[i].n > c->limit ? c->limit : dts[i].n;
      for (size_t r = 0; r < n; r++) table_row(c, tb, &dts[i], &dts[i].rows[r]);
      if (blocks++ || c->fmt == CT_OUT_TEXT) ct_out_newline(stdout, c->fmt);
      ct_table_print(tb, stdout, c->fmt);
      ct_table_free(tb);
    }
    if (c->fmt == CT_OUT_CSV && ct_diff_prints_block(c, DIFF_BLOCK_INPUTS)) {
      if (blocks++) fputs(CT_CSV_EOL, stdout);
      ct_diff_csv_inputs(c);
    }
  }
  for (int i = 0; i < nt; i++) ct_diff_table_free(&dts[i]);
  return rc;
}
