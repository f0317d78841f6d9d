/* One side of `cutrace diff` read and summed (diff.h): the report's tables, the gaps
 * analysis and the headline's values. */
#include "diff.h"
#include "model_tee.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *id, *label;
  int unit; /* 1 ns, 2 bytes, 3 percent, 0 count */
} metrics[CT_DM_COUNT] = {
    [CT_DM_WALL] = {"wall_span_ns", "Wall span (first to last event)", 1},
    [CT_DM_BUSY] = {"gpu_busy_ns", "GPU busy", 1},
    [CT_DM_BUSY_PCT] = {"gpu_busy_pct", "GPU busy share", 3},
    [CT_DM_IDLE] = {"gpu_idle_ns", "GPU idle", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_HOST_WAIT] = {"idle_host_wait_ns", "  host_wait", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_LAUNCH_OVERHEAD] = {"idle_launch_overhead_ns",
                                                   "  launch_overhead", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_SYNC] = {"idle_sync_ns", "  sync", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_ALLOC] = {"idle_alloc_ns", "  alloc", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_OTHER_STREAM] = {"idle_other_stream_ns", "  other_stream", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_TRACER] = {"idle_tracer_ns", "  tracer", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_OTHER] = {"idle_other_ns", "  other", 1},
    [CT_DM_IDLE_CAUSE + CT_GAP_EXTERNAL_WAIT] = {"idle_external_wait_ns", "  external_wait", 1},
    [CT_DM_UNRECORDED] = {"gpu_unrecorded_ns", "GPU time not recorded (tracer paused)", 1},
    [CT_DM_COMM] = {"comm_gpu_ns", "Communication kernels (NCCL) busy", 1},
    [CT_DM_COMM_EXPOSED] = {"comm_exposed_ns", "  exposed (no compute beside it)", 1},
    [CT_DM_KERNEL_NS] = {"kernel_gpu_ns", "Kernel GPU time", 1},
    [CT_DM_KERNELS] = {"kernel_launches", "Kernel launches", 0},
    [CT_DM_MEMOP_NS] = {"memop_gpu_ns", "Copy and set GPU time", 1},
    [CT_DM_BYTES] = {"bytes_copied", "Bytes copied", 2},
    [CT_DM_API_CALLS] = {"api_calls", "CUDA API calls", 0},
    [CT_DM_API_NS] = {"api_cpu_ns", "CUDA API CPU time", 1},
};

const char *ct_diff_metric_id(enum ct_diff_metric m) { return metrics[m].id; }

const char *ct_diff_metric_label(enum ct_diff_metric m) { return metrics[m].label; }

int ct_diff_metric_unit(enum ct_diff_metric m) { return metrics[m].unit; }

int ct_diff_side_init(ct_diff_side *s, int ranges) {
  memset(s, 0, sizeof *s);
  s->ranges = ranges;
  if (ct_report_init(&s->r) < 0) return -1;
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  o.top = 1; /* only the totals are used */
  if (!(s->g = ct_gaps_new(&o))) {
    ct_report_free(&s->r);
    return -1;
  }
  return 0;
}

void ct_diff_side_free(ct_diff_side *s) {
  ct_report_free(&s->r);
  ct_gaps_free(s->g);
  s->g = NULL;
}

/* The worse of two results of a pass (-1 worst), keeping the first message. */
static int worse(int rc, ct_model_stats *st, int rc2, const ct_model_stats *st2) {
  if (rc2 != 0 && !st->message[0]) snprintf(st->message, sizeof st->message, "%s", st2->message);
  return rc2 < 0 || rc < 0 ? -1 : rc > rc2 ? rc : rc2;
}

