/*
 * The writers of cutrace steps (cmd_steps.h): text (a table of steps per process, then
 * the summary), CSV (one row per step) and JSON (schema in docs/steps.md).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_select.h"
#include "cmd_steps.h"

/* The step's kernel with the most GPU time, or NULL. */
static const ct_step_kernel *top_kernel(const ct_step *s) {
  const ct_step_kernel *best = NULL;
  for (unsigned i = 0; i < s->nkernels; i++)
    if (!best || s->kernel[i].ns > best->ns) best = &s->kernel[i];
  return best;
}

/* The cause with the most idle time in the step (CT_GAP_NCAUSES when none). */
static unsigned largest_idle(const ct_step *s) {
  unsigned best = CT_GAP_NCAUSES;
  for (unsigned c = 0; c < CT_GAP_NCAUSES; c++)
    if (s->idle_ns[c] && (best == CT_GAP_NCAUSES || s->idle_ns[c] > s->idle_ns[best])) best = c;
  return best;
}

static const char *kernel_name(const ct_steps_file *f, unsigned id, char *buf, size_t len) {
  if (id >= f->nkernel_names) return "(unknown kernel)";
  return ct_demangle(f->kernel_names[id], buf, len);
}

static uint64_t gpu_span(const ct_step *s) {
  return s->gpu_last_ns > s->gpu_first_ns ? s->gpu_last_ns - s->gpu_first_ns : 0;
}

/* What a reason is about: "host_wait", "sync", "copies", or the kernel's name. */
static const char *reason_what(const ct_steps_file *f, const ct_step_reason *r, char *buf,
                               size_t len) {
  switch (r->kind) {
  case CT_REASON_IDLE: return ct_gap_cause_name((enum ct_gap_cause)r->which);
  case CT_REASON_KERNEL: return kernel_name(f, r->which, buf, len);
  case CT_REASON_CALLS: return ct_api_category_name((enum ct_api_category)r->which);
  default: return "copies";
  }
}

static const char *const reason_kinds[] = {"idle", "kernel", "calls", "copies"};

/* ---- text ---------------------------------------------------------------------------- */

static void print_reason(const ct_steps_file *f, const ct_step_reason *r) {
  char a[24], b[24], c[24], name[256];
  const char *what = reason_what(f, r, name, sizeof name);
  ct_fmt_duration(r->ns - r->median_ns, a, sizeof a);
  ct_fmt_duration(r->ns, b, sizeof b);
  ct_fmt_duration(r->median_ns, c, sizeof c);
  switch (r->kind) {
  case CT_REASON_IDLE:
    printf("%s idle +%s (%s vs %s)", what, a, b, c);
    break;
  case CT_REASON_KERNEL:
    printf("kernel %s +%s (%s vs %s; %llu vs %llu launches)", what, a, b, c,
           (unsigned long long)r->count, (unsigned long long)r->median_count);
    break;
  case CT_REASON_CALLS:
    printf("new %s calls +%s CPU (%llu vs %llu calls)", what, a,
           (unsigned long long)r->count, (unsigned long long)r->median_count);
    break;
  default:
    printf("new copies/sets +%s GPU (%llu vs %llu)", a, (unsigned long long)r->count,
           (unsigned long long)r->median_count);
  }
}

static void print_reasons(const ct_steps_file *f, const ct_step_reason *r, unsigned n) {
  if (!n) printf("no single cause above the median step");
  for (unsigned i = 0; i < n; i++) {
    if (i) printf("; ");
    print_reason(f, &r[i]);
  }
  printf("\n");
}

#define STEP_COLS 14

/* The cells of step i's row (a fixed buffer each: ptrs point into cells). */
typedef struct step_row {
  char cell[STEP_COLS][64];
  char name[256];
  const char *ptrs[STEP_COLS];
} step_row;

