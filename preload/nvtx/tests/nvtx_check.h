/*
 * Helpers shared by the NVTX test drivers: a failure-counting CHECK, string
 * look-up in a trace, running the workload and listing its traces.
 */
#ifndef CUTRACE_NVTX_CHECK_H
#define CUTRACE_NVTX_CHECK_H

#include <stdio.h>

#include "reader.h"

#ifndef CT_RANGE_UNCLOSED /* until include/cutrace/format.h defines them */
#define CT_RANGE_UNCLOSED 0x1
#define CT_RANGE_STARTEND 0x2
#endif

/* Failed checks so far. */
extern int check_failures;

/* Counts and reports (file:line and the formatted message) a false condition. */
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      check_failures++;                                    \
    }                                                      \
  } while (0)

/* Copies string id of r into out, NUL-terminated ("" for 0, "?" when unknown). */
void check_copy_string(const ct_reader *r, uint64_t id, char *out, size_t cap);

/*
 * Runs argv[0] with argv in a child whose environment is ours changed by env: each
 * "NAME=VALUE" is set, each bare "NAME" unset (env ends with NULL). Returns its
 * wait status, or -1 when it could not be started; *pid gets its pid if pid is
 * not NULL.
 */
int check_run(const char *const env[], char *const argv[], int *pid);

/*
 * Fills paths (cap entries of 4096 bytes) with the *.ctr files in dir. Returns
 * how many there are (possibly more than cap).
 */
int check_list_traces(const char *dir, char (*paths)[4096], int cap);

#endif
