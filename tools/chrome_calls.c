/*
 * The CPU side of the Chrome export (chrome_internal.h): intercepted calls with their
 * GEMM args, call sites and, for library calls timed by the kernels they launched,
 * those kernels; the tracer's own work; NVTX ranges as CPU slices and projected onto
 * the GPU streams (gpu_user_annotation). docs/dump.md has the event table.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"
#include "stacks.h"
#include "output.h"

/* The args of a GEMM call of entry point api (NULL: unknown): shape and types
 * (Kineto-like names), the compute type as its number and its name. */
void chr_put_gemm_args(ct_chrome *c, const struct ct_gemm *g, const char *api) {
  const chr_encoder *e = c->enc;
  e->arg_u64(c, "m", g->m);
  e->arg_u64(c, "n", g->n);
  e->arg_u64(c, "k", g->k);
  e->arg_u64(c, "batch", g->batch ? g->batch : 1);
  e->arg_u64(c, "transa", g->transa);
  e->arg_u64(c, "transb", g->transb);
  e->arg_str(c, "atype", ct_data_type_name(g->atype));
  e->arg_str(c, "btype", ct_data_type_name(g->btype));
  e->arg_str(c, "ctype", ct_data_type_name(g->ctype));
  e->arg_u64(c, "compute_type", g->compute_type);
  e->arg_str(c, "compute_type_name",
             ct_gemm_compute_name(api, api ? strlen(api) : 0, g->compute_type));
  e->arg_u64(c, "epilogue", g->epilogue);
}

/* A Python frame as "file.py:LINE qualname" (the file without its directory). */
static void python_label(char *buf, size_t len, const ct_frame *fr) {
  const char *base = strrchr(fr->file, '/');
  snprintf(buf, len, "%s:%u %s", base ? base + 1 : fr->file, fr->line, fr->function);
}

/* The label of stack id's call site ("function file:line", the first frame outside
 * CUDA's libraries and the tracer, or "file.py:LINE qualname", the innermost Python
 * frame of the program's own code: stacks.h), followed after its NUL by the stack's
 * Python frames ("file.py:LINE qualname < ...", "" when none); cached per id; NULL
 * when unknown. */
static const char *call_site(ct_chrome *c, uint64_t id) {
  if (!c->stacks || !c->call_sites) return NULL;
  char **label = ct_map_get(c->call_sites, &id, sizeof id, NULL);
  if (!label) return NULL;
  if (*label) return **label ? *label : NULL;
  const ct_frame *fr[64];
  unsigned site, n = ct_stacks_resolve(c->stacks, id, fr, 64, &site);
  if (!n) return NULL; /* its STACK record is still to come: try again next time */
  char buf[512] = "", py[2048] = ""; /* "" when every frame is CUDA's or the tracer's */
  if (site >= n)
    ;
  else if (ct_frame_is_python(fr[site]->note))
    python_label(buf, sizeof buf, fr[site]);
  else if (fr[site]->line)
    snprintf(buf, sizeof buf, "%s %s:%u", fr[site]->function, fr[site]->file, fr[site]->line);
  else
    snprintf(buf, sizeof buf, "%s", fr[site]->function);
  size_t at = 0;
  for (unsigned i = 0; i < n; i++) {
    if (!ct_frame_is_python(fr[i]->note)) continue;
    char one[512];
    python_label(one, sizeof one, fr[i]);
    int w = snprintf(py + at, sizeof py - at, "%s%s", at ? " < " : "", one);
    if (w < 0 || (size_t)w >= sizeof py - at) break;
    at += (size_t)w;
  }
  size_t lb = strlen(buf);
  *label = malloc(lb + at + 2);
  if (*label) {
    memcpy(*label, buf, lb + 1);
    memcpy(*label + lb + 1, py, at + 1);
  }
  return *label && **label ? *label : NULL;
}

/* Frees the call-site labels and stack table of a file. */
void chr_drop_stacks(ct_chrome *c) {
  for (size_t i = 0; c->call_sites && i < ct_map_count(c->call_sites); i++)
    free(*(char **)ct_map_entry(c->call_sites, i, NULL, NULL));
  ct_map_free(c->call_sites);
  ct_stacks_free(c->stacks);
  c->call_sites = NULL;
  c->stacks = NULL;
}

void chr_on_stack(void *user, const ct_proc *p, const struct ct_stack *node) {
  ct_chrome *c = user;
  (void)p;
  if (c->stacks) ct_stacks_add_node(c->stacks, node);
}

