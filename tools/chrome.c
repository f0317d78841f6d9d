/*
 * Chrome Trace Event JSON export (see chrome.h and docs/dump.md).
 *
 * Conventions, after Kineto's output (libkineto/src/output_json.cpp, facts only):
 * complete events ph "X" with ts/dur in microseconds and 3 decimals; GPU events on
 * pid = device, tid = stream; cat kernel / gpu_memcpy / gpu_memset for GPU work,
 * cuda_runtime / cuda_driver for calls, user_annotation for NVTX ranges; flows
 * ph "s" (on the call) and ph "f" with bp "e" (on the GPU work), cat "ac2g", id =
 * correlation; process_name / thread_name metadata; top-level deviceProperties,
 * distributedInfo, displayTimeUnit, baseTimeNanoseconds.
 *
 * Several input files: the first keeps the plain ids; file k > 0 shifts its stream
 * track ids by k * 100000 and its flow ids by k << 40 so that processes sharing a
 * device index do not mix.
 */
#include "chrome.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "report.h"
#include "stacks.h"
#include "stats.h"
#ifdef CT_HAVE_GAPS_H
#include "gaps.h"
#endif

#define STREAM_TID_SHIFT 100000ull
#define TRACER_TID_BASE 1000000000ull  /* synthetic tracks of the tracer's own work */
#define GAP_DEVICE_TID 1500000000ull   /* the "GPU idle" track of a device */
#define GAP_STREAM_TID 1600000000ull   /* + stream: the idle track of a stream */

typedef struct track_key {
  uint64_t pid, tid;
} track_key;

/* What the export keeps per track. */
typedef struct track_state {
  int named;                      /* its thread_name was written */
  uint64_t last_start, last_end;  /* GPU tracks: the slice written last */
} track_state;

struct ct_chrome {
  FILE *f;
  ct_chrome_options opt;
  int nevents;
  unsigned file_index;
  uint64_t pid;              /* the current file's process id */
  ct_map *tracks;            /* track_key -> int (named) */
  ct_map *tracer_tracks;     /* (tid, label) -> uint64_t synthetic tid */
  uint64_t next_tracer_tid;
  uint64_t base_ns;          /* wall clock - monotonic clock, from the first process */
  ct_inner_join *inner;      /* library calls held until their child kernels are known */
  ct_stacks *stacks;         /* the current file's call stacks (format 1.1) */
  ct_map *call_sites;        /* stack id -> its call site's label (char *), per file */
  int have_base;
  /* devices seen, for deviceProperties */
  struct ct_device devices[64];
  char device_names[64][96];
  unsigned ndevices;
  char demangled[4096];
};

/* ---- writing helpers --------------------------------------------------------------- */

/* Writes literal text (the hot path avoids printf: it dominated the export's time). */
static inline void put_lit(ct_chrome *c, const char *s) { fputs_unlocked(s, c->f); }

/* Writes v in decimal. */
static void put_u64(ct_chrome *c, uint64_t v) {
  char b[24];
  int i = sizeof b;
  do {
    b[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  fwrite_unlocked(b + i, 1, sizeof b - (size_t)i, c->f);
}

/* Writes lit (e.g. ",\"device\":") followed by v. */
static inline void put_kv(ct_chrome *c, const char *lit, uint64_t v) {
  put_lit(c, lit);
  put_u64(c, v);
}

static void next_event(ct_chrome *c) {
  fputs(c->nevents++ ? ",\n" : "\n", c->f);
}

static void put_string(ct_chrome *c, const char *s) {
  putc('"', c->f);
  if (s) ct_json_write_escaped(c->f, s, strlen(s));
  putc('"', c->f);
}

/* A time in ns as microseconds with 3 decimals (exact). */
static void put_us(ct_chrome *c, uint64_t ns) {
  put_u64(c, ns / 1000);
  char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
  fwrite_unlocked(frac, 1, 4, c->f);
}

static void meta(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, const char *name) {
  next_event(c);
  fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"name\":", what,
          (unsigned long long)pid, (unsigned long long)tid);
  put_string(c, name);
  fputs("}}", c->f);
}

static void sort_index(ct_chrome *c, const char *what, uint64_t pid, uint64_t tid, uint64_t idx) {
  next_event(c);
  fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,\"tid\":%llu,\"args\":{\"sort_index\":%llu}}",
          what, (unsigned long long)pid, (unsigned long long)tid, (unsigned long long)idx);
}

