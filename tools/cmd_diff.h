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
#include "identity.h"
#include "output.h"

/* One input file of a side and how its reading went. */
typedef struct diff_input {
  char *path;
  const char *status;     /* "clean", "partial", "unreadable" */
  char message[300];
  int has_id;             /* id was read (the file's head is readable) */
  ct_identity id;         /* its process and rank */
} diff_input;

/* The command's state. Side 0 is BEFORE, side 1 AFTER. */
typedef struct diff_cli {
  enum ct_out_format fmt;
  uint64_t limit;             /* rows per table (0: all) */
  enum ct_report_table by;    /* CT_TABLE_KERNELS (with memcpy and gemms), APIS or RANGES */
  const char *per_range;      /* --per-range NAME, or NULL */
  unsigned csv_blocks;        /* --tables: the CSV blocks to print (DIFF_BLOCK_* bits; 0: all) */
  double threshold_pct;
  const char *paths[2];
  ct_diff_side sides[2];
  diff_input *inputs[2];
  size_t ninputs[2];
  uint64_t instances[2];      /* --per-range: instances of the range per side */
  ct_diff_options o;
  int status;                 /* exit status so far */
} diff_cli;

/* The CSV blocks --tables picks: the headline, each row table (bit 1 << its place among
 * ct_diff_cli_tables' tables, + 1), the inputs. */
enum { DIFF_BLOCK_SUMMARY = 1, DIFF_BLOCK_INPUTS = 1 << 4 };

/* Whether c prints CSV block bit (DIFF_BLOCK_*, or 2 << i for row table i). */
int ct_diff_prints_block(const diff_cli *c, unsigned bit);

/* The tables a --by choice shows, in order; returns how many (at most 3). */
int ct_diff_cli_tables(const diff_cli *c, enum ct_report_table out[3]);

/* Units of the printed values (ct_diff_metric_unit's numbers). */
enum { DU_COUNT, DU_NS, DU_BYTES, DU_PCT };

/* A row's numbers as printed: divided by each side's instances (avg: per call, as is);
 * [0] before, [1] after. */
typedef struct ct_diff_norm {
  double calls[2], total[2], aux[2], avg[2];
} ct_diff_norm;

/* The numbers of row r of c's comparison, normalised. */
ct_diff_norm ct_diff_normalise(const diff_cli *c, const ct_diff_row *r);

/* after / before, or NaN when before is 0 (text "-", CSV empty, JSON null). */
double ct_diff_ratio(double before, double after);

/* The headline's values of both sides, normalised (v[0] before, v[1] after). */
void ct_diff_headline(const diff_cli *c, double v[2][CT_DM_COUNT]);

/* How a side is shown after its file count: ": rank 2 (pid P on HOST)" for one file
 * with a rank, ", ranks 0,1,2,3" (at most 8, then ",...") for several, "" when no
 * file has a rank. Returns buf. */
const char *ct_diff_side_ranks(const diff_cli *c, int side, char *buf, size_t len);

/* CSV: the names of the columns table t adds after the common ones into h (at most
 * max); returns how many (docs/diff.md lists them). */
int ct_diff_csv_extra_headers(enum ct_report_table t, const char **h, int max);

/* CSV: the cells of row r (normalised numbers n) under those columns. */
void ct_diff_csv_extra_cells(ct_table *tb, enum ct_report_table t, const ct_diff_row *r,
                             const ct_diff_norm *n);

/* CSV: the last block, `inputs`: one row per file of each side (side, path, status,
 * pid, host, rank; empty cells where unknown). */
void ct_diff_csv_inputs(const diff_cli *c);

/* Writes the JSON document: headline values v and the nt compared tables dts. */
void ct_diff_print_json(const diff_cli *c, const double v[2][CT_DM_COUNT],
                        const ct_diff_table *dts, int nt);

/* Prints the comparison in c->fmt: headline, then the tables of c->by. Returns 0, or
 * -1 when out of memory (some table is missing). */
int ct_diff_print(const diff_cli *c);

#endif
