/*
 * Finding the steps of a trace file (steps.h): which NVTX range they are instances of,
 * on which thread, and each step's CPU interval and GPU span. The measuring pass over
 * the model and the gaps analysis is in steps_measure.c.
 *
 * 1. When no --range was given: one read of the RANGE records only (the reader steps
 *    over the others without decoding them: ct_reader_skip_kinds), counting the
 *    outermost (depth 0) range names; a ProfilerStep#* range anywhere wins. Only ranges
 *    overlapping the time filter (--from/--to) count.
 * 2. ct_range_each (report_ranges.c, the attribution of `report --by range`): every
 *    instance of the range with the GPU work of the calls made inside it. The thread
 *    with the most instances is the stepping thread; an instance inside or overlapping
 *    an earlier one (a glob that matches nested ranges) is left out, counted.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "report.h"
#include "stats.h"
#include "steps.h"
#include "steps_internal.h"

#define PROFILER_STEP_GLOB "ProfilerStep#*"
#define AUTO_MIN_INSTANCES 3

void ct_steps_default_options(ct_steps_options *o) {
  memset(o, 0, sizeof *o);
  o->outlier_factor = 1.25;
}

uint64_t ct_step_idle(const ct_step *s) {
  uint64_t t = 0;
  for (int c = 0; c < CT_GAP_NCAUSES; c++) t += s->idle_ns[c];
  return t;
}

uint64_t ct_step_calls_of(const ct_step *s, unsigned cat, uint64_t *ns) {
  for (unsigned i = 0; i < s->ncalls; i++)
    if (s->calls[i].category == cat) {
      if (ns) *ns = s->calls[i].ns;
      return s->calls[i].count;
    }
  if (ns) *ns = 0;
  return 0;
}

uint64_t ct_step_api_calls(const ct_step *s, uint64_t *ns) {
  uint64_t n = 0, t = 0;
  for (unsigned i = 0; i < s->ncalls; i++) n += s->calls[i].count, t += s->calls[i].ns;
  *ns = t;
  return n;
}

double ct_step_busy_pct(const ct_step *s) {
  uint64_t t = ct_step_time(s);
  return t ? 100.0 * (double)s->device_busy_ns / (double)t : 0.0;
}

/* 1 when the len bytes at name match pattern (a glob when it has *, ? or [). */
static int name_matches(const char *pattern, const char *name, size_t len) {
  if (!name) return 0;
  if (!strpbrk(pattern, "*?[")) return strlen(pattern) == len && !memcmp(pattern, name, len);
  char buf[512];
  if (len >= sizeof buf) len = sizeof buf - 1;
  memcpy(buf, name, len);
  buf[len] = 0;
  return fnmatch(pattern, buf, 0) == 0;
}

/* Counts of an outermost range name, in first-seen order (ct_map keeps it). */
typedef struct name_count {
  uint64_t count;
} name_count;

/* Step 1: picks the range for f (reads RANGE records only), and notes every range in
 * extents (tid -> ct_range_extent; NULL: not kept) for step 2. Returns 0 when one was
 * chosen, 2 when none fits (message set), -1 unreadable. */
