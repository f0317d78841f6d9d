/*
 * GPU idle-time analysis (gaps.h). Definitions of the causes and their precedence:
 * docs/gaps.md.
 *
 *
 * This file: the public API, the model's callbacks, and moving a file's results into
 * the analysis. The rest: gaps_internal.h lists the files and what each holds.
 */
#include "gaps_internal.h"
#include "dump_csv_internal.h"
#include "stacks.h"
#include "stats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cause_names[CT_GAP_NCAUSES] = {
    "host_wait", "launch_overhead", "sync", "alloc", "other_stream", "tracer", "other",
    "external_wait"};

const char *ct_gap_cause_name(enum ct_gap_cause c) {
  return (unsigned)c < CT_GAP_NCAUSES ? cause_names[c] : "other";
}

void ct_gaps_default_options(ct_gaps_options *o) {
  memset(o, 0, sizeof *o);
  o->launch_threshold_ns = 10000;
  o->top = 10;
  o->launch_bound_min = 20;
  o->repeat_min = 4;
  o->sync_work_ns = 50000;
  o->graph_min = 10;
}

/* ---- model callbacks ------------------------------------------------------------------ */

static void sweep(fstate *f) {
  for (unsigned i = 0; i < f->ndevs; i++) ct_gaps_finalize_dev(f, f->devs[i], 0);
}

static void note_time(fstate *f, uint64_t t) {
  if (t > f->wm) f->wm = t;
  if (++f->events % SWEEP_EVERY == 0) sweep(f);
}

/* Copies the model's process (whose strings die with the model) when it changed. */
static void keep_proc(fstate *f, const ct_proc *p) {
  if (!p || (f->have_proc && f->pcopy.ndevices == p->ndevices)) return;
  f->pcopy = *p;
  f->have_proc = 1;
  f->pcopy.path = ct_gaps_intern(f->g, p->path);
  f->pcopy.host = ct_gaps_intern(f->g, p->host);
  f->pcopy.exe = ct_gaps_intern(f->g, p->exe);
  f->pcopy.cmdline = ct_gaps_intern(f->g, p->cmdline);
  for (unsigned i = 0; i < p->ndevices && i < 16; i++)
    f->pcopy.device_names[i] = ct_gaps_intern(f->g, p->device_names[i]);
}

static void on_process(void *user, const ct_proc *p) {
  fstate *f = user;
  f->have_proc = 0;
  keep_proc(f, p);
  if (f->stacks) ct_stacks_set_exe(f->stacks, p->exe);
  ct_gaps_proc *gp = &f->g->procs[f->proc];
  free(gp->host);
  free(gp->cmdline);
  gp->host = strdup(p->host ? p->host : "");
  gp->cmdline = strdup(p->cmdline ? p->cmdline : "");
  gp->pid = p->rec.pid;
  gp->job = p->job;
  gp->start_ns = p->rec.start_ns;
  gp->realtime_ns = p->rec.realtime_ns;
}

/*
 * A kernel (or a library call or graph timed as one) for the communication / compute
 * unions. Until the first communication kernel of the device only the last
 * RECENT_KERNELS kernels are kept (most traces have none: the unions would cost a
 * third of the analysis); they are replayed into the unions when it comes, so that
 * the kernels it overlapped count. A communication kernel is delivered when it ends,
 * after the kernels it overlapped, which may be many more (a 3 s all-reduce): so the
 * unions start as soon as a call launching one is seen on the device (comm_soon).
 */
static void on_kernel(fstate *f, devstate *d, const ct_activity *a, const opinfo *op,
                      unsigned cls) {
  int comm = (cls & NAME_COMM) != 0;
  if (!d->has_comm && !comm && !(d->device < 64 && (f->comm_soon >> d->device & 1))) {
    unsigned k = ring_next_slot(&d->kr_head, &d->kr_n, RECENT_KERNELS);
    d->kr[k].start = a->start_ns;
    d->kr[k].end = a->end_ns;
    return;
  }
  if (!d->has_comm) {
    d->has_comm = 1;
    for (unsigned i = 0; i < d->kr_n; i++) {
      unsigned k = (d->kr_head + i) % RECENT_KERNELS;
      ct_gaps_tracker_add(f, &d->ov[OV_COMPUTE], d->kr[k].start, d->kr[k].end, op);
      ct_gaps_tracker_add(f, &d->ov[OV_KERNELS], d->kr[k].start, d->kr[k].end, op);
    }
  }
  ct_gaps_tracker_add(f, &d->ov[comm ? OV_COMM : OV_COMPUTE], a->start_ns, a->end_ns, op);
  ct_gaps_tracker_add(f, &d->ov[OV_KERNELS], a->start_ns, a->end_ns, op);
}

