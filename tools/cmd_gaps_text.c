/*
 * cutrace gaps, text output: per-device and per-stream usage tables, the largest gaps
 * with what each thread did, the stream waits, findings (the --summary lines:
 * cmd_gaps_summary.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli_select.h"
#include "cmd_gaps.h"
#include "identity.h"
#include "stacks.h"

/* ---- shared helpers for the writers ------------------------------------------------ */

/* The time a trace's relative times count from. */
uint64_t ct_gaps_trace_start(const ct_gaps_proc *p) {
  return p->start_ns && (!p->first_ns || p->start_ns <= p->first_ns) ? p->start_ns : p->first_ns;
}

/* Wall-clock time of host time t ("" when unknown). */
const char *ct_gaps_wall_clock(const ct_gaps_proc *p, uint64_t t, char *buf, size_t len) {
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


/* A process in a sentence (cmd_gaps.h). */
const char *ct_gaps_who(const ct_gaps_proc *p, char *buf, size_t len) {
  if (p->job.known & CT_JOB_RANK) return ct_proc_label(&p->job, p->pid, p->host, buf, len);
  snprintf(buf, len, "pid %llu", (unsigned long long)p->pid);
  return buf;
}

/* Whether any process has a known rank: tables then show "rank (pid)". */
static int any_rank(const ct_gaps_proc *procs, unsigned np) {
  for (unsigned i = 0; i < np; i++)
    if (procs[i].job.known & CT_JOB_RANK) return 1;
  return 0;
}

/* The process cell of a table: the pid, or "rank (pid)" when ranks are known. */
static void proc_cell(ct_table *t, const ct_gaps_proc *procs, unsigned np, unsigned proc,
                      int ranks) {
  const ct_gaps_proc *p = proc < np ? &procs[proc] : NULL;
  if (!ranks) ct_table_cell(t, "%llu", (unsigned long long)(p ? p->pid : 0));
  else if (p && (p->job.known & CT_JOB_RANK))
    ct_table_cell(t, "%llu (%llu)", (unsigned long long)p->job.rank, (unsigned long long)p->pid);
  else ct_table_cell(t, "- (%llu)", (unsigned long long)(p ? p->pid : 0));
}

/* ---- text ------------------------------------------------------------------------------ */


static void print_usage_table(const gaps_cli *c, int streams) {
  unsigned np, n;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  static const char *const dev_headers[] = {
      "pid", "device", "span", "busy", "busy%", "idle", "host_wait", "launch_ovh", "sync",
      "alloc", "other_strm", "tracer", "other", "ext_wait", "gaps"};
  const char *headers[15];
  memcpy(headers, dev_headers, sizeof headers);
  if (streams) headers[1] = "dev/stream";
  int ranks = any_rank(procs, np);
  if (ranks) headers[0] = "rank (pid)";
  ct_table *t = ct_table_new(streams ? "Per stream (idle while the stream had no work)"
                                     : "Per device (idle = no stream busy)",
                             15, headers, "lrrrrrrrrrrrrrr");
  if (!t) return;
  const ct_gaps_device *devs = streams ? NULL : ct_gaps_devices(c->g, &n);
  const ct_gaps_stream *strs = streams ? ct_gaps_streams(c->g, &n) : NULL;
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_usage *u = streams ? &strs[i].u : &devs[i].u;
    unsigned proc = streams ? strs[i].proc : devs[i].proc;
    char b[CT_GAP_NCAUSES + 3][24];
    ct_table_row(t);
    proc_cell(t, procs, np, proc, ranks);
    if (streams)
      ct_table_cell(t, "%llu/%llu", (unsigned long long)strs[i].device,
                    (unsigned long long)strs[i].stream);
    else
      ct_table_cell(t, "%llu %s", (unsigned long long)devs[i].device, devs[i].name ? devs[i].name : "");
    ct_table_cell(t, "%s", ct_fmt_duration(u->last_ns - u->first_ns, b[0], sizeof b[0]));
    ct_table_cell(t, "%s", ct_fmt_duration(u->busy_ns, b[1], sizeof b[1]));
    ct_table_cell(t, "%.1f%%", ct_gaps_pct(u->busy_ns, ct_gaps_observed_ns(u)));
    ct_table_cell(t, "%s", ct_fmt_duration(u->idle_ns, b[2], sizeof b[2]));
    for (int k = 0; k < CT_GAP_NCAUSES; k++)
      ct_table_cell(t, "%s", ct_fmt_duration(u->idle_by_cause[k], b[3 + k], sizeof b[3 + k]));
    ct_table_cell(t, "%llu", (unsigned long long)u->gaps);
  }
  ct_table_print(t, stdout, CT_OUT_TEXT);
  ct_table_free(t);
}