static void step_row_fill(const ct_steps_file *f, const ct_steps_summary *sum,
                          const ct_steps_options *o, size_t i, const ct_step *s,
                          step_row *row) {
  char b[24];
  unsigned cause = largest_idle(s);
  const ct_step_kernel *k = top_kernel(s);
  char (*c)[64] = row->cell;
  snprintf(c[0], 64, "%zu%s", i, i < o->skip ? "w" : ct_step_is_outlier(sum, o, i, s) ? "*" : "");
  snprintf(c[1], 64, "%s", ct_fmt_duration(s->begin_ns - f->first_ns, b, 24));
  snprintf(c[2], 64, "%s", ct_fmt_duration(ct_step_time(s), b, 24));
  snprintf(c[3], 64, "%s", ct_fmt_duration(s->end_ns - s->begin_ns, b, 24));
  snprintf(c[4], 64, "%s", ct_fmt_duration(s->work_ns, b, 24));
  snprintf(c[5], 64, "%s", ct_fmt_duration(gpu_span(s), b, 24));
  snprintf(c[6], 64, "%.1f", ct_step_busy_pct(s));
  snprintf(c[7], 64, "%s", ct_fmt_duration(ct_step_idle(s), b, 24));
  snprintf(c[8], 64, "%s", cause < CT_GAP_NCAUSES ? ct_gap_cause_name(cause) : "-");
  snprintf(c[9], 64, "%llu", (unsigned long long)s->kernels);
  snprintf(c[10], 64, "%llu", (unsigned long long)(s->copies + s->sets));
  uint64_t api_ns, api_calls = ct_step_api_calls(s, &api_ns);
  snprintf(c[11], 64, "%llu / %s", (unsigned long long)api_calls, ct_fmt_duration(api_ns, b, 24));
  snprintf(c[12], 64, "%llu", (unsigned long long)ct_step_calls_of(s, CT_CAT_SYNC, NULL));
  for (int j = 0; j < STEP_COLS - 1; j++) row->ptrs[j] = c[j];
  row->ptrs[STEP_COLS - 1] = k ? kernel_name(f, k->id, row->name, sizeof row->name) : "-";
}

/* The table of steps, one row each, printed as it is made (two passes over the steps:
 * the column widths, then the rows; no row is kept). Returns 0, -1 when the steps
 * could not be read back. */
static int print_text_rows(const ct_steps_file *f, const ct_steps_summary *sum,
                           const ct_steps_options *o) {
  static const char *const headers[STEP_COLS] = {
      "step", "begin", "time", "cpu", "gpu work", "gpu span", "busy%", "idle", "most idle",
      "kernels", "copies", "cuda calls", "syncs", "top kernel"};
  static const char align[] = "rrrrrrrrlrrrrl";
  size_t widths[STEP_COLS] = {0};
  step_row row;
  ct_text_widths_add(widths, STEP_COLS, headers);
  ct_steps_cursor cur;
  const ct_step *s;
  if (ct_steps_cursor_open(f, &cur) < 0) return -1;
  for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++) {
    step_row_fill(f, sum, o, i, s, &row);
    ct_text_widths_add(widths, STEP_COLS, row.ptrs);
  }
  int failed = cur.failed;
  ct_steps_cursor_close(&cur);
  if (failed || ct_steps_cursor_open(f, &cur) < 0) return -1;
  if (!f->nsteps) printf("  (none)\n");
  else ct_text_row_print(stdout, STEP_COLS, align, widths, headers);
  for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++) {
    step_row_fill(f, sum, o, i, s, &row);
    ct_text_row_print(stdout, STEP_COLS, align, widths, row.ptrs);
  }
  failed = cur.failed;
  ct_steps_cursor_close(&cur);
  if (failed) return -1;
  printf("(w: warmup, left out of the statistics; *: outlier)\n");
  printf("\n");
  return 0;
}

