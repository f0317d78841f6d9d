/* cutrace: the post-processor's entry point; dispatches to one file per subcommand
 * (tools/cmd_NAME.c, declared in commands.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

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
    {"diff", cmd_diff, "what changed on the GPU from one trace to another, ranked"},
    {"dump", cmd_dump, "every record one line each, or --chrome: Chrome/Perfetto trace JSON"},
    {"info", cmd_info, "what a trace holds: processes, versions, records, drops, damage"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: cutrace COMMAND [OPTIONS] [DIR|FILE...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\nA DIR stands for every *.ctr file in it; the default is ./cutrace.data.\n"
             "'cutrace COMMAND --help' describes a command's options.\n"
             "Exit status: 0 clean, 1 partial result (damaged input), 2 usage or unreadable input.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
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
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "cutrace: unknown command '%s' (try: cutrace --help)\n", argv[1]);
  return 2;
}
