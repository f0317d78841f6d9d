/*
 * cutrace diff BEFORE AFTER: what changed on the GPU between two traces, ranked by how
 * much it matters: a headline (wall span, GPU busy and idle by cause, kernel, copy and
 * API totals) and per kernel, memory operation and GEMM shape (or per CUDA entry point,
 * or NVTX range) the two sides' calls and times with a status. The comparison is in
 * diff.c and diff_rows.c, the writers in cmd_diff_out.c; docs/diff.md has the details.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_diff.h"
#include "commands.h"
#include "reader.h"

static const char usage[] =
    "usage: cutrace diff [--format text|csv|json] [--limit N] [--by kernel|range|api]\n"
    "                    [--per-range NAME] [--threshold PCT] [--from T] [--to T] BEFORE AFTER\n"
    "  What changed on the GPU from BEFORE to AFTER (each a trace DIR or one .ctr FILE):\n"
    "  a headline (wall span, GPU busy, idle by cause, kernel, copy and API totals), then\n"
    "  per kernel, memory operation and GEMM shape the calls and times of both sides,\n"
    "  with a status (added, removed, slower, faster, same), largest change first.\n"
    "  --format F       text (default), csv (one block per table, then the inputs: every\n"
    "                   field of the text) or json (docs/diff.md)\n"
    "  --tables LIST    csv: only these blocks (summary, the tables of --by: kernels,\n"
    "                   memcpy, gemms / apis / ranges, inputs); one: a plain table\n"
    "  --limit N        at most N rows per table (0 = all, the default)\n"
    "  --by kernel      kernels, memory operations and GEMMs (the default)\n"
    "  --by api         CUDA API calls (CPU time)\n"
    "  --by range       NVTX ranges (CPU time they were open; GPU time of the work inside)\n"
    "  --per-range NAME divide each side by its instances of NVTX range NAME (e.g. step),\n"
    "                   so runs of different lengths compare per instance\n"
    "  --threshold PCT  'same': equal calls and an average within PCT percent (default 5)\n"
    "  --from T, --to T the same window of both (T: seconds after each trace's start,\n"
    "                   2.5, 300ms, 40us; or @NS, a host time)\n"
    "  --device N[,M]   only the GPU work on those devices, on both sides\n"
    "  --stream ID[,ID] only the GPU work on those streams, on both sides\n"
    "  --kernel PAT     only the GPU work whose demangled name holds PAT (glob with * ? [)\n"
    "  --pid P[,P]      only those processes' trace files, on both sides\n"
    "  --rank R[,R]     only those ranks' trace files, on both sides\n";

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "cutrace diff: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (try: cutrace diff --help)\n");
  return 2;
}

/* Parses a percentage: a finite decimal >= 0 (the whole of s). Returns 0 or -1. */
static int parse_pct(const char *s, double *v) {
  char *end;
  if (!*s || *s == '-' || *s == '+') return -1;
  *v = strtod(s, &end);
  return *end || !isfinite(*v) || *v < 0 ? -1 : 0;
}

/* Parses --tables LIST (after --by) into c->csv_blocks; -1 to go on, else the status. */
static int parse_tables(diff_cli *c, const char *list) {
  if (c->fmt != CT_OUT_CSV)
    return bad_usage("--tables picks CSV blocks: it needs --format csv%s", "");
  enum ct_report_table ts[3];
  int nt = ct_diff_cli_tables(c, ts);
  char name[64];
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), p);
    unsigned bit = 0;
    if (!strcmp(name, "summary")) bit = DIFF_BLOCK_SUMMARY;
    else if (!strcmp(name, "inputs")) bit = DIFF_BLOCK_INPUTS;
    for (int i = 0; i < nt && !bit; i++)
      if (!strcmp(name, ct_report_table_ids[ts[i]])) bit = 2u << i;
    if (!bit)
      return bad_usage(n ? "--tables: no table '%s' here (summary, the tables of --by, inputs)"
                          : "--tables: an empty name%s",
                       name);
    c->csv_blocks |= bit;
    if (!p[n]) break;
    p += n + 1;
  }
  return -1;
}

/* Parses argv into c; returns -1 to go on, else the exit status (help, usage error). */
static int parse_options(diff_cli *c, int argc, char **argv) {
  int npaths = 0, options = 1;
  const char *tables = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!options || a[0] != '-' || !a[1]) {
      if (npaths == 2) return bad_usage("takes two traces, BEFORE and AFTER; '%s' is one more", a);
      c->paths[npaths++] = a;
      continue;
    }
    if (!strcmp(a, "--")) {
      options = 0;
      continue;
    }
    if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    }
    if (strcmp(a, "--format") && strcmp(a, "--limit") && strcmp(a, "--by") &&
        strcmp(a, "--per-range") && strcmp(a, "--threshold") && strcmp(a, "--tables"))
      return bad_usage("unknown option '%s'", a);
    if (i + 1 >= argc) return cli_missing_value("diff", a);
    const char *val = argv[++i];
    if (!strcmp(a, "--format") && ct_parse_out_format(val, &c->fmt) < 0)
      return bad_usage("--format takes text, csv or json, not '%s'", val);
    if (!strcmp(a, "--limit") && ct_parse_u64(val, &c->limit) < 0)
      return bad_usage("--limit takes a number, not '%s'", val);
    if (!strcmp(a, "--threshold") && parse_pct(val, &c->threshold_pct) < 0)
      return bad_usage("--threshold needs a percentage (a number >= 0), not '%s'", val);
    if (!strcmp(a, "--tables")) tables = val;
    if (!strcmp(a, "--per-range")) {
      if (!*val) return bad_usage("--per-range needs a range name%s", "");
      c->per_range = val;
    }
    if (!strcmp(a, "--by")) {
      if (!strcmp(val, "kernel")) c->by = CT_TABLE_KERNELS;
      else if (!strcmp(val, "api")) c->by = CT_TABLE_APIS;
      else if (!strcmp(val, "range")) c->by = CT_TABLE_RANGES;
      else return bad_usage("--by takes kernel, range or api, not '%s'", val);
    }
  }
  if (npaths != 2) return bad_usage("needs two traces, BEFORE and AFTER%s", "");
  if (tables) return parse_tables(c, tables);
  return -1;
}

