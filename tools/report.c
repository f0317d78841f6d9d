/* The aggregation behind `cutrace report` (see report.h). */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread_time.h"

static const size_t row_sizes[CT_NTABLES] = {sizeof(ct_kernel_row), sizeof(ct_api_row),
                                             sizeof(ct_memop_row), sizeof(ct_gemm_row),
                                             sizeof(ct_graph_row), sizeof(ct_stream_row),
                                             sizeof(ct_alloc_row), sizeof(ct_range_row)};

int ct_report_init(ct_report *r) {
  memset(r, 0, sizeof *r);
  for (int t = 0; t < CT_NTABLES; t++)
    if (!(r->maps[t] = ct_map_new(row_sizes[t]))) {
      ct_report_free(r);
      return -1;
    }
  return 0;
}

void ct_report_free(ct_report *r) {
  for (int t = 0; t < CT_NTABLES; t++) {
    if (!r->maps[t]) continue;
    /* every row type starts with its ct_dur_stats */
    for (size_t i = 0; i < ct_map_count(r->maps[t]); i++) {
      void *row = ct_map_entry(r->maps[t], i, NULL, NULL);
      ct_dur_free((ct_dur_stats *)row);
      if (t == CT_TABLE_STREAMS) ct_streams_row_free(row);
    }
    ct_map_free(r->maps[t]);
    r->maps[t] = NULL;
  }
  ct_allocs_file_done(r);
}

/* State of one file's reading. */
typedef struct feed {
  ct_report *r;
  struct ct_process *proc_out;
  ct_inner_join *inner; /* library calls timed by the kernels they launched */
  ct_kattr_table *kattr;        /* the file's kernel attributes (format 1.6) */
  ct_kattr_pending *kattr_wait; /* its launches, joined with them at its end */
  ct_thread_time *spins; /* the overlapping spins of targets polled in turn, counted once */
  int oom;
} feed;

static void on_process(void *user, const ct_proc *proc) {
  feed *f = user;
  if (f->proc_out) *f->proc_out = proc->rec;
}

int ct_report_api_is_inner(const void *key, size_t len) {
  return len > strlen(key);
}

static void on_span(void *user, const ct_span *s) {
  feed *f = user;
  if (s->is_tracer) return;
  ct_inner_span(f->inner, s);
  const char *name = s->name ? s->name : "";
  ct_api_row *row;
  if (s->depth > 0) { /* an inner call: its own row, "name\0inner" */
    char key[192];
    size_t n = strlen(name) < 128 ? strlen(name) : 128;
    memcpy(key, name, n);
    memcpy(key + n, "\0inner", 6);
    row = ct_map_get(f->r->maps[CT_TABLE_APIS], key, n + 6, NULL);
    f->r->inner_spans++;
  } else {
    row = ct_map_get_name(f->r->maps[CT_TABLE_APIS], name, NULL);
    f->r->spans++;
  }
  if (!row) {
    f->oom = 1;
    return;
  }
  /* a query's time: the part of its spin that the thread's other spins of the entry point
   * did not cover (targets polled in turn overlap; thread_time.h) */
  ct_dur_add(&row->d, ct_thread_time_add(f->spins, s, &f->oom));
  /* a poll sequence written while still not ready (600, both layers) failed nothing */
  if (s->result && !(s->polls && s->result == 600)) row->errors++;
  if (s->flags & CT_API_DRIVER) row->driver++;
  /* polls: a query's POLL record says; a query without one answered its one poll at once */
  row->polls += s->polls ? s->polls : (uint64_t)ct_span_is_poll(s);
  if (ct_graphs_span(f->r, s) < 0) f->oom = 1;
  if (ct_allocs_span(f->r, s) < 0) f->oom = 1;
}

static void on_graph(void *user, const ct_proc *proc, const struct ct_graph *g) {
  feed *f = user;
  if (ct_graphs_inventory(f->r, proc->rec.pid, g) < 0) f->oom = 1;
}

