/*
 * The measured steps of a file (steps_internal.h: ct_step_rows_*; steps.h: the cursor).
 * The measuring pass (steps_measure.c) adds to the rows of the steps its events fall
 * in, nearly in step order: the newest CT_STEPS_ROWS_MEM rows asked for stay in memory,
 * older ones move, oldest first, to the end of an unnamed temporary file (the row, then
 * its calls and kernels: a step's bytes vary), so memory does not grow with the number
 * of steps. An event for a step already in the file (a gap handed over late) adds to a
 * patch row kept in memory instead; everything a step holds is a sum, a minimum or
 * maximum, or a list in first-seen order, so adding the patch to the file's row when
 * it is read back gives what adding the events there would have. When the file cannot
 * be created or written, the rows stay in memory (as tools/range_queue.c does).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"
#include "steps_internal.h"

#define READ_AHEAD (64 * 1024)

struct ct_step_rows {
  ct_step *mem;     /* rows [lo, hi) at mem[0 .. hi - lo) */
  size_t cap;
  size_t lo, hi;    /* rows [0, lo) are in the file, in order */
  FILE *file;
  int file_failed;  /* it could not be written: no more rows go there */
  ct_map *patches;  /* step index (size_t) -> ct_step: what was added once in the file */
};

typedef struct patch_ref {
  size_t step;
  const ct_step *row;
} patch_ref;

int ct_step_rows_new(ct_steps_file *f) {
  f->rows = calloc(1, sizeof *f->rows);
  if (f->rows) f->rows->patches = ct_map_new(sizeof(ct_step));
  if (f->rows && f->rows->patches) return 0;
  free(f->rows);
  f->rows = NULL;
  return -1;
}

static void row_free_lists(ct_step *s) {
  free(s->kernel);
  free(s->calls);
  free(s->devices);
  s->kernel = NULL;
  s->calls = NULL;
  s->devices = NULL;
}

/* Appends row s to the file: the struct (its list pointers cleared), its calls, its
 * kernels. Returns 0, -1 when the file failed. */
static int row_write(FILE *file, const ct_step *s) {
  ct_step fixed;
  memcpy(&fixed, s, sizeof fixed); /* its padding too, zeroed when the row was made */
  fixed.calls = NULL;
  fixed.kernel = NULL;
  fixed.devices = NULL;
  if (fwrite(&fixed, sizeof fixed, 1, file) != 1) return -1;
  ct_step_calls calls[CT_STEP_NCATS];
  memset(calls, 0, sizeof calls); /* no padding bytes of ours in the file */
  for (unsigned k = 0; k < s->ncalls && k < CT_STEP_NCATS; k++) {
    calls[k].category = s->calls[k].category;
    calls[k].count = s->calls[k].count;
    calls[k].ns = s->calls[k].ns;
  }
  if (s->ncalls && fwrite(calls, sizeof *calls, s->ncalls, file) != s->ncalls) return -1;
  if (s->nkernels && fwrite(s->kernel, sizeof *s->kernel, s->nkernels, file) != s->nkernels)
    return -1;
  if (s->ndevices && fwrite(s->devices, sizeof *s->devices, s->ndevices, file) != s->ndevices)
    return -1;
  return 0;
}

/* Moves the older half of the rows in memory to the file, flushed (a write that fails
 * is seen here, while the rows are still in memory). Returns 0, -1 when the file
 * failed (the rows stay in memory; bytes written past the file's last whole row are
 * never read). */
static int spill(struct ct_step_rows *r) {
  if (!r->file && !(r->file = tmpfile())) return -1;
  size_t n = (r->hi - r->lo) / 2;
  if (!n) n = 1;
  for (size_t k = 0; k < n; k++)
    if (row_write(r->file, &r->mem[k]) < 0) return -1;
  if (fflush(r->file) != 0) return -1;
  for (size_t k = 0; k < n; k++) row_free_lists(&r->mem[k]);
  memmove(r->mem, r->mem + n, (r->hi - r->lo - n) * sizeof *r->mem);
  r->lo += n;
  return 0;
}

/* Makes room in memory for one more row. Returns 0, -1 when out of memory. */
static int make_room(struct ct_step_rows *r) {
  size_t n = r->hi - r->lo;
  if (n < r->cap) return 0;
  if (n >= CT_STEPS_ROWS_MEM && !r->file_failed) {
    if (spill(r) == 0) return 0;
    r->file_failed = 1;
  }
  size_t ncap = r->cap ? 2 * r->cap : CT_STEPS_ROWS_MEM < 64 ? CT_STEPS_ROWS_MEM : 64;
  ct_step *nm = realloc(r->mem, ncap * sizeof *nm);
  if (!nm) return -1;
  r->mem = nm;
  r->cap = ncap;
  return 0;
}