static int choose_range(const char *path, ct_steps_file *f, ct_map **extents) {
  ct_reader *rd = ct_reader_open(path, f->st.message, sizeof f->st.message);
  if (!rd) return -1;
  ct_map *names = ct_map_new(sizeof(name_count));
  char *profiler_step = NULL;
  int oom = !names;
  ct_record rec;
  int window_known = 0;
  uint64_t from = 0, to = UINT64_MAX;
  const uint64_t window_kinds = 1ull << CT_KIND_PROCESS | 1ull << CT_KIND_API;
  /* not even decoded; DROP records are counted (f->st.dropped: "the tracer lost N") */
  ct_reader_skip_kinds(rd, ~(window_kinds | 1ull << CT_KIND_RANGE | 1ull << CT_KIND_DROP));
  while (!oom && ct_reader_next(rd, &rec)) {
    if (rec.kind == CT_KIND_DROP) {
      f->st.dropped += rec.u.drop.count;
      continue;
    }
    if (!window_known && (rec.kind == CT_KIND_PROCESS || rec.kind == CT_KIND_API)) {
      /* --from/--to count from the PROCESS record's start, else the first call (as
       * ct_range_each resolves them) */
      uint64_t start = rec.kind == CT_KIND_PROCESS ? rec.u.process.start_ns : rec.u.api.begin_ns;
      window_known = start != 0;
      ct_model_default_window(start, &from, &to);
      if (window_known) ct_reader_skip_kinds(rd, window_kinds);
    }
    if (rec.kind != CT_KIND_RANGE || rec.u.range.end_ns < from || rec.u.range.begin_ns > to)
      continue;
    if (*extents && ct_range_extent_add(*extents, &rec.u.range) < 0) {
      ct_map_free(*extents); /* out of memory: step 2 keeps every call */
      *extents = NULL;
    }
    size_t len = 0;
    const char *name = ct_reader_string(rd, rec.u.range.name, &len);
    if (!name) continue;
    if (!profiler_step && name_matches(PROFILER_STEP_GLOB, name, len)) profiler_step = "";
    if (rec.u.range.depth != 0) continue;
    name_count *c = ct_map_get(names, name, len, NULL);
    if (c) c->count++;
    else oom = 1;
  }
  /* a damaged file: where it stopped comes first, then that what was read had no steps */
  const ct_read_status read = *ct_reader_status(rd), *rs = &read;
  f->st.damaged = rs->damaged;
  ct_reader_close(rd);
  int rc = 0;
  if (profiler_step) {
    f->range = strdup(PROFILER_STEP_GLOB);
    f->how = "ProfilerStep#* range";
  } else {
    const void *best_key = NULL;
    size_t best_len = 0;
    uint64_t best = 0;
    for (size_t i = 0; names && i < ct_map_count(names); i++) {
      const void *key;
      size_t len;
      const name_count *c = ct_map_entry(names, i, &key, &len);
      if (c->count > best) best = c->count, best_key = key, best_len = len;
    }
    if (best >= AUTO_MIN_INSTANCES) {
      f->range = strndup(best_key, best_len);
      f->how = "most frequent outermost range";
    } else if (rs->damaged) {
      snprintf(f->st.message, sizeof f->st.message,
               "%.160s; %llu record%s read before it, without steps (no ProfilerStep#* range, "
               "no outermost NVTX range with %d or more instances)",
               rs->message, (unsigned long long)rs->records, rs->records == 1 ? "" : "s",
               AUTO_MIN_INSTANCES);
      rc = 2;
    } else {
      snprintf(f->st.message, sizeof f->st.message,
               "no steps: no ProfilerStep#* range and no outermost NVTX range with %d or more "
               "instances; mark each iteration with an NVTX range (nvtxRangePush/Pop around "
               "the loop body, torch.cuda.nvtx.range, emit_nvtx) or name one with --range",
               AUTO_MIN_INSTANCES);
      rc = 2;
    }
  }
  ct_map_free(names);
  if (rc == 0 && !f->range) rc = -1;
  if (oom && rc >= 0) {
    snprintf(f->st.message, sizeof f->st.message, "out of memory choosing the step range");
    rc = -1;
  }
  f->chosen = rc == 0;
  return rc;
}

/* Thread counts of the instances, for the stepping thread. */
typedef struct thread_count {
  uint64_t count;
  ct_step_instance last; /* its latest instance in the instances' order */
} thread_count;

typedef struct collect {
  const char *pattern;
  ct_instance_sorter *sorter;
  ct_map *threads;       /* tid -> thread_count */
  uint64_t total;
  int oom;
} collect;

/* The instances' order of steps_spans.c, for the stepping thread's tie-break. */
static int later_instance(const ct_step_instance *x, const ct_step_instance *y) {
  if (x->begin_ns != y->begin_ns) return x->begin_ns > y->begin_ns;
  if (x->end_ns != y->end_ns) return x->end_ns < y->end_ns;
  if (x->tid != y->tid) return x->tid > y->tid;
  if (x->gpu_first_ns != y->gpu_first_ns) return x->gpu_first_ns > y->gpu_first_ns;
  return x->gpu_last_ns > y->gpu_last_ns;
}

static void on_range(void *user, const ct_range_span *r) {
  collect *c = user;
  if (c->oom || !name_matches(c->pattern, r->name, r->name_len)) return;
  ct_step_instance in = {r->tid, r->begin_ns, r->end_ns, 0, 0};
  for (unsigned i = 0; i < r->nstreams; i++) {
    if (!in.gpu_first_ns || r->streams[i].start_ns < in.gpu_first_ns)
      in.gpu_first_ns = r->streams[i].start_ns;
    if (r->streams[i].end_ns > in.gpu_last_ns) in.gpu_last_ns = r->streams[i].end_ns;
  }
  thread_count *t = ct_map_get(c->threads, &in.tid, sizeof in.tid, NULL);
  if (!t || ct_instance_sorter_add(c->sorter, &in) < 0) {
    c->oom = 1;
    return;
  }
  if (!t->count++ || later_instance(&in, &t->last)) t->last = in;
  c->total++;
}

/* The thread with the most instances; among several, the first to reach that count in
 * begin order (the one whose latest instance comes first). */
