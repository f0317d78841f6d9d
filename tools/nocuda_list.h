/*
 * DIR/.nocuda, read back: the processes of a recording that ran without CUDA and left
 * no trace file (include/cutrace/nocuda.h has the line format; docs/preload.md
 * "Processes without CUDA"). Used by `cutrace record` (the count after the run) and
 * `cutrace info` (the count and names per directory, a parent without a file).
 */
#ifndef CUTRACE_TOOLS_NOCUDA_LIST_H
#define CUTRACE_TOOLS_NOCUDA_LIST_H

#include <stddef.h>

#include "cutrace/nocuda.h"

/* One process that ran without CUDA. */
typedef struct ct_nocuda_proc {
  unsigned long pid, ppid;
  char name[CT_NOCUDA_NAME_MAX + 1];
} ct_nocuda_proc;

/* The lines of one DIR/.nocuda, in file order. */
typedef struct ct_nocuda_list {
  ct_nocuda_proc *procs;
  size_t n;
} ct_nocuda_list;

/*
 * Reads dir/.nocuda into list (empty when the file does not exist). A line that is not
 * "PID PPID NAME" is skipped. Returns 0, or -1 when the file exists but cannot be read
 * or memory runs out (list then holds what was read).
 */
int ct_nocuda_read(const char *dir, ct_nocuda_list *list);

/* The entry for pid, or NULL. */
const ct_nocuda_proc *ct_nocuda_find(const ct_nocuda_list *list, unsigned long pid);

/*
 * Writes "N processes ran without CUDA (no trace file): NAME xK, NAME, ..." into buf
 * (names by count, most first; at most 6 named, then "..."). "" when the list is empty.
 */
void ct_nocuda_summary(const ct_nocuda_list *list, char *buf, size_t len);

void ct_nocuda_free(ct_nocuda_list *list);

#endif
