/*
 * cutrace gaps --summary: at most 6 lines (busy share and idle by cause per device, the
 * largest gap, the kinds of findings by what they add to the findings' total, and that
 * total: docs/gaps.md "Findings add up").
 */
#include <stdio.h>
#include <string.h>

#include "cli_select.h"
#include "cli.h"
#include "cmd_gaps.h"
#include "stacks.h"

/* At most 6 lines (cmd_gaps.h). */
void ct_gaps_print_summary(const gaps_cli *c) {
  unsigned n, np, ntop, lines = 0;
  const ct_gaps_device *devs = ct_gaps_devices(c->g, &n);
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  const ct_gap_detail *top = ct_gaps_top(c->g, &ntop);
  cli_selection_print(stdout);
  if (!n) {
    const char *why = NULL;
    for (unsigned i = 0; i < np && !why; i++) why = procs[i].pause_why;
    if (why && !strcmp(why, "filter"))
      printf("cutrace gaps: no GPU activity in the --from/--to window\n");
    else if (why)
      printf("cutrace gaps: no GPU activity recorded: the tracer was paused (%s)%s\n", why,
             !strcmp(why, "profiler") ? "; did the program call cudaProfilerStart?"
             : !strcmp(why, "nvtx") ? "; did the program open the NVTX range?" : "");
    else
      printf("cutrace gaps: no GPU activity in the trace (no kernel, copy or set was timed; "
             "cutrace report lists the CUDA calls the program made)\n");
    return;
  }
  for (unsigned i = 0; i < n && lines < 4; i++, lines++) {
    const ct_gaps_usage *u = &devs[i].u;
    char b1[24], b2[24], b3[24];
    if (lines == 3 && n > 4) {
      printf("cutrace gaps: %u more devices (see cutrace gaps)\n", n - 3);
      break;
    }
    printf("GPU %llu: busy %.1f%% of %s", (unsigned long long)devs[i].device,
           ct_gaps_pct(u->busy_ns, ct_gaps_observed_ns(u)),
           ct_fmt_duration(ct_gaps_observed_ns(u), b1, sizeof b1));
    if (u->unrecorded_ns)
      printf(" recorded (%s not recorded: the tracer paused)",
             ct_fmt_duration(u->unrecorded_ns, b3, sizeof b3));
    printf("; idle %s", ct_fmt_duration(u->idle_ns, b2, sizeof b2));
    char w[400];
    if (np > 1) printf(" (%s)", ct_gaps_who(&procs[devs[i].proc], w, sizeof w));
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
    if (devs[i].comm.comm_ns)
      printf("; comm %s, %.1f%% overlapped with compute",
             ct_fmt_duration(devs[i].comm.comm_ns, b3, sizeof b3),
             ct_gaps_pct(devs[i].comm.overlap_ns, devs[i].comm.comm_ns));
    putchar('\n');
  }
  if (ntop) {
    const ct_gap_detail *d = &top[0];
    char b1[24], b2[24], name[256];
    char w[400];
    printf("largest gap: %s on GPU %llu", ct_fmt_duration(d->end_ns - d->start_ns, b1, sizeof b1),
           (unsigned long long)d->device);
    if (np > 1) printf(" of %s", ct_gaps_who(&procs[d->proc], w, sizeof w)); /* which process */
    printf(" at +%s (%s",
           ct_fmt_duration(d->start_ns - ct_gaps_trace_start(&procs[d->proc]), b2, sizeof b2),
           ct_gap_cause_name(d->cause));
    if (d->inside_call) printf(" inside %s", d->inside_call);
    if (d->op_name) printf("; ended by %s", ct_gaps_op_label(d, name, sizeof name));
    if (d->api) printf(" from %s", d->api);
    const ct_gap_call *ec = &d->ending;
    if (ec->site < ec->nframes) {
      const ct_gap_frame *fr = &ec->frames[ec->site];
      const char *base = strrchr(fr->file, '/');
      if (ct_frame_is_python(fr->note))
        printf(" at %s:%u %s", base ? base + 1 : fr->file, fr->line, fr->function);
      else
        printf(" at %s", fr->function);
      if (!ct_frame_is_python(fr->note) && *fr->file && fr->line)
        printf(" (%s:%u)", base ? base + 1 : fr->file, fr->line);
    }
    printf(")\n");
  }
  unsigned nf;
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &nf);
  if (nf) {
    static const char *const labels[CT_FIND_HOST_BOUND + 1] = {
        [CT_FIND_LAUNCH_BOUND] = "launch-bound kernels", [CT_FIND_PAGEABLE_COPY] = "pageable copies",
        [CT_FIND_SYNC_COPY] = "synchronous copies", [CT_FIND_LITTLE_SYNC] = "syncs on little GPU work",
        [CT_FIND_EXPOSED_COMM] = "exposed communication",
        [CT_FIND_GRAPH_CANDIDATE] = "CUDA-graph candidates",
        [CT_FIND_ALLOC] = "memory allocated and freed in the loop",
        [CT_FIND_SLOW_CALL] = "slow launching calls",
        [CT_FIND_HOST_BOUND] = "host-bound launches"};
    /* one entry per kind, what its findings add to the total summed over the devices
     * (docs/gaps.md, "Findings add up"), largest first; exposed communication, busy time,
     * by its saving; a kind whose findings add nothing says why */
    uint64_t saving[CT_FIND_HOST_BOUND + 1] = {0}, claimed[CT_FIND_HOST_BOUND + 1] = {0};
    int order[CT_FIND_HOST_BOUND + 1], nk = 0;
    const ct_gaps_finding *slow = NULL; /* the largest slow-call finding */
    const ct_gaps_finding *host = NULL; /* the largest host-bound finding */
    for (unsigned i = 0; i < nf; i++) {
      unsigned k = (unsigned)fs[i].kind;
      if (k > CT_FIND_HOST_BOUND) continue;
      int seen = 0;
      for (int m = 0; m < nk; m++) seen |= order[m] == (int)k;
      if (!seen) order[nk++] = (int)k;
      saving[k] += k == CT_FIND_EXPOSED_COMM ? fs[i].saving_ns : fs[i].adds_ns;
      claimed[k] += fs[i].saving_ns - fs[i].not_idle_ns;
      if (k == CT_FIND_SLOW_CALL && !slow) slow = &fs[i];
      if (k == CT_FIND_HOST_BOUND && !host) host = &fs[i];
    }
    for (int a = 1; a < nk; a++)
      for (int m = a; m > 0 && saving[order[m]] > saving[order[m - 1]]; m--) {
        int tmp = order[m];
        order[m] = order[m - 1];
        order[m - 1] = tmp;
      }
    printf("findings:");
    for (int m = 0; m < nk; m++) {
      char b[24];
      printf("%s %s", m ? "," : "", labels[order[m]] ? labels[order[m]] : "?");
      if (order[m] == CT_FIND_SLOW_CALL && slow)
        printf(" (%s%s)", slow->what,
               slow->pattern && !strcmp(slow->pattern, "first_call") ? ", first call only"
               : slow->pattern && !strcmp(slow->pattern, "starts_gaps") ? ", the GPU drained during it" : "");
      if (order[m] == CT_FIND_HOST_BOUND && host)
        printf(" (%s%s%s)", host->what, host->site ? " at " : "", host->site ? host->site : "");
      if (order[m] == CT_FIND_EXPOSED_COMM)
        printf(" %s of busy time (not idle: not in the total)", ct_fmt_duration(saving[order[m]], b, sizeof b));
      else if (saving[order[m]]) /* no "up to 0 ns" */
        printf(" up to %s", ct_fmt_duration(saving[order[m]], b, sizeof b));
      else if (claimed[order[m]])
        printf(" (counted above)");
      else
        printf(" (no idle saving estimated)");
    }
    uint64_t total, idle;
    unsigned ndev = ct_gaps_findings_total(c->g, &total, &idle);
    char b1[24], b2[24];
    printf("; together up to %s of %s idle (%.1f%%", ct_fmt_duration(total, b1, sizeof b1),
           ct_fmt_duration(idle, b2, sizeof b2), ct_gaps_pct(total, idle));
    if (ndev > 1) printf(", summed over %u devices", ndev);
    printf(")");
    printf(" (see cutrace gaps");
    cli_print_shell_args(stdout, c->opts, c->nopts, c->args, c->nargs);
    printf(" for the fixes)\n");
  }
}