/* Opens an X event: everything up to and including "args":{ */
static void slice_open(ct_chrome *c, const char *cat, const char *name, uint64_t pid, uint64_t tid,
                       uint64_t begin, uint64_t end) {
  next_event(c);
  put_lit(c, "{\"ph\":\"X\",\"cat\":\"");
  put_lit(c, cat);
  put_lit(c, "\",\"name\":");
  put_string(c, name);
  put_kv(c, ",\"pid\":", pid);
  put_kv(c, ",\"tid\":", tid);
  put_lit(c, ",\"ts\":");
  put_us(c, begin);
  fputs(",\"dur\":", c->f);
  put_us(c, end > begin ? end - begin : 0);
  fputs(",\"args\":{", c->f);
}

/* ---- tracks -------------------------------------------------------------------------- */

/* Names a track the first time it is used (or again when a better name arrives). */
static void ensure_track(ct_chrome *c, uint64_t pid, uint64_t tid, const char *name, int force) {
  track_key k = {pid, tid};
  int created = 0;
  track_state *ts = ct_map_get(c->tracks, &k, sizeof k, &created);
  if (ts && ts->named && !force) return;
  if (ts) ts->named = 1;
  meta(c, "thread_name", pid, tid, name);
  sort_index(c, "thread_sort_index", pid, tid, tid);
}

static void ensure_cpu_thread(ct_chrome *c, uint64_t tid) {
  char name[64];
  snprintf(name, sizeof name, "thread %llu", (unsigned long long)tid);
  ensure_track(c, c->pid, tid, name, 0);
}

static uint64_t stream_tid(const ct_chrome *c, uint64_t stream) {
  return stream + c->file_index * STREAM_TID_SHIFT;
}

static void ensure_gpu_track(ct_chrome *c, uint64_t device, uint64_t stream) {
  uint64_t tid = stream_tid(c, stream);
  track_key k = {device, tid};
  const track_state *ts = ct_map_get(c->tracks, &k, sizeof k, NULL);
  if (ts && ts->named) return;
  /* the device's process track, once */
  track_key dk = {device, UINT64_MAX};
  int created = 0;
  ct_map_get(c->tracks, &dk, sizeof dk, &created);
  if (created) {
    char name[64];
    snprintf(name, sizeof name, "GPU %llu", (unsigned long long)device);
    meta(c, "process_name", device, 0, name);
    sort_index(c, "process_sort_index", device, 0, 5000000 + device);
  }
  char name[96];
  if (c->file_index)
    snprintf(name, sizeof name, "stream %llu (pid %llu)", (unsigned long long)stream,
             (unsigned long long)c->pid);
  else
    snprintf(name, sizeof name, "stream %llu", (unsigned long long)stream);
  ensure_track(c, device, tid, name, 0);
}

/* The synthetic track of the tracer's work labelled what on thread tid. */
static uint64_t tracer_track(ct_chrome *c, uint64_t tid, const char *what) {
  unsigned char key[8 + 64];
  size_t n = strlen(what) < 64 ? strlen(what) : 64;
  memcpy(key, &tid, 8);
  memcpy(key + 8, what, n);
  int created = 0;
  uint64_t *t = ct_map_get(c->tracer_tracks, key, 8 + n, &created);
  if (!t) return TRACER_TID_BASE;
  if (created) {
    *t = TRACER_TID_BASE + c->next_tracer_tid++;
    char name[128];
    snprintf(name, sizeof name, "cutrace: %.64s (thread %llu)", what, (unsigned long long)tid);
    ensure_track(c, c->pid, *t, name, 0);
  }
  return *t;
}

/* ---- model callbacks ------------------------------------------------------------------ */

static void on_process(void *user, const ct_proc *p) {
  ct_chrome *c = user;
  c->pid = p->rec.pid;
  char name[300];
  snprintf(name, sizeof name, "%s (pid %llu)", p->cmdline[0] ? p->cmdline : p->path,
           (unsigned long long)p->rec.pid);
  meta(c, "process_name", c->pid, 0, name);
  sort_index(c, "process_sort_index", c->pid, 0, c->pid);
  if (!c->have_base && p->rec.realtime_ns && p->rec.start_ns) {
    c->base_ns = p->rec.realtime_ns - p->rec.start_ns;
    c->have_base = 1;
  }
  for (unsigned i = 0; i < p->ndevices && c->ndevices < 64; i++) {
    int seen = 0;
    for (unsigned j = 0; j < c->ndevices; j++) seen |= c->devices[j].device == p->devices[i].device;
    if (seen) continue;
    c->devices[c->ndevices] = p->devices[i];
    snprintf(c->device_names[c->ndevices], sizeof c->device_names[0], "%s", p->device_names[i]);
    c->ndevices++;
  }
}

