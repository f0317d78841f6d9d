/* The output of `cutrace report --by callsite` / `--by stack` (report_callsite.h): text
 * and CSV tables, JSON members (docs/report.md has the columns and the schema). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_callsite_internal.h"
#include "stacks.h"

#define TEXT_KERNEL_MAX 60 /* longer kernel names are cut in text tables */

/* Per row index: its top kernel (most GPU time) or NULL. */
static const char **top_kernels(const ct_callsites *c, size_t *lens) {
  size_t nrows = ct_map_count(c->rows);
  const char **top = calloc(nrows ? nrows : 1, sizeof *top);
  uint64_t *best = calloc(nrows ? nrows : 1, sizeof *best);
  for (size_t i = 0; top && best && i < ct_map_count(c->kernels); i++) {
    const void *k;
    size_t klen;
    const kernel_sum *ks = ct_map_entry(c->kernels, i, &k, &klen);
    uint64_t row;
    memcpy(&row, k, 8);
    if (row < nrows && (!top[row] || ks->gpu_ns > best[row])) {
      top[row] = (const char *)k + 8;
      lens[row] = klen - 8;
      best[row] = ks->gpu_ns;
    }
  }
  free(best);
  return top;
}

typedef struct sort_item {
  const site_row *row;
  const char *name;
} sort_item;

static const char *sort_key; /* qsort has no context argument */

static int cmp_rows(const void *x, const void *y) {
  const sort_item *a = x, *b = y;
  uint64_t va = a->row->s.gpu_ns, vb = b->row->s.gpu_ns;
  if (!strcmp(sort_key, "calls")) {
    va = a->row->s.calls;
    vb = b->row->s.calls;
  } else if (!strcmp(sort_key, "avg")) {
    va = a->row->s.calls ? a->row->s.gpu_ns / a->row->s.calls : a->row->s.gpu_ns;
    vb = b->row->s.calls ? b->row->s.gpu_ns / b->row->s.calls : b->row->s.gpu_ns;
  }
  if (strcmp(sort_key, "name") && va != vb) return va > vb ? -1 : 1;
  if (strcmp(sort_key, "name") && a->row->s.cpu_ns != b->row->s.cpu_ns)
    return a->row->s.cpu_ns > b->row->s.cpu_ns ? -1 : 1;
  int n = strcmp(a->name, b->name);
  return n ? n : a->row->index < b->row->index ? -1 : a->row->index > b->row->index;
}

/* The rows in sort order, at most limit (0 = all); *n gets the count. */
static sort_item *sorted_rows(const ct_callsites *c, const char *sort, uint64_t limit, size_t *n) {
  size_t count = ct_map_count(c->rows);
  sort_item *items = calloc(count ? count : 1, sizeof *items);
  *n = 0;
  if (!items) return NULL;
  for (size_t i = 0; i < count; i++) {
    const void *k;
    items[i].row = ct_map_entry(c->rows, i, &k, NULL);
    items[i].name = k; /* the key starts with the call site's function */
  }
  sort_key = sort ? sort : "total";
  qsort(items, count, sizeof *items, cmp_rows);
  *n = limit && count > limit ? limit : count;
  return items;
}

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* "function (file:line)" of a frame, the file without its directory; a Python
 * frame's "file.py:LINE qualname". */
static void frame_label(const frame_copy *fr, char *buf, size_t len) {
  if (ct_frame_is_python(fr->note))
    snprintf(buf, len, "%s:%u %s", base_name(fr->file), fr->line, fr->function);
  else if (*fr->file && fr->line)
    snprintf(buf, len, "%s (%s:%u)", fr->function, base_name(fr->file), fr->line);
  else if (fr->note)
    snprintf(buf, len, "%s (%s)", fr->function, fr->note);
  else if (*fr->module && !strchr(fr->function, '+'))
    snprintf(buf, len, "%s (%s)", fr->function, base_name(fr->module));
  else
    snprintf(buf, len, "%s", fr->function);
}

/* The text cell naming a row: its call site, or (--by stack) the stack from it outwards. */
static void row_label(const ct_callsites *c, const site_row *row, char *buf, size_t len) {
  if (!row->nframes) {
    snprintf(buf, len, "(unknown stack)");
    return;
  }
  frame_label(&row->frames[row->site], buf, len);
  for (unsigned i = row->site + 1; c->by_stack && i < row->nframes; i++) {
    size_t at = strlen(buf);
    if (at + 8 >= len) break;
    snprintf(buf + at, len - at, " < ");
    frame_label(&row->frames[i], buf + at + 3, len - at - 3);
  }
}

