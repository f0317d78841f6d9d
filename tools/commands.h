/* The cutrace subcommands: each takes its own argv (argv[0] = its name) and returns
 * the process exit status: 0 clean, 1 partial result (damaged input), 2 usage or
 * unreadable input. */
#ifndef CUTRACE_COMMANDS_H
#define CUTRACE_COMMANDS_H

/* cutrace info: what each trace file holds. */
int cmd_info(int argc, char **argv);

/* cutrace dump: every record, one line each. */
int cmd_dump(int argc, char **argv);

#endif
