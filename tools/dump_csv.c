/*
 * cutrace dump --csv (dump_csv.h, docs/dump.md): the model's spans and activities as
 * rows, in the order the model delivers them (per file, nondecreasing end time: a first
 * pass over the file measures how late its records come, and the model's reorder window
 * is fixed to that, so a late record is put in its place unless the model's memory bound
 * was reached: ct_csv_file_stats.late).
 *
 * Two columns are known only later than the row itself:
 * - nvtx_range, the innermost NVTX push/pop range open on the calling thread when the
 *   call began: a RANGE record is written when its range closes, after the calls inside
 *   it. Ranges of one thread close innermost first, so the first RANGE record of the
 *   thread that contains the call's begin is its innermost range; a depth-0 range that
 *   began after the call says that no range held it (one that did would have closed
 *   before, and been seen). dump_csv_ranges.c keeps each thread's ranges.
 * - library_call, the outermost call (cublasSgemm_v2, ...) a call at depth > 0 was made
 *   in: that call ends after it. A table by the library call's corr keeps its name
 *   while its child calls' rows and promised GPU work are outstanding.
 * A row waits for them in a FIFO queue of at most hold_max rows (and HOLD_BYTES): the
 * rows behind it wait too (the order is kept); when the queue is full its oldest row is
 * written without what it waited for (counted: ct_csv_file_stats.unresolved). Threads
 * without any push/pop range (a first pass over the file's RANGE records says which)
 * never wait. Memory is bounded by the queue, the rings and what is in flight.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump_csv_internal.h"
#include "ring.h"
#include "output.h"
#include "reader.h"
#include "report.h"

#define HOLD_MAX_DEFAULT 65536u        /* rows held at most (CUTRACE_CSV_HOLD_MAX) */
#define HOLD_BYTES (64u << 20)         /* their text at most */
#define STALE_NS 2000000000ull         /* library calls whose records stopped coming */
#define SWEEP_MIN 4096u

/* A library call that child calls were made in (by its corr). */
typedef struct parent_entry {
  const char *name;        /* interned, once known */
  int known;
  int64_t refs;            /* promised child activities and held rows still to come */
  uint64_t touched;
} parent_entry;

/* A row waiting in the queue. */
typedef struct held_row {
  char *text;              /* every column before library_call, commas included */
  size_t len;
  uint64_t tid, t, parent; /* calling thread and the call's begin; library call's corr */
  uint64_t calls_at;       /* the thread's call rows when it came */
  const char *lib;         /* library_call (interned), NULL when none */
  char *range;             /* nvtx_range, NULL when none */
  uint8_t range_pending, lib_pending;
} held_row;

struct ct_csv {
  FILE *out;
  unsigned rows;
  csv_buf line, tail;
  ct_demangle_cache dem;   /* by pointer: the reader's names, forgotten at each file's end */
  ct_kattr_table *attrs;   /* the current file's kernel attributes */
  ct_map *graphs;          /* the current file's graph inventories (ct_graph_invs_*) */
  csv_ranges *ranges;      /* per thread, per file (dump_csv_ranges.c) */
  ct_map *names;           /* interned names (char *), across files */
  ct_corr_table parents;   /* library call corr -> parent_entry, per file */
  uint64_t newest, sweep_at; /* the latest end of a row; the parents table's next sweep */
  held_row *q;             /* the queue: a ring of qcap (a power of two) */
  size_t qcap, qhead, qn, hold_max, held_bytes;
  uint64_t head_seq;       /* seq of q[qhead] */
  ct_csv_file_stats fst;
};

/* ---- names and threads ----------------------------------------------------------------- */

static const char *intern(ct_csv *c, const char *name) {
  if (!name) return NULL;
  char **slot = ct_map_get_name(c->names, name, NULL);
  if (slot && !*slot) *slot = strdup(name);
  return slot && *slot ? *slot : NULL;
}

/* ---- library calls --------------------------------------------------------------------- */

