/*
 * cutrace report: tables of GPU kernels, CUDA API calls, memory operations and
 * GEMMs, summed over every input file (or per process), as text, CSV or JSON
 * (docs/report.md has the columns and the JSON schema).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_select.h"
#include "identity.h"
#include "commands.h"
#include "output.h"
#include "reader.h"
#include "report.h"
#include "report_callsite.h"

static const char usage[] =
    "usage: cutrace report [--format text|csv|json] [--sort total|calls|avg|name]\n"
    "                      [--limit N] [--per-process] [--tables LIST]\n"
    "                      [--by kernel|range|callsite|stack] [--from T] [--to T] [DIR|FILE...]\n"
    "  Tables of GPU kernels, CUDA API calls (CPU time), memory operations and GEMMs.\n"
    "  Memory operations are per kind (HtoD, DtoH, DtoD, HtoH, PtoP, memset, prefetch,\n"
    "  mixed: a batch of copies going different ways, discard) and memory types.\n"
    "  --format F      text (default), csv (one block per table, first column 'table')\n"
    "                  or json (schema in docs/report.md)\n"
    "  --sort KEY      total time (default), calls, avg time, or name\n"
    "  --limit N       at most N rows per table (0 = all, the default)\n"
    "  --per-process   one set of tables per trace file instead of merged tables\n"
    "  --tables LIST   comma-separated subset of kernels,apis,memcpy,gemms,graphs,streams,\n"
    "                  allocs (default: all; --by kernel only) (graphs: CUDA graph execs,\n"
    "                  shown when the trace has graph launches; streams: per stream its\n"
    "                  launch delay, queue depth at each call, calls that found the queue\n"
    "                  empty, kernels shorter than their launch; allocs: per device and\n"
    "                  kind of memory the allocation and release calls, bytes, peak live\n"
    "                  bytes, shown when the trace has them)\n"
    "  --by kernel     the tables above (the default)\n"
    "  --by range      NVTX ranges instead: per range name its instances, CPU time, and\n"
    "                  the kernels and GPU time launched inside it on its thread\n"
    "  --by callsite   per call site (function, file:line of the first frame outside CUDA's\n"
    "                  libraries): calls, CPU time, GPU work launched there, top kernel\n"
    "                  (needs a trace recorded with --stacks)\n"
    "  --by stack      the same per whole call stack\n"
    "  --from T, --to T  only what overlaps that window (T: seconds after the trace's\n"
    "                  start, 2.5, 300ms, 40us; or @NS, a host time)\n"
    "  --device N[,M]  only the GPU work on those devices (the CUDA calls all stay)\n"
    "  --stream ID[,ID] only the GPU work on those streams (ids as the streams table prints)\n"
    "  --kernel PAT    only the GPU work whose name (demangled) holds PAT, or matches it\n"
    "                  whole when it has * ? [ (a shell glob)\n"
    "  --pid P[,P]     only those processes' trace files\n"
    "  --rank R[,R]    only those ranks' trace files (docs/report.md, Selecting part)\n";

typedef struct options {
  enum ct_out_format fmt;
  const char *sort;
  uint64_t limit;
  int per_process;
  int by_range;
  int by_callsite; /* 1: --by callsite, 2: --by stack */
  int tables[CT_NTABLES];
} options;

/* One file read: what the JSON "files" list and the headings show. */
typedef struct file_info {
  char *path;
  struct ct_process proc;
  ct_identity id;     /* host and rank (format 1.4) */
  const char *status; /* "clean", "partial", "unreadable" */
  char message[300];
} file_info;

typedef struct run_state {
  options opt;
  ct_report merged;
  file_info *files;
  size_t nfiles, cap;
  int status;
  ct_json json;
  int printed_tables; /* csv/text: blocks printed so far (for separators) */
  int last_csv_table; /* csv: the table of the block printed last, + 1 (0: none) */
  size_t unreadable;  /* files that could not be read at all */
  ct_callsites *callsites; /* --by callsite / stack: the merged table */
} run_state;

/* Calls fn for the rows of table t in --sort order, at most --limit of them. */
typedef void (*row_fn)(void *ctx, const ct_report *r, enum ct_report_table t, const void *key,
                       size_t klen, const void *value);

