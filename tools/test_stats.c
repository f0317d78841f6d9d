/*
 * The duration statistics' histogram (stats.c), which holds only the window of buckets
 * its samples reached, against a reference histogram of all CT_HIST_BUCKETS buckets:
 * rows whose samples arrive rising, falling, alternating between far-apart octaves,
 * all equal, and random over 1 ns .. 2^62 ns, added one at a time and merged
 * (row into empty row, single samples, windows that overlap or not). Every quantile
 * from 0 to 1 in steps of 1/64, the count, total, min and max must equal the
 * reference's.
 * usage: test_stats
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "stats.h"

#include "test_check.h"

/* ---- the reference: every bucket, the documented layout -------------------------- */

typedef struct ref_stats {
  uint64_t count, total, min, max;
  uint32_t hist[CT_HIST_BUCKETS];
} ref_stats;

static unsigned ref_index(uint64_t v) {
  if (v < 32) return (unsigned)v;
  unsigned e = 63u - (unsigned)__builtin_clzll(v);
  return ((e - 4) << 5) + ((unsigned)(v >> (e - 5)) & 31);
}

static void ref_add(ref_stats *r, uint64_t v) {
  if (!r->count || v < r->min) r->min = v;
  if (!r->count || v > r->max) r->max = v;
  r->count++;
  r->total += v;
  r->hist[ref_index(v)]++;
}

static void ref_merge(ref_stats *d, const ref_stats *s) {
  if (!s->count) return;
  if (!d->count || s->min < d->min) d->min = s->min;
  if (!d->count || s->max > d->max) d->max = s->max;
  d->count += s->count;
  d->total += s->total;
  for (unsigned i = 0; i < CT_HIST_BUCKETS; i++) d->hist[i] += s->hist[i];
}

static uint64_t ref_quantile(const ref_stats *r, double q) {
  if (!r->count) return 0;
  if (r->min == r->max) return r->min;
  double target = (double)(r->count - 1) * q, v = (double)r->max;
  uint64_t below = 0;
  for (unsigned i = 0; i < CT_HIST_BUCKETS; i++) {
    if (!r->hist[i]) continue;
    if (below + r->hist[i] > target) {
      if (i < 64) { /* one value per bucket: below 32, and 32 .. 63 */
        v = i;
      } else {
        unsigned e = (i >> 5) + 4;
        double unit = (double)(1ull << (e - 5)), low = (32 + (i & 31)) * unit;
        v = low + unit * ((target - (double)below + 0.5) / r->hist[i]);
      }
      break;
    }
    below += r->hist[i];
  }
  if (v < (double)r->min) v = (double)r->min;
  if (v > (double)r->max) v = (double)r->max;
  return (uint64_t)(v + 0.5);
}

/* ---- the comparison ------------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void compare(const ct_dur_stats *s, const ref_stats *r, const char *what) {
  CHECK(s->count == r->count && s->total == r->total, "%s: count/total", what);
  if (r->count) CHECK(s->min == r->min && s->max == r->max, "%s: min/max", what);
  for (int k = 0; k <= 64; k++) {
    uint64_t got = ct_dur_quantile(s, k / 64.0), want = ref_quantile(r, k / 64.0);
    CHECK(got == want, "%s: quantile %d/64: %llu, reference %llu", what, k,
          (unsigned long long)got, (unsigned long long)want);
  }
}

/* The n-th sample of pattern p. */
static uint64_t sample(int p, int n) {
  switch (p) {
  case 0: return 5 + (uint64_t)n * 997;                     /* rising */
  case 1: return (uint64_t)1 << 40 >> (n % 41);             /* falling by octaves */
  case 2: return n % 2 ? 3 : (uint64_t)1 << 50 | (uint64_t)n; /* far apart */
  case 3: return 123456;                                    /* all equal */
  default: return next_random() >> (next_random() % 63);    /* random over 1 .. 2^62 */
  }
}

/* ring.h: a ring's entries copied oldest first whatever its head, the rest zeroed. */
static void test_ring_copy(void) {
  for (size_t head = 0; head < 8; head++)
    for (size_t n = 0; n <= 8; n++) {
      int a[8];
      for (size_t i = 0; i < 8; i++) a[i] = 100 + (int)((i + 8 - head) % 8); /* 100 = oldest */
      int *b = ct_ring_copy(a, sizeof *a, 8, head, n, 16);
      CHECK(b != NULL, "ring copy: allocated");
      if (!b) continue;
      for (size_t i = 0; i < 16; i++)
        CHECK(b[i] == (i < n ? 100 + (int)i : 0), "ring copy head %zu n %zu: [%zu] = %d", head, n,
              i, b[i]);
      free(b);
    }
}

int main(void) {
  static const int sizes[] = {0, 1, 2, 3, 40, 1000};
  test_ring_copy();
  for (int p = 0; p < 5; p++)
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 6; b++) {
        ct_dur_stats s = {0}, t = {0};
        ref_stats *r = calloc(1, sizeof *r), *u = calloc(1, sizeof *u);
        if (!r || !u) return 1;
        for (int n = 0; n < sizes[a]; n++) {
          uint64_t v = sample(p, n);
          ct_dur_add(&s, v);
          ref_add(r, v);
        }
        char what[64];
        snprintf(what, sizeof what, "pattern %d, %d samples", p, sizes[a]);
        compare(&s, r, what);
        /* a second row of another pattern, merged in */
        for (int n = 0; n < sizes[b]; n++) {
          uint64_t v = sample((p + 1 + b) % 5, n + 7);
          ct_dur_add(&t, v);
          ref_add(u, v);
        }
        ct_dur_merge(&s, &t);
        ref_merge(r, u);
        snprintf(what, sizeof what, "pattern %d, %d + %d samples merged", p, sizes[a],
                 sizes[b]);
        compare(&s, r, what);
        ct_dur_free(&s);
        ct_dur_free(&t);
        free(r);
        free(u);
      }
  if (!failures) printf("ok\n");
  return failures != 0;
}
