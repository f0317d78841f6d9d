/*
 * cutrace gaps: GPU idle time per device and stream, split by cause, the largest
 * gaps with what every CPU thread was doing, and findings that name a fix.
 * Text (default), JSON (schema in docs/gaps.md), or a summary of at most 6 lines.
 * The analysis itself is in gaps.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "gaps.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

static const char usage_text[] =
    "usage: cutrace gaps [OPTIONS] [DIR|FILE...]\n"
    "GPU idle time per device and stream, split by cause; the largest gaps; findings.\n"
    "  --format text|json      output format (default text)\n"
    "  --summary               at most 6 lines: busy share, idle by cause, largest gap\n"
    "  --top N                 how many of the largest gaps to show (default 10)\n"
    "  --min-gap US            list only gaps of at least US microseconds (default 0)\n"
    "  --launch-threshold US   gaps shorter than this are launch overhead (default 10)\n"
    "  --launch-bound-min N    kernels in a row shorter than their launch call (default 20)\n"
    "  --repeat-min N          copies or syncs before a finding names them (default 4)\n"
    "  --sync-work US          a sync waiting on less GPU work is flagged (default 50)\n"
    "Each process (trace file) is analysed on its own; causes: docs/gaps.md.\n";

/* Parses microseconds with up to 3 decimals ("2.5") into ns. Returns 0 or -1. */
static int parse_us(const char *s, uint64_t *ns) {
  uint64_t whole = 0, frac = 0;
  unsigned digits = 0, fdigits = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++, digits++) {
    if (whole > UINT64_MAX / 10000) return -1;
    whole = whole * 10 + (uint64_t)(*p - '0');
  }
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++, fdigits++)
      if (fdigits < 3) frac = frac * 10 + (uint64_t)(*p - '0');
  if (*p || (!digits && !fdigits)) return -1;
  for (unsigned i = fdigits; i < 3; i++) frac *= 10;
  *ns = whole * 1000 + frac;
  return 0;
}

typedef struct gaps_cli {
  ct_gaps *g;
  int status;
  int summary;
  enum ct_out_format fmt;
  struct input {
    char *path;
    int rc;
    char message[300];
  } *inputs;
  unsigned ninputs;
} gaps_cli;

static int add_input(const char *path, void *arg) {
  gaps_cli *c = arg;
  struct input *ni = realloc(c->inputs, (c->ninputs + 1) * sizeof *ni);
  if (!ni) return -1;
  c->inputs = ni;
  struct input *in = &c->inputs[c->ninputs++];
  in->path = strdup(path);
  ct_model_stats st;
  in->rc = ct_gaps_add_file(c->g, path, &st);
  snprintf(in->message, sizeof in->message, "%s", st.message);
  if (in->rc < 0) {
    fprintf(stderr, "cutrace gaps: %s: %s\n", path, st.message[0] ? st.message : "unreadable");
    c->status = 2;
  } else if (in->rc > 0) {
    fprintf(stderr, "cutrace gaps: %s: %s (partial result)\n", path, st.message);
    if (c->status < 1) c->status = 1;
  }
  return 0;
}

static void progress(const char *path, uint64_t records) {
  fprintf(stderr, "\rcutrace gaps: %s: %llu M records", path, (unsigned long long)(records >> 20));
}

/* ---- shared helpers for the writers ------------------------------------------------ */

/* The time a trace's relative times count from. */
static uint64_t trace_start(const ct_gaps_proc *p) {
  return p->start_ns && (!p->first_ns || p->start_ns <= p->first_ns) ? p->start_ns : p->first_ns;
}

