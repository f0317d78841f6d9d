/*
 * Runs nvtx_workload under libtrace.so and checks the RANGE and MARK records of
 * its trace against the ranges the workload plants (see nvtx_workload.c): names,
 * domains, depths, flags, threads, counts and the containment of times.
 *
 * Each run also checks the trace of a child the workload forks with ranges open.
 * Three runs:
 *   1. LD_PRELOAD only: the constructor must point NVTX_INJECTION64_PATH at
 *      libtrace.so itself;
 *   2. no LD_PRELOAD, NVTX_INJECTION64_PATH=libtrace.so: NVTX dlopens the tracer;
 *   3. LD_PRELOAD with CUTRACE_NVTX=0: no RANGE or MARK record at all (with
 *      CUTRACE_ALL_PROCESSES=1: a process that records nothing has no file otherwise);
 *   4. LD_PRELOAD with CUTRACE_NVTX=off, not a value it takes: counts as 1 (as 1.).
 *
 * Usage: test_nvtx_ranges LIBTRACE_SO NVTX_WORKLOAD. Exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvtx_check.h"
#include "scratch.h"

#define MAX_EVENTS 64

struct event {
  int is_mark;
  uint64_t tid, begin_ns, end_ns, depth, flags;
  char name[64], domain[64];
};

static struct event events[MAX_EVENTS];
static int nevents;


/* Runs the workload in a fresh output directory; returns that directory or NULL. */
static char *run_workload(const char *libtrace, const char *workload, const char *mode,
                          uint64_t *workload_pid) {
  char scratch[4096];
  char *dir = ct_scratch_dir("cutrace-nvtx-", scratch, sizeof scratch);
  if (!dir) return NULL;
  char output[4200], lib[4200];
  snprintf(output, sizeof output, "CUTRACE_OUTPUT=%s", dir);
  int inject = strcmp(mode, "inject") == 0, off = strcmp(mode, "off") == 0;
  int bad = strcmp(mode, "bad") == 0;
  snprintf(lib, sizeof lib, "%s=%s", inject ? "NVTX_INJECTION64_PATH" : "LD_PRELOAD", libtrace);
  /* off: the workload records nothing, so only CUTRACE_ALL_PROCESSES gives it a file */
  const char *env[] = {output, "NVTX_INJECTION64_PATH", "LD_PRELOAD", "CUTRACE_NVTX", lib,
                       off ? "CUTRACE_NVTX=0" : bad ? "CUTRACE_NVTX=off" : NULL,
                       off ? "CUTRACE_ALL_PROCESSES=1" : NULL, NULL};
  char *argv[] = {(char *)workload, off ? NULL : "check", NULL};
  int pid = 0;
  int status = check_run(env, argv, &pid);
  CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "[%s] workload exit status %d", mode, status);
  *workload_pid = (uint64_t)pid;
  return strdup(dir);
}

/* Reads the RANGE and MARK records of path into events[]; returns its PROCESS pid/ppid. */
static int read_events(const char *path, const char *mode, uint64_t *pid, uint64_t *ppid) {
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  CHECK(r, "[%s] cannot read %s: %s", mode, path, err);
  if (!r) return 0;
  ct_record rec;
  nevents = 0;
  *pid = *ppid = 0;
  while (ct_reader_next(r, &rec) == 1) {
    if (rec.kind == CT_KIND_PROCESS) *pid = rec.u.process.pid, *ppid = rec.u.process.ppid;
    if ((rec.kind != CT_KIND_RANGE && rec.kind != CT_KIND_MARK) || nevents == MAX_EVENTS) continue;
    struct event *ev = &events[nevents++];
    memset(ev, 0, sizeof *ev);
    if (rec.kind == CT_KIND_MARK) {
      ev->is_mark = 1;
      ev->tid = rec.u.mark.tid;
      ev->begin_ns = ev->end_ns = rec.u.mark.ts_ns;
      check_copy_string(r, rec.u.mark.name, ev->name, sizeof ev->name);
      check_copy_string(r, rec.u.mark.domain, ev->domain, sizeof ev->domain);
    } else {
      ev->tid = rec.u.range.tid;
      ev->begin_ns = rec.u.range.begin_ns;
      ev->end_ns = rec.u.range.end_ns;
      ev->depth = rec.u.range.depth;
      ev->flags = rec.u.range.flags;
      check_copy_string(r, rec.u.range.name, ev->name, sizeof ev->name);
      check_copy_string(r, rec.u.range.domain, ev->domain, sizeof ev->domain);
    }
  }
  const ct_read_status *st = ct_reader_status(r);
  CHECK(!st->damaged && st->clean_end, "[%s] %s damaged or without END: %s", mode, path,
        st->message);
  ct_reader_close(r);
  return 1;
}

