/*
 * The model's calls-in-flight table (model_calls.c) against a plain reference: calls
 * added with increasing ids and removed out of order (a window of in-flight ids that
 * widens from 100 to 200,000 and narrows again), some never removed (dropped GPU
 * records), ids far behind and ahead of the window, and entries re-fetched after later
 * additions moved them (ring to overflow, ring growth). After every step each id ever
 * added must be found exactly when it is in flight, with the fields stored for it;
 * the same after a sweep (ct_calls_sweep) removed two of every three ids, there and
 * in a table whose overflow is dense; and a table freed with calls in flight leaves
 * none of them to the next table.
 * usage: test_model_calls
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_calls.h"

#include "test_check.h"

#define MAX_ID 1200000

static unsigned char live[MAX_ID + 1]; /* the reference: 1 in flight, 2 never removed */
static uint64_t rng = 88172645463325252ull;

static uint64_t next_random(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Adds corr with fields derived from it (and a detail field, as on_detail does). */
static void add(ct_calls *t, uint64_t corr) {
  ct_call *e = ct_calls_get(t, corr);
  CHECK(e && e->corr == corr, "get %llu", (unsigned long long)corr);
  if (!e) return;
  CHECK(!e->has_call && !e->tid && !e->span_done, "fresh entry %llu not zero", (unsigned long long)corr);
  e->has_call = 1;
  e->tid = corr * 3;
  e->begin = corr * 7;
  e->d[CALL_DETAIL_FIELDS - 1] = corr ^ 0x5555;
  /* a second get of the same id returns the same entry */
  CHECK(ct_calls_get(t, corr) == e, "second get of %llu", (unsigned long long)corr);
  live[corr] = 1;
}

static void drop(ct_calls *t, uint64_t corr) {
  ct_call *e = ct_calls_find(t, corr);
  CHECK(e != NULL, "find %llu before removing", (unsigned long long)corr);
  if (e) ct_calls_remove(t, e);
  live[corr] = 0;
}

/* Every id in [lo, hi]: found iff live, with its fields. */
static void verify(const ct_calls *t, uint64_t lo, uint64_t hi) {
  for (uint64_t c = lo ? lo : 1; c <= hi && c <= MAX_ID; c++) {
    const ct_call *e = ct_calls_find(t, c);
    if (!live[c]) {
      CHECK(!e, "%llu found after removal", (unsigned long long)c);
      continue;
    }
    CHECK(e && e->corr == c && e->tid == c * 3 && e->begin == c * 7 &&
              e->d[CALL_DETAIL_FIELDS - 1] == (c ^ 0x5555),
          "%llu lost or damaged", (unsigned long long)c);
  }
}

/* The sweep's test: two ids of every three. */
static int two_of_three(const ct_call *e, void *arg) {
  (void)arg;
  return e->corr % 3 != 0;
}

/* Sweeps two of every three ids from t (in the ring and in the overflow, where a
 * removal shifts later entries back into its slot) and checks t against the reference. */
static void check_sweep(ct_calls *t, const char *label) {
  size_t over_before = t->over.n, swept_want = 0, in_flight = 0;
  for (uint64_t c = 1; c <= MAX_ID; c++) {
    if (live[c] && c % 3 != 0) {
      live[c] = 0;
      swept_want++;
    }
    in_flight += live[c] != 0;
  }
  size_t swept = ct_calls_sweep(t, two_of_three, NULL);
  CHECK(over_before > 100 && swept == swept_want && t->n == in_flight,
        "%s: swept %zu of %zu (overflow %zu), %zu in flight, want %zu", label, swept,
        swept_want, over_before, t->n, in_flight);
  verify(t, 1, MAX_ID);
}

int main(void) {
  ct_calls t = {0};
  uint64_t next = 1, oldest = 1;
  size_t stale = 0;
  /* window widths of ids in flight, one phase each */
  static const uint64_t widths[] = {100, 3000, 40000, 200000, 5000, 50};
  for (size_t phase = 0; phase < sizeof widths / sizeof widths[0]; phase++) {
    uint64_t width = widths[phase];
    for (int step = 0; step < 150000; step++) {
      add(&t, next++);
      /* retire ids near the back of the window, out of order within 64 of it */
      while (next - oldest > width) {
        uint64_t c = oldest + next_random() % 64;
        if (c >= next) c = oldest;
        if (live[c] == 1) {
          if (next_random() % 1000 == 0) { /* never removed: a dropped record */
            live[c] = 2;
            stale++;
          } else {
            drop(&t, c);
          }
        }
        while (oldest < next && live[oldest] != 1) oldest++;
      }
    }
    verify(&t, 1, next);
    printf("phase %zu: window %llu, ring %zu slots, overflow %zu\n", phase,
           (unsigned long long)width, t.ring_cap, t.over.n);
  }
  /* an id far ahead of the window, and one long behind it */
  add(&t, next + 10000000 < MAX_ID ? next + 10000000 : MAX_ID);
  /* ids long behind the window, whose slots newer calls hold */
  for (uint64_t c = next - 300000; c < next - 300000 + 5000; c += 7)
    if (!live[c]) add(&t, c);
  verify(&t, 1, MAX_ID);
  CHECK(stale > 0, "the scenario leaves stale entries");
  check_sweep(&t, "after the phases");
  ct_calls_free(&t);
  /* a dense overflow (about 45% of its slots: long probe runs) to sweep */
  memset(live, 0, sizeof live);
  for (uint64_t c = 1; c <= 183000; c++) add(&t, c);
  CHECK(t.over.n * 5 > t.over.cap * 2, "dense overflow: %zu of %zu slots", t.over.n, t.over.cap);
  check_sweep(&t, "a dense overflow");
  ct_calls_free(&t);
  CHECK(ct_calls_find(&t, 5) == NULL, "empty after free");
  ct_calls_get(&t, 5);
  CHECK(ct_calls_find(&t, 5) != NULL, "usable after free");
  ct_calls_free(&t);
  /* a table freed with calls in flight in its first ring (which the next table of the
   * thread takes over): the next table finds none of them */
  for (uint64_t c = 1; c <= 300; c++) ct_calls_get(&t, c);
  ct_calls_free(&t);
  for (uint64_t c = 1; c <= 300; c++) CHECK(ct_calls_find(&t, c) == NULL, "%llu gone", (unsigned long long)c);
  for (uint64_t c = 1; c <= 300; c += 2) ct_calls_get(&t, c + 1024);
  for (uint64_t c = 1; c <= 300; c++)
    CHECK(ct_calls_find(&t, c) == NULL && (ct_calls_find(&t, c + 1024) != NULL) == (c % 2 == 1),
          "reused ring, id %llu", (unsigned long long)c);
  ct_calls_free(&t);
  if (failures) printf("%d failures\n", failures);
  else printf("ok: %llu ids, %zu never removed\n", (unsigned long long)next - 1, stale);
  return failures != 0;
}
