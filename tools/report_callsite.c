/*
 * `cutrace report --by callsite` / `--by stack` (report_callsite.h).
 *
 * While a file is read, work is summed per STACK node id (memory: the unique stacks
 * and the (stack, kernel) pairs, not the trace): an outermost call counts at its own
 * stack; a GPU activity counts at the stack of its call, or, for a kernel launched
 * inside a library call (call depth > 0) whose own call has no stack, at the stack of
 * the outermost call around it (call_parent). Those outermost calls are remembered
 * in a bounded table; an activity that arrives before its outermost call waits in a
 * bounded list. When the file is done, each stack is symbolised with the modules the
 * file recorded (stacks.c) and its sums move into rows keyed by call site (or by the
 * whole stack), merged over files.
 */
#include "report_callsite_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "stats.h"
#include "thread_time.h"

#define PARENTS 4096     /* outermost library calls remembered (corr -> stack) */
#define PENDING_MAX 65536 /* activities waiting for their outermost call */
#define MAX_FRAMES 256

const char ct_callsites_no_stacks_hint[] =
    "this trace has no call stacks: record with `cutrace record --stacks -- PROGRAM` "
    "(or CUTRACE_STACKS=launches) to get call sites";


/* ---- reading one file ------------------------------------------------------------- */

typedef struct stack_sum {
  sums s;
  site_row *row; /* set when the file is done */
} stack_sum;

typedef struct pending_act {
  uint64_t parent, gpu_ns, kernel;
  char *name;
} pending_act;

typedef struct file_state {
  ct_callsites *c;
  ct_stacks *stacks;
  ct_map *by_stack;   /* stack id -> stack_sum */
  ct_map *kernels;    /* stack id + kernel name -> kernel_sum */
  struct { uint64_t corr, stack; } parents[PARENTS]; /* direct-mapped by corr */
  pending_act *pending;
  size_t npending, cappending;
  struct ct_process *proc_out;
  ct_thread_time *spins; /* targets polled in turn: their overlapping spins counted once */
  int oom;
} file_state;

static void add_kernel(file_state *f, uint64_t stack, const char *name, uint64_t gpu_ns) {
  char key[8 + 512];
  size_t n = strlen(name);
  if (n > 512) n = 512;
  memcpy(key, &stack, 8);
  memcpy(key + 8, name, n);
  kernel_sum *k = ct_map_get(f->kernels, key, 8 + n, NULL);
  if (!k) {
    f->oom = 1;
    return;
  }
  k->gpu_ns += gpu_ns;
  k->count++;
}

/* Credits GPU work to a stack (0: to the work without a stack). */
static void credit(file_state *f, uint64_t stack, uint64_t gpu_ns, int kernel, const char *name) {
  sums *s = &f->c->without;
  if (stack) {
    stack_sum *ss = ct_map_get(f->by_stack, &stack, sizeof stack, NULL);
    if (!ss) {
      f->oom = 1;
      return;
    }
    s = &ss->s;
    if (kernel && name) add_kernel(f, stack, name, gpu_ns);
  }
  s->gpu_ns += gpu_ns;
  s->activities++;
  s->kernels += kernel;
}

static void on_process(void *user, const ct_proc *p) {
  file_state *f = user;
  ct_stacks_set_exe(f->stacks, p->exe);
  if (f->proc_out) *f->proc_out = p->rec;
}

static void on_stack(void *user, const ct_proc *p, const struct ct_stack *node) {
  (void)p;
  file_state *f = user;
  if (ct_stacks_add_node(f->stacks, node) < 0) f->oom = 1;
}

static void on_module(void *user, const ct_proc *p, const struct ct_module *m, const char *path,
                      const char *build_id) {
  (void)p;
  file_state *f = user;
  if (ct_stacks_add_module(f->stacks, m, path, build_id) < 0) f->oom = 1;
}

static void on_pycode(void *user, const ct_proc *p, const struct ct_pycode *code, const char *file,
                      const char *qualname) {
  (void)p;
  file_state *f = user;
  if (ct_stacks_add_pycode(f->stacks, code, file, qualname) < 0) f->oom = 1;
}

