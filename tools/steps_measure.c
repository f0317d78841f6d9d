/*
 * Measuring the steps (steps_internal.h: ct_steps_measure): one read of the trace
 * (model_tee.h) feeds both the gaps analysis and the step accounting below.
 *
 * - An activity belongs to the step whose CPU range holds the begin of its launching
 *   call on the stepping thread (the attribution of `report --by range`), or, with
 *   all_threads, to the step whose interval holds the begin of its call on any thread;
 *   it adds to the step's counts, its kernels by name and the union of its work.
 * - Every activity also adds to its device's busy union; busy blocks, once final, are
 *   split over the step intervals they overlap, as are the device's idle gaps (with
 *   their causes) from the gaps analysis. The step device is the one busiest inside
 *   the steps' intervals.
 * - An outermost CUDA call on the stepping thread beginning inside a step's range adds
 *   its time to the step, by category.
 * Unions fold their blocks once no later activity should reach them (the longest
 * activity seen, at least 1 ms, behind the latest end), so memory stays bounded; an
 * activity that reaches them after all (delivered late, or longer than any before) adds
 * only the time they do not cover (steps_union.c), so nothing is counted twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaps.h"
#include "model_tee.h"
#include "ring.h"
#include "stats.h"
#include "steps_internal.h"
#include "thread_time.h"

#define MAX_DEVICES CT_STEP_DEVICES
#define MIN_REACH_NS 1000000
#define WORK_KEEP_STEPS 1024 /* folded steps whose work union is kept, at most */
#define WORK_KEEP_BLOCKS (1u << 16) /* and their blocks, at most */

/* One device: its busy union and its busy time inside the steps' intervals; per step,
 * busy and idle inside the step's interval: the first device seen keeps them in the
 * steps' rows themselves (device_busy_ns, idle_ns), any other in the rows' devices. */
typedef struct dev_acc {
  int used;
  int in_steps;                       /* the first device: the rows hold its times */
  ct_busy_union u;
  uint64_t busy_total;                /* its busy time inside the steps' intervals */
} dev_acc;

/* Per step: the union of its own work (its folded blocks add to the step's work_ns),
 * for the steps from freed on (a ring): a step's union is kept CT_BUSY_KEEP_NS of trace
 * time after its interval ended (for the last WORK_KEEP_STEPS folded steps, holding
 * WORK_KEEP_BLOCKS blocks, at most), so
 * that work delivered late joins it (the time its folded blocks cover is not counted
 * again); later than that, a step's work is not added to its work_ns (its counts
 * are). */
typedef struct work_window {
  ct_busy_union *u;                   /* step freed + k at u[(head + k) & (cap - 1)] */
  size_t head, n, cap;                /* steps [freed, freed + n) have a slot */
} work_window;

typedef struct mstate {
  ct_steps_file *f;
  ct_map *kernel_ids;                 /* mangled name -> kernel_id */
  work_window work;
  size_t swept;                       /* the steps before it are behind the horizon, their
                                         unions folded */
  size_t freed;                       /* <= swept: the steps before it have no union left */
  size_t work_kept;                   /* the blocks of the unions of steps [freed, swept) */
  dev_acc dev[MAX_DEVICES];
  uint64_t wm, reach;                 /* latest activity end; longest activity (>= 1 ms) */
  size_t activity_hint, span_hint, split_hint; /* steps_begun's last answers */
  int devices_seen;                   /* one device has its times in the steps */
  ct_thread_time *spins;              /* targets polled in turn: overlapping spins once */
  int oom;
} mstate;

typedef struct kernel_id {
  uint32_t id_plus_1;
} kernel_id;

/* The number of steps beginning at or before t. *hint is the answer of a previous call:
 * times come nearly in order, so it or its successor is usually the answer again. */
static size_t steps_begun(const ct_steps_file *f, uint64_t t, size_t *hint) {
  size_t n = f->nsteps, h = *hint;
  for (size_t k = h; k <= h + 1 && k <= n; k++)
    if ((k == 0 || ct_step_span_at(f, k - 1)->begin_ns <= t) &&
        (k == n || ct_step_span_at(f, k)->begin_ns > t))
      return *hint = k;
  return *hint = ct_steps_begun_search(f, t);
}

