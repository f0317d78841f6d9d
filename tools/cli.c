/* Argument handling and messages shared by the subcommands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "progress.h"
#include "reader.h"

const char *cli_option_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n) || (argv[*i][n] && argv[*i][n] != '=')) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  return *i + 1 < argc ? argv[++*i] : "";
}

/* The entry of valued that arg names, alone or as "NAME=value"; NULL when none. */
static const char *valued_option(const char *arg, const char *const *valued) {
  for (; valued && *valued; valued++) {
    size_t n = strlen(*valued);
    if (!strncmp(arg, *valued, n) && (arg[n] == 0 || arg[n] == '=')) return *valued;
  }
  return NULL;
}

int cli_attached_short_value(const char *cmd, const char *arg, const char *opt) {
  size_t n = strlen(opt);
  if (strncmp(arg, opt, n) || !arg[n]) return 0;
  const char *v = arg + n + (arg[n] == '=');
  if (!*v) return cli_missing_value(cmd, opt); /* "-o=" */
  fprintf(stderr, "cutrace %s: %s takes its value as the next argument: %s %s, not '%s' (try: "
                  "cutrace %s --help)\n", cmd, opt, opt, v, arg, cmd);
  return 2;
}

/* The single-dash entry of valued ("-o") that arg starts with, a value attached ("-o=x",
 * "-ox"); NULL when none. */
static const char *attached_short(const char *arg, const char *const *valued) {
  for (; valued && *valued; valued++)
    if ((*valued)[1] != '-' && !strncmp(arg, *valued, strlen(*valued)) && arg[strlen(*valued)])
      return *valued;
  return NULL;
}

/* cli_run_options_first's new argv (free it; its strings are argv's own, an '=' cut to
 * '\0'), its count in *out_argc; NULL after one line on stderr. */
static char **options_first(int argc, char **argv, const char *const *valued, int *out_argc) {
  /* at most one more slot per argument (a split "--name=value") and the final NULL */
  char **out = calloc(2 * (size_t)argc + 1, sizeof *out);
  char **operands = calloc((size_t)argc + 1, sizeof *operands);
  if (!out || !operands) {
    fprintf(stderr, "cutrace %s: out of memory\n", argv[0]);
    free(out);
    free(operands);
    return NULL;
  }
  int n = 0, nops = 0, i = 1;
  out[n++] = argv[0];
  for (; i < argc && strcmp(argv[i], "--"); i++) {
    char *a = argv[i];
    const char *name = a[0] == '-' && a[1] ? valued_option(a, valued) : NULL;
    const char *attached = a[0] == '-' && a[1] != '-' ? attached_short(a, valued) : NULL;
    if (attached) {
      cli_attached_short_value(argv[0], a, attached); /* "-o=x", "-ox": said, refused */
      free(out);
      free(operands);
      return NULL;
    } else if (a[0] != '-' || !a[1]) {
      operands[nops++] = a;
    } else if (!name) {
      out[n++] = a; /* a flag, or an unknown option the command will name */
    } else if ((a[strlen(name)] == '=' && !a[strlen(name) + 1] && name[1] == '-') ||
               (!a[strlen(name)] && i + 1 < argc && !argv[i + 1][0])) {
      cli_missing_value(argv[0], name); /* "--name=" or "--name ''" */
      free(out);
      free(operands);
      return NULL;
    } else if (a[strlen(name)] == '=' && name[1] == '-') {
      a[strlen(name)] = '\0';
      out[n++] = a;
      out[n++] = a + strlen(name) + 1;
    } else if (i + 1 < argc) {
      out[n++] = a;
      out[n++] = argv[++i];
    } else {
      cli_missing_value(argv[0], a);
      free(out);
      free(operands);
      return NULL;
    }
  }
  if (i < argc) out[n++] = argv[i++]; /* "--": what follows are operands */
  for (int k = 0; k < nops; k++) out[n++] = operands[k];
  while (i < argc) out[n++] = argv[i++];
  out[n] = NULL;
  free(operands);
  *out_argc = n;
  return out;
}

int cli_run_options_first(int argc, char **argv, const char *const *valued,
                          int (*run)(int argc, char **argv)) {
  int n;
  char **args = options_first(argc, argv, valued, &n);
  if (!args) return 2;
  int rc = run(n, args);
  free(args);
  return rc;
}

int cli_missing_value(const char *cmd, const char *opt) {
  fprintf(stderr, "cutrace %s: %s needs a value (try: cutrace %s --help)\n", cmd, opt, cmd);
  return 2;
}