static void on_activity(void *user, const ct_activity *a) {
  fstate *f = user;
  keep_proc(f, a->proc);
  if (a->corr && f->launches_n) ct_gaps_launch_timed(f, a->corr);
  if (a->end_ns < a->start_ns) return;
  devstate *d = ct_gaps_get_dev(f, a->device);
  if (!d) return;
  if (!*d->name)
    for (unsigned i = 0; i < f->pcopy.ndevices && i < 16; i++)
      if (f->pcopy.devices[i].device == a->device && f->pcopy.device_names[i])
        d->name = f->pcopy.device_names[i];
  uint64_t dur = a->end_ns - a->start_ns;
  if (dur > d->maxdur) d->maxdur = dur;
  unsigned cls = 0;
  opinfo op = {a->stream, a->type, a->tid, a->call_begin_ns, a->call_end_ns, ct_gaps_keep(f, a->api, NULL),
               ct_gaps_keep(f, a->name, &cls), a->has_call, a->corr, a->call_depth, a->call_parent,
               a->call_stack, 0, NULL, 0};
  op.wait_from = ct_gaps_graphs_on_activity(f, a, op.name, &op.wait_after);
  uint64_t call = a->has_call && a->call_end_ns > a->call_begin_ns ? a->call_end_ns - a->call_begin_ns : 0;
  op.short_kernel = (a->type == CT_GPU_KERNEL || a->type == CT_GPU_GEMM) && a->has_call &&
                    dur < call + call / 4; /* as ct_gaps_findings_on_activity's runs */
  ct_gaps_tracker_add(f, &d->t, a->start_ns, a->end_ns, &op);
  if (a->type != CT_GPU_MEMCPY && a->type != CT_GPU_MEMSET) on_kernel(f, d, a, &op, cls);
  tracker *st = ct_gaps_get_stream(f, d, a->stream);
  if (st) ct_gaps_tracker_add(f, st, a->start_ns, a->end_ns, &op);
  /* kept ordered by end (other_stream_ended_near searches it): activities delivered late
   * (after the reader's window) come in file order, not end order */
  unsigned k = ring_next_slot(&d->ends_head, &d->ends_n, RECENT_ENDS);
  for (unsigned i = d->ends_n - 1; i > 0; i--) {
    unsigned prev = (d->ends_head + i - 1) % RECENT_ENDS;
    if (d->ends[prev].end <= a->end_ns) break;
    d->ends[k] = d->ends[prev];
    k = prev;
  }
  d->ends[k].end = a->end_ns;
  d->ends[k].stream = a->stream;
  ct_gaps_findings_on_activity(f, d, a);
  if (a->end_ns > f->wm) f->wm = a->end_ns;
  uint64_t w = ct_gaps_window(d), h = ct_gaps_launch_horizon(f, d, f->wm > w ? f->wm - w : 0);
  ct_gaps_tracker_finalize(f, &d->t, h);
  if (d->has_comm)
    for (int k = 0; k < OV_N; k++) ct_gaps_tracker_finalize(f, &d->ov[k], h);
  if (d->psync_n) ct_gaps_judge_syncs(f, d, h);
  if (st) ct_gaps_tracker_finalize(f, st, h);
  note_time(f, a->end_ns);
}

/* A call's GPU record that the model does not deliver (--device, --stream, --kernel,
 * --from/--to left it out): the call waits for it no longer (gaps_launches.c). */
static void on_withheld(void *user, const ct_proc *p, uint64_t corr, uint64_t device,
                        uint64_t stream) {
  (void)p, (void)device, (void)stream;
  fstate *f = user;
  if (f->launches_n) ct_gaps_launch_timed(f, corr);
}

/* A DROP record: the file lost records, so a call's GPU record may never come. */
static void on_drop(void *user, const ct_proc *p, const struct ct_drop *d) {
  (void)p, (void)d;
  ((fstate *)user)->lossy = 1;
}

