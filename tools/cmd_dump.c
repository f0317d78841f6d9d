/* cutrace dump: every record of each trace, one line each ("kind field=value ...", string
 * records their own lines), for debugging traces and the tracer; or with --chrome, the
 * trace as Chrome Trace Event JSON for Perfetto UI / chrome://tracing / HTA (chrome.c); or
 * with --perfetto, the same events as Perfetto's protobuf trace (chrome_perfetto.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chrome.h"
#include "cli.h"
#include "cli_select.h"
#include "codec.h"
#include "commands.h"
#include "dump_csv.h"
#include "identity.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

static const char usage[] =
    "usage: cutrace dump [DIR|FILE...]\n"
    "       cutrace dump --chrome|--perfetto [-o FILE | --split DIR] [--no-gaps] [--gap-min NS]\n"
    "                      [--queues] [--no-memory] [--from T] [--to T] [DIR|FILE...]\n"
    "       cutrace dump --csv [-o FILE] [--rows gpu|calls|all] [--from T] [--to T] [DIR|FILE...]\n"
    "  Without --chrome: every record one per line as stored, field=value (a string is\n"
    "  its own line, string id=N \"text\"); with several files a line '== PATH ==' comes\n"
    "  before each file's records.\n"
    "  --chrome        Chrome Trace Event JSON (Perfetto UI, chrome://tracing, HTA)\n"
    "  --perfetto      the same as Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):\n"
    "                  about 3 times smaller than the JSON, same events\n"
    "  -o FILE         (--chrome, --perfetto, --csv) write it to FILE ('-' or none: standard\n"
    "                  output)\n"
    "  --split DIR     one document per rank of a distributed job, DIR/rank-N.json (with\n"
    "                  --perfetto: .pftrace; the files of one rank together), for HTA's\n"
    "                  TraceAnalysis(trace_dir=DIR)\n"
    "  --no-gaps       leave out the GPU idle gap tracks\n"
    "  --gap-min NS    shortest gap shown as a slice (default 1000 ns; or with a unit: 5us)\n"
    "  --queues        a counter track per stream: operations queued and not finished\n"
    "  --no-memory     leave out the live-bytes counter tracks of allocations (device memory,\n"
    "                  pinned memory, ...; format 1.5 traces) and Kineto's [memory] events\n"
    "  --from T, --to T  (--chrome, --perfetto, --csv) only what overlaps that window (T: seconds\n"
    "                  after the trace's start, 2.5, 300ms, 40us; or @NS, a host time)\n"
    "  --device N[,M]  (--chrome, --perfetto, --csv) only the GPU work on those devices\n"
    "                  (every CUDA call stays)\n"
    "  --stream ID[,ID] (--chrome, --perfetto, --csv) only the GPU work on those streams\n"
    "  --kernel PAT    (--chrome, --perfetto, --csv) only the GPU work whose demangled name\n"
    "                  holds PAT (a shell glob, whole name, when it has * ? [)\n"
    "  --pid P[,P]     only those processes' trace files\n"
    "  --rank R[,R]    only those ranks' trace files\n"
    "  --csv           a table (RFC 4180 CSV, header row): one row per GPU activity and per\n"
    "                  intercepted call, columns as in docs/dump.md; per file, in the order\n"
    "                  they end\n"
    "  --rows WHICH    gpu (GPU work only), calls (calls only) or all (default)\n";

/* The raw dump's run over its inputs: whether each file gets a header line (several
 * files), the worst status of the files read, how many files (counted before they are
 * read) and how many unreadable. */
typedef struct raw_run {
  int headers;
  int status;
  unsigned files, unreadable;
} raw_run;

/* Prints every record of one file, one line each; with several files a line
 * "== FILE ==" comes first. Damage and unreadable files are said on stderr. */