ct_step *ct_step_rows_get(ct_steps_file *f, size_t i, unsigned *kernel_limit) {
  struct ct_step_rows *r = f->rows;
  if (i < r->lo) {
    *kernel_limit = UINT_MAX;
    return ct_map_get(r->patches, &i, sizeof i, NULL);
  }
  while (r->hi <= i) {
    if (make_room(r) < 0) return NULL;
    ct_step *s = &r->mem[r->hi - r->lo];
    const ct_step_span *sp = ct_step_span_at(f, r->hi);
    memset(s, 0, sizeof *s); /* the padding too: the row is written as bytes */
    s->begin_ns = sp->begin_ns;
    s->end_ns = sp->end_ns;
    s->interval_end_ns = sp->interval_end_ns;
    if (!f->all_threads) { /* ct_range_each's span; with all_threads, measured */
      s->gpu_first_ns = sp->gpu_first_ns;
      s->gpu_last_ns = sp->gpu_last_ns;
    }
    r->hi++;
  }
  *kernel_limit = CT_STEP_KERNELS;
  return &r->mem[i - r->lo];
}

int ct_step_rows_finish(ct_steps_file *f) {
  unsigned limit; /* (the file needs no flush: each spill flushed its rows) */
  if (f->rows->hi < f->nsteps && !ct_step_rows_get(f, f->nsteps - 1, &limit)) return -1;
  return 0;
}

void ct_step_rows_free(struct ct_step_rows *r) {
  if (!r) return;
  for (size_t k = 0; k < r->hi - r->lo; k++) row_free_lists(&r->mem[k]);
  free(r->mem);
  for (size_t k = 0; r->patches && k < ct_map_count(r->patches); k++) {
    const void *key;
    size_t len;
    row_free_lists(ct_map_entry(r->patches, k, &key, &len));
  }
  ct_map_free(r->patches);
  if (r->file) fclose(r->file);
  free(r);
}

/* ---- reading back ------------------------------------------------------------------ */

static int by_step(const void *a, const void *b) {
  const patch_ref *x = a, *y = b;
  return x->step < y->step ? -1 : x->step > y->step;
}

int ct_steps_cursor_open(const ct_steps_file *f, ct_steps_cursor *c) {
  memset(c, 0, sizeof *c);
  c->f = f;
  const struct ct_step_rows *r = f->rows;
  if (!r) return 0;
  if (r->lo && !(c->buf = malloc(READ_AHEAD))) return -1;
  size_t np = ct_map_count(r->patches);
  patch_ref *refs = np ? malloc(np * sizeof *refs) : NULL;
  if (np && !refs) {
    free(c->buf);
    return -1;
  }
  for (size_t k = 0; k < np; k++) {
    const void *key;
    size_t len;
    refs[k].row = ct_map_entry(r->patches, k, &key, &len);
    memcpy(&refs[k].step, key, sizeof refs[k].step);
  }
  if (np) qsort(refs, np, sizeof *refs, by_step); /* (refs is NULL without patches) */
  c->patch = (void *)refs;
  c->npatch = np;
  return 0;
}

/* Copies the next len bytes of the file to out. Returns 0, -1 when it cannot be read. */
static int file_read(ct_steps_cursor *c, void *out, size_t len) {
  char *o = out;
  while (len) {
    if (c->buf_pos == c->buf_len) {
      ssize_t k = pread(fileno(c->f->rows->file), c->buf, READ_AHEAD, (off_t)c->offset);
      if (k <= 0) return -1;
      c->offset += (uint64_t)k;
      c->buf_pos = 0;
      c->buf_len = (size_t)k;
    }
    size_t take = c->buf_len - c->buf_pos < len ? c->buf_len - c->buf_pos : len;
    memcpy(o, c->buf + c->buf_pos, take);
    c->buf_pos += take;
    o += take;
    len -= take;
  }
  return 0;
}

/* Adds patch p to row s (whose lists have room for every category, CT_STEP_KERNELS
 * kernels and CT_STEP_DEVICES devices), as if p's events had been added to s after
 * its own. */