static void each_row(const run_state *s, const ct_report *r, enum ct_report_table t, row_fn fn,
                     void *ctx) {
  size_t n = ct_map_count(r->maps[t]);
  size_t *order = ct_report_sorted(r, t, s->opt.sort);
  if (s->opt.limit && n > s->opt.limit) n = s->opt.limit;
  for (size_t i = 0; order && i < n; i++) {
    const void *key;
    size_t klen;
    const void *v = ct_map_entry(r->maps[t], order[i], &key, &klen);
    fn(ctx, r, t, key, klen, v);
  }
  free(order);
}

typedef struct table_ctx {
  ct_table *tb;
  enum ct_out_format fmt;
  uint64_t pid;
  const struct ct_job *job; /* the file's rank (per process), or NULL */
} table_ctx;

static void table_row(void *ctx, const ct_report *r, enum ct_report_table t, const void *key,
                      size_t klen, const void *v) {
  table_ctx *c = ctx;
  ct_table_row(c->tb);
  if (c->fmt == CT_OUT_CSV) {
    ct_table_cell(c->tb, "%s", ct_report_table_ids[t]);
    if (c->pid) ct_table_cell(c->tb, "%llu", (unsigned long long)c->pid);
    if (c->pid && c->job && (c->job->known & CT_JOB_RANK))
      ct_table_cell(c->tb, "%llu", (unsigned long long)c->job->rank);
    else if (c->pid)
      ct_table_cell(c->tb, "%s", "");
    if (c->pid && ct_report_table_has_pid(t)) ct_table_skip_cells(c->tb, 1); /* pid again */
    ct_report_csv_row(c->tb, r, t, key, klen, v);
  } else {
    ct_report_text_row(c->tb, r, t, key, klen, v);
  }
}

/* Prints the tables of one report as text or CSV; pid > 0 adds pid and rank columns to
 * CSV (job: the file's rank, or NULL). */
static void print_tables(run_state *s, const ct_report *r, uint64_t pid, const struct ct_job *job) {
  if (s->opt.by_callsite) {
    /* CSV: the rows of every process in one block under one header */
    int more = s->opt.fmt == CT_OUT_CSV && s->printed_tables;
    if (s->printed_tables++ && !more) ct_out_newline(stdout, s->opt.fmt);
    ct_callsites_print(s->callsites, stdout, s->opt.fmt, s->opt.sort, s->opt.limit, pid, job,
                       !more);
    return;
  }
  static const char *const titles[CT_NTABLES] = {
      "GPU kernels (GPU time)", "CUDA API calls (CPU time)", "Memory operations (GPU time)",
      "GEMMs (GPU time)",
      "CUDA graphs (GPU time of whole launches; what each exec ran: one row per version of its "
      "inventory)",
      "Streams (delay: GPU start - end of its call; queue: ops queued when the call began; "
      "short: kernels shorter than their launch call)",
      "Memory allocations (CPU time of the allocation and release calls; live bytes from "
      "the API's view)",
      "NVTX ranges (CPU time; GPU work launched inside, nested ranges included)"};
  for (int t = 0; t < CT_NTABLES; t++) {
    if (!s->opt.tables[t] || (t == CT_TABLE_GRAPHS && !ct_graphs_launched(r)) ||
        (t == CT_TABLE_ALLOCS && !ct_map_count(r->maps[t])))
      continue;
    table_ctx c = {ct_report_new_table((enum ct_report_table)t, s->opt.fmt, titles[t], pid > 0),
                   s->opt.fmt, pid, job};
    if (!c.tb) continue;
    each_row(s, r, (enum ct_report_table)t, table_row, &c);
    if (s->opt.fmt == CT_OUT_CSV && s->last_csv_table == t + 1) {
      /* the same table of the next process (--per-process --tables NAME): one block */
      ct_table_print_csv(c.tb, stdout, 0);
    } else {
      if (s->printed_tables++) ct_out_newline(stdout, s->opt.fmt);
      ct_table_print(c.tb, stdout, s->opt.fmt);
    }
    s->last_csv_table = t + 1;
    ct_table_free(c.tb);
    size_t rows = ct_map_count(r->maps[t]);
    if (s->opt.fmt == CT_OUT_TEXT && s->opt.limit && rows > s->opt.limit)
      printf("  (%llu more row%s: --limit 0 shows all)\n", (unsigned long long)(rows - s->opt.limit),
             rows - s->opt.limit == 1 ? "" : "s");
    if (t == CT_TABLE_KERNELS && s->opt.fmt == CT_OUT_TEXT) ct_report_print_outliers(stdout, r);
  }
}

