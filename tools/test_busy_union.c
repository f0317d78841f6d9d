/*
 * The busy union of cutrace steps (steps_union.c) against a bitmap: intervals given
 * nearly in end order, some of them late (behind blocks already folded) or longer than
 * any before, folded as steps_measure.c does (behind the longest interval seen): the
 * time handed to the fold function adds up to the union of the intervals, every time
 * unit once, and no block handed over overlaps another. Planted cases first: a late
 * interval over one folded block, across several, between two, before all, and one
 * behind the time kept.
 * usage: test_busy_union
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "steps_internal.h"

#include "test_check.h"

#define SPAN 20000u /* time units of the random runs */

typedef struct folded {
  uint64_t total;
  unsigned char *seen; /* SPAN units: handed over already */
  int overlaps;
} folded;

static void on_fold(void *user, uint64_t start, uint64_t end) {
  folded *f = user;
  f->total += end - start;
  if (!f->seen) return;
  for (uint64_t t = start; t < end && t < SPAN; t++) {
    if (f->seen[t]) f->overlaps++;
    f->seen[t] = 1;
  }
}

/* Adds [start, end) and folds what lies behind horizon. */
static void add(ct_busy_union *u, folded *f, uint64_t start, uint64_t end, uint64_t horizon) {
  CHECK(ct_busy_add(u, start, end, on_fold, f) == 0, "out of memory");
  ct_busy_fold(u, horizon, on_fold, f);
}

static void planted(void) {
  ct_busy_union u = {0};
  folded f = {0};
  add(&u, &f, 10, 20, 0);
  add(&u, &f, 30, 40, 0);
  add(&u, &f, 50, 60, 100); /* all three folded */
  CHECK(f.total == 30, "three blocks folded: %llu", (unsigned long long)f.total);
  add(&u, &f, 15, 35, 100); /* over two folded blocks: 20..30 is new */
  CHECK(f.total == 40, "late over two blocks adds 10: %llu", (unsigned long long)f.total);
  add(&u, &f, 42, 45, 100); /* between two folded blocks */
  CHECK(f.total == 43, "late between two blocks adds 3: %llu", (unsigned long long)f.total);
  add(&u, &f, 0, 70, 100); /* before, between and after all of them */
  CHECK(f.total == 70, "late over everything adds what was idle: %llu",
        (unsigned long long)f.total);
  add(&u, &f, 5, 65, 100);
  CHECK(f.total == 70, "late inside the union adds nothing: %llu", (unsigned long long)f.total);
  add(&u, &f, 90, 120, 100); /* live, straddling the horizon */
  add(&u, &f, 80, 110, 100); /* joins the live block */
  ct_busy_fold(&u, UINT64_MAX, on_fold, &f);
  CHECK(f.total == 110, "live blocks merged then folded: %llu", (unsigned long long)f.total);
  ct_busy_free(&u);

  /* Behind the time kept: what lies before the last block forgotten is not counted. */
  memset(&f, 0, sizeof f);
  uint64_t s = CT_BUSY_KEEP_NS / 8;
  for (uint64_t i = 0; i < 200; i++) add(&u, &f, i * s, i * s + s / 2, i * s + s);
  uint64_t before = f.total;
  CHECK(u.forgotten > 0, "blocks 25 s behind the horizon are forgotten");
  add(&u, &f, 0, s / 2 + s, 200 * s);
  CHECK(f.total == before, "a late interval before the blocks kept adds nothing: %llu vs %llu",
        (unsigned long long)f.total, (unsigned long long)before);
  ct_busy_free(&u);
}

/* Random intervals, mostly in end order; one in 20 comes up to 3000 units late. */
static void random_runs(void) {
  srand(7);
  unsigned char *want = calloc(SPAN, 1);
  folded f = {0, calloc(SPAN, 1), 0};
  if (!want || !f.seen) {
    CHECK(0, "out of memory");
    return;
  }
  for (int run = 0; run < 200; run++) {
    memset(want, 0, SPAN);
    memset(f.seen, 0, SPAN);
    f.total = 0;
    f.overlaps = 0;
    ct_busy_union u = {0};
    uint64_t wm = 0, reach = 1;
    for (uint64_t t = 100; t < SPAN - 200;) {
      t += (uint64_t)(rand() % 40);
      uint64_t end = t, dur = 1 + (uint64_t)(rand() % (rand() % 50 ? 60 : 400));
      if (rand() % 20 == 0) end = t > 3000 ? t - (uint64_t)(rand() % 3000) : t / 2;
      if (dur > end) dur = end;
      uint64_t start = end - dur;
      for (uint64_t k = start; k < end; k++) want[k] = 1;
      if (dur > reach) reach = dur;
      if (end > wm) wm = end;
      add(&u, &f, start, end, wm > reach ? wm - reach : 0);
    }
    ct_busy_fold(&u, UINT64_MAX, on_fold, &f);
    ct_busy_free(&u);
    uint64_t total = 0;
    for (uint64_t k = 0; k < SPAN; k++) total += want[k];
    CHECK(f.total == total && !f.overlaps, "run %d: folded %llu, union %llu, %d units twice", run,
          (unsigned long long)f.total, (unsigned long long)total, f.overlaps);
  }
  free(want);
  free(f.seen);
}

int main(void) {
  planted();
  random_runs();
  if (!failures) printf("ok\n");
  return failures != 0;
}
