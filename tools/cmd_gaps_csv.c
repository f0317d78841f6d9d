/*
 * cutrace gaps --format csv (docs/gaps.md, "CSV"): the block `gaps`, one row per idle
 * gap of a device or a stream, written as the analysis classifies it (nothing kept: the
 * trace's length does not matter), then the block `findings`, one row per finding.
 * The CSV convention of every command (docs/report.md): CRLF, a `table` column.
 */
#include <stdio.h>
#include <string.h>

#include "cmd_gaps.h"

static const char *const gap_columns[] = {
    "table", "pid", "rank", "device", "scope", "stream", "start_ns", "end_ns", "dur_ns",
    "cause", "ended_by", "tid", "correlation", "inside_call", "inside_ns", "range", "callsite"};

static const char *const finding_columns[] = {
    "table", "pid", "rank", "device", "kind", "what", "count", "saving_ns", "adds_ns",
    "overlap_ns", "not_idle_ns", "idle_ns", "gpu_ns", "cpu_ns", "first_ns", "last_ns",
    "callsite", "fix"};

static void header(const char *const *cols, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) putchar(',');
    ct_csv_field(stdout, cols[i]);
  }
  fputs(CT_CSV_EOL, stdout);
}

/* A row being formatted: fields are put into buf and the row written with one fwrite
 * (a printf per field made the block `gaps` three times slower than JSON). */
typedef struct csv_row {
  char buf[1024];
  size_t n;
} csv_row;

/* Writes out what the row holds so far. */
static void row_flush(csv_row *r) {
  fwrite(r->buf, 1, r->n, stdout);
  r->n = 0;
}

/* Puts a comma and v. */
static void put_u64(csv_row *r, uint64_t v) {
  if (r->n + 1 + CT_U64_DIGITS > sizeof r->buf) row_flush(r);
  r->buf[r->n++] = ',';
  r->n += ct_fmt_u64(r->buf + r->n, v);
}

/* Puts a comma and s as one field (ct_csv_quote; NULL is empty). */
static void put_text(csv_row *r, const char *s) {
  if (r->n + 1 > sizeof r->buf) row_flush(r);
  r->buf[r->n++] = ',';
  if (!s || !*s) return;
  size_t len = strlen(s), room = sizeof r->buf - r->n;
  size_t need = ct_csv_quote(r->buf + r->n, room, s, len);
  if (need <= room) {
    r->n += need;
    return;
  }
  row_flush(r); /* longer than the room left: written by itself */
  ct_csv_field(stdout, s);
}

/* Puts n empty fields (commas). */
static void put_empty(csv_row *r, unsigned n) {
  if (r->n + n > sizeof r->buf) row_flush(r);
  memset(r->buf + r->n, ',', n);
  r->n += n;
}

/* Ends the row (CRLF) and writes it. */
static void row_end(csv_row *r) {
  if (r->n + 2 > sizeof r->buf) row_flush(r);
  memcpy(r->buf + r->n, CT_CSV_EOL, 2);
  r->n += 2;
  row_flush(r);
}

/* The table's name, pid and rank (empty when the file has none). */
static void put_who(csv_row *r, const char *table, uint64_t pid, const struct ct_job *job) {
  r->n = strlen(table);
  memcpy(r->buf, table, r->n);
  put_u64(r, pid);
  if (job && (job->known & CT_JOB_RANK)) put_u64(r, job->rank);
  else put_empty(r, 1);
}