/* The operation that ended a gap, demangled (cmd_gaps.h). */
const char *ct_gaps_op_label(const ct_gap_detail *d, char *buf, size_t len) {
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
  printf(" (tracer %.1f%% of the gap", ct_gaps_pct(t->tracer_ns, dur));
  if (t->name) printf(", thread %llu", (unsigned long long)t->tid);
  printf(")%s\n", t->truncated ? " (history incomplete)" : "");
}

#define TEXT_FRAMES 3 /* frames of an ending call's stack shown, from its call site out */

/* The largest stream gaps of one cause (a stream waiting on something else), under
 * title; nothing when there is none. */
static void print_stream_waits(const gaps_cli *c, enum ct_gap_cause cause, const char *title) {
  unsigned n, np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  const ct_gap_detail *ts = ct_gaps_top_stream(c->g, &n);
  int any = 0;
  for (unsigned i = 0; i < n; i++) {
    if (ts[i].cause != cause) continue;
    if (!any++) printf("\n%s\n", title);
    char b1[24], b2[24], w[400];
    printf("  %s on device %llu stream %llu at +%s (%s)\n",
           ct_fmt_duration(ts[i].end_ns - ts[i].start_ns, b1, sizeof b1),
           (unsigned long long)ts[i].device, (unsigned long long)ts[i].stream,
           ct_fmt_duration(ts[i].start_ns - ct_gaps_trace_start(&procs[ts[i].proc]), b2, sizeof b2),
           ct_gaps_who(&procs[ts[i].proc], w, sizeof w));
  }
}

/* The ending call's range and the first frames of its stack from the call site out. */
static void print_ending_call(const ct_gap_call *c) {
  if (!c->known || (!c->range && !c->nframes)) return;
  printf("    call %s%s", c->api ? c->api : "?", c->nested ? " (the kernel was launched inside it)" : "");
  if (c->range) printf(" in range \"%s\"", c->range);
  putchar('\n');
  unsigned first = c->site < c->nframes ? c->site : 0;
  for (unsigned k = first; k < c->nframes && k < first + TEXT_FRAMES; k++) {
    const ct_gap_frame *fr = &c->frames[k];
    const char *base = strrchr(fr->file, '/');
    if (ct_frame_is_python(fr->note)) { /* file.py:LINE qualname */
      printf("      %s %s:%u %s\n", k == first ? "at" : "from", base ? base + 1 : fr->file, fr->line,
             fr->function);
      continue;
    }
    printf("      %s %s", k == first ? "at" : "from", fr->function);
    if (*fr->file && fr->line) printf(" (%s:%u)", base ? base + 1 : fr->file, fr->line);
    if (fr->note) printf(" (%s)", fr->note);
    putchar('\n');
  }
  if (c->nframes > first + TEXT_FRAMES)
    printf("      (%u more frame%s: --format json)\n", c->nframes - first - TEXT_FRAMES,
           c->nframes - first - TEXT_FRAMES == 1 ? "" : "s");
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
    char b1[24], b2[24], b3[24], wall[64], name[512], w[400];
    ct_gaps_wall_clock(p, d->start_ns, wall, sizeof wall);
    printf("%2u. %s idle on device %llu of %s, at +%s%s%s%s: %s", i + 1,
           ct_fmt_duration(d->end_ns - d->start_ns, b1, sizeof b1), (unsigned long long)d->device,
           ct_gaps_who(p, w, sizeof w), ct_fmt_duration(d->start_ns - ct_gaps_trace_start(p), b2, sizeof b2),
           *wall ? " (" : "", wall, *wall ? ")" : "",
           ct_gap_cause_name(d->cause));
    if (d->inside_call) /* the CPU was late inside one call, not outside CUDA */
      printf(" (inside %s: %s of the gap)", d->inside_call, ct_fmt_duration(d->inside_ns, b3, sizeof b3));
    printf("\n");
    printf("    host time %llu..%llu ns\n", (unsigned long long)d->start_ns,
           (unsigned long long)d->end_ns);
    if (d->has_call) {
      int64_t lead = (int64_t)d->call_begin_ns - (int64_t)d->start_ns;
      printf("    ended by %s on stream %llu: %s by thread %llu, call began %s%s %s the gap started\n",
             ct_gaps_op_label(d, name, sizeof name), (unsigned long long)d->op_stream,
             d->api ? d->api : "?", (unsigned long long)d->tid, lead < 0 ? "" : "",
             ct_fmt_duration((uint64_t)(lead < 0 ? -lead : lead), b3, sizeof b3),
             lead < 0 ? "before" : "after");
    } else {
      printf("    ended by %s on stream %llu (its call is not in the trace)\n",
             ct_gaps_op_label(d, name, sizeof name), (unsigned long long)d->op_stream);
    }
    print_ending_call(&d->ending);
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
      printf("%s: outside CUDA %.1f%%", t->launching ? " (launching)" : "", ct_gaps_pct(outside, dur));
      if (t->ncalls) printf(", in %llu call%s %.1f%%", (unsigned long long)t->ncalls,
                            t->ncalls == 1 ? "" : "s", ct_gaps_pct(t->in_cuda_ns, dur));
      if (t->tracer_ns) printf(", tracer %.1f%%", ct_gaps_pct(t->tracer_ns, dur));
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
  print_stream_waits(c, CT_GAP_OTHER_STREAM, "Largest waits of a stream on another stream");
  print_stream_waits(c, CT_GAP_EXTERNAL_WAIT,
                     "Largest waits of a stream on external semaphores (signalled outside CUDA: "
                     "Vulkan, another process; look at the producer: why it signals late)");
}

