/*
 * Runs nvtx_kernels (NVTX ranges around CUDA work) on the simulated GPU under
 * libtrace.so and checks that the trace lets every kernel and copy be attributed
 * to the innermost range open on its launching thread: each LAUNCH's API record
 * lies inside exactly the planted ranges of its thread, and each launch was timed
 * on the GPU (a GPU record with its corr).
 *
 * Usage: test_nvtx_kernels LIBTRACE_SO NVTX_KERNELS SIM_DIR. Exit 0 pass, 1 fail,
 * 77 when SIM_DIR has no simulated libcuda.so.1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvtx_check.h"
#include "scratch.h"

#define MAX_ITEMS 256

struct span {
  uint64_t tid, begin_ns, end_ns, depth, flags, corr, gpu_type;
  char name[64];
};

static struct span ranges[MAX_ITEMS], apis[MAX_ITEMS], launches[MAX_ITEMS], gpus[MAX_ITEMS];
static int nranges, napis, nlaunches, ngpus;


static struct span *add(struct span *a, int *n) {
  if (*n == MAX_ITEMS) return NULL;
  memset(&a[*n], 0, sizeof a[*n]);
  return &a[(*n)++];
}

/* Reads the one trace in dir. Returns 1 when read. */
static int read_trace(const char *dir) {
  char paths[2][4096];
  int files = check_list_traces(dir, paths, 2);
  CHECK(files == 1, "%d trace files in %s, expected 1", files, dir);
  if (files != 1) return 0;
  const char *path = paths[0];
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  CHECK(r, "cannot read %s: %s", path, err);
  if (!r) return 0;
  ct_record rec;
  struct span *s;
  while (ct_reader_next(r, &rec) == 1) {
    if (rec.kind == CT_KIND_RANGE && (s = add(ranges, &nranges))) {
      s->tid = rec.u.range.tid, s->begin_ns = rec.u.range.begin_ns;
      s->end_ns = rec.u.range.end_ns, s->depth = rec.u.range.depth;
      s->flags = rec.u.range.flags;
      check_copy_string(r, rec.u.range.name, s->name, sizeof s->name);
    } else if (rec.kind == CT_KIND_API && (s = add(apis, &napis))) {
      s->tid = rec.u.api.tid, s->begin_ns = rec.u.api.begin_ns, s->end_ns = rec.u.api.end_ns;
      s->corr = rec.u.api.corr;
      check_copy_string(r, rec.u.api.name, s->name, sizeof s->name);
    } else if (rec.kind == CT_KIND_LAUNCH && (s = add(launches, &nlaunches))) {
      s->corr = rec.u.launch.corr;
      check_copy_string(r, rec.u.launch.kernel, s->name, sizeof s->name);
    } else if (rec.kind == CT_KIND_GPU && (s = add(gpus, &ngpus))) {
      s->corr = rec.u.gpu.corr, s->gpu_type = rec.u.gpu.type;
    }
  }
  const ct_read_status *st = ct_reader_status(r);
  CHECK(!st->damaged && st->clean_end, "trace damaged or without END: %s", st->message);
  ct_reader_close(r);
  return 1;
}

static const struct span *find_corr(const struct span *a, int n, uint64_t corr) {
  for (int i = 0; i < n; i++)
    if (a[i].corr == corr) return &a[i];
  return NULL;
}

/* The innermost range of call's thread containing the call, or NULL. */
static const struct span *innermost_range(const struct span *call) {
  const struct span *best = NULL;
  for (int i = 0; i < nranges; i++) {
    const struct span *r = &ranges[i];
    if (r->tid != call->tid || r->begin_ns > call->begin_ns || r->end_ns < call->end_ns) continue;
    if (!best || r->begin_ns >= best->begin_ns) best = r;
  }
  return best;
}

/* Checks every launch of kernel: count, timed on the GPU, innermost range. */
static uint64_t check_kernel(const char *kernel, int count, const char *range) {
  int seen = 0;
  uint64_t tid = 0;
  for (int i = 0; i < nlaunches; i++) {
    if (strcmp(launches[i].name, kernel) != 0) continue;
    seen++;
    const struct span *call = find_corr(apis, napis, launches[i].corr);
    const struct span *gpu = find_corr(gpus, ngpus, launches[i].corr);
    CHECK(call, "%s corr %llu: no API record", kernel, (unsigned long long)launches[i].corr);
    CHECK(gpu && gpu->gpu_type == CT_GPU_KERNEL, "%s corr %llu: no GPU kernel record", kernel,
          (unsigned long long)launches[i].corr);
    if (!call) continue;
    tid = call->tid;
    const struct span *in = innermost_range(call);
    const char *got = in ? in->name : "(none)";
    CHECK(strcmp(got, range) == 0, "%s launched in range \"%s\", expected \"%s\"", kernel, got,
          range);
  }
  CHECK(seen == count, "%s launched %d times, expected %d", kernel, seen, count);
  return tid;
}