/* ---- JSON ----------------------------------------------------------------------- */

/* Writes the members of one report: totals and the four arrays. */
static void json_row(void *ctx, const ct_report *r, enum ct_report_table t, const void *key,
                     size_t klen, const void *v) {
  ct_report_json_row(ctx, r, t, key, klen, v);
}

static void json_tables(run_state *s, const ct_report *r) {
  ct_json *j = &s->json;
  if (s->opt.by_callsite) {
    ct_json_kv_uint(j, "calls", ct_callsites_calls(s->callsites));
    ct_callsites_json(s->callsites, j, s->opt.sort, s->opt.limit);
    return;
  }
  ct_json_kv_uint(j, "gpu_total_ns", r->gpu_total_ns);
  ct_json_kv_uint(j, "activities", r->activities);
  ct_json_kv_uint(j, "calls", r->spans);
  ct_json_kv_uint(j, "pauses", r->pauses);
  for (int t = 0; t < CT_NTABLES; t++) {
    if (!s->opt.tables[t] || (t == CT_TABLE_GRAPHS && !ct_graphs_launched(r)) ||
        (t == CT_TABLE_ALLOCS && !ct_map_count(r->maps[t])))
      continue;
    ct_json_key(j, ct_report_table_ids[t]);
    ct_json_begin_array(j);
    each_row(s, r, (enum ct_report_table)t, json_row, j);
    ct_json_end_array(j);
  }
}

static void json_file(ct_json *j, const file_info *f) {
  ct_json_kv_string(j, "path", f->path);
  ct_json_kv_uint(j, "pid", f->proc.pid);
  ct_json_kv_string(j, "host", f->id.host);
  ct_json_job(j, &f->id.job);
  ct_json_kv_string(j, "status", f->status);
  if (f->message[0]) ct_json_kv_string(j, "message", f->message);
}

/* ---- the command ---------------------------------------------------------------- */

static void text_heading(const run_state *s, const file_info *f, const ct_report *r,
                         int per_file) {
  char b1[32];
  char label[400];
  if (per_file && (f->id.job.known & CT_JOB_RANK))
    printf("== %s (%s)%s\n", ct_proc_label(&f->id.job, f->proc.pid, f->id.host, label, sizeof label),
           f->path, strcmp(f->status, "clean") ? " [partial]" : "");
  else if (per_file)
    printf("== process %llu (%s)%s\n", (unsigned long long)f->proc.pid, f->path,
           strcmp(f->status, "clean") ? " [partial]" : "");
  if (s->opt.by_callsite) return;
  if (s->opt.by_range) {
    if (r->range_calls_lost)
      printf("(%llu calls made outside any closed range could not be kept, no temporary file: "
             "their GPU work is not attributed)\n", (unsigned long long)r->range_calls_lost);
    return;
  }
  printf("GPU activity %s in %llu activities; %llu CUDA calls",
         ct_fmt_duration(r->gpu_total_ns, b1, sizeof b1), (unsigned long long)r->activities,
         (unsigned long long)r->spans);
  if (r->pauses)
    printf(" (recorded in windows: the tracer paused %llu times; see cutrace gaps)",
           (unsigned long long)r->pauses);
  if (r->filtered) printf(" (only what overlaps the --from/--to window)");
  printf("\n\n");
}