/* Device gaps grouped by what ended them: cause, ending call, call site (the first
 * `top` rows; all of them in JSON). */
static void print_enders(const gaps_cli *c, unsigned top) {
  unsigned n, np;
  const ct_gaps_ender *es = ct_gaps_enders(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  if (!n || !top) return;
  int ranks = any_rank(procs, np);
  const char *const headers[] = {ranks ? "rank (pid)" : "pid", "device", "cause", "ending call",
                                 "call site", "gaps", "idle", "median", "share", "in call"};
  ct_table *t = ct_table_new("Idle by what ended it (device gaps by cause, ending call and call "
                             "site; most idle first)", 10, headers, "lrlllrrrrr");
  if (!t) return;
  unsigned shown = n < top ? n : top;
  for (unsigned i = 0; i < shown; i++) {
    const ct_gaps_ender *e = &es[i];
    char b[3][24];
    ct_table_row(t);
    proc_cell(t, procs, np, e->proc, ranks);
    ct_table_cell(t, "%llu", (unsigned long long)e->device);
    ct_table_cell(t, "%s", ct_gap_cause_name(e->cause));
    ct_table_cell(t, "%s%s", e->api ? e->api : "(call not in the trace)", e->nested ? " (nested launch)" : "");
    ct_table_cell(t, "%s", e->site ? e->site : "-");
    ct_table_cell(t, "%llu", (unsigned long long)e->count);
    ct_table_cell(t, "%s", ct_fmt_duration(e->idle_ns, b[0], sizeof b[0]));
    ct_table_cell(t, "%s", ct_fmt_duration(e->median_ns, b[1], sizeof b[1]));
    ct_table_cell(t, "%.1f%%", ct_gaps_pct(e->idle_ns, e->device_idle_ns));
    ct_table_cell(t, "%s", ct_fmt_duration(e->incall_ns, b[2], sizeof b[2]));
  }
  putchar('\n');
  ct_table_print(t, stdout, CT_OUT_TEXT);
  ct_table_free(t);
  printf("(share: of the device's idle time; in call: the ending call's time inside the gaps");
  if (n > shown) printf("; %u more rows: --top or --format json", n - shown);
  printf(")\n");
}

/* After a finding's saving, when it adds less than that to the findings' total: what it
 * adds and why (docs/gaps.md, "Findings add up"). */
static void print_adds(const ct_gaps_finding *f) {
  if (f->adds_ns >= f->saving_ns) return;
  uint64_t beyond = f->saving_ns - f->not_idle_ns - f->overlap_ns - f->adds_ns;
  char b[24];
  printf("; adds %s to the total", ct_fmt_duration(f->adds_ns, b, sizeof b));
  const char *sep = ": ";
  if (f->not_idle_ns) {
    printf("%s%s of it not idle time in the device's gaps", sep, ct_fmt_duration(f->not_idle_ns, b, sizeof b));
    sep = ", ";
  }
  if (f->overlap_ns) {
    printf("%s%s counted by the findings above", sep, ct_fmt_duration(f->overlap_ns, b, sizeof b));
    sep = ", ";
  }
  if (beyond) printf("%s%s beyond the device's idle time left", sep, ct_fmt_duration(beyond, b, sizeof b));
}

static void print_findings(const gaps_cli *c) {
  unsigned n, np;
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  printf("\nFindings (by what each adds to the total beyond the ones above it, most first)\n");
  if (!n) printf("  (none)\n");
  uint64_t total_saving, total_idle;
  unsigned ndev = ct_gaps_findings_total(c->g, &total_saving, &total_idle);
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *f = &fs[i];
    const ct_gaps_proc *p = &procs[f->proc];
    char b1[24], b2[24], b3[24], b4[24], w[400];
    if (f->kind == CT_FIND_EXPOSED_COMM) /* busy time: not in the idle total */
      printf("  - %s device %llu (saves up to %s of GPU time, busy and not idle: not in the "
             "total): ", ct_gaps_who(p, w, sizeof w), (unsigned long long)f->device,
             ct_fmt_duration(f->saving_ns, b1, sizeof b1));
    else if (f->saving_ns || f->lower_bound) {
      printf("  - %s device %llu (saves %s %s%s", ct_gaps_who(p, w, sizeof w),
             (unsigned long long)f->device, f->lower_bound ? "at least" : "up to",
             ct_fmt_duration(f->saving_ns, b1, sizeof b1),
             f->not_idle_ns ? "" : " of idle"); /* part of it is busy time or outside the span */
      print_adds(f);
      printf("): ");
    } else /* e.g. syncs whose time was all GPU work: their cost is the drained queue after */
      printf("  - %s device %llu (no idle saving estimated): ", ct_gaps_who(p, w, sizeof w),
             (unsigned long long)f->device);
    switch (f->kind) {
    case CT_FIND_SLOW_CALL:
      if (f->pattern && !strcmp(f->pattern, "starts_gaps")) { /* it ended none of them */
        printf("%s%s%s held the launching thread %s, %.1f%% of the device's idle time, at the "
               "start of %llu device gap%s: the GPU went idle while it ran and a later call "
               "ended the gap (%s in the call a gap on average): %s\n",
               f->what, f->site ? " at " : "", f->site ? f->site : "",
               ct_fmt_duration(f->after_launch_ns, b1, sizeof b1),
               ct_gaps_pct(f->after_launch_ns, f->device_idle_ns), (unsigned long long)f->after_launch_gaps,
               f->after_launch_gaps == 1 ? "" : "s", ct_fmt_duration(f->cpu_ns, b2, sizeof b2), f->fix);
        break;
      }
      /* each share beside the time it is of (the gaps' one is the table's share column) */
      printf("%s%s%s held the launching thread %s, %.1f%% of the device's idle time, inside the "
             "%llu device gap%s it ended (%s idle: %.1f%% of the device's idle time)",
             f->what, f->site ? " at " : "", f->site ? f->site : "",
             ct_fmt_duration(f->idle_ns, b1, sizeof b1), ct_gaps_pct(f->idle_ns, f->device_idle_ns),
             (unsigned long long)f->count, f->count == 1 ? "" : "s",
             ct_fmt_duration(f->gaps_idle_ns, b2, sizeof b2),
             ct_gaps_pct(f->gaps_idle_ns, f->device_idle_ns));
      if (f->after_launch_gaps) /* a gap began while it still ran after its launch */
        printf(", and %s more, %.1f%% of the device's idle time, after its own launch in the %llu "
               "gap%s that began while it still ran", ct_fmt_duration(f->after_launch_ns, b4, sizeof b4),
               ct_gaps_pct(f->after_launch_ns, f->device_idle_ns), (unsigned long long)f->after_launch_gaps,
               f->after_launch_gaps == 1 ? "" : "s");
      printf("; median %s in the call a gap", ct_fmt_duration(f->cpu_ns, b3, sizeof b3));
      if (f->count > 1)
        printf(", the first call %s, the others' median %s",
               ct_fmt_duration(f->first_call_ns, b1, sizeof b1),
               ct_fmt_duration(f->rest_median_ns, b4, sizeof b4));
      printf("%s: %s%s\n", f->nested ? " (the kernel was launched inside it)" : "",
             f->pattern && !strcmp(f->pattern, "every_call") ? "every call was slow: "
             : f->pattern && !strcmp(f->pattern, "one_call") ? "one slow call: " : "", f->fix);
      break;
    case CT_FIND_HOST_BOUND:
      printf("the CPU was busy outside CUDA for %s, %.1f%% of the device's idle time, in %llu "
             "host_wait gap%s (%s idle: %.1f%% of the device's idle time; median gap %s) before the "
             "launch%s %s%s%s%s",
             ct_fmt_duration(f->idle_ns, b1, sizeof b1), ct_gaps_pct(f->idle_ns, f->device_idle_ns),
             (unsigned long long)f->count, f->count == 1 ? "" : "s",
             ct_fmt_duration(f->gaps_idle_ns, b2, sizeof b2),
             ct_gaps_pct(f->gaps_idle_ns, f->device_idle_ns),
             ct_fmt_duration(f->rest_median_ns, b3, sizeof b3), f->count == 1 ? "" : "es",
             f->site ? "at " : "by ", f->site ? f->site : f->what, f->site ? " by " : "", f->site ? f->what : "");
      if (f->nested) printf(" (the kernel was launched inside it)");
      if (f->tid && f->thread_name) printf("; thread %llu \"%s\"", (unsigned long long)f->tid, f->thread_name);
      else if (f->tid) printf("; thread %llu", (unsigned long long)f->tid);
      else printf("; several threads");
      printf(" spent %.1f%% of those gaps outside CUDA calls and %s in them: %s\n",
             ct_gaps_pct(f->idle_ns, f->gaps_idle_ns), ct_fmt_duration(f->cpu_ns, b4, sizeof b4), f->fix);
      break;
    case CT_FIND_LAUNCH_BOUND:
      printf("%llu kernels in %llu stretch%s ran no longer than their launch calls (GPU %s, calls %s); "
             "longest: %llu kernels from +%s to +%s. %s\n",
             (unsigned long long)f->count, (unsigned long long)f->stretches,
             f->stretches == 1 ? "" : "es",
             ct_fmt_duration(f->gpu_ns, b1, sizeof b1), ct_fmt_duration(f->cpu_ns, b2, sizeof b2),
             (unsigned long long)f->longest_count,
             ct_fmt_duration(f->first_ns - ct_gaps_trace_start(p), b3, sizeof b3),
             ct_fmt_duration(f->last_ns - ct_gaps_trace_start(p), b4, sizeof b4), f->fix);
      break;
    case CT_FIND_PAGEABLE_COPY:
    case CT_FIND_SYNC_COPY:
      printf("%llu %s %s copies (%s, GPU %s, calls %s", (unsigned long long)f->count,
             f->kind == CT_FIND_PAGEABLE_COPY ? "pageable" : "synchronous", f->what,
             ct_fmt_bytes(f->bytes, b1, sizeof b1), ct_fmt_duration(f->gpu_ns, b2, sizeof b2),
             ct_fmt_duration(f->cpu_ns, b3, sizeof b3));
      if (f->kind == CT_FIND_PAGEABLE_COPY && f->lower_bound)
        printf("; from pinned memory the transfers would be faster too, by how much unmeasured: "
               "no pinned copy of the same direction in the trace");
      else if (f->kind == CT_FIND_PAGEABLE_COPY)
        printf("; at the rate of this trace's pinned copies the transfers would take %s less",
               ct_fmt_duration(f->transfer_saving_ns, b4, sizeof b4));
      printf("): %s\n", f->fix);
      break;
    case CT_FIND_LITTLE_SYNC:
      printf("%llu syncs (%s) waited on little GPU work: %s in the calls for %s of GPU work",
             (unsigned long long)f->count, f->what ? f->what : "?",
             ct_fmt_duration(f->cpu_ns, b1, sizeof b1), ct_fmt_duration(f->gpu_ns, b2, sizeof b2));
      if (f->sync_gaps) /* the drained queue: the gaps their returns opened */
        printf("; their returns opened %llu device gap%s (%s idle, %s of it after the syncs returned)",
               (unsigned long long)f->sync_gaps, f->sync_gaps == 1 ? "" : "s",
               ct_fmt_duration(f->idle_ns, b3, sizeof b3), ct_fmt_duration(f->sync_after_ns, b4, sizeof b4));
      printf(": %s\n", f->fix);
      break;
    case CT_FIND_EXPOSED_COMM:
      printf("%llu communication kernels left %s of communication alone on the device (no compute "
             "kernel running), from +%s to +%s: %s\n", (unsigned long long)f->count,
             ct_fmt_duration(f->gpu_ns, b1, sizeof b1),
             ct_fmt_duration(f->first_ns - ct_gaps_trace_start(p), b2, sizeof b2),
             ct_fmt_duration(f->last_ns - ct_gaps_trace_start(p), b3, sizeof b3), f->fix);
      break;
    case CT_FIND_ALLOC:
      printf("%llu gaps (%s idle) spent mostly allocating and freeing memory (%s, %s in those "
             "calls), from +%s to +%s: %s\n",
             (unsigned long long)f->count, ct_fmt_duration(f->idle_ns, b1, sizeof b1), f->what,
             ct_fmt_duration(f->cpu_ns, b2, sizeof b2),
             ct_fmt_duration(f->first_ns - ct_gaps_trace_start(p), b3, sizeof b3),
             ct_fmt_duration(f->last_ns - ct_gaps_trace_start(p), b4, sizeof b4), f->fix);
      break;
    case CT_FIND_GRAPH_CANDIDATE:
      printf("thread %llu stream %llu repeated %llu kernel%s %llu times (%s): GPU %s, idle %s "
             "inside the instances (%.1f%% of their %s) waiting on launches: %s\n",
             (unsigned long long)f->tid, (unsigned long long)f->stream,
             (unsigned long long)f->length, f->length == 1 ? "" : "s", (unsigned long long)f->count,
             f->what,
             ct_fmt_duration(f->gpu_ns, b1, sizeof b1), ct_fmt_duration(f->idle_ns, b2, sizeof b2),
             f->span_ns ? 100.0 * (double)f->idle_ns / (double)f->span_ns : 0.0,
             ct_fmt_duration(f->span_ns, b3, sizeof b3), f->fix);
      break;
    }
  }
  if (n) {
    char b1[24], b2[24];
    printf("Together the findings save up to %s of the %s idle (%.1f%%", ct_fmt_duration(total_saving, b1, sizeof b1),
           ct_fmt_duration(total_idle, b2, sizeof b2), ct_gaps_pct(total_saving, total_idle));
    if (ndev > 1) printf(", summed over %u devices", ndev);
    printf("): each finding adds the idle part of its saving less what the findings above it on "
           "its device count, at most the device's idle time left\n");
  }
}

