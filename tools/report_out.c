/* The rows of `cutrace report` in each output format: text and CSV table rows,
 * JSON objects (docs/report.md has the columns and the schema). */
#include <stdio.h>
#include <string.h>

#include "report.h"

/* ---- tables --------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0; }

/* A duration cell: human units in text, integer ns in CSV. */
static void dur_cell(ct_table *t, enum ct_out_format fmt, uint64_t ns) {
  char b[32];
  if (fmt == CT_OUT_TEXT) ct_table_cell(t, "%s", ct_fmt_duration(ns, b, sizeof b));
  else ct_table_cell(t, "%llu", (unsigned long long)ns);
}

static uint64_t avg(const ct_dur_stats *d) { return d->count ? d->total / d->count : 0; }

/* Whether a cudaDataType value (library_types.h) is a complex type: CUDA_C_32F 4,
 * CUDA_C_64F 5, CUDA_C_16F 6, then the odd values 7 to 27 (CUDA_C_8I ... CUDA_C_64U). */
static int complex_type(uint64_t t) { return t == 4 || t == 5 || t == 6 || (t >= 7 && t <= 27 && t % 2); }

/* TFLOP/s of a GEMM row: 2 m n k operations per real GEMM, 8 m n k per complex one
 * (a complex multiply-add is 4 real multiplications and 4 additions). */
static double gemm_tflops(const ct_gemm_key *g, const ct_dur_stats *d) {
  double per_mnk = complex_type(g->atype) ? 8.0 : 2.0;
  double flops = per_mnk * g->m * g->n * g->k * (g->batch ? g->batch : 1) * d->count;
  return d->total ? flops / d->total / 1e3 : 0;
}

static double gbps(uint64_t bytes, uint64_t ns) { return ns ? (double)bytes / ns : 0; }

/* The column headers of table t: text headers, or CSV headers (prefix columns added). */
int ct_report_table_has_pid(enum ct_report_table t) {
  return t == CT_TABLE_STREAMS || t == CT_TABLE_ALLOCS;
}