static void on_thread(void *user, const ct_proc *p, const struct ct_thread *t, const char *name) {
  ct_chrome *c = user;
  (void)p;
  char buf[128];
  snprintf(buf, sizeof buf, "%s (%llu)", name && name[0] ? name : "thread",
           (unsigned long long)t->tid);
  ensure_track(c, c->pid, t->tid, buf, 1);
}

static void on_stream(void *user, const ct_proc *p, const struct ct_stream *s) {
  (void)p;
  ensure_gpu_track(user, s->device, s->stream);
}

/* The args of a GEMM: shape and types (Kineto-like names). */
static void put_gemm_args(ct_chrome *c, const struct ct_gemm *g) {
  fprintf(c->f, ",\"m\":%llu,\"n\":%llu,\"k\":%llu,\"batch\":%llu,\"transa\":%llu,\"transb\":%llu,"
                "\"atype\":\"%s\",\"btype\":\"%s\",\"ctype\":\"%s\",\"compute_type\":%llu,"
                "\"epilogue\":%llu",
          (unsigned long long)g->m, (unsigned long long)g->n, (unsigned long long)g->k,
          (unsigned long long)(g->batch ? g->batch : 1), (unsigned long long)g->transa,
          (unsigned long long)g->transb, ct_data_type_name(g->atype), ct_data_type_name(g->btype),
          ct_data_type_name(g->ctype), (unsigned long long)g->compute_type,
          (unsigned long long)g->epilogue);
}

/* The label of stack id's call site ("function file:line", the first frame outside
 * CUDA's libraries and the tracer: stacks.h), cached per id; NULL when unknown. */
static const char *call_site(ct_chrome *c, uint64_t id) {
  if (!c->stacks || !c->call_sites) return NULL;
  char **label = ct_map_get(c->call_sites, &id, sizeof id, NULL);
  if (!label) return NULL;
  if (*label) return **label ? *label : NULL;
  const ct_frame *fr[64];
  unsigned site, n = ct_stacks_resolve(c->stacks, id, fr, 64, &site);
  if (!n) return NULL; /* its STACK record is still to come: try again next time */
  char buf[512] = "";    /* "" when every frame is CUDA's or the tracer's */
  if (site >= n)
    ;
  else if (fr[site]->line)
    snprintf(buf, sizeof buf, "%s %s:%u", fr[site]->function, fr[site]->file, fr[site]->line);
  else
    snprintf(buf, sizeof buf, "%s", fr[site]->function);
  *label = strdup(buf);
  return *label && **label ? *label : NULL;
}

/* Frees the call-site labels and stack table of a file. */
static void drop_stacks(ct_chrome *c) {
  for (size_t i = 0; c->call_sites && i < ct_map_count(c->call_sites); i++)
    free(*(char **)ct_map_entry(c->call_sites, i, NULL, NULL));
  ct_map_free(c->call_sites);
  ct_stacks_free(c->stacks);
  c->call_sites = NULL;
  c->stacks = NULL;
}

static void on_stack(void *user, const ct_proc *p, const struct ct_stack *node) {
  ct_chrome *c = user;
  (void)p;
  if (c->stacks) ct_stacks_add_node(c->stacks, node);
}

static void on_module(void *user, const ct_proc *p, const struct ct_module *m, const char *path,
                      const char *build_id) {
  ct_chrome *c = user;
  if (!c->stacks) return;
  ct_stacks_set_exe(c->stacks, p->exe);
  ct_stacks_add_module(c->stacks, m, path, build_id);
}