/* Communication against compute per device, when some device ran communication kernels. */
static void print_comm_table(const gaps_cli *c) {
  unsigned n, np, any = 0;
  const ct_gaps_device *devs = ct_gaps_devices(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  for (unsigned i = 0; i < n; i++) any |= devs[i].comm.comm_ns != 0;
  if (!any) return;
  int ranks = any_rank(procs, np);
  const char *const headers[] = {ranks ? "rank (pid)" : "pid", "device", "comm kernels", "comm",
                                 "overlapped", "overlap%", "exposed comm"};
  ct_table *t = ct_table_new("Communication (NCCL/NVSHMEM kernels) against compute kernels",
                             7, headers, "lrrrrrr");
  if (!t) return;
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_comm *m = &devs[i].comm;
    if (!m->comm_ns) continue;
    char b[3][24];
    ct_table_row(t);
    proc_cell(t, procs, np, devs[i].proc, ranks);
    ct_table_cell(t, "%llu", (unsigned long long)devs[i].device);
    ct_table_cell(t, "%llu", (unsigned long long)m->comm_kernels);
    ct_table_cell(t, "%s", ct_fmt_duration(m->comm_ns, b[0], sizeof b[0]));
    ct_table_cell(t, "%s", ct_fmt_duration(m->overlap_ns, b[1], sizeof b[1]));
    ct_table_cell(t, "%.1f%%", ct_gaps_pct(m->overlap_ns, m->comm_ns));
    ct_table_cell(t, "%s", ct_fmt_duration(m->exposed_ns, b[2], sizeof b[2]));
  }
  putchar('\n');
  ct_table_print(t, stdout, CT_OUT_TEXT);
  ct_table_free(t);
  printf("(overlap%%: the share of communication time during which compute kernels ran too; "
         "exposed: communication alone on the device)\n");
  int s = ct_gaps_comm_straggler(c->g);
  if (s >= 0) {
    uint64_t max = 0;
    for (unsigned i = 0; i < n; i++) max = devs[i].comm.comm_ns > max ? devs[i].comm.comm_ns : max;
    char b1[24], b2[24], w[400] = "pid 0";
    if (devs[s].proc < np) ct_gaps_who(&procs[devs[s].proc], w, sizeof w);
    printf("likely straggler: device %llu of %s spent the least time in communication "
           "kernels (%s, up to %s elsewhere): the others waited for it inside collectives; "
           "compare its compute and host time\n",
           (unsigned long long)devs[s].device, w,
           ct_fmt_duration(devs[s].comm.comm_ns, b1, sizeof b1), ct_fmt_duration(max, b2, sizeof b2));
  }
}

