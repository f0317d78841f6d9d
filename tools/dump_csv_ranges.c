/*
 * The NVTX push/pop ranges of each thread, as cutrace dump --csv needs them to name the
 * innermost range open when a call began (dump_csv.c says how rows wait for them).
 *
 * Per thread: the ranges seen, in arrival order, which for one thread is the order
 * they closed (its RANGE records are written when each closes); kept while rows may
 * still need them (the model delivers a RANGE record as read, and rows up to its
 * reorder window later: up to RANGE_KEEP_NS, at most RANGE_RING_MAX). And, from a
 * first pass over the file, its long ranges: those holding at least long_calls of the
 * thread's calls (a whole training run), for the rows that cannot wait for them.
 * There are few: at most one per long_calls calls and nesting level.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump_csv_internal.h"
#include "ring.h"
#include "reader.h"

#define RANGE_RING_MAX (1u << 18)      /* ranges kept per thread, at most */
#define RANGE_KEEP_NS 10000000000ull   /* and only those that ended up to 10 s before the
                                          latest row */

struct csv_ranges {
  ct_map *threads;   /* tid -> csv_thread */
  size_t long_calls; /* calls in a range that make it long */
};

csv_ranges *csv_ranges_new(size_t long_calls) {
  csv_ranges *rs = calloc(1, sizeof *rs);
  if (!rs || !(rs->threads = ct_map_new(sizeof(csv_thread)))) {
    free(rs);
    return NULL;
  }
  rs->long_calls = long_calls ? long_calls : 1;
  return rs;
}

void csv_ranges_free(csv_ranges *rs) {
  if (!rs) return;
  for (size_t i = 0; i < ct_map_count(rs->threads); i++) {
    csv_thread *tr = ct_map_entry(rs->threads, i, NULL, NULL);
    for (unsigned k = 0; k < tr->n; k++) free(tr->ring[(tr->head + k) & (tr->ring_cap - 1)].name);
    for (size_t k = 0; k < tr->nlong; k++) free(tr->longr[k].name);
    free(tr->ring);
    free(tr->longr);
    free(tr->recent);
    free(tr->pending);
  }
  ct_map_free(rs->threads);
  free(rs);
}

csv_thread *csv_ranges_thread(csv_ranges *rs, uint64_t tid) {
  return rs ? ct_map_get(rs->threads, &tid, sizeof tid, NULL) : NULL;
}

/* First pass: a call of tr began at begin (kept: the last long_calls begins). */
static void note_call(csv_ranges *rs, csv_thread *tr, uint64_t begin) {
  if (tr->nrecent == tr->recent_cap && tr->recent_cap < rs->long_calls) {
    size_t cap = tr->recent_cap ? tr->recent_cap * 2 : 1024;
    if (cap > rs->long_calls) cap = rs->long_calls;
    uint64_t *p = malloc(cap * sizeof *p);
    if (!p) return;
    for (size_t k = 0; k < tr->nrecent; k++) p[k] = tr->recent[(tr->recent_head + k) % tr->recent_cap];
    free(tr->recent);
    tr->recent = p;
    tr->recent_cap = cap;
    tr->recent_head = 0;
  }
  if (!tr->recent_cap) return;
  if (tr->nrecent == tr->recent_cap) { /* full: the oldest goes */
    tr->recent[tr->recent_head] = begin;
    tr->recent_head = (tr->recent_head + 1) % tr->recent_cap;
  } else {
    tr->recent[(tr->recent_head + tr->nrecent++) % tr->recent_cap] = begin;
  }
}

/* First pass: a range of tr closed; kept when the last long_calls calls of the thread
 * (those before its record) all began inside it. */