static parent_entry *parent_get(ct_csv *c, uint64_t corr, int create, uint64_t when) {
  if (when > c->newest) c->newest = when;
  if (create && c->parents.n >= c->sweep_at) { /* forget calls whose records were lost */
    for (size_t i = 0; i < c->parents.cap;) {
      parent_entry *e = ct_corr_slot(&c->parents, i, NULL);
      if (e && e->touched + STALE_NS < c->newest) ct_corr_remove(&c->parents, e);
      else i++;
    }
    c->sweep_at = c->parents.n * 2 > SWEEP_MIN ? c->parents.n * 2 : SWEEP_MIN;
  }
  parent_entry *e = ct_corr_find(&c->parents, corr, create);
  if (e && when > e->touched) e->touched = when;
  return e;
}

static void parent_release(ct_csv *c, parent_entry *e) {
  if (e && e->known && e->refs <= 0) ct_corr_remove(&c->parents, e);
}

/* ---- the queue ------------------------------------------------------------------------- */

static held_row *row_at(ct_csv *c, uint64_t seq) {
  return &c->q[(c->qhead + (size_t)(seq - c->head_seq)) & (c->qcap - 1)];
}

/* Writes a row: text, then library_call and nvtx_range. */
static void write_row(ct_csv *c, const char *text, size_t len, const char *lib, const char *range) {
  c->tail.n = 0;
  csv_put_text(&c->tail, lib, 0);
  csv_put_text(&c->tail, range, 1);
  csv_put(&c->tail, CT_CSV_EOL, sizeof CT_CSV_EOL - 1);
  fwrite(text, 1, len, c->out);
  fwrite(c->tail.p, 1, c->tail.n, c->out);
  c->fst.rows++;
}

/* Settles the oldest row's library call if it can. */
static void settle_lib(ct_csv *c, held_row *h, int force) {
  if (!h->lib_pending) return;
  parent_entry *e = ct_corr_find(&c->parents, h->parent, 0);
  if (e && !e->known && !force) return;
  h->lib_pending = 0;
  if (e && e->known) h->lib = e->name;
  else c->fst.unresolved++;
  if (e) {
    e->refs--;
    parent_release(c, e);
  }
}

/* Writes the oldest row (force: whatever it still waits for stays empty) and drops it. */
static void pop_row(ct_csv *c, int force) {
  held_row *h = &c->q[c->qhead];
  settle_lib(c, h, force);
  if (h->range_pending) { /* its range is long (first pass), or not closed yet */
    csv_thread *tr = csv_ranges_thread(c->ranges, h->tid);
    const char *name = tr ? csv_range_long(tr, h->t) : NULL;
    /* Once its thread made hold_max / 2 calls since, a range still open around it holds
     * them all: it is long, and known. */
    if (!tr || tr->calls - h->calls_at < c->hold_max / 2) c->fst.unresolved++;
    h->range = name ? strdup(name) : NULL;
    h->range_pending = 0;
  }
  write_row(c, h->text, h->len, h->lib, h->range);
  c->held_bytes -= h->len;
  free(h->text);
  free(h->range);
  c->qhead = (c->qhead + 1) & (c->qcap - 1);
  c->qn--;
  c->head_seq++;
}

/* Writes the rows at the head of the queue that wait for nothing. */
static void flush_ready(ct_csv *c) {
  while (c->qn) {
    held_row *h = &c->q[c->qhead];
    if (h->range_pending) return;
    settle_lib(c, h, 0);
    if (h->lib_pending) return;
    pop_row(c, 0);
  }
}

/* Room for one more row (growing the ring, or writing the oldest when full). */
static held_row *push_slot(ct_csv *c) {
  if (c->qn && (c->qn >= c->hold_max || c->held_bytes > HOLD_BYTES)) pop_row(c, 1);
  if (c->qn == c->qcap) {
    size_t cap = c->qcap ? c->qcap * 2 : 1024;
    held_row *q = ct_ring_copy(c->q, sizeof *q, c->qcap, c->qhead, c->qn, cap);
    if (!q) return NULL;
    free(c->q);
    c->q = q;
    c->qcap = cap;
    c->qhead = 0;
  }
  return &c->q[(c->qhead + c->qn) & (c->qcap - 1)];
}

