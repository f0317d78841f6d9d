/* cutrace steps: the command's state shared by its parser (cmd_steps.c) and its
 * writers (cmd_steps_out.c). */
#ifndef CUTRACE_CMD_STEPS_H
#define CUTRACE_CMD_STEPS_H

#include "identity.h"
#include "output.h"
#include "steps.h"

typedef struct steps_cli {
  ct_steps_options o;
  enum ct_out_format fmt;
  int summary;            /* --summary: no per-step rows */
  ct_steps_file *files;   /* one per input file, in order */
  ct_identity *ids;       /* each file's process and rank (has_process 0: unknown) */
  unsigned nfiles;
  int status;             /* exit status so far, the unreadable files left out */
  unsigned unreadable;    /* files that could not be read at all */
  unsigned nosteps;       /* files read whole that held no steps */
  unsigned withsteps;     /* files that held steps */
} steps_cli;

/* Writes every file's steps and summary to stdout in c->fmt (files without steps are
 * left out: their error was printed when read). Returns 0, or -1 when out of memory or
 * the steps' temporary file could not be read (steps_rows.c). */
int ct_steps_print(const steps_cli *c);

#endif
