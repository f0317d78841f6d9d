/*
 * The Chrome / Perfetto export's walk over the model (see chrome.h, docs/dump.md):
 * tracks, GPU work, gaps, pauses and the document, written through c->enc (JSON:
 * chrome_json.c, Perfetto protobuf: chrome_perfetto.c).
 *
 * Layout, after Kineto's (libkineto/src/output_json.cpp, facts only): GPU events on
 * pid = device, tid = stream; cat kernel / gpu_memcpy / gpu_memset for GPU work,
 * cuda_runtime / cuda_driver for calls, user_annotation for NVTX ranges; a flow
 * (cat ac2g, id = correlation) from each call to its GPU work.
 *
 * Several input files (options.files > 1): each file's GPUs are process rows of their
 * own, pid GPU_ROW_PID_BASE + file * 1000 + device, named after the file's rank or
 * pid and sorted right under its CPU process; flow ids of file k are shifted by
 * k << 40. A caller that does not say how many files come gets the older layout:
 * GPU rows shared by device index, file k > 0 shifting its stream track ids by
 * k * 100000.
 */
#include <stdlib.h>
#include <string.h>

#include "chrome_internal.h"
#include "output.h"
#ifdef CT_HAVE_GAPS_H
#include "gap_spill.h"
#include "gaps.h"
#include "model_tee.h"
#endif

/* ---- model callbacks ------------------------------------------------------------------ */

static void on_process(void *user, const ct_proc *p) {
  ct_chrome *c = user;
  c->pid = p->rec.pid;
  c->proc_job = p->job;
  char name[300];
  chr_note_job(c, &p->job);
  if (p->job.known & CT_JOB_RANK)
    snprintf(name, sizeof name, "rank %llu: %s (pid %llu)", (unsigned long long)p->job.rank,
             p->cmdline[0] ? p->cmdline : p->path, (unsigned long long)p->rec.pid);
  else
    snprintf(name, sizeof name, "%s (pid %llu)", p->cmdline[0] ? p->cmdline : p->path,
             (unsigned long long)p->rec.pid);
  c->enc->process(c, c->pid, name, 0, chr_cpu_row_sort_index(c));
  if (!c->have_base && p->rec.realtime_ns && p->rec.start_ns) {
    c->base_ns = p->rec.realtime_ns - p->rec.start_ns;
    c->have_base = 1;
  }
  c->proc_devices = 0;
  chr_note_devices(c, p);
}

static void on_thread(void *user, const ct_proc *p, const struct ct_thread *t, const char *name) {
  ct_chrome *c = user;
  (void)p;
  char buf[128];
  snprintf(buf, sizeof buf, "%s (%llu)", name && name[0] ? name : "thread",
           (unsigned long long)t->tid);
  chr_ensure_track(c, c->pid, t->tid, CHR_TRACK_THREAD, buf, 1);
}

static void on_stream(void *user, const ct_proc *p, const struct ct_stream *s) {
  (void)p;
  chr_ensure_gpu_track(user, s->device, s->stream);
}

static const char *mem_label(uint64_t m) {
  static const char *const n[] = {"Unknown", "Device", "Pinned", "Pageable", "Managed"};
  return m < 5 ? n[m] : "Unknown";
}

static void on_graph(void *user, const ct_proc *p, const struct ct_graph *g) {
  ct_chrome *c = user;
  (void)p;
  if (c->graphs) ct_graph_invs_graph(c->graphs, g);
}

static void on_graph_kernel(void *user, const ct_proc *p, const struct ct_graph_kernel *k,
                            const char *name) {
  ct_chrome *c = user;
  (void)p;
  if (c->graphs) ct_graph_invs_kernel(c->graphs, k, name, NULL);
}

/* The args of a graph launch: its exec and what it ran (the inventory of the version
 * it launched: format 1.13; the exec's latest before). */
