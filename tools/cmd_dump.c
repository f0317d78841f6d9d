/* cutrace dump: every record of each trace, one line each ("kind field=value ..."),
 * strings resolved, for debugging traces and the tracer; or with --chrome, the trace
 * as Chrome Trace Event JSON for Perfetto UI / chrome://tracing / HTA (chrome.c). */
#include <stdio.h>
#include <string.h>

#include "chrome.h"
#include "cli.h"
#include "codec.h"
#include "commands.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

static const char usage[] =
    "usage: cutrace dump [DIR|FILE...]\n"
    "       cutrace dump --chrome [-o FILE] [--no-gaps] [--gap-min NS] [--queues] [DIR|FILE...]\n"
    "  Without --chrome: every record one per line, strings resolved.\n"
    "  --chrome        Chrome Trace Event JSON (Perfetto UI, chrome://tracing, HTA)\n"
    "  -o FILE         write it to FILE ('-' or none: standard output)\n"
    "  --no-gaps       leave out the GPU idle gap tracks\n"
    "  --gap-min NS    shortest gap shown as a slice (default 1000 ns)\n"
    "  --queues        a counter track per stream: operations queued and not finished\n";

static int dump_file(const char *path, void *arg) {
  int *status = arg;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    *status = 2;
    return 0;
  }
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
    fprintf(stderr, "cutrace dump: %s: %s; %llu records read\n", path, st->message,
            (unsigned long long)st->records);
    if (*status < 1) *status = 1;
  }
  ct_reader_close(r);
  return 0;
}

typedef struct chrome_run {
  ct_chrome *c;
  int status;
  size_t files, unreadable;
} chrome_run;

static int chrome_file(const char *path, void *arg) {
  chrome_run *run = arg;
  ct_model_stats st;
  int rc = ct_chrome_add_file(run->c, path, &st);
  int fs = cli_file_status("dump", path, rc, &st);
  run->files++;
  if (fs == 2) run->unreadable++;
  else if (fs > run->status) run->status = fs;
  return 0;
}

static int bad_usage(const char *what, const char *arg) {
  fprintf(stderr, "cutrace dump: %s '%s' (try: cutrace dump --help)\n", what, arg);
  return 2;
}

int cmd_dump(int argc, char **argv) {
  int chrome = 0, i = 1;
  const char *out_path = NULL;
  ct_chrome_options opt = {.gaps = 1, .gap_min_ns = 1000};
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
    } else if (!strcmp(a, "--no-gaps")) {
      opt.gaps = 0;
    } else if (!strcmp(a, "--queues")) {
      opt.queues = 1;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--gap-min")) {
      if (i + 1 >= argc) return bad_usage("missing value after", a);
      if (!strcmp(a, "-o")) out_path = argv[++i];
      else if (ct_parse_u64(argv[++i], &opt.gap_min_ns) < 0)
        return bad_usage("--gap-min needs a number of ns, not", argv[i]);
    } else {
      return bad_usage("unknown option", a);
    }
  }
  if (!chrome) {
    if (out_path) return bad_usage("-o needs --chrome; got", out_path);
    if (opt.queues) return bad_usage("--queues needs --chrome; got", "--queues");
    int status = 0;
    char err[300];
    cli_progress_start("dump");
    int n = ct_expand_inputs(argc - i, argv + i, dump_file, &status, err, sizeof err);
    cli_progress_done();
    if (n < 0) {
      fprintf(stderr, "cutrace dump: %s\n", err);
      return 2;
    }
    return status;
  }
  FILE *out = stdout;
  if (out_path && strcmp(out_path, "-") && !(out = fopen(out_path, "w"))) {
    fprintf(stderr, "cutrace dump: %s: cannot write: %m\n", out_path);
    return 2;
  }
  chrome_run run = {.c = ct_chrome_begin(out, &opt)};
  if (!run.c) {
    fprintf(stderr, "cutrace dump: out of memory\n");
    return 2;
  }
  cli_progress_start("dump");
  char err[300];
  int n = ct_expand_inputs(argc - i, argv + i, chrome_file, &run, err, sizeof err);
  cli_progress_done();
  int wrc = ct_chrome_end(run.c);
  if (out != stdout && fclose(out) != 0) wrc = -1;
  if (n < 0) {
    fprintf(stderr, "cutrace dump: %s\n", err);
    return 2;
  }
  if (wrc < 0) {
    fprintf(stderr, "cutrace dump: error writing %s\n", out_path ? out_path : "the output");
    return 2;
  }
  /* unreadable files next to readable ones make a partial result, alone an error */
  if (run.unreadable) return run.unreadable < run.files ? (run.status > 1 ? run.status : 1) : 2;
  return run.status;
}