static int dump_file(const char *path, void *arg) {
  raw_run *run = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    run->unreadable++;
    return 0;
  }
  if (run->headers) printf("== %s ==\n", path);
  ct_record rec;
  uint64_t n = 0;
  while (ct_reader_next(r, &rec)) {
    if ((++n & 0xfffff) == 0 && ct_model_progress_hook) ct_model_progress_hook(path, n);
    if (rec.kind == CT_KIND_STRING) {
      printf("string id=%llu \"", (unsigned long long)rec.u.string.id);
      for (uint32_t i = 0; i < rec.str_len; i++) {
        unsigned char c = (unsigned char)rec.str[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 32 || c > 126) printf("\\x%02x", c);
        else putchar(c);
      }
      printf("\"\n");
      continue;
    }
    printf("%s", ct_kind_name(rec.kind));
    for (unsigned i = 0; i < rec.nfields; i++)
      printf(" %s=%llu", ct_field_name(rec.kind, i), (unsigned long long)rec.u.v[i]);
    putchar('\n');
  }
  const ct_read_status *st = ct_reader_status(r);
  if (st->damaged) {
    cli_progress_done();
    fprintf(stderr, "cutrace dump: %s: %s; %llu record%s read before it (partial result)\n",
            path, st->message, (unsigned long long)st->records, st->records == 1 ? "" : "s");
    if (run->status < 1) run->status = 1;
  }
  ct_reader_close(r);
  return 0;
}

typedef struct chrome_run {
  ct_chrome *c;
  int status;
  size_t files, unreadable;
} chrome_run;

/* Counts one exported file with its status fs (cli_file_status: 2 unreadable). */
static void count_export(int fs, int *status, size_t *files, size_t *unreadable) {
  ++*files;
  if (fs == 2) ++*unreadable;
  else if (fs > *status) *status = fs;
}

static int chrome_file(const char *path, void *arg) {
  chrome_run *run = arg;
  ct_model_stats st;
  int rc = ct_chrome_add_file(run->c, path, &st);
  count_export(cli_file_status("dump", path, rc, &st), &run->status, &run->files, &run->unreadable);
  return 0;
}

/* ---- --split DIR: one Chrome document per rank ---- */

typedef struct split_input {
  char *path;
  ct_identity id;
  int readable; /* the head could be read */
  int done;     /* written (or skipped) */
} split_input;

typedef struct split_run {
  split_input *in;
  size_t n, cap;
} split_run;

static int split_collect(const char *path, void *arg) {
  split_run *s = arg;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    split_input *in = realloc(s->in, cap * sizeof *in);
    if (!in) return -1;
    s->in = in;
    s->cap = cap;
  }
  split_input *x = &s->in[s->n];
  memset(x, 0, sizeof *x);
  if (!(x->path = strdup(path))) return -1;
  s->n++;
  char err[300];
  x->readable = ct_identity_read(path, &x->id, err, sizeof err) == 0;
  if (!x->readable) fprintf(stderr, "cutrace dump: %s\n", err);
  return 0;
}

static int has_rank(const split_input *x) { return x->readable && (x->id.job.known & CT_JOB_RANK); }

/* The output name of input x: "rank-N.json", or its file name less ".ctr" plus ".json"
 * (".pftrace" for Perfetto). */
static void split_name(const char *dir, const split_input *x, int perfetto, char *buf, size_t len) {
  const char *ext = perfetto ? "pftrace" : "json";
  if (has_rank(x)) {
    snprintf(buf, len, "%s/rank-%llu.%s", dir, (unsigned long long)x->id.job.rank, ext);
    return;
  }
  const char *base = strrchr(x->path, '/');
  base = base ? base + 1 : x->path;
  size_t n = strlen(base);
  if (n > 4 && !strcmp(base + n - 4, ".ctr")) n -= 4;
  snprintf(buf, len, "%s/%.*s.%s", dir, (int)n, base, ext);
}

/* 1 when input j goes into the document of input i (itself, or the same rank). */
static int same_document(const split_run *s, size_t i, size_t j) {
  const split_input *x = &s->in[j];
  if (x->done || !x->readable) return 0;
  return j == i || (has_rank(&s->in[i]) && has_rank(x) && x->id.job.rank == s->in[i].id.job.rank);
}