void chr_on_module(void *user, const ct_proc *p, const struct ct_module *m, const char *path,
                   const char *build_id) {
  ct_chrome *c = user;
  if (!c->stacks) return;
  ct_stacks_set_exe(c->stacks, p->exe);
  ct_stacks_add_module(c->stacks, m, path, build_id);
}

void chr_on_pycode(void *user, const ct_proc *p, const struct ct_pycode *code, const char *file,
                   const char *qualname) {
  ct_chrome *c = user;
  (void)p;
  if (c->stacks) ct_stacks_add_pycode(c->stacks, code, file, qualname);
}

/* 1 when a call's GPU work gets a flow from it (Perfetto wants the flow id on the
 * call's slice, which may be written before its work is known): calls that promised a
 * GPU record (CT_API_TIMED; not when captured into a graph: CT_API_CAPTURED) with a
 * launch, copy, set, GEMM or graph detail, or of those categories (hooks.def; files
 * before format 1.2 have no graph detail), except library calls timed by their child
 * kernels (the flows start at the child launches) and allocations (format 1.5 ALLOC
 * detail: no GPU work of their own). */
static int call_has_flow(const ct_span *s) {
  if (!s->corr || (s->flags & (CT_API_INNER_TIMED | CT_API_CAPTURED)) ||
      !(s->flags & CT_API_TIMED) || s->detail == CT_DETAIL_ALLOC)
    return 0;
  switch (s->category) {
  case CT_CAT_LAUNCH: case CT_CAT_MEMCPY: case CT_CAT_MEMSET: case CT_CAT_GEMM:
    return 1;
  case CT_CAT_GRAPH: /* launches, not instantiations */
    return s->detail != CT_DETAIL_NONE || (s->name && strstr(s->name, "GraphLaunch"));
  default:
    return s->detail != CT_DETAIL_NONE;
  }
}

/* The ts of a poll slice (format 1.12: a spin of queries of one target, one record). A
 * thread polling several targets in turn has their records overlap (each spans its own
 * first poll to its answer: A from t0 to t10, B from t1 to t11), which would break the
 * nesting of its track in the viewers: a poll slice that begins before the end of the
 * thread's latest-ending poll slice written so far and ends after it begins at that end
 * (args keep the measured start, as for GPU slices). */
static uint64_t poll_start(ct_chrome *c, const ct_span *s) {
  track_state *ts = chr_track_get(c, c->pid, s->tid);
  if (!ts) return s->begin_ns;
  uint64_t start = s->begin_ns;
  if (start < ts->poll_end && s->end_ns > ts->poll_end) start = ts->poll_end;
  if (s->end_ns > ts->poll_end) ts->poll_end = s->end_ns;
  return start;
}

void chr_write_call(ct_chrome *c, const ct_span *s, const ct_inner_call *inner,
                    const chr_alloc_view *alloc) {
  const chr_encoder *e = c->enc;
  chr_ensure_cpu_thread(c, s->tid);
  int driver = (s->flags & CT_API_DRIVER) || s->layer == CT_LAYER_DRIVER;
  uint64_t start = s->polls ? poll_start(c, s) : s->begin_ns;
  chr_slice_open(c, driver ? "cuda_driver" : "cuda_runtime", s->name, c->pid, s->tid, start,
                 s->end_ns);
  if (start != s->begin_ns) e->arg_u64(c, "measured start shift (ns)", start - s->begin_ns);
  e->arg_u64(c, "correlation", s->corr);
  e->arg_u64(c, "device", s->device);
  e->arg_u64(c, "stream", s->stream);
  e->arg_u64(c, "result", s->result);
  e->arg_u64(c, "depth", s->depth);
  if (s->depth && s->parent) e->arg_u64(c, "parent", s->parent);
  if (s->stack) {
    e->arg_u64(c, "stack", s->stack);
    const char *site = call_site(c, s->stack);
    if (site) {
      e->arg_str(c, "call site", site);
      if (site[strlen(site) + 1]) e->arg_str(c, "python stack", site + strlen(site) + 1);
    }
  }
  if (s->kernel) e->arg_str(c, "kernel", ct_demangle_cached(&c->demangle, s->kernel));
  if (s->detail == CT_DETAIL_GEMM) chr_put_gemm_args(c, &s->d.gemm, s->name);
  if (s->detail == CT_DETAIL_ALLOC) chr_put_alloc_args(c, s, alloc);
  if (s->polls) e->arg_u64(c, "polls", s->polls); /* 1.12: a spin of queries, one slice */
  if (s->detail == CT_DETAIL_MEMOP && s->d.memop.kind == CT_MEMOP_STREAM_OPS) { /* format 1.9 */
    e->arg_u64(c, "operations", s->d.memop.count);
    e->arg_u64(c, "waits", s->d.memop.value);
    e->arg_u64(c, "bytes written", s->d.memop.bytes);
  }
  if (s->detail == CT_DETAIL_MEMOP &&
      (s->d.memop.kind == CT_MEMOP_EXT_WAIT || s->d.memop.kind == CT_MEMOP_EXT_SIGNAL)) { /* 1.10 */
    e->arg_u64(c, "semaphores", s->d.memop.count);
    e->arg_u64(c, "fence value", s->d.memop.value);
  }
  if (inner) {
    e->arg_u64(c, "kernels", inner->kernels);
    e->arg_u64(c, "kernels gpu_ns", inner->gpu_ns);
    e->arg_list(c, "kernel names", 0);
    for (unsigned i = 0; i < inner->nnames; i++)
      e->item_str(c, NULL, ct_demangle_cached(&c->demangle, inner->names[i]));
    e->list_close(c, 0);
  }
  if (call_has_flow(s)) e->flow_out(c, s->corr | ((uint64_t)c->file_index << 40));
  e->slice_close(c);
  if (alloc) chr_memory_instant(c, s, alloc);
}

