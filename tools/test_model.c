/*
 * The trace model (model.c) on a trace written here with known disorder: two threads
 * whose records interleave up to 3 ms out of order, GPU records written before their
 * calls (synchronous copies) and long after (a slow poller), details joined by corr,
 * calls without GPU work, TRACER spans, and one record later than a fixed window.
 * Checks delivery in nondecreasing end time, every join, the late count, the stats.
 * usage: test_model DIR (a scratch directory)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "model.h"

#include "test_check.h"
#include "test_trace.h"

#define N 3000 /* calls per thread */

/* Thread t's call i: [b, b + 1000) with b = 1 s + i * 10 us + t * 3 us; GPU work of
 * odd calls is a memcpy (detail MEMOP, bytes = i), even calls launch kernel 3 or 4. */
static uint64_t call_begin(int t, int i) { return 1000000000ull + i * 10000ull + t * 3000ull; }
static uint64_t corr_of(int t, int i) { return 1 + (uint64_t)i * 2 + (uint64_t)t; }

static void write_trace(const char *path) {
  ct_file_writer *w = test_trace_open(path, 8192);
  ct_file_writer_add_string(w, 1, "__cudaLaunchKernel", 18);
  ct_file_writer_add_string(w, 2, "cudaMemcpy", 10);
  ct_file_writer_add_string(w, 3, "_Z1av", 5);
  ct_file_writer_add_string(w, 4, "_Z1bv", 5);
  ct_file_writer_add_string(w, 5, "flush", 5);
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process.pid = 77;
  test_trace_add(w, &r);
  /* Thread 1's records are written in blocks of 300 calls (3 ms) after thread 0's:
   * the reorder buffer must put them back in order. */
  for (int blk = 0; blk < N; blk += 300)
    for (int t = 0; t < 2; t++)
      for (int i = blk; i < blk + 300; i++) {
        uint64_t b = call_begin(t, i), corr = corr_of(t, i);
        int copy = i & 1;
        if (copy) { /* synchronous copy: GPU record first, inside the call */
          r.kind = CT_KIND_GPU;
          r.u.gpu = (struct ct_gpu){.corr = corr, .stream = 1, .start_ns = b + 200,
                                    .end_ns = b + 700, .type = CT_GPU_MEMCPY};
          test_trace_add(w, &r);
        }
        r.kind = CT_KIND_API;
        r.u.api = (struct ct_api){.tid = 10 + t, .name = copy ? 2 : 1, .begin_ns = b,
                                  .end_ns = b + 1000, .corr = corr, .flags = CT_API_TIMED};
        test_trace_add(w, &r);
        if (copy) {
          r.kind = CT_KIND_MEMOP;
          r.u.memop = (struct ct_memop){.corr = corr, .bytes = (uint64_t)i, .kind = CT_MEMOP_D2H};
          test_trace_add(w, &r);
        } else {
          r.kind = CT_KIND_LAUNCH;
          r.u.launch = (struct ct_launch){.corr = corr, .kernel = 3 + (uint64_t)t, .grid_x = (uint64_t)i};
          test_trace_add(w, &r);
          r.kind = CT_KIND_GPU; /* a slow poller: 1.5 ms after the launch */
          r.u.gpu = (struct ct_gpu){.corr = corr, .stream = 2, .start_ns = b + 1500000,
                                    .end_ns = b + 1502000, .type = CT_GPU_KERNEL};
          test_trace_add(w, &r);
        }
        if (t == 0 && i % 100 == 0) {
          r.kind = CT_KIND_API; /* a call without GPU work and without corr */
          r.u.api = (struct ct_api){.tid = 10, .name = 1, .begin_ns = b + 1000, .end_ns = b + 1100};
          test_trace_add(w, &r);
          r.kind = CT_KIND_TRACER;
          r.u.tracer = (struct ct_tracer){.tid = 99, .what = 5, .begin_ns = b, .end_ns = b + 50,
                                          .amount = 7};
          test_trace_add(w, &r);
        }
      }
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

/* A call whose API record reaches the file `lateness_ns` of trace time after its GPU
 * record (its thread was descheduled, or its first stack capture was slow, between
 * the call's end and its record: the flake in tools/test_record.py's forker), with a
 * poller TRACER span in between; drop_first: a DROP record comes first. The GPU
 * record of corr 2 must wait for its call unless drops were reported or it waited
 * JOIN_WAIT_NS (2 s). It is thread 1's call 0 (corr 2), as on_activity checks. */
static void write_late_call_trace(const char *path, int drop_first, uint64_t lateness_ns) {
  ct_file_writer *w = test_trace_open(path, 8192);
  ct_file_writer_add_string(w, 1, "__cudaLaunchKernel", 18);
  ct_file_writer_add_string(w, 4, "_Z1bv", 5);
  ct_file_writer_add_string(w, 5, "flush", 5);
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process.pid = 78;
  test_trace_add(w, &r);
  uint64_t b = call_begin(1, 0), corr = corr_of(1, 0);
  if (drop_first) {
    r.kind = CT_KIND_DROP;
    r.u.drop = (struct ct_drop){.tid = 11, .count = 4, .first_ns = b - 100, .last_ns = b - 50};
    test_trace_add(w, &r);
  }
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = corr, .start_ns = b + 80000, .end_ns = b + 85000,
                            .type = CT_GPU_KERNEL, .name = 4};
  test_trace_add(w, &r);
  r.kind = CT_KIND_TRACER;
  r.u.tracer = (struct ct_tracer){.tid = 99, .what = 5, .begin_ns = b + lateness_ns,
                                  .end_ns = b + lateness_ns + 50, .amount = 7};
  test_trace_add(w, &r);
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = 11, .name = 1, .begin_ns = b, .end_ns = b + 90000,
                            .corr = corr, .flags = CT_API_TIMED};
  test_trace_add(w, &r);
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){.corr = corr, .kernel = 4, .grid_x = 0};
  test_trace_add(w, &r);
  r.kind = CT_KIND_END;
  test_trace_add(w, &r);
  test_trace_close(w, path);
}