/* Writes one document holding input i and every later input of the same rank. */
static int split_write(const char *dir, const ct_chrome_options *options, split_run *s, size_t i,
                       chrome_run *run) {
  ct_chrome_options opt = *options;
  opt.files = 0;
  for (size_t j = i; j < s->n; j++) opt.files += same_document(s, i, j);
  char name[4096];
  split_name(dir, &s->in[i], opt.perfetto, name, sizeof name);
  FILE *out = fopen(name, "w");
  if (!out) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %s\n", name, strerror(errno));
    return -1;
  }
  run->c = ct_chrome_begin(out, &opt);
  if (!run->c) {
    fclose(out);
    fprintf(stderr, "cutrace dump: out of memory\n");
    return -1;
  }
  unsigned files = 0;
  for (size_t j = i; j < s->n; j++) {
    split_input *x = &s->in[j];
    if (!same_document(s, i, j)) continue;
    x->done = 1;
    files++;
    (void)chrome_file(x->path, run);
  }
  errno = 0;
  int wrc = ct_chrome_end(run->c);
  if (fclose(out) != 0) wrc = -1;
  if (wrc < 0) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %s\n", name, strerror(errno ? errno : EIO));
    return -1;
  }
  char label[400];
  const split_input *x = &s->in[i];
  printf("%s: %s, %u trace file%s\n", name,
         ct_proc_label(&x->id.job, x->id.proc.pid, x->id.host, label, sizeof label), files,
         files == 1 ? "" : "s");
  return 0;
}

/* cutrace dump --chrome|--perfetto --split DIR: DIR/rank-N.json (.pftrace) per rank (every file of the rank:
 * a rank's fork children with it); files without a rank next to ranked ones (the
 * launcher's) are left out with a note, and alone each get DIR/<name>.json. */
static int dump_split(const char *dir, const ct_chrome_options *opt, int argc, char **argv) {
  if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
    fprintf(stderr, "cutrace dump: %s: cannot create: %s\n", dir, strerror(errno));
    return 2;
  }
  split_run s = {0};
  chrome_run run = {0};
  char err[300];
  cli_progress_start("dump");
  int n = ct_expand_inputs(argc, argv, split_collect, &s, err, sizeof err);
  int any_rank = 0, failed = 0;
  for (size_t i = 0; i < s.n; i++) any_rank |= has_rank(&s.in[i]);
  for (size_t i = 0; i < s.n && n >= 0 && !failed; i++) {
    split_input *x = &s.in[i];
    if (!x->readable) {
      run.files++;
      run.unreadable++;
    } else if (any_rank && !has_rank(x)) {
      cli_progress_done();
      fprintf(stderr, "cutrace dump: %s: no rank (the launcher?): left out of %s\n", x->path, dir);
    } else if (!x->done) {
      failed = split_write(dir, opt, &s, i, &run) < 0;
    }
  }
  cli_progress_done();
  for (size_t i = 0; i < s.n; i++) free(s.in[i].path);
  free(s.in);
  if (n < 0) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    return 2;
  }
  if (failed) return 2;
  if (run.unreadable) return run.unreadable < run.files ? (run.status > 1 ? run.status : 1) : 2;
  return run.status;
}

/* Counts an input file (ct_expand_inputs's callback). */
static int count_file(const char *path, void *arg) {
  (void)path;
  ++*(unsigned *)arg;
  return 0;
}

static int bad_usage(const char *what, const char *arg) {
  fprintf(stderr, "cutrace dump: %s '%s' (try: cutrace dump --help)\n", what, arg);
  return 2;
}

/* The end of an export to out (out_path; stdout when NULL or "-"): closes out and says
 * what went wrong. wrc: the writer's end (-1 failed, errno says why); n: what
 * ct_expand_inputs returned (err its message); status, files and unreadable: the
 * inputs'. Returns the exit status. */
static int export_status(FILE *out, const char *out_path, int wrc, int n, const char *err,
                         int status, size_t files, size_t unreadable) {
  int write_errno = errno ? errno : EIO;
  if (out != stdout && fclose(out) != 0) {
    if (wrc == 0) write_errno = errno ? errno : EIO;
    wrc = -1;
  }
  if (n < 0) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    return 2;
  }
  if (wrc < 0 && out == stdout) return cli_output_status("dump", 2); /* says it once */
  if (wrc < 0) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %s\n", out_path, strerror(write_errno));
    return 2;
  }
  /* unreadable files next to readable ones make a partial result, alone an error */
  if (unreadable) return unreadable < files ? (status > 1 ? status : 1) : 2;
  return status;
}