static void put_graph_args(ct_chrome *c, const struct ct_graph_launch *l) {
  const chr_encoder *e = c->enc;
  e->arg_u64(c, "graph exec", l->exec);
  const ct_graph_inv *inv = ct_graph_invs_find(c->graphs, l->exec, l->version);
  if (!inv || !inv->known) {
    e->arg_str(c, "graph inventory", "not seen instantiated");
    return;
  }
  if (inv->g.version) e->arg_u64(c, "graph inventory version", inv->g.version);
  e->arg_u64(c, "graph nodes", inv->g.nodes);
  e->arg_u64(c, "graph kernels", inv->g.kernels);
  e->arg_u64(c, "graph memcpys", inv->g.memcpys);
  e->arg_u64(c, "graph memsets", inv->g.memsets);
  e->arg_u64(c, "graph other nodes", inv->g.others);
  if (inv->g.partial) e->arg_u64(c, "graph inventory partial", inv->g.partial);
  e->arg_list(c, "graph kernel names", 1);
  for (unsigned i = 0; i < inv->ntop; i++)
    e->item_u64(c, ct_demangle_cached(&c->demangle, inv->top[i].name),
                inv->top[i].count);
  e->list_close(c, 1);
}

/* A kernel's grid or block as a list of three. */
static void put_dim3(ct_chrome *c, const char *key, uint64_t x, uint64_t y, uint64_t z) {
  c->enc->arg_list(c, key, 0);
  c->enc->item_u64(c, NULL, x);
  c->enc->item_u64(c, NULL, y);
  c->enc->item_u64(c, NULL, z);
  c->enc->list_close(c, 0);
}

static void on_activity(void *user, const ct_activity *a) {
  ct_chrome *c = user;
  if (a->proc && a->proc->ndevices != c->proc_devices) chr_note_devices(c, a->proc);
  chr_ensure_gpu_track(c, a->device, a->stream);
  uint64_t tid = chr_stream_tid(c, a->stream), row = chr_gpu_pid(c, a->device);
  const char *cat = a->type == CT_GPU_MEMCPY ? "gpu_memcpy" : a->type == CT_GPU_MEMSET ? "gpu_memset" : "kernel";
  char name[160];
  const char *shown = a->name;
  if (a->detail == CT_DETAIL_MEMOP && a->type == CT_GPU_MEMSET) {
    snprintf(name, sizeof name, "Memset (%s)", mem_label(a->d.memop.dst_mem));
    shown = name;
  } else if (a->detail == CT_DETAIL_MEMOP) { /* "Memcpy KIND (SRC -> DST)", no printf */
    size_t at = 0;
    name[0] = 0;
    chr_append(name, sizeof name, &at, "Memcpy ");
    chr_append(name, sizeof name, &at, ct_memop_kind_name(a->d.memop.kind));
    chr_append(name, sizeof name, &at, " (");
    chr_append(name, sizeof name, &at, mem_label(a->d.memop.src_mem));
    chr_append(name, sizeof name, &at, " -> ");
    chr_append(name, sizeof name, &at, mem_label(a->d.memop.dst_mem));
    chr_append(name, sizeof name, &at, ")");
    shown = name;
  } else {
    shown = ct_demangle_cached(&c->demangle, a->name);
  }
  uint64_t dur = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  const char *launched_by = c->inner ? ct_inner_activity(c->inner, a) : NULL;
  /* Work on one stream runs in order; a start a few ns before the previous slice's end
   * is timer error, and a partial overlap would break the track's nesting in the
   * viewers: start the slice at the previous end (args keep the measured start). */
  uint64_t start = a->start_ns;
  track_state *ts = chr_track_get(c, row, tid);
  if (ts && ts->last_end && start > ts->last_start && start < ts->last_end &&
      a->end_ns >= ts->last_end)
    start = ts->last_end;
  if (ts) {
    ts->last_start = start;
    ts->last_end = a->end_ns;
  }
  const chr_encoder *e = c->enc;
  chr_slice_open(c, cat, shown, row, tid, start, a->end_ns);
  if (start != a->start_ns) e->arg_u64(c, "measured start shift (ns)", start - a->start_ns);
  e->arg_u64(c, "correlation", a->corr);
  e->arg_u64(c, "device", a->device);
  e->arg_u64(c, "stream", a->stream);
  if (a->api) e->arg_str(c, "api", a->api);
  if (a->call_depth && a->call_parent) {
    e->arg_u64(c, "parent correlation", a->call_parent);
    if (launched_by) e->arg_str(c, "launched by", launched_by);
  }
  if (a->detail == CT_DETAIL_LAUNCH) {
    const struct ct_launch *l = &a->d.launch;
    put_dim3(c, "grid", l->grid_x, l->grid_y, l->grid_z);
    put_dim3(c, "block", l->block_x, l->block_y, l->block_z);
    if (!chr_put_kernel_attr_args(c, a)) e->arg_u64(c, "shared memory", l->shmem);
  } else if (a->detail == CT_DETAIL_MEMOP) {
    e->arg_u64(c, "bytes", a->d.memop.bytes);
    e->arg_f3(c, "memory bandwidth (GB/s)", dur ? (double)a->d.memop.bytes / dur : 0.0);
    e->arg_u64(c, "async", a->d.memop.async);
  } else if (a->detail == CT_DETAIL_GEMM) {
    chr_put_gemm_args(c, &a->d.gemm, a->api ? a->api : a->name);
  } else if (a->detail == CT_DETAIL_GRAPH) {
    put_graph_args(c, &a->d.graph);
  }
  int flow = a->has_call && a->corr;
  uint64_t id = a->corr | ((uint64_t)c->file_index << 40);
  if (flow) e->flow_in(c, id);
  e->slice_close(c);
  chr_queue_activity(c, a);
  if (!flow) return;
  chr_ensure_cpu_thread(c, a->tid);
  /* the f end at the slice's start, so that the flow binds to it */
  e->flow(c, id, c->pid, a->tid, a->call_begin_ns, row, tid, start);
}