/* The step whose CPU range holds t (-1 when none). */
static long step_at(const ct_steps_file *f, uint64_t t, size_t *hint) {
  size_t lo = steps_begun(f, t, hint);
  if (!lo || t > ct_step_span_at(f, lo - 1)->end_ns) return -1;
  return (long)lo - 1;
}

/* The step whose interval [begin, interval end) holds t (-1 when none). */
static long interval_at(const ct_steps_file *f, uint64_t t, size_t *hint) {
  size_t lo = steps_begun(f, t, hint);
  if (!lo || t >= ct_step_span_at(f, lo - 1)->interval_end_ns) return -1;
  return (long)lo - 1;
}

/* Step s's entry for device dev (not the one its row holds), created zero when new;
 * NULL when out of memory. */
static ct_step_device *step_device(ct_step *s, unsigned dev) {
  for (unsigned k = 0; k < s->ndevices; k++)
    if (s->devices[k].device == dev) return &s->devices[k];
  unsigned n = s->ndevices;
  if (n == 0 || !(n & (n - 1))) { /* capacity 1, 2, 4, 8, 16: one or two, mostly */
    ct_step_device *nd = realloc(s->devices, (n ? 2 * n : 1) * sizeof *nd);
    if (!nd) return NULL;
    s->devices = nd;
  }
  memset(&s->devices[n], 0, sizeof s->devices[n]);
  s->devices[n].device = dev;
  s->ndevices++;
  return &s->devices[n];
}

/* Adds the part of [start, end) inside each step's interval to the step's busy time
 * (is_idle 0) or idle time of cause on device dev. */
static void split_over_steps(mstate *m, unsigned dev, unsigned cause, uint64_t start,
                             uint64_t end, int is_idle) {
  ct_steps_file *f = m->f;
  size_t lo = steps_begun(f, start, &m->split_hint);
  for (size_t i = lo ? lo - 1 : 0; i < f->nsteps; i++) {
    const ct_step_span *sp = ct_step_span_at(f, i);
    if (sp->begin_ns >= end) break;
    uint64_t a = start > sp->begin_ns ? start : sp->begin_ns;
    uint64_t b = end < sp->interval_end_ns ? end : sp->interval_end_ns;
    if (b <= a) continue;
    dev_acc *d = &m->dev[dev];
    if (!is_idle) d->busy_total += b - a;
    unsigned limit;
    ct_step *s = ct_step_rows_get(f, i, &limit);
    uint64_t *busy = s ? &s->device_busy_ns : NULL, *idle = s ? s->idle_ns : NULL;
    if (s && !d->in_steps) {
      ct_step_device *sd = step_device(s, dev);
      busy = sd ? &sd->busy_ns : NULL;
      idle = sd ? sd->idle_ns : NULL;
    }
    if (!busy) m->oom = 1;
    else if (is_idle) idle[cause] += b - a;
    else *busy += b - a;
  }
}

/* The device's accumulators, allocated on first use; NULL when out of range or memory. */
static dev_acc *device(mstate *m, uint64_t d) {
  if (d >= MAX_DEVICES) return NULL;
  dev_acc *a = &m->dev[d];
  if (!a->used && !m->devices_seen) {
    a->in_steps = 1;
    m->devices_seen = 1;
    m->f->row_device = d;
  }
  a->used = 1;
  return a;
}

typedef struct fold_ctx {
  mstate *m;
  unsigned dev;
  size_t step;
} fold_ctx;

static void fold_device_block(void *user, uint64_t start, uint64_t end) {
  fold_ctx *c = user;
  split_over_steps(c->m, c->dev, 0, start, end, 0);
}

static void fold_work_block(void *user, uint64_t start, uint64_t end) {
  fold_ctx *c = user;
  unsigned limit;
  ct_step *s = ct_step_rows_get(c->m->f, c->step, &limit);
  if (s) s->work_ns += end - start;
  else c->m->oom = 1;
}

