/*
 * cutrace record: runs a program with libtrace.so preloaded and CUTRACE_OUTPUT set,
 * so that it and every process it starts that uses CUDA write <host>.<pid>.ctr files
 * into DIR while they run (the others add a line to DIR/.nocuda); forwards
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to cutrace; returns the program's exit status
 * (128 + signal when it was killed) and prints a summary with the count of processes
 * that ran without CUDA.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "netaddr.h"
#include "nocuda_list.h"
#include "output.h"
#include "reader.h"

#ifndef CT_INSTALLED_PRELOAD
#define CT_INSTALLED_PRELOAD "/usr/local/lib/cutrace/libtrace.so"
#endif

static const char usage[] =
    "usage: cutrace record [-o DIR | --collector ADDR] [-q] [--stacks[=WHICH]] [--stack-depth N]\n"
    "                      [--python=auto|off] [--capture=all|profiler|nvtx:NAME]\n"
    "                      [--delay S] [--duration S] [--all-processes]\n"
    "                      [--] CMD [ARGS...]\n"
    "  Runs CMD with the tracer preloaded; every process it starts that uses CUDA\n"
    "  writes its trace into DIR (default cutrace.data) while it runs; the others are\n"
    "  counted in the summary. A DIR already holding traces is renamed DIR.old first.\n"
    "  Returns CMD's exit status (128+N when killed by signal N).\n"
    "  -o DIR   where the traces go\n"
    "  --collector ADDR  stream every process's trace to a running `cutrace collect` at\n"
    "           ADDR (tcp:HOST:PORT or unix:PATH; sets CUTRACE_OUTPUT=ADDR) instead\n"
    "           of writing DIR; no summary then\n"
    "  -q       no summary at the end\n"
    "  --stacks[=launches|all|off]  record the call stack of each call that queues GPU\n"
    "           work (launches: a plain --stacks, and the tracer's default without the\n"
    "           option), of every call (all), or none (off); sets CUTRACE_STACKS\n"
    "  --stack-depth N  frames kept per stack, innermost first (1-256; CUTRACE_STACK_DEPTH)\n"
    "  --python=auto|off  with stacks, the Python frames (file:line, function) of a\n"
    "           CPython 3.11-3.13 program in them (auto, the default), or not (off;\n"
    "           CUTRACE_PYTHON)\n"
    "  --capture=all|profiler|nvtx:NAME  record everything (default), only between the\n"
    "           program's cudaProfilerStart and cudaProfilerStop, or only while an NVTX\n"
    "           range named NAME is open (CUTRACE_CAPTURE)\n"
    "  --delay S        record nothing for the first S seconds (CUTRACE_DELAY)\n"
    "  --duration S     stop recording S seconds after recording began (CUTRACE_DURATION)\n"
    "  --all-processes  a trace file for every process, also those that never use CUDA\n"
    "           (a shell, nvidia-smi, git; CUTRACE_ALL_PROCESSES=1)\n"
    "  Environment: CUTRACE_PRELOAD=path of libtrace.so (else beside cutrace in the build\n"
    "  tree, else " CT_INSTALLED_PRELOAD "); the CUTRACE_* knobs of the tracer pass through.\n";

static volatile sig_atomic_t child_pid;

/* Forwards a signal sent to cutrace with kill() to the program. A signal the terminal
 * generated (si_pid 0, SI_KERNEL) already reached the program's process group. */
static void forward_signal(int sig, siginfo_t *info, void *ctx) {
  (void)ctx;
  if (child_pid > 0 && (!info || info->si_code != SI_KERNEL)) kill((pid_t)child_pid, sig);
}

/* The tracer library: $CUTRACE_PRELOAD, beside the build tree's cutrace, or installed. */
static int find_preload(char *out, size_t len) {
  const char *env = getenv("CUTRACE_PRELOAD");
  if (env && *env) {
    if (access(env, R_OK) != 0) {
      fprintf(stderr, "cutrace record: CUTRACE_PRELOAD=%s: %s\n", env, strerror(errno));
      return -1;
    }
    if (!realpath(env, out)) snprintf(out, len, "%s", env);
    return 0;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = 0;
      char cand[PATH_MAX + 32];
      snprintf(cand, sizeof cand, "%s/../preload/libtrace.so", self);
      if (access(cand, R_OK) == 0 && realpath(cand, out)) return 0;
    }
  }
  if (access(CT_INSTALLED_PRELOAD, R_OK) == 0) {
    snprintf(out, len, "%s", CT_INSTALLED_PRELOAD);
    return 0;
  }
  fprintf(stderr, "cutrace record: libtrace.so not found (looked beside cutrace in the build "
                  "tree and at %s; set CUTRACE_PRELOAD)\n", CT_INSTALLED_PRELOAD);
  return -1;
}