int ct_diff_side_add_file(ct_diff_side *s, const char *path, ct_model_stats *st) {
  s->files++;
  /* One read feeds the report's tables and the gaps analysis (model_tee.h). */
  ct_model_tee tee = {0};
  const ct_model_ops *rops, *gops;
  ct_report_file *rf = ct_report_file_begin(&s->r, NULL, &rops);
  ct_gaps_file *gf = rf ? ct_gaps_file_begin(s->g, path, &gops) : NULL;
  if (!gf) {
    if (rf) ct_report_file_end(rf, -1, st);
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "%s: out of memory", path);
    s->unreadable++;
    return -1;
  }
  ct_model_tee_add(&tee, rops, rf);
  ct_model_tee_add(&tee, gops, gf);
  int read_rc = ct_model_tee_read(&tee, path, NULL, st);
  ct_model_stats st2 = *st; /* the gaps' own copy: its message if it runs out of memory */
  int rc = ct_report_file_end(rf, read_rc, st);
  int rc2 = ct_gaps_file_end(gf, read_rc, &st2);
  if (read_rc < 0) { /* nothing was read: no device of it in the analysis (only an empty
                       * entry in the gaps' process list, which diff does not show) */
    s->unreadable++;
    return read_rc;
  }
  if (st->first_ns && (!s->first_ns || st->first_ns < s->first_ns)) s->first_ns = st->first_ns;
  if (st->last_ns > s->last_ns) s->last_ns = st->last_ns;
  rc = worse(rc, st, rc2, &st2);
  if (s->ranges) {
    memset(&st2, 0, sizeof st2);
    rc = worse(rc, st, ct_report_add_ranges(&s->r, path, &st2, NULL), &st2);
  }
  /* a file the first pass read cannot turn unreadable: what was counted stays */
  return rc < 0 ? 1 : rc;
}

void ct_diff_side_totals(const ct_diff_side *s, double v[CT_DM_COUNT]) {
  memset(v, 0, CT_DM_COUNT * sizeof *v);
  v[CT_DM_WALL] = (double)(s->last_ns - s->first_ns);
  unsigned n;
  const ct_gaps_device *devs = ct_gaps_devices(s->g, &n);
  double span = 0;
  for (unsigned i = 0; i < n; i++) {
    span += (double)ct_gaps_observed_ns(&devs[i].u); /* recorded time: pauses left out */
    v[CT_DM_BUSY] += (double)devs[i].u.busy_ns;
    v[CT_DM_IDLE] += (double)devs[i].u.idle_ns;
    v[CT_DM_UNRECORDED] += (double)devs[i].u.unrecorded_ns;
    v[CT_DM_COMM] += (double)devs[i].comm.comm_ns;
    v[CT_DM_COMM_EXPOSED] += (double)devs[i].comm.exposed_ns;
    for (int c = 0; c < CT_GAP_NCAUSES; c++)
      v[CT_DM_IDLE_CAUSE + c] += (double)devs[i].u.idle_by_cause[c];
  }
  v[CT_DM_BUSY_PCT] = span > 0 ? 100.0 * v[CT_DM_BUSY] / span : 0;
  const ct_map *k = s->r.maps[CT_TABLE_KERNELS];
  for (size_t i = 0; i < ct_map_count(k); i++) {
    const ct_dur_stats *d = ct_map_entry(k, i, NULL, NULL);
    v[CT_DM_KERNEL_NS] += (double)d->total;
    v[CT_DM_KERNELS] += (double)d->count;
  }
  const ct_map *m = s->r.maps[CT_TABLE_MEMCPY];
  for (size_t i = 0; i < ct_map_count(m); i++) {
    const void *key;
    const ct_memop_row *row = ct_map_entry(m, i, &key, NULL);
    v[CT_DM_MEMOP_NS] += (double)row->d.total;
    if (((const ct_memop_key *)key)->kind != CT_MEMOP_MEMSET) v[CT_DM_BYTES] += (double)row->bytes;
  }
  const ct_map *a = s->r.maps[CT_TABLE_APIS];
  for (size_t i = 0; i < ct_map_count(a); i++) {
    const void *key;
    size_t klen;
    const ct_dur_stats *d = ct_map_entry(a, i, &key, &klen);
    if (!ct_report_api_is_inner(key, klen)) v[CT_DM_API_NS] += (double)d->total;
  }
  v[CT_DM_API_CALLS] = (double)s->r.spans;
}

uint64_t ct_diff_side_instances(const ct_diff_side *s, const char *name) {
  const ct_map *m = s->r.maps[CT_TABLE_RANGES];
  size_t len = strlen(name);
  for (size_t i = 0; i < ct_map_count(m); i++) {
    const void *key;
    size_t klen;
    const ct_dur_stats *d = ct_map_entry(m, i, &key, &klen);
    if (klen == len && !memcmp(key, name, len)) return d->count;
  }
  return 0;
}
