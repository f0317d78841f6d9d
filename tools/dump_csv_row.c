/*
 * The columns of cutrace dump --csv (docs/dump.md, "CSV"): one formatter for GPU
 * activities and one for intercepted calls, sharing the detail columns (launch shape,
 * copy, GEMM, graph); RFC 4180 quoting; demangled kernel names (demangle_cache.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_csv_internal.h"
#include "output.h"
#include "report.h"


const char csv_header[] =
    "row,pid,rank,tid,device,stream,kind,name,demangled,start_ns,end_ns,duration_ns,"
    "correlation,api,call_start_ns,call_end_ns,launch_delay_ns,result,depth,"
    "parent_correlation,grid_x,grid_y,grid_z,block_x,block_y,block_z,registers,"
    "static_smem,dynamic_smem,bytes,gbps,copy_kind,src_mem,dst_mem,gemm_m,gemm_n,gemm_k,"
    "gemm_batch,compute_type,compute_type_name,graph_exec,graph_version,graph_kernels,"
    "library_call,nvtx_range" CT_CSV_EOL;

/* ---- the buffer ------------------------------------------------------------------------ */

static int grow(csv_buf *b, size_t more) {
  if (b->n + more <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + more) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void csv_put(csv_buf *b, const char *s, size_t len) {
  if (grow(b, len) < 0) return;
  memcpy(b->p + b->n, s, len);
  b->n += len;
}

void csv_put_text(csv_buf *b, const char *s, int last) {
  size_t plain = s ? strcspn(s, CT_CSV_SPECIAL) : 0;
  if (!s || !s[plain]) { /* nothing to quote (most fields): plain is its length */
    if (grow(b, plain + 1) < 0) return;
    if (plain) memcpy(b->p + b->n, s, plain); /* s may be NULL (an empty field) */
    b->n += plain;
  } else {
    size_t len = plain + strlen(s + plain);
    size_t need = ct_csv_quote(NULL, 0, s, len);
    if (grow(b, need + 1) < 0) return;
    b->n += ct_csv_quote(b->p + b->n, need, s, len);
  }
  if (!last) b->p[b->n++] = ',';
}

void csv_put_u64(csv_buf *b, uint64_t v) {
  char digits[CT_U64_DIGITS + 1];
  size_t len = ct_fmt_u64(digits, v);
  digits[len++] = ',';
  if (grow(b, len) < 0) return;
  memcpy(b->p + b->n, digits, len);
  b->n += len;
}

void csv_put_empty(csv_buf *b) { csv_put(b, ",", 1); }

static void put_empties(csv_buf *b, unsigned n) {
  static const char commas[] = ",,,,,,,,,,,,,,,,,,,,,,,,";
  csv_put(b, commas, n);
}

/* ---- shared columns ------------------------------------------------------------------- */

/* pid, rank (empty when the file has none) and tid (empty when unknown). */
static void put_who(csv_buf *b, const ct_proc *p, int has_tid, uint64_t tid) {
  if (p) csv_put_u64(b, p->rec.pid);
  else csv_put_empty(b);
  if (p && (p->job.known & CT_JOB_RANK)) csv_put_u64(b, p->job.rank);
  else csv_put_empty(b);
  if (has_tid) csv_put_u64(b, tid);
  else csv_put_empty(b);
}

static void put_times(csv_buf *b, uint64_t start, uint64_t end) {
  csv_put_u64(b, start);
  csv_put_u64(b, end);
  csv_put_u64(b, end > start ? end - start : 0);
}

/* A graph launch's graph_version and graph_kernels (what it ran; inv NULL: unknown). */
static void put_graph(csv_buf *b, const struct ct_graph_launch *l, const ct_graph_inv *inv) {
  csv_put_u64(b, inv && inv->known ? inv->g.version : l->version);
  if (inv && inv->known) {
    char top[1024];
    ct_graph_inv_top_csv(inv, top, sizeof top);
    csv_put_text(b, top, 0);
  } else {
    csv_put_empty(b);
  }
}

/* grid_x .. graph_kernels from a detail record; dur (ns) > 0 gives a copy its GB/s; attrs
 * (NULL: none) gives a launch its registers and static shared memory; api (NULL: not
 * known) is the entry point of a GEMM, for its compute type's name; inv a graph
 * launch's inventory. */
static void put_detail(csv_buf *b, enum ct_detail detail, const ct_detail_data *d,
                       uint64_t dur, const ct_kattr_table *attrs, const char *api,
                       const ct_graph_inv *inv) {
  if (detail == CT_DETAIL_LAUNCH) {
    const struct ct_launch *l = &d->launch;
    csv_put_u64(b, l->grid_x);
    csv_put_u64(b, l->grid_y);
    csv_put_u64(b, l->grid_z);
    csv_put_u64(b, l->block_x);
    csv_put_u64(b, l->block_y);
    csv_put_u64(b, l->block_z);
    const struct ct_kernel_attr *ka = attrs && l->attr ? ct_kattr_find(attrs, l->attr) : NULL;
    if (ka) {
      csv_put_u64(b, ka->regs);
      csv_put_u64(b, ka->static_smem);
    } else {
      put_empties(b, 2);
    }
    csv_put_u64(b, l->shmem);
    put_empties(b, 14); /* bytes .. graph_kernels */
    return;
  }
  put_empties(b, 9); /* grid_x .. dynamic_smem */
  if (detail == CT_DETAIL_MEMOP) {
    const struct ct_memop *m = &d->memop;
    csv_put_u64(b, m->bytes);
    if (dur) {
      char g[40];
      int n = snprintf(g, sizeof g, "%.3f,", (double)m->bytes / (double)dur);
      csv_put(b, g, (size_t)n);
    } else {
      csv_put_empty(b);
    }
    csv_put_text(b, ct_memop_kind_name(m->kind), 0);
    if (m->kind == CT_MEMOP_MEMSET) csv_put_empty(b);
    else csv_put_text(b, ct_mem_type_name(m->src_mem), 0);
    csv_put_text(b, ct_mem_type_name(m->dst_mem), 0);
    put_empties(b, 9); /* gemm_m .. graph_kernels */
  } else if (detail == CT_DETAIL_GEMM) {
    put_empties(b, 5); /* bytes .. dst_mem */
    csv_put_u64(b, d->gemm.m);
    csv_put_u64(b, d->gemm.n);
    csv_put_u64(b, d->gemm.k);
    csv_put_u64(b, d->gemm.batch);
    csv_put_u64(b, d->gemm.compute_type);
    csv_put_text(b, ct_gemm_compute_name(api, api ? strlen(api) : 0, d->gemm.compute_type), 0);
    put_empties(b, 3); /* graph_exec .. graph_kernels */
  } else if (detail == CT_DETAIL_GRAPH) {
    put_empties(b, 11); /* bytes .. compute_type_name */
    csv_put_u64(b, d->graph.exec);
    put_graph(b, &d->graph, inv);
  } else if (detail == CT_DETAIL_ALLOC) {
    csv_put_u64(b, d->alloc.bytes);
    put_empties(b, 13);
  } else {
    put_empties(b, 14);
  }
}

/* ---- rows ------------------------------------------------------------------------------ */

static const char *gpu_kind(uint64_t type) {
  switch (type) {
  case CT_GPU_KERNEL: return "kernel";
  case CT_GPU_MEMCPY: return "memcpy";
  case CT_GPU_MEMSET: return "memset";
  case CT_GPU_GEMM: return "gemm";
  case CT_GPU_GRAPH: return "graph";
  default: return "unknown";
  }
}

void csv_format_activity(csv_buf *b, ct_demangle_cache *d, const ct_activity *a,
                         const ct_kattr_table *attrs, const ct_graph_inv *inv) {
  csv_put(b, "gpu,", 4);
  put_who(b, a->proc, a->has_call, a->tid);
  csv_put_u64(b, a->device);
  csv_put_u64(b, a->stream);
  csv_put_text(b, gpu_kind(a->type), 0);
  csv_put_text(b, a->name, 0);
  csv_put_text(b, a->type == CT_GPU_KERNEL ? ct_demangle_cached(d, a->name) : a->name, 0);
  put_times(b, a->start_ns, a->end_ns);
  csv_put_u64(b, a->corr);
  if (a->has_call) {
    csv_put_text(b, a->api, 0);
    csv_put_u64(b, a->call_begin_ns);
    csv_put_u64(b, a->call_end_ns);
    csv_put_u64(b, a->start_ns > a->call_end_ns ? a->start_ns - a->call_end_ns : 0);
    csv_put_empty(b); /* result */
    csv_put_u64(b, a->call_depth);
    if (a->call_depth && a->call_parent) csv_put_u64(b, a->call_parent);
    else csv_put_empty(b);
  } else {
    put_empties(b, 7);
  }
  uint64_t dur = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  put_detail(b, a->detail, &a->d, dur, attrs, a->api ? a->api : a->name, inv);
}

void csv_format_call(csv_buf *b, const ct_span *s, const ct_graph_inv *inv) {
  csv_put(b, "call,", 5);
  put_who(b, s->proc, 1, s->tid);
  csv_put_u64(b, s->device);
  csv_put_u64(b, s->stream);
  csv_put_text(b, ct_api_category_name(s->category), 0);
  csv_put_text(b, s->name, 0);
  csv_put_text(b, s->name, 0);
  put_times(b, s->begin_ns, s->end_ns);
  csv_put_u64(b, s->corr);
  put_empties(b, 4); /* api, call_start_ns, call_end_ns, launch_delay_ns */
  csv_put_u64(b, s->result);
  csv_put_u64(b, s->depth);
  if (s->depth && s->parent) csv_put_u64(b, s->parent);
  else csv_put_empty(b);
  put_detail(b, s->detail, &s->d, 0, NULL, s->name, inv);
}