/* The step's kernel entry for name (a new one while fewer than limit), or NULL. */
static ct_step_kernel *step_kernel(mstate *m, ct_step *s, unsigned limit, const char *name) {
  ct_steps_file *f = m->f;
  if (!name) name = "(unknown kernel)";
  int created = 0;
  kernel_id *k = ct_map_get_name(m->kernel_ids, name, &created);
  if (!k) {
    m->oom = 1;
    return NULL;
  }
  if (created) {
    char **nn = realloc(f->kernel_names, (f->nkernel_names + 1) * sizeof *nn);
    char *copy = strdup(name);
    if (nn) f->kernel_names = nn;
    if (!nn || !copy) {
      free(copy);
      m->oom = 1;
      return NULL;
    }
    f->kernel_names[f->nkernel_names++] = copy;
    k->id_plus_1 = (uint32_t)f->nkernel_names;
  }
  for (unsigned i = 0; i < s->nkernels; i++)
    if (s->kernel[i].id == k->id_plus_1 - 1) return &s->kernel[i];
  if (s->nkernels >= limit) return NULL;
  ct_step_kernel *nk = s->kernel;
  unsigned n = s->nkernels;
  if (n == 0 || (n >= 4 && !(n & (n - 1)))) { /* capacity 4, 8, 16 (a patch row more) */
    nk = realloc(s->kernel, (n ? 2 * n : 4) * sizeof *nk);
    if (!nk) {
      m->oom = 1;
      return NULL;
    }
    s->kernel = nk;
  }
  nk[s->nkernels] = (ct_step_kernel){k->id_plus_1 - 1, 0, 0};
  return &nk[s->nkernels++];
}

/* Step i's work union, in the window from freed on (grown to reach it). NULL when out of
 * memory, or (*gone set) when step i's union was freed already. */
static ct_busy_union *work_union(mstate *m, size_t i, int *gone) {
  work_window *w = &m->work;
  *gone = i < m->freed;
  if (*gone) return NULL;
  size_t k = i - m->freed;
  if (k >= w->cap) {
    size_t ncap = w->cap ? w->cap : 16;
    while (ncap <= k) ncap *= 2;
    ct_busy_union *nu = ct_ring_copy(w->u, sizeof *nu, w->cap, w->head, w->n, ncap);
    if (!nu) return NULL;
    free(w->u);
    w->u = nu;
    w->cap = ncap;
    w->head = 0;
  }
  if (k >= w->n) w->n = k + 1;
  return &w->u[(w->head + k) & (w->cap - 1)];
}

/* Folds the work unions of the steps whose interval ended before horizon and whose
 * blocks all did; frees those of the steps whose interval ended CT_BUSY_KEEP_NS before,
 * and the oldest past WORK_KEEP_STEPS. */
static void sweep_work(mstate *m, uint64_t horizon) {
  ct_steps_file *f = m->f;
  work_window *w = &m->work;
  while (m->swept < f->nsteps && ct_step_span_at(f, m->swept)->interval_end_ns < horizon) {
    size_t k = m->swept - m->freed;
    if (k < w->n) {
      ct_busy_union *u = &w->u[(w->head + k) & (w->cap - 1)];
      fold_ctx c = {m, 0, m->swept};
      ct_busy_fold(u, horizon, fold_work_block, &c);
      if (u->head < u->n) break;
      m->work_kept += u->n;
    }
    m->swept++;
  }
  while (m->freed < m->swept &&
         (m->swept - m->freed > WORK_KEEP_STEPS || m->work_kept > WORK_KEEP_BLOCKS ||
          ct_step_span_at(f, m->freed)->interval_end_ns + CT_BUSY_KEEP_NS < horizon)) {
    if (w->n) {
      ct_busy_union *u = &w->u[w->head];
      size_t n = u->n;
      m->work_kept -= n < m->work_kept ? n : m->work_kept;
      /* work that came after the step was swept and still reaches past the horizon
       * (a kernel queued past its step's end, its step's last) is final now */
      fold_ctx c = {m, 0, m->freed};
      ct_busy_fold(u, UINT64_MAX, fold_work_block, &c);
      ct_busy_free(u);
      w->head = (w->head + 1) & (w->cap - 1);
      w->n--;
    }
    m->freed++;
  }
}

