/*
 * cutrace gaps, JSON output (schema in docs/gaps.md).
 */
#include <stdio.h>
#include <string.h>

#include "cli_select.h"
#include "cmd_gaps.h"
#include "identity.h"

void ct_gaps_json_causes(ct_json *j, const char *key, const uint64_t *v, const char *suffix) {
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
  ct_json_kv_uint(j, "unrecorded_ns", u->unrecorded_ns);
  ct_json_kv_uint(j, "activities", u->activities);
  ct_json_kv_uint(j, "gaps", u->gaps);
  ct_gaps_json_causes(j, "idle", u->idle_by_cause, "_ns");
  ct_gaps_json_causes(j, "gap_counts", u->gaps_by_cause, "");
}

/* The call that ended a gap: entry point, thread, innermost range, stack (null when the
 * call is not in the trace). */
static void json_ending_call(ct_json *j, const ct_gap_call *c) {
  ct_json_key(j, "ending_call");
  if (!c->known) {
    ct_json_null(j);
    return;
  }
  ct_json_begin_object(j);
  ct_json_kv_string(j, "api", c->api);
  ct_json_kv_uint(j, "tid", c->tid);
  ct_json_kv_uint(j, "corr", c->corr);
  ct_json_kv_uint(j, "begin_ns", c->begin_ns);
  ct_json_kv_bool(j, "nested", c->nested);
  ct_json_kv_string(j, "range", c->range);
  if (c->range) {
    ct_json_kv_uint(j, "range_begin_ns", c->range_begin_ns);
    ct_json_kv_uint(j, "range_end_ns", c->range_end_ns);
  }
  ct_json_kv_uint(j, "site_index", c->site);
  ct_json_kv_string(j, "callsite", c->callsite);
  ct_json_key(j, "stack");
  ct_json_begin_array(j);
  for (unsigned k = 0; k < c->nframes; k++) {
    ct_json_begin_object(j);
    ct_json_kv_string(j, "function", c->frames[k].function);
    ct_json_kv_string(j, "file", c->frames[k].file);
    ct_json_kv_uint(j, "line", c->frames[k].line);
    ct_json_kv_string(j, "module", c->frames[k].module);
    if (c->frames[k].note) ct_json_kv_string(j, "note", c->frames[k].note);
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_end_object(j);
}

/* "rank": the process's rank in a distributed job, null when unknown. */
static void json_rank(ct_json *j, const ct_gaps_proc *p) {
  ct_json_key(j, "rank");
  if (p->job.known & CT_JOB_RANK) ct_json_uint(j, p->job.rank);
  else ct_json_null(j);
}

static void json_gap(ct_json *j, const ct_gap_detail *d, const ct_gaps_proc *p, int with_threads) {
  char name[512];
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "process", d->proc);
  ct_json_kv_uint(j, "pid", p->pid);
  json_rank(j, p);
  ct_json_kv_uint(j, "device", d->device);
  ct_json_kv_uint(j, "stream", d->stream == UINT64_MAX ? d->op_stream : d->stream);
  ct_json_kv_string(j, "scope", d->stream == UINT64_MAX ? "device" : "stream");
  ct_json_kv_uint(j, "start_ns", d->start_ns);
  ct_json_kv_uint(j, "end_ns", d->end_ns);
  ct_json_kv_uint(j, "dur_ns", d->end_ns - d->start_ns);
  ct_json_kv_uint(j, "rel_ns", d->start_ns - ct_gaps_trace_start(p));
  char wall[64];
  if (*ct_gaps_wall_clock(p, d->start_ns, wall, sizeof wall)) ct_json_kv_string(j, "wall_clock", wall);
  ct_json_kv_string(j, "cause", ct_gap_cause_name(d->cause));
  ct_json_key(j, "inside_call");
  if (d->inside_call) {
    ct_json_begin_object(j);
    ct_json_kv_string(j, "api", d->inside_call);
    ct_json_kv_uint(j, "ns", d->inside_ns);
    ct_json_end_object(j);
  } else {
    ct_json_null(j);
  }
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
  json_ending_call(j, &d->ending);
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

/* "share": part of whole as a fraction (4 decimals), 0 when whole is 0. */
static void json_share(ct_json *j, uint64_t part, uint64_t whole) {
  ct_json_kv_double(j, "share", whole ? (double)part / (double)whole : 0.0, 4);
}

const char *const ct_gaps_finding_kinds[] = {"launch_bound", "pageable_copy", "sync_copy",
                                            "sync_little_work", "exposed_comm",
                                            "graph_candidate", "alloc_in_loop",
                                            "slow_launch_call", "host_bound_launch"};

/* The JSON document (cmd_gaps.h). */
void ct_gaps_print_json(const gaps_cli *c, const ct_gaps_options *o) {
  ct_json j;
  ct_json_init(&j, stdout, 1);
  unsigned n, np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  ct_json_begin_object(&j);
  ct_json_kv_string(&j, "schema", "cutrace-gaps/1");
  cli_selection_json(&j);
  ct_json_key(&j, "options");
  ct_json_begin_object(&j);
  ct_json_kv_uint(&j, "min_gap_ns", o->min_gap_ns);
  ct_json_kv_uint(&j, "launch_threshold_ns", o->launch_threshold_ns);
  ct_json_kv_uint(&j, "top", o->top);
  ct_json_kv_uint(&j, "launch_bound_min", o->launch_bound_min);
  ct_json_kv_uint(&j, "repeat_min", o->repeat_min);
  ct_json_kv_uint(&j, "sync_work_ns", o->sync_work_ns);
  ct_json_kv_uint(&j, "graph_min", o->graph_min);
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
    ct_json_job(&j, &procs[i].job);
    ct_json_kv_string(&j, "cmdline", procs[i].cmdline);
    ct_json_kv_uint(&j, "start_ns", ct_gaps_trace_start(&procs[i]));
    ct_json_kv_uint(&j, "realtime_ns", procs[i].realtime_ns);
    ct_json_kv_uint(&j, "pauses", procs[i].pauses);
    ct_json_kv_uint(&j, "paused_ns", procs[i].paused_ns);
    if (procs[i].pause_why) ct_json_kv_string(&j, "pause_why", procs[i].pause_why);
    else {
      ct_json_key(&j, "pause_why");
      ct_json_null(&j);
    }
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
    json_rank(&j, &procs[devs[i].proc]);
    ct_json_kv_uint(&j, "device", devs[i].device);
    ct_json_kv_string(&j, "name", devs[i].name);
    json_usage(&j, &devs[i].u);
    ct_json_key(&j, "comm");
    ct_json_begin_object(&j);
    ct_json_kv_uint(&j, "kernels", devs[i].comm.comm_kernels);
    ct_json_kv_uint(&j, "comm_ns", devs[i].comm.comm_ns);
    ct_json_kv_uint(&j, "overlap_ns", devs[i].comm.overlap_ns);
    ct_json_kv_uint(&j, "exposed_ns", devs[i].comm.exposed_ns);
    ct_json_end_object(&j);
    ct_json_kv_uint(&j, "findings_saving_ns", devs[i].findings_ns);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  int straggler = ct_gaps_comm_straggler(c->g);
  ct_json_key(&j, "comm_straggler"); /* index into devices, null when none */
  if (straggler >= 0) ct_json_uint(&j, (uint64_t)straggler);
  else ct_json_null(&j);
  ct_json_key(&j, "comm_straggler_rank"); /* its process's rank, null when none or unknown */
  if (straggler >= 0 && (procs[devs[straggler].proc].job.known & CT_JOB_RANK))
    ct_json_uint(&j, procs[devs[straggler].proc].job.rank);
  else ct_json_null(&j);
  ct_gaps_ranks rk;
  if (ct_gaps_rank_compare(c->g, &rk) < 0)
    fprintf(stderr, "cutrace gaps: out of memory: no per-rank comparison\n");
  ct_gaps_json_ranks(&j, &rk);
  ct_gaps_ranks_free(&rk);
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
  const ct_gaps_ender *es = ct_gaps_enders(c->g, &n);
  ct_json_key(&j, "idle_by_ending_call");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_ender *e = &es[i];
    ct_json_begin_object(&j);
    ct_json_kv_uint(&j, "process", e->proc);
    ct_json_kv_uint(&j, "pid", e->proc < np ? procs[e->proc].pid : 0);
    if (e->proc < np) json_rank(&j, &procs[e->proc]);
    ct_json_kv_uint(&j, "device", e->device);
    ct_json_kv_string(&j, "cause", ct_gap_cause_name(e->cause));
    ct_json_kv_string(&j, "api", e->api);
    ct_json_kv_bool(&j, "nested", e->nested);
    ct_json_kv_string(&j, "callsite", e->site);
    ct_json_kv_uint(&j, "count", e->count);
    ct_json_kv_uint(&j, "idle_ns", e->idle_ns);
    ct_json_kv_uint(&j, "median_ns", e->median_ns);
    json_share(&j, e->idle_ns, e->device_idle_ns);
    ct_json_kv_uint(&j, "in_call_ns", e->incall_ns);
    ct_json_kv_uint(&j, "first_ns", e->first_ns);
    ct_json_kv_uint(&j, "last_ns", e->last_ns);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &n);
  ct_json_key(&j, "findings");
  ct_json_begin_array(&j);
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *f = &fs[i];
    ct_json_begin_object(&j);
    ct_json_kv_string(&j, "kind", ct_gaps_finding_kinds[f->kind]);
    ct_json_kv_uint(&j, "process", f->proc);
    ct_json_kv_uint(&j, "device", f->device);
    ct_json_kv_string(&j, "what", f->what);
    ct_json_kv_uint(&j, "count", f->count);
    ct_json_kv_uint(&j, "saving_ns", f->saving_ns);
    ct_json_kv_uint(&j, "overlap_ns", f->overlap_ns);
    ct_json_kv_uint(&j, "not_idle_ns", f->not_idle_ns);
    ct_json_kv_uint(&j, "adds_ns", f->adds_ns);
    if (f->kind == CT_FIND_SLOW_CALL) {
      ct_json_kv_string(&j, "callsite", f->site);
      ct_json_kv_bool(&j, "nested", f->nested);
      ct_json_kv_string(&j, "pattern", f->pattern);
      ct_json_kv_uint(&j, "idle_ns", f->idle_ns);
      ct_json_kv_uint(&j, "median_ns", f->cpu_ns);
      ct_json_kv_uint(&j, "first_call_ns", f->first_call_ns);
      ct_json_kv_uint(&j, "rest_median_ns", f->rest_median_ns);
      ct_json_kv_uint(&j, "gaps_idle_ns", f->gaps_idle_ns);
      ct_json_kv_uint(&j, "device_idle_ns", f->device_idle_ns);
      /* starts_gaps: its time at the start of gaps (it ended none) */
      json_share(&j, f->pattern && !strcmp(f->pattern, "starts_gaps") ? f->after_launch_ns : f->idle_ns,
                 f->device_idle_ns);
      ct_json_kv_uint(&j, "after_launch_ns", f->after_launch_ns);
      ct_json_kv_uint(&j, "after_launch_gaps", f->after_launch_gaps);
    }
    if (f->kind == CT_FIND_HOST_BOUND) {
      ct_json_kv_string(&j, "callsite", f->site);
      ct_json_kv_bool(&j, "nested", f->nested);
      ct_json_kv_uint(&j, "idle_ns", f->idle_ns);
      ct_json_kv_uint(&j, "gap_median_ns", f->rest_median_ns);
      ct_json_kv_uint(&j, "gaps_idle_ns", f->gaps_idle_ns);
      ct_json_kv_uint(&j, "device_idle_ns", f->device_idle_ns);
      json_share(&j, f->idle_ns, f->device_idle_ns);
      ct_json_key(&j, "tid");
      if (f->tid) ct_json_uint(&j, f->tid);
      else ct_json_null(&j);
      ct_json_kv_string(&j, "thread", f->thread_name);
    }
    if (f->kind == CT_FIND_LAUNCH_BOUND) {
      ct_json_kv_uint(&j, "stretches", f->stretches);
      ct_json_kv_uint(&j, "longest_count", f->longest_count);
    }
    if (f->kind == CT_FIND_PAGEABLE_COPY || f->kind == CT_FIND_SYNC_COPY)
      ct_json_kv_uint(&j, "bytes", f->bytes);
    if (f->kind == CT_FIND_PAGEABLE_COPY) {
      ct_json_kv_uint(&j, "transfer_saving_ns", f->transfer_saving_ns);
      ct_json_kv_bool(&j, "saving_lower_bound", f->lower_bound);
    }
    if (f->kind == CT_FIND_ALLOC) ct_json_kv_uint(&j, "idle_ns", f->idle_ns);
    if (f->kind == CT_FIND_LITTLE_SYNC) {
      ct_json_kv_uint(&j, "sync_gaps", f->sync_gaps);
      ct_json_kv_uint(&j, "idle_ns", f->idle_ns);
      ct_json_kv_uint(&j, "idle_after_ns", f->sync_after_ns);
    }
    if (f->kind == CT_FIND_GRAPH_CANDIDATE) {
      ct_json_kv_uint(&j, "tid", f->tid);
      ct_json_kv_uint(&j, "stream", f->stream);
      ct_json_kv_uint(&j, "length", f->length);
      ct_json_kv_uint(&j, "idle_ns", f->idle_ns);
      ct_json_kv_uint(&j, "span_ns", f->span_ns);
      ct_json_kv_uint(&j, "idle_in_calls_ns", f->in_calls_ns);
    }
    ct_json_kv_uint(&j, "gpu_ns", f->gpu_ns);
    ct_json_kv_uint(&j, "cpu_ns", f->cpu_ns);
    ct_json_kv_uint(&j, "first_ns", f->first_ns);
    ct_json_kv_uint(&j, "last_ns", f->last_ns);
    ct_json_kv_string(&j, "fix", f->fix);
    ct_json_end_object(&j);
  }
  ct_json_end_array(&j);
  uint64_t saving, idle;
  unsigned ndev = ct_gaps_findings_total(c->g, &saving, &idle);
  ct_json_key(&j, "findings_total"); /* the adds summed over every device (<= their idle) */
  ct_json_begin_object(&j);
  ct_json_kv_uint(&j, "saving_ns", saving);
  ct_json_kv_uint(&j, "idle_ns", idle);
  ct_json_kv_uint(&j, "devices", ndev);
  json_share(&j, saving, idle);
  ct_json_end_object(&j);
  ct_json_kv_uint(&j, "late_activities", ct_gaps_late(c->g));
  ct_json_kv_uint(&j, "launch_waits_cut", ct_gaps_waits_cut(c->g));
  ct_json_end_object(&j);
  ct_json_finish(&j);
}

/* ---- the command -------------------------------------------------------------------------- */
