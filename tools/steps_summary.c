/*
 * Step statistics and outliers (steps.h: ct_steps_summarize). Medians are exact (found
 * by selection; an even count takes the mean of the two middle ones). A step's
 * reasons compare it with the median over the counted steps of each quantity: idle
 * time of each cause, each kernel's time (0 in steps without it), and, only when the
 * step made more of them than the median step (a new sync, a new copy), the CPU time
 * of a category of CUDA calls and the GPU time of copies and sets. A sync that waits
 * longer because the GPU had more to do is the symptom, not the cause: the kernel or
 * idle time that grew says why.
 *
 * The steps are read with a cursor (steps_rows.c), once per median: the values of one
 * quantity, 8 bytes a counted step, are what is kept in memory.
 */
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define MIN_SHARE_PCT 5

/* Moves the k-th smallest of v[0 .. n) to v[k], smaller ones before it, larger after
 * (quickselect, median-of-three pivots): linear time on average, no allocation. */
static void select_kth(uint64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    uint64_t a = v[lo], b = v[mid], c = v[hi];
    uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        uint64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0) break;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

/* The median of n values (reordered); an even count takes the mean of the two middle
 * ones. */
static uint64_t median_of(uint64_t *v, size_t n) {
  if (!n) return 0;
  select_kth(v, n, n / 2);
  if (n % 2) return v[n / 2];
  uint64_t upper = v[n / 2], lower = v[0];
  for (size_t i = 1; i < n / 2; i++)
    if (v[i] > lower) lower = v[i];
  return lower + (upper - lower) / 2;
}

/* The value of nearest rank r (1-based) of n values (reordered). */
static uint64_t rank_of(uint64_t *v, size_t n, size_t r) {
  select_kth(v, n, r - 1);
  return v[r - 1];
}

/* What a quantity of a step is, for medians over the counted steps. */
typedef uint64_t (*quantity_fn)(const ct_step *s, unsigned which);

static uint64_t q_time(const ct_step *s, unsigned w) { (void)w; return ct_step_time(s); }
static uint64_t q_work(const ct_step *s, unsigned w) { (void)w; return s->work_ns; }
static uint64_t q_cpu(const ct_step *s, unsigned w) { (void)w; return s->end_ns - s->begin_ns; }
static uint64_t q_busy(const ct_step *s, unsigned w) {
  (void)w;
  return (uint64_t)(ct_step_busy_pct(s) * 1000.0);
}
static uint64_t q_idle(const ct_step *s, unsigned c) { return s->idle_ns[c]; }
static uint64_t q_cat_ns(const ct_step *s, unsigned c) {
  uint64_t ns;
  ct_step_calls_of(s, c, &ns);
  return ns;
}
static uint64_t q_cat_calls(const ct_step *s, unsigned c) { return ct_step_calls_of(s, c, NULL); }
static uint64_t q_copy_ns(const ct_step *s, unsigned w) { (void)w; return s->copy_gpu_ns; }
static uint64_t q_copies(const ct_step *s, unsigned w) { (void)w; return s->copies + s->sets; }
static const ct_step_kernel *kernel_of(const ct_step *s, unsigned id) {
  for (unsigned i = 0; i < s->nkernels; i++)
    if (s->kernel[i].id == id) return &s->kernel[i];
  return NULL;
}
static uint64_t q_kernel_ns(const ct_step *s, unsigned id) {
  const ct_step_kernel *k = kernel_of(s, id);
  return k ? k->ns : 0;
}
static uint64_t q_kernel_count(const ct_step *s, unsigned id) {
  const ct_step_kernel *k = kernel_of(s, id);
  return k ? k->count : 0;
}

typedef struct ctx {
  const ct_steps_file *f;
  size_t first;      /* the first counted step */
  uint64_t *scratch; /* nsteps values */
  int failed;        /* the steps could not be read back */
  /* medians over the counted steps, computed once */
  uint64_t idle[CT_GAP_NCAUSES], cat_ns[CT_STEP_NCATS], cat_calls[CT_STEP_NCATS];
  uint64_t copy_ns, copies;
  uint64_t (*kernel)[2];  /* per kernel id: ns, count; computed on first use */
  unsigned char *kernel_known;
} ctx;

/* The median of q(., which) over the counted steps (0, c->failed set, when they could
 * not be read). */
static uint64_t median_q(ctx *c, quantity_fn q, unsigned which) {
  size_t n = 0;
  ct_steps_cursor cur;
  if (ct_steps_cursor_open(c->f, &cur) < 0) {
    c->failed = 1;
    return 0;
  }
  const ct_step *s;
  for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++)
    if (i >= c->first) c->scratch[n++] = q(s, which);
  if (cur.failed) c->failed = 1;
  ct_steps_cursor_close(&cur);
  return median_of(c->scratch, n);
}

/* Computes the medians every explanation compares with; called: the categories some
 * counted step called (the others' medians are 0). */