/* The CSV export's run over its inputs. */
typedef struct csv_run {
  ct_csv *c;
  int status;
  size_t files, unreadable;
} csv_run;

/* Writes one file's rows; says on stderr what went wrong with it (damage, lost records,
 * rows written without their NVTX range or library call). */
static int csv_file(const char *path, void *arg) {
  csv_run *run = arg;
  ct_model_stats st;
  ct_csv_file_stats fst;
  int rc = ct_csv_add_file(run->c, path, &st, &fst);
  int fs = cli_file_status("dump", path, rc, &st);
  if (fst.unresolved) {
    cli_progress_done();
    fprintf(stderr,
            "cutrace dump: %s: %llu row%s written without knowing their NVTX range or library "
            "call (they waited too long: see docs/dump.md)\n",
            path, (unsigned long long)fst.unresolved, fst.unresolved == 1 ? "" : "s");
  }
  if (fst.late) {
    cli_progress_done();
    fprintf(stderr,
            "cutrace dump: %s: %llu row%s out of end order (%s more than 2 s of trace time "
            "and %llu events late: CUTRACE_JOIN_HOLD)\n",
            path, (unsigned long long)fst.late, fst.late == 1 ? "" : "s",
            fst.late == 1 ? "its record came" : "their records came",
            (unsigned long long)st.join_hold);
  }
  count_export(fs, &run->status, &run->files, &run->unreadable);
  return 0;
}

/* cutrace dump --csv: every input's rows into one table on out_path (NULL or "-":
 * standard output). */
static int dump_csv(const char *out_path, unsigned rows, int argc, char **argv) {
  FILE *out = stdout;
  if (out_path && strcmp(out_path, "-") && !(out = fopen(out_path, "w"))) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %m\n", out_path);
    return 2;
  }
  static char buf[1 << 16];
  setvbuf(out, buf, _IOFBF, sizeof buf);
  csv_run run = {.c = ct_csv_begin(out, rows)};
  if (!run.c) {
    fprintf(stderr, "cutrace dump: out of memory\n");
    if (out != stdout) fclose(out);
    return 2;
  }
  char err[300];
  cli_progress_start("dump");
  int n = ct_expand_inputs(argc, argv, csv_file, &run, err, sizeof err);
  cli_progress_done();
  errno = 0;
  int wrc = ct_csv_end(run.c);
  return export_status(out, out_path, wrc, n, err, run.status, run.files, run.unreadable);
}

