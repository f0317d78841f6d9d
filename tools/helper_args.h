/*
 * Arguments of the helper binaries that write planted traces for tests and benchmarks
 * (cutrace-gentrace, cutrace-plantrace): --help, options with or without a value,
 * operands, and a one-line error for anything else, so that a mistyped option is never
 * taken for the name of the file to write.
 */
#ifndef CUTRACE_HELPER_ARGS_H
#define CUTRACE_HELPER_ARGS_H

#include <stdint.h>

/* One option: "--name N" or "--name=N" when value is set (a decimal number), else a
 * flag that sets *flag to 1. */
typedef struct ha_option {
  const char *name;
  uint64_t *value;
  int *flag;
} ha_option;

/*
 * Parses argv[1..argc-1] of program prog against opts (terminated by a NULL name):
 * options may come anywhere, every other argument is an operand, kept in order in
 * operands (at most max; *noperands says how many); after "--" all are operands.
 * Returns -1 to go on; 0 after printing usage on stdout for --help or -h; 2 after one
 * line on stderr ("PROG: unknown option '--x' (try: PROG --help)", a missing or bad
 * value, too many operands).
 */
int ha_parse(const char *prog, const char *usage, int argc, char **argv, const ha_option *opts,
             const char **operands, int max, int *noperands);

/* Parses operand s, named what in the error, as a decimal number into *v. Returns 0, or
 * 2 after one line on stderr ("PROG: N takes a number, not 'x' (try: PROG --help)"). */
int ha_number(const char *prog, const char *what, const char *s, uint64_t *v);

/* Says on stderr that prog was given the wrong operands ("PROG: MESSAGE (try: PROG
 * --help)") and returns 2. */
int ha_usage_error(const char *prog, const char *message);

#endif