/* What one ct_expand_inputs callback needs: the command and the side being read. */
typedef struct side_ctx {
  diff_cli *c;
  int side;
} side_ctx;

static int add_file(const char *path, void *arg) {
  side_ctx *x = arg;
  diff_cli *c = x->c;
  diff_input *ni = realloc(c->inputs[x->side], (c->ninputs[x->side] + 1) * sizeof *ni);
  if (!ni) return -1;
  c->inputs[x->side] = ni;
  diff_input *in = &ni[c->ninputs[x->side]++];
  memset(in, 0, sizeof *in);
  in->path = strdup(path);
  ct_model_stats st;
  memset(&st, 0, sizeof st);
  int rc = ct_diff_side_add_file(&c->sides[x->side], path, &st);
  int fs = cli_file_status("diff", path, rc, &st);
  in->status = fs == 0 ? "clean" : fs == 1 ? "partial" : "unreadable";
  if (rc) snprintf(in->message, sizeof in->message, "%s", st.message);
  char err[300];
  in->has_id = rc >= 0 && ct_identity_read(path, &in->id, err, sizeof err) == 0;
  if (fs == 1 && c->status < 1) c->status = 1;
  return 0;
}

/* Reads both sides. Returns 0, or the exit status 2 after saying why on stderr. */
static int read_sides(diff_cli *c) {
  static const char *const side_names[2] = {"BEFORE", "AFTER"};
  int ranges = c->by == CT_TABLE_RANGES || c->per_range;
  for (int k = 0; k < 2; k++)
    if (ct_diff_side_init(&c->sides[k], ranges) < 0) {
      fprintf(stderr, "cutrace diff: out of memory\n");
      return 2;
    }
  cli_progress_start("diff");
  for (int k = 0; k < 2; k++) {
    side_ctx x = {c, k};
    char err[300];
    char *one[1] = {(char *)c->paths[k]};
    if (ct_expand_inputs(1, one, add_file, &x, err, sizeof err) < 0) {
      cli_progress_done();
      fprintf(stderr, "cutrace diff: %s\n", err);
      return 2;
    }
  }
  cli_progress_done();
  for (int k = 0; k < 2; k++) {
    const ct_diff_side *s = &c->sides[k];
    if (s->unreadable == s->files) { /* one file: its own line said why */
      if (s->files > 1)
        fprintf(stderr, "cutrace diff: %s (%s): no readable trace\n", side_names[k], c->paths[k]);
      return 2;
    }
    if (s->unreadable && c->status < 1) c->status = 1; /* a readable file beside it */
    c->instances[k] = 1;
    if (c->per_range && !(c->instances[k] = ct_diff_side_instances(s, c->per_range))) {
      fprintf(stderr, "cutrace diff: %s (%s) has no NVTX range '%s' to divide by\n",
              side_names[k], c->paths[k], c->per_range);
      return 2;
    }
  }
  return 0;
}

static int run_diff(int argc, char **argv) {
  diff_cli c;
  memset(&c, 0, sizeof c);
  c.threshold_pct = 5;
  c.by = CT_TABLE_KERNELS;
  int rc = parse_options(&c, argc, argv);
  if (rc >= 0) return rc;
  rc = read_sides(&c);
  if (!rc) {
    c.o.per_before = (double)c.instances[0];
    c.o.per_after = (double)c.instances[1];
    c.o.threshold_pct = c.threshold_pct;
    if (ct_diff_print(&c) < 0) {
      fprintf(stderr, "cutrace diff: out of memory: some rows are missing\n");
      rc = 2;
    }
    rc = cli_output_status("diff", rc);
  }
  for (int k = 0; k < 2; k++) {
    if (c.sides[k].g) ct_diff_side_free(&c.sides[k]);
    for (size_t i = 0; i < c.ninputs[k]; i++) free(c.inputs[k][i].path);
    free(c.inputs[k]);
  }
  return rc ? rc : c.status;
}

/* Options may follow the traces and take --name=value (cli_run_options_first). */
int cmd_diff(int argc, char **argv) {
  static const char *const valued[] = {"--format", "--limit", "--by", "--per-range", "--threshold",
                                       "--tables", NULL};
  return cli_run_options_first(argc, argv, valued, run_diff);
}