/* The row just formatted in c->line, of a call on tid that began at t (has_tid 0: no
 * call known) and, when parent is nonzero, was made inside library call parent. */
static void add_row(ct_csv *c, int has_tid, uint64_t tid, uint64_t t, uint64_t parent,
                    uint64_t when) {
  const char *range = NULL, *lib = NULL;
  int range_pending = 0, lib_pending = 0;
  csv_thread *tr = has_tid ? csv_ranges_thread(c->ranges, tid) : NULL;
  if (tr && tr->has_ranges) {
    int k = csv_range_known(tr, t, &range);
    if (k < 0) c->fst.unresolved++;
    range_pending = k == 0;
  }
  parent_entry *e = parent ? parent_get(c, parent, 1, when) : NULL;
  if (e && e->known) lib = e->name;
  else if (e) lib_pending = 1;
  e = NULL; /* entries move: found again below */
  if (!range_pending && !lib_pending && !c->qn) {
    write_row(c, c->line.p, c->line.n, lib, range);
    return;
  }
  held_row *h = push_slot(c);
  char *text = h ? malloc(c->line.n ? c->line.n : 1) : NULL;
  char *rcopy = range ? strdup(range) : NULL;
  if (!text || (range && !rcopy)) { /* out of memory: out of order, rather than lost */
    free(text);
    free(rcopy);
    c->fst.unresolved += range_pending + lib_pending;
    write_row(c, c->line.p, c->line.n, lib, range);
    return;
  }
  memcpy(text, c->line.p, c->line.n);
  *h = (held_row){.text = text, .len = c->line.n, .tid = tid, .t = t, .parent = parent,
                  .calls_at = tr ? tr->calls : 0,
                  .lib = lib, .range = rcopy, .range_pending = (uint8_t)range_pending,
                  .lib_pending = (uint8_t)lib_pending};
  uint64_t seq = c->head_seq + c->qn;
  c->qn++;
  c->held_bytes += h->len;
  if (lib_pending) { /* the queue's oldest row may have been written: found again */
    if ((e = parent_get(c, parent, 1, when)) != NULL) e->refs++;
    else h->lib_pending = 0; /* out of memory: none */
  }
  if (range_pending && csv_thread_wait(tr, seq, c->head_seq) < 0) { /* cannot wait: */
    h->range_pending = 0;                                             /* written without */
    c->fst.unresolved++;
  }
}

/* ---- model callbacks ------------------------------------------------------------------- */

/* What a graph launch ran (the inventory of the version it launched), NULL when not a
 * graph launch or not known. */
static const ct_graph_inv *graph_of(ct_csv *c, enum ct_detail detail, const ct_detail_data *d) {
  if (detail != CT_DETAIL_GRAPH || !c->graphs) return NULL;
  return ct_graph_invs_find(c->graphs, d->graph.exec, d->graph.version);
}

static void on_graph(void *user, const ct_proc *p, const struct ct_graph *g) {
  ct_csv *c = user;
  (void)p;
  if (!c->graphs) c->graphs = ct_map_new(sizeof(ct_graph_inv));
  if (c->graphs) (void)ct_graph_invs_graph(c->graphs, g);
}

static void on_graph_kernel(void *user, const ct_proc *p, const struct ct_graph_kernel *k,
                            const char *name) {
  ct_csv *c = user;
  (void)p;
  if (c->graphs) (void)ct_graph_invs_kernel(c->graphs, k, name, NULL);
}