/* Wall-clock time of host time t ("" when unknown). */
static const char *wall_clock(const ct_gaps_proc *p, uint64_t t, char *buf, size_t len) {
  buf[0] = 0;
  if (!p->realtime_ns || !p->start_ns) return buf;
  uint64_t w = p->realtime_ns + (t - p->start_ns);
  time_t sec = (time_t)(w / 1000000000ull);
  struct tm tm;
  if (!gmtime_r(&sec, &tm)) return buf;
  char d[40];
  strftime(d, sizeof d, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(buf, len, "%s.%06llu UTC", d, (unsigned long long)(w % 1000000000ull / 1000));
  return buf;
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0.0; }

static const char *cause_label(enum ct_gap_cause c) { return ct_gap_cause_name(c); }

/* ---- text ------------------------------------------------------------------------------ */


static void print_usage_table(const gaps_cli *c, int streams) {
  unsigned np, n;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  static const char *const dev_headers[] = {
      "pid", "device", "span", "busy", "busy%", "idle", "host_wait", "launch_ovh", "sync",
      "other_strm", "tracer", "other", "gaps"};
  const char *headers[13];
  memcpy(headers, dev_headers, sizeof headers);
  if (streams) headers[1] = "dev/stream";
  ct_table *t = ct_table_new(streams ? "Per stream (idle while the stream had no work)"
                                     : "Per device (idle = no stream busy)",
                             13, headers, "lrrrrrrrrrrrr");
  if (!t) return;
  const ct_gaps_device *devs = streams ? NULL : ct_gaps_devices(c->g, &n);
  const ct_gaps_stream *strs = streams ? ct_gaps_streams(c->g, &n) : NULL;
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_usage *u = streams ? &strs[i].u : &devs[i].u;
    unsigned proc = streams ? strs[i].proc : devs[i].proc;
    char b[CT_GAP_NCAUSES + 3][24];
    ct_table_row(t);
    ct_table_cell(t, "%llu", (unsigned long long)(proc < np ? procs[proc].pid : 0));
    if (streams)
      ct_table_cell(t, "%llu/%llu", (unsigned long long)strs[i].device,
                    (unsigned long long)strs[i].stream);
    else
      ct_table_cell(t, "%llu %s", (unsigned long long)devs[i].device, devs[i].name ? devs[i].name : "");
    ct_table_cell(t, "%s", ct_fmt_duration(u->last_ns - u->first_ns, b[0], sizeof b[0]));
    ct_table_cell(t, "%s", ct_fmt_duration(u->busy_ns, b[1], sizeof b[1]));
    ct_table_cell(t, "%.1f%%", pct(u->busy_ns, u->last_ns - u->first_ns));
    ct_table_cell(t, "%s", ct_fmt_duration(u->idle_ns, b[2], sizeof b[2]));
    for (int k = 0; k < CT_GAP_NCAUSES; k++)
      ct_table_cell(t, "%s", ct_fmt_duration(u->idle_by_cause[k], b[3 + k], sizeof b[3 + k]));
    ct_table_cell(t, "%llu", (unsigned long long)u->gaps);
  }
  ct_table_print(t, stdout, CT_OUT_TEXT);
  ct_table_free(t);
}

static const char *op_label(const ct_gap_detail *d, char *buf, size_t len) {
  if (!d->op_name) return "(unknown operation)";
  return ct_demangle(d->op_name, buf, len);
}

/* A tracer thread during a gap, by its name: the tracer's spans that overlapped it. */
static void print_tracer_thread(const ct_gap_thread *t, uint64_t dur) {
  char b[24];
  if (t->name) printf("    %s:", t->name);
  else printf("    tracer thread %llu:", (unsigned long long)t->tid);
  for (unsigned m = 0; m < t->ncall_shown; m++)
    printf("%s %s %s", m ? "," : "", t->calls[m].name ? t->calls[m].name : "?",
           ct_fmt_duration(t->calls[m].end_ns - t->calls[m].begin_ns, b, sizeof b));
  printf(" (tracer %.1f%% of the gap", pct(t->tracer_ns, dur));
  if (t->name) printf(", thread %llu", (unsigned long long)t->tid);
  printf(")%s\n", t->truncated ? " (history incomplete)" : "");
}