static int print_text_file(const ct_steps_file *f, const ct_identity *id,
                           const ct_steps_summary *sum, const ct_steps_options *o, int rows) {
  char who[400];
  if (id->job.known & CT_JOB_RANK) ct_proc_label(&id->job, f->proc.pid, id->host, who, sizeof who);
  else snprintf(who, sizeof who, "pid %llu", (unsigned long long)f->proc.pid);
  printf("== %s: %s ==\n", f->path, who);
  printf("steps: %zu instances of NVTX range \"%s\" (%s) on thread %llu", f->nsteps, f->range,
         f->chosen ? f->how : "--range", (unsigned long long)f->tid);
  if (f->has_device) printf("; busy and idle of device %llu", (unsigned long long)f->device);
  printf("\n");
  if (f->all_threads) printf("  GPU work: what any thread launched during each step's interval\n");
  if (f->ignored)
    printf("  %llu matching ranges left out (other threads, nested or overlapping)\n",
           (unsigned long long)f->ignored);
  if (rows && print_text_rows(f, sum, o) < 0) return -1;
  char b[5][24];
  printf("summary: %zu steps, %zu counted (--skip %llu): median %s, mean %s, p90 %s, "
         "min %s, max %s\n",
         f->nsteps, sum->counted, (unsigned long long)o->skip,
         ct_fmt_duration(sum->median_ns, b[0], 24), ct_fmt_duration(sum->mean_ns, b[1], 24),
         ct_fmt_duration(sum->p90_ns, b[2], 24), ct_fmt_duration(sum->min_ns, b[3], 24),
         ct_fmt_duration(sum->max_ns, b[4], 24));
  printf("median step: GPU work %s, CPU range %s, device busy %.1f%%\n",
         ct_fmt_duration(sum->median_work_ns, b[0], 24),
         ct_fmt_duration(sum->median_cpu_ns, b[1], 24), sum->median_busy_pct);
  if (sum->counted) {
    if (sum->setup_ns > 0) {
      printf("setup: step 0 took %s, %s more than the median: ",
             ct_fmt_duration(sum->setup_time_ns, b[0], 24),
             ct_fmt_duration((uint64_t)sum->setup_ns, b[1], 24));
      print_reasons(f, sum->setup, sum->nsetup);
    } else {
      printf("setup: step 0 took no longer than the median\n");
    }
  }
  printf("outliers (> %.2fx the median): %zu\n", o->outlier_factor, sum->noutliers);
  for (size_t i = 0; i < sum->noutliers; i++) {
    const ct_step_outlier *ol = &sum->outliers[i];
    uint64_t t = ol->time_ns;
    printf("  step %zu: %s (%.2fx): ", ol->step, ct_fmt_duration(t, b[0], 24),
           sum->median_ns ? (double)t / (double)sum->median_ns : 0.0);
    print_reasons(f, ol->reason, ol->nreasons);
  }
  return 0;
}

/* ---- CSV ----------------------------------------------------------------------------- */

/* Writes one CSV field of the current row (a comma before all but the first), a number
 * or a short name. */
