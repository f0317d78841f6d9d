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
 * The steps are read with a cursor (steps_rows.c), once per median when at most
 * CT_STEPS_SELECT_MEM steps are counted (their values of one quantity in memory, then a
 * selection). With more, memory stays bounded: a first pass counts the values in
 * buckets of 1/1024 relative width (exact below 2048), the next ones only those of the
 * bucket holding the rank, in CT_STEPS_SELECT_BUCKETS equal parts, until it holds at
 * most CT_STEPS_SELECT_MEM values; a last pass collects them for a selection. Two to
 * three passes per median for step times spread over a few orders of magnitude.
 */
#include <stdlib.h>
#include <string.h>

#include "steps.h"

#define MIN_SHARE_PCT 5

#ifndef CT_STEPS_SELECT_MEM /* (a test build sets both small) */
#define CT_STEPS_SELECT_MEM 65536 /* values selected from in memory (512 KiB) */
#endif
#ifndef CT_STEPS_SELECT_BUCKETS
#define CT_STEPS_SELECT_BUCKETS 65536 /* parts of a bucket refined in one pass */
#endif
#define EXACT_BELOW 2048u /* first pass: one bucket per value below this, */
#define MANTISSA_BITS 10  /* above it 1024 per power of two */
#define COARSE_BUCKETS (EXACT_BELOW + (64 - 11) * (1u << MANTISSA_BITS))

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
  size_t counted;
  uint64_t *scratch; /* min(counted, CT_STEPS_SELECT_MEM) values */
  uint64_t *buckets; /* the bucket counts of a refining pass (NULL until needed) */
  int failed;        /* the steps could not be read back */
  /* medians over the counted steps, computed once */
  uint64_t idle[CT_GAP_NCAUSES], cat_ns[CT_STEP_NCATS], cat_calls[CT_STEP_NCATS];
  uint64_t copy_ns, copies;
  uint64_t (*kernel)[2];  /* per kernel id: ns, count; computed on first use */
  unsigned char *kernel_known;
} ctx;

/* The first pass's bucket of v, and the values it holds, [*lo, *hi]. */
static size_t coarse_bucket(uint64_t v) {
  if (v < EXACT_BELOW) return (size_t)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v); /* 11 .. 63 */
  uint64_t mantissa = (v >> (e - MANTISSA_BITS)) & ((1u << MANTISSA_BITS) - 1);
  return EXACT_BELOW + (size_t)(e - 11) * (1u << MANTISSA_BITS) + (size_t)mantissa;
}

static void coarse_bounds(size_t b, uint64_t *lo, uint64_t *hi) {
  if (b < EXACT_BELOW) {
    *lo = *hi = b;
    return;
  }
  unsigned e = 11 + (unsigned)((b - EXACT_BELOW) >> MANTISSA_BITS);
  uint64_t mantissa = (b - EXACT_BELOW) & ((1u << MANTISSA_BITS) - 1);
  uint64_t unit = 1ull << (e - MANTISSA_BITS);
  *lo = ((1ull << MANTISSA_BITS) + mantissa) * unit;
  *hi = *lo + (unit - 1);
}

/* The values of q over the counted steps that fall inside [lo, hi]: kept in c->scratch
 * (collect: there are at most CT_STEPS_SELECT_MEM) or counted in c->buckets (the
 * first pass's when coarse, else hi - lo + 1 split in CT_STEPS_SELECT_BUCKETS parts of
 * width). *above gets the least value above hi (UINT64_MAX when none). Returns the
 * number of values kept, or -1 (c->failed) when the steps could not be read. */
static long long values_pass(ctx *c, quantity_fn q, unsigned which, uint64_t lo, uint64_t hi,
                             int collect, int coarse, uint64_t width, uint64_t *above) {
  ct_steps_cursor cur;
  if (ct_steps_cursor_open(c->f, &cur) < 0) {
    c->failed = 1;
    return -1;
  }
  size_t n = 0;
  *above = UINT64_MAX;
  const ct_step *s;
  for (size_t i = 0; (s = ct_steps_cursor_next(&cur)); i++) {
    if (i < c->first) continue;
    uint64_t v = q(s, which);
    if (v > hi && v < *above) *above = v;
    if (v < lo || v > hi) continue;
    if (collect) c->scratch[n++] = v;
    else c->buckets[coarse ? coarse_bucket(v) : (size_t)((v - lo) / width)]++;
  }
  int failed = cur.failed;
  ct_steps_cursor_close(&cur);
  if (failed) c->failed = 1;
  return failed ? -1 : (long long)n;
}

/* The values of rank r and r + 1 (0-based, in increasing order) of q over the counted
 * steps, more than CT_STEPS_SELECT_MEM of them, in bounded memory (see the top). *next
 * is left alone when r + 1 is not a rank. Returns 0, -1 (c->failed) when unreadable or
 * out of memory. */