static void on_graph_kernel(void *user, const ct_proc *proc, const struct ct_graph_kernel *k,
                            const char *name) {
  feed *f = user;
  ct_kattr_config cfg;
  int known = ct_kattr_config_of(f->kattr, proc, k->attr, k->device, k->block_threads,
                                 k->dyn_smem, &cfg);
  if (ct_graphs_kernel(f->r, proc->rec.pid, k, name, known ? &cfg : NULL) < 0) f->oom = 1;
}

static void add_memop(feed *f, const ct_activity *a, uint64_t dur) {
  ct_memop_key key = {0};
  uint64_t bytes = 0;
  if (a->detail == CT_DETAIL_MEMOP) {
    key.kind = a->d.memop.kind;
    key.src = a->d.memop.src_mem;
    key.dst = a->d.memop.dst_mem;
    bytes = a->d.memop.bytes;
  } else if (a->type == CT_GPU_MEMSET) {
    key.kind = CT_MEMOP_MEMSET;
  }
  if (key.kind == CT_MEMOP_MEMSET) key.src = CT_MEM_UNKNOWN; /* a set has no source */
  ct_memop_row *row = ct_map_get(f->r->maps[CT_TABLE_MEMCPY], &key, sizeof key, NULL);
  if (!row) {
    f->oom = 1;
    return;
  }
  ct_dur_add(&row->d, dur);
  row->bytes += bytes;
}

/* One GEMM call of api with shape g, timed dur by `kernels` GPU activities. */
static void add_gemm(feed *f, const struct ct_gemm *g, const char *api, uint64_t dur,
                     uint64_t kernels, int inner_timed) {
  unsigned char key[sizeof(ct_gemm_key) + 128];
  ct_gemm_key k = {g->m, g->n, g->k, g->batch, g->transa, g->transb, g->atype, g->btype,
                   g->ctype, g->compute_type, g->epilogue};
  memcpy(key, &k, sizeof k);
  if (!api) api = "";
  size_t n = strlen(api);
  if (n > 128) n = 128;
  memcpy(key + sizeof k, api, n);
  ct_gemm_row *row = ct_map_get(f->r->maps[CT_TABLE_GEMMS], key, sizeof k + n, NULL);
  if (!row) {
    f->oom = 1;
    return;
  }
  ct_dur_add(&row->d, dur);
  row->kernels += kernels;
  row->inner_timed += inner_timed != 0;
}

/* Marks the kernel row of name as launched by library entry point via. */
static void mark_launched_by(feed *f, const char *name, const char *via) {
  ct_kernel_row *row = ct_map_get_name(f->r->maps[CT_TABLE_KERNELS], name, NULL);
  if (row && via && !row->launched_by[0])
    snprintf(row->launched_by, sizeof row->launched_by, "%s", via);
}

/* A library call joined with its child kernels: a GEMM row when the kernels timed it. */
static void on_inner_done(void *user, const ct_inner_call *c) {
  feed *f = user;
  if (!c->span) return; /* the library call's record was lost: kernels counted alone */
  for (unsigned i = 0; i < c->nnames; i++) mark_launched_by(f, c->names[i], c->span->name);
  if (c->span->detail == CT_DETAIL_GEMM && (c->span->flags & CT_API_INNER_TIMED) && c->kernels)
    add_gemm(f, &c->span->d.gemm, c->span->name, c->gpu_ns, c->kernels, 1);
}