int cli_output_status(const char *cmd, int status) {
  static int said; /* once, though a command and main() may both ask */
  errno = 0;
  int flushed = fflush(stdout) == 0;
  if (flushed && !ferror(stdout)) return status;
  if (!said++) {
    if (!flushed && errno) /* the flush itself failed: errno says why */
      fprintf(stderr, "cutrace %s: standard output: cannot write: %s\n", cmd, strerror(errno));
    else
      fprintf(stderr, "cutrace %s: standard output: cannot write (disk full, or the reader "
                      "closed it?)\n", cmd);
  }
  return 2;
}

int cli_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

/* cli_run_on_traces's files: the command's per_file, the worst status of the files it
 * could read, how many files and how many it could not read at all. */
struct each_file {
  int (*per_file)(const char *path, void *status);
  int status;
  unsigned files, unreadable;
};

static int each_file_status(const char *path, void *arg) {
  struct each_file *run = arg;
  int status = 0;
  int rc = run->per_file(path, &status);
  run->files++;
  if (status >= 2) run->unreadable++;
  else if (status > run->status) run->status = status;
  return rc;
}

int cli_run_on_traces(int argc, char **argv, const char *usage,
                      int (*per_file)(const char *path, void *status)) {
  if (argc > 1 && cli_is_help(argv[1])) {
    printf("usage: %s\n", usage);
    return 0;
  }
  /* options (none but --help) end at "--": every argument after it is a trace */
  int first = 1, n = 0;
  char **paths = calloc((size_t)argc, sizeof *paths);
  if (!paths) {
    fprintf(stderr, "cutrace %s: out of memory\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    if (first && !strcmp(argv[i], "--")) {
      first = 0;
    } else if (first && argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "cutrace %s: unknown option '%s' (try: cutrace %s --help)\n", argv[0],
              argv[i], argv[0]);
      free(paths);
      return 2;
    } else {
      paths[n++] = argv[i];
    }
  }
  struct each_file run = {per_file, 0, 0, 0};
  char err[300];
  int expanded = ct_expand_inputs(n, paths, each_file_status, &run, err, sizeof err);
  free(paths);
  if (expanded < 0) {
    fprintf(stderr, "cutrace %s: %s\n", argv[0], err);
    return 2;
  }
  /* unreadable files beside readable ones make a partial result, alone an error */
  if (run.unreadable) return run.unreadable < run.files ? 1 : 2;
  return run.status;
}

static const char *progress_cmd;
static int progress_shown;

static void show_progress(const char *path, uint64_t records) {
  fprintf(stderr, "\rcutrace %s: %s: %.1fM records\033[K", progress_cmd, path, records / 1e6);
  progress_shown = 1;
}

void cli_progress_start(const char *cmd) {
  if (!isatty(2)) return;
  progress_cmd = cmd;
  ct_model_progress_hook = show_progress;
}

void cli_progress_done(void) {
  if (progress_shown) fprintf(stderr, "\r\033[K");
  progress_shown = 0;
  ct_model_progress_hook = NULL;
}

static void report_unjoined(const char *cmd, const char *path, const ct_model_stats *st);

void cli_report_drops(const char *cmd, const char *path, const ct_model_stats *st) {
  report_unjoined(cmd, path, st);
  if (!st->dropped) return;
  cli_progress_done();
  fprintf(stderr,
          "cutrace %s: %s: the tracer lost %llu record%s (its buffers were full: "
          "CUTRACE_BUFFER_KB); what happened near them is missing, idle time there may be "
          "work\n",
          cmd, path, (unsigned long long)st->dropped, st->dropped == 1 ? "" : "s");
}

/* The GPU activities the model delivered without their call on a file without drops
 * (ct_model_stats.joins_missed): said, so that a copy shown with no direction and 0
 * bytes is never silent. */
static void report_unjoined(const char *cmd, const char *path, const ct_model_stats *st) {
  if (st->dropped || !st->joins_missed) return;
  cli_progress_done();
  fprintf(stderr, "cutrace %s: %s: %llu GPU activit%s shown without the call that made %s (a copy "
          "then has no direction or size)", cmd, path, (unsigned long long)st->joins_missed,
          st->joins_missed == 1 ? "y" : "ies", st->joins_missed == 1 ? "it" : "them");
  if (st->joins_given_up) {
    fprintf(stderr, ": %llu waited for it longer than the tools do (%.0f s of trace time and "
            "%llu events held: CUTRACE_JOIN_HOLD)", (unsigned long long)st->joins_given_up,
            CT_MODEL_JOIN_WAIT_NS / 1e9, (unsigned long long)st->join_hold);
    if (st->calls_after_give_up)
      fprintf(stderr, ", %llu of those calls came later (up to %.3f s late)",
              (unsigned long long)st->calls_after_give_up, st->late_call_max_ns / 1e9);
  }
  uint64_t absent = st->joins_missed - st->joins_given_up;
  if (absent) fprintf(stderr, "%s%llu had no call in the file", st->joins_given_up ? "; " : ": ",
                      (unsigned long long)absent);
  fputc('\n', stderr);
}