#ifdef CT_HAVE_GAPS_H
static void on_gap(void *user, const ct_gap_info *g) {
  ct_chrome *c = user;
  /* one idle track per process and device, and per process and stream */
  uint64_t tid = g->stream == UINT64_MAX ? GAP_DEVICE_TID + (chr_multi(c) ? 0 : c->file_index)
                                         : GAP_STREAM_TID + chr_stream_tid(c, g->stream);
  uint64_t row = chr_gpu_pid(c, g->device);
  char label[192], dur[32], owner[48];
  if (!chr_track_named(c, row, tid)) {
    chr_shared_row_owner(c, owner, sizeof owner);
    if (g->stream == UINT64_MAX) snprintf(label, sizeof label, "GPU idle%s", owner);
    else snprintf(label, sizeof label, "stream %llu idle%s", (unsigned long long)g->stream, owner);
    chr_ensure_track(c, row, tid, CHR_TRACK_GPU, label, 0);
  }
  size_t at = 0; /* "GPU idle: CAUSE DURATION[ (inside CALL)]", no printf */
  label[0] = 0;
  chr_append(label, sizeof label, &at, "GPU idle: ");
  chr_append(label, sizeof label, &at, g->cause);
  chr_append(label, sizeof label, &at, " ");
  chr_append(label, sizeof label, &at, ct_fmt_duration(g->end_ns - g->start_ns, dur, sizeof dur));
  if (g->inside_call) { /* a host_wait gap spent inside one call (docs/gaps.md, inside_call) */
    chr_append(label, sizeof label, &at, " (inside ");
    chr_append(label, sizeof label, &at, g->inside_call);
    chr_append(label, sizeof label, &at, ")");
  }
  chr_slice_open(c, "gap", label, row, tid, g->start_ns, g->end_ns);
  c->enc->arg_str(c, "cause", g->cause ? g->cause : "");
  c->enc->arg_i64(c, "stream", g->stream == UINT64_MAX ? -1ll : (long long)g->stream);
  c->enc->arg_str(c, "ended_by", g->ended_by);
  if (g->inside_call) {
    c->enc->arg_str(c, "inside_call", g->inside_call);
    c->enc->arg_i64(c, "inside_ns", (long long)g->inside_ns);
  }
  c->enc->slice_close(c);
}
#endif