void ct_callsites_print(const ct_callsites *c, FILE *f, enum ct_out_format fmt, const char *sort,
                        uint64_t limit, uint64_t pid, const struct ct_job *job, int csv_header) {
  if (fmt == CT_OUT_TEXT && !c->calls_with_stack) {
    fprintf(f, "%s\n", c->calls ? ct_callsites_no_stacks_hint : "(no calls in the input)");
    return;
  }
  static const char *const text_h[] = {"GPU time", "Calls", "CPU time", "Kernels", "GPU ops",
                                       "Top kernel", "Call site"};
  static const char *const csv_h[] = {"table", "pid", "rank", "function", "file", "line", "module",
                                      "calls", "cpu_ns", "gpu_ns", "kernels", "activities",
                                      "top_kernel"};
  const char *hdr[13];
  int n = 0;
  if (fmt == CT_OUT_TEXT) {
    memcpy(hdr, text_h, sizeof text_h);
    n = 7;
    if (c->by_stack) hdr[6] = "Stack (call site < callers)";
  } else {
    for (int i = 0; i < 13; i++)
      if ((i != 1 && i != 2) || pid) hdr[n++] = csv_h[i];
  }
  ct_table *t = ct_table_new(fmt == CT_OUT_TEXT ? (c->by_stack ? "Call stacks (GPU work launched from each)"
                                                              : "Call sites (GPU work launched from each)")
                                                : NULL,
                             n, hdr, fmt == CT_OUT_TEXT ? "rrrrrll" : NULL);
  size_t nrows = ct_map_count(c->rows), count;
  size_t *lens = calloc(nrows ? nrows : 1, sizeof *lens);
  const char **top = lens ? top_kernels(c, lens) : NULL;
  sort_item *items = sorted_rows(c, sort, limit, &count);
  for (size_t i = 0; t && top && items && i < count; i++) {
    const site_row *row = items[i].row;
    char kname[512], dem[512], label[2048], b[4][32];
    snprintf(kname, sizeof kname, "%.*s", top[row->index] ? (int)lens[row->index] : 0,
             top[row->index] ? top[row->index] : "");
    ct_table_row(t);
    if (fmt == CT_OUT_TEXT) {
      row_label(c, row, label, sizeof label);
      ct_table_cell(t, "%s", ct_fmt_duration(row->s.gpu_ns, b[0], sizeof b[0]));
      ct_table_cell(t, "%llu", (unsigned long long)row->s.calls);
      ct_table_cell(t, "%s", ct_fmt_duration(row->s.cpu_ns, b[1], sizeof b[1]));
      ct_table_cell(t, "%llu", (unsigned long long)row->s.kernels);
      ct_table_cell(t, "%llu", (unsigned long long)row->s.activities);
      const char *kd = *kname ? ct_demangle(kname, dem, sizeof dem) : "-";
      if (strlen(kd) > TEXT_KERNEL_MAX) ct_table_cell(t, "%.*s...", TEXT_KERNEL_MAX - 3, kd);
      else ct_table_cell(t, "%s", kd);
      ct_table_cell(t, "%s", label);
      continue;
    }
    const frame_copy *site = row->nframes ? &row->frames[row->site] : NULL;
    ct_table_cell(t, "%s", c->by_stack ? "stacks" : "callsites");
    if (pid) ct_table_cell(t, "%llu", (unsigned long long)pid);
    if (pid && job && (job->known & CT_JOB_RANK))
      ct_table_cell(t, "%llu", (unsigned long long)job->rank);
    else if (pid)
      ct_table_cell(t, "%s", "");
    ct_table_cell(t, "%s", site ? site->function : "");
    ct_table_cell(t, "%s", site ? site->file : "");
    ct_table_cell(t, "%u", site ? site->line : 0);
    ct_table_cell(t, "%s", site ? site->module : "");
    ct_table_cell(t, "%llu", (unsigned long long)row->s.calls);
    ct_table_cell(t, "%llu", (unsigned long long)row->s.cpu_ns);
    ct_table_cell(t, "%llu", (unsigned long long)row->s.gpu_ns);
    ct_table_cell(t, "%llu", (unsigned long long)row->s.kernels);
    ct_table_cell(t, "%llu", (unsigned long long)row->s.activities);
    ct_table_cell(t, "%s", kname);
  }
  if (t && fmt == CT_OUT_CSV) ct_table_print_csv(t, f, csv_header);
  else if (t) ct_table_print(t, f, fmt);
  ct_table_free(t);
  if (fmt == CT_OUT_TEXT) {
    char b1[32], b2[32];
    if (count < nrows)
      fprintf(f, "  (%llu more row%s: --limit 0 shows all)\n", (unsigned long long)(nrows - count),
              nrows - count == 1 ? "" : "s");
    if (c->without.calls || c->without.activities)
      fprintf(f, "without a stack: %llu calls (CPU %s), %llu GPU operations (GPU %s)\n",
              (unsigned long long)c->without.calls, ct_fmt_duration(c->without.cpu_ns, b1, sizeof b1),
              (unsigned long long)c->without.activities,
              ct_fmt_duration(c->without.gpu_ns, b2, sizeof b2));
  }
  free(items);
  free(top);
  free(lens);
}