/* An intercepted call's slice; inner (may be NULL) is its child kernels' summary. */
static void write_call(ct_chrome *c, const ct_span *s, const ct_inner_call *inner) {
  ensure_cpu_thread(c, s->tid);
  int driver = (s->flags & CT_API_DRIVER) || s->layer == CT_LAYER_DRIVER;
  slice_open(c, driver ? "cuda_driver" : "cuda_runtime", s->name, c->pid, s->tid, s->begin_ns,
             s->end_ns);
  put_kv(c, "\"correlation\":", s->corr);
  put_kv(c, ",\"device\":", s->device);
  put_kv(c, ",\"stream\":", s->stream);
  put_kv(c, ",\"result\":", s->result);
  put_kv(c, ",\"depth\":", s->depth);
  if (s->depth && s->parent) put_kv(c, ",\"parent\":", s->parent);
  if (s->stack) {
    put_kv(c, ",\"stack\":", s->stack);
    const char *site = call_site(c, s->stack);
    if (site) {
      fputs(",\"call site\":", c->f);
      put_string(c, site);
    }
  }
  if (s->kernel) {
    fputs(",\"kernel\":", c->f);
    put_string(c, ct_demangle(s->kernel, c->demangled, sizeof c->demangled));
  }
  if (s->detail == CT_DETAIL_GEMM) put_gemm_args(c, &s->d.gemm);
  if (inner) {
    put_kv(c, ",\"kernels\":", inner->kernels);
    put_kv(c, ",\"kernels gpu_ns\":", inner->gpu_ns);
    fputs(",\"kernel names\":[", c->f);
    for (unsigned i = 0; i < inner->nnames; i++) {
      if (i) putc(',', c->f);
      put_string(c, ct_demangle(inner->names[i], c->demangled, sizeof c->demangled));
    }
    putc(']', c->f);
  }
  fputs("}}", c->f);
}

/* A library call joined with its child kernels (ct_inner_join): its slice, now. */
static void on_inner_done(void *user, const ct_inner_call *call) {
  if (call->span) write_call(user, call->span, call);
}

static void on_span(void *user, const ct_span *s) {
  ct_chrome *c = user;
  if (s->is_tracer) {
    uint64_t tid = tracer_track(c, s->tid, s->name);
    char label[128];
    snprintf(label, sizeof label, "cutrace: %s", s->name);
    slice_open(c, "tracer", label, c->pid, tid, s->begin_ns, s->end_ns);
    fprintf(c->f, "\"thread\":%llu,\"amount\":%llu}}", (unsigned long long)s->tid,
            (unsigned long long)s->amount);
    return;
  }
  if (c->inner && ct_inner_span(c->inner, s)) return; /* written with its kernels */
  write_call(c, s, NULL);
}

static void on_range(void *user, const ct_proc *p, const struct ct_range *r, const char *name) {
  ct_chrome *c = user;
  (void)p;
  ensure_cpu_thread(c, r->tid);
  slice_open(c, "user_annotation", name ? name : "(unnamed range)", c->pid, r->tid, r->begin_ns,
             r->end_ns);
  put_kv(c, "\"depth\":", r->depth);
  put_kv(c, ",\"domain\":", r->domain);
  put_lit(c, "}}");
}

static const char *mem_label(uint64_t m) {
  static const char *const n[] = {"Unknown", "Device", "Pinned", "Pageable", "Managed"};
  return m < 5 ? n[m] : "Unknown";
}