static void print_top_gaps(const gaps_cli *c) {
  unsigned n, np;
  const ct_gap_detail *top = ct_gaps_top(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  printf("\nLargest gaps (device idle: no stream busy)\n");
  if (!n) printf("  (none)\n");
  for (unsigned i = 0; i < n; i++) {
    const ct_gap_detail *d = &top[i];
    const ct_gaps_proc *p = &procs[d->proc];
    char b1[24], b2[24], b3[24], wall[64], name[512];
    wall_clock(p, d->start_ns, wall, sizeof wall);
    printf("%2u. %s idle on device %llu of pid %llu, at +%s%s%s%s: %s\n", i + 1,
           ct_fmt_duration(d->end_ns - d->start_ns, b1, sizeof b1), (unsigned long long)d->device,
           (unsigned long long)p->pid, ct_fmt_duration(d->start_ns - trace_start(p), b2, sizeof b2),
           *wall ? " (" : "", wall, *wall ? ")" : "",
           cause_label(d->cause));
    printf("    host time %llu..%llu ns\n", (unsigned long long)d->start_ns,
           (unsigned long long)d->end_ns);
    if (d->has_call) {
      int64_t lead = (int64_t)d->call_begin_ns - (int64_t)d->start_ns;
      printf("    ended by %s on stream %llu: %s by thread %llu, call began %s%s %s the gap started\n",
             op_label(d, name, sizeof name), (unsigned long long)d->op_stream,
             d->api ? d->api : "?", (unsigned long long)d->tid, lead < 0 ? "" : "",
             ct_fmt_duration((uint64_t)(lead < 0 ? -lead : lead), b3, sizeof b3),
             lead < 0 ? "before" : "after");
    } else {
      printf("    ended by %s on stream %llu (its call is not in the trace)\n",
             op_label(d, name, sizeof name), (unsigned long long)d->op_stream);
    }
    uint64_t dur = d->end_ns - d->start_ns;
    for (unsigned k = 0; k < d->nthreads; k++) {
      const ct_gap_thread *t = &d->threads[k];
      if (t->tracer_thread && !t->launching) {
        print_tracer_thread(t, dur);
        continue;
      }
      uint64_t outside = dur > t->in_cuda_ns + t->tracer_ns ? dur - t->in_cuda_ns - t->tracer_ns : 0;
      printf("    thread %llu", (unsigned long long)t->tid);
      if (t->name) printf(" \"%s\"", t->name);
      printf("%s: outside CUDA %.1f%%", t->launching ? " (launching)" : "", pct(outside, dur));
      if (t->ncalls) printf(", in %llu call%s %.1f%%", (unsigned long long)t->ncalls,
                            t->ncalls == 1 ? "" : "s", pct(t->in_cuda_ns, dur));
      if (t->tracer_ns) printf(", tracer %.1f%%", pct(t->tracer_ns, dur));
      if (t->truncated) printf(" (history incomplete)");
      for (unsigned m = 0; m < t->ncall_shown; m++)
        printf("%s %s%s %s", m ? "," : ":", t->calls[m].is_tracer ? "tracer " : "",
               t->calls[m].name ? t->calls[m].name : "?",
               ct_fmt_duration(t->calls[m].end_ns - t->calls[m].begin_ns, b3, sizeof b3));
      putchar('\n');
    }
    if (d->threads_omitted)
      printf("    (%llu more threads not shown)\n", (unsigned long long)d->threads_omitted);
  }
  const ct_gap_detail *ts = ct_gaps_top_stream(c->g, &n);
  int any = 0;
  for (unsigned i = 0; i < n; i++) {
    if (ts[i].cause != CT_GAP_OTHER_STREAM) continue;
    if (!any++) printf("\nLargest waits of a stream on another stream\n");
    char b1[24], b2[24];
    printf("  %s on device %llu stream %llu at +%s (pid %llu)\n",
           ct_fmt_duration(ts[i].end_ns - ts[i].start_ns, b1, sizeof b1),
           (unsigned long long)ts[i].device, (unsigned long long)ts[i].stream,
           ct_fmt_duration(ts[i].start_ns - trace_start(&procs[ts[i].proc]), b2, sizeof b2),
           (unsigned long long)procs[ts[i].proc].pid);
  }
}

static void print_findings(const gaps_cli *c) {
  unsigned n, np;
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  printf("\nFindings\n");
  if (!n) printf("  (none)\n");
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *f = &fs[i];
    const ct_gaps_proc *p = &procs[f->proc];
    char b1[24], b2[24], b3[24], b4[24];
    printf("  - pid %llu device %llu: ", (unsigned long long)p->pid, (unsigned long long)f->device);
    switch (f->kind) {
    case CT_FIND_LAUNCH_BOUND:
      printf("%llu kernels in %llu stretches ran no longer than their launch calls (GPU %s, calls %s); "
             "longest: %llu kernels from +%s to +%s. %s\n",
             (unsigned long long)f->count, (unsigned long long)f->stretches,
             ct_fmt_duration(f->gpu_ns, b1, sizeof b1), ct_fmt_duration(f->cpu_ns, b2, sizeof b2),
             (unsigned long long)f->longest_count,
             ct_fmt_duration(f->first_ns - trace_start(p), b3, sizeof b3),
             ct_fmt_duration(f->last_ns - trace_start(p), b4, sizeof b4), f->fix);
      break;
    case CT_FIND_PAGEABLE_COPY:
    case CT_FIND_SYNC_COPY:
      printf("%llu %s %s copies (%s, GPU %s, calls %s): %s\n", (unsigned long long)f->count,
             f->kind == CT_FIND_PAGEABLE_COPY ? "pageable" : "synchronous", f->what,
             ct_fmt_bytes(f->bytes, b1, sizeof b1), ct_fmt_duration(f->gpu_ns, b2, sizeof b2),
             ct_fmt_duration(f->cpu_ns, b3, sizeof b3), f->fix);
      break;
    case CT_FIND_LITTLE_SYNC:
      printf("%llu syncs (%s) waited on little GPU work: %s in the calls for %s of GPU work: %s\n",
             (unsigned long long)f->count, f->what ? f->what : "?",
             ct_fmt_duration(f->cpu_ns, b1, sizeof b1), ct_fmt_duration(f->gpu_ns, b2, sizeof b2),
             f->fix);
      break;
    }
  }
}