typedef struct seen {
  int check_joins; /* a window shorter than the disorder may deliver work before its call */
  uint64_t last_end, spans, acts, tracer, late, joined_copies, joined_kernels, bytes_sum;
  int out_of_order;
} seen;

static void check_order(seen *s, uint64_t end, int late) {
  if (late) {
    s->late++;
    return;
  }
  if (end < s->last_end) s->out_of_order++;
  s->last_end = end;
}

static void on_span(void *user, const ct_span *sp) {
  seen *s = user;
  check_order(s, sp->end_ns, sp->late);
  if (sp->is_tracer) {
    s->tracer++;
    CHECK(!strcmp(sp->name, "flush") && sp->amount == 7, "tracer span %s", sp->name);
    return;
  }
  s->spans++;
  if (sp->corr && sp->detail == CT_DETAIL_LAUNCH)
    CHECK(sp->kernel && sp->category == CT_CAT_LAUNCH, "launch span joined with its kernel");
}

static void on_activity(void *user, const ct_activity *a) {
  seen *s = user;
  check_order(s, a->end_ns, a->late);
  s->acts++;
  if (!s->check_joins) return;
  CHECK(a->has_call, "activity %llu has its call", (unsigned long long)a->corr);
  int t = (int)((a->corr - 1) & 1), i = (int)((a->corr - 1) / 2);
  CHECK(a->tid == (uint64_t)(10 + t) && a->call_begin_ns == call_begin(t, i),
        "activity %llu joined with the right call", (unsigned long long)a->corr);
  if (a->type == CT_GPU_MEMCPY) {
    CHECK(a->detail == CT_DETAIL_MEMOP && a->d.memop.bytes == (uint64_t)i &&
              !strcmp(a->name, "memcpy DtoH") && !strcmp(a->api, "cudaMemcpy"),
          "copy %d detail", i);
    s->joined_copies++;
    s->bytes_sum += a->d.memop.bytes;
  } else {
    CHECK(a->detail == CT_DETAIL_LAUNCH && a->d.launch.grid_x == (uint64_t)i &&
              !strcmp(a->name, t ? "_Z1bv" : "_Z1av"),
          "kernel %d detail (%s)", i, a->name);
    s->joined_kernels++;
  }
}