ct_table *ct_report_new_table(enum ct_report_table t, enum ct_out_format fmt, const char *title,
                              int pid_col) {
  static const char *const text_h[CT_NTABLES][14] = {
      {"GPU %", "Total", "Calls", "Avg", "Med", "Min", "Max", "Regs", "Smem", "Occ %", "Kernel"},
      {"Total", "Calls", "Avg", "Med", "Min", "Max", "Errors", "Name"},
      {"GPU %", "Total", "Calls", "Bytes", "Avg", "Med", "GB/s", "Kind", "Memory"},
      {"Total", "Calls", "Kernels", "Avg", "GFLOP/s", "M", "N", "K", "Batch", "Op", "Types",
       "Compute", "API"},
      {"GPU %", "GPU total", "Launches", "Avg", "Nodes", "Kernels", "Memcpy", "Memset", "Other",
       "Exec", "Top kernels"},
      {"GPU %", "GPU total", "Ops", "Busy %", "Delay med", "Delay p90", "Delay max", "Queue med",
       "Queue max", "Empty %", "Short", "Device/stream"},
      {"CPU total", "Allocs", "Bytes", "Alloc time", "Frees", "Free time", "Peak live",
       "Live at end", "Pid/device", "Kind"},
      {"CPU total", "Calls", "CPU avg", "Kernels", "GPU ops", "GPU time", "Range"}};
  static const char *const csv_h[CT_NTABLES][24] = {
      {"name", "type", "calls", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns",
       "gpu_pct", "mangled", "lib_calls", "launched_by", "max_start_ns", "max_instance", "regs",
       "smem_static", "smem_dynamic", "block_threads", "blocks_per_sm", "occupancy_pct",
       "configs"},
      {"name", "calls", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns", "errors", "inner"},
      {"kind", "src", "dst", "count", "bytes", "total_ns", "avg_ns", "median_ns", "gbps", "gpu_pct"},
      {"api", "m", "n", "k", "batch", "transa", "transb", "atype", "btype", "ctype",
       "compute_type", "epilogue", "calls", "total_ns", "avg_ns", "tflops", "gflops",
       "kernels", "inner_timed", "compute_type_name", "atype_name", "btype_name", "ctype_name"},
      {"exec", "launches", "gpu_ns", "avg_ns", "inventory", "nodes", "kernels", "memcpys",
       "memsets", "others", "partial", "version", "top_kernels", "folded", "last_version"},
      {"pid", "device", "stream", "ops", "gpu_ns", "busy_pct", "with_call", "delay_median_ns",
       "delay_p90_ns", "delay_max_ns", "started_in_call", "depth_median", "depth_max",
       "empty_queue", "kernels", "short_kernels"},
      {"pid", "device", "kind", "allocs", "bytes", "alloc_ns", "frees", "freed_bytes", "free_ns",
       "unmatched_frees", "peak_live_bytes", "live_bytes_at_end", "total_ns"},
      {"name", "calls", "cpu_ns", "avg_ns", "kernels", "activities", "gpu_ns"}};
  static const char *const text_align[CT_NTABLES] = {"rrrrrrrrrrl", "rrrrrrrl", "rrrrrrrll",
                                                     "rrrrrrrrrllll", "rrrrrrrrrrl",
                                                     "rrrrrrrrrrrl", "rrrrrrrrll", "rrrrrrl"};
  const char *const *h = fmt == CT_OUT_TEXT ? text_h[t] : csv_h[t];
  const char *hdr[27]; /* table, pid, rank and at most 23 columns (csv_h's rows end with NULL) */
  int n = 0;
  if (fmt == CT_OUT_CSV) {
    hdr[n++] = "table";
    if (pid_col) hdr[n++] = "pid", hdr[n++] = "rank";
  }
  /* streams and allocs have a pid column of their own: per process, the one above */
  int own_pid = fmt == CT_OUT_CSV && pid_col && ct_report_table_has_pid(t);
  for (int i = own_pid; i < 23 && h[i]; i++) hdr[n++] = h[i];
  return ct_table_new(fmt == CT_OUT_TEXT ? title : NULL, n, hdr,
                      fmt == CT_OUT_TEXT ? text_align[t] : NULL);
}

static const char *const gpu_type_names[] = {"?", "kernel", "memcpy", "memset", "gemm", "graph"};

/* CSV: raw integers (ns, bytes) in the csv_h column order. */
void ct_report_csv_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                       const void *key, size_t klen, const void *v) {
  const ct_dur_stats *d = v;
  char b[4096];
  switch (t) {
  case CT_TABLE_GRAPHS:
    ct_graphs_csv_row(tb, r, key, v);
    break;
  case CT_TABLE_STREAMS:
    ct_streams_csv_row(tb, r, key, v);
    break;
  case CT_TABLE_ALLOCS:
    ct_allocs_csv_row(tb, r, key, v);
    break;
  case CT_TABLE_KERNELS: {
    const ct_kernel_row *k = v;
    ct_table_cell(tb, "%s", ct_demangle(key, b, sizeof b));
    ct_table_cell(tb, "%s", gpu_type_names[k->type < 6 ? k->type : 0]);
    ct_table_cell(tb, "%llu", (unsigned long long)d->count);
    ct_table_cell(tb, "%llu", (unsigned long long)d->total);
    ct_table_cell(tb, "%llu", (unsigned long long)avg(d));
    ct_table_cell(tb, "%llu", (unsigned long long)ct_dur_median(d));
    ct_table_cell(tb, "%llu", (unsigned long long)d->min);
    ct_table_cell(tb, "%llu", (unsigned long long)d->max);
    ct_table_cell(tb, "%.2f", pct(d->total, r->gpu_total_ns));
    ct_table_cell(tb, "%s", (const char *)key);
    ct_table_cell(tb, "%llu", (unsigned long long)k->lib_calls);
    ct_table_cell(tb, "%s", k->launched_by);
    ct_table_cell(tb, "%llu", (unsigned long long)k->max_start_ns);
    ct_table_cell(tb, "%llu", (unsigned long long)k->max_instance);
    ct_kattr_csv_cells(tb, &k->attrs);
    break;
  }
  case CT_TABLE_APIS:
    ct_table_cell(tb, "%s", (const char *)key);
    ct_table_cell(tb, "%llu", (unsigned long long)d->count);
    ct_table_cell(tb, "%llu", (unsigned long long)d->total);
    ct_table_cell(tb, "%llu", (unsigned long long)avg(d));
    ct_table_cell(tb, "%llu", (unsigned long long)ct_dur_median(d));
    ct_table_cell(tb, "%llu", (unsigned long long)d->min);
    ct_table_cell(tb, "%llu", (unsigned long long)d->max);
    ct_table_cell(tb, "%llu", (unsigned long long)((const ct_api_row *)v)->errors);
    ct_table_cell(tb, "%d", ct_report_api_is_inner(key, klen));
    break;
  case CT_TABLE_MEMCPY: {
    const ct_memop_key *k = key;
    uint64_t bytes = ((const ct_memop_row *)v)->bytes;
    ct_table_cell(tb, "%s", ct_memop_kind_name(k->kind));
    ct_table_cell(tb, "%s", ct_mem_type_name(k->src));
    ct_table_cell(tb, "%s", ct_mem_type_name(k->dst));
    ct_table_cell(tb, "%llu", (unsigned long long)d->count);
    ct_table_cell(tb, "%llu", (unsigned long long)bytes);
    ct_table_cell(tb, "%llu", (unsigned long long)d->total);
    ct_table_cell(tb, "%llu", (unsigned long long)avg(d));
    ct_table_cell(tb, "%llu", (unsigned long long)ct_dur_median(d));
    ct_table_cell(tb, "%.3f", gbps(bytes, d->total));
    ct_table_cell(tb, "%.2f", pct(d->total, r->gpu_total_ns));
    break;
  }
  case CT_TABLE_GEMMS: {
    const ct_gemm_key *g = key;
    ct_table_cell(tb, "%.*s", (int)(klen - sizeof *g), (const char *)key + sizeof *g);
    const uint64_t f[11] = {g->m, g->n, g->k, g->batch, g->transa, g->transb, g->atype,
                            g->btype, g->ctype, g->compute_type, g->epilogue};
    for (int j = 0; j < 11; j++) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
    ct_table_cell(tb, "%llu", (unsigned long long)d->count);
    ct_table_cell(tb, "%llu", (unsigned long long)d->total);
    ct_table_cell(tb, "%llu", (unsigned long long)avg(d));
    ct_table_cell(tb, "%.3f", gemm_tflops(g, d));
    ct_table_cell(tb, "%.3f", gemm_tflops(g, d) * 1e3);
    ct_table_cell(tb, "%llu", (unsigned long long)((const ct_gemm_row *)v)->kernels);
    ct_table_cell(tb, "%llu", (unsigned long long)((const ct_gemm_row *)v)->inner_timed);
    ct_table_cell(tb, "%s", ct_gemm_compute_name((const char *)key + sizeof *g, klen - sizeof *g, g->compute_type));
    ct_table_cell(tb, "%s", ct_data_type_name(g->atype)); /* the names of the numbers above */
    ct_table_cell(tb, "%s", ct_data_type_name(g->btype));
    ct_table_cell(tb, "%s", ct_data_type_name(g->ctype));
    break;
  }
  case CT_TABLE_RANGES: {
    const ct_range_row *rr = v;
    ct_table_cell(tb, "%s", (const char *)key);
    const uint64_t f[6] = {d->count, d->total, avg(d), rr->kernels, rr->activities, rr->gpu_ns};
    for (int j = 0; j < 6; j++) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
    break;
  }
  default: break;
  }
}