static const struct span *range_named(const char *name) {
  const struct span *found = NULL;
  int n = 0;
  for (int i = 0; i < nranges; i++)
    if (strcmp(ranges[i].name, name) == 0) found = &ranges[i], n++;
  CHECK(n == 1, "range \"%s\" recorded %d times, expected once", name, n);
  return found;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_nvtx_kernels LIBTRACE_SO NVTX_KERNELS SIM_DIR\n");
    return 1;
  }
  char driver[4096];
  snprintf(driver, sizeof driver, "%s/libcuda.so.1", argv[3]);
  if (access(driver, R_OK) != 0) {
    printf("skip: no simulated libcuda.so.1 in %s\n", argv[3]);
    return 77;
  }
  char scratch[4096];
  char *dir = ct_scratch_dir("cutrace-nvtxk-", scratch, sizeof scratch);
  if (!dir) return 1;
  char output[4200], sim[4200], preload[4200];
  snprintf(output, sizeof output, "CUTRACE_OUTPUT=%s", dir);
  snprintf(sim, sizeof sim, "LD_LIBRARY_PATH=%s", argv[3]);
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[1]);
  const char *env[] = {output, sim, "LD_BIND_NOW=1", preload, "NVTX_INJECTION64_PATH",
                       "CUTRACE_NVTX", NULL};
  char *run_argv[] = {argv[2], NULL};
  int pid = 0;
  int status = check_run(env, run_argv, &pid);
  CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "nvtx_kernels exit status %d", status);
  if (!read_trace(dir)) {
    ct_scratch_done(dir, 0);
    return 1;
  }

  CHECK(nranges == 5, "%d ranges, expected 5 (step, phase_a, copy, t1_work, t1_leak)", nranges);
  const struct span *step = range_named("step"), *phase_a = range_named("phase_a");
  const struct span *copy = range_named("copy"), *t1_work = range_named("t1_work");
  if (step && phase_a && copy && t1_work) {
    CHECK(step->depth == 0 && phase_a->depth == 1 && copy->depth == 1 && t1_work->depth == 0,
          "depths %llu %llu %llu %llu, expected 0 1 1 0", (unsigned long long)step->depth,
          (unsigned long long)phase_a->depth, (unsigned long long)copy->depth,
          (unsigned long long)t1_work->depth);
    CHECK(step->tid == (uint64_t)pid && phase_a->tid == step->tid && copy->tid == step->tid,
          "main-thread ranges not on the main thread");
    CHECK(t1_work->tid != step->tid, "t1_work on the main thread");
  }
  const struct span *t1_leak = range_named("t1_leak");
  if (t1_leak && t1_work)
    CHECK(t1_leak->tid == t1_work->tid && t1_leak->flags == CT_RANGE_UNCLOSED &&
              t1_leak->begin_ns >= t1_work->end_ns,
          "t1_leak: tid %llu flags %#llx, expected the worker's and CT_RANGE_UNCLOSED",
          (unsigned long long)t1_leak->tid, (unsigned long long)t1_leak->flags);
  uint64_t main_tid = check_kernel("nvtx_kernel_a", 2, "phase_a");
  CHECK(check_kernel("nvtx_kernel_b", 1, "(none)") == main_tid, "nvtx_kernel_b thread");
  uint64_t worker_tid = check_kernel("nvtx_kernel_c", 1, "t1_work");
  CHECK(worker_tid != main_tid, "nvtx_kernel_c launched from the main thread");
  int copies = 0;
  for (int i = 0; i < napis; i++) {
    if (strcmp(apis[i].name, "cudaMemcpy") != 0) continue;
    copies++;
    const struct span *in = innermost_range(&apis[i]);
    CHECK(in && strcmp(in->name, "copy") == 0, "cudaMemcpy in range \"%s\", expected \"copy\"",
          in ? in->name : "(none)");
  }
  CHECK(copies == 1, "%d cudaMemcpy calls, expected 1", copies);

  if (check_failures == 0) printf("ok: 4 kernels and 1 copy attributed to their innermost ranges\n");
  ct_scratch_done(dir, check_failures == 0);
  return check_failures ? 1 : 0;
}