/* A THREAD record: the thread's name (the tracer's threads are "cutrace-..."). */
static void on_thread(void *user, const ct_proc *p, const struct ct_thread *t, const char *name) {
  fstate *f = user;
  if (!name || !*name) return;
  thstate *th = ct_gaps_get_thread(f, t->tid);
  if (th) th->name = ct_gaps_intern(f->g, name);
}

/* Whether a span is a batch of stream memory operations known to hold no wait: its
 * MEMOP record (format 1.9) counts none. A batch without one (an older file) is a wait. */
static int batch_without_wait(const ct_span *s) {
  return s->detail == CT_DETAIL_MEMOP && s->d.memop.kind == CT_MEMOP_STREAM_OPS && !s->d.memop.value;
}

/* What an outermost call does to its stream (STREAM_ROLE_*): a batch of writes (or
 * flushes) only is none, as a single cuStreamWriteValue32 is. */
static uint8_t stream_role(const ct_span *s, unsigned cls) {
  if (s->is_tracer) return STREAM_ROLE_NONE;
  if ((cls & NAME_EXT_WAIT) || (s->detail == CT_DETAIL_MEMOP && s->d.memop.kind == CT_MEMOP_EXT_WAIT))
    return s->result ? STREAM_ROLE_NONE : STREAM_ROLE_EXT_WAIT; /* a failed wait queued nothing */
  if ((cls & NAME_VALUE_WAIT) && !batch_without_wait(s)) return STREAM_ROLE_VALUE_WAIT;
  switch (s->category) {
  case CT_CAT_LAUNCH: case CT_CAT_MEMCPY: case CT_CAT_MEMSET: case CT_CAT_GEMM: case CT_CAT_GRAPH:
    return STREAM_ROLE_WORK;
  default:
    return STREAM_ROLE_NONE;
  }
}

static void on_span(void *user, const ct_span *s) {
  fstate *f = user;
  keep_proc(f, s->proc);
  if (f->rows) ct_gaps_rows_on_span(f, s);
  if (s->gpu_pending) ct_gaps_launch_called(f, s);
  if (s->is_tracer && !f->lossy && !strcmp(s->name, "gpu_lost")) f->lossy = 1;
  if (s->kernel && s->device < 64 && !(f->comm_soon >> s->device & 1)) {
    unsigned kc;
    ct_gaps_keep(f, s->kernel, &kc);
    if (kc & NAME_COMM) f->comm_soon |= 1ull << s->device; /* its device's unions start */
  }
  if (s->is_tracer || s->depth == 0) {
    thstate *th = ct_gaps_get_thread(f, s->tid);
    unsigned cls;
    const char *name = ct_gaps_keep(f, s->name, &cls);
    if (th) {
      span_ring_entry e = {s->begin_ns, s->end_ns, s->corr, s->stack, name, (uint8_t)s->is_tracer,
                           (uint8_t)(!s->is_tracer && (cls & NAME_LAUNCH)),
                           (uint8_t)(!s->is_tracer && ct_gaps_is_blocking(s, cls)),
                           (uint8_t)(!s->is_tracer && (s->category == CT_CAT_ALLOC ||
                                                       s->category == CT_CAT_FREE)),
                           stream_role(s, cls), s->stream};
      ct_gaps_ring_push(&th->calls, &e);
      th->last_end = max_u64(th->last_end, s->end_ns);
      if (is_copy_call(&e)) th->copy_end = max_u64(th->copy_end, s->end_ns);
      if (s->is_tracer) th->tracer_spans++;
      else th->api_spans++;
    }
    if (!s->is_tracer && (cls & NAME_SYNCHRONIZE)) ct_gaps_findings_on_sync(f, s, name);
    if (!s->is_tracer && f->pending_parents) ct_gaps_ending_on_span(f, s, name);
    if (!s->is_tracer && ct_gaps_enders_waiting(f)) ct_gaps_enders_on_span(f, s, name);
  }
  note_time(f, s->end_ns);
}

/* An NVTX range, closed: for the ranges of the calls that ended gaps. */
static void on_range(void *user, const ct_proc *p, const struct ct_range *r, const char *name) {
  (void)p;
  fstate *f = user;
  ct_gaps_ending_on_range(f, r, name);
  if (f->rows) ct_gaps_rows_on_range(f, r, name);
}

