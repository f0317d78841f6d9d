/*
 * The steps' spans in bounded memory (steps_internal.h: ct_instance_sorter_*,
 * ct_step_spans_*).
 *
 * Sorting the range instances: ct_range_each hands them over as their ranges close
 * (and their GPU work is known), not in begin order. Up to CT_STEPS_SPANS_MEM of them
 * are sorted in memory; past that, each CT_STEPS_SPANS_MEM is sorted and written to an
 * unnamed temporary file as a run, and the runs are merged (SORT_FANIN at a time,
 * merging into longer runs first when there are more), so memory does not grow with
 * the instances. The order is total (begin, the enclosing one first, then thread and
 * GPU span), so runs merge to what one sort of them all gives.
 *
 * The spans, in step order: the first CT_STEPS_SPANS_MEM in memory; with more, every
 * span goes to a temporary file (40 bytes each, at 40 i) and is read back a page of
 * SPANS_PAGE at a time into a few cached pages; the first begin of each page stays in
 * memory (8 bytes a page) for the searches by time. The measuring pass asks for spans
 * nearly in order, so the cache almost always holds them. When a file cannot be
 * created or written, everything stays in memory (as tools/steps_rows.c does).
 */
#include <stdlib.h>
#include <string.h>

#include "range_queue.h"
#include "steps_internal.h"

#define SORT_FANIN 64    /* runs merged at once */
#define MERGE_BUF 256    /* instances read ahead per run while merging */
#define SPANS_PAGE CT_STEPS_SPANS_PAGE /* spans read back at a time */
#define SPANS_CACHE 4    /* pages kept */

_Static_assert(sizeof(ct_step_instance) == 40, "40 bytes an instance in the file");
_Static_assert(sizeof(ct_step_span) == 40, "40 bytes a span in the file");

/* ---- sorting the instances ----------------------------------------------------------- */

typedef struct sort_run {
  uint64_t start, n; /* instances [start, start + n) of the file */
} sort_run;

struct ct_instance_sorter {
  ct_step_instance *buf;
  size_t n, cap;
  FILE *file;
  uint64_t file_n;   /* instances in the file */
  sort_run *runs;
  size_t nruns, runs_cap;
  int file_failed;   /* the file could not be written: everything stays in memory */
};

/* The instances' order: begin, then the enclosing one (later end) first, then thread
 * and GPU span (total, so that merged runs equal one sort). */
static int instance_cmp(const ct_step_instance *x, const ct_step_instance *y) {
  if (x->begin_ns != y->begin_ns) return x->begin_ns < y->begin_ns ? -1 : 1;
  if (x->end_ns != y->end_ns) return x->end_ns > y->end_ns ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  if (x->gpu_first_ns != y->gpu_first_ns) return x->gpu_first_ns < y->gpu_first_ns ? -1 : 1;
  return x->gpu_last_ns < y->gpu_last_ns ? -1 : x->gpu_last_ns > y->gpu_last_ns;
}

static int instance_qsort_cmp(const void *a, const void *b) { return instance_cmp(a, b); }

ct_instance_sorter *ct_instance_sorter_new(void) { return calloc(1, sizeof(ct_instance_sorter)); }

/* Appends n instances at the end of the file as one run. Returns 0, -1. */
static int write_run(ct_instance_sorter *s, const ct_step_instance *v, size_t n) {
  if (s->nruns == s->runs_cap) {
    size_t ncap = s->runs_cap ? 2 * s->runs_cap : 16;
    sort_run *nr = realloc(s->runs, ncap * sizeof *nr);
    if (!nr) return -1;
    s->runs = nr;
    s->runs_cap = ncap;
  }
  if (!s->file && !(s->file = tmpfile())) return -1;
  if (ct_spill_io(s->file, s->file_n * sizeof *v, (void *)v, n * sizeof *v, 1) < 0) return -1;
  s->runs[s->nruns++] = (sort_run){s->file_n, n};
  s->file_n += n;
  return 0;
}

int ct_instance_sorter_add(ct_instance_sorter *s, const ct_step_instance *in) {
  if (s->n == s->cap) {
    if (s->n >= CT_STEPS_SPANS_MEM && !s->file_failed) {
      qsort(s->buf, s->n, sizeof *s->buf, instance_qsort_cmp);
      if (write_run(s, s->buf, s->n) == 0) s->n = 0;
      else s->file_failed = 1;
    }
    if (s->n == s->cap) {
      size_t ncap = s->cap ? 2 * s->cap : CT_STEPS_SPANS_MEM < 256 ? CT_STEPS_SPANS_MEM : 256;
      ct_step_instance *nb = realloc(s->buf, ncap * sizeof *nb);
      if (!nb) return -1;
      s->buf = nb;
      s->cap = ncap;
    }
  }
  s->buf[s->n++] = *in;
  return 0;
}