/* The full text report (cmd_gaps.h). */
void ct_gaps_print_text(const gaps_cli *c) {
  unsigned np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  cli_selection_print(stdout);
  for (unsigned i = 0; i < np; i++) {
    char b[24], w[400];
    printf("%s: %s: %s\n", procs[i].path,
           ct_proc_label(&procs[i].job, procs[i].pid, procs[i].host, w, sizeof w), procs[i].cmdline);
    if (procs[i].pauses && procs[i].pause_why && !strcmp(procs[i].pause_why, "filter"))
      printf("  only the --from/--to window: %s left out before and after it%s; time between GPU "
             "work that touches it is left out of span%% and idle\n",
             ct_fmt_duration(procs[i].paused_ns, b, sizeof b),
             procs[i].pauses > 2 ? " and the tracer's own pauses" : "");
    else if (procs[i].pauses)
      printf("  recorded in windows: the tracer paused %llu times (%s), %s in all; time between "
             "GPU work that touches a pause is not idle but unrecorded, left out of span%% and idle\n",
             (unsigned long long)procs[i].pauses, procs[i].pause_why ? procs[i].pause_why : "?",
             ct_fmt_duration(procs[i].paused_ns, b, sizeof b));
  }
  putchar('\n');
  ct_gaps_ranks rk;
  if (ct_gaps_rank_compare(c->g, &rk) < 0)
    fprintf(stderr, "cutrace gaps: out of memory: no per-rank comparison\n");
  else if (rk.n) {
    ct_gaps_print_ranks_text(&rk);
    putchar('\n');
  }
  ct_gaps_ranks_free(&rk);
  print_usage_table(c, 0);
  putchar('\n');
  print_usage_table(c, 1);
  print_comm_table(c);
  print_enders(c, c->top);
  print_top_gaps(c);
  print_findings(c);
  if (ct_gaps_late(c->g))
    printf("\nnote: %llu GPU activities arrived after the time they cover had been analysed; "
           "idle time near them may be overstated\n", (unsigned long long)ct_gaps_late(c->g));
  if (ct_gaps_waits_cut(c->g))
    printf("%snote: finalisation went past %llu calls still waiting for their GPU records (a "
           "device held 65,536 open busy intervals, or the file lost records); work of theirs "
           "that came later is counted late\n",
           ct_gaps_late(c->g) ? "" : "\n", (unsigned long long)ct_gaps_waits_cut(c->g));
}
