/*
 * The streams table of `cutrace report`: per stream of each process, its GPU
 * operations, their launch delay (operation start minus the end of the call that
 * queued it: HTA's "launch delay") and the depth of the stream's queue when each call
 * began (operations queued and not yet finished, this one included). A stream whose
 * calls mostly find an empty queue is fed by a CPU that cannot keep up: the GPU waits
 * on every launch. A deep queue and long launch delays mean the CPU runs ahead, as it
 * should.
 *
 * The queue depth at a call's begin b is 1 + the number of earlier operations on the
 * stream that end after b, kept by queues.h while a file is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static ct_stream_row *stream_row(ct_report *r, const ct_activity *a) {
  ct_stream_key key = {a->proc->rec.pid, a->device, a->stream};
  if (r->last_stream_row && !memcmp(&key, &r->last_stream, sizeof key)) return r->last_stream_row;
  ct_stream_row *row = ct_map_get(r->maps[CT_TABLE_STREAMS], &key, sizeof key, NULL);
  if (row) r->last_stream = key, r->last_stream_row = row;
  return row;
}

int ct_streams_activity(ct_report *r, const ct_activity *a, uint64_t dur) {
  ct_stream_row *row = stream_row(r, a);
  if (!row) return -1;
  if (!row->d.count || a->start_ns < row->first_start) row->first_start = a->start_ns;
  if (a->end_ns > row->last_end) row->last_end = a->end_ns;
  ct_dur_add(&row->d, dur);
  /* an operation without its call still occupied the queue: from its start */
  uint64_t depth = ct_queue_add(&row->queue, a->has_call ? a->call_begin_ns : a->start_ns,
                                a->end_ns, NULL, NULL);
  if (!depth) return -1;
  if (a->has_call) {
    ct_dur_add(&row->depth, depth);
    if (depth == 1) row->empty_queue++;
    if (a->start_ns < a->call_end_ns) row->started_in_call++;
    ct_dur_add(&row->delay, a->start_ns > a->call_end_ns ? a->start_ns - a->call_end_ns : 0);
    if (a->type != CT_GPU_MEMCPY && a->type != CT_GPU_MEMSET) {
      row->kernels++;
      uint64_t call = a->call_end_ns > a->call_begin_ns ? a->call_end_ns - a->call_begin_ns : 0;
      if (dur < call) row->short_kernels++;
    }
  }
  return 0;
}

void ct_streams_file_done(ct_report *r) {
  ct_map *m = r->maps[CT_TABLE_STREAMS];
  for (size_t i = 0; i < ct_map_count(m); i++) {
    ct_stream_row *row = ct_map_entry(m, i, NULL, NULL);
    ct_queue_finish(&row->queue, NULL, NULL);
  }
}

void ct_streams_row_free(ct_stream_row *row) {
  ct_dur_free(&row->delay);
  ct_dur_free(&row->depth);
  ct_queue_finish(&row->queue, NULL, NULL);
}

/* ---- output ------------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * part / whole : 0; }

/* The share of the stream's span (first start to last end) that it was running work. */
static double busy_pct(const ct_stream_row *s) {
  return pct(s->d.total, s->last_end > s->first_start ? s->last_end - s->first_start : 0);
}

