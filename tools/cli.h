/* Argument handling and messages shared by the subcommands. */
#ifndef CUTRACE_CLI_H
#define CUTRACE_CLI_H

#include "model.h"

/*
 * Handles argv of a subcommand (argv[0] = its name) that takes no options: prints
 * usage for --help, rejects any other option, expands DIR|FILE arguments and calls
 * per_file(path, &status) for each trace. per_file raises status to 1 (partial) or
 * 2 (unreadable) as it goes. Returns the exit status.
 */
int cli_run_on_traces(int argc, char **argv, const char *usage,
                      int (*per_file)(const char *path, void *status));

/*
 * Takes the time filter out of a subcommand's argv (argv[0] = its name; *argc shrinks):
 * `--from T` and `--to T` (or `--from=T`), T being seconds after each trace's start with
 * an optional unit (2.5, 300ms, 40us, 1500ns) or @NS, an absolute host time in ns.
 * Options after "--" are left alone. Sets them as the model's defaults
 * (ct_model_set_defaults) so every pass of the command sees only that window. Returns
 * 0, or 2 after one line on stderr when a value is bad.
 */
int cli_take_time_filter(const char *cmd, int *argc, char **argv);

/* The value of option NAME at argv[*i] ("--name=V" or "--name V"), advancing *i past a
 * separate value; NULL when argv[*i] is not NAME, "" when its value is missing. */
const char *cli_option_value(int argc, char **argv, int *i, const char *name);

/* 1 when arg is "--help" or "-h". */
int cli_is_help(const char *arg);

/*
 * Turns the model's progress hook on for command cmd when stderr is a terminal: a
 * line "cutrace CMD: FILE: N M records" rewritten in place. cli_progress_done clears it.
 */
void cli_progress_start(const char *cmd);

/* Clears the progress line (if one was printed) and turns the hook off. */
void cli_progress_done(void);

/*
 * Says on stderr what happened to one file read through the model (rc as
 * ct_model_read returns it) and returns the exit status it deserves: 0 clean,
 * 1 partial ("cutrace CMD: FILE: where it stopped"), 2 unreadable.
 */
int cli_file_status(const char *cmd, const char *path, int rc, const ct_model_stats *st);

#endif
