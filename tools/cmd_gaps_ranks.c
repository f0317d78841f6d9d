/*
 * cutrace gaps over several ranks: the per-rank comparison (ct_gaps_rank_compare) as a
 * compact table with the most idle rank and the one the others waited for named (text),
 * or as the "ranks" array (JSON, docs/gaps.md).
 */
#include <stdio.h>

#include "cmd_gaps.h"

/* The cause holding most of a rank's idle time (CT_GAP_NCAUSES when none). */
static int main_cause(const ct_gaps_rank *r) {
  int best = CT_GAP_NCAUSES;
  for (int k = 0; k < CT_GAP_NCAUSES; k++)
    if (r->idle_by_cause[k] &&
        (best == CT_GAP_NCAUSES || r->idle_by_cause[k] > r->idle_by_cause[best]))
      best = k;
  return best;
}

void ct_gaps_print_ranks_text(const ct_gaps_ranks *rk) {
  if (rk->n < 2) return;
  static const char *const headers[] = {"rank", "files", "GPUs", "busy%", "idle", "host_wait",
                                        "launch_ovh", "sync", "alloc", "other_strm", "tracer",
                                        "other", "ext_wait", "comm", "exposed comm"};
  char title[96];
  snprintf(title, sizeof title, "Per rank (%u ranks; GPU time summed over each rank's devices)",
           rk->n);
  ct_table *t = ct_table_new(title, 15, headers, "rrrrrrrrrrrrrrr");
  if (!t) return;
  for (unsigned i = 0; i < rk->n; i++) {
    const ct_gaps_rank *r = &rk->ranks[i];
    char b[CT_GAP_NCAUSES + 3][24];
    ct_table_row(t);
    ct_table_cell(t, "%llu", (unsigned long long)r->rank);
    ct_table_cell(t, "%u", r->files);
    ct_table_cell(t, "%u", r->devices);
    ct_table_cell(t, "%.1f%%", ct_gaps_pct(r->busy_ns, r->observed_ns));
    ct_table_cell(t, "%s", ct_fmt_duration(r->idle_ns, b[0], sizeof b[0]));
    for (int k = 0; k < CT_GAP_NCAUSES; k++)
      ct_table_cell(t, "%s", ct_fmt_duration(r->idle_by_cause[k], b[1 + k], sizeof b[1 + k]));
    ct_table_cell(t, "%s", ct_fmt_duration(r->comm_ns, b[CT_GAP_NCAUSES + 1], sizeof b[0]));
    ct_table_cell(t, "%s", ct_fmt_duration(r->exposed_ns, b[CT_GAP_NCAUSES + 2], sizeof b[0]));
  }
  ct_table_print(t, stdout, CT_OUT_TEXT);
  ct_table_free(t);
  if (rk->most_idle >= 0) {
    const ct_gaps_rank *r = &rk->ranks[rk->most_idle];
    char b[24], c[24];
    int k = main_cause(r);
    printf("most idle: rank %llu (busy %.1f%%, idle %s", (unsigned long long)r->rank,
           ct_gaps_pct(r->busy_ns, r->observed_ns), ct_fmt_duration(r->idle_ns, b, sizeof b));
    if (k < CT_GAP_NCAUSES)
      printf(", most of it %s %s", ct_gap_cause_name(k),
             ct_fmt_duration(r->idle_by_cause[k], c, sizeof c));
    printf(")\n");
  }
  if (rk->waited_for >= 0) {
    const ct_gaps_rank *r = &rk->ranks[rk->waited_for], *m = &rk->ranks[rk->most_comm];
    char b[24], c[24];
    printf("waited for: rank %llu spent the least time in communication kernels (%s, %s on "
           "rank %llu): the others waited for it inside collectives; compare its compute and "
           "host time\n",
           (unsigned long long)r->rank, ct_fmt_duration(r->comm_ns, b, sizeof b),
           ct_fmt_duration(m->comm_ns, c, sizeof c), (unsigned long long)m->rank);
  }
}

void ct_gaps_json_ranks(ct_json *j, const ct_gaps_ranks *rk) {
  ct_json_key(j, "ranks");
  ct_json_begin_array(j);
  for (unsigned i = 0; i < rk->n; i++) {
    const ct_gaps_rank *r = &rk->ranks[i];
    ct_json_begin_object(j);
    ct_json_kv_uint(j, "rank", r->rank);
    ct_json_kv_uint(j, "files", r->files);
    ct_json_kv_uint(j, "devices", r->devices);
    ct_json_kv_uint(j, "observed_ns", r->observed_ns);
    ct_json_kv_uint(j, "busy_ns", r->busy_ns);
    ct_json_kv_uint(j, "idle_ns", r->idle_ns);
    ct_gaps_json_causes(j, "idle", r->idle_by_cause, "_ns");
    ct_json_kv_uint(j, "comm_ns", r->comm_ns);
    ct_json_kv_uint(j, "exposed_comm_ns", r->exposed_ns);
    ct_json_end_object(j);
  }
  ct_json_end_array(j);
  ct_json_key(j, "most_idle_rank");
  if (rk->most_idle >= 0) ct_json_uint(j, rk->ranks[rk->most_idle].rank);
  else ct_json_null(j);
  ct_json_key(j, "waited_for_rank");
  if (rk->waited_for >= 0) ct_json_uint(j, rk->ranks[rk->waited_for].rank);
  else ct_json_null(j);
}