/* A pause of the tracer [begin, end): one slice on the process's "not recorded" track. */
static void put_pause(ct_chrome *c, uint64_t begin, uint64_t end, const char *why) {
  chr_ensure_track(c, c->pid, PAUSE_TID, CHR_TRACK_PROCESS, "cutrace: not recorded (paused)", 0);
  char label[96];
  snprintf(label, sizeof label, "not recorded (%s)", why && *why ? why : "paused");
  chr_slice_open(c, "cutrace", label, c->pid, PAUSE_TID, begin, end);
  c->enc->arg_str(c, "why", why ? why : "");
  c->enc->slice_close(c);
}

/* A PAUSE record: written when complete; one still open at the end of the file ends
 * with the file's last event (ct_chrome_add_file). */
static void on_pause(void *user, const ct_proc *p, const struct ct_pause *r, const char *why) {
  (void)p;
  ct_chrome *c = user;
  if (!r->end_ns) {
    c->open_pause = r->begin_ns;
    snprintf(c->open_pause_why, sizeof c->open_pause_why, "%s", why); /* why dies with the reader */
    return;
  }
  if (c->open_pause == r->begin_ns) c->open_pause = 0;
  put_pause(c, r->begin_ns, r->end_ns, why);
}

/* ---- the document ---------------------------------------------------------------------- */

ct_chrome *ct_chrome_begin(FILE *out, const ct_chrome_options *opts) {
  ct_chrome *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->f = out;
  if (opts) c->opt = *opts;
  c->enc = c->opt.perfetto ? &chr_perfetto_encoder : &chr_json_encoder;
  c->tracks = ct_map_new(sizeof(track_state));
  c->tracer_tracks = ct_map_new(sizeof(uint64_t));
  if (!c->tracks || !c->tracer_tracks) {
    ct_map_free(c->tracks);
    ct_map_free(c->tracer_tracks);
    free(c);
    return NULL;
  }
  if (c->enc->begin(c) < 0) {
    ct_map_free(c->tracks);
    ct_map_free(c->tracer_tracks);
    free(c);
    return NULL;
  }
  return c;
}

#ifdef CT_HAVE_GAPS_H
/* Reads path once for both the export (ops) and the gaps analysis (as ct_gaps_each
 * would run it), keeping the gaps for after the file's other events. Returns the kept
 * gaps with *rc and *st those of ct_model_read, or NULL, having read nothing, when
 * out of memory. */
static ct_gap_spill *read_with_gaps(ct_chrome *c, const char *path, const ct_model_ops *ops,
                                    ct_model_stats *st, int *rc) {
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  o.min_gap_ns = c->opt.gap_min_ns;
  o.top = 0;
  ct_gap_spill *spill = ct_gap_spill_new();
  ct_gaps *g = spill ? ct_gaps_new(&o) : NULL;
  const ct_model_ops *gops = NULL;
  ct_gaps_file *gf = g ? ct_gaps_file_begin(g, path, &gops) : NULL;
  if (!gf) {
    ct_gaps_free(g);
    ct_gap_spill_free(spill);
    return NULL;
  }
  ct_gaps_set_callback(g, ct_gap_spill_add, spill);
  ct_model_tee tee = {0};
  ct_model_tee_add(&tee, ops, c);
  ct_model_tee_add(&tee, gops, gf);
  *rc = ct_model_tee_read(&tee, path, NULL, st);
  ct_model_stats gst = *st; /* the analysis's verdict is not the export's */
  ct_gaps_file_end(gf, *rc, &gst);
  ct_gaps_free(g);
  return spill;
}
#endif