/* A PAUSE record: the gaps that touch it are left out (unrecorded time). */
static void on_pause(void *user, const ct_proc *p, const struct ct_pause *rec, const char *why) {
  (void)p;
  fstate *f = user;
  unsigned cls;
  if (ct_pauses_add(&f->pauses, rec, ct_gaps_keep(f, why, &cls)) < 0) f->oom = 1;
}

/* STACK and MODULE records: the stacks of the calls that ended gaps, symbolised at the end. */
static void on_stack(void *user, const ct_proc *p, const struct ct_stack *node) {
  (void)p;
  fstate *f = user;
  if (f->stacks && ct_stacks_add_node(f->stacks, node) < 0) f->oom = 1;
}

static void on_module(void *user, const ct_proc *p, const struct ct_module *m, const char *path,
                      const char *build_id) {
  (void)p;
  fstate *f = user;
  if (f->stacks && ct_stacks_add_module(f->stacks, m, path, build_id) < 0) f->oom = 1;
}

static void on_pycode(void *user, const ct_proc *p, const struct ct_pycode *code, const char *file,
                      const char *qualname) {
  (void)p;
  fstate *f = user;
  if (f->stacks && ct_stacks_add_pycode(f->stacks, code, file, qualname) < 0) f->oom = 1;
}

/* ---- results ---------------------------------------------------------------------------- */

/* The communication / compute overlap of d (all zero when no communication kernel ran). */
static ct_gaps_comm device_comm(const devstate *d) {
  if (!d->has_comm) return (ct_gaps_comm){0};
  uint64_t comm = d->ov[OV_COMM].u.busy_ns, compute = d->ov[OV_COMPUTE].u.busy_ns;
  uint64_t both = d->ov[OV_KERNELS].u.busy_ns;
  uint64_t overlap = comm + compute > both ? comm + compute - both : 0;
  return (ct_gaps_comm){comm, overlap, comm > overlap ? comm - overlap : 0,
                        d->ov[OV_COMM].u.activities};
}

/* Finalises everything of a file and moves its results into g. */
static void finish_file(fstate *f) {
  struct ct_gaps *g = f->g;
  for (unsigned i = 0; i < f->ndevs; i++) ct_gaps_finalize_dev(f, f->devs[i], UINT64_MAX);
  ct_gaps_rows_end(f); /* the callback's gaps still held for their range */
  ct_gaps_name_threads(f);
  ct_gaps_ending_finish(f);
  /* + 1: realloc to 0 bytes (a first file without devices) would free the array */
  ct_gaps_device *nd = realloc(g->devs, (g->ndevs + f->ndevs + 1) * sizeof *nd);
  if (nd) {
    g->devs = nd;
    for (unsigned i = 0; i < f->ndevs; i++) {
      g->devs[g->ndevs++] = (ct_gaps_device){
          f->proc, f->devs[i]->device, f->devs[i]->name, f->devs[i]->t.u,
          device_comm(f->devs[i]), 0, {0}};
      memcpy(g->devs[g->ndevs - 1].meet, f->devs[i]->meet, sizeof f->devs[i]->meet);
    }
  }
  ct_gaps_stream *ns = realloc(g->streams, (g->nstreams + f->nstreams + 1) * sizeof *ns);
  if (ns) {
    g->streams = ns;
    for (unsigned i = 0; i < f->nstreams; i++)
      g->streams[g->nstreams++] = (ct_gaps_stream){f->proc, f->streams[i]->dev->device,
                                                   f->streams[i]->stream, f->streams[i]->u};
  }
  for (unsigned i = 0; i < f->ndevs; i++) ct_gaps_device_findings(f, f->devs[i]);
  ct_gaps_graph_findings(f);
  ct_gaps_enders_finish(f); /* after the other findings: ct_gaps_sort_enders orders them */
  for (unsigned i = 0; i < f->ndevs; i++) {
    free(f->devs[i]->t.q);
    for (int k = 0; k < OV_N; k++) free(f->devs[i]->ov[k].q);
    free(f->devs[i]);
  }
  for (unsigned i = 0; i < f->nstreams; i++) {
    free(f->streams[i]->q);
    free(f->streams[i]);
  }
  for (unsigned i = 0; i < f->nthreads; i++) {
    free(f->threads[i]->calls.a);
    free(f->threads[i]->ranges);
    free(f->threads[i]);
  }
  ct_stacks_free(f->stacks);
  g->waits_cut += f->waits_cut;
  free(f->launches);
  free(f->devs);
  free(f->streams);
  ct_map_free(f->stream_index);
  free(f->threads);
  free(f->names);
}