static void on_activity(void *user, const ct_activity *a) {
  feed *f = user;
  uint64_t dur = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  f->r->activities++;
  f->r->gpu_total_ns += dur;
  if (!a->has_call) f->r->unmatched++;
  if (ct_streams_activity(f->r, a, dur) < 0) f->oom = 1;
  if (a->type == CT_GPU_MEMCPY || a->type == CT_GPU_MEMSET) {
    add_memop(f, a, dur);
    ct_inner_activity(f->inner, a); /* a copy made inside a library call */
    return;
  }
  ct_kernel_row *row = ct_map_get_name(f->r->maps[CT_TABLE_KERNELS], a->name, NULL);
  if (!row) {
    f->oom = 1;
    return;
  }
  if (!row->d.count) row->type = a->type;
  if (!row->d.count || dur > row->d.max) {
    uint64_t start = a->proc->rec.start_ns;
    row->max_start_ns = a->start_ns;
    row->max_offset_ns = start && a->start_ns > start ? a->start_ns - start : 0;
    row->max_pid = a->proc->rec.pid;
    row->max_instance = row->d.count + 1;
  }
  ct_dur_add(&row->d, dur);
  if (ct_kattr_pending_add(f->kattr_wait, &row->attrs, a) < 0) f->oom = 1;
  if (a->type == CT_GPU_GRAPH && ct_graphs_activity(f->r, a, dur) < 0) f->oom = 1;
  if (a->has_call && a->call_depth > 0 && a->call_parent) {
    row->lib_calls++;
    const char *via = ct_inner_activity(f->inner, a);
    if (via && !row->launched_by[0]) snprintf(row->launched_by, sizeof row->launched_by, "%s", via);
  }
  if (a->detail == CT_DETAIL_GEMM) add_gemm(f, &a->d.gemm, a->api, dur, 1, 0);
}

int ct_kernel_outlier(const ct_kernel_row *row) {
  uint64_t med = ct_dur_median(&row->d);
  return row->d.count >= 3 && row->d.max > 4 * med && row->d.max - med >= 20000;
}

/* A PAUSE record: counted once per pause (the record written when it began). */
static void on_pause(void *user, const ct_proc *p, const struct ct_pause *pause, const char *why) {
  (void)p;
  feed *f = user;
  if (!strcmp(why, "filter")) f->r->filtered = 1;
  else if (!pause->end_ns) f->r->pauses++;
}

static void on_kernel_attr(void *user, const ct_proc *p, const struct ct_kernel_attr *a,
                           const char *name) {
  (void)p, (void)name;
  feed *f = user;
  if (ct_kattr_add_attr(f->kattr, a) < 0) f->oom = 1;
}

static void on_occupancy(void *user, const ct_proc *p, const struct ct_occupancy *o) {
  (void)p;
  feed *f = user;
  if (ct_kattr_add_occupancy(f->kattr, o) < 0) f->oom = 1;
}

static const ct_model_ops feed_ops = {.on_process = on_process, .on_span = on_span,
                                      .on_activity = on_activity, .on_graph = on_graph,
                                      .on_graph_kernel = on_graph_kernel, .on_pause = on_pause,
                                      .on_kernel_attr = on_kernel_attr,
                                      .on_occupancy = on_occupancy};

ct_report_file *ct_report_file_begin(ct_report *r, struct ct_process *proc_out,
                                     const ct_model_ops **ops) {
  feed *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  f->r = r;
  f->proc_out = proc_out;
  if (proc_out) memset(proc_out, 0, sizeof *proc_out);
  f->inner = ct_inner_new(on_inner_done, f);
  f->kattr = ct_kattr_new();
  f->kattr_wait = ct_kattr_pending_new();
  f->spins = ct_thread_time_new();
  if (!f->inner || !f->kattr || !f->kattr_wait || !f->spins) {
    ct_thread_time_free(f->spins);
    if (f->inner) ct_inner_free(f->inner);
    ct_kattr_free(f->kattr);
    ct_kattr_pending_finish(f->kattr_wait, NULL);
    free(f);
    return NULL;
  }
  *ops = &feed_ops;
  return (ct_report_file *)f;
}