static int select_bounded(ctx *c, quantity_fn q, unsigned which, size_t r, uint64_t *out,
                          uint64_t *next) {
  size_t nb = CT_STEPS_SELECT_BUCKETS > COARSE_BUCKETS ? CT_STEPS_SELECT_BUCKETS : COARSE_BUCKETS;
  if (!c->buckets && !(c->buckets = malloc(nb * sizeof *c->buckets))) {
    c->failed = 1;
    return -1;
  }
  uint64_t lo = 0, hi = UINT64_MAX, above, width = 0;
  size_t below = 0, inside = c->counted; /* values under lo; inside [lo, hi] */
  for (int coarse = 1; inside > CT_STEPS_SELECT_MEM && lo < hi; coarse = 0) {
    size_t parts = coarse ? COARSE_BUCKETS : CT_STEPS_SELECT_BUCKETS;
    if (!coarse) width = (hi - lo) / parts + 1;
    memset(c->buckets, 0, parts * sizeof *c->buckets);
    if (values_pass(c, q, which, lo, hi, 0, coarse, width, &above) < 0) return -1;
    size_t b = 0, cum = below;
    while (b + 1 < parts && cum + c->buckets[b] <= r) cum += c->buckets[b++];
    uint64_t blo, bhi;
    if (coarse) {
      coarse_bounds(b, &blo, &bhi);
    } else {
      blo = lo + b * width;
      bhi = hi - blo < width - 1 ? hi : blo + (width - 1);
    }
    lo = blo, hi = bhi, below = cum, inside = (size_t)c->buckets[b];
  }
  if (lo == hi) { /* every value inside is lo */
    *out = lo;
    if (r + 1 < below + inside) *next = lo;
    else if (r + 1 < c->counted && values_pass(c, q, which, lo, hi, 0, 0, 1, next) < 0) return -1;
    return 0;
  }
  long long n = values_pass(c, q, which, lo, hi, 1, 0, 1, &above);
  if (n < 0) return -1;
  select_kth(c->scratch, (size_t)n, r - below);
  *out = c->scratch[r - below];
  if (r + 1 - below < (size_t)n) { /* the least value after it */
    uint64_t m = UINT64_MAX;
    for (size_t i = r - below + 1; i < (size_t)n; i++)
      if (c->scratch[i] < m) m = c->scratch[i];
    *next = m;
  } else if (r + 1 < c->counted) {
    *next = above;
  }
  return 0;
}

/* The median of q(., which) over the counted steps (0, c->failed set, when they could
 * not be read). With at most CT_STEPS_SELECT_MEM counted, their values are left in
 * c->scratch. */
static uint64_t median_q(ctx *c, quantity_fn q, unsigned which) {
  size_t n = c->counted;
  if (!n) return 0;
  if (n > CT_STEPS_SELECT_MEM) {
    uint64_t lower = 0, upper = 0; /* ranks (n - 1) / 2 and n / 2 */
    if (select_bounded(c, q, which, (n - 1) / 2, &lower, &upper) < 0) return 0;
    return n % 2 ? lower : lower + (upper - lower) / 2;
  }
  uint64_t above;
  long long k = values_pass(c, q, which, 0, UINT64_MAX, 1, 0, 1, &above);
  return k < 0 ? 0 : median_of(c->scratch, (size_t)k);
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

int ct_step_is_outlier(const ct_steps_summary *sum, const ct_steps_options *o, size_t i,
                       const ct_step *s) {
  return i >= o->skip && (double)ct_step_time(s) > o->outlier_factor * (double)sum->median_ns;
}

/* The outliers (s->noutliers of them, counted already), explained. Returns 0, -1. */
static int find_outliers(ctx *c, const ct_steps_options *o, ct_steps_summary *s) {
  s->outliers = calloc(s->noutliers, sizeof *s->outliers);
  ct_steps_cursor cur;
  if (!s->outliers || ct_steps_cursor_open(c->f, &cur) < 0) return -1;
  size_t n = 0;
  const ct_step *st;
  for (size_t i = 0; n < s->noutliers && (st = ct_steps_cursor_next(&cur)); i++) {
    if (!ct_step_is_outlier(s, o, i, st)) continue;
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
    if (ct_step_is_outlier(s, o, i, st)) s->noutliers++;
  int failed = cur.failed;
  ct_steps_cursor_close(&cur);
  return failed ? -1 : 0;
}

int ct_steps_summarize(const ct_steps_file *f, const ct_steps_options *o, ct_steps_summary *s) {
  memset(s, 0, sizeof *s);
  ctx c = {.f = f, .first = o->skip < f->nsteps ? (size_t)o->skip : f->nsteps};
  c.counted = f->nsteps - c.first;
  size_t keep = c.counted < CT_STEPS_SELECT_MEM ? c.counted : CT_STEPS_SELECT_MEM;
  if (!(c.scratch = malloc((keep ? keep : 1) * sizeof(uint64_t)))) return -1;
  s->counted = c.counted;
  unsigned called = 0;
  ct_step first;
  ct_step_calls first_calls[CT_STEP_NCATS];
  ct_step_kernel first_kernel[CT_STEP_KERNELS];
  memset(&first, 0, sizeof first);
  if (first_pass(&c, s, &called, &first, first_calls, first_kernel) < 0) {
    free(c.scratch); /* (no buckets yet) */
    return -1;
  }
  if (s->counted) {
    s->median_ns = median_q(&c, q_time, 0); /* leaves the times in scratch, when few */
    size_t p90_rank = (s->counted * 9 + 9) / 10; /* ceil(0.9 n), 1-based */
    uint64_t unused;
    if (s->counted <= CT_STEPS_SELECT_MEM) s->p90_ns = rank_of(c.scratch, s->counted, p90_rank);
    else if (select_bounded(&c, q_time, 0, p90_rank - 1, &s->p90_ns, &unused) < 0) s->p90_ns = 0;
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
    free(c.buckets);
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
  free(c.buckets);
  free(c.kernel);
  free(c.kernel_known);
  if (rc < 0) ct_steps_summary_free(s);
  return rc;
}

void ct_steps_summary_free(ct_steps_summary *s) {
  free(s->outliers);
  memset(s, 0, sizeof *s);
}
