/* cutrace: the post-processor's entry point; dispatches to one file per subcommand. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct {
  const char *name;
  int (*run)(int, char **);
  const char *help;
} commands[] = {
    {"info", cmd_info, "what a trace holds: processes, versions, records, drops, damage"},
    {"dump", cmd_dump, "every record of a trace, one line each"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: cutrace COMMAND [OPTIONS] [DIR|FILE...]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
  fprintf(f, "\nA DIR stands for every *.ctr file in it; the default is ./cutrace.data.\n");
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
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "cutrace: unknown command '%s' (try: cutrace --help)\n", argv[1]);
  return 2;
}