static void on_activity(void *user, const ct_activity *a) {
  ct_chrome *c = user;
  ensure_gpu_track(c, a->device, a->stream);
  uint64_t tid = stream_tid(c, a->stream);
  const char *cat = a->type == CT_GPU_MEMCPY ? "gpu_memcpy" : a->type == CT_GPU_MEMSET ? "gpu_memset" : "kernel";
  char name[160];
  const char *shown = a->name;
  if (a->detail == CT_DETAIL_MEMOP && a->type == CT_GPU_MEMSET) {
    snprintf(name, sizeof name, "Memset (%s)", mem_label(a->d.memop.dst_mem));
    shown = name;
  } else if (a->detail == CT_DETAIL_MEMOP) {
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", ct_memop_kind_name(a->d.memop.kind),
             mem_label(a->d.memop.src_mem), mem_label(a->d.memop.dst_mem));
    shown = name;
  } else {
    shown = ct_demangle(a->name, c->demangled, sizeof c->demangled);
  }
  uint64_t dur = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  const char *launched_by = c->inner ? ct_inner_activity(c->inner, a) : NULL;
  /* Work on one stream runs in order; a start a few ns before the previous slice's end
   * is timer error, and a partial overlap would break the track's nesting in the
   * viewers: start the slice at the previous end (args keep the measured start). */
  uint64_t start = a->start_ns;
  track_key k = {a->device, tid};
  track_state *ts = ct_map_get(c->tracks, &k, sizeof k, NULL);
  if (ts && ts->last_end && start > ts->last_start && start < ts->last_end &&
      a->end_ns >= ts->last_end)
    start = ts->last_end;
  if (ts) {
    ts->last_start = start;
    ts->last_end = a->end_ns;
  }
  slice_open(c, cat, shown, a->device, tid, start, a->end_ns);
  if (start != a->start_ns) put_kv(c, "\"measured start shift (ns)\":", start - a->start_ns), put_lit(c, ",");
  put_kv(c, "\"correlation\":", a->corr);
  put_kv(c, ",\"device\":", a->device);
  put_kv(c, ",\"stream\":", a->stream);
  if (a->api) {
    fputs(",\"api\":", c->f);
    put_string(c, a->api);
  }
  if (a->call_depth && a->call_parent) {
    put_kv(c, ",\"parent correlation\":", a->call_parent);
    if (launched_by) {
      fputs(",\"launched by\":", c->f);
      put_string(c, launched_by);
    }
  }
  if (a->detail == CT_DETAIL_LAUNCH) {
    const struct ct_launch *l = &a->d.launch;
    put_kv(c, ",\"grid\":[", l->grid_x);
    put_kv(c, ",", l->grid_y);
    put_kv(c, ",", l->grid_z);
    put_kv(c, "],\"block\":[", l->block_x);
    put_kv(c, ",", l->block_y);
    put_kv(c, ",", l->block_z);
    put_kv(c, "],\"shared memory\":", l->shmem);
  } else if (a->detail == CT_DETAIL_MEMOP) {
    fprintf(c->f, ",\"bytes\":%llu,\"memory bandwidth (GB/s)\":%.3f,\"async\":%llu",
            (unsigned long long)a->d.memop.bytes, dur ? (double)a->d.memop.bytes / dur : 0.0,
            (unsigned long long)a->d.memop.async);
  } else if (a->detail == CT_DETAIL_GEMM) {
    put_gemm_args(c, &a->d.gemm);
  }
  fputs("}}", c->f);
  if (!a->has_call || !a->corr) return;
  uint64_t id = a->corr | ((uint64_t)c->file_index << 40);
  ensure_cpu_thread(c, a->tid);
  next_event(c);
  put_kv(c, "{\"ph\":\"s\",\"id\":", id);
  put_kv(c, ",\"pid\":", c->pid);
  put_kv(c, ",\"tid\":", a->tid);
  put_lit(c, ",\"ts\":");
  put_us(c, a->call_begin_ns);
  fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}", c->f);
  next_event(c);
  put_kv(c, "{\"ph\":\"f\",\"id\":", id);
  put_kv(c, ",\"pid\":", a->device);
  put_kv(c, ",\"tid\":", tid);
  put_lit(c, ",\"ts\":");
  put_us(c, start); /* the slice's start, so that the flow binds to it */
  fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", c->f);
}

/* A range's projection onto the GPU: per stream, one gpu_user_annotation slice from
 * the earliest start to the latest end of the work launched inside it (Kineto's). */