/* 1 when dir is a directory holding *.ctr files. */
static int has_traces(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  for (struct dirent *e; !found && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    found = n > 4 && !strcmp(e->d_name + n - 4, ".ctr");
  }
  closedir(d);
  return found;
}

/* Moves a DIR that already holds traces to DIR.old, as uftrace does. An existing
 * DIR.old loses its *.ctr files and its .nocuda list; anything else in it makes this
 * fail, not delete it. */
static int set_aside_old(const char *dir) {
  if (!has_traces(dir)) return 0;
  char old[PATH_MAX];
  snprintf(old, sizeof old, "%s.old", dir);
  DIR *d = opendir(old);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      size_t n = strlen(e->d_name);
      if ((n > 4 && !strcmp(e->d_name + n - 4, ".ctr")) || !strcmp(e->d_name, CT_NOCUDA_FILE))
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    if (rmdir(old) != 0) {
      fprintf(stderr, "cutrace record: %s holds traces and %s cannot be replaced (%s); use -o DIR\n",
              dir, old, strerror(errno));
      return -1;
    }
  }
  if (rename(dir, old) != 0) {
    fprintf(stderr, "cutrace record: %s: cannot rename it to %s: %s\n", dir, old, strerror(errno));
    return -1;
  }
  return 0;
}

/* What --stacks and --stack-depth asked for (NULL: leave the environment as it is). */
typedef struct stack_options {
  const char *stacks; /* "off", "launches" or "all" */
  const char *depth;  /* a number of frames, as given */
} stack_options;

/* Sets LD_PRELOAD (libtrace first, then what was there), CUTRACE_OUTPUT, the stack
 * options asked for and, unless the user chose one, NVTX_INJECTION64_PATH. In the
 * child, before exec. */
static int set_child_env(const char *lib, const char *dir, const stack_options *so) {
  const char *old = getenv("LD_PRELOAD");
  size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
  char *pre = malloc(n);
  if (!pre) return -1;
  if (old && *old) snprintf(pre, n, "%s:%s", lib, old);
  else snprintf(pre, n, "%s", lib);
  int rc = setenv("LD_PRELOAD", pre, 1) | setenv("CUTRACE_OUTPUT", dir, 1);
  if (!getenv("NVTX_INJECTION64_PATH")) rc |= setenv("NVTX_INJECTION64_PATH", lib, 1);
  if (so->stacks) rc |= setenv("CUTRACE_STACKS", so->stacks, 1);
  if (so->depth) rc |= setenv("CUTRACE_STACK_DEPTH", so->depth, 1);
  free(pre);
  return rc;
}