static void csv_cell(int *col, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void csv_cell(int *col, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if ((*col)++) putc(',', stdout);
  ct_csv_field(stdout, buf);
}

/* Writes one CSV string field (any length) of the current row. */
static void csv_str(int *col, const char *s) {
  if ((*col)++) putc(',', stdout);
  ct_csv_field(stdout, s);
}

/* One row per step, written as it is formatted (no table of every row's cells). */
static int print_csv(const steps_cli *c, const ct_steps_summary *sums) {
  static const char *const fixed[] = {
      "pid", "rank", "step", "warmup", "outlier", "begin_ns", "time_ns", "cpu_ns", "gpu_work_ns",
      "gpu_span_ns", "busy_pct", "device_busy_ns", "idle_ns"};
  enum { NFIXED = sizeof fixed / sizeof fixed[0] };
  static const char *const tail[] = {"kernels", "copies", "sets", "copy_gpu_ns", "cuda_calls",
                                     "cuda_ns", "syncs", "sync_ns", "top_kernel", "top_kernel_ns"};
  enum { NTAIL = sizeof tail / sizeof tail[0] };
  int col = 0;
  for (unsigned i = 0; i < NFIXED; i++) csv_str(&col, fixed[i]);
  for (unsigned i = 0; i < CT_GAP_NCAUSES; i++)
    csv_cell(&col, "idle_%s_ns", ct_gap_cause_name(i));
  for (unsigned i = 0; i < NTAIL; i++) csv_str(&col, tail[i]);
  fputs(CT_CSV_EOL, stdout);
  for (unsigned fi = 0; fi < c->nfiles; fi++) {
    const ct_steps_file *f = &c->files[fi];
    if (f->rc < 0 || f->rc == 2) continue;
    ct_steps_cursor cur;
    const ct_step *s;
    if (ct_steps_cursor_open(f, &cur) < 0) return -1;
    for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++) {
      const ct_step_kernel *k = top_kernel(s);
      col = 0;
      csv_cell(&col, "%llu", (unsigned long long)f->proc.pid);
      if (c->ids[fi].job.known & CT_JOB_RANK)
        csv_cell(&col, "%llu", (unsigned long long)c->ids[fi].job.rank);
      else
        csv_str(&col, "");
      csv_cell(&col, "%zu", i);
      csv_cell(&col, "%d", i < c->o.skip);
      csv_cell(&col, "%d", ct_step_is_outlier(&sums[fi], &c->o, i, s));
      csv_cell(&col, "%llu", (unsigned long long)(s->begin_ns - f->first_ns));
      csv_cell(&col, "%llu", (unsigned long long)ct_step_time(s));
      csv_cell(&col, "%llu", (unsigned long long)(s->end_ns - s->begin_ns));
      csv_cell(&col, "%llu", (unsigned long long)s->work_ns);
      csv_cell(&col, "%llu", (unsigned long long)gpu_span(s));
      csv_cell(&col, "%.2f", ct_step_busy_pct(s));
      csv_cell(&col, "%llu", (unsigned long long)s->device_busy_ns);
      csv_cell(&col, "%llu", (unsigned long long)ct_step_idle(s));
      for (unsigned ca = 0; ca < CT_GAP_NCAUSES; ca++)
        csv_cell(&col, "%llu", (unsigned long long)s->idle_ns[ca]);
      csv_cell(&col, "%llu", (unsigned long long)s->kernels);
      csv_cell(&col, "%llu", (unsigned long long)s->copies);
      csv_cell(&col, "%llu", (unsigned long long)s->sets);
      csv_cell(&col, "%llu", (unsigned long long)s->copy_gpu_ns);
      uint64_t api_ns, sync_ns, api_calls = ct_step_api_calls(s, &api_ns);
      uint64_t syncs = ct_step_calls_of(s, CT_CAT_SYNC, &sync_ns);
      csv_cell(&col, "%llu", (unsigned long long)api_calls);
      csv_cell(&col, "%llu", (unsigned long long)api_ns);
      csv_cell(&col, "%llu", (unsigned long long)syncs);
      csv_cell(&col, "%llu", (unsigned long long)sync_ns);
      csv_str(&col, k && k->id < f->nkernel_names ? f->kernel_names[k->id] : "");
      csv_cell(&col, "%llu", (unsigned long long)(k ? k->ns : 0));
      fputs(CT_CSV_EOL, stdout);
    }
    int failed = cur.failed;
    ct_steps_cursor_close(&cur);
    if (failed) return -1;
  }
  return 0;
}

/* ---- JSON ---------------------------------------------------------------------------- */