/* Text: human units in the text_h column order. */
void ct_report_text_row(ct_table *tb, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *v) {
  const ct_dur_stats *d = v;
  char b[4096], sz[32];
  enum ct_out_format fmt = CT_OUT_TEXT;
  if (t == CT_TABLE_GRAPHS) {
    ct_graphs_text_row(tb, r, key, v);
    return;
  }
  if (t == CT_TABLE_STREAMS) {
    ct_streams_text_row(tb, r, key, v);
    return;
  }
  if (t == CT_TABLE_ALLOCS) {
    ct_allocs_text_row(tb, r, key, v);
    return;
  }
  if (t == CT_TABLE_KERNELS || t == CT_TABLE_MEMCPY)
    ct_table_cell(tb, "%.2f", pct(d->total, r->gpu_total_ns));
  dur_cell(tb, fmt, d->total);
  ct_table_cell(tb, "%llu", (unsigned long long)d->count);
  switch (t) {
  case CT_TABLE_KERNELS: {
    const ct_kernel_row *k = v;
    dur_cell(tb, fmt, avg(d));
    dur_cell(tb, fmt, ct_dur_median(d));
    dur_cell(tb, fmt, d->min);
    dur_cell(tb, fmt, d->max);
    ct_kattr_text_cells(tb, &k->attrs);
    if (k->launched_by[0])
      ct_table_cell(tb, "%s  [by %s]", ct_demangle(key, b, sizeof b), k->launched_by);
    else
      ct_table_cell(tb, "%s", ct_demangle(key, b, sizeof b));
    break;
  }
  case CT_TABLE_APIS:
    dur_cell(tb, fmt, avg(d));
    dur_cell(tb, fmt, ct_dur_median(d));
    dur_cell(tb, fmt, d->min);
    dur_cell(tb, fmt, d->max);
    ct_table_cell(tb, "%llu", (unsigned long long)((const ct_api_row *)v)->errors);
    if (((const ct_api_row *)v)->polls) /* coalesced queries: calls are spins, polls made */
      ct_table_cell(tb, ct_report_api_is_inner(key, klen) ? "  %s (inner, %llu polls)" : "%s (%llu polls)",
                    (const char *)key, (unsigned long long)((const ct_api_row *)v)->polls);
    else
      ct_table_cell(tb, ct_report_api_is_inner(key, klen) ? "  %s (inner)" : "%s", (const char *)key);
    break;
  case CT_TABLE_MEMCPY: {
    const ct_memop_key *k = key;
    uint64_t bytes = ((const ct_memop_row *)v)->bytes;
    ct_table_cell(tb, "%s", ct_fmt_bytes(bytes, sz, sizeof sz));
    dur_cell(tb, fmt, avg(d));
    dur_cell(tb, fmt, ct_dur_median(d));
    ct_table_cell(tb, "%.2f", gbps(bytes, d->total));
    ct_table_cell(tb, "%s", ct_memop_kind_name(k->kind));
    if (k->kind == CT_MEMOP_MEMSET) ct_table_cell(tb, "%s", ct_mem_type_name(k->dst));
    else ct_table_cell(tb, "%s -> %s", ct_mem_type_name(k->src), ct_mem_type_name(k->dst));
    break;
  }
  case CT_TABLE_GEMMS: {
    const ct_gemm_key *g = key;
    ct_table_cell(tb, "%llu", (unsigned long long)((const ct_gemm_row *)v)->kernels);
    dur_cell(tb, fmt, avg(d));
    double gf = gemm_tflops(g, d) * 1e3; /* GFLOP/s, 1 decimal: small GEMMs stay readable */
    if (gf > 0 && gf < 0.05) ct_table_cell(tb, "<0.1");
    else ct_table_cell(tb, "%.1f", gf);
    ct_table_cell(tb, "%llu", (unsigned long long)g->m);
    ct_table_cell(tb, "%llu", (unsigned long long)g->n);
    ct_table_cell(tb, "%llu", (unsigned long long)g->k);
    ct_table_cell(tb, "%llu", (unsigned long long)(g->batch ? g->batch : 1));
    ct_table_cell(tb, "%c%c", g->transa ? 'T' : 'N', g->transb ? 'T' : 'N');
    ct_table_cell(tb, "%s*%s->%s", ct_data_type_name(g->atype), ct_data_type_name(g->btype),
                  ct_data_type_name(g->ctype));
    ct_table_cell(tb, "%s", ct_gemm_compute_name((const char *)key + sizeof *g, klen - sizeof *g, g->compute_type));
    ct_table_cell(tb, "%.*s", (int)(klen - sizeof *g), (const char *)key + sizeof *g);
    break;
  }
  case CT_TABLE_RANGES: {
    const ct_range_row *rr = v;
    dur_cell(tb, fmt, avg(d));
    ct_table_cell(tb, "%llu", (unsigned long long)rr->kernels);
    ct_table_cell(tb, "%llu", (unsigned long long)rr->activities);
    dur_cell(tb, fmt, rr->gpu_ns);
    ct_table_cell(tb, "%s", (const char *)key);
    break;
  }
  default: break;
  }
}

