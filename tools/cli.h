/* Argument handling and messages shared by the subcommands. */
#ifndef CUTRACE_CLI_H
#define CUTRACE_CLI_H

#include <stdio.h>

#include "model.h"

/*
 * Handles argv of a subcommand (argv[0] = its name) that takes no options: prints
 * usage for --help, rejects any other option before "--" (after it every argument is a
 * trace), expands DIR|FILE arguments and calls
 * per_file(path, &status) for each trace. per_file raises status to 1 (partial) or
 * 2 (unreadable) as it goes. Returns the exit status: the worst of the files, but 1
 * when some files were unreadable and others not (as the other commands do).
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

/*
 * Parses a duration: a number (decimals allowed, an optional leading '+') with an
 * optional unit, s, ms, us or ns ("2.5ms", "40us"); a bare number counts unit_ns
 * nanoseconds each. Sets *ns (rounded to the nearest ns) and returns 0, or -1 when s is
 * not one or above 10^18 ns.
 */
int cli_parse_duration(const char *s, uint64_t unit_ns, uint64_t *ns);

/* The value of option NAME at argv[*i] ("--name=V" or "--name V"), advancing *i past a
 * separate value; NULL when argv[*i] is not NAME, "" when its value is missing. */
const char *cli_option_value(int argc, char **argv, int *i, const char *name);

/*
 * Runs a subcommand with its options put before its operands, as GNU getopt does, so
 * that `cutrace report DIR --limit 5` reads as `cutrace report --limit 5 DIR`. argv[0]
 * is the subcommand's name; valued lists the options that take a value (NULL-terminated):
 * each keeps the argument after it, and "--name=value" becomes "--name" "value". An
 * argument is an option when it starts with '-' and is not "-" alone; everything after
 * "--" stays an operand, behind the "--". Operands keep their order. Returns what
 * run(new argc, new argv) returns, or 2 after one line on stderr when a valued option
 * is last (its value missing) or memory ran out.
 */
int cli_run_options_first(int argc, char **argv, const char *const *valued,
                          int (*run)(int argc, char **argv));

/*
 * Says on stderr, in the one form every command uses, that option opt of command cmd was
 * given without its value: "cutrace CMD: OPT needs a value (try: cutrace CMD --help)".
 * Returns 2, the exit status of bad usage.
 */
int cli_missing_value(const char *cmd, const char *opt);

/* A short option with its value attached, "-o=DIR" or "-oDIR" (arg, for the short option
 * opt): says on one line that opt takes its value as the next argument ("-o DIR"; getopt
 * would read "-o=DIR" as the value "=DIR") and returns 2 ("-o=": needs a value); 0 when
 * arg is not such a form. */
int cli_attached_short_value(const char *cmd, const char *arg, const char *opt);

/*
 * Flushes standard output and returns status, or 2 after one line on stderr,
 * "cutrace CMD: standard output: cannot write (...)", when something written to it was
 * lost (a full disk, a closed reader): a command must not exit 0 with its output cut.
 * main() calls it after every command; a command may call it sooner.
 */
int cli_output_status(const char *cmd, int status);

/*
 * Writes word to f as one shell word that a POSIX shell reads back unchanged: as is
 * when it holds only letters, digits and _@%+=:,./- (and is not empty), else inside
 * single quotes, each ' written as '\'' (so a space, quote, $, `, backslash, newline,
 * * or ~ stays literal when the line is pasted).
 */
void cli_print_shell_word(FILE *f, const char *word);

/*
 * Writes the arguments of an advice command line to f, each as " WORD" quoted by
 * cli_print_shell_word: the options, then the operands, with " --" before the operands
 * when one of them begins with '-' (a trace DIR named -x is not read as an option).
 */
void cli_print_shell_args(FILE *f, char *const *options, int noptions, char *const *operands,
                          int noperands);

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
 * When the file's DROP records counted lost records (st->dropped), says so on stderr in
 * one line, "cutrace CMD: FILE: the tracer lost N records ...": the totals and the idle
 * time read from it are incomplete. Nothing otherwise.
 */
void cli_report_drops(const char *cmd, const char *path, const ct_model_stats *st);

/*
 * Says on stderr what happened to one file read through the model (rc as
 * ct_model_read returns it) and returns the exit status it deserves: 0 clean,
 * 1 partial ("cutrace CMD: FILE: where it stopped"), 2 unreadable. Lost records are
 * reported first (cli_report_drops); they do not change the status.
 */
int cli_file_status(const char *cmd, const char *path, int rc, const ct_model_stats *st);

#endif