/* A library call joined with its child kernels (ct_inner_join): its slice, now. */
void chr_on_inner_done(void *user, const ct_inner_call *call) {
  if (call->span) chr_order_call(user, call->span, call, NULL);
}

void chr_on_span(void *user, const ct_span *s) {
  ct_chrome *c = user;
  if (s->is_tracer) {
    uint64_t tid = chr_tracer_track(c, s->tid, s->name);
    char label[128];
    snprintf(label, sizeof label, "cutrace: %s", s->name);
    chr_slice_open(c, "tracer", label, c->pid, tid, s->begin_ns, s->end_ns);
    c->enc->arg_u64(c, "thread", s->tid);
    c->enc->arg_u64(c, "amount", s->amount);
    c->enc->slice_close(c);
    return;
  }
  ct_alloc_change alloc;
  chr_alloc_view view;
  int allocates = chr_memory_match(c, s, &alloc);
  if (allocates) chr_memory_counters(c, &alloc, s->end_ns, &view);
  if (c->inner && ct_inner_span(c->inner, s)) return; /* written with its kernels */
  chr_order_call(c, s, NULL, allocates ? &view : NULL);
}

void chr_on_range(void *user, const ct_proc *p, const struct ct_range *r, const char *name) {
  ct_chrome *c = user;
  (void)p;
  c->ranges++;
  if (c->range_extents && ct_range_extent_add(c->range_extents, r) < 0) {
    ct_map_free(c->range_extents); /* out of memory: the projection keeps every call */
    c->range_extents = NULL;
  }
  chr_order_range(c, r, name);
}

void chr_write_range(ct_chrome *c, const struct ct_range *r, const char *name) {
  chr_ensure_cpu_thread(c, r->tid);
  chr_slice_open(c, "user_annotation", name ? name : "(unnamed range)", c->pid, r->tid,
                 r->begin_ns, r->end_ns);
  c->enc->arg_u64(c, "depth", r->depth);
  c->enc->arg_u64(c, "domain", r->domain);
  c->enc->slice_close(c);
}


/* A range's projection onto the GPU: per stream, one gpu_user_annotation slice from
 * the earliest start to the latest end of the work launched inside it (Kineto's). */
void chr_on_range_gpu(void *user, const ct_range_span *r) {
  ct_chrome *c = user;
  for (unsigned i = 0; i < r->nstreams; i++) {
    const struct ct_range_stream *rs = &r->streams[i];
    chr_ensure_gpu_track(c, rs->device, rs->stream);
    const chr_encoder *e = c->enc;
    const char *name = r->name ? r->name : "(unnamed range)";
    e->gpu_range_open(c, name, r->name ? r->name_len : strlen(name), chr_gpu_pid(c, rs->device),
                      chr_stream_tid(c, rs->stream), r->depth, rs->start_ns, rs->end_ns);
    e->arg_u64(c, "thread", r->tid);
    e->arg_u64(c, "depth", r->depth);
    e->arg_u64(c, "kernels", r->kernels);
    e->arg_u64(c, "activities", r->activities);
    e->arg_u64(c, "gpu_ns", r->gpu_ns);
    e->arg_time(c, "range begin", r->begin_ns);
    e->slice_close(c);
  }
}

