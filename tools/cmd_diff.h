/*
 * cutrace diff, shared by its files: the command's state (cmd_diff.c: options, the
 * two sides and how their files were read) and its writers (cmd_diff_out.c: text,
 * CSV and JSON; the columns and the schema are in docs/diff.md).
 */
#ifndef CUTRACE_CMD_DIFF_H
#define CUTRACE_CMD_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "diff.h"
#include "output.h"

/* One input file of a side and how its reading went. */
typedef struct diff_input {
  char *path;
  const char *status;     /* "clean", "partial", "unreadable" */
  char message[300];
} diff_input;

/* The command's state. Side 0 is BEFORE, side 1 AFTER. */
typedef struct diff_cli {
  enum ct_out_format fmt;
  uint64_t limit;             /* rows per table (0: all) */
  enum ct_report_table by;    /* CT_TABLE_KERNELS (with memcpy and gemms), APIS or RANGES */
  const char *per_range;      /* --per-range NAME, or NULL */
  double threshold_pct;
  const char *paths[2];
  ct_diff_side sides[2];
  diff_input *inputs[2];
  size_t ninputs[2];
  uint64_t instances[2];      /* --per-range: instances of the range per side */
  ct_diff_options o;
  int status;                 /* exit status so far */
} diff_cli;

/* The tables a --by choice shows, in order; returns how many (at most 3). */
int ct_diff_cli_tables(const diff_cli *c, enum ct_report_table out[3]);

/* Prints the comparison in c->fmt: headline, then the tables of c->by. Returns 0, or
 * -1 when out of memory (some table is missing). */
int ct_diff_print(const diff_cli *c);

#endif