/* ---- public --------------------------------------------------------------------------------- */

ct_gaps *ct_gaps_new(const ct_gaps_options *o) {
  struct ct_gaps *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  if (o) g->o = *o;
  else ct_gaps_default_options(&g->o);
  if (g->o.top) {
    g->top = calloc(g->o.top, sizeof *g->top);
    g->top_s = calloc(g->o.top, sizeof *g->top_s);
    g->sorted = calloc(g->o.top, sizeof *g->sorted);
    g->sorted_s = calloc(g->o.top, sizeof *g->sorted_s);
    if (!g->top || !g->top_s || !g->sorted || !g->sorted_s) {
      ct_gaps_free(g);
      return NULL;
    }
  }
  return g;
}

void ct_gaps_set_callback(ct_gaps *g, void (*fn)(void *user, const ct_gap_info *gap), void *user) {
  g->fn = fn;
  g->user = user;
}

static const ct_model_ops file_ops = {.on_process = on_process, .on_span = on_span,
                                      .on_activity = on_activity, .on_thread = on_thread,
                                      .on_range = on_range, .on_stack = on_stack,
                                      .on_module = on_module, .on_pause = on_pause,
                                      .on_pycode = on_pycode, .on_withheld = on_withheld,
                                      .on_drop = on_drop};

/* ct_gaps_file_begin for a file read from read_path, shown as path. */
static ct_gaps_file *file_begin(ct_gaps *g, const char *path, const char *read_path,
                                const ct_model_ops **ops) {
  ct_gaps_proc *np = realloc(g->procs, (g->nprocs + 1) * sizeof *np);
  if (!np) return NULL;
  g->procs = np;
  fstate *f = calloc(1, sizeof *f);
  if (!f) return NULL;
  ct_gaps_proc *gp = &g->procs[g->nprocs];
  memset(gp, 0, sizeof *gp);
  gp->path = strdup(path);
  f->g = g;
  f->proc = g->nprocs++;
  /* only kept gaps show stacks, and the callback's with their call sites */
  f->stacks = g->o.top || (g->fn && g->row_context) ? ct_stacks_new() : NULL;
  if (g->fn && g->row_context) ct_gaps_rows_begin(f, read_path);
  *ops = &file_ops;
  return (ct_gaps_file *)f;
}

ct_gaps_file *ct_gaps_file_begin(ct_gaps *g, const char *path, const ct_model_ops **ops) {
  return file_begin(g, path, path, ops);
}

int ct_gaps_file_end(ct_gaps_file *gf, int rc, ct_model_stats *st) {
  fstate *f = (fstate *)gf;
  ct_gaps *g = f->g;
  ct_gaps_proc *gp = &g->procs[f->proc];
  gp->first_ns = st->first_ns;
  gp->pauses = f->pauses.n;
  gp->pause_why = f->pauses.n ? f->pauses.v[0].why : NULL;
  gp->paused_ns = ct_pauses_within(&f->pauses, st->first_ns, st->last_ns);
  if (!gp->host) gp->host = strdup("");
  if (!gp->cmdline) gp->cmdline = strdup("");
  finish_file(f);
  ct_pauses_free(&f->pauses);
  ct_gaps_sort_tops(g);
  g->unsorted = 1; /* sorted when asked for: once, not after every file */
  if (f->oom && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: the analysis is incomplete");
    rc = 1;
  }
  free(f);
  return rc;
}

