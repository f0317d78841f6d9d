/* Argument handling shared by the subcommands that take only DIR|FILE arguments. */
#ifndef CUTRACE_CLI_H
#define CUTRACE_CLI_H

/*
 * Handles argv of a subcommand (argv[0] = its name) that takes no options: prints
 * usage for --help, rejects any other option, expands DIR|FILE arguments and calls
 * per_file(path, &status) for each trace. per_file raises status to 1 (partial) or
 * 2 (unreadable) as it goes. Returns the exit status.
 */
int cli_run_on_traces(int argc, char **argv, const char *usage,
                      int (*per_file)(const char *path, void *status));

#endif