static void json_reasons(ct_json *j, const ct_steps_file *f, const ct_step_reason *r, unsigned n) {
  ct_json_begin_array(j);
  for (unsigned i = 0; i < n; i++) {
    char name[256];
    ct_json_begin_object(j);
    ct_json_kv_string(j, "kind", reason_kinds[r[i].kind]);
    if (r[i].kind == CT_REASON_KERNEL && r[i].which < f->nkernel_names) {
      ct_json_kv_string(j, "what", f->kernel_names[r[i].which]);
      ct_json_kv_string(j, "demangled", kernel_name(f, r[i].which, name, sizeof name));
    } else {
      ct_json_kv_string(j, "what", reason_what(f, &r[i], name, sizeof name));
    }
    ct_json_kv_uint(j, "excess_ns", r[i].ns - r[i].median_ns);
    ct_json_kv_uint(j, "ns", r[i].ns);
    ct_json_kv_uint(j, "median_ns", r[i].median_ns);
    if (r[i].kind != CT_REASON_IDLE) {
      ct_json_kv_uint(j, "count", r[i].count);
      ct_json_kv_uint(j, "median_count", r[i].median_count);
    }
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
}

static void json_step(ct_json *j, const ct_steps_file *f, const ct_steps_summary *sum,
                      const ct_steps_options *o, size_t i, const ct_step *s) {
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "step", i);
  ct_json_kv_bool(j, "warmup", i < o->skip);
  ct_json_kv_bool(j, "outlier", ct_step_is_outlier(sum, o, i, s));
  ct_json_kv_uint(j, "begin_ns", s->begin_ns - f->first_ns);
  ct_json_kv_uint(j, "time_ns", ct_step_time(s));
  ct_json_kv_uint(j, "cpu_ns", s->end_ns - s->begin_ns);
  ct_json_kv_uint(j, "gpu_work_ns", s->work_ns);
  ct_json_key(j, "gpu_start_ns");
  if (s->gpu_last_ns) ct_json_uint(j, s->gpu_first_ns - f->first_ns);
  else ct_json_null(j);
  ct_json_kv_uint(j, "gpu_span_ns", gpu_span(s));
  ct_json_kv_double(j, "busy_pct", ct_step_busy_pct(s), 2);
  ct_json_kv_uint(j, "device_busy_ns", s->device_busy_ns);
  ct_json_kv_uint(j, "idle_ns", ct_step_idle(s));
  ct_json_key(j, "idle_by_cause");
  ct_json_begin_object(j);
  for (unsigned c = 0; c < CT_GAP_NCAUSES; c++)
    ct_json_kv_uint(j, ct_gap_cause_name((enum ct_gap_cause)c), s->idle_ns[c]);
  ct_json_end_object(j);
  ct_json_kv_uint(j, "kernels", s->kernels);
  ct_json_kv_uint(j, "copies", s->copies);
  ct_json_kv_uint(j, "sets", s->sets);
  ct_json_kv_uint(j, "copy_gpu_ns", s->copy_gpu_ns);
  uint64_t api_ns, sync_ns, api_calls = ct_step_api_calls(s, &api_ns);
  uint64_t syncs = ct_step_calls_of(s, CT_CAT_SYNC, &sync_ns);
  ct_json_kv_uint(j, "cuda_calls", api_calls);
  ct_json_kv_uint(j, "cuda_ns", api_ns);
  ct_json_kv_uint(j, "syncs", syncs);
  ct_json_kv_uint(j, "sync_ns", sync_ns);
  const ct_step_kernel *k = top_kernel(s);
  ct_json_key(j, "top_kernel");
  if (k && k->id < f->nkernel_names) {
    char name[256];
    ct_json_begin_object(j);
    ct_json_kv_string(j, "name", f->kernel_names[k->id]);
    ct_json_kv_string(j, "demangled", kernel_name(f, k->id, name, sizeof name));
    ct_json_kv_uint(j, "count", k->count);
    ct_json_kv_uint(j, "ns", k->ns);
    ct_json_end_object(j);
  } else {
    ct_json_null(j);
  }
  ct_json_end_object(j);
}