/* One run being merged: its read-ahead and where it stands (or the sorted instances
 * still in memory: v points there and nothing is read). */
typedef struct merge_src {
  uint64_t pos, end;         /* the next instance to read into buf, the run's end */
  const ct_step_instance *v; /* buf, or the instances in memory */
  size_t i, n;
  ct_step_instance buf[MERGE_BUF];
} merge_src;

/* Refills src when empty. Returns 1 when it has an instance, 0 at its end, -1. */
static int src_ready(FILE *file, merge_src *src) {
  if (src->i < src->n) return 1;
  if (src->pos == src->end) return 0;
  size_t k = src->end - src->pos < MERGE_BUF ? (size_t)(src->end - src->pos) : MERGE_BUF;
  if (ct_spill_io(file, src->pos * sizeof *src->buf, src->buf, k * sizeof *src->buf, 0) < 0)
    return -1;
  src->pos += k;
  src->v = src->buf;
  src->i = 0;
  src->n = k;
  return 1;
}

/* Restores the heap of sources (least head first) below slot k. */
static void heap_down(merge_src **h, size_t n, size_t k) {
  for (;;) {
    size_t l = 2 * k + 1, m = k;
    if (l < n && instance_cmp(&h[l]->v[h[l]->i], &h[m]->v[h[m]->i]) < 0) m = l;
    if (l + 1 < n && instance_cmp(&h[l + 1]->v[h[l + 1]->i], &h[m]->v[h[m]->i]) < 0) m = l + 1;
    if (m == k) return;
    merge_src *t = h[k];
    h[k] = h[m];
    h[m] = t;
    k = m;
  }
}

/* Merges runs [first, first + k) and, with_mem, the sorted instances in memory, handing
 * each instance in order to fn (fn NULL: appended to the file as a new run). Returns
 * 0, -1 (no run added). */
static int merge_runs(ct_instance_sorter *s, size_t first, size_t k, int with_mem,
                      int (*fn)(void *user, const ct_step_instance *in), void *user) {
  size_t nsrc = k + (with_mem && s->n);
  merge_src *src = malloc((nsrc ? nsrc : 1) * sizeof *src);
  merge_src **heap = malloc((nsrc ? nsrc : 1) * sizeof *heap);
  ct_step_instance *out = fn ? NULL : malloc(MERGE_BUF * sizeof *out);
  int rc = src && heap && (fn || out) ? 0 : -1;
  size_t n = 0, nout = 0;
  uint64_t out_start = s->file_n, written = 0;
  for (size_t r = 0; r < k && rc == 0; r++) {
    const sort_run *run = &s->runs[first + r];
    src[r].pos = run->start;
    src[r].end = run->start + run->n;
    src[r].i = src[r].n = 0;
    int ready = src_ready(s->file, &src[r]);
    if (ready < 0) rc = -1;
    else if (ready) heap[n++] = &src[r];
  }
  if (rc == 0 && nsrc > k) {
    src[k] = (merge_src){.pos = 0, .end = 0, .v = s->buf, .i = 0, .n = s->n};
    heap[n++] = &src[k];
  }
  for (size_t i = n / 2; i-- > 0;) heap_down(heap, n, i);
  while (rc == 0 && n) {
    merge_src *top = heap[0];
    const ct_step_instance *in = &top->v[top->i++];
    if (fn) {
      rc = fn(user, in) < 0 ? -1 : 0;
    } else {
      out[nout++] = *in;
      if (nout == MERGE_BUF) {
        rc = ct_spill_io(s->file, (out_start + written) * sizeof *out, out, nout * sizeof *out, 1);
        written += nout;
        nout = 0;
      }
    }
    int ready = src_ready(s->file, top);
    if (ready < 0) rc = -1;
    else if (!ready) heap[0] = heap[--n];
    heap_down(heap, n, 0);
  }
  if (rc == 0 && nout) {
    rc = ct_spill_io(s->file, (out_start + written) * sizeof *out, out, nout * sizeof *out, 1);
    written += nout;
  }
  if (rc == 0 && !fn) {
    s->runs[s->nruns++] = (sort_run){out_start, written};
    s->file_n += written;
  }
  free(src);
  free(heap);
  free(out);
  return rc;
}