static void print_text(const gaps_cli *c) {
  unsigned np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  for (unsigned i = 0; i < np; i++)
    printf("%s: pid %llu on %s: %s\n", procs[i].path, (unsigned long long)procs[i].pid,
           *procs[i].host ? procs[i].host : "?", procs[i].cmdline);
  putchar('\n');
  print_usage_table(c, 0);
  putchar('\n');
  print_usage_table(c, 1);
  print_top_gaps(c);
  print_findings(c);
  if (ct_gaps_late(c->g))
    printf("\nnote: %llu GPU activities arrived after the time they cover had been analysed; "
           "idle time near them may be overstated\n", (unsigned long long)ct_gaps_late(c->g));
}

/* ---- summary ---------------------------------------------------------------------------- */

static void print_summary(const gaps_cli *c) {
  unsigned n, np, ntop, lines = 0;
  const ct_gaps_device *devs = ct_gaps_devices(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  const ct_gap_detail *top = ct_gaps_top(c->g, &ntop);
  if (!n) {
    printf("cutrace gaps: no GPU activity in the trace\n");
    return;
  }
  for (unsigned i = 0; i < n && lines < 4; i++, lines++) {
    const ct_gaps_usage *u = &devs[i].u;
    char b1[24], b2[24], b3[24];
    if (lines == 3 && n > 4) {
      printf("cutrace gaps: %u more devices (see cutrace gaps)\n", n - 3);
      break;
    }
    printf("GPU %llu: busy %.1f%% of %s; idle %s", (unsigned long long)devs[i].device,
           pct(u->busy_ns, u->last_ns - u->first_ns),
           ct_fmt_duration(u->last_ns - u->first_ns, b1, sizeof b1),
           ct_fmt_duration(u->idle_ns, b2, sizeof b2));
    if (np > 1) printf(" (pid %llu)", (unsigned long long)procs[devs[i].proc].pid);
    /* causes, largest first */
    int order[CT_GAP_NCAUSES], k, m;
    for (k = 0; k < CT_GAP_NCAUSES; k++) order[k] = k;
    for (k = 1; k < CT_GAP_NCAUSES; k++)
      for (m = k; m > 0 && u->idle_by_cause[order[m]] > u->idle_by_cause[order[m - 1]]; m--) {
        int tmp = order[m];
        order[m] = order[m - 1];
        order[m - 1] = tmp;
      }
    const char *sep = ": ";
    for (k = 0; k < CT_GAP_NCAUSES; k++) {
      if (!u->idle_by_cause[order[k]]) continue;
      printf("%s%s %s", sep, ct_gap_cause_name(order[k]),
             ct_fmt_duration(u->idle_by_cause[order[k]], b3, sizeof b3));
      sep = ", ";
    }
    putchar('\n');
  }
  if (ntop) {
    const ct_gap_detail *d = &top[0];
    char b1[24], b2[24], name[256];
    printf("largest gap: %s on GPU %llu at +%s (%s", ct_fmt_duration(d->end_ns - d->start_ns, b1, sizeof b1),
           (unsigned long long)d->device,
           ct_fmt_duration(d->start_ns - trace_start(&procs[d->proc]), b2, sizeof b2),
           cause_label(d->cause));
    if (d->op_name) printf("; ended by %s", op_label(d, name, sizeof name));
    if (d->api) printf(" from %s", d->api);
    printf(")\n");
  }
  unsigned nf;
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &nf);
  if (nf) {
    static const char *const labels[] = {"launch-bound kernels", "pageable copies",
                                         "synchronous copies", "syncs on little GPU work"};
    printf("findings:");
    for (unsigned i = 0; i < nf; i++) {
      int dup = 0;
      for (unsigned k = 0; k < i; k++) dup |= fs[k].kind == fs[i].kind;
      if (!dup) printf("%s %s", i ? "," : "", labels[fs[i].kind]);
    }
    printf(" (see cutrace gaps for the fixes)\n");
  }
}