/*
 * Loads into events[] the trace in dir of the workload process itself (child = 0)
 * or of the child it forked (child = 1). dir must hold exactly want_files traces
 * (a child that records nothing writes no file). Returns 1 when found.
 */
static int read_trace(const char *dir, const char *mode, uint64_t workload_pid, int child,
                      int want_files) {
  char paths[4][4096];
  int files = check_list_traces(dir, paths, 4), found = 0;
  for (int i = 0; i < files && i < 4 && !found; i++) {
    uint64_t pid, ppid;
    if (read_events(paths[i], mode, &pid, &ppid))
      found = child ? ppid == workload_pid : pid == workload_pid;
  }
  CHECK(files == want_files, "[%s] %d trace files in %s, expected %d", mode, files, dir,
        want_files);
  CHECK(found, "[%s] no trace of the workload%s in %s", mode, child ? "'s child" : "", dir);
  if (!found) nevents = 0;
  return found;
}

static int count_named(const char *name) {
  int n = 0;
  for (int i = 0; i < nevents; i++) n += strcmp(events[i].name, name) == 0;
  return n;
}

/* The k-th (0-based) event named name, in file order; a zeroed dummy when absent. */
static const struct event *nth(const char *name, int k) {
  static struct event missing;
  for (int i = 0; i < nevents; i++)
    if (strcmp(events[i].name, name) == 0 && k-- == 0) return &events[i];
  fprintf(stderr, "FAIL: no event \"%s\"\n", name);
  check_failures++;
  return &missing;
}

static const struct event *one(const char *name) {
  CHECK(count_named(name) == 1, "\"%s\" recorded %d times, expected once", name, count_named(name));
  return nth(name, 0);
}

/* a lies within b (times inclusive). */
static int within(const struct event *a, const struct event *b) {
  return a->begin_ns >= b->begin_ns && a->end_ns <= b->end_ns && a->begin_ns <= a->end_ns;
}

static void expect_range(const struct event *e, const char *domain, uint64_t tid, uint64_t depth,
                         uint64_t flags) {
  CHECK(!e->is_mark, "\"%s\" is a mark, expected a range", e->name);
  CHECK(strcmp(e->domain, domain) == 0, "\"%s\" domain \"%s\", expected \"%s\"", e->name,
        e->domain, domain);
  CHECK(e->tid == tid, "\"%s\" tid %llu, expected %llu", e->name, (unsigned long long)e->tid,
        (unsigned long long)tid);
  CHECK(e->depth == depth, "\"%s\" depth %llu, expected %llu", e->name,
        (unsigned long long)e->depth, (unsigned long long)depth);
  CHECK(e->flags == flags, "\"%s\" flags %#llx, expected %#llx", e->name,
        (unsigned long long)e->flags, (unsigned long long)flags);
}