void ct_streams_text_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  const ct_stream_key *k = key;
  const ct_stream_row *s = v;
  char b[32];
  ct_table_cell(tb, "%.2f", pct(s->d.total, r->gpu_total_ns));
  ct_table_cell(tb, "%s", ct_fmt_duration(s->d.total, b, sizeof b));
  ct_table_cell(tb, "%llu", (unsigned long long)s->d.count);
  ct_table_cell(tb, "%.1f", busy_pct(s));
  if (s->delay.count) {
    ct_table_cell(tb, "%s", ct_fmt_duration(ct_dur_median(&s->delay), b, sizeof b));
    ct_table_cell(tb, "%s", ct_fmt_duration(ct_dur_quantile(&s->delay, 0.9), b, sizeof b));
    ct_table_cell(tb, "%s", ct_fmt_duration(s->delay.max, b, sizeof b));
    ct_table_cell(tb, "%llu", (unsigned long long)ct_dur_median(&s->depth));
    ct_table_cell(tb, "%llu", (unsigned long long)s->depth.max);
    ct_table_cell(tb, "%.1f", pct(s->empty_queue, s->depth.count));
  } else {
    for (int i = 0; i < 6; i++) ct_table_cell(tb, "-");
  }
  ct_table_cell(tb, "%llu/%llu", (unsigned long long)s->short_kernels,
                (unsigned long long)s->kernels);
  ct_table_cell(tb, "%llu/%llu (pid %llu)", (unsigned long long)k->device,
                (unsigned long long)k->stream, (unsigned long long)k->pid);
}

void ct_streams_csv_row(ct_table *tb, const ct_report *r, const void *key, const void *v) {
  const ct_stream_key *k = key;
  const ct_stream_row *s = v;
  (void)r;
  const uint64_t f[5] = {k->pid, k->device, k->stream, s->d.count, s->d.total};
  for (int j = 0; j < 5; j++) ct_table_cell(tb, "%llu", (unsigned long long)f[j]);
  ct_table_cell(tb, "%.2f", busy_pct(s));
  const uint64_t g[10] = {s->delay.count,
                          ct_dur_median(&s->delay),
                          ct_dur_quantile(&s->delay, 0.9),
                          s->delay.max,
                          s->started_in_call,
                          ct_dur_median(&s->depth),
                          s->depth.max,
                          s->empty_queue,
                          s->kernels,
                          s->short_kernels};
  for (int j = 0; j < 10; j++) ct_table_cell(tb, "%llu", (unsigned long long)g[j]);
}

void ct_streams_json_row(ct_json *j, const ct_report *r, const void *key, const void *v) {
  const ct_stream_key *k = key;
  const ct_stream_row *s = v;
  (void)r;
  ct_json_kv_uint(j, "pid", k->pid);
  ct_json_kv_uint(j, "device", k->device);
  ct_json_kv_uint(j, "stream", k->stream);
  ct_json_kv_uint(j, "ops", s->d.count);
  ct_json_kv_uint(j, "gpu_ns", s->d.total);
  ct_json_kv_uint(j, "first_start_ns", s->first_start);
  ct_json_kv_uint(j, "last_end_ns", s->last_end);
  ct_json_kv_double(j, "busy_pct", busy_pct(s), 2);
  ct_json_kv_uint(j, "with_call", s->delay.count);
  ct_json_key(j, "launch_delay");
  ct_json_begin_object(j);
  ct_json_kv_uint(j, "avg_ns", s->delay.count ? s->delay.total / s->delay.count : 0);
  ct_json_kv_uint(j, "median_ns", ct_dur_median(&s->delay));
  ct_json_kv_uint(j, "p90_ns", ct_dur_quantile(&s->delay, 0.9));
  ct_json_kv_uint(j, "max_ns", s->delay.max);
  ct_json_end_object(j);
  ct_json_kv_uint(j, "started_in_call", s->started_in_call);
  ct_json_key(j, "queue_depth");
  ct_json_begin_object(j);
  ct_json_kv_double(j, "avg", s->depth.count ? (double)s->depth.total / s->depth.count : 0, 2);
  ct_json_kv_uint(j, "median", ct_dur_median(&s->depth));
  ct_json_kv_uint(j, "p90", ct_dur_quantile(&s->depth, 0.9));
  ct_json_kv_uint(j, "max", s->depth.max);
  ct_json_end_object(j);
  ct_json_kv_uint(j, "empty_queue", s->empty_queue);
  ct_json_kv_double(j, "empty_queue_pct", pct(s->empty_queue, s->depth.count), 2);
  ct_json_kv_uint(j, "kernels", s->kernels);
  ct_json_kv_uint(j, "short_kernels", s->short_kernels);
}