static int report_file(const char *path, void *arg) {
  run_state *s = arg;
  if (s->nfiles == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 16;
    file_info *nf = realloc(s->files, ncap * sizeof *nf);
    if (!nf) return -1;
    s->files = nf;
    s->cap = ncap;
  }
  file_info *f = &s->files[s->nfiles++];
  memset(f, 0, sizeof *f);
  f->path = strdup(path);
  ct_report one, *r = &s->merged;
  if (s->opt.per_process) {
    if (ct_report_init(&one) < 0) return -1;
    r = &one;
    if (s->opt.by_callsite && !(s->callsites = ct_callsites_new(s->opt.by_callsite == 2))) {
      ct_report_free(r);
      return -1;
    }
  }
  ct_model_stats st;
  int rc = s->opt.by_callsite ? ct_callsites_add_file(s->callsites, path, &st, &f->proc)
           : s->opt.by_range  ? ct_report_add_ranges(r, path, &st, &f->proc)
                              : ct_report_add_file(r, path, &st, &f->proc);
  int fs = cli_file_status("report", path, rc, &st);
  if (fs == 2) s->unreadable++;
  else if (fs > s->status) s->status = fs;
  f->status = fs == 0 ? "clean" : fs == 1 ? "partial" : "unreadable";
  if (rc) snprintf(f->message, sizeof f->message, "%s", st.message);
  char err[300];
  if (rc >= 0) (void)ct_identity_read(path, &f->id, err, sizeof err); /* read once already */
  if (s->opt.per_process) {
    if (rc < 0 && s->opt.fmt == CT_OUT_JSON) {
      ct_json_begin_object(&s->json);
      json_file(&s->json, f);
      ct_json_end_object(&s->json);
    } else if (rc >= 0) {
      if (s->opt.fmt == CT_OUT_JSON) {
        ct_json_begin_object(&s->json);
        json_file(&s->json, f);
        json_tables(s, r);
        ct_json_end_object(&s->json);
      } else {
        if (s->opt.fmt == CT_OUT_TEXT) {
          text_heading(s, f, r, 1);
          s->printed_tables = 0;
        }
        print_tables(s, r, f->proc.pid ? f->proc.pid : 1, &f->id.job);
        if (s->opt.fmt == CT_OUT_TEXT) putchar('\n');
      }
    }
    ct_report_free(r);
    ct_callsites_free(s->callsites);
    s->callsites = NULL;
  }
  return 0;
}

static int parse_tables(const char *list, int *tables) {
  memset(tables, 0, CT_NTABLES * sizeof *tables);
  char buf[128];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int t = 0; t < CT_TABLE_RANGES; t++) /* ranges come with --by range */
      if (!strcmp(tok, ct_report_table_ids[t])) tables[t] = found = 1;
    if (!found) return -1;
  }
  return 0;
}

static int bad_usage(const char *fmt, const char *arg) {
  fprintf(stderr, "cutrace report: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (try: cutrace report --help)\n");
  return 2;
}

