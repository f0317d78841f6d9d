/*
 * cutrace steps: the job as a sequence of steps (the instances of an NVTX range), each
 * with its CPU and GPU time, the device's busy share and idle causes inside it, its
 * CUDA calls and top kernel; a summary with the first step's setup cost and the
 * outlier steps explained. The analysis is in steps*.c (steps.h); the writers in
 * cmd_steps_out.c. Documented in docs/steps.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_steps.h"
#include "commands.h"
#include "reader.h"

static const char usage_text[] =
    "usage: cutrace steps [OPTIONS] [DIR|FILE...]\n"
    "The job step by step: each instance of an NVTX range with its CPU time, GPU work,\n"
    "GPU busy share, idle time by cause, CUDA calls and top kernel; statistics, the first\n"
    "step's setup cost and the outlier steps with what made them slow.\n"
    "  --range NAME        the steps' NVTX range, a name or a glob ('ProfilerStep#*', 'step*');\n"
    "                      default: a ProfilerStep#* range, else the most frequent outermost\n"
    "                      range with at least 3 instances\n"
    "  --skip N            leave the first N (warmup) steps out of the statistics (default 0)\n"
    "  --outlier FACTOR    a step slower than FACTOR x the median is an outlier (default 1.25)\n"
    "  --format text|csv|json   output format (default text; csv: one row per step)\n"
    "  --summary           the statistics, setup and outliers without a row per step\n"
    "                      (text or json: CSV is only the rows)\n"
    "  --all-threads       a step's GPU work is what any thread launched during its interval\n"
    "                      (default: what the stepping thread launched inside the range)\n"
    "  --from T, --to T    only the steps that overlap that window (T: seconds after the\n"
    "                      trace's start, 2.5, 300ms, 40us, or @NS, an absolute host time)\n"
    "  --device N[,M]      a step's GPU time on those devices only\n"
    "  --stream ID[,ID]    a step's GPU time on those streams only\n"
    "  --pid P[,P]         only those processes' trace files\n"
    "  --rank R[,R]        only those ranks' trace files\n"
    "Each process (trace file) is analysed on its own; definitions: docs/steps.md.\n";

static int bad(const char *what, const char *value) {
  fprintf(stderr, "cutrace steps: %s '%s' (try: cutrace steps --help)\n", what, value);
  return 2;
}

/* Parses a factor >= 1 ("1.25"). Returns 0 or -1. */
static int parse_factor(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (!*s || *end || !(v >= 1.0) || v > 1000.0) return -1;
  *out = v;
  return 0;
}

static int add_input(const char *path, void *arg) {
  steps_cli *c = arg;
  ct_steps_file *nf = realloc(c->files, (c->nfiles + 1) * sizeof *nf);
  if (!nf) return -1;
  c->files = nf;
  ct_identity *ni = realloc(c->ids, (c->nfiles + 1) * sizeof *ni);
  if (!ni) return -1;
  c->ids = ni;
  char err[300];
  if (ct_identity_read(path, &c->ids[c->nfiles], err, sizeof err) < 0)
    memset(&c->ids[c->nfiles], 0, sizeof c->ids[c->nfiles]); /* ct_steps_read says why */
  ct_steps_file *f = &c->files[c->nfiles++];
  int rc = ct_steps_read(path, &c->o, f);
  if (rc == 2) { /* no steps: one line; status 1 when the file stopped early, else
                  * counted (partial beside files with steps, alone an error) */
    cli_report_drops("steps", path, &f->st);
    fprintf(stderr, "cutrace steps: %s: %s\n", path, f->st.message);
    if (!f->st.damaged) c->nosteps++;
    else if (c->status < 1) c->status = 1;
  } else {
    /* as report and gaps say it: lost records, an unreadable file (once named), where a
     * damaged one stopped */
    int fs = cli_file_status("steps", path, rc, &f->st);
    if (fs == 2) c->unreadable++;
    else {
      c->withsteps++;
      if (fs > c->status) c->status = fs;
    }
  }
  return 0;
}

/* The options that take a value (cli_run_options_first). */
static const char *const valued[] = {"--range", "--skip", "--outlier", "--format", NULL};

/* cmd_steps with its options first, each valued one followed by its value, and "--"
 * ending them (cli_run_options_first). */
static int run_steps(int argc, char **argv) {
  steps_cli c;
  memset(&c, 0, sizeof c);
  ct_steps_default_options(&c.o);
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0;
  if (!paths) return 2;
  int rc = -1, operands_only = 0; /* after "--": every argument is a trace */
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i], *v = "", *matched = NULL;
    for (unsigned k = 0; !operands_only && valued[k]; k++)
      if (!strcmp(a, valued[k])) matched = valued[k];
    uint64_t x;
    if (operands_only || a[0] != '-' || !a[1]) {
      paths[npaths++] = argv[i];
    } else if (!strcmp(a, "--")) {
      operands_only = 1;
    } else if (cli_is_help(a)) {
      fputs(usage_text, stdout);
      rc = 0;
    } else if (!strcmp(a, "--summary")) {
      c.summary = 1;
    } else if (!strcmp(a, "--all-threads")) {
      c.o.all_threads = 1;
    } else if (!matched) {
      rc = bad("unknown option", a);
    } else if (i + 1 >= argc || !*(v = argv[++i])) {
      rc = cli_missing_value("steps", a);
    } else if (!strcmp(matched, "--range")) {
      c.o.range = v;
    } else if (!strcmp(matched, "--skip")) {
      if (ct_parse_u64(v, &x) < 0) rc = bad("--skip takes a count of steps, not", v);
      else c.o.skip = x;
    } else if (!strcmp(matched, "--outlier")) {
      if (parse_factor(v, &c.o.outlier_factor) < 0)
        rc = bad("--outlier takes a factor from 1 to 1000 (1.25), not", v);
    } else if (ct_parse_out_format(v, &c.fmt) < 0) {
      rc = bad("--format takes text, csv or json, not", v);
    }
  }
  if (rc < 0 && c.summary && c.fmt == CT_OUT_CSV) {
    fprintf(stderr, "cutrace steps: --summary has no CSV form (CSV is one row per step); use "
                    "--format text or json (try: cutrace steps --help)\n");
    rc = 2;
  }
  if (rc >= 0) {
    free(paths);
    return rc;
  }
  char err[300];
  int nin = ct_expand_inputs(npaths, paths, add_input, &c, err, sizeof err);
  if (nin < 0) {
    fprintf(stderr, "cutrace steps: %s\n", err);
    c.status = 2;
  } else if (ct_steps_print(&c) < 0) {
    fprintf(stderr, "cutrace steps: out of memory, or the steps' temporary file could not be read\n");
    c.status = 2;
  }
  /* files without steps beside files with steps make a partial result, and so do
   * unreadable files beside readable ones; alone they are an error (as report, gaps,
   * dump and info count them) */
  if (c.nosteps) c.status = c.withsteps && c.status < 2 ? 1 : 2;
  if (c.unreadable) c.status = c.unreadable < c.nfiles && c.status < 2 ? 1 : 2;
  for (unsigned i = 0; i < c.nfiles; i++) ct_steps_file_free(&c.files[i]);
  free(c.files);
  free(c.ids);
  free(paths);
  return c.status;
}

/* Options may follow the traces and take --name=value (cli_run_options_first). */
int cmd_steps(int argc, char **argv) { return cli_run_options_first(argc, argv, valued, run_steps); }