static void on_activity(void *user, const ct_activity *a) {
  mstate *m = user;
  if (a->end_ns < a->start_ns) return;
  uint64_t dur = a->end_ns - a->start_ns;
  if (dur > m->reach) m->reach = dur;
  if (a->end_ns > m->wm) m->wm = a->end_ns;
  uint64_t horizon = m->wm > m->reach ? m->wm - m->reach : 0;
  sweep_work(m, horizon);
  dev_acc *d = device(m, a->device);
  if (d) {
    fold_ctx c = {m, (unsigned)a->device, 0};
    if (ct_busy_add(&d->u, a->start_ns, a->end_ns, fold_device_block, &c) < 0) m->oom = 1;
    ct_busy_fold(&d->u, horizon, fold_device_block, &c);
  }
  if (!a->has_call) return;
  long i = m->f->all_threads ? interval_at(m->f, a->call_begin_ns, &m->activity_hint)
           : a->tid == m->f->tid ? step_at(m->f, a->call_begin_ns, &m->activity_hint)
                                 : -1;
  if (i < 0) return;
  int gone;
  ct_busy_union *u = work_union(m, (size_t)i, &gone);
  fold_ctx c = {m, 0, (size_t)i};
  size_t blocks = u ? u->n : 0;
  if (!u && !gone) m->oom = 1;
  else if (u && ct_busy_add(u, a->start_ns, a->end_ns, fold_work_block, &c) < 0) m->oom = 1;
  if (u) ct_busy_fold(u, horizon, fold_work_block, &c);
  if (u && (size_t)i < m->swept) /* a folded step's union, counted in work_kept */
    m->work_kept = m->work_kept + u->n > blocks ? m->work_kept + u->n - blocks : 0;
  unsigned limit;
  ct_step *s = ct_step_rows_get(m->f, (size_t)i, &limit); /* after the fold: it asks too */
  if (!s) {
    m->oom = 1;
    return;
  }
  if (m->f->all_threads) { /* the span of every thread's work (else ct_range_each's) */
    if (!s->gpu_last_ns || a->start_ns < s->gpu_first_ns) s->gpu_first_ns = a->start_ns;
    if (a->end_ns > s->gpu_last_ns) s->gpu_last_ns = a->end_ns;
  }
  if (a->type == CT_GPU_MEMCPY || a->type == CT_GPU_MEMSET) {
    if (a->type == CT_GPU_MEMCPY) s->copies++;
    else s->sets++;
    s->copy_gpu_ns += dur;
    return;
  }
  s->kernels++;
  ct_step_kernel *k = step_kernel(m, s, limit, a->name);
  if (k) {
    k->count++;
    k->ns += dur;
  } else {
    s->other_kernels_ns += dur;
  }
}

static void on_span(void *user, const ct_span *sp) {
  mstate *m = user;
  if (sp->is_tracer || sp->depth != 0 || sp->tid != m->f->tid || sp->end_ns < sp->begin_ns)
    return;
  long i = step_at(m->f, sp->begin_ns, &m->span_hint);
  if (i < 0) return;
  unsigned limit;
  ct_step *s = ct_step_rows_get(m->f, (size_t)i, &limit);
  if (!s) {
    m->oom = 1;
    return;
  }
  unsigned cat = (unsigned)sp->category < CT_STEP_NCATS ? (unsigned)sp->category : CT_CAT_OTHER;
  unsigned k = 0;
  while (k < s->ncalls && s->calls[k].category != cat) k++;
  if (k == s->ncalls) {
    unsigned n = s->ncalls;
    if (n == 0 || (n >= 2 && !(n & (n - 1)))) { /* capacity 2, 4, 8, 16: a step calls few */
      ct_step_calls *nc = realloc(s->calls, (n ? 2 * n : 2) * sizeof *nc);
      if (!nc) {
        m->oom = 1;
        return;
      }
      s->calls = nc;
    }
    s->calls[s->ncalls++] = (ct_step_calls){cat, 0, 0};
  }
  s->calls[k].count++;
  s->calls[k].ns += ct_thread_time_add(m->spins, sp, &m->oom);
}

