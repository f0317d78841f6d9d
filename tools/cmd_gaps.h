/*
 * cutrace gaps, shared by its files: the command's state (cmd_gaps.c: options and
 * inputs) and the writers of its output (cmd_gaps_text.c: text and --summary;
 * cmd_gaps_json.c: JSON, schema in docs/gaps.md; cmd_gaps_csv.c: CSV; cmd_gaps_ranks.c: the per-rank
 * comparison in both).
 */
#ifndef CUTRACE_CMD_GAPS_H
#define CUTRACE_CMD_GAPS_H

#include <stddef.h>
#include <stdint.h>

#include "gaps.h"
#include "output.h"

/* The command's state: the analysis, the exit status so far, the output wanted, and
 * each input with how its reading went. */
typedef struct gaps_cli {
  ct_gaps *g;
  int status;
  int summary;
  enum ct_out_format fmt;
  struct input {
    char *path;
    int rc;
    char message[300];
  } *inputs;
  unsigned ninputs;
  char **args; /* the DIR|FILE arguments as given (none: the default), for advice lines */
  int nargs;
  char **opts;   /* the options that change what is found (--from/--to, thresholds), for
                    the advice line, each "--name=value" */
  int nopts;
  unsigned top;  /* --top: rows of the by-ending-call table in text */
  int csv_tables; /* --format csv: the blocks to write (CT_GAPS_CSV_*) */
} gaps_cli;

/* The blocks of gaps --format csv (--tables gaps,findings; both by default). */
enum { CT_GAPS_CSV_GAPS = 1, CT_GAPS_CSV_FINDINGS = 2 };

/* The kinds of findings by enum ct_finding_kind, as JSON and CSV name them. */
extern const char *const ct_gaps_finding_kinds[];

/* Parses a --tables list of gaps, findings: the CT_GAPS_CSV_* bits, or -1 for another
 * name (cmd_gaps_csv.c). */
int ct_gaps_csv_table_bits(const char *list);

/* Checks the options that go with an output form (tables: the --tables list or NULL;
 * top_given, min_gap_given: --top, --min-gap was given) and sets c->csv_tables. Returns
 * -1 to go on, or 2 after a one-line error: --tables without csv, csv with --summary or
 * --top, --summary with --format json, --top or --min-gap. */
int ct_gaps_csv_options(gaps_cli *c, const char *tables, int top_given, int min_gap_given);

/* CSV, before the inputs are read: writes the header of the block `gaps` and has every
 * gap written as a row as the analysis classifies it (when c->csv_tables has it). */
void ct_gaps_csv_begin(gaps_cli *c);

/* CSV, after the inputs: the block `findings` (when c->csv_tables has it). */
void ct_gaps_csv_end(const gaps_cli *c);

/* The time a trace's relative times count from. */
uint64_t ct_gaps_trace_start(const ct_gaps_proc *p);

/* Wall-clock time of host time t ("" when unknown), written into buf. */
const char *ct_gaps_wall_clock(const ct_gaps_proc *p, uint64_t t, char *buf, size_t len);

/* A process in a sentence: "rank 3 (pid 4242 on node7)" when its rank is known, else
 * "pid 4242"; written into buf. */
const char *ct_gaps_who(const ct_gaps_proc *p, char *buf, size_t len);

/* The operation that ended a gap, demangled into buf ("(unknown operation)" if none). */
const char *ct_gaps_op_label(const ct_gap_detail *d, char *buf, size_t len);

/* part as a percentage of whole (0 when whole is 0). */
static inline double ct_gaps_pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * part / whole : 0.0;
}

/* Prints the full text report: usage tables, largest gaps, stream waits, findings. */
void ct_gaps_print_text(const gaps_cli *c);

/* Prints at most 6 lines: busy share and idle by cause, the largest gap, findings. */
void ct_gaps_print_summary(const gaps_cli *c);

/* Prints the per-rank table, the most idle rank and the one the others waited for
 * (nothing when fewer than two ranks: cmd_gaps_ranks.c). */
void ct_gaps_print_ranks_text(const ct_gaps_ranks *rk);

/* Writes the members "ranks" (one object per rank), "most_idle_rank" and
 * "waited_for_rank" (null when none). */
void ct_gaps_json_ranks(ct_json *j, const ct_gaps_ranks *rk);

/* Writes key: {"<cause><suffix>": v[cause], ...} for every idle cause (cmd_gaps_json.c). */
void ct_gaps_json_causes(ct_json *j, const char *key, const uint64_t *v, const char *suffix);

/* Prints the JSON document (schema in docs/gaps.md); o: the thresholds used. */
void ct_gaps_print_json(const gaps_cli *c, const ct_gaps_options *o);

#endif
