/*
 * The model's give-up rule for a detail record whose call never comes (model.c,
 * sweep_stranded_details): N launches over 10 s of trace time, each written as the
 * preload writes it (LAUNCH, then API, then GPU record); of every 10 launches one lost
 * both its API and its GPU record, so only its LAUNCH record is in the file, as when
 * the thread's buffer was full right after the detail (`cutrace-gentrace --drops`
 * loses a call's records together). With DROP records: every other call joined with
 * its own detail, the stranded details given up on once 2 s of trace time passed them
 * (all but those of the last 4 s), and the calls in flight at once bounded by those
 * 4 s rather than by N. Without DROP records: nothing given up (a clean trace's records
 * all come), so all of them stay.
 * usage: test_model_stranded DIR (a scratch directory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "model.h"

#include "test_check.h"
#include "test_trace.h"

#define N 50000ull            /* launches */
#define STEP_NS 200000ull     /* one every 200 us: 10 s of trace time */
#define T0 1000000000ull
#define GIVE_UP_NS 2000000000ull /* the model's JOIN_WAIT_NS */

/* Launch i (corr i + 1) left only its LAUNCH record. */
static int stranded(uint64_t i) { return i % 10 == 8; }

static void write_trace(const char *path, int drop_records) {
  ct_file_writer *w = test_trace_open(path, 1 << 16);
  ct_file_writer_add_string(w, 1, "__cudaLaunchKernel", 18);
  ct_file_writer_add_string(w, 2, "_Z1kv", 5);
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process = (struct ct_process){.pid = 5, .start_ns = T0};
  test_trace_add(w, &r);
  for (uint64_t i = 0; i < N; i++) {
    uint64_t t = T0 + i * STEP_NS, corr = i + 1;
    r.kind = CT_KIND_LAUNCH;
    r.u.launch = (struct ct_launch){.corr = corr, .kernel = 2, .grid_x = i};
    test_trace_add(w, &r);
    if (drop_records && i % 1000 == 0) { /* reported early, as the preload reports a full buffer */
      r.kind = CT_KIND_DROP;
      r.u.drop = (struct ct_drop){.tid = 7, .count = 200, .first_ns = t, .last_ns = t};
      test_trace_add(w, &r);
    }
    if (stranded(i)) continue;
    r.kind = CT_KIND_API;
    r.u.api = (struct ct_api){.tid = 7, .name = 1, .begin_ns = t, .end_ns = t + 3000,
                              .corr = corr, .stream = 1, .flags = CT_API_TIMED};
    test_trace_add(w, &r);
    r.kind = CT_KIND_GPU;
    r.u.gpu = (struct ct_gpu){.corr = corr, .stream = 1, .start_ns = t + 5000,
                              .end_ns = t + 7000, .type = CT_GPU_KERNEL};
    test_trace_add(w, &r);
  }
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

typedef struct seen {
  uint64_t spans, acts, bad_join;
} seen;

static void on_span(void *user, const ct_span *sp) {
  seen *s = user;
  s->spans++;
  if (stranded(sp->corr - 1) || sp->detail != CT_DETAIL_LAUNCH || sp->d.launch.grid_x != sp->corr - 1)
    s->bad_join++;
}

static void on_activity(void *user, const ct_activity *a) {
  seen *s = user;
  s->acts++;
  if (!a->has_call || a->detail != CT_DETAIL_LAUNCH || a->d.launch.grid_x != a->corr - 1 ||
      a->call_begin_ns != T0 + (a->corr - 1) * STEP_NS)
    s->bad_join++;
}

/* Reads path; checks every call joined with its own detail. */
static void read_trace(const char *path, const char *label, ct_model_stats *st) {
  ct_model_ops ops = {.on_span = on_span, .on_activity = on_activity};
  seen s = {0};
  int rc = ct_model_read(path, NULL, &ops, &s, st);
  CHECK(rc == 0 && st->has_end, "%s: clean read (rc %d: %s)", label, rc, st->message);
  CHECK(s.spans == N / 10 * 9 && s.acts == N / 10 * 9 && s.bad_join == 0,
        "%s: %llu spans, %llu activities, %llu joined wrong", label,
        (unsigned long long)s.spans, (unsigned long long)s.acts, (unsigned long long)s.bad_join);
}

int main(int argc, char **argv) {
  char path[4096];
  test_trace_path(argc, argv, "model-stranded-test.ctr", path, sizeof path);
  write_trace(path, 1);
  ct_model_stats st;
  read_trace(path, "with DROP records", &st);
  /* A sweep every 2 s of trace time gives up on the details read more than 2 s before:
   * at most 4 s of stranded details in flight, and all but the last 4 s given up. */
  uint64_t total = N / 10, per_give_up = GIVE_UP_NS / STEP_NS / 10;
  CHECK(st.calls_given_up <= total && st.calls_given_up + 2 * per_give_up >= total,
        "%llu stranded details given up of %llu", (unsigned long long)st.calls_given_up,
        (unsigned long long)total);
  uint64_t bound = 2 * per_give_up + 20000000 / STEP_NS; /* + the window's calls */
  CHECK(st.calls_peak <= bound, "%llu calls in flight at once (at most %llu)",
        (unsigned long long)st.calls_peak, (unsigned long long)bound);

  remove(path);
  write_trace(path, 0);
  read_trace(path, "without DROP records", &st);
  CHECK(st.calls_given_up == 0 && st.calls_peak >= total,
        "without DROP records: %llu given up, %llu in flight at once",
        (unsigned long long)st.calls_given_up, (unsigned long long)st.calls_peak);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
