/*
 * `cutrace report --by callsite` and `--by stack`: per call site (the first frame of a
 * call's stack outside CUDA's own libraries) or per whole stack, the outermost calls
 * made there, their CPU time, and the GPU work they launched (kernels, copies, GEMMs,
 * the inner kernels of a library call included), with the top kernel. Reads traces
 * recorded with call stacks (`cutrace record --stacks`, format 1.1). docs/report.md
 * has the columns and the JSON schema.
 */
#ifndef CUTRACE_REPORT_CALLSITE_H
#define CUTRACE_REPORT_CALLSITE_H

#include <stdint.h>

#include "model.h"
#include "output.h"

/* The table: rows merged over every file added. */
typedef struct ct_callsites ct_callsites;

/* A new empty table; by_stack = 1 keys rows by the whole stack. NULL when out of memory. */
ct_callsites *ct_callsites_new(int by_stack);

/* Frees the table. NULL is ignored. */
void ct_callsites_free(ct_callsites *c);

/*
 * Reads one trace file into c, symbolising its stacks with the modules it recorded.
 * Returns 0 clean, 1 partial (st->message says why), -1 unreadable; proc_out (may be
 * NULL) gets the PROCESS record.
 */
int ct_callsites_add_file(ct_callsites *c, const char *path, ct_model_stats *st,
                          struct ct_process *proc_out);

/* Outermost calls seen, and how many of them carried a stack. */
uint64_t ct_callsites_calls(const ct_callsites *c);
uint64_t ct_callsites_calls_with_stack(const ct_callsites *c);

/*
 * Prints the table as text or CSV (CSV columns start with "table" and, when pid is
 * not 0, "pid" and "rank": job's rank, empty when job is NULL or has none), rows in
 * sort order ("total" GPU time, "calls", "avg" GPU time per call, "name" of the
 * function), at most limit rows (0 = all). Text ends with a line on the work no stack
 * names, or, when the trace has no stacks, how to record them. csv_header 0: CSV rows
 * only, more of a block already headed (--per-process: one block for every process).
 */
void ct_callsites_print(const ct_callsites *c, FILE *f, enum ct_out_format fmt, const char *sort,
                        uint64_t limit, uint64_t pid, const struct ct_job *job, int csv_header);

/* Writes the members "callsites" (or "stacks") and "without_stack" into the open JSON
 * object j (schema in docs/report.md). */
void ct_callsites_json(const ct_callsites *c, ct_json *j, const char *sort, uint64_t limit);

/* The one line telling how to record stacks (for a trace without any). */
extern const char ct_callsites_no_stacks_hint[];

#endif