/* A ct_gaps_set_callback function: one row of the block `gaps`. */
static void gap_row(void *user, const ct_gap_info *g) {
  (void)user;
  csv_row r;
  put_who(&r, "gaps", g->proc ? g->proc->rec.pid : 0, g->proc ? &g->proc->job : NULL);
  put_u64(&r, g->device);
  int device_scope = g->stream == UINT64_MAX;
  put_text(&r, device_scope ? "device" : "stream");
  if (device_scope) put_empty(&r, 1);
  else put_u64(&r, g->stream);
  put_u64(&r, g->start_ns);
  put_u64(&r, g->end_ns);
  put_u64(&r, g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0);
  put_text(&r, g->cause);
  put_text(&r, g->ended_by);
  if (g->ended_by) {
    put_u64(&r, g->tid);
    put_u64(&r, g->corr);
  } else {
    put_empty(&r, 2);
  }
  put_text(&r, g->inside_call); /* empty unless a device host_wait gap spent inside one call */
  if (g->inside_call) put_u64(&r, g->inside_ns);
  else put_empty(&r, 1);
  put_text(&r, g->range);    /* the ending call's NVTX range, as dump --csv's nvtx_range */
  put_text(&r, g->callsite); /* ... and its call site (traces with stacks) */
  row_end(&r);
}

int ct_gaps_csv_table_bits(const char *list) {
  int bits = 0;
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    if (n == 4 && !strncmp(p, "gaps", 4)) bits |= CT_GAPS_CSV_GAPS;
    else if (n == 8 && !strncmp(p, "findings", 8)) bits |= CT_GAPS_CSV_FINDINGS;
    else return -1;
    if (!p[n]) return bits;
    p += n + 1;
  }
}

int ct_gaps_csv_options(gaps_cli *c, const char *tables, int top_given, int min_gap_given) {
  const char *bad = NULL;
  if (tables && c->fmt != CT_OUT_CSV) bad = "--tables picks CSV blocks: it needs --format csv";
  else if (c->fmt == CT_OUT_CSV && c->summary) bad = "--summary has no CSV form";
  else if (c->fmt == CT_OUT_JSON && c->summary)
    bad = "--summary is lines of text: it has no JSON form (the JSON holds it all)";
  else if (c->summary && top_given) bad = "--top does not apply to --summary (one largest gap)";
  else if (c->summary && min_gap_given)
    bad = "--min-gap does not apply to --summary (it names the largest gap, whatever its length)";
  else if (c->fmt == CT_OUT_CSV && top_given)
    bad = "--top does not apply to --format csv (every gap is a row; --min-gap filters them)";
  if (bad) {
    fprintf(stderr, "cutrace gaps: %s (try: cutrace gaps --help)\n", bad);
    return 2;
  }
  c->csv_tables = tables ? ct_gaps_csv_table_bits(tables) : CT_GAPS_CSV_GAPS | CT_GAPS_CSV_FINDINGS;
  return -1;
}

void ct_gaps_csv_begin(gaps_cli *c) {
  if (!(c->csv_tables & CT_GAPS_CSV_GAPS)) return;
  header(gap_columns, sizeof gap_columns / sizeof *gap_columns);
  ct_gaps_set_callback(c->g, gap_row, NULL);
  ct_gaps_set_row_context(c->g);
}

void ct_gaps_csv_end(const gaps_cli *c) {
  if (!(c->csv_tables & CT_GAPS_CSV_FINDINGS)) return;
  if (c->csv_tables & CT_GAPS_CSV_GAPS) fputs(CT_CSV_EOL, stdout); /* between the blocks */
  header(finding_columns, sizeof finding_columns / sizeof *finding_columns);
  unsigned n, np;
  const ct_gaps_proc *procs = ct_gaps_procs(c->g, &np);
  const ct_gaps_finding *fs = ct_gaps_findings(c->g, &n);
  for (unsigned i = 0; i < n; i++) {
    const ct_gaps_finding *f = &fs[i];
    const ct_gaps_proc *p = f->proc < np ? &procs[f->proc] : NULL;
    csv_row r;
    put_who(&r, "findings", p ? p->pid : 0, p ? &p->job : NULL);
    put_u64(&r, f->device);
    put_text(&r, ct_gaps_finding_kinds[f->kind]);
    put_text(&r, f->what);
    const uint64_t v[] = {f->count,   f->saving_ns, f->adds_ns,  f->overlap_ns, f->not_idle_ns,
                          f->idle_ns, f->gpu_ns,    f->cpu_ns,   f->first_ns,   f->last_ns};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) put_u64(&r, v[k]);
    put_text(&r, f->site);
    put_text(&r, f->fix);
    row_end(&r);
  }
}