static void on_span(void *user, const ct_span *s) {
  ct_csv *c = user;
  if (s->is_tracer) return;
  if (s->end_ns > c->newest) c->newest = s->end_ns;
  csv_thread *tr = csv_ranges_thread(c->ranges, s->tid);
  if (tr) tr->calls++;
  uint64_t parent = s->depth && s->parent ? s->parent : 0;
  if (parent) {
    parent_entry *e = parent_get(c, parent, 1, s->end_ns);
    if (e && (s->flags & CT_API_TIMED)) e->refs++; /* its activity is still to come */
  } else if (s->corr) {
    parent_entry *e = c->parents.n ? ct_corr_find(&c->parents, s->corr, 0) : NULL;
    if (e) {
      e->name = intern(c, s->name);
      e->known = 1;
      parent_release(c, e);
    }
  }
  if (c->rows & CT_CSV_ROWS_CALLS) {
    c->fst.late += s->late != 0;
    c->line.n = 0;
    csv_format_call(&c->line, s, graph_of(c, s->detail, &s->d));
    add_row(c, 1, s->tid, s->begin_ns, parent, s->end_ns);
  }
  flush_ready(c);
}

static void on_activity(void *user, const ct_activity *a) {
  ct_csv *c = user;
  if (a->end_ns > c->newest) c->newest = a->end_ns;
  uint64_t parent = a->has_call && a->call_depth && a->call_parent ? a->call_parent : 0;
  if (parent) {
    parent_entry *e = parent_get(c, parent, 1, a->end_ns);
    if (e) e->refs--; /* the promised activity came */
  }
  if (c->rows & CT_CSV_ROWS_GPU) {
    c->fst.late += a->late != 0;
    c->line.n = 0;
    csv_format_activity(&c->line, &c->dem, a, c->attrs, graph_of(c, a->detail, &a->d));
    add_row(c, a->has_call, a->tid, a->call_begin_ns, parent, a->end_ns);
  }
  if (parent) parent_release(c, ct_corr_find(&c->parents, parent, 0));
  flush_ready(c);
}

static void on_range(void *user, const ct_proc *p, const struct ct_range *r, const char *name) {
  ct_csv *c = user;
  (void)p;
  if (r->flags & CT_RANGE_STARTEND) return;
  csv_thread *tr = csv_ranges_thread(c->ranges, r->tid);
  if (!tr) return;
  const csv_range *e = csv_ranges_add(tr, r, name, c->newest);
  if (!e) return;
  size_t kept = 0;
  for (size_t i = 0; i < tr->npending; i++) {
    uint64_t seq = tr->pending[i];
    if (seq < c->head_seq) continue; /* written already (the queue was full) */
    held_row *h = row_at(c, seq);
    if (!h->range_pending) continue;
    if (r->begin_ns <= h->t && h->t <= r->end_ns) {
      h->range = e->name ? strdup(e->name) : NULL;
      h->range_pending = 0;
    } else if (r->depth == 0 && r->begin_ns > h->t) {
      h->range_pending = 0;
    } else {
      tr->pending[kept++] = seq;
    }
  }
  tr->npending = kept;
  flush_ready(c);
}

static void on_kernel_attr(void *user, const ct_proc *p, const struct ct_kernel_attr *a,
                           const char *name) {
  ct_csv *c = user;
  (void)p, (void)name;
  if (!c->attrs) c->attrs = ct_kattr_new();
  if (c->attrs) (void)ct_kattr_add_attr(c->attrs, a);
}

/* ---- the table ------------------------------------------------------------------------- */

ct_csv *ct_csv_begin(FILE *out, unsigned rows) {
  ct_csv *c = calloc(1, sizeof *c);
  if (!c || !(c->names = ct_map_new(sizeof(char *)))) {
    free(c);
    return NULL;
  }
  c->out = out;
  c->dem.by_pointer = 1;
  c->rows = rows ? rows : CT_CSV_ROWS_ALL;
  c->hold_max = HOLD_MAX_DEFAULT;
  const char *env = getenv("CUTRACE_CSV_HOLD_MAX"); /* for the tests */
  if (env && strtoul(env, NULL, 10) > 0) c->hold_max = strtoul(env, NULL, 10);
  c->sweep_at = SWEEP_MIN;
  ct_corr_init(&c->parents, sizeof(parent_entry));
  fputs(csv_header, out);
  return c;
}

