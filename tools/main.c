/* cutrace: the post-processor's entry point; dispatches to one file per subcommand
 * (tools/cmd_NAME.c, declared in commands.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_select.h"
#include "commands.h"

/* The commands that read traces through the model: they take --from/--to. */
static const char *const time_filtered[] = {"report", "gaps", "diff", "dump", "steps"};

/* Takes the selection options out of argv for a command that reads traces (chrome: dump
 * writes Chrome JSON, Perfetto or CSV), refusing those that do not apply to it. Returns 0
 * or 2. */
static int take_selection(int *argc, char **argv, int chrome) {
  unsigned given;
  if (cli_take_selection(argv[0], argc, argv, &given)) return 2;
  const char *why = NULL, *opt = NULL;
  if (!strcmp(argv[0], "gaps") && (given & (CLI_SEL_KERNEL | CLI_SEL_STREAM))) {
    opt = given & CLI_SEL_KERNEL ? "--kernel" : "--stream";
    why = "idle time is the device's, whatever ran on it (select the device with --device; "
          "the per-stream table shows each stream)";
  } else if (!strcmp(argv[0], "steps") && (given & CLI_SEL_KERNEL)) {
    opt = "--kernel";
    why = "a step's idle time counts all the GPU's work (select with --device or --stream)";
  } else if (!strcmp(argv[0], "dump") && !chrome &&
             (given & (CLI_SEL_DEVICE | CLI_SEL_STREAM | CLI_SEL_KERNEL))) {
    opt = given & CLI_SEL_DEVICE ? "--device" : given & CLI_SEL_STREAM ? "--stream" : "--kernel";
    why = "it needs --chrome, --perfetto or --csv (the raw dump prints every record)";
  }
  if (why) {
    fprintf(stderr, "cutrace %s: %s does not apply: %s\n", argv[0], opt, why);
    return 2;
  }
  return 0;
}

/* Takes --from/--to out of argv for a command that reads traces. Returns 0 or 2. */
static int take_time_filter(int *argc, char **argv) {
  int n = *argc;
  for (size_t i = 0; i < sizeof time_filtered / sizeof time_filtered[0]; i++) {
    if (strcmp(argv[0], time_filtered[i])) continue;
    if (cli_take_time_filter(argv[0], argc, argv)) return 2;
    int chrome = 0; /* raw `dump` prints records as stored: no window */
    for (int j = 1; j < *argc && strcmp(argv[j], "--"); j++)
      chrome |= !strcmp(argv[j], "--chrome") || !strcmp(argv[j], "--perfetto") ||
                !strcmp(argv[j], "--csv");
    if (*argc != n && !strcmp(argv[0], "dump") && !chrome) {
      fprintf(stderr, "cutrace dump: --from/--to need --chrome, --perfetto or --csv (the raw dump "
                      "prints every record)\n");
      return 2;
    }
    return take_selection(argc, argv, chrome);
  }
  return 0;
}

#ifndef CT_HAVE_GAPS_CMD
/* cutrace gaps when tools/cmd_gaps.c was not part of this build. */
int cmd_gaps(int argc, char **argv) {
  fprintf(stderr, "cutrace gaps: not built (tools/cmd_gaps.c was missing when cutrace was built)\n");
  return 2;
}
#endif

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *help;
} commands[] = {
    {"record", cmd_record, "run a program with the tracer: cutrace record [-o DIR] -- CMD..."},
    {"collect", cmd_collect, "receive traces streamed by processes on many hosts into a directory"},
    {"report", cmd_report, "tables: kernels, CUDA calls, copies and GEMMs, with totals"},
    {"gaps", cmd_gaps, "GPU idle time: measured, explained, ranked"},
    {"steps", cmd_steps, "the job step by step (NVTX range instances): time, GPU busy, idle, outliers"},
    {"diff", cmd_diff, "what changed on the GPU from one trace to another, ranked"},
    {"dump", cmd_dump, "every record one line each, or --chrome / --perfetto / --csv: Chrome JSON, Perfetto, a table"},
    {"info", cmd_info, "what a trace holds: processes, versions, records, drops, damage"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: cutrace COMMAND [OPTIONS] [DIR|FILE...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\nA DIR stands for every *.ctr file in it; the default is ./cutrace.data.\n"
             "report, gaps, diff, dump and steps take --from T and --to T: only what overlaps\n"
             "that window (T: seconds after each trace's start, 2.5, 300ms, 40us; or @NS, a\n"
             "host time as gaps prints it); the time outside counts as not recorded.\n"
             "They take --device N, --stream ID, --pid P, --rank R (lists: 0,1) and --kernel\n"
             "PATTERN: only that GPU work, of those processes (gaps: not --stream, --kernel).\n"
             "Options may come before or after the traces (record: before CMD), a value as\n"
             "--name V or --name=V.\n"
             "'cutrace COMMAND --help' (or 'cutrace help COMMAND') describes a command's options.\n"
             "Exit status: 0 clean, 1 partial result (damaged input), 2 usage, unreadable input\n"
             "or output that could not be written.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "help") && argc > 2) { /* cutrace help gaps: cutrace gaps --help */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
      if (!strcmp(argv[2], commands[i].name)) {
        char *help_argv[] = {argv[2], "--help", NULL};
        return cli_output_status(argv[2], commands[i].run(2, help_argv));
      }
    fprintf(stderr, "cutrace: unknown command '%s' (try: cutrace --help)\n", argv[2]);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("cutrace %s\n", CUTRACE_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) {
      int sub_argc = argc - 1;
      if (take_time_filter(&sub_argc, argv + 1)) return 2;
      return cli_output_status(argv[1], commands[i].run(sub_argc, argv + 1));
    }
  fprintf(stderr, "cutrace: unknown command '%s' (try: cutrace --help)\n", argv[1]);
  return 2;
}