/* Runs CMD; returns its exit status as a shell would (127 when it cannot be run). */
static int run_child(char **cmd, const char *lib, const char *dir, const stack_options *so) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    fprintf(stderr, "cutrace record: pipe: %s\n", strerror(errno));
    return 127;
  }
  struct sigaction sa, old[4];
  static const int sigs[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "cutrace record: fork: %s\n", strerror(errno));
    return 127;
  }
  if (pid == 0) {
    close(pipefd[0]);
    int err = set_child_env(lib, dir, so) != 0 ? errno : 0;
    if (!err) {
      execvp(cmd[0], cmd);
      err = errno;
    }
    ssize_t w = write(pipefd[1], &err, sizeof err);
    (void)w;
    _exit(err == ENOENT ? 127 : 126);
  }
  child_pid = pid;
  for (int i = 0; i < 4; i++) sigaction(sigs[i], &sa, &old[i]);
  close(pipefd[1]);
  int err = 0;
  ssize_t r;
  while ((r = read(pipefd[0], &err, sizeof err)) < 0 && errno == EINTR) {}
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  child_pid = 0;
  for (int i = 0; i < 4; i++) sigaction(sigs[i], &old[i], NULL);
  if (r == (ssize_t)sizeof err) {
    fprintf(stderr, "cutrace record: %s: %s\n", cmd[0], strerror(err));
    return err == ENOENT ? 127 : 126;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    fprintf(stderr, "cutrace record: %s was killed by signal %d (%s)%s\n", cmd[0], sig,
            strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}

#ifndef CT_HAVE_GAPS_CMD
/* Counts a file and its records for the summary when gaps is not built in. */
static int count_file(const char *path, void *arg) {
  uint64_t *counts = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  counts[0]++;
  if (!r) return 0;
  ct_record rec;
  while (ct_reader_next(r, &rec)) {}
  counts[1] += ct_reader_status(r)->records;
  if (ct_reader_status(r)->damaged) counts[2]++;
  ct_reader_close(r);
  return 0;
}
#endif

/* "N processes ran without CUDA (no trace file): ..." from DIR/.nocuda, if any. */
static void print_nocuda(const char *dir) {
  ct_nocuda_list list;
  if (ct_nocuda_read(dir, &list) < 0)
    fprintf(stderr, "cutrace record: %s/%s: cannot read it: %s\n", dir, CT_NOCUDA_FILE,
            strerror(errno));
  if (list.n) {
    char line[512];
    ct_nocuda_summary(&list, line, sizeof line);
    fprintf(stderr, "cutrace record: %s; --all-processes keeps them\n", line);
  }
  ct_nocuda_free(&list);
}

/* The summary at the end, on stderr (the program's stdout may be a pipe or a file). */
static void summary(const char *dir) {
  if (!has_traces(dir)) {
    fprintf(stderr, "cutrace record: no trace was written into %s\n", dir);
    print_nocuda(dir);
    return;
  }
  fflush(stdout);
  int saved = dup(1);
  if (saved < 0 || dup2(2, 1) < 0) return;
#ifdef CT_HAVE_GAPS_CMD
  char *argv[] = {"gaps", "--summary", "--", (char *)dir, NULL}; /* DIR may begin with '-' */
  fprintf(stderr, "cutrace record: traces in %s\n", dir);
  cmd_gaps(4, argv);
#else
  uint64_t counts[3] = {0};
  char *argv1[1] = {(char *)dir};
  char err[300];
  ct_expand_inputs(1, argv1, count_file, counts, err, sizeof err);
  fprintf(stderr, "cutrace record: %llu trace file(s) in %s, %llu records%s\n",
          (unsigned long long)counts[0], dir, (unsigned long long)counts[1],
          counts[2] ? " (some damaged: see cutrace info)" : "");
#endif
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  print_nocuda(dir);
}

/* The end of a bad-usage line, as every command's. */
#define TRY_HELP " (try: cutrace record --help)"

/* Parses --stacks[=WHICH] (a plain --stacks means launches). Returns 0, or -1 with a
 * message printed. */
static int parse_stacks(const char *arg, stack_options *so) {
  const char *which = arg[8] == '=' ? arg + 9 : "launches";
  if (strcmp(which, "launches") && strcmp(which, "all") && strcmp(which, "off")) {
    fprintf(stderr, "cutrace record: --stacks takes launches, all or off, not '%s'%s\n", which,
            TRY_HELP);
    return -1;
  }
  so->stacks = which;
  return 0;
}

/* Parses the frame count of --stack-depth. Returns 0, or -1 with a message printed. */
static int parse_stack_depth(const char *value, stack_options *so) {
  uint64_t n;
  if (!value || ct_parse_u64(value, &n) < 0 || n < 1 || n > 256) {
    fprintf(stderr,
            "cutrace record: --stack-depth takes a number of frames from 1 to 256, not '%s'%s\n",
            value ? value : "", TRY_HELP);
    return -1;
  }
  so->depth = value;
  return 0;
}

/* Checks a --delay / --duration value (seconds, 0 to a year) and sets env to it.
 * Returns 0, or -1 with a message printed. */
static int set_seconds(const char *opt, const char *value, const char *env) {
  char *end = NULL;
  double x = value && *value ? strtod(value, &end) : -1;
  if (!value || !*value || *end || !(x >= 0) || x > 366.0 * 86400) {
    fprintf(stderr, "cutrace record: %s takes a number of seconds (0 to 31622400), not '%s'%s\n",
            opt, value ? value : "", TRY_HELP);
    return -1;
  }
  return setenv(env, value, 1);
}

/* Parses --capture=WHICH and sets CUTRACE_CAPTURE. Returns 0, or -1 with a message printed. */
static int set_capture(const char *which) {
  int range = !strncmp(which, "nvtx:", 5) && which[5] && strlen(which + 5) < 256;
  if (strcmp(which, "all") && strcmp(which, "profiler") && !range) {
    fprintf(stderr, "cutrace record: --capture takes all, profiler or nvtx:NAME, not '%s'%s\n",
            which, TRY_HELP);
    return -1;
  }
  return setenv("CUTRACE_CAPTURE", which, 1);
}

/* Checks a --collector address. Returns 0, or -1 with a message printed. */
static int check_collector(const char *addr) {
  ct_netaddr a;
  char err[400];
  if (ct_netaddr_parse(addr, &a, err, sizeof err) == 0) return 0;
  fprintf(stderr, "cutrace record: --collector: %s\n", err);
  return -1;
}

/* The valued option (--name V or --name=V) that argv[i] names with its value missing or
 * empty; NULL when none. */
static const char *value_missing(int argc, char **argv, int i) {
  static const char *const valued[] = {"--stack-depth", "--python",   "--capture",
                                       "--delay",       "--duration", "--collector"};
  for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) {
    size_t n = strlen(valued[k]);
    if (strncmp(argv[i], valued[k], n)) continue;
    if ((argv[i][n] == '=' && !argv[i][n + 1]) ||
        (!argv[i][n] && (i + 1 >= argc || !argv[i + 1][0])))
      return valued[k];
  }
  return NULL;
}