/* ---- JSON ------------------------------------------------------------------------------- */

static void json_causes(ct_json *j, const char *key, const uint64_t *v, const char *suffix) {
  ct_json_key(j, key);
  ct_json_begin_object(j);
  for (int k = 0; k < CT_GAP_NCAUSES; k++) {
    char name[40];
    snprintf(name, sizeof name, "%s%s", ct_gap_cause_name(k), suffix);
    ct_json_kv_uint(j, name, v[k]);
  }
  ct_json_end_object(j);
}

static void json_usage(ct_json *j, const ct_gaps_usage *u) {
  ct_json_kv_uint(j, "first_ns", u->first_ns);
  ct_json_kv_uint(j, "last_ns", u->last_ns);
  ct_json_kv_uint(j, "span_ns", u->last_ns - u->first_ns);
  ct_json_kv_uint(j, "busy_ns", u->busy_ns);
  ct_json_kv_uint(j, "idle_ns", u->idle_ns);
  ct_json_kv_uint(j, "activities", u->activities);
  ct_json_kv_uint(j, "gaps", u->gaps);
  json_causes(j, "idle", u->idle_by_cause, "_ns");
  json_causes(j, "gap_counts", u->gaps_by_cause, "");
}

static void json_gap(ct_json *j, const ct_gap_detail *d, const ct_gaps_proc *p, int with_threads) {
  char name[512];
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "process", d->proc);
  ct_json_kv_uint(j, "pid", p->pid);
  ct_json_kv_uint(j, "device", d->device);
  ct_json_kv_uint(j, "stream", d->stream == UINT64_MAX ? d->op_stream : d->stream);
  ct_json_kv_string(j, "scope", d->stream == UINT64_MAX ? "device" : "stream");
  ct_json_kv_uint(j, "start_ns", d->start_ns);
  ct_json_kv_uint(j, "end_ns", d->end_ns);
  ct_json_kv_uint(j, "dur_ns", d->end_ns - d->start_ns);
  ct_json_kv_uint(j, "rel_ns", d->start_ns - trace_start(p));
  char wall[64];
  if (*wall_clock(p, d->start_ns, wall, sizeof wall)) ct_json_kv_string(j, "wall_clock", wall);
  ct_json_kv_string(j, "cause", ct_gap_cause_name(d->cause));
  ct_json_key(j, "ended_by");
  ct_json_begin_object(j);
  ct_json_kv_string(j, "name", d->op_name ? ct_demangle(d->op_name, name, sizeof name) : NULL);
  ct_json_kv_string(j, "mangled", d->op_name);
  ct_json_kv_uint(j, "stream", d->op_stream);
  ct_json_kv_uint(j, "type", d->op_type);
  ct_json_kv_string(j, "api", d->api);
  if (d->has_call) {
    ct_json_kv_uint(j, "tid", d->tid);
    ct_json_kv_uint(j, "call_begin_ns", d->call_begin_ns);
    ct_json_kv_uint(j, "call_end_ns", d->call_end_ns);
  }
  ct_json_end_object(j);
  if (with_threads) {
    ct_json_key(j, "threads");
    ct_json_begin_array(j);
    for (unsigned k = 0; k < d->nthreads; k++) {
      const ct_gap_thread *t = &d->threads[k];
      uint64_t dur = d->end_ns - d->start_ns, busy = t->in_cuda_ns + t->tracer_ns;
      ct_json_begin_object(j);
      ct_json_kv_uint(j, "tid", t->tid);
      ct_json_kv_string(j, "name", t->name);
      ct_json_kv_bool(j, "tracer_thread", t->tracer_thread);
      ct_json_kv_bool(j, "launching", t->launching);
      ct_json_kv_uint(j, "calls", t->ncalls);
      ct_json_kv_uint(j, "in_cuda_ns", t->in_cuda_ns);
      ct_json_kv_uint(j, "tracer_ns", t->tracer_ns);
      ct_json_kv_uint(j, "outside_cuda_ns", dur > busy ? dur - busy : 0);
      ct_json_kv_bool(j, "history_incomplete", t->truncated);
      ct_json_key(j, "longest_calls");
      ct_json_begin_array(j);
      for (unsigned m = 0; m < t->ncall_shown; m++) {
        ct_json_begin_object(j);
        ct_json_kv_string(j, "name", t->calls[m].name);
        ct_json_kv_bool(j, "tracer", t->calls[m].is_tracer);
        ct_json_kv_uint(j, "begin_ns", t->calls[m].begin_ns);
        ct_json_kv_uint(j, "end_ns", t->calls[m].end_ns);
        ct_json_end_object(j);
      }
      ct_json_end_array(j);
      ct_json_end_object(j);
    }
    ct_json_end_array(j);
    ct_json_kv_uint(j, "threads_omitted", d->threads_omitted);
  }
  ct_json_end_object(j);
}