static void prepare(ctx *c, unsigned called) {
  for (unsigned k = 0; k < CT_GAP_NCAUSES; k++) c->idle[k] = median_q(c, q_idle, k);
  for (unsigned k = 0; k < CT_STEP_NCATS; k++) {
    c->cat_ns[k] = called >> k & 1 ? median_q(c, q_cat_ns, k) : 0;
    c->cat_calls[k] = called >> k & 1 ? median_q(c, q_cat_calls, k) : 0;
  }
  c->copy_ns = median_q(c, q_copy_ns, 0);
  c->copies = median_q(c, q_copies, 0);
}

/* The median time and count of kernel id (0, 0 when the tables are missing). */
static void kernel_median(ctx *c, unsigned id, uint64_t *ns, uint64_t *count) {
  *ns = *count = 0;
  if (!c->kernel || id >= c->f->nkernel_names) return;
  if (!c->kernel_known[id]) {
    c->kernel[id][0] = median_q(c, q_kernel_ns, id);
    c->kernel[id][1] = median_q(c, q_kernel_count, id);
    c->kernel_known[id] = 1;
  }
  *ns = c->kernel[id][0];
  *count = c->kernel[id][1];
}

/* Keeps r among the CT_STEP_REASONS largest excesses (ranked, largest first) when its
 * excess is at least min_excess. */
static void offer(ct_step_reason *out, unsigned *n, const ct_step_reason *r, uint64_t min_excess) {
  uint64_t excess = r->ns - r->median_ns;
  if (excess < min_excess) return;
  unsigned pos = *n;
  while (pos > 0 && out[pos - 1].ns - out[pos - 1].median_ns < excess) pos--;
  if (pos >= CT_STEP_REASONS) return;
  unsigned last = *n < CT_STEP_REASONS ? *n : CT_STEP_REASONS - 1;
  memmove(&out[pos + 1], &out[pos], (last - pos) * sizeof *out);
  out[pos] = *r;
  if (*n < CT_STEP_REASONS) (*n)++;
}

/* Ranks what made step s longer than the median step (median_ns): candidates whose
 * excess is under MIN_SHARE_PCT % of the step's own excess are noise, left out. */
static unsigned explain(ctx *c, const ct_step *s, uint64_t median_ns, ct_step_reason *out) {
  unsigned n = 0;
  uint64_t t = ct_step_time(s);
  uint64_t min_excess = t > median_ns ? (t - median_ns) * MIN_SHARE_PCT / 100 : 0;
  if (!min_excess) min_excess = 1;
  for (unsigned cause = 0; cause < CT_GAP_NCAUSES; cause++) {
    ct_step_reason r = {CT_REASON_IDLE, cause, s->idle_ns[cause], c->idle[cause], 0, 0};
    if (r.ns > r.median_ns) offer(out, &n, &r, min_excess);
  }
  for (unsigned k = 0; k < s->nkernels; k++) {
    ct_step_reason r = {CT_REASON_KERNEL, s->kernel[k].id, s->kernel[k].ns, 0,
                        s->kernel[k].count, 0};
    kernel_median(c, r.which, &r.median_ns, &r.median_count);
    if (r.ns > r.median_ns) offer(out, &n, &r, min_excess);
  }
  for (unsigned cat = 0; cat < CT_STEP_NCATS; cat++) {
    ct_step_reason r = {CT_REASON_CALLS, cat, 0, c->cat_ns[cat], 0, c->cat_calls[cat]};
    r.count = ct_step_calls_of(s, cat, &r.ns);
    if (r.count > r.median_count && r.ns > r.median_ns) offer(out, &n, &r, min_excess);
  }
  ct_step_reason r = {CT_REASON_COPIES, 0, s->copy_gpu_ns, c->copy_ns,
                      s->copies + s->sets, c->copies};
  if (r.count > r.median_count && r.ns > r.median_ns) offer(out, &n, &r, min_excess);
  return n;
}

static int slower_first(const void *a, const void *b) {
  uint64_t x = ((const ct_step_outlier *)a)->time_ns, y = ((const ct_step_outlier *)b)->time_ns;
  return x > y ? -1 : x < y;
}

/* A deep copy of s (its lists in lists, room for every category and kernel). */
static void copy_step(ct_step *out, const ct_step *s, ct_step_calls *calls,
                      ct_step_kernel *kernel) {
  *out = *s;
  memcpy(calls, s->calls, s->ncalls * sizeof *calls);
  memcpy(kernel, s->kernel, s->nkernels * sizeof *kernel);
  out->calls = calls;
  out->kernel = kernel;
}

/* The statistics of step time over the counted steps, the categories they called, and
 * a copy of step 0 (*first). Returns 0, -1 when the steps could not be read. */
