/*
 * cutrace gaps: GPU idle time per device and stream, split by cause, the largest
 * gaps with what every CPU thread was doing, and findings that name a fix.
 * Text (default), JSON (schema in docs/gaps.md), or a summary of at most 6 lines.
 * The analysis itself is in gaps.c; the writers in cmd_gaps_text.c and cmd_gaps_json.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_select.h"
#include "commands.h"
#include "cmd_gaps.h"
#include "gaps.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

static const char usage_text[] =
    "usage: cutrace gaps [OPTIONS] [DIR|FILE...]\n"
    "GPU idle time per device and stream, split by cause; idle grouped by the call that\n"
    "ended it; the largest gaps; findings, ranked by the idle time each fix would save beyond\n"
    "those above it, and what they save together, overlaps counted once, at most the idle\n"
    "(docs/gaps.md).\n"
    "  --format text|json|csv  output format (default text; csv: a row per gap, with its\n"
    "                          ending call's NVTX range and call site, then the findings,\n"
    "                          docs/gaps.md)\n"
    "  --tables LIST           csv: gaps, findings or both (the default)\n"
    "  --summary               at most 6 lines: busy share, idle by cause, largest gap,\n"
    "                          findings and their total\n"
    "  --top N                 how many of the largest gaps, and of the rows of idle by\n"
    "                          ending call, to show (default 10)\n"
    "  --min-gap US            list only gaps of at least US microseconds (default 0)\n"
    "  --launch-threshold US   gaps shorter than this are always launch overhead (default 10;\n"
    "                          longer ones too when the launching call was slow, docs/gaps.md)\n"
    "  --launch-bound-min N    kernels in a row shorter than their launch call (default 20)\n"
    "  --repeat-min N          copies, syncs, allocation gaps or host-bound gaps at one\n"
    "                          call site before a finding names them (default 4)\n"
    "  --sync-work US          a sync waiting on less GPU work is flagged (default 50)\n"
    "                          (US: microseconds, or with a unit: 2ms, 500ns)\n"
    "  --graph-min N           repetitions of a kernel sequence before it is named a CUDA-graph\n"
    "                          candidate (default 10)\n"
    "  --from T, --to T        only what overlaps that window (T: seconds after the trace's\n"
    "                          start, 2.5, 300ms, 40us; or @NS, a host time as listed below);\n"
    "                          the time outside is unrecorded, not idle\n"
    "  --device N[,M]          only those devices' idle time (causes still from every CUDA call)\n"
    "  --pid P[,P]             only those processes' trace files\n"
    "  --rank R[,R]            only those ranks' trace files\n"
    "Each process (trace file) is analysed on its own; causes: docs/gaps.md.\n"
    "Each listed gap names the call that ended it, the innermost NVTX range open on its\n"
    "thread and, for traces recorded with `cutrace record --stacks`, its call site.\n";

/* Parses a duration in microseconds, or with a unit ("2ms", "500ns"), into ns. */
static int parse_us(const char *s, uint64_t *ns) { return cli_parse_duration(s, 1000, ns); }

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
  if (in->rc >= 0) cli_report_drops("gaps", path, &st);
  uint64_t unresolved = in->rc >= 0 ? ct_gaps_rows_unresolved(c->g) : 0;
  if (unresolved)
    fprintf(stderr,
            "cutrace gaps: %s: %llu row%s written without knowing their NVTX range (they "
            "waited too long: see docs/gaps.md, \"CSV\")\n",
            path, (unsigned long long)unresolved, unresolved == 1 ? "" : "s");
  if (in->rc < 0) { /* open errors already name the file; the status is decided at the end */
    if (st.message[0] && !strncmp(st.message, path, strlen(path)))
      fprintf(stderr, "cutrace gaps: %s\n", st.message);
    else
      fprintf(stderr, "cutrace gaps: %s: %s\n", path, st.message[0] ? st.message : "unreadable");
  } else if (in->rc > 0) {
    fprintf(stderr, "cutrace gaps: %s: %s (partial result)\n", path, st.message);
    if (c->status < 1) c->status = 1;
  }
  return 0;
}

static void progress(const char *path, uint64_t records) {
  fprintf(stderr, "\rcutrace gaps: %s: %llu M records", path, (unsigned long long)(records >> 20));
}