static void on_range_gpu(void *user, const ct_range_span *r) {
  ct_chrome *c = user;
  for (unsigned i = 0; i < r->nstreams; i++) {
    const struct ct_range_stream *rs = &r->streams[i];
    ensure_gpu_track(c, rs->device, rs->stream);
    next_event(c);
    put_lit(c, "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"");
    if (r->name) ct_json_write_escaped(c->f, r->name, r->name_len);
    else put_lit(c, "(unnamed range)");
    put_kv(c, "\",\"pid\":", rs->device);
    put_kv(c, ",\"tid\":", stream_tid(c, rs->stream));
    put_lit(c, ",\"ts\":");
    put_us(c, rs->start_ns);
    put_lit(c, ",\"dur\":");
    put_us(c, rs->end_ns > rs->start_ns ? rs->end_ns - rs->start_ns : 0);
    put_kv(c, ",\"args\":{\"thread\":", r->tid);
    put_kv(c, ",\"depth\":", r->depth);
    put_kv(c, ",\"kernels\":", r->kernels);
    put_kv(c, ",\"activities\":", r->activities);
    put_kv(c, ",\"gpu_ns\":", r->gpu_ns);
    put_lit(c, ",\"range begin\":");
    put_us(c, r->begin_ns);
    put_lit(c, "}}");
  }
}

#ifdef CT_HAVE_GAPS_H
static void on_gap(void *user, const ct_gap_info *g) {
  ct_chrome *c = user;
  /* one idle track per process and device, and per process and stream */
  uint64_t tid = g->stream == UINT64_MAX ? GAP_DEVICE_TID + c->file_index
                                         : GAP_STREAM_TID + stream_tid(c, g->stream);
  char label[128], dur[32], owner[48] = "";
  if (c->file_index) snprintf(owner, sizeof owner, " (pid %llu)", (unsigned long long)c->pid);
  if (g->stream == UINT64_MAX) snprintf(label, sizeof label, "GPU idle%s", owner);
  else snprintf(label, sizeof label, "stream %llu idle%s", (unsigned long long)g->stream, owner);
  ensure_track(c, g->device, tid, label, 0);
  snprintf(label, sizeof label, "GPU idle: %s %s", g->cause,
           ct_fmt_duration(g->end_ns - g->start_ns, dur, sizeof dur));
  slice_open(c, "gap", label, g->device, tid, g->start_ns, g->end_ns);
  fputs("\"cause\":", c->f);
  put_string(c, g->cause);
  fprintf(c->f, ",\"stream\":%lld,\"ended_by\":",
          g->stream == UINT64_MAX ? -1ll : (long long)g->stream);
  if (g->ended_by) put_string(c, g->ended_by);
  else fputs("null", c->f);
  fputs("}}", c->f);
}
#endif

/* ---- the document ---------------------------------------------------------------------- */

ct_chrome *ct_chrome_begin(FILE *out, const ct_chrome_options *opts) {
  ct_chrome *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->f = out;
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  if (opts) c->opt = *opts;
  c->tracks = ct_map_new(sizeof(track_state));
  c->tracer_tracks = ct_map_new(sizeof(uint64_t));
  if (!c->tracks || !c->tracer_tracks) {
    ct_map_free(c->tracks);
    ct_map_free(c->tracer_tracks);
    free(c);
    return NULL;
  }
  fputs("{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"traceEvents\":[", out);
  return c;
}

int ct_chrome_add_file(ct_chrome *c, const char *path, ct_model_stats *st) {
  static const ct_model_ops ops = {.on_process = on_process, .on_span = on_span,
                                   .on_activity = on_activity, .on_stream = on_stream,
                                   .on_thread = on_thread, .on_range = on_range,
                                   .on_stack = on_stack, .on_module = on_module};
  c->pid = 0;
  c->stacks = ct_stacks_new();
  c->call_sites = ct_map_new(sizeof(char *));
  c->inner = ct_inner_new(on_inner_done, c);
  if (!c->inner) {
    drop_stacks(c);
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    return -1;
  }
  int rc = ct_model_read(path, NULL, &ops, c, st);
  if (ct_inner_finish(c->inner) < 0 && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: some GEMM kernels were not joined");
    rc = 1;
  }
  ct_inner_free(c->inner);
  c->inner = NULL;
  drop_stacks(c);
  if (rc >= 0) {
    ct_model_stats rst;
    ct_range_each(path, on_range_gpu, c, &rst, NULL, NULL);
  }
#ifdef CT_HAVE_GAPS_H
  if (rc >= 0 && c->opt.gaps) {
    ct_model_stats gst;
    ct_gaps_each(path, c->opt.gap_min_ns, on_gap, c, &gst);
  }
#endif
  ct_map_forget_pointers(c->tracks);
  ct_map_free(c->tracer_tracks); /* tracer tracks are per process */
  c->tracer_tracks = ct_map_new(sizeof(uint64_t));
  if (rc >= 0) c->file_index++;
  return rc;
}

int ct_chrome_end(ct_chrome *c) {
  FILE *f = c->f;
  fputs("\n],\n\"deviceProperties\":[", f);
  for (unsigned i = 0; i < c->ndevices; i++) {
    const struct ct_device *d = &c->devices[i];
    fprintf(f, "%s\n{\"id\":%llu,\"name\":", i ? "," : "", (unsigned long long)d->device);
    put_string(c, c->device_names[i]);
    fprintf(f, ",\"totalGlobalMem\":%llu,\"computeMajor\":%llu,\"computeMinor\":%llu,\"numSms\":%llu}",
            (unsigned long long)d->mem_bytes, (unsigned long long)d->cc_major,
            (unsigned long long)d->cc_minor, (unsigned long long)d->sm_count);
  }
  fprintf(f, "],\n\"distributedInfo\":{\"rank\":0,\"world_size\":1},\n"
             "\"baseTimeNanoseconds\":%llu,\n\"traceName\":\"cutrace\"}\n",
          (unsigned long long)c->base_ns);
  int rc = fflush(f) == 0 && !ferror(f) ? 0 : -1;
  ct_map_free(c->tracks);
  ct_map_free(c->tracer_tracks);
  free(c);
  return rc;
}