static void json_dur(ct_json *j, const ct_dur_stats *d) {
  ct_json_kv_uint(j, "total_ns", d->total);
  ct_json_kv_uint(j, "avg_ns", avg(d));
  ct_json_kv_uint(j, "median_ns", ct_dur_median(d));
  ct_json_kv_uint(j, "min_ns", d->min);
  ct_json_kv_uint(j, "max_ns", d->max);
}

void ct_report_json_row(ct_json *j, const ct_report *r, enum ct_report_table t,
                        const void *key, size_t klen, const void *v) {
  const ct_dur_stats *d = v;
  char b[4096];
  ct_json_begin_object(j);
  switch (t) {
  case CT_TABLE_GRAPHS:
    ct_graphs_json_row(j, r, key, v);
    break;
  case CT_TABLE_STREAMS:
    ct_streams_json_row(j, r, key, v);
    break;
  case CT_TABLE_ALLOCS:
    ct_allocs_json_row(j, r, key, v);
    break;
  case CT_TABLE_KERNELS:
    ct_json_kv_string(j, "name", ct_demangle(key, b, sizeof b));
    ct_json_kv_string(j, "mangled", key);
    ct_json_kv_string(j, "type", gpu_type_names[((const ct_kernel_row *)v)->type < 6
                                                    ? ((const ct_kernel_row *)v)->type : 0]);
    ct_json_kv_uint(j, "calls", d->count);
    json_dur(j, d);
    ct_json_kv_double(j, "gpu_pct", pct(d->total, r->gpu_total_ns), 2);
    ct_json_kv_uint(j, "lib_calls", ((const ct_kernel_row *)v)->lib_calls);
    ct_json_key(j, "launched_by");
    if (((const ct_kernel_row *)v)->launched_by[0])
      ct_json_string_n(j, ((const ct_kernel_row *)v)->launched_by,
                       strlen(((const ct_kernel_row *)v)->launched_by));
    else
      ct_json_null(j);
    {
      const ct_kernel_row *k = v;
      ct_json_key(j, "slowest");
      ct_json_begin_object(j);
      ct_json_kv_uint(j, "start_ns", k->max_start_ns);
      ct_json_kv_uint(j, "offset_ns", k->max_offset_ns);
      ct_json_kv_uint(j, "pid", k->max_pid);
      ct_json_kv_uint(j, "instance", k->max_instance);
      ct_json_kv_bool(j, "outlier", ct_kernel_outlier(k));
      ct_json_end_object(j);
      ct_kattr_json(j, &k->attrs);
    }
    break;
  case CT_TABLE_APIS:
    ct_json_kv_string(j, "name", key);
    ct_json_kv_bool(j, "inner", ct_report_api_is_inner(key, klen));
    ct_json_kv_uint(j, "calls", d->count);
    json_dur(j, d);
    ct_json_kv_uint(j, "errors", ((const ct_api_row *)v)->errors);
    ct_json_kv_uint(j, "driver_calls", ((const ct_api_row *)v)->driver);
    ct_json_kv_uint(j, "polls", ((const ct_api_row *)v)->polls);
    break;
  case CT_TABLE_MEMCPY: {
    const ct_memop_key *k = key;
    uint64_t bytes = ((const ct_memop_row *)v)->bytes;
    ct_json_kv_string(j, "kind", ct_memop_kind_name(k->kind));
    ct_json_kv_string(j, "src", ct_mem_type_name(k->src));
    ct_json_kv_string(j, "dst", ct_mem_type_name(k->dst));
    ct_json_kv_uint(j, "count", d->count);
    ct_json_kv_uint(j, "bytes", bytes);
    json_dur(j, d);
    ct_json_kv_double(j, "gbps", gbps(bytes, d->total), 3);
    ct_json_kv_double(j, "gpu_pct", pct(d->total, r->gpu_total_ns), 2);
    break;
  }
  case CT_TABLE_GEMMS: {
    const ct_gemm_key *g = key;
    ct_json_key(j, "api");
    ct_json_string_n(j, (const char *)key + sizeof *g, klen - sizeof *g);
    ct_json_kv_uint(j, "m", g->m);
    ct_json_kv_uint(j, "n", g->n);
    ct_json_kv_uint(j, "k", g->k);
    ct_json_kv_uint(j, "batch", g->batch ? g->batch : 1);
    ct_json_kv_bool(j, "transa", g->transa != 0);
    ct_json_kv_bool(j, "transb", g->transb != 0);
    ct_json_kv_string(j, "atype", ct_data_type_name(g->atype));
    ct_json_kv_string(j, "btype", ct_data_type_name(g->btype));
    ct_json_kv_string(j, "ctype", ct_data_type_name(g->ctype));
    ct_json_kv_uint(j, "compute_type", g->compute_type);
    ct_json_kv_string(j, "compute_type_name", ct_gemm_compute_name((const char *)key + sizeof *g, klen - sizeof *g, g->compute_type));
    ct_json_kv_uint(j, "epilogue", g->epilogue);
    ct_json_kv_uint(j, "calls", d->count);
    json_dur(j, d);
    ct_json_kv_double(j, "tflops", gemm_tflops(g, d), 3);
    ct_json_kv_double(j, "gflops", gemm_tflops(g, d) * 1e3, 3);
    ct_json_kv_uint(j, "kernels", ((const ct_gemm_row *)v)->kernels);
    ct_json_kv_uint(j, "inner_timed", ((const ct_gemm_row *)v)->inner_timed);
    break;
  }
  case CT_TABLE_RANGES: {
    const ct_range_row *rr = v;
    ct_json_kv_string(j, "name", key);
    ct_json_kv_uint(j, "calls", d->count);
    ct_json_kv_uint(j, "kernels", rr->kernels);
    ct_json_kv_uint(j, "activities", rr->activities);
    ct_json_kv_uint(j, "cpu_ns", d->total);
    ct_json_kv_uint(j, "gpu_ns", rr->gpu_ns);
    ct_json_kv_uint(j, "avg_ns", avg(d));
    ct_json_kv_uint(j, "min_ns", d->min);
    ct_json_kv_uint(j, "max_ns", d->max);
    break;
  }
  default: break;
  }
  ct_json_end_object(j);
}