static int run_report(int argc, char **argv) {
  run_state s;
  memset(&s, 0, sizeof s);
  s.opt.sort = "total";
  s.callsites = NULL;
  for (int t = 0; t < CT_TABLE_RANGES; t++) s.opt.tables[t] = 1;
  int i = 1;
  const char *tables_arg = NULL, *by_arg = "kernel";
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--")) {
      i++;
      break;
    } else if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--per-process")) {
      s.opt.per_process = 1;
      continue;
    }
    if (strcmp(a, "--format") && strcmp(a, "--sort") && strcmp(a, "--limit") &&
        strcmp(a, "--tables") && strcmp(a, "--by"))
      return bad_usage("unknown option '%s'", a);
    if (!val) return cli_missing_value("report", a);
    i++;
    if (!strcmp(a, "--format") && ct_parse_out_format(val, &s.opt.fmt) < 0)
      return bad_usage("--format takes text, csv or json, not '%s'", val);
    if (!strcmp(a, "--sort")) {
      if (strcmp(val, "total") && strcmp(val, "calls") && strcmp(val, "avg") && strcmp(val, "name"))
        return bad_usage("--sort takes total, calls, avg or name, not '%s'", val);
      s.opt.sort = val;
    }
    if (!strcmp(a, "--limit") && ct_parse_u64(val, &s.opt.limit) < 0)
      return bad_usage("--limit takes a number, not '%s'", val);
    if (!strcmp(a, "--tables") && parse_tables(val, s.opt.tables) < 0)
      return bad_usage("--tables takes kernels,apis,memcpy,gemms,graphs,streams,allocs, not '%s'",
                       val);
    if (!strcmp(a, "--by") && strcmp(val, "kernel") && strcmp(val, "range") &&
        strcmp(val, "callsite") && strcmp(val, "stack"))
      return bad_usage("--by takes kernel, range, callsite or stack, not '%s'", val);
    if (!strcmp(a, "--tables")) tables_arg = val;
    if (!strcmp(a, "--by")) {
      by_arg = val;
      s.opt.by_range = !strcmp(val, "range");
      s.opt.by_callsite = !strcmp(val, "callsite") ? 1 : !strcmp(val, "stack") ? 2 : 0;
    }
  }
  if (tables_arg && strcmp(by_arg, "kernel")) /* was ignored: say so */
    return bad_usage("--tables chooses among the tables of --by kernel; --by %s prints its own "
                     "table", by_arg);
  if (s.opt.by_callsite && !s.opt.per_process &&
      !(s.callsites = ct_callsites_new(s.opt.by_callsite == 2))) {
    fprintf(stderr, "cutrace report: out of memory\n");
    return 2;
  }
  if (s.opt.by_range)
    for (int t = 0; t < CT_NTABLES; t++) s.opt.tables[t] = t == CT_TABLE_RANGES;
  if (!s.opt.per_process && ct_report_init(&s.merged) < 0) {
    fprintf(stderr, "cutrace report: out of memory\n");
    return 2;
  }
  if (cli_selection_precheck("report", argc - i, argv + i)) return 2;
  if (s.opt.fmt == CT_OUT_TEXT) cli_selection_print(stdout);
  if (s.opt.fmt == CT_OUT_JSON) {
    ct_json_init(&s.json, stdout, 1);
    ct_json_begin_object(&s.json);
    ct_json_kv_string(&s.json, "schema", "cutrace-report/1"); /* as gaps and diff name theirs */
    ct_json_kv_uint(&s.json, "cutrace_report", 1);
    ct_json_kv_bool(&s.json, "per_process", s.opt.per_process);
    cli_selection_json(&s.json);
    if (s.opt.per_process) {
      ct_json_key(&s.json, "processes");
      ct_json_begin_array(&s.json);
    }
  }
  cli_progress_start("report");
  char err[300];
  int n = ct_expand_inputs(argc - i, argv + i, report_file, &s, err, sizeof err);
  cli_progress_done();
  /* unreadable files next to readable ones make a partial result, alone an error */
  if (s.unreadable) s.status = s.unreadable < s.nfiles ? (s.status > 1 ? s.status : 1) : 2;
  if (n < 0) {
    fprintf(stderr, "cutrace report: %s\n", err);
    s.status = 2;
  }
  if (s.opt.fmt == CT_OUT_JSON) {
    if (s.opt.per_process) {
      ct_json_end_array(&s.json);
    } else {
      ct_json_key(&s.json, "files");
      ct_json_begin_array(&s.json);
      for (size_t k = 0; k < s.nfiles; k++) {
        ct_json_begin_object(&s.json);
        json_file(&s.json, &s.files[k]);
        ct_json_end_object(&s.json);
      }
      ct_json_end_array(&s.json);
      json_tables(&s, &s.merged);
    }
    ct_json_kv_string(&s.json, "status", s.status == 0 ? "clean" : s.status == 1 ? "partial" : "error");
    ct_json_end_object(&s.json);
    ct_json_finish(&s.json);
  } else if (!s.opt.per_process && n >= 0) {
    if (s.opt.fmt == CT_OUT_TEXT && s.nfiles) text_heading(&s, &s.files[0], &s.merged, 0);
    print_tables(&s, &s.merged, 0, NULL);
  }
  if (!s.opt.per_process) ct_report_free(&s.merged);
  ct_callsites_free(s.callsites);
  for (size_t k = 0; k < s.nfiles; k++) free(s.files[k].path);
  free(s.files);
  return cli_output_status("report", s.status);
}

/* Options may follow the traces and take --name=value (cli_run_options_first). */
int cmd_report(int argc, char **argv) {
  static const char *const valued[] = {"--format", "--sort", "--limit", "--tables", "--by", NULL};
  return cli_run_options_first(argc, argv, valued, run_report);
}