int ct_instance_sorter_each(ct_instance_sorter *s,
                            int (*fn)(void *user, const ct_step_instance *in), void *user) {
  if (s->n) qsort(s->buf, s->n, sizeof *s->buf, instance_qsort_cmp);
  size_t first = 0; /* runs before it were merged into later ones */
  while (!s->file_failed && s->nruns - first > SORT_FANIN) {
    if (s->nruns == s->runs_cap) { /* room for the merged run */
      sort_run *nr = realloc(s->runs, 2 * s->runs_cap * sizeof *nr);
      if (!nr) return -1;
      s->runs = nr;
      s->runs_cap *= 2;
    }
    if (merge_runs(s, first, SORT_FANIN, 0, NULL, NULL) < 0) s->file_failed = 1;
    else first += SORT_FANIN;
  }
  return merge_runs(s, first, s->nruns - first, 1, fn, user); /* the last, with memory's */
}

void ct_instance_sorter_free(ct_instance_sorter *s) {
  if (!s) return;
  free(s->buf);
  free(s->runs);
  if (s->file) fclose(s->file);
  free(s);
}

/* ---- the spans in step order ---------------------------------------------------------- */

typedef struct span_page {
  size_t page;       /* which page (SIZE_MAX: none) */
  uint64_t used;     /* when last used */
  ct_step_span *v;
} span_page;

struct ct_step_spans {
  ct_step_span *mem; /* all of them while in memory (no file): n of mem_cap */
  size_t n, mem_cap;
  ct_step_span pending; /* the newest, its interval end to come (has_pending) */
  int has_pending;
  FILE *file;        /* NULL: in memory */
  size_t flushed;    /* spans in the file; [flushed, n) are in wbuf */
  ct_step_span *wbuf; /* SPANS_PAGE */
  uint64_t *page_begin; /* first begin of each page */
  size_t npages, pages_cap;
  span_page cache[SPANS_CACHE];
  span_page *hot;    /* the page asked for last */
  uint64_t clock;
  ct_step_span zero; /* returned when the file cannot be read back */
  int failed;        /* it could not be read back */
  int file_failed;   /* it could not be written: the spans stay in memory */
};

int ct_step_spans_new(ct_steps_file *f) {
  f->spans = calloc(1, sizeof *f->spans);
  return f->spans ? 0 : -1;
}

/* Frees what the file needs in memory (page index, cache, write buffer) and closes it. */
static void spans_close_file(struct ct_step_spans *s) {
  if (s->file) fclose(s->file);
  s->file = NULL;
  free(s->page_begin);
  s->page_begin = NULL;
  free(s->wbuf);
  s->wbuf = NULL;
  s->hot = NULL;
  for (size_t k = 0; k < SPANS_CACHE; k++) {
    free(s->cache[k].v);
    s->cache[k].v = NULL;
  }
}

/* Writes the full write buffer to the file as its next page. Returns 0, -1. */
static int spans_flush(struct ct_step_spans *s) {
  if (ct_spill_io(s->file, s->flushed * sizeof *s->wbuf, s->wbuf, SPANS_PAGE * sizeof *s->wbuf,
                  1) < 0)
    return -1;
  s->flushed += SPANS_PAGE;
  return 0;
}

/* Moves the spans in memory (a whole number of pages) to a new file. 0, or -1 (they
 * stay in memory). */
static int spans_to_file(struct ct_step_spans *s) {
  s->pages_cap = 64;
  s->page_begin = malloc(s->pages_cap * sizeof *s->page_begin);
  s->wbuf = malloc(SPANS_PAGE * sizeof *s->wbuf);
  int ok = s->page_begin && s->wbuf;
  for (size_t k = 0; k < SPANS_CACHE; k++) {
    s->cache[k].page = SIZE_MAX;
    s->cache[k].used = 0;
    s->cache[k].v = malloc(SPANS_PAGE * sizeof *s->cache[k].v);
    ok = ok && s->cache[k].v;
  }
  ok = ok && (s->file = tmpfile()) != NULL &&
       ct_spill_io(s->file, 0, s->mem, s->n * sizeof *s->mem, 1) == 0;
  if (!ok) {
    spans_close_file(s);
    s->file_failed = 1;
    return -1;
  }
  s->flushed = s->n;
  s->npages = 0;
  for (size_t i = 0; i < s->n; i += SPANS_PAGE) s->page_begin[s->npages++] = s->mem[i].begin_ns;
  free(s->mem);
  s->mem = NULL;
  s->mem_cap = 0;
  return 0;
}

/* The file could not be written: its spans and the write buffer's move back to memory,
 * where the later ones stay. Returns 0, -1 when out of memory or unreadable. */
static int spans_from_file(struct ct_step_spans *s) {
  size_t cap = s->n ? s->n : 1;
  ct_step_span *m = malloc(cap * sizeof *m);
  if (!m || ct_spill_io(s->file, 0, m, s->flushed * sizeof *m, 0) < 0) {
    free(m);
    return -1;
  }
  memcpy(m + s->flushed, s->wbuf, (s->n - s->flushed) * sizeof *m);
  spans_close_file(s);
  s->file_failed = 1;
  s->mem = m;
  s->mem_cap = cap;
  return 0;
}