/* The kernels whose slowest instance stands far above the rest (ct_kernel_outlier), the
 * largest excess first, at most 5: when it ran, which instance, and how to zoom on it. */
void ct_report_print_outliers(FILE *f, const ct_report *r) {
  enum { MAX_SHOWN = 5 };
  const ct_map *m = r->maps[CT_TABLE_KERNELS];
  size_t pick[MAX_SHOWN], n = 0;
  for (size_t i = 0; i < ct_map_count(m); i++) {
    const ct_kernel_row *k = ct_map_entry(m, i, NULL, NULL);
    if (!ct_kernel_outlier(k)) continue;
    uint64_t excess = k->d.max - ct_dur_median(&k->d);
    size_t at = n < MAX_SHOWN ? n++ : MAX_SHOWN;
    while (at > 0) { /* insertion by excess, descending */
      const ct_kernel_row *o = ct_map_entry(m, pick[at - 1], NULL, NULL);
      if (o->d.max - ct_dur_median(&o->d) >= excess) break;
      if (at < MAX_SHOWN) pick[at] = pick[at - 1];
      at--;
    }
    if (at < MAX_SHOWN) pick[at] = i;
  }
  if (!n) return;
  fprintf(f, "\nSlowest instances far above their kernel's median (zoom: cutrace gaps --from @NS):\n");
  for (size_t i = 0; i < n; i++) {
    const void *key;
    const ct_kernel_row *k = ct_map_entry(m, pick[i], &key, NULL);
    char name[4096], b1[32], b2[32], b3[32];
    fprintf(f, "  %s took %s (median %s), instance %llu of %llu, at +%s in pid %llu (@%llu)\n",
            ct_demangle(key, name, sizeof name), ct_fmt_duration(k->d.max, b1, sizeof b1),
            ct_fmt_duration(ct_dur_median(&k->d), b2, sizeof b2),
            (unsigned long long)k->max_instance, (unsigned long long)k->d.count,
            ct_fmt_duration(k->max_offset_ns, b3, sizeof b3), (unsigned long long)k->max_pid,
            (unsigned long long)k->max_start_ns);
  }
}

const char *const ct_report_table_ids[CT_NTABLES] = {"kernels", "apis", "memcpy", "gemms",
                                                     "graphs", "streams", "allocs", "ranges"};