static int run_dump(int argc, char **argv) {
  int chrome = 0, csv = 0, gap_min_given = 0, i = 1;
  unsigned rows = CT_CSV_ROWS_ALL;
  const char *out_path = NULL, *split_dir = NULL;
  ct_chrome_options opt = {.gaps = 1, .gap_min_ns = 1000, .selection = cli_selection_text()};
  for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      i++;
      break;
    } else if (cli_is_help(a)) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--chrome")) {
      chrome = 1;
    } else if (!strcmp(a, "--csv")) {
      csv = 1;
    } else if (!strcmp(a, "--rows")) {
      if (i + 1 >= argc || !argv[i + 1][0]) return cli_missing_value("dump", a);
      const char *w = argv[++i];
      if (!strcmp(w, "gpu")) rows = CT_CSV_ROWS_GPU;
      else if (!strcmp(w, "calls")) rows = CT_CSV_ROWS_CALLS;
      else if (!strcmp(w, "all")) rows = CT_CSV_ROWS_ALL;
      else return bad_usage("--rows takes gpu, calls or all, not", w);
    } else if (!strcmp(a, "--perfetto")) {
      chrome = 1;
      opt.perfetto = 1;
    } else if (!strcmp(a, "--no-gaps")) {
      opt.gaps = 0;
    } else if (!strcmp(a, "--queues")) {
      opt.queues = 1;
    } else if (!strcmp(a, "--no-memory")) {
      opt.no_memory = 1;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--gap-min") || !strcmp(a, "--split")) {
      if (i + 1 >= argc || !argv[i + 1][0]) return cli_missing_value("dump", a);
      if (!strcmp(a, "-o")) out_path = argv[++i];
      else if (!strcmp(a, "--split")) split_dir = argv[++i];
      else if (gap_min_given = 1, cli_parse_duration(argv[++i], 1, &opt.gap_min_ns) < 0)
        return bad_usage("--gap-min takes nanoseconds (or 5us, 1ms), not", argv[i]);
    } else {
      return bad_usage("unknown option", a);
    }
  }
  if (csv && chrome) return bad_usage("--csv excludes --chrome and --perfetto; got", "--csv");
  if (csv && split_dir) return bad_usage("--split needs --chrome or --perfetto; got", "--csv");
  /* the Chrome-only options mean nothing to a table: refused, not silently ignored */
  if (csv && opt.queues) return bad_usage("--queues needs --chrome or --perfetto; got", "--csv");
  if (csv && opt.no_memory)
    return bad_usage("--no-memory needs --chrome or --perfetto; got", "--csv");
  if (csv && !opt.gaps) return bad_usage("--no-gaps needs --chrome or --perfetto; got", "--csv");
  if (csv && gap_min_given)
    return bad_usage("--gap-min needs --chrome or --perfetto; got", "--csv");
  if (cli_selection_precheck("dump", argc - i, argv + i)) return 2;
  if (csv) return dump_csv(out_path, rows, argc - i, argv + i);
  if (rows != CT_CSV_ROWS_ALL) return bad_usage("--rows needs --csv; got", "--rows");
  if (split_dir && !chrome) return bad_usage("--split needs --chrome or --perfetto; got", split_dir);
  if (split_dir && out_path) return bad_usage("--split writes its own files; -o", out_path);
  if (split_dir) return dump_split(split_dir, &opt, argc - i, argv + i);
  if (!chrome) {
    if (out_path) return bad_usage("-o needs --chrome, --perfetto or --csv; got", out_path);
    if (opt.queues) return bad_usage("--queues needs --chrome or --perfetto; got", "--queues");
    if (opt.no_memory)
      return bad_usage("--no-memory needs --chrome or --perfetto; got", "--no-memory");
    if (!opt.gaps) return bad_usage("--no-gaps needs --chrome or --perfetto; got", "--no-gaps");
    if (gap_min_given)
      return bad_usage("--gap-min needs --chrome or --perfetto; got", "--gap-min");
    raw_run run = {0};
    char err[300];
    int n = ct_expand_inputs(argc - i, argv + i, count_file, &run.files, err, sizeof err);
    run.headers = run.files > 1;
    cli_progress_start("dump");
    if (n >= 0) n = ct_expand_inputs(argc - i, argv + i, dump_file, &run, err, sizeof err);
    cli_progress_done();
    if (n < 0) {
      fprintf(stderr, "cutrace dump: %s\n", err);
      return 2;
    }
    /* unreadable files next to readable ones make a partial result, alone an error */
    if (run.unreadable) return run.unreadable < run.files ? 1 : 2;
    return run.status;
  }
  FILE *out = stdout;
  if (opt.perfetto && (!out_path || !strcmp(out_path, "-")) && isatty(STDOUT_FILENO)) {
    fprintf(stderr, "cutrace dump: --perfetto writes binary protobuf: give -o FILE or redirect "
                    "standard output\n");
    return 2;
  }
  if (out_path && strcmp(out_path, "-") && !(out = fopen(out_path, "w"))) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %m\n", out_path);
    return 2;
  }
  char err[300];
  if (ct_expand_inputs(argc - i, argv + i, count_file, &opt.files, err, sizeof err) < 0) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    if (out != stdout) fclose(out);
    return 2;
  }
  chrome_run run = {.c = ct_chrome_begin(out, &opt)};
  if (!run.c) {
    fprintf(stderr, "cutrace dump: out of memory\n");
    return 2;
  }
  cli_progress_start("dump");
  int n = ct_expand_inputs(argc - i, argv + i, chrome_file, &run, err, sizeof err);
  cli_progress_done();
  errno = 0;
  int wrc = ct_chrome_end(run.c);
  return export_status(out, out_path, wrc, n, err, run.status, run.files, run.unreadable);
}

/* Options may follow the traces and take --name=value (cli_run_options_first). */
int cmd_dump(int argc, char **argv) {
  static const char *const valued[] = {"-o", "--gap-min", "--split", "--rows", NULL};
  return cli_run_options_first(argc, argv, valued, run_dump);
}