static void json_frame(ct_json *j, const frame_copy *fr) {
  ct_json_begin_object(j);
  ct_json_kv_string(j, "function", fr->function);
  ct_json_kv_string(j, "file", fr->file);
  ct_json_kv_uint(j, "line", fr->line);
  ct_json_kv_string(j, "module", fr->module);
  if (fr->note) ct_json_kv_string(j, "note", fr->note);
  ct_json_end_object(j);
}

void ct_callsites_json(const ct_callsites *c, ct_json *j, const char *sort, uint64_t limit) {
  size_t nrows = ct_map_count(c->rows), count;
  size_t *lens = calloc(nrows ? nrows : 1, sizeof *lens);
  const char **top = lens ? top_kernels(c, lens) : NULL;
  sort_item *items = sorted_rows(c, sort, limit, &count);
  ct_json_kv_uint(j, "calls_with_stack", c->calls_with_stack);
  if (!c->calls_with_stack) ct_json_kv_string(j, "hint", ct_callsites_no_stacks_hint);
  ct_json_key(j, c->by_stack ? "stacks" : "callsites");
  ct_json_begin_array(j);
  for (size_t i = 0; top && items && i < count; i++) {
    const site_row *row = items[i].row;
    const frame_copy *site = row->nframes ? &row->frames[row->site] : NULL;
    char dem[512], kname[512];
    ct_json_begin_object(j);
    ct_json_kv_string(j, "function", site ? site->function : "");
    ct_json_kv_string(j, "file", site ? site->file : "");
    ct_json_kv_uint(j, "line", site ? site->line : 0);
    ct_json_kv_string(j, "module", site ? site->module : "");
    ct_json_kv_uint(j, "calls", row->s.calls);
    ct_json_kv_uint(j, "kernels", row->s.kernels);
    ct_json_kv_uint(j, "activities", row->s.activities);
    ct_json_kv_uint(j, "cpu_ns", row->s.cpu_ns);
    ct_json_kv_uint(j, "gpu_ns", row->s.gpu_ns);
    if (top[row->index]) {
      snprintf(kname, sizeof kname, "%.*s", (int)lens[row->index], top[row->index]);
      ct_json_kv_string(j, "top_kernel", ct_demangle(kname, dem, sizeof dem));
    } else {
      ct_json_kv_string(j, "top_kernel", NULL);
    }
    ct_json_kv_uint(j, "site_index", row->site);
    ct_json_key(j, "stack");
    ct_json_begin_array(j);
    for (unsigned k = 0; k < row->nframes; k++) json_frame(j, &row->frames[k]);
    ct_json_end_array(j);
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_key(j, "without_stack");
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "calls", c->without.calls);
  ct_json_kv_uint(j, "cpu_ns", c->without.cpu_ns);
  ct_json_kv_uint(j, "gpu_ns", c->without.gpu_ns);
  ct_json_kv_uint(j, "kernels", c->without.kernels);
  ct_json_kv_uint(j, "activities", c->without.activities);
  ct_json_end_object(j);
  free(items);
  free(top);
  free(lens);
}