/* Stores the span whose interval end is now known. Returns 0, -1 when out of memory. */
static int spans_store(struct ct_step_spans *s, const ct_step_span *sp) {
  if (s->file) {
    if (s->n % SPANS_PAGE == 0) {
      if (s->npages == s->pages_cap) {
        uint64_t *nb = realloc(s->page_begin, 2 * s->pages_cap * sizeof *nb);
        if (!nb) return -1;
        s->page_begin = nb;
        s->pages_cap *= 2;
      }
      s->page_begin[s->npages++] = sp->begin_ns;
    }
    s->wbuf[s->n++ - s->flushed] = *sp;
    if (s->n - s->flushed < SPANS_PAGE || spans_flush(s) == 0) return 0;
    return spans_from_file(s);
  }
  if (s->n == s->mem_cap) {
    if (s->n >= CT_STEPS_SPANS_MEM && s->n % SPANS_PAGE == 0 && !s->file_failed &&
        spans_to_file(s) == 0)
      return spans_store(s, sp);
    size_t ncap = s->mem_cap ? 2 * s->mem_cap : CT_STEPS_SPANS_MEM < 256 ? CT_STEPS_SPANS_MEM : 256;
    ct_step_span *nm = realloc(s->mem, ncap * sizeof *nm);
    if (!nm) return -1;
    s->mem = nm;
    s->mem_cap = ncap;
  }
  s->mem[s->n++] = *sp;
  return 0;
}

int ct_step_spans_append(ct_steps_file *f, const ct_step_span *sp) {
  struct ct_step_spans *s = f->spans;
  if (s->has_pending) {
    s->pending.interval_end_ns = sp->begin_ns;
    if (spans_store(s, &s->pending) < 0) return -1;
  }
  s->pending = *sp;
  s->has_pending = 1;
  f->nsteps++;
  return 0;
}

int ct_step_spans_finish(ct_steps_file *f) {
  struct ct_step_spans *s = f->spans;
  if (!s->has_pending) return 0;
  ct_step_span *p = &s->pending;
  p->interval_end_ns = p->gpu_last_ns > p->end_ns ? p->gpu_last_ns : p->end_ns;
  s->has_pending = 0;
  return spans_store(s, p);
}

const ct_step_span *ct_step_span_at(const ct_steps_file *f, size_t i) {
  struct ct_step_spans *s = f->spans;
  if (!s->file) return &s->mem[i];
  if (i >= s->flushed) return &s->wbuf[i - s->flushed];
  size_t page = i / SPANS_PAGE, lru = 0;
  if (s->hot && s->hot->page == page) {
    s->hot->used = ++s->clock;
    return &s->hot->v[i % SPANS_PAGE];
  }
  for (size_t k = 0; k < SPANS_CACHE; k++) {
    if (s->cache[k].page == page) {
      s->cache[k].used = ++s->clock;
      s->hot = &s->cache[k];
      return &s->cache[k].v[i % SPANS_PAGE];
    }
    if (s->cache[k].used < s->cache[lru].used) lru = k;
  }
  span_page *c = &s->cache[lru];
  if (ct_spill_io(s->file, page * SPANS_PAGE * sizeof *c->v, c->v, SPANS_PAGE * sizeof *c->v,
                  0) < 0) {
    s->failed = 1;
    c->page = SIZE_MAX;
    return &s->zero;
  }
  c->page = page;
  c->used = ++s->clock;
  s->hot = c;
  return &c->v[i % SPANS_PAGE];
}

size_t ct_steps_begun_search(const ct_steps_file *f, uint64_t t) {
  const struct ct_step_spans *s = f->spans;
  size_t lo = 0, hi = f->nsteps;
  if (s->file) { /* the pages beginning at or before t, then inside the last of them */
    size_t plo = 0, phi = s->npages;
    while (plo < phi) {
      size_t mid = plo + (phi - plo) / 2;
      if (s->page_begin[mid] <= t) plo = mid + 1;
      else phi = mid;
    }
    if (!plo) return 0;
    lo = (plo - 1) * SPANS_PAGE;
    hi = plo * SPANS_PAGE < f->nsteps ? plo * SPANS_PAGE : f->nsteps;
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ct_step_span_at(f, mid)->begin_ns <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

int ct_step_spans_failed(const ct_steps_file *f) { return f->spans && f->spans->failed; }

void ct_step_spans_free(struct ct_step_spans *s) {
  if (!s) return;
  free(s->mem);
  spans_close_file(s);
  free(s);
}