/* Appends "--name=value" to the options the advice line repeats (dropped when out of memory). */
static void keep_opt(gaps_cli *c, const char *name, const char *value) {
  char **no = realloc(c->opts, (size_t)(c->nopts + 1) * sizeof *no);
  if (!no) return;
  c->opts = no;
  size_t len = strlen(name) + strlen(value) + 2;
  if ((c->opts[c->nopts] = malloc(len))) snprintf(c->opts[c->nopts++], len, "%s=%s", name, value);
}

/* Frees the options kept for the advice line. */
static void free_opts(gaps_cli *c) {
  for (int i = 0; i < c->nopts; i++) free(c->opts[i]);
  free(c->opts);
}

/* A --from/--to bound as the option's value ("@NS", or a time after the start in the
 * largest unit that keeps it exact). */
static void keep_bound(gaps_cli *c, const char *name, const ct_time_bound *b) {
  if (!b->set) return;
  char v[48];
  if (b->absolute) snprintf(v, sizeof v, "@%llu", (unsigned long long)b->ns);
  else if (b->ns % 1000000000ull == 0) snprintf(v, sizeof v, "%llus", (unsigned long long)(b->ns / 1000000000ull));
  else if (b->ns % 1000000ull == 0) snprintf(v, sizeof v, "%llums", (unsigned long long)(b->ns / 1000000ull));
  else if (b->ns % 1000ull == 0) snprintf(v, sizeof v, "%lluus", (unsigned long long)(b->ns / 1000ull));
  else snprintf(v, sizeof v, "%lluns", (unsigned long long)b->ns);
  keep_opt(c, name, v);
}

/* Keeps a selection option for the advice line (a cli_selection_each callback). */
static void keep_selection(void *user, const char *name, const char *value) {
  keep_opt(user, name, value);
}

static int bad(const char *what, const char *value) {
  fprintf(stderr, "cutrace gaps: %s '%s' (try: cutrace gaps --help)\n", what, value);
  return 2;
}

/* The options that take a value (cli_run_options_first). */
static const char *const valued[] = {"--format", "--tables", "--min-gap", "--launch-threshold", "--top",
                                     "--launch-bound-min", "--repeat-min", "--sync-work",
                                     "--graph-min", NULL};

/* cmd_gaps with its options first, each valued one followed by its value, and "--"
 * ending them (cli_run_options_first). */