static void on_span(void *user, const ct_span *s) {
  file_state *f = user;
  if (s->is_tracer || s->depth) return;
  f->c->calls++;
  uint64_t cpu_ns = ct_thread_time_add(f->spins, s, &f->oom);
  if (!s->stack) {
    f->c->without.calls++;
    f->c->without.cpu_ns += cpu_ns;
  } else {
    f->c->calls_with_stack++;
    stack_sum *ss = ct_map_get(f->by_stack, &s->stack, sizeof s->stack, NULL);
    if (!ss) {
      f->oom = 1;
      return;
    }
    ss->s.calls++;
    ss->s.cpu_ns += cpu_ns;
  }
  if (!(s->flags & CT_API_INNER_TIMED) || !s->corr) return;
  /* a library call whose kernels are timed one by one: they may name it as parent */
  unsigned k = (unsigned)(s->corr % PARENTS);
  f->parents[k].corr = s->corr;
  f->parents[k].stack = s->stack;
  for (size_t i = 0; i < f->npending;) {
    pending_act *p = &f->pending[i];
    if (p->parent != s->corr) {
      i++;
      continue;
    }
    credit(f, s->stack, p->gpu_ns, (int)p->kernel, p->name);
    free(p->name);
    *p = f->pending[--f->npending];
  }
}

static void on_activity(void *user, const ct_activity *a) {
  file_state *f = user;
  uint64_t gpu_ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
  int kernel = a->type != CT_GPU_MEMCPY && a->type != CT_GPU_MEMSET;
  const char *name = kernel ? a->name : NULL;
  if (!a->has_call || a->call_stack || !a->call_depth || !a->call_parent) {
    credit(f, a->has_call ? a->call_stack : 0, gpu_ns, kernel, name);
    return;
  }
  unsigned k = (unsigned)(a->call_parent % PARENTS);
  if (f->parents[k].corr == a->call_parent) {
    credit(f, f->parents[k].stack, gpu_ns, kernel, name);
    return;
  }
  if (f->npending == PENDING_MAX) { /* too many waiting: counted without a stack */
    credit(f, 0, gpu_ns, kernel, name);
    return;
  }
  if (f->npending == f->cappending) {
    size_t ncap = f->cappending ? f->cappending * 2 : 64;
    pending_act *np = realloc(f->pending, ncap * sizeof *np);
    if (!np) {
      f->oom = 1;
      return;
    }
    f->pending = np;
    f->cappending = ncap;
  }
  f->pending[f->npending++] =
      (pending_act){a->call_parent, gpu_ns, (uint64_t)kernel, name ? strdup(name) : NULL};
}

/* ---- rows --------------------------------------------------------------------------- */

/* Appends s to the key buffer (NUL-separated fields). */
static size_t key_add(char *key, size_t at, size_t cap, const char *s) {
  size_t n = strlen(s);
  if (at + n + 1 > cap) n = at + 1 < cap ? cap - at - 1 : 0;
  memcpy(key + at, s, n);
  key[at + n] = 0;
  return at + n + 1;
}

static size_t frame_key(char *key, size_t at, size_t cap, const ct_frame *fr) {
  char line[24];
  snprintf(line, sizeof line, "%u", fr->line);
  at = key_add(key, at, cap, fr->function);
  at = key_add(key, at, cap, fr->file);
  at = key_add(key, at, cap, line);
  return key_add(key, at, cap, fr->module);
}

static void free_frames(site_row *row) {
  for (unsigned i = 0; i < row->nframes; i++) {
    free(row->frames[i].function);
    free(row->frames[i].file);
    free(row->frames[i].module);
  }
  free(row->frames);
  row->frames = NULL;
  row->nframes = 0;
}

/* Makes the stack frames[0..n) the one the row shows. */
static void show_frames(site_row *row, const ct_frame **frames, unsigned n, unsigned site) {
  free_frames(row);
  row->has_frames = 1;
  row->frames = calloc(n ? n : 1, sizeof *row->frames);
  if (!row->frames) return;
  for (unsigned i = 0; i < n; i++) {
    row->frames[i].function = strdup(frames[i]->function);
    row->frames[i].file = strdup(frames[i]->file);
    row->frames[i].module = strdup(frames[i]->module);
    row->frames[i].line = frames[i]->line;
    row->frames[i].note = frames[i]->note;
  }
  row->nframes = n;
  row->site = site;
}

