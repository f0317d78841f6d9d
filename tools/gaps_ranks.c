/*
 * The per-rank comparison of cutrace gaps (gaps.h: ct_gaps_rank_compare): the GPU time
 * of each rank of a distributed job summed over its files and devices, the most idle
 * rank and the one the others waited for in collectives. From the analysis's results:
 * memory grows with the number of files, never with the records.
 */
#include <stdlib.h>
#include <string.h>

#include "gaps.h"

/* Orders ranks by number. */
static int by_rank(const void *a, const void *b) {
  const ct_gaps_rank *x = a, *y = b;
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The row of rank r in rows[0..n) (sorted by rank), or NULL. */
static ct_gaps_rank *find_rank(ct_gaps_rank *rows, unsigned n, uint64_t r) {
  ct_gaps_rank key = {.rank = r};
  return bsearch(&key, rows, n, sizeof *rows, by_rank);
}

/* Busy share of a rank's observed time (0 when nothing observed). */
static double busy_share(const ct_gaps_rank *r) {
  return r->observed_ns ? (double)r->busy_ns / (double)r->observed_ns : 0.0;
}

/* Fills the rank rows from the processes with a rank, one row per distinct rank. */
static unsigned collect_ranks(const ct_gaps_proc *procs, unsigned np, ct_gaps_rank *rows) {
  unsigned n = 0;
  for (unsigned i = 0; i < np; i++) {
    if (!(procs[i].job.known & CT_JOB_RANK)) continue;
    int seen = 0;
    for (unsigned k = 0; k < n && !seen; k++)
      if (rows[k].rank == procs[i].job.rank) seen = 1, rows[k].files++;
    if (seen) continue;
    memset(&rows[n], 0, sizeof rows[n]);
    rows[n].rank = procs[i].job.rank;
    rows[n++].files = 1;
  }
  qsort(rows, n, sizeof *rows, by_rank);
  return n;
}

int ct_gaps_rank_compare(const ct_gaps *g, ct_gaps_ranks *out) {
  memset(out, 0, sizeof *out);
  out->most_idle = out->waited_for = -1;
  unsigned np, nd;
  const ct_gaps_proc *procs = ct_gaps_procs(g, &np);
  const ct_gaps_device *devs = ct_gaps_devices(g, &nd);
  if (np < 2) return 0;
  ct_gaps_rank *rows = malloc(np * sizeof *rows);
  if (!rows) return -1;
  unsigned n = collect_ranks(procs, np, rows);
  if (n < 2) {
    free(rows);
    return 0;
  }
  for (unsigned i = 0; i < nd; i++) {
    const ct_gaps_proc *p = &procs[devs[i].proc];
    if (!(p->job.known & CT_JOB_RANK)) continue;
    ct_gaps_rank *r = find_rank(rows, n, p->job.rank);
    const ct_gaps_usage *u = &devs[i].u;
    r->devices++;
    r->observed_ns += ct_gaps_observed_ns(u);
    r->busy_ns += u->busy_ns;
    r->idle_ns += u->idle_ns;
    for (int k = 0; k < CT_GAP_NCAUSES; k++) r->idle_by_cause[k] += u->idle_by_cause[k];
    r->comm_ns += devs[i].comm.comm_ns;
    r->exposed_ns += devs[i].comm.exposed_ns;
  }
  int lo = -1, hi = -1, communicated = 0;
  for (unsigned i = 0; i < n; i++) {
    if (rows[i].observed_ns &&
        (out->most_idle < 0 || busy_share(&rows[i]) < busy_share(&rows[out->most_idle])))
      out->most_idle = (int)i;
    if (!rows[i].comm_ns) continue;
    communicated++;
    if (lo < 0 || rows[i].comm_ns < rows[lo].comm_ns) lo = (int)i;
    if (hi < 0 || rows[i].comm_ns > rows[hi].comm_ns) hi = (int)i;
  }
  if (communicated >= 2 && ct_gaps_comm_apart(rows[lo].comm_ns, rows[hi].comm_ns)) {
    out->waited_for = lo;
    out->most_comm = hi;
  }
  out->ranks = rows;
  out->n = n;
  return 0;
}

void ct_gaps_ranks_free(ct_gaps_ranks *r) {
  free(r->ranks);
  memset(r, 0, sizeof *r);
}