int ct_report_file_end(ct_report_file *rf, int rc, ct_model_stats *st) {
  feed *f = (feed *)rf;
  if (ct_inner_finish(f->inner) < 0) f->oom = 1;
  ct_inner_free(f->inner);
  ct_kattr_pending_finish(f->kattr_wait, f->kattr);
  ct_kattr_free(f->kattr);
  ct_thread_time_free(f->spins);
  ct_streams_file_done(f->r);
  ct_allocs_file_done(f->r);
  /* the names the pointer caches point to were freed with the file's reader */
  for (int t = 0; t < CT_NTABLES; t++) ct_map_forget_pointers(f->r->maps[t]);
  if (f->oom && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: some rows are missing");
    rc = 1;
  }
  free(f);
  return rc;
}

int ct_report_add_file(ct_report *r, const char *path, ct_model_stats *st,
                       struct ct_process *proc_out) {
  const ct_model_ops *ops;
  ct_report_file *rf = ct_report_file_begin(r, proc_out, &ops);
  if (!rf) {
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  return ct_report_file_end(rf, ct_model_read(path, NULL, ops, rf, st), st);
}

/* ---- sorting ---------------------------------------------------------------------- */

typedef struct sort_item {
  size_t index;
  const ct_dur_stats *d;
  const char *name;
  char buf[160];
} sort_item;

static int sort_field; /* 0 total, 1 calls, 2 avg, 3 name; qsort has no context */

static int cmp_items(const void *pa, const void *pb) {
  const sort_item *a = pa, *b = pb;
  if (sort_field != 3) {
    uint64_t va, vb;
    if (sort_field == 0) va = a->d->total, vb = b->d->total;
    else if (sort_field == 1) va = a->d->count, vb = b->d->count;
    else va = a->d->count ? a->d->total / a->d->count : 0,
         vb = b->d->count ? b->d->total / b->d->count : 0;
    if (va != vb) return va > vb ? -1 : 1;
  }
  int c = strcmp(a->name, b->name);
  return c ? c : (a->index < b->index ? -1 : 1);
}

/* A sortable label of row i of table t. */
static const char *row_label(const ct_report *r, enum ct_report_table t, size_t i, char *buf,
                             size_t len) {
  const void *key;
  size_t klen;
  ct_map_entry(r->maps[t], i, &key, &klen);
  if (t == CT_TABLE_KERNELS) return ct_demangle(key, buf, len);
  if (t == CT_TABLE_APIS || t == CT_TABLE_RANGES) return key;
  if (t == CT_TABLE_STREAMS) {
    const ct_stream_key *k = key;
    snprintf(buf, len, "%020llu %020llu %020llu", (unsigned long long)k->pid,
             (unsigned long long)k->device, (unsigned long long)k->stream);
    return buf;
  }
  if (t == CT_TABLE_ALLOCS) {
    const ct_alloc_key *k = key;
    snprintf(buf, len, "%020llu %020llu %020llu", (unsigned long long)k->pid,
             (unsigned long long)k->device, (unsigned long long)k->kind);
    return buf;
  }
  if (t == CT_TABLE_GRAPHS) {
    const ct_graph_key *g = key;
    snprintf(buf, len, "%020llu %020llu %020llu", (unsigned long long)g->pid,
             (unsigned long long)g->exec, (unsigned long long)g->version);
    return buf;
  }
  if (t == CT_TABLE_MEMCPY) {
    const ct_memop_key *k = key;
    snprintf(buf, len, "%s %s %s", ct_memop_kind_name(k->kind), ct_mem_type_name(k->src),
             ct_mem_type_name(k->dst));
    return buf;
  }
  const ct_gemm_key *g = key;
  snprintf(buf, len, "%020llu %020llu %020llu %.*s", (unsigned long long)g->m,
           (unsigned long long)g->n, (unsigned long long)g->k, (int)(klen - sizeof *g),
           (const char *)key + sizeof *g);
  return buf;
}

size_t *ct_report_sorted(const ct_report *r, enum ct_report_table t, const char *sort) {
  size_t n = ct_map_count(r->maps[t]);
  if (!n) return NULL;
  sort_item *items = malloc(n * sizeof *items);
  size_t *out = malloc(n * sizeof *out);
  if (!items || !out) {
    free(items);
    free(out);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    items[i].index = i;
    items[i].d = ct_map_entry(r->maps[t], i, NULL, NULL);
    items[i].name = row_label(r, t, i, items[i].buf, sizeof items[i].buf);
  }
  sort_field = !strcmp(sort, "calls") ? 1 : !strcmp(sort, "avg") ? 2 : !strcmp(sort, "name") ? 3 : 0;
  qsort(items, n, sizeof *items, cmp_items);
  for (size_t i = 0; i < n; i++) out[i] = items[i].index;
  free(items);
  return out;
}

/* ---- names ------------------------------------------------------------------------- */

const char *ct_data_type_name(uint64_t type) {
  switch (type) { /* cudaDataType values, library_types.h */
  case 0: return "f32";
  case 1: return "f64";
  case 2: return "f16";
  case 3: return "i8";
  case 4: return "c32";
  case 5: return "c64";
  case 6: return "c16";
  case 8: return "u8";
  case 10: return "i32";
  case 14: return "bf16";
  case 28: return "e4m3";
  case 29: return "e5m2";
  default: return "?";
  }
}

const char *ct_compute_type_name(uint64_t type) {
  switch (type) { /* cublasComputeType_t values, cublas_api.h (CUDA 13) */
  case 64: return "16F";
  case 65: return "16F_PEDANTIC";
  case 68: return "32F";
  case 69: return "32F_PEDANTIC";
  case 70: return "64F";
  case 71: return "64F_PEDANTIC";
  case 72: return "32I";
  case 73: return "32I_PEDANTIC";
  case 74: return "32F_FAST_16F";
  case 75: return "32F_FAST_16BF";
  case 77: return "32F_FAST_TF32";
  case 78: return "32F_EMULATED_16BFX9";
  case 79: return "64F_EMULATED_FIXEDPOINT";
  /* below 64: a legacy cudaDataType (library_types.h) that a program built before
   * CUDA 11 passed as the compute type; the hooks record the argument as given */
  case 0: return "legacy_f32";
  case 1: return "legacy_f64";
  case 2: return "legacy_f16";
  case 4: return "legacy_c32";
  case 5: return "legacy_c64";
  case 10: return "legacy_i32";
  default: return "?";
  }
}

const char *ct_gemm_compute_name(const char *api, size_t api_len, uint64_t type) {
  if (type == 0 && api && api_len >= 8 && !strncmp(api, "cublasLt", 8)) return "unknown";
  return ct_compute_type_name(type);
}

const char *ct_memop_kind_name(uint64_t kind) {
  switch (kind) {
  case CT_MEMOP_H2D: return "HtoD";
  case CT_MEMOP_D2H: return "DtoH";
  case CT_MEMOP_D2D: return "DtoD";
  case CT_MEMOP_H2H: return "HtoH";
  case CT_MEMOP_MEMSET: return "memset";
  case CT_MEMOP_P2P: return "PtoP";
  case CT_MEMOP_PREFETCH: return "prefetch";
  case CT_MEMOP_MIXED: return "mixed";
  case CT_MEMOP_DISCARD: return "discard";
  case CT_MEMOP_STREAM_OPS: return "stream_ops";
  case CT_MEMOP_EXT_WAIT: return "ext_wait";
  case CT_MEMOP_EXT_SIGNAL: return "ext_signal";
  case CT_MEMOP_DECOMPRESS: return "decompress";
  default: return "unknown";
  }
}

const char *ct_mem_type_name(uint64_t mem) {
  switch (mem) {
  case CT_MEM_DEVICE: return "device";
  case CT_MEM_PINNED: return "pinned";
  case CT_MEM_PAGEABLE: return "pageable";
  case CT_MEM_MANAGED: return "managed";
  default: return "unknown";
  }
}