int cmd_record(int argc, char **argv) {
  const char *out = "cutrace.data", *collector = NULL;
  int quiet = 0, out_given = 0, i = 1;
  stack_options so = {NULL, NULL};
  const char *v;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "--")) {
      i++;
      break;
    } else if (cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return 0;
    } else if ((v = value_missing(argc, argv, i))) {
      return cli_missing_value("record", v);
    } else if (!strcmp(argv[i], "-q")) {
      quiet = 1;
    } else if (!strcmp(argv[i], "--all-processes")) {
      if (setenv("CUTRACE_ALL_PROCESSES", "1", 1) != 0) return 2;
    } else if (!strncmp(argv[i], "--stacks", 8) && (argv[i][8] == 0 || argv[i][8] == '=')) {
      if (parse_stacks(argv[i], &so) < 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--stack-depth"))) {
      if (parse_stack_depth(v, &so) < 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--python"))) {
      if (strcmp(v, "auto") && strcmp(v, "off")) {
        fprintf(stderr, "cutrace record: --python takes auto or off, not '%s'%s\n", v, TRY_HELP);
        return 2;
      }
      if (setenv("CUTRACE_PYTHON", v, 1) != 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--capture"))) {
      if (set_capture(v) < 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--delay"))) {
      if (set_seconds("--delay", v, "CUTRACE_DELAY") < 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--duration"))) {
      if (set_seconds("--duration", v, "CUTRACE_DURATION") < 0) return 2;
    } else if ((v = cli_option_value(argc, argv, &i, "--collector"))) {
      if (check_collector(v) < 0) return 2;
      collector = v;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc && argv[i + 1][0]) {
      out = argv[++i];
      out_given = 1;
    } else if (!strcmp(argv[i], "-o")) {
      return cli_missing_value("record", "-o");
    } else if (cli_attached_short_value("record", argv[i], "-o")) {
      return 2;
    } else {
      fprintf(stderr, "cutrace record: unknown option '%s' (try: cutrace record --help)\n",
              argv[i]);
      return 2;
    }
  }
  if (i >= argc) {
    fprintf(stderr, "cutrace record: no command to run" TRY_HELP "\n");
    return 2;
  }
  char lib[PATH_MAX];
  if (collector && out_given) {
    fprintf(stderr, "cutrace record: -o DIR and --collector ADDR exclude each other\n");
    return 2;
  }
  if (find_preload(lib, sizeof lib) < 0) return 127;
  if (collector) {
    int status = run_child(argv + i, lib, collector, &so);
    if (!quiet && status != 127 && status != 126)
      fprintf(stderr, "cutrace record: traces sent to the collector at %s\n", collector);
    return status;
  }
  if (set_aside_old(out) < 0) return 2;
  if (mkdir(out, 0700) != 0 && errno != EEXIST) {
    fprintf(stderr, "cutrace record: %s: cannot create: %s\n", out, strerror(errno));
    return 2;
  }
  struct stat st;
  if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "cutrace record: %s: not a directory\n", out);
    return 2;
  }
  char dir[PATH_MAX];
  if (!realpath(out, dir)) { /* absolute, so a program that changes directory still finds it */
    fprintf(stderr, "cutrace record: %s: %s\n", out, strerror(errno));
    return 2;
  }
  /* a list left by an earlier run into DIR (one whose processes all ran without CUDA,
   * so DIR was not set aside) would be counted again */
  char list_path[PATH_MAX + sizeof CT_NOCUDA_FILE + 1];
  snprintf(list_path, sizeof list_path, "%s/%s", dir, CT_NOCUDA_FILE);
  if (unlink(list_path) != 0 && errno != ENOENT) {
    fprintf(stderr, "cutrace record: %s: cannot remove it: %s\n", list_path, strerror(errno));
    return 2;
  }
  int status = run_child(argv + i, lib, dir, &so);
  if (!quiet && status != 127 && status != 126) summary(out);
  return status;
}