static void add_patch(ct_step *s, const ct_step *p) {
  if (p->gpu_last_ns) {
    if (!s->gpu_last_ns || p->gpu_first_ns < s->gpu_first_ns) s->gpu_first_ns = p->gpu_first_ns;
    if (p->gpu_last_ns > s->gpu_last_ns) s->gpu_last_ns = p->gpu_last_ns;
  }
  s->work_ns += p->work_ns;
  s->device_busy_ns += p->device_busy_ns;
  for (unsigned k = 0; k < CT_GAP_NCAUSES; k++) s->idle_ns[k] += p->idle_ns[k];
  s->kernels += p->kernels;
  s->copies += p->copies;
  s->sets += p->sets;
  s->copy_gpu_ns += p->copy_gpu_ns;
  s->other_kernels_ns += p->other_kernels_ns;
  for (unsigned k = 0; k < p->ncalls; k++) {
    unsigned j = 0;
    while (j < s->ncalls && s->calls[j].category != p->calls[k].category) j++;
    if (j == s->ncalls) s->calls[s->ncalls++] = (ct_step_calls){p->calls[k].category, 0, 0};
    s->calls[j].count += p->calls[k].count;
    s->calls[j].ns += p->calls[k].ns;
  }
  for (unsigned k = 0; k < p->ndevices; k++) {
    unsigned j = 0;
    while (j < s->ndevices && s->devices[j].device != p->devices[k].device) j++;
    if (j == s->ndevices) {
      memset(&s->devices[j], 0, sizeof s->devices[j]);
      s->devices[s->ndevices++].device = p->devices[k].device;
    }
    s->devices[j].busy_ns += p->devices[k].busy_ns;
    for (unsigned c = 0; c < CT_GAP_NCAUSES; c++) s->devices[j].idle_ns[c] += p->devices[k].idle_ns[c];
  }
  for (unsigned k = 0; k < p->nkernels; k++) {
    unsigned j = 0;
    while (j < s->nkernels && s->kernel[j].id != p->kernel[k].id) j++;
    if (j == s->nkernels && s->nkernels == CT_STEP_KERNELS) {
      s->other_kernels_ns += p->kernel[k].ns;
      continue;
    }
    if (j == s->nkernels) s->kernel[s->nkernels++] = (ct_step_kernel){p->kernel[k].id, 0, 0};
    s->kernel[j].count += p->kernel[k].count;
    s->kernel[j].ns += p->kernel[k].ns;
  }
}

const ct_step *ct_steps_cursor_next(ct_steps_cursor *c) {
  const ct_steps_file *f = c->f;
  const struct ct_step_rows *r = f->rows;
  if (c->failed || c->next >= f->nsteps) return NULL;
  size_t i = c->next;
  ct_step *s = &c->row;
  if (!r) {
    c->failed = 1;
  } else if (i < r->lo) {
    c->failed = file_read(c, s, sizeof *s) < 0 || s->ncalls > CT_STEP_NCATS ||
                s->nkernels > CT_STEP_KERNELS || s->ndevices > CT_STEP_DEVICES ||
                file_read(c, c->calls, s->ncalls * sizeof *c->calls) < 0 ||
                file_read(c, c->kernel, s->nkernels * sizeof *c->kernel) < 0 ||
                file_read(c, c->devices, s->ndevices * sizeof *c->devices) < 0;
  } else {
    const ct_step *m = &r->mem[i - r->lo];
    *s = *m;
    if (m->ncalls) memcpy(c->calls, m->calls, m->ncalls * sizeof *c->calls);
    if (m->nkernels) memcpy(c->kernel, m->kernel, m->nkernels * sizeof *c->kernel);
    if (m->ndevices) memcpy(c->devices, m->devices, m->ndevices * sizeof *c->devices);
  }
  if (c->failed) return NULL;
  s->calls = c->calls;
  s->kernel = c->kernel;
  s->devices = c->devices;
  const patch_ref *refs = (const patch_ref *)c->patch;
  while (c->next_patch < c->npatch && refs[c->next_patch].step < i) c->next_patch++;
  if (c->next_patch < c->npatch && refs[c->next_patch].step == i)
    add_patch(s, refs[c->next_patch].row);
  if (f->has_device && f->device != f->row_device) { /* the step device's times */
    unsigned k = 0;
    while (k < s->ndevices && s->devices[k].device != f->device) k++;
    s->device_busy_ns = k < s->ndevices ? s->devices[k].busy_ns : 0;
    if (k < s->ndevices) memcpy(s->idle_ns, s->devices[k].idle_ns, sizeof s->idle_ns);
    else memset(s->idle_ns, 0, sizeof s->idle_ns);
  }
  c->next++;
  return s;
}

void ct_steps_cursor_close(ct_steps_cursor *c) {
  free(c->buf);
  free(c->patch);
  memset(c, 0, sizeof *c);
}