static int first_pass(ctx *c, ct_steps_summary *s, unsigned *called, ct_step *first,
                      ct_step_calls *calls, ct_step_kernel *kernel) {
  ct_steps_cursor cur;
  if (ct_steps_cursor_open(c->f, &cur) < 0) return -1;
  uint64_t total = 0;
  const ct_step *st;
  for (size_t i = 0; (st = ct_steps_cursor_next(&cur)); i++) {
    if (i == 0) copy_step(first, st, calls, kernel);
    if (i < c->first) continue;
    uint64_t t = ct_step_time(st);
    total += t;
    if (i == c->first || t < s->min_ns) s->min_ns = t;
    if (t > s->max_ns) s->max_ns = t;
    for (unsigned k = 0; k < st->ncalls; k++) *called |= 1u << st->calls[k].category;
  }
  int failed = cur.failed;
  ct_steps_cursor_close(&cur);
  if (s->counted) s->mean_ns = total / s->counted;
  return failed ? -1 : 0;
}

/* The outliers (s->noutliers of them, counted already), explained. Returns 0, -1. */
static int find_outliers(ctx *c, const ct_steps_options *o, ct_steps_summary *s) {
  s->outliers = calloc(s->noutliers, sizeof *s->outliers);
  ct_steps_cursor cur;
  if (!s->outliers || ct_steps_cursor_open(c->f, &cur) < 0) return -1;
  size_t n = 0;
  const ct_step *st;
  for (size_t i = 0; n < s->noutliers && (st = ct_steps_cursor_next(&cur)); i++) {
    if (i < c->first ||
        !((double)ct_step_time(st) > o->outlier_factor * (double)s->median_ns))
      continue;
    s->outliers[n].step = i;
    s->outliers[n].time_ns = ct_step_time(st);
    s->outliers[n].nreasons = explain(c, st, s->median_ns, s->outliers[n].reason);
    n++;
  }
  int failed = cur.failed || n < s->noutliers;
  ct_steps_cursor_close(&cur);
  qsort(s->outliers, n, sizeof *s->outliers, slower_first);
  return failed || c->failed ? -1 : 0;
}

/* How many counted steps are slower than outlier_factor times the median. */
static int count_outliers(ctx *c, const ct_steps_options *o, ct_steps_summary *s) {
  ct_steps_cursor cur;
  if (ct_steps_cursor_open(c->f, &cur) < 0) return -1;
  const ct_step *st;
  for (size_t i = 0; (st = ct_steps_cursor_next(&cur)); i++)
    if (i >= c->first && (double)ct_step_time(st) > o->outlier_factor * (double)s->median_ns)
      s->noutliers++;
  int failed = cur.failed;
  ct_steps_cursor_close(&cur);
  return failed ? -1 : 0;
}

int ct_steps_summarize(const ct_steps_file *f, const ct_steps_options *o, ct_steps_summary *s) {
  memset(s, 0, sizeof *s);
  ctx c = {.f = f, .first = o->skip < f->nsteps ? (size_t)o->skip : f->nsteps,
           .scratch = malloc((f->nsteps ? f->nsteps : 1) * sizeof(uint64_t))};
  if (!c.scratch) return -1;
  s->counted = f->nsteps - c.first;
  unsigned called = 0;
  ct_step first;
  ct_step_calls first_calls[CT_STEP_NCATS];
  ct_step_kernel first_kernel[CT_STEP_KERNELS];
  memset(&first, 0, sizeof first);
  if (first_pass(&c, s, &called, &first, first_calls, first_kernel) < 0) {
    free(c.scratch);
    return -1;
  }
  if (s->counted) {
    s->median_ns = median_q(&c, q_time, 0); /* leaves the times in scratch */
    s->p90_ns = rank_of(c.scratch, s->counted, (s->counted * 9 + 9) / 10); /* ceil(0.9 n) */
    s->median_work_ns = median_q(&c, q_work, 0);
    s->median_cpu_ns = median_q(&c, q_cpu, 0);
    s->median_busy_pct = (double)median_q(&c, q_busy, 0) / 1000.0;
  }
  c.kernel = calloc(f->nkernel_names ? f->nkernel_names : 1, sizeof *c.kernel);
  c.kernel_known = calloc(f->nkernel_names ? f->nkernel_names : 1, 1);
  if (!c.kernel || !c.kernel_known) {
    free(c.kernel);
    free(c.kernel_known);
    free(c.scratch);
    return -1;
  }
  prepare(&c, called);
  if (f->nsteps) s->setup_time_ns = ct_step_time(&first);
  if (f->nsteps && s->counted) {
    s->setup_ns = (int64_t)s->setup_time_ns - (int64_t)s->median_ns;
    if (s->setup_ns > 0) s->nsetup = explain(&c, &first, s->median_ns, s->setup);
  }
  int rc = c.failed ? -1 : count_outliers(&c, o, s);
  if (rc == 0 && s->noutliers) rc = find_outliers(&c, o, s);
  free(c.scratch);
  free(c.kernel);
  free(c.kernel_known);
  if (rc < 0) ct_steps_summary_free(s);
  return rc;
}

void ct_steps_summary_free(ct_steps_summary *s) {
  free(s->outliers);
  memset(s, 0, sizeof *s);
}