static void on_gap(void *user, const ct_gap_info *g) {
  mstate *m = user;
  if (g->stream != UINT64_MAX) return; /* the device's gaps only */
  dev_acc *d = device(m, g->device);
  if (!d) return;
  unsigned cause = CT_GAP_OTHER;
  for (unsigned c = 0; c < CT_GAP_NCAUSES; c++)
    if (!strcmp(g->cause, ct_gap_cause_name((enum ct_gap_cause)c))) cause = c;
  split_over_steps(m, (unsigned)g->device, cause, g->start_ns, g->end_ns, 1);
}

/* Folds what is left; the busiest device is the step device (the cursor takes its times
 * from the rows' devices when it is not the first seen); frees the rest. */
static void finish(mstate *m) {
  ct_steps_file *f = m->f;
  uint64_t best = 0;
  int best_dev = -1;
  for (unsigned d = 0; d < MAX_DEVICES; d++) {
    if (!m->dev[d].used) continue;
    fold_ctx c = {m, d, 0};
    ct_busy_fold(&m->dev[d].u, UINT64_MAX, fold_device_block, &c);
    if (best_dev < 0 || m->dev[d].busy_total > best) best = m->dev[d].busy_total, best_dev = (int)d;
  }
  work_window *w = &m->work;
  for (size_t k = 0; k < w->n; k++) {
    fold_ctx c = {m, 0, m->freed + k};
    ct_busy_union *u = &w->u[(w->head + k) & (w->cap - 1)];
    ct_busy_fold(u, UINT64_MAX, fold_work_block, &c);
    ct_busy_free(u);
  }
  w->n = 0;
  f->has_device = best_dev >= 0;
  f->device = best_dev >= 0 ? (uint64_t)best_dev : 0;
  for (unsigned d = 0; d < MAX_DEVICES; d++) ct_busy_free(&m->dev[d].u);
  if (ct_step_rows_finish(f) < 0) m->oom = 1;
}

int ct_steps_measure(const char *path, ct_steps_file *f) {
  mstate m = {.f = f, .reach = MIN_REACH_NS};
  ct_gaps_options o;
  ct_gaps_default_options(&o);
  o.top = 0;
  ct_gaps *g = ct_gaps_new(&o);
  m.kernel_ids = ct_map_new(sizeof(kernel_id));
  m.spins = ct_thread_time_new();
  const ct_model_ops *gaps_ops = NULL;
  ct_gaps_file *gf = NULL;
  if (g) ct_gaps_set_callback(g, on_gap, &m);
  if (g && m.kernel_ids && m.spins && ct_step_rows_new(f) == 0)
    gf = ct_gaps_file_begin(g, path, &gaps_ops);
  int rc = -1;
  if (gf) {
    static const ct_model_ops steps_ops = {.on_span = on_span, .on_activity = on_activity};
    ct_model_tee tee = {0};
    ct_model_tee_add(&tee, gaps_ops, gf);
    ct_model_tee_add(&tee, &steps_ops, &m);
    rc = ct_model_tee_read(&tee, path, NULL, &f->st);
    rc = ct_gaps_file_end(gf, rc, &f->st); /* hands over the last gaps */
    f->first_ns = f->st.first_ns;
    if (f->nsteps && (!f->first_ns || ct_step_span_at(f, 0)->begin_ns < f->first_ns))
      f->first_ns = ct_step_span_at(f, 0)->begin_ns; /* a range may open before the first call */
    finish(&m);
  } else {
    snprintf(f->st.message, sizeof f->st.message, "out of memory");
  }
  if (ct_step_spans_failed(f) && rc >= 0) {
    snprintf(f->st.message, sizeof f->st.message,
             "the steps' temporary file could not be read back: some steps are incomplete");
    rc = 1;
  } else if (m.oom && rc == 0) {
    snprintf(f->st.message, sizeof f->st.message, "out of memory: some steps are incomplete");
    rc = 1;
  }
  ct_gaps_free(g);
  ct_map_free(m.kernel_ids);
  free(m.work.u);
  ct_thread_time_free(m.spins);
  return rc;
}
