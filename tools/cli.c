#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "reader.h"

int cli_run_on_traces(int argc, char **argv, const char *usage,
                      int (*per_file)(const char *path, void *status)) {
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: %s\n", usage);
    return 0;
  }
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "cutrace %s: unknown option '%s' (try: cutrace %s --help)\n", argv[0],
              argv[i], argv[0]);
      return 2;
    }
  int status = 0;
  char err[300];
  if (ct_expand_inputs(argc - 1, argv + 1, per_file, &status, err, sizeof err) < 0) {
    fprintf(stderr, "cutrace %s: %s\n", argv[0], err);
    return 2;
  }
  return status;
}