int ct_csv_add_file(ct_csv *c, const char *path, ct_model_stats *st, ct_csv_file_stats *fst) {
  static const ct_model_ops ops = {.on_span = on_span, .on_activity = on_activity,
                                   .on_range = on_range, .on_kernel_attr = on_kernel_attr,
                                   .on_graph = on_graph, .on_graph_kernel = on_graph_kernel};
  memset(&c->fst, 0, sizeof c->fst);
  if (fst) *fst = c->fst;
  char spooled[64];
  int spool_fd = -1;
  if (!strcmp(path, "-")) {
    if ((spool_fd = csv_spool_stdin(spooled, sizeof spooled)) < 0) {
      memset(st, 0, sizeof *st);
      snprintf(st->message, sizeof st->message,
               "cannot keep standard input for its two passes (a temporary file): %s",
               strerror(errno));
      return -1;
    }
    path = spooled;
  }
  c->ranges = csv_ranges_new(c->hold_max / 2);
  uint64_t lateness = 0;
  if (c->ranges) csv_ranges_prescan(c->ranges, path, &lateness);
  /* A reorder window as wide as the file's records come late: every row in end order
   * (the adaptive window grows only once it saw lateness, so the first late record of
   * a file would come out of order), up to the model's memory bound. */
  ct_model_options opts;
  ct_model_get_defaults(&opts);
  opts.window_ns = lateness < CT_MODEL_START_WINDOW_NS ? CT_MODEL_START_WINDOW_NS : lateness + 1;
  int rc = ct_model_read(path, &opts, &ops, c, st);
  if (spool_fd >= 0) {
    close(spool_fd);
    csv_spool_message(st->message, spooled);
  }
  /* The file ended: no range closes around the rows still waiting. A row that waited
   * only behind an older one (a call after its thread's last range, which no range
   * can be known to hold until the end) has its library call if that ended meanwhile;
   * the others' is not in the file (lost with dropped or damaged records, said
   * already, or outside --from/--to): written without, not counted. */
  for (size_t i = 0; i < c->qn; i++) {
    held_row *h = &c->q[(c->qhead + i) & (c->qcap - 1)];
    h->range_pending = 0;
    if (h->lib_pending) {
      const parent_entry *e = ct_corr_find(&c->parents, h->parent, 0);
      if (e && e->known) h->lib = e->name;
      h->lib_pending = 0;
    }
  }
  while (c->qn) pop_row(c, 1);
  c->head_seq = 0;
  csv_ranges_free(c->ranges);
  c->ranges = NULL;
  ct_corr_free(&c->parents);
  ct_corr_init(&c->parents, sizeof(parent_entry));
  c->newest = 0;
  c->sweep_at = SWEEP_MIN;
  ct_kattr_free(c->attrs);
  c->attrs = NULL;
  ct_map_free(c->graphs);
  c->graphs = NULL;
  ct_map_forget_pointers(c->names); /* the reader's strings are gone */
  ct_demangle_cache_forget_pointers(&c->dem);
  if (fst) *fst = c->fst;
  return rc;
}

int ct_csv_end(ct_csv *c) {
  int rc = c->line.oom || c->tail.oom ? -1 : 0;
  if (c->line.oom || c->tail.oom) errno = ENOMEM;
  if (fflush(c->out) != 0 || ferror(c->out)) rc = -1;
  for (size_t i = 0; i < ct_map_count(c->names); i++)
    free(*(char **)ct_map_entry(c->names, i, NULL, NULL));
  ct_map_free(c->names);
  ct_demangle_cache_free(&c->dem);
  free(c->line.p);
  free(c->tail.p);
  free(c->q);
  free(c);
  return rc;
}