static const char *const finding_kinds[] = {"launch_bound", "pageable_copy", "sync_copy",
                                            "sync_little_work"};

static void print_json(const gaps_cli *c, const ct_gaps_options *o) {
  ct_json j;
  ct_json_init(&j, stdout, 1);
  unsigned n, np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  ct_json_begin_object(&j);
  ct_json_kv_string(&j, "schema", "cutrace-gaps/1");
  ct_json_key(&j, "options");
  ct_json_begin_object(&j);
  ct_json_kv_uint(&j, "min_gap_ns", o->min_gap_ns);
  ct_json_kv_uint(&j, "launch_threshold_ns", o->launch_threshold_ns);
  ct_json_kv_uint(&j, "top", o->top);
  ct_json_kv_uint(&j, "launch_bound_min", o->launch_bound_min);
  ct_json_kv_uint(&j, "repeat_min", o->repeat_min);
  ct_json_kv_uint(&j, "sync_work_ns", o->sync_work_ns);
  ct_json_end_object(&j);
  ct_json_key(&j, "inputs");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < c->ninputs; i++) {
    ct_json_begin_object(&j);
    ct_json_kv_string(&j, "path", c->inputs[i].path);
    ct_json_kv_string(&j, "status", c->inputs[i].rc < 0 ? "unreadable" : c->inputs[i].rc ? "partial" : "clean");
    ct_json_kv_string(&j, "message", c->inputs[i].message);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  ct_json_key(&j, "processes");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < np; i++) {
    ct_json_begin_object(&j);
    ct_json_kv_uint(&j, "process", i);
    ct_json_kv_string(&j, "path", procs[i].path);
    ct_json_kv_uint(&j, "pid", procs[i].pid);
    ct_json_kv_string(&j, "host", procs[i].host);
    ct_json_kv_string(&j, "cmdline", procs[i].cmdline);
    ct_json_kv_uint(&j, "start_ns", trace_start(&procs[i]));
    ct_json_kv_uint(&j, "realtime_ns", procs[i].realtime_ns);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  const ct_gaps_device *devs = ct_gaps_devices(c->g, &n);
  ct_json_key(&j, "devices");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) {
    ct_json_begin_object(&j);
    ct_json_kv_uint(&j, "process", devs[i].proc);
    ct_json_kv_uint(&j, "pid", procs[devs[i].proc].pid);
    ct_json_kv_uint(&j, "device", devs[i].device);
    ct_json_kv_string(&j, "name", devs[i].name);
    json_usage(&j, &devs[i].u);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  const ct_gaps_stream *strs = ct_gaps_streams(c->g, &n);
  ct_json_key(&j, "streams");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) {
    ct_json_begin_object(&j);
    ct_json_kv_uint(&j, "process", strs[i].proc);
    ct_json_kv_uint(&j, "pid", procs[strs[i].proc].pid);
    ct_json_kv_uint(&j, "device", strs[i].device);
    ct_json_kv_uint(&j, "stream", strs[i].stream);
    json_usage(&j, &strs[i].u);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  const ct_gap_detail *top = ct_gaps_top(c->g, &n);
  ct_json_key(&j, "gaps");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) json_gap(&j, &top[i], &procs[top[i].proc], 1);
  ct_json_end_array(&j);
  top = ct_gaps_top_stream(c->g, &n);
  ct_json_key(&j, "stream_gaps");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) json_gap(&j, &top[i], &procs[top[i].proc], 0);
  ct_json_end_array(&j);
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &n);
  ct_json_key(&j, "findings");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *f = &fs[i];
    ct_json_begin_object(&j);
    ct_json_kv_string(&j, "kind", finding_kinds[f->kind]);
    ct_json_kv_uint(&j, "process", f->proc);
    ct_json_kv_uint(&j, "device", f->device);
    ct_json_kv_string(&j, "what", f->what);
    ct_json_kv_uint(&j, "count", f->count);
    if (f->kind == CT_FIND_LAUNCH_BOUND) {
      ct_json_kv_uint(&j, "stretches", f->stretches);
      ct_json_kv_uint(&j, "longest_count", f->longest_count);
    }
    if (f->kind == CT_FIND_PAGEABLE_COPY || f->kind == CT_FIND_SYNC_COPY)
      ct_json_kv_uint(&j, "bytes", f->bytes);
    ct_json_kv_uint(&j, "gpu_ns", f->gpu_ns);
    ct_json_kv_uint(&j, "cpu_ns", f->cpu_ns);
    ct_json_kv_uint(&j, "first_ns", f->first_ns);
    ct_json_kv_uint(&j, "last_ns", f->last_ns);
    ct_json_kv_string(&j, "fix", f->fix);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  ct_json_kv_uint(&j, "late_activities", ct_gaps_late(c->g));
  ct_json_end_object(&j);
  ct_json_finish(&j);
}