int ct_gaps_add_file(ct_gaps *g, const char *path, ct_model_stats *st) {
  ct_model_stats local;
  if (!st) st = &local;
  /* rows with their ranges read a file twice: standard input is kept in a temporary file */
  char spooled[64];
  int spool_fd = -1;
  if (g->fn && g->row_context && !strcmp(path, "-") &&
      (spool_fd = csv_spool_stdin(spooled, sizeof spooled)) < 0) {
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message,
             "cannot keep standard input for its two passes (a temporary file): %s",
             strerror(errno));
    return -1;
  }
  const char *read_path = spool_fd >= 0 ? spooled : path;
  const ct_model_ops *ops;
  ct_gaps_file *gf = file_begin(g, path, read_path, &ops);
  if (!gf) {
    if (spool_fd >= 0) close(spool_fd);
    return -1;
  }
  int rc = ct_model_read(read_path, NULL, ops, gf, st);
  if (spool_fd >= 0) {
    close(spool_fd);
    csv_spool_message(st->message, spooled);
  }
  return ct_gaps_file_end(gf, rc, st);
}

const ct_gaps_proc *ct_gaps_procs(const ct_gaps *g, unsigned *n) {
  *n = g->nprocs;
  return g->procs;
}
const ct_gaps_device *ct_gaps_devices(const ct_gaps *g, unsigned *n) {
  ct_gaps_sort_enders((struct ct_gaps *)g); /* the devices' findings_ns */
  *n = g->ndevs;
  return g->devs;
}
const ct_gaps_stream *ct_gaps_streams(const ct_gaps *g, unsigned *n) {
  *n = g->nstreams;
  return g->streams;
}
/* The analysis is the caller's, not const: sorting it when asked for is no change to
 * what it holds. */
const ct_gaps_finding *ct_gaps_findings(const ct_gaps *g, unsigned *n) {
  ct_gaps_sort_enders((struct ct_gaps *)g);
  *n = g->nfinds;
  return g->finds;
}
const ct_gaps_ender *ct_gaps_enders(const ct_gaps *g, unsigned *n) {
  ct_gaps_sort_enders((struct ct_gaps *)g);
  *n = g->nenders;
  return g->enders;
}
const ct_gap_detail *ct_gaps_top(const ct_gaps *g, unsigned *n) {
  *n = g->ntop;
  return g->sorted;
}
const ct_gap_detail *ct_gaps_top_stream(const ct_gaps *g, unsigned *n) {
  *n = g->ntop_s;
  return g->sorted_s;
}
uint64_t ct_gaps_late(const ct_gaps *g) { return g->late; }
uint64_t ct_gaps_waits_cut(const ct_gaps *g) { return g->waits_cut; }

int ct_gaps_comm_straggler(const ct_gaps *g) {
  int lo = -1, hi = -1, n = 0;
  for (unsigned i = 0; i < g->ndevs; i++) {
    uint64_t c = g->devs[i].comm.comm_ns;
    if (!c) continue;
    n++;
    if (lo < 0 || c < g->devs[lo].comm.comm_ns) lo = (int)i;
    if (hi < 0 || c > g->devs[hi].comm.comm_ns) hi = (int)i;
  }
  if (n < 2) return -1;
  uint64_t min = g->devs[lo].comm.comm_ns, max = g->devs[hi].comm.comm_ns;
  return ct_gaps_comm_apart(min, max) ? lo : -1;
}

void ct_gaps_free(ct_gaps *g) {
  if (!g) return;
  for (unsigned i = 0; i < g->nprocs; i++) {
    free(g->procs[i].path);
    free(g->procs[i].host);
    free(g->procs[i].cmdline);
  }
  for (size_t i = 0; i < g->cappool; i++) free(g->pool[i]);
  for (size_t i = 0; i < g->nstacks; i++) free(g->stacks[i]);
  free(g->stacks);
  free(g->pool);
  free(g->procs);
  free(g->devs);
  free(g->streams);
  free(g->finds);
  free(g->enders);
  free(g->top);
  free(g->top_s);
  free(g->sorted);
  free(g->sorted_s);
  free(g);
}

int ct_gaps_each(const char *path, uint64_t min_ns, void (*fn)(void *user, const ct_gap_info *gap),
                 void *user, ct_model_stats *st) {
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  o.min_gap_ns = min_ns;
  o.top = 0;
  ct_gaps *g = ct_gaps_new(&o);
  if (!g) {
    if (st) snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  ct_gaps_set_callback(g, fn, user);
  int rc = ct_gaps_add_file(g, path, st);
  ct_gaps_free(g);
  return rc;
}