/* Returns 0, -1 when the steps could not be read back. */
static int json_file(ct_json *j, const ct_steps_file *f, const ct_identity *id,
                      const ct_steps_summary *sum, const ct_steps_options *o, int rows) {
  ct_json_begin_object(j);
  ct_json_kv_string(j, "path", f->path);
  ct_json_kv_uint(j, "pid", f->proc.pid);
  ct_json_kv_string(j, "host", id->host);
  ct_json_job(j, &id->job);
  ct_json_kv_string(j, "status", f->rc == 0 ? "ok" : "partial");
  ct_json_kv_string(j, "range", f->range);
  ct_json_kv_bool(j, "chosen", f->chosen);
  ct_json_kv_string(j, "how", f->how);
  ct_json_kv_uint(j, "tid", f->tid);
  ct_json_kv_string(j, "work_of", f->all_threads ? "all threads" : "stepping thread");
  ct_json_key(j, "device");
  if (f->has_device) ct_json_uint(j, f->device);
  else ct_json_null(j);
  ct_json_kv_uint(j, "ignored_ranges", f->ignored);
  ct_json_key(j, "summary");
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "steps", f->nsteps);
  ct_json_kv_uint(j, "skip", o->skip);
  ct_json_kv_uint(j, "counted", sum->counted);
  ct_json_kv_uint(j, "median_ns", sum->median_ns);
  ct_json_kv_uint(j, "mean_ns", sum->mean_ns);
  ct_json_kv_uint(j, "p90_ns", sum->p90_ns);
  ct_json_kv_uint(j, "min_ns", sum->min_ns);
  ct_json_kv_uint(j, "max_ns", sum->max_ns);
  ct_json_kv_uint(j, "median_gpu_work_ns", sum->median_work_ns);
  ct_json_kv_uint(j, "median_cpu_ns", sum->median_cpu_ns);
  ct_json_kv_double(j, "median_busy_pct", sum->median_busy_pct, 2);
  ct_json_kv_int(j, "setup_ns", sum->setup_ns);
  ct_json_key(j, "setup_reasons");
  json_reasons(j, f, sum->setup, sum->nsetup);
  ct_json_kv_double(j, "outlier_factor", o->outlier_factor, 2);
  ct_json_key(j, "outliers");
  ct_json_begin_array(j);
  for (size_t i = 0; i < sum->noutliers; i++) {
    const ct_step_outlier *ol = &sum->outliers[i];
    uint64_t t = ol->time_ns;
    ct_json_begin_object(j);
    ct_json_kv_uint(j, "step", ol->step);
    ct_json_kv_uint(j, "time_ns", t);
    ct_json_kv_double(j, "ratio", sum->median_ns ? (double)t / (double)sum->median_ns : 0.0, 2);
    ct_json_key(j, "reasons");
    json_reasons(j, f, ol->reason, ol->nreasons);
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_end_object(j);
  if (rows) {
    ct_json_key(j, "steps");
    ct_json_begin_array(j);
    ct_steps_cursor cur;
    const ct_step *s;
    if (ct_steps_cursor_open(f, &cur) < 0) return -1;
    for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++) json_step(j, f, sum, o, i, s);
    int failed = cur.failed;
    ct_steps_cursor_close(&cur);
    if (failed) return -1;
    ct_json_end_array(j);
  }
  ct_json_end_object(j);
  return 0;
}

int ct_steps_print(const steps_cli *c) {
  ct_steps_summary *sums = calloc(c->nfiles ? c->nfiles : 1, sizeof *sums);
  if (!sums) return -1;
  int rc = 0;
  for (unsigned i = 0; i < c->nfiles && rc == 0; i++)
    if (c->files[i].rc >= 0 && c->files[i].rc != 2)
      rc = ct_steps_summarize(&c->files[i], &c->o, &sums[i]);
  if (rc == 0 && c->fmt == CT_OUT_CSV) {
    rc = print_csv(c, sums);
  } else if (rc == 0 && c->fmt == CT_OUT_JSON) {
    ct_json j;
    ct_json_init(&j, stdout, 1);
    ct_json_begin_object(&j);
    ct_json_kv_string(&j, "schema", "cutrace-steps/1"); /* as report, gaps and diff name theirs */
    cli_selection_json(&j);
    ct_json_key(&j, "processes");
    ct_json_begin_array(&j);
    for (unsigned i = 0; i < c->nfiles && rc == 0; i++)
      if (c->files[i].rc >= 0 && c->files[i].rc != 2)
        rc = json_file(&j, &c->files[i], &c->ids[i], &sums[i], &c->o, !c->summary);
    ct_json_end_array(&j);
    ct_json_end_object(&j);
    ct_json_finish(&j);
  } else if (rc == 0) {
    int first = 1;
    cli_selection_print(stdout);
    for (unsigned i = 0; i < c->nfiles && rc == 0; i++) {
      if (c->files[i].rc < 0 || c->files[i].rc == 2) continue;
      if (!first) printf("\n");
      first = 0;
      rc = print_text_file(&c->files[i], &c->ids[i], &sums[i], &c->o, !c->summary);
    }
  }
  for (unsigned i = 0; i < c->nfiles; i++) ct_steps_summary_free(&sums[i]);
  free(sums);
  return rc;
}
