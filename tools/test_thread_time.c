/*
 * The count of a thread's overlapping query spins (thread_time.c) on planted spans: the
 * parts counted must add up to the union of the spans of one (process, thread, entry
 * point, depth class), whatever order the records come in, and leave other calls,
 * other threads, processes and inner calls apart.
 * usage: test_thread_time
 */
#include <stdio.h>
#include <string.h>

#include "thread_time.h"

#include "test_check.h"

static ct_proc proc_a, proc_b;

/* The part counted for one planted span. */
static uint64_t add(ct_thread_time *t, const ct_proc *p, uint64_t tid, const char *name,
                    uint64_t depth, uint64_t begin, uint64_t end) {
  ct_span s;
  memset(&s, 0, sizeof s);
  s.proc = p;
  s.tid = tid;
  s.name = name;
  s.depth = depth;
  s.begin_ns = begin;
  s.end_ns = end;
  int oom = 0;
  uint64_t got = ct_thread_time_add(t, &s, &oom);
  CHECK(!oom, "out of memory");
  return got;
}

int main(void) {
  proc_a.rec.pid = 10;
  proc_b.rec.pid = 11;
  ct_thread_time *t = ct_thread_time_new();
  if (!t) return 1;
  const char *q = "cudaEventQuery", *d = "cuStreamQuery";
  /* three targets round-robin, written in end order: 10 + 5 + 5 = the union 20 */
  CHECK(add(t, &proc_a, 1, q, 0, 0, 10) == 10, "first spin counts whole");
  CHECK(add(t, &proc_a, 1, q, 0, 1, 15) == 5, "second spin: what it adds");
  CHECK(add(t, &proc_a, 1, q, 0, 2, 20) == 5, "third spin: what it adds");
  CHECK(add(t, &proc_a, 1, q, 0, 3, 20) == 0, "a spin inside the others adds nothing");
  /* out of order: a short spin first, the long one around it later */
  CHECK(add(t, &proc_a, 2, q, 0, 105, 106) == 1, "short first");
  CHECK(add(t, &proc_a, 2, q, 0, 100, 110) == 9, "the long one around it adds the rest");
  /* two disjoint, then one bridging them: 2 + 2 + the gap 2 */
  CHECK(add(t, &proc_a, 3, q, 0, 200, 202) == 2, "disjoint a");
  CHECK(add(t, &proc_a, 3, q, 0, 204, 206) == 2, "disjoint b");
  CHECK(add(t, &proc_a, 3, q, 0, 201, 205) == 2, "the bridge adds the gap only");
  CHECK(add(t, &proc_a, 3, q, 0, 199, 207) == 2, "around all: its two ends");
  /* apart: another entry point, thread, process, an inner call; not a query */
  CHECK(add(t, &proc_a, 1, d, 0, 0, 10) == 10, "another entry point of the thread");
  CHECK(add(t, &proc_a, 9, q, 0, 0, 10) == 10, "another thread");
  CHECK(add(t, &proc_b, 1, q, 0, 0, 10) == 10, "another process");
  CHECK(add(t, &proc_a, 1, q, 1, 0, 10) == 10, "an inner call of the same name");
  CHECK(add(t, &proc_a, 1, "cudaMemcpy", 0, 0, 10) == 10, "not a query: whole");
  CHECK(add(t, &proc_a, 1, "cudaMemcpy", 0, 0, 10) == 10, "not a query: whole again");
  CHECK(add(t, &proc_a, 1, q, 0, 30, 20) == 0, "a reversed span counts 0");
  /* many disjoint spins (more than it keeps), then one over the latest: its new part */
  uint64_t sum = 0;
  for (uint64_t i = 0; i < 20; i++) sum += add(t, &proc_a, 4, q, 0, 1000 + 10 * i, 1005 + 10 * i);
  CHECK(sum == 100, "20 disjoint spins of 5: %llu", (unsigned long long)sum);
  CHECK(add(t, &proc_a, 4, q, 0, 1190, 1200) == 5, "over the latest kept: 5 new");
  /* a query without a POLL record but with polls set counts as one too */
  ct_span s;
  memset(&s, 0, sizeof s);
  s.proc = &proc_a, s.tid = 5, s.name = "someQuery", s.polls = 3, s.begin_ns = 0, s.end_ns = 10;
  CHECK(ct_span_is_poll(&s) && ct_thread_time_add(t, &s, NULL) == 10, "polls record: counted");
  CHECK(ct_thread_time_add(t, &s, NULL) == 0, "polls record again: covered");
  ct_thread_time_free(t);
  ct_thread_time_free(NULL);
  printf("%d failure(s)\n", failures);
  return failures != 0;
}