int ct_chrome_add_file(ct_chrome *c, const char *path, ct_model_stats *st) {
  static const ct_model_ops ops = {.on_process = on_process, .on_span = chr_on_span,
                                   .on_activity = on_activity, .on_stream = on_stream,
                                   .on_thread = on_thread, .on_range = chr_on_range,
                                   .on_stack = chr_on_stack, .on_module = chr_on_module,
                                   .on_pycode = chr_on_pycode,
                                   .on_graph = on_graph, .on_graph_kernel = on_graph_kernel,
                                   .on_pause = on_pause, .on_kernel_attr = chr_on_kernel_attr,
                                   .on_occupancy = chr_on_occupancy};
  c->pid = 0;
  c->graphs = ct_map_new(sizeof(ct_graph_inv)); /* by struct ct_graph_inv_key */
  c->ranges = 0;
  c->range_extents = ct_map_new(sizeof(ct_range_extent));
  c->stacks = ct_stacks_new();
  c->call_sites = ct_map_new(sizeof(char *));
  c->inner = ct_inner_new(chr_on_inner_done, c);
  if (!c->inner) {
    chr_drop_stacks(c);
    ct_map_free(c->graphs);
    c->graphs = NULL;
    ct_map_free(c->range_extents);
    c->range_extents = NULL;
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  c->open_pause = 0;
  int rc;
#ifdef CT_HAVE_GAPS_H
  ct_gap_spill *spill = c->opt.gaps ? read_with_gaps(c, path, &ops, st, &rc) : NULL;
  if (!spill)
#endif
    rc = ct_model_read(path, NULL, &ops, c, st);
  if (c->open_pause) { /* still paused at the end: the pause lasts to the last event */
    put_pause(c, c->open_pause, st->last_ns > c->open_pause ? st->last_ns : c->open_pause,
              c->open_pause_why);
    c->open_pause = 0;
  }
  if (ct_inner_finish(c->inner) < 0 && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: some GEMM kernels were not joined");
    rc = 1;
  }
  ct_inner_free(c->inner);
  c->inner = NULL;
  chr_order_finish(c);
  c->enc->file_end(c); /* after the file's calls and GPU work, before its gaps */
  chr_queues_finish(c);
  chr_memory_finish(c);
  chr_kattr_finish(c);
  chr_drop_stacks(c);
  ct_map_free(c->graphs);
  c->graphs = NULL;
  if (rc >= 0 && c->ranges) { /* a second pass, only for files with NVTX ranges */
    ct_model_stats rst;
    ct_range_each_within(path, chr_on_range_gpu, c, &rst, NULL, NULL, c->range_extents);
  }
  ct_map_free(c->range_extents);
  c->range_extents = NULL;
#ifdef CT_HAVE_GAPS_H
  if (rc >= 0 && c->opt.gaps && (!spill || ct_gap_spill_replay(spill, NULL, on_gap, c) < 0)) {
    ct_model_stats gst; /* the gaps could not be kept: find them again */
    ct_gaps_each(path, c->opt.gap_min_ns, on_gap, c, &gst);
  }
  ct_gap_spill_free(spill);
#endif
  ct_map_forget_pointers(c->tracks);
  ct_map_free(c->tracer_tracks); /* tracer tracks are per process */
  c->tracer_tracks = ct_map_new(sizeof(uint64_t));
  if (rc >= 0) c->file_index++;
  return rc;
}

int ct_chrome_end(ct_chrome *c) {
  int rc = c->enc->end(c);
  free(c->out);
  ct_demangle_cache_free(&c->demangle);
  ct_map_free(c->tracks);
  ct_map_free(c->tracer_tracks);
  free(c);
  return rc;
}