int cli_file_status(const char *cmd, const char *path, int rc, const ct_model_stats *st) {
  if (rc >= 0) cli_report_drops(cmd, path, st);
  if (rc == 0) return 0;
  cli_progress_done();
  if (rc < 0) {
    /* open errors already name the file */
    if (strncmp(st->message, path, strlen(path)) == 0)
      fprintf(stderr, "cutrace %s: %s\n", cmd, st->message);
    else
      fprintf(stderr, "cutrace %s: %s: %s\n", cmd, path, st->message);
    return 2;
  }
  fprintf(stderr, "cutrace %s: %s: %s (partial result)\n", cmd, path, st->message);
  return 1;
}

/* ---- --from / --to ---------------------------------------------------------------- */

int cli_parse_duration(const char *s, uint64_t unit_ns, uint64_t *ns) {
  if (*s == '+') s++;
  if (!((*s >= '0' && *s <= '9') || *s == '.')) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || v < 0) return -1;
  double scale = (double)unit_ns;
  if (!strcmp(end, "ms")) scale = 1e6;
  else if (!strcmp(end, "us")) scale = 1e3;
  else if (!strcmp(end, "ns")) scale = 1;
  else if (!strcmp(end, "s")) scale = 1e9;
  else if (*end) return -1;
  if (v * scale > 1e18) return -1; /* about 31 years */
  *ns = (uint64_t)(v * scale + 0.5);
  return 0;
}

/* Parses a time bound: "@NS" (absolute host ns), or a number of seconds after the
 * trace's start with an optional unit (s, ms, us, ns) and an optional leading '+'. */
static int parse_time_bound(const char *s, ct_time_bound *b) {
  memset(b, 0, sizeof *b);
  b->set = 1;
  if (*s == '@') {
    b->absolute = 1;
    return ct_parse_u64(s + 1, &b->ns);
  }
  return cli_parse_duration(s, 1000000000, &b->ns);
}

int cli_take_time_filter(const char *cmd, int *argc, char **argv) {
  ct_model_options opt;
  memset(&opt, 0, sizeof opt);
  int out = 0;
  for (int i = 0; i < *argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) { /* the rest are not options */
      while (i < *argc) argv[out++] = argv[i++];
      break;
    }
    ct_time_bound *b = !strncmp(a, "--from", 6) ? &opt.from : !strncmp(a, "--to", 4) ? &opt.to : NULL;
    size_t n = b == &opt.from ? 6 : 4;
    if (!b || (a[n] && a[n] != '=')) {
      argv[out++] = argv[i];
      continue;
    }
    const char *v = a[n] == '=' ? a + n + 1 : i + 1 < *argc ? argv[++i] : NULL;
    if (!v || !*v) {
      char opt[8];
      snprintf(opt, sizeof opt, "%.*s", (int)n, a);
      return cli_missing_value(cmd, opt);
    }
    if (parse_time_bound(v, b) < 0) {
      fprintf(stderr,
              "cutrace %s: %.*s takes a time after the trace's start (2.5, 300ms, 40us, 1500ns) "
              "or @NS (host time in ns), not '%s' (try: cutrace %s --help)\n",
              cmd, (int)n, a, v, cmd);
      return 2;
    }
  }
  if (opt.from.set && opt.to.set && opt.from.absolute == opt.to.absolute &&
      opt.from.ns > opt.to.ns) {
    fprintf(stderr, "cutrace %s: --from is after --to (try: cutrace %s --help)\n", cmd, cmd);
    return 2;
  }
  argv[out] = NULL;
  *argc = out;
  if (opt.from.set || opt.to.set) ct_model_set_defaults(&opt);
  return 0;
}

/* ---- advice command lines ----------------------------------------------------------- */

void cli_print_shell_word(FILE *f, const char *word) {
  size_t plain = strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "0123456789_@%+=:,./-");
  if (word[0] && !word[plain]) {
    fputs(word, f);
    return;
  }
  putc('\'', f);
  for (const char *p = word; *p; p++)
    if (*p == '\'') fputs("'\\''", f);
    else putc(*p, f);
  putc('\'', f);
}

void cli_print_shell_args(FILE *f, char *const *options, int noptions, char *const *operands,
                          int noperands) {
  for (int i = 0; i < noptions; i++) {
    putc(' ', f);
    cli_print_shell_word(f, options[i]);
  }
  int dash = 0;
  for (int i = 0; i < noperands; i++) dash |= operands[i][0] == '-';
  if (dash) fputs(" --", f);
  for (int i = 0; i < noperands; i++) {
    putc(' ', f);
    cli_print_shell_word(f, operands[i]);
  }
}