static void note_range(csv_ranges *rs, csv_thread *tr, const struct ct_range *r, const char *name) {
  tr->has_ranges = 1;
  if (r->end_ns > tr->last_end) tr->last_end = r->end_ns;
  if (tr->nrecent < rs->long_calls) return;
  uint64_t oldest = tr->recent[tr->recent_head];
  if (oldest < r->begin_ns || oldest > r->end_ns) return;
  if (tr->nlong == tr->long_cap) {
    size_t cap = tr->long_cap ? tr->long_cap * 2 : 16;
    csv_range *p = realloc(tr->longr, cap * sizeof *p);
    if (!p) return;
    tr->longr = p;
    tr->long_cap = cap;
  }
  tr->longr[tr->nlong++] = (csv_range){.begin = r->begin_ns, .end = r->end_ns,
                                       .depth = r->depth, .name = strdup(name ? name : "")};
}

/* The model's key of a span or activity record (its end), 0 for other records. */
static uint64_t event_end(const ct_record *rec) {
  switch (rec->kind) {
  case CT_KIND_API: return rec->u.api.end_ns;
  case CT_KIND_GPU: return rec->u.gpu.end_ns;
  case CT_KIND_TRACER: return rec->u.tracer.end_ns;
  default: return 0;
  }
}

void csv_ranges_prescan(csv_ranges *rs, const char *path, uint64_t *lateness) {
  if (lateness) *lateness = 0;
  char err[300];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (!r) return; /* the model's read says why */
  uint64_t late_kinds = lateness ? (1ull << CT_KIND_GPU) | (1ull << CT_KIND_TRACER) : 0;
  ct_reader_skip_kinds(r, ~((1ull << CT_KIND_RANGE) | (1ull << CT_KIND_STRING) |
                            (1ull << CT_KIND_API) | late_kinds |
                            (1ull << CT_KIND_END))); /* END: clean_end */
  ct_record rec;
  uint64_t newest = 0; /* the latest end of a span or activity so far */
  while (ct_reader_next(r, &rec)) {
    uint64_t end = lateness ? event_end(&rec) : 0;
    if (end > newest) newest = end;
    else if (end && newest - end > *lateness) *lateness = newest - end;
    if (rec.kind == CT_KIND_API) {
      csv_thread *tr = csv_ranges_thread(rs, rec.u.api.tid);
      if (tr) note_call(rs, tr, rec.u.api.begin_ns);
    } else if (rec.kind == CT_KIND_RANGE && !(rec.u.range.flags & CT_RANGE_STARTEND)) {
      csv_thread *tr = csv_ranges_thread(rs, rec.u.range.tid);
      if (tr) note_range(rs, tr, &rec.u.range, ct_reader_string(r, rec.u.range.name, NULL));
    }
  }
  /* A file still being written, or damaged, may hold ranges this pass did not see. */
  int whole = ct_reader_status(r)->clean_end;
  ct_reader_close(r);
  for (size_t i = 0; i < ct_map_count(rs->threads); i++) { /* the first pass's only */
    csv_thread *tr = ct_map_entry(rs->threads, i, NULL, NULL);
    if (!whole) tr->last_end = 0;
    free(tr->recent);
    tr->recent = NULL;
    tr->nrecent = tr->recent_cap = tr->recent_head = 0;
  }
}

const csv_range *csv_ranges_add(csv_thread *tr, const struct ct_range *r, const char *name,
                                uint64_t newest) {
  tr->has_ranges = 1;
  while (tr->n && (tr->n == RANGE_RING_MAX || tr->ring[tr->head].end + RANGE_KEEP_NS < newest)) {
    csv_range *old = &tr->ring[tr->head]; /* forgotten */
    if (old->end > tr->forgotten_end) tr->forgotten_end = old->end;
    free(old->name);
    tr->head = (tr->head + 1) & (tr->ring_cap - 1);
    tr->n--;
  }
  if (tr->n == tr->ring_cap) { /* grow, oldest first */
    unsigned cap = tr->ring_cap ? tr->ring_cap * 2 : 256;
    csv_range *ring = ct_ring_copy(tr->ring, sizeof *ring, tr->ring_cap, tr->head, tr->n, cap);
    if (!ring) return NULL;
    free(tr->ring);
    tr->ring = ring;
    tr->ring_cap = cap;
    tr->head = 0;
  }
  csv_range *e = &tr->ring[(tr->head + tr->n) & (tr->ring_cap - 1)];
  *e = (csv_range){.begin = r->begin_ns, .end = r->end_ns, .depth = r->depth,
                   .name = strdup(name ? name : "")};
  tr->n++;
  if (r->depth == 0 && r->begin_ns > tr->d0_begin) tr->d0_begin = r->begin_ns;
  return e;
}

