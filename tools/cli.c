/* Argument handling and messages shared by the subcommands (see cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "progress.h"
#include "reader.h"

int cli_is_help(const char *arg) { return !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

int cli_run_on_traces(int argc, char **argv, const char *usage,
                      int (*per_file)(const char *path, void *status)) {
  if (argc > 1 && cli_is_help(argv[1])) {
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

int cli_file_status(const char *cmd, const char *path, int rc, const ct_model_stats *st) {
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