static uint64_t stepping_thread(const collect *c, uint64_t *count) {
  const thread_count *best = NULL;
  uint64_t best_tid = 0;
  for (size_t i = 0; i < ct_map_count(c->threads); i++) {
    const void *key;
    size_t len;
    const thread_count *t = ct_map_entry(c->threads, i, &key, &len);
    if (!best || t->count > best->count ||
        (t->count == best->count && later_instance(&best->last, &t->last))) {
      best = t;
      memcpy(&best_tid, key, sizeof best_tid);
    }
  }
  *count = best ? best->count : 0;
  return best_tid;
}

/* The stepping thread's instances in order, each inside or overlapping an earlier one
 * left out: the steps' spans. */
typedef struct span_feed {
  ct_steps_file *f;
  uint64_t last_end;
} span_feed;

static int add_span(void *user, const ct_step_instance *in) {
  span_feed *k = user;
  ct_steps_file *f = k->f;
  if (in->tid != f->tid) return 0;
  if (f->nsteps && in->begin_ns < k->last_end) {
    f->ignored++;
    return 0;
  }
  ct_step_span s = {in->begin_ns, in->end_ns, 0, in->gpu_first_ns, in->gpu_last_ns};
  k->last_end = in->end_ns;
  return ct_step_spans_append(f, &s);
}

/* Step 2: the steps from the instances of f->range (within extents, from step 1, when
 * not NULL). Returns like ct_range_each, or 2. */
static int collect_steps(const char *path, ct_steps_file *f, ct_map *extents) {
  collect c = {.pattern = f->range, .sorter = ct_instance_sorter_new(),
               .threads = ct_map_new(sizeof(thread_count))};
  int rc = -1;
  if (c.sorter && c.threads && ct_step_spans_new(f) == 0)
    rc = ct_range_each_within(path, on_range, &c, &f->st, &f->proc, NULL, extents);
  else c.oom = 1;
  if (rc >= 0 && !c.oom && !c.total) {
    if (f->st.damaged) { /* where it stopped comes first: what was read had no steps */
      char damage[200];
      snprintf(damage, sizeof damage, "%.199s", f->st.message);
      snprintf(f->st.message, sizeof f->st.message,
               "%.190s, without steps (no NVTX range matches '%.60s')", damage, f->range);
    } else {
      snprintf(f->st.message, sizeof f->st.message,
               "no steps: no NVTX range matches '%.60s' (`cutrace report --by range` lists "
               "the ranges)", f->range);
    }
    rc = 2;
  } else if (rc >= 0 && !c.oom) {
    uint64_t mine;
    f->tid = stepping_thread(&c, &mine);
    f->ignored = c.total - mine; /* other threads' (the nested ones: add_span) */
    span_feed k = {f, 0};
    if (ct_instance_sorter_each(c.sorter, add_span, &k) < 0 || ct_step_spans_finish(f) < 0)
      c.oom = 1;
  }
  if (c.oom) {
    snprintf(f->st.message, sizeof f->st.message,
             "out of memory collecting steps, or their temporary file failed");
    rc = -1;
  }
  ct_instance_sorter_free(c.sorter);
  ct_map_free(c.threads);
  return rc;
}

int ct_steps_read(const char *path, const ct_steps_options *o, ct_steps_file *f) {
  memset(f, 0, sizeof *f);
  f->path = strdup(path);
  f->all_threads = o->all_threads;
  ct_map *extents = NULL; /* the ranges' extents, when step 1 reads them */
  if (o->range) {
    f->range = strdup(o->range);
    f->how = "--range";
  } else {
    extents = ct_map_new(sizeof(ct_range_extent));
    if ((f->rc = choose_range(path, f, &extents)) != 0) {
      ct_map_free(extents);
      return f->rc;
    }
  }
  if (!f->path || !f->range) {
    ct_map_free(extents);
    snprintf(f->st.message, sizeof f->st.message, "out of memory");
    return f->rc = -1;
  }
  f->rc = collect_steps(path, f, extents);
  ct_map_free(extents);
  if (f->rc < 0 || f->rc == 2) return f->rc;
  int rc = ct_steps_measure(path, f);
  if (rc < 0 || (rc > 0 && f->rc == 0)) f->rc = rc;
  return f->rc;
}

void ct_steps_file_free(ct_steps_file *f) {
  ct_step_spans_free(f->spans);
  ct_step_rows_free(f->rows);
  for (size_t i = 0; i < f->nkernel_names; i++) free(f->kernel_names[i]);
  free(f->kernel_names);
  free(f->range);
  free(f->path);
  memset(f, 0, sizeof *f);
}