static int run_gaps(int argc, char **argv) {
  gaps_cli c;
  memset(&c, 0, sizeof c);
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  char **files = calloc((size_t)argc + 1, sizeof *files);
  int nfiles = 0;
  if (!files) return 2;
  int rc = -1, operands_only = 0, top_given = 0, min_gap_given = 0;
  const char *tables = NULL;
  ct_model_options window;
  ct_model_get_defaults(&window); /* --from/--to, taken out of argv by main.c */
  keep_bound(&c, "--from", &window.from);
  keep_bound(&c, "--to", &window.to);
  cli_selection_each(keep_selection, &c);
  for (int i = 1; i < argc && rc < 0; i++) {
    const char *a = argv[i], *v = "";
    uint64_t x;
    const char *matched = NULL;
    for (unsigned k = 0; !operands_only && valued[k]; k++)
      if (!strcmp(a, valued[k])) matched = valued[k];
    if (operands_only || a[0] != '-' || !a[1]) {
      files[nfiles++] = argv[i];
    } else if (!strcmp(a, "--")) {
      operands_only = 1;
    } else if (cli_is_help(a)) {
      fputs(usage_text, stdout);
      rc = 0;
    } else if (!strcmp(a, "--summary")) {
      c.summary = 1;
    } else if (!matched) {
      rc = bad("unknown option", a);
    } else if (i + 1 >= argc || !*(v = argv[++i])) {
      rc = cli_missing_value("gaps", a);
    } else if (!strcmp(a, "--format")) {
      if (ct_parse_out_format(v, &c.fmt) < 0) rc = bad("--format takes text, json or csv, not", v);
    } else if (!strcmp(a, "--tables")) {
      if (ct_gaps_csv_table_bits(v) < 0) rc = bad("--tables takes gaps, findings or both, not", v);
      tables = v;
    } else if (!strcmp(a, "--min-gap")) {
      if (parse_us(v, &o.min_gap_ns) < 0) rc = bad("--min-gap takes microseconds (or 2ms, 500ns), not", v);
      min_gap_given = 1;
    } else if (!strcmp(a, "--launch-threshold")) {
      if (parse_us(v, &o.launch_threshold_ns) < 0)
        rc = bad("--launch-threshold takes microseconds (or 2ms, 500ns), not", v);
    } else if (!strcmp(a, "--sync-work")) {
      if (parse_us(v, &o.sync_work_ns) < 0) rc = bad("--sync-work takes microseconds (or 2ms, 500ns), not", v);
    } else if (!strcmp(a, "--top")) {
      if (ct_parse_u64(v, &x) < 0 || x > 10000) rc = bad("--top takes a count up to 10000, not", v);
      else o.top = (unsigned)x, top_given = 1;
    } else if (!strcmp(a, "--launch-bound-min")) {
      if (ct_parse_u64(v, &x) < 0 || !x) rc = bad("--launch-bound-min takes a count >= 1, not", v);
      else o.launch_bound_min = x;
    } else if (!strcmp(a, "--repeat-min")) {
      if (ct_parse_u64(v, &x) < 0 || !x) rc = bad("--repeat-min takes a count >= 1, not", v);
      else o.repeat_min = x;
    } else if (!strcmp(a, "--graph-min")) {
      if (ct_parse_u64(v, &x) < 0 || !x) rc = bad("--graph-min takes a count >= 1, not", v);
      else o.graph_min = x;
    }
    if (rc < 0 && matched && strcmp(matched, "--format") && strcmp(matched, "--top") &&
        strcmp(matched, "--tables"))
      keep_opt(&c, matched, v); /* changes what is found: the advice repeats it */
  }
  if (rc < 0) rc = ct_gaps_csv_options(&c, tables, top_given, min_gap_given);
  if (rc >= 0) {
    free_opts(&c);
    free(files);
    return rc;
  }
  if (cli_selection_precheck("gaps", nfiles, files)) {
    free_opts(&c);
    free(files);
    return 2;
  }
  c.top = o.top;
  if (c.summary && o.top < 1) o.top = 1;
  c.g = ct_gaps_new(&o);
  if (!c.g) {
    fprintf(stderr, "cutrace gaps: out of memory\n");
    free_opts(&c);
    free(files);
    return 2;
  }
  void (*saved_hook)(const char *, uint64_t) = ct_model_progress_hook;
  if (isatty(2) && !c.summary) ct_model_progress_hook = progress;
  if (c.fmt == CT_OUT_CSV) ct_gaps_csv_begin(&c);
  char err[300];
  c.args = files;
  c.nargs = nfiles;
  int nin = ct_expand_inputs(nfiles, files, add_input, &c, err, sizeof err);
  if (ct_model_progress_hook == progress) fputs("\r\033[K", stderr);
  ct_model_progress_hook = saved_hook;
  unsigned unreadable = 0;
  for (unsigned i = 0; i < c.ninputs; i++) unreadable += c.inputs[i].rc < 0;
  /* unreadable files beside readable ones make a partial result, alone an error */
  if (unreadable) c.status = unreadable < c.ninputs ? (c.status > 1 ? c.status : 1) : 2;
  if (nin < 0) {
    fprintf(stderr, "cutrace gaps: %s\n", err);
    c.status = 2;
  } else if (c.summary) {
    /* every file unreadable: said on stderr, not "no GPU activity" after it */
    if (!c.ninputs || unreadable < c.ninputs) ct_gaps_print_summary(&c);
  } else if (c.fmt == CT_OUT_JSON) {
    ct_gaps_print_json(&c, &o);
  } else if (c.fmt == CT_OUT_CSV) {
    ct_gaps_csv_end(&c);
  } else {
    ct_gaps_print_text(&c);
  }
  for (unsigned i = 0; i < c.ninputs; i++) free(c.inputs[i].path);
  free(c.inputs);
  free_opts(&c);
  ct_gaps_free(c.g);
  free(files);
  return c.status;
}

/* Options may follow the traces and take --name=value (cli_run_options_first). */
int cmd_gaps(int argc, char **argv) { return cli_run_options_first(argc, argv, valued, run_gaps); }