/* The assertions on the planted ranges (runs 1 and 2). */
static void check_planted(uint64_t main_tid, const char *mode) {
  int before = check_failures;
  int ranges = 0, marks = 0;
  for (int i = 0; i < nevents; i++) events[i].is_mark ? marks++ : ranges++;
  CHECK(ranges == 13, "[%s] %d RANGE records, expected 13", mode, ranges);
  CHECK(marks == 2, "[%s] %d MARK records, expected 2", mode, marks);

  const struct event *outer = one("outer"), *inner = one("inner");
  const struct event *wide = one("wide_\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  const struct event *reg = one("registered_op"), *ascii_ex = one("ascii_ex");
  const struct event *cross = one("cross"), *main_leak = one("main_leak");
  const struct event *se_leak = one("se_leak"), *t1_outer = one("t1_outer");
  const struct event *t1_leak = one("t1_leak"), *start = one("start"), *dmark = one("dmark");
  uint64_t t1 = t1_outer->tid;
  CHECK(t1 != main_tid && t1 != 0, "[%s] worker tid %llu vs main %llu", mode,
        (unsigned long long)t1, (unsigned long long)main_tid);

  expect_range(outer, "", main_tid, 0, 0);
  expect_range(inner, "", main_tid, 1, 0);
  expect_range(wide, "", main_tid, 2, 0);
  expect_range(reg, "mydomain", main_tid, 0, 0);
  expect_range(ascii_ex, "", main_tid, 2, 0);
  expect_range(cross, "", main_tid, 0, CT_RANGE_STARTEND);
  expect_range(main_leak, "", main_tid, 0, CT_RANGE_UNCLOSED);
  expect_range(se_leak, "", main_tid, 0, CT_RANGE_STARTEND | CT_RANGE_UNCLOSED);
  expect_range(t1_outer, "", t1, 0, 0);
  expect_range(t1_leak, "", t1, 0, CT_RANGE_UNCLOSED);
  CHECK(count_named("t1_inner") == 3, "t1_inner recorded %d times, expected 3",
        count_named("t1_inner"));
  for (int k = 0; k < 3 && count_named("t1_inner") == 3; k++) {
    const struct event *t = nth("t1_inner", k);
    expect_range(t, "", t1, 1, 0);
    CHECK(within(t, t1_outer), "t1_inner #%d not inside t1_outer", k);
    if (k > 0) CHECK(t->begin_ns >= nth("t1_inner", k - 1)->end_ns, "t1_inner #%d overlaps", k);
  }

  CHECK(start->is_mark && start->tid == main_tid && start->domain[0] == '\0' &&
            start->begin_ns <= outer->begin_ns,
        "mark \"start\" wrong (tid %llu, domain \"%s\")", (unsigned long long)start->tid,
        start->domain);
  CHECK(dmark->is_mark && dmark->tid == main_tid && strcmp(dmark->domain, "mydomain") == 0 &&
            within(dmark, reg),
        "mark \"dmark\" wrong (tid %llu, domain \"%s\")", (unsigned long long)dmark->tid,
        dmark->domain);

  CHECK(within(inner, outer), "inner not inside outer");
  CHECK(within(wide, inner) && within(reg, inner) && within(ascii_ex, inner),
        "wide, registered_op, ascii_ex not inside inner");
  CHECK(wide->end_ns <= reg->begin_ns && reg->end_ns <= ascii_ex->begin_ns,
        "wide, registered_op, ascii_ex out of order");
  CHECK(within(cross, outer) && cross->begin_ns >= inner->end_ns, "cross not inside outer after inner");
  CHECK(cross->end_ns >= t1_outer->begin_ns && cross->end_ns <= t1_outer->end_ns,
        "cross did not end inside t1_outer (on the worker)");
  CHECK(t1_leak->begin_ns >= t1_outer->end_ns && t1_leak->end_ns <= main_leak->begin_ns,
        "t1_leak not closed at the worker's exit");
  CHECK(main_leak->begin_ns >= outer->end_ns && main_leak->end_ns >= main_leak->begin_ns,
        "main_leak times wrong");
  CHECK(se_leak->end_ns == main_leak->end_ns && se_leak->begin_ns >= main_leak->begin_ns,
        "se_leak not closed at process exit with main_leak");
  if (check_failures == before) printf("ok: [%s] 13 ranges and 2 marks as planted\n", mode);
}

/* The assertions on the forked child's trace (runs 1 and 2). */
static void check_child(uint64_t workload_pid, const char *mode) {
  int before = check_failures;
  CHECK(nevents == 2, "[%s] child: %d RANGE/MARK records, expected 2", mode, nevents);
  if (nevents != 2) return;
  const struct event *child_range = one("child_range"), *outer = one("outer");
  uint64_t child_tid = child_range->tid;
  CHECK(child_tid != workload_pid && child_tid != 0, "[%s] child tid %llu", mode,
        (unsigned long long)child_tid);
  expect_range(child_range, "", child_tid, 1, 0);
  expect_range(outer, "", child_tid, 0, 0);
  CHECK(outer->begin_ns < child_range->begin_ns && outer->end_ns >= child_range->end_ns,
        "[%s] child: inherited outer does not contain child_range", mode);
  if (check_failures == before) printf("ok: [%s] forked child: child_range inside inherited outer\n", mode);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_nvtx_ranges LIBTRACE_SO NVTX_WORKLOAD\n");
    return 1;
  }
  if (access(argv[1], R_OK) != 0) {
    fprintf(stderr, "skip: %s not built\n", argv[1]);
    return 77;
  }
  const char *modes[] = {"preload", "inject", "off", "bad"};
  for (int m = 0; m < 4; m++) {
    uint64_t pid = 0;
    char *dir = run_workload(argv[1], argv[2], modes[m], &pid);
    CHECK(dir, "[%s] could not run the workload", modes[m]);
    if (!dir) continue;
    int before = check_failures;
    if (m != 2) {
      if (read_trace(dir, modes[m], pid, 0, 2)) check_planted(pid, modes[m]);
      if (read_trace(dir, modes[m], pid, 1, 2)) check_child(pid, modes[m]);
    } else {
      if (read_trace(dir, modes[m], pid, 0, 1))
        CHECK(nevents == 0, "[off] %d RANGE/MARK records with CUTRACE_NVTX=0", nevents);
      if (check_failures == before) printf("ok: [off] no ranges with CUTRACE_NVTX=0\n");
    }
    if (check_failures != before) fprintf(stderr, "[%s] failed\n", modes[m]);
    ct_scratch_done(dir, check_failures == before);
    free(dir);
  }
  return check_failures ? 1 : 0;
}