/* ---- the command -------------------------------------------------------------------------- */

/* The value of option argv[*i] ("--opt=v" or "--opt v"); NULL when it has none. */
static const char *option_value(int argc, char **argv, int *i, const char *opt) {
  size_t n = strlen(opt);
  if (strncmp(argv[*i], opt, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
  return NULL;
}

static int bad(const char *what, const char *value) {
  fprintf(stderr, "cutrace gaps: %s '%s' (try: cutrace gaps --help)\n", what, value);
  return 2;
}

int cmd_gaps(int argc, char **argv) {
  gaps_cli c;
  memset(&c, 0, sizeof c);
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  char **files = calloc((size_t)argc + 1, sizeof *files);
  int nfiles = 0;
  if (!files) return 2;
  int rc = -1;
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i], *v;
    uint64_t x;
    static const char *const valued[] = {"--format", "--min-gap", "--launch-threshold", "--top",
                                         "--launch-bound-min", "--repeat-min", "--sync-work"};
    const char *matched = NULL;
    for (unsigned k = 0; k < sizeof valued / sizeof valued[0]; k++) {
      size_t n = strlen(valued[k]);
      if (!strncmp(a, valued[k], n) && (a[n] == 0 || a[n] == '=')) matched = valued[k];
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      rc = 0;
    } else if (!strcmp(a, "--summary")) {
      c.summary = 1;
    } else if (matched && !(v = option_value(argc, argv, &i, matched))) {
      rc = bad("missing value for", a);
    } else if (!matched && a[0] == '-' && a[1]) {
      rc = bad("unknown option", a);
    } else if (!matched) {
      files[nfiles++] = argv[i];
    } else if (!strncmp(a, "--format", 8)) {
      if (ct_parse_out_format(v, &c.fmt) < 0 || c.fmt == CT_OUT_CSV)
        rc = bad("--format takes text or json, not", v);
    } else if (!strncmp(a, "--min-gap", 9)) {
      if (parse_us(v, &o.min_gap_ns) < 0) rc = bad("--min-gap takes microseconds, not", v);
    } else if (!strncmp(a, "--launch-threshold", 18)) {
      if (parse_us(v, &o.launch_threshold_ns) < 0)
        rc = bad("--launch-threshold takes microseconds, not", v);
    } else if (!strncmp(a, "--sync-work", 11)) {
      if (parse_us(v, &o.sync_work_ns) < 0) rc = bad("--sync-work takes microseconds, not", v);
    } else if (!strncmp(a, "--top", 5)) {
      if (ct_parse_u64(v, &x) < 0 || x > 10000) rc = bad("--top takes a count up to 10000, not", v);
      else o.top = (unsigned)x;
    } else if (!strncmp(a, "--launch-bound-min", 18)) {
      if (ct_parse_u64(v, &x) < 0 || !x) rc = bad("--launch-bound-min takes a count >= 1, not", v);
      else o.launch_bound_min = x;
    } else if (!strncmp(a, "--repeat-min", 12)) {
      if (ct_parse_u64(v, &x) < 0 || !x) rc = bad("--repeat-min takes a count >= 1, not", v);
      else o.repeat_min = x;
    }
  }
  if (rc >= 0) {
    free(files);
    return rc;
  }
  if (c.summary && o.top < 1) o.top = 1;
  c.g = ct_gaps_new(&o);
  if (!c.g) {
    fprintf(stderr, "cutrace gaps: out of memory\n");
    free(files);
    return 2;
  }
  void (*saved_hook)(const char *, uint64_t) = ct_model_progress_hook;
  if (isatty(2) && !c.summary) ct_model_progress_hook = progress;
  char err[300];
  int nin = ct_expand_inputs(nfiles, files, add_input, &c, err, sizeof err);
  if (ct_model_progress_hook == progress) fputs("\r\033[K", stderr);
  ct_model_progress_hook = saved_hook;
  if (nin < 0) {
    fprintf(stderr, "cutrace gaps: %s\n", err);
    c.status = 2;
  } else if (c.summary) {
    print_summary(&c);
  } else if (c.fmt == CT_OUT_JSON) {
    print_json(&c, &o);
  } else {
    print_text(&c);
  }
  for (unsigned i = 0; i < c.ninputs; i++) free(c.inputs[i].path);
  free(c.inputs);
  ct_gaps_free(c.g);
  free(files);
  return c.status;
}
