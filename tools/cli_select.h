/* The selection options of the commands that read traces: --device, --stream, --pid,
 * --rank and --kernel (docs/report.md "Selecting part of a trace"). */
#ifndef CUTRACE_CLI_SELECT_H
#define CUTRACE_CLI_SELECT_H

#include "output.h"

/* The selection options, as main.c checks them against a command's modes. */
enum { CLI_SEL_DEVICE = 1, CLI_SEL_STREAM = 2, CLI_SEL_PID = 4, CLI_SEL_RANK = 8,
       CLI_SEL_KERNEL = 16 };

/*
 * Takes the selection options out of a subcommand's argv (argv[0] = its name; *argc
 * shrinks; options after "--" are left alone): `--device N[,M...]`, `--stream ID[,...]`,
 * `--pid P[,...]`, `--rank R[,...]` (each may be repeated, the lists add up) and
 * `--kernel PATTERN` (once). Makes the model deliver only the selected GPU work (every
 * pass of the command) and ct_expand_inputs keep only the files of the selected
 * processes that hold some of it, after checking every value against the traces.
 * *given gets the CLI_SEL_* bits of the options given. Returns 0, or 2 after one line on
 * stderr when a value is malformed.
 */
int cli_take_selection(const char *cmd, int *argc, char **argv, unsigned *given);

/* Checks the selection against the traces that args (DIR|FILE arguments) name, before a
 * command writes anything: 0, or 2 after one line on stderr, "cutrace CMD: --device 3: no
 * such device in ...". Nothing to do (0) when no selection was given; the result is
 * kept for the command's own expansion of the same files. */
int cli_selection_precheck(const char *cmd, int argc, char **argv);

/* The selection as options ("--device 1 --kernel gemm"), or NULL when none was given. */
const char *cli_selection_text(void);

/* Calls fn(user, "--device", "0,1") for each selection option given, in the order of
 * cli_selection_text (for advice lines that repeat them). */
void cli_selection_each(void (*fn)(void *user, const char *name, const char *value), void *user);

/* Prints the selection's header line ("selection: --device 1 (GPU work of ...; CPU calls
 * all kept)\n") on f; nothing when none was given. */
void cli_selection_print(FILE *f);

/* Writes the member "selection" of the object j is in: {"devices": [...], "streams",
 * "pids", "ranks" (empty when not given), "kernel" (null)}, or null when none was given. */
void cli_selection_json(ct_json *j);

#endif