int main(int argc, char **argv) {
  char path[4096];
  test_trace_path(argc, argv, "model-test.ctr", path, sizeof path);
  write_trace(path);
  ct_model_ops ops = {.on_span = on_span, .on_activity = on_activity};

  /* Adaptive window: everything in order, everything joined. */
  seen s = {.check_joins = 1};
  ct_model_stats st;
  int rc = ct_model_read(path, NULL, &ops, &s, &st);
  CHECK(rc == 0 && st.has_end, "clean read (rc %d: %s)", rc, st.message);
  CHECK(s.out_of_order == 0 && s.late == 0 && st.late == 0, "in order: %d out of order, %llu late",
        s.out_of_order, (unsigned long long)s.late);
  CHECK(s.spans == 2 * N + N / 100 && s.tracer == N / 100, "spans %llu tracer %llu",
        (unsigned long long)s.spans, (unsigned long long)s.tracer);
  CHECK(s.acts == 2 * N && s.joined_copies == N && s.joined_kernels == N, "activities %llu",
        (unsigned long long)s.acts);
  CHECK(s.bytes_sum == 2ull * (N / 2) * (N / 2), "copy bytes %llu", (unsigned long long)s.bytes_sum);
  CHECK(st.unmatched_activities == 0 && st.first_ns == call_begin(0, 0), "stats");

  /* A fixed 1 ms window is shorter than the 3 ms disorder: late events are still
   * delivered, flagged and counted (joins across more than the window may fail). */
  seen s2 = {0};
  ct_model_options small = {.window_ns = 1000000};
  rc = ct_model_read(path, &small, &ops, &s2, &st);
  CHECK(rc == 0 && s2.late > 0 && s2.late == st.late && s2.out_of_order == 0,
        "fixed window: %llu late, %d out of order", (unsigned long long)s2.late, s2.out_of_order);
  CHECK(s2.acts == 2 * N && s2.spans == s.spans, "fixed window: nothing lost");

  /* A call recorded 25 ms after its GPU work, beyond the first 20 ms window: joined.
   * A fixed window does not grow: the activity, released as its call arrives, still
   * gets the call's LAUNCH record read after it. After a DROP record the activity goes
   * unjoined. 3 s late (past the 2 s wait) it is still joined while the events it holds
   * back stay within the hold (CT_MODEL_JOIN_HOLD: a starved writer round); with a hold
   * of 1 event, past both bounds, it goes unjoined (memory stays bounded), and that is
   * counted: given up, and its call came later. Nothing is late: the call ends after
   * its kernel. */
  struct {
    int drop_first;
    uint64_t lateness_ns, window_ns; /* window 0: adaptive */
    uint64_t hold;                   /* join_hold (0: the default) */
    int joined;
  } late_cases[] = {{0, 25000000, 0, 0, 1},       {0, 25000000, 20000000, 0, 1},
                    {1, 25000000, 0, 0, 0},       {0, 3000000000ull, 0, 0, 1},
                    {0, 3000000000ull, 0, 1, 0},  {0, 1500000000ull, 0, 1, 1}};
  for (size_t c = 0; c < sizeof late_cases / sizeof *late_cases; c++) {
    remove(path);
    write_late_call_trace(path, late_cases[c].drop_first, late_cases[c].lateness_ns);
    seen s3 = {.check_joins = late_cases[c].joined};
    ct_model_options window = {.window_ns = late_cases[c].window_ns,
                               .join_hold = late_cases[c].hold};
    rc = ct_model_read(path, &window, &ops, &s3, &st);
    int joined = late_cases[c].joined;
    CHECK(rc == 0 && s3.acts == 1 && s3.spans == 1 && s3.tracer == 1,
          "late call %zu: rc %d, %llu activities, %llu spans", c, rc,
          (unsigned long long)s3.acts, (unsigned long long)s3.spans);
    CHECK(st.unmatched_activities == (uint64_t)!joined && s3.late == 0 && st.late == 0 &&
              s3.out_of_order == 0,
          "late call %zu: %llu unmatched, %llu late, %d out of order", c,
          (unsigned long long)st.unmatched_activities, (unsigned long long)s3.late,
          s3.out_of_order);
    /* unjoined without drops: said (the CLI's line), as given up; its call came later */
    uint64_t said = !joined && !late_cases[c].drop_first;
    CHECK(st.joins_missed == said && st.joins_given_up == said &&
              st.calls_after_give_up == (uint64_t)!joined &&
              (!said || (st.late_call_max_ns > 2900000000ull && st.late_call_max_ns < 3000000000ull)),
          "late call %zu: %llu missed, %llu given up, %llu calls after, %llu ns behind", c,
          (unsigned long long)st.joins_missed, (unsigned long long)st.joins_given_up,
          (unsigned long long)st.calls_after_give_up, (unsigned long long)st.late_call_max_ns);
  }

  /* Missing file. */
  rc = ct_model_read("/nonexistent/x.ctr", NULL, &ops, &s2, &st);
  CHECK(rc == -1 && strstr(st.message, "No such file"), "missing file: %d %s", rc, st.message);
  remove(path);
  printf(failures ? "%d failures\n" : "ok\n", failures);
  return failures ? 1 : 0;
}