/* Moves the file's sums into the rows. */
static void finish_file(file_state *f) {
  ct_callsites *c = f->c;
  static char key[64 * 1024];
  const ct_frame *frames[MAX_FRAMES];
  for (size_t i = 0; i < ct_map_count(f->by_stack); i++) {
    const void *k;
    stack_sum *ss = ct_map_entry(f->by_stack, i, &k, NULL);
    uint64_t id;
    memcpy(&id, k, 8);
    unsigned site, n = ct_stacks_resolve(f->stacks, id, frames, MAX_FRAMES, &site);
    size_t len = 0;
    char label[48];
    ct_frame missing = {0, 0, label, "", 0, "", NULL, 0, "", NULL};
    if (!n) { /* its STACK records were lost (damage) or never written */
      snprintf(label, sizeof label, "(stack %llu not in the trace)", (unsigned long long)id);
      frames[0] = &missing;
      n = 1;
      site = 0;
    }
    if (c->by_stack) {
      for (unsigned j = 0; j < n; j++) len = frame_key(key, len, sizeof key, frames[j]);
    } else {
      len = frame_key(key, 0, sizeof key, frames[site < n ? site : 0]);
    }
    int created;
    site_row *row = ct_map_get(c->rows, key, len, &created);
    if (!row) {
      f->oom = 1;
      continue;
    }
    if (created) row->index = ct_map_count(c->rows) - 1;
    row->s.calls += ss->s.calls;
    row->s.cpu_ns += ss->s.cpu_ns;
    row->s.gpu_ns += ss->s.gpu_ns;
    row->s.kernels += ss->s.kernels;
    row->s.activities += ss->s.activities;
    if (!row->has_frames || ss->s.gpu_ns > row->shown_gpu_ns) {
      show_frames(row, frames, n, site < n ? site : 0);
      row->shown_gpu_ns = ss->s.gpu_ns;
    }
    ss->row = row;
  }
  for (size_t i = 0; i < ct_map_count(f->kernels); i++) {
    const void *k;
    size_t klen;
    kernel_sum *ks = ct_map_entry(f->kernels, i, &k, &klen);
    stack_sum *ss = ct_map_get(f->by_stack, k, 8, NULL);
    if (!ss || !ss->row) continue;
    memcpy(key, &ss->row->index, 8);
    memcpy(key + 8, (const char *)k + 8, klen - 8);
    kernel_sum *rk = ct_map_get(c->kernels, key, klen, NULL);
    if (!rk) {
      f->oom = 1;
      continue;
    }
    rk->gpu_ns += ks->gpu_ns;
    rk->count += ks->count;
  }
  for (size_t i = 0; i < f->npending; i++) { /* their outermost call never came */
    c->without.gpu_ns += f->pending[i].gpu_ns;
    c->without.activities++;
    c->without.kernels += f->pending[i].kernel;
    free(f->pending[i].name);
  }
}

ct_callsites *ct_callsites_new(int by_stack) {
  ct_callsites *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->by_stack = by_stack;
  c->rows = ct_map_new(sizeof(site_row));
  c->kernels = ct_map_new(sizeof(kernel_sum));
  if (!c->rows || !c->kernels) {
    ct_callsites_free(c);
    return NULL;
  }
  return c;
}

void ct_callsites_free(ct_callsites *c) {
  if (!c) return;
  for (size_t i = 0; c->rows && i < ct_map_count(c->rows); i++)
    free_frames(ct_map_entry(c->rows, i, NULL, NULL));
  ct_map_free(c->rows);
  ct_map_free(c->kernels);
  free(c);
}

int ct_callsites_add_file(ct_callsites *c, const char *path, ct_model_stats *st,
                          struct ct_process *proc_out) {
  file_state *f = calloc(1, sizeof *f);
  if (f) {
    f->c = c;
    f->proc_out = proc_out;
    f->stacks = ct_stacks_new();
    f->by_stack = ct_map_new(sizeof(stack_sum));
    f->kernels = ct_map_new(sizeof(kernel_sum));
    f->spins = ct_thread_time_new();
  }
  if (!f || !f->stacks || !f->by_stack || !f->kernels || !f->spins) {
    memset(st, 0, sizeof *st);
    snprintf(st->message, sizeof st->message, "out of memory");
    if (f) {
      ct_stacks_free(f->stacks);
      ct_map_free(f->by_stack);
      ct_map_free(f->kernels);
      ct_thread_time_free(f->spins);
      free(f);
    }
    return -1;
  }
  if (proc_out) memset(proc_out, 0, sizeof *proc_out);
  static const ct_model_ops ops = {.on_process = on_process, .on_span = on_span,
                                   .on_activity = on_activity, .on_stack = on_stack,
                                   .on_module = on_module, .on_pycode = on_pycode};
  int rc = ct_model_read(path, NULL, &ops, f, st);
  if (rc >= 0) finish_file(f);
  else
    for (size_t i = 0; i < f->npending; i++) free(f->pending[i].name);
  if (f->oom && rc == 0) {
    snprintf(st->message, sizeof st->message, "out of memory: some call sites are missing");
    rc = 1;
  }
  ct_stacks_free(f->stacks);
  ct_map_free(f->by_stack);
  ct_map_free(f->kernels);
  ct_thread_time_free(f->spins);
  free(f->pending);
  free(f);
  return rc;
}

uint64_t ct_callsites_calls(const ct_callsites *c) { return c->calls; }
uint64_t ct_callsites_calls_with_stack(const ct_callsites *c) { return c->calls_with_stack; }