int csv_range_known(const csv_thread *tr, uint64_t t, const char **name) {
  *name = NULL;
  if (tr->forgotten_end >= t) return -1;
  size_t lo = 0, hi = tr->n, mask = tr->ring_cap - 1; /* the first that ends at t or later */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tr->ring[(tr->head + mid) & mask].end < t) lo = mid + 1;
    else hi = mid;
  }
  for (size_t k = lo; k < tr->n; k++) { /* in closing order: the first around t is the */
    const csv_range *e = &tr->ring[(tr->head + k) & mask]; /* innermost */
    if (e->begin <= t) {
      *name = e->name;
      return 1;
    }
    if (e->depth == 0) return 1; /* began after t with nothing open: none holds t */
  }
  /* a depth-0 range began after t, or no range of the file ends after t: none holds it */
  return tr->d0_begin > t || (tr->last_end && t > tr->last_end) ? 1 : 0;
}

const char *csv_range_long(const csv_thread *tr, uint64_t t) {
  size_t lo = 0, hi = tr->nlong; /* the first long range that ends at t or later */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (tr->longr[mid].end < t) lo = mid + 1;
    else hi = mid;
  }
  for (size_t k = lo; k < tr->nlong; k++) { /* in closing order: the innermost first */
    const csv_range *e = &tr->longr[k];
    if (e->begin <= t) return e->name;
    if (e->depth == 0) break; /* began after t with nothing open: none holds t */
  }
  return NULL;
}

int csv_thread_wait(csv_thread *tr, uint64_t seq, uint64_t head_seq) {
  if (tr->npending == tr->cap) { /* full: forget the rows written already, a prefix */
    size_t gone = 0;             /* (seqs rise); grow when over half still waits */
    while (gone < tr->npending && tr->pending[gone] < head_seq) gone++;
    if (gone) /* (never with the first call: pending is still NULL, memmove's UB) */
      memmove(tr->pending, tr->pending + gone, (tr->npending - gone) * sizeof *tr->pending);
    tr->npending -= gone;
    if (!tr->cap || tr->npending * 2 > tr->cap) {
      size_t cap = tr->cap ? tr->cap * 2 : 64;
      uint64_t *p = realloc(tr->pending, cap * sizeof *p);
      if (!p) return -1;
      tr->pending = p;
      tr->cap = cap;
    }
  }
  tr->pending[tr->npending++] = seq;
  return 0;
}

int csv_spool_stdin(char *path, size_t cap) {
  const char *dir = getenv("TMPDIR");
  char tmpl[4096];
  int n = snprintf(tmpl, sizeof tmpl, "%s/cutrace-csv-XXXXXX", dir && *dir ? dir : "/tmp");
  if (n < 0 || (size_t)n >= sizeof tmpl) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = mkstemp(tmpl);
  if (fd < 0) return -1;
  unlink(tmpl);
  static char buf[1 << 16];
  for (;;) {
    ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) goto fail;
    if (got == 0) break;
    for (ssize_t off = 0; off < got;) {
      ssize_t put = write(fd, buf + off, (size_t)(got - off));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) goto fail;
      off += put;
    }
  }
  snprintf(path, cap, "/proc/self/fd/%d", fd);
  return fd;
fail:;
  int saved = errno;
  close(fd);
  errno = saved;
  return -1;
}

void csv_spool_message(char *message, const char *spooled) {
  size_t n = strlen(spooled); /* the reader's messages name the file: "-", as given */
  if (!strncmp(message, spooled, n) && !strncmp(message + n, ": ", 2))
    memmove(message, message + n + 2, strlen(message + n + 2) + 1);
}
