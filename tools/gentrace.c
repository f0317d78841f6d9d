/*
 * cutrace-gentrace: writes synthetic traces of known content, for tests and
 * benchmarks.
 *
 *   cutrace-gentrace FILE N [CHUNK_BYTES]
 *       a launch loop: PROCESS, DEVICE, then N launches (API + LAUNCH + GPU) of one
 *       kernel on one stream, 3 us calls every 4 us, 2 us kernels, and an END record.
 *   cutrace-gentrace --drops FILE N [CHUNK_BYTES]
 *       the launch loop on two streams with records missing, as when the tracer's
 *       buffers overflow: of every 10 launches, 3 lose their GPU record and 1 its API
 *       and LAUNCH records (its GPU record comes without its call); a DROP record
 *       after every 1000 launches counts what they lost. N/10*9 spans, N/10*7 kernels
 *       of which N/10 without their call (N a multiple of 1000).
 *   cutrace-gentrace --ranged FILE N STEP_CALLS OUTER [CHUNK_BYTES]
 *       the launch loop inside NVTX ranges: a range "step" around every STEP_CALLS
 *       launches (none when 0), and with OUTER 1 one range "train" around them all (the
 *       steps then at depth 1). Each launch's GPU record comes after the next launch's
 *       call (the last call of a step is pending when the step closes). A step holds
 *       STEP_CALLS kernels of 2 us; train holds N.
 *   cutrace-gentrace --mixed FILE ITERATIONS [PID [CHUNK_BYTES]]
 *       a realistic mix (see gen_mixed below and docs/report.md "Testing"): two
 *       application threads and a tracer thread, three streams, three kernels of
 *       varied durations, pinned and pageable copies in every direction, memsets,
 *       two GEMM shapes, stream syncs, nested NVTX ranges and tracer flushes. Every
 *       total is a simple function of ITERATIONS, so tests can assert exact answers.
 *   cutrace-gentrace --mixed --two-devices FILE ITERATIONS [PID [CHUNK_BYTES]]
 *       the same on two devices: stream 8 (the worker's asynchronous work) is on
 *       device 1, everything else on device 0 (a selection benchmark: `gaps --device 1`).
 *   cutrace-gentrace --churn FILE SHAPE N [CHUNK_BYTES]
 *       N distinct keys of one kind (kernel names, range names, streams, threads, call
 *       sites, graph exec versions), a launch each: gentrace_churn.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "gentrace.h"
#include "helper_args.h"

static uint64_t records_written;
static uint64_t stream8_device; /* --two-devices: 1 */

static void add(ct_file_writer *w, ct_record *r) {
  if (ct_file_writer_add(w, r) < 0) {
    perror("cutrace-gentrace");
    exit(1);
  }
  records_written++;
  memset(r, 0, sizeof *r);
}

static void add_string(ct_file_writer *w, uint64_t id, const char *s, size_t len) {
  if (ct_file_writer_add_string(w, id, s, len) < 0) {
    perror("cutrace-gentrace");
    exit(1);
  }
  records_written++;
}

static void add_process(ct_file_writer *w, uint64_t pid, uint64_t host, uint64_t cmd,
                        uint64_t devname) {
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process = (struct ct_process){.pid = pid, .ppid = 1, .start_ns = 1000000000ull,
                                    .realtime_ns = 1700000000000000000ull, .host = host,
                                    .cmdline = cmd, .driver_version = 13000,
                                    .runtime_version = 13000};
  add(w, &r);
  r.kind = CT_KIND_DEVICE;
  r.u.device = (struct ct_device){.device = 0, .name = devname, .cc_major = 9, .sm_count = 132,
                                  .mem_bytes = 141ull << 30};
  add(w, &r);
  if (stream8_device) {
    r.kind = CT_KIND_DEVICE;
    r.u.device = (struct ct_device){.device = 1, .name = devname, .cc_major = 9, .sm_count = 132,
                                    .mem_bytes = 141ull << 30};
    add(w, &r);
  }
}

static void add_end(ct_file_writer *w, uint64_t end_ns) {
  ct_record r = {0};
  r.kind = CT_KIND_END;
  r.u.end = (struct ct_end){.records = records_written + 1, .end_ns = end_ns};
  add(w, &r);
}

/* The launch loop (the original generator; scripts/bench and test_tools.py use it);
 * with drops, the --drops variant. */
static void gen_loop(ct_file_writer *w, unsigned long long n, int drops) {
  static const char cmd[] = "./launch_loop\0" "1000";
  add_string(w, 1, "gen-host", 8);
  add_string(w, 2, cmd, sizeof cmd - 1);
  add_string(w, 3, "cutrace simulated GPU", 21);
  add_string(w, 4, "__cudaLaunchKernel", 18);
  add_string(w, 5, "_Z5emptyv", 9);
  add_process(w, 4242, 1, 2, 3);
  ct_record r = {0};
  uint64_t t = 1000100000ull;
  for (unsigned long long i = 0; i < n; i++) {
    unsigned k = drops ? i % 10 : 1;
    uint64_t stream = drops ? 1 + i % 2 : 0; /* two streams: 2 us kernels every 8 us each */
    if (k != 8) { /* drops: the call's records lost */
      r.kind = CT_KIND_API;
      r.u.api = (struct ct_api){.tid = 4242, .name = 4, .begin_ns = t, .end_ns = t + 3000,
                                .corr = i + 1, .stream = stream, .flags = CT_API_TIMED};
      add(w, &r);
      r.kind = CT_KIND_LAUNCH;
      r.u.launch = (struct ct_launch){.corr = i + 1, .kernel = 5, .grid_x = 1, .grid_y = 1,
                                      .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1};
      add(w, &r);
    }
    if (k != 0 && k != 3 && k != 6) { /* drops: the GPU record lost */
      r.kind = CT_KIND_GPU;
      r.u.gpu = (struct ct_gpu){.corr = i + 1, .stream = stream, .start_ns = t + 5000,
                                .end_ns = t + 7000, .type = CT_GPU_KERNEL, .name = 5};
      add(w, &r);
    }
    if (drops && i % 1000 == 999) {
      r.kind = CT_KIND_DROP;
      r.u.drop = (struct ct_drop){.tid = 4242, .count = 500, .first_ns = t - 3996000,
                                  .last_ns = t};
      add(w, &r);
    }
    t += 4000;
  }
  add_end(w, t);
}

/* The launch loop in ranges (--ranged): 3 us calls every 4 us, steps separated by 1 us. */
static void gen_ranged(ct_file_writer *w, unsigned long long n, unsigned long long step_calls,
                       int outer) {
  static const char cmd[] = "./ranged";
  add_string(w, 1, "gen-host", 8);
  add_string(w, 2, cmd, sizeof cmd - 1);
  add_string(w, 3, "cutrace simulated GPU", 21);
  add_string(w, 4, "__cudaLaunchKernel", 18);
  add_string(w, 5, "_Z5emptyv", 9);
  add_string(w, 6, "step", 4);
  add_string(w, 7, "train", 5);
  add_process(w, 4242, 1, 2, 3);
  ct_record r = {0};
  const uint64_t t0 = 1000100000ull;
  uint64_t t = t0, step_begin = t, pending_corr = 0, pending_t = 0;
  for (unsigned long long i = 0; i < n; i++) {
    r.kind = CT_KIND_API;
    r.u.api = (struct ct_api){.tid = 4242, .name = 4, .begin_ns = t, .end_ns = t + 3000,
                              .corr = i + 1, .flags = CT_API_TIMED};
    add(w, &r);
    r.kind = CT_KIND_LAUNCH;
    r.u.launch = (struct ct_launch){.corr = i + 1, .kernel = 5, .grid_x = 1, .grid_y = 1,
                                    .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1};
    add(w, &r);
    if (pending_corr) {
      r.kind = CT_KIND_GPU;
      r.u.gpu = (struct ct_gpu){.corr = pending_corr, .start_ns = pending_t + 5000,
                                .end_ns = pending_t + 7000, .type = CT_GPU_KERNEL, .name = 5};
      add(w, &r);
    }
    pending_corr = i + 1;
    pending_t = t;
    t += 4000;
    if (step_calls && (i + 1) % step_calls == 0) {
      r.kind = CT_KIND_RANGE;
      r.u.range = (struct ct_range){.tid = 4242, .name = 6, .begin_ns = step_begin,
                                    .end_ns = t - 500, .depth = outer ? 1 : 0};
      add(w, &r);
      t += 1000;
      step_begin = t;
    }
  }
  if (outer) {
    r.kind = CT_KIND_RANGE;
    r.u.range = (struct ct_range){.tid = 4242, .name = 7, .begin_ns = t0, .end_ns = t};
    add(w, &r);
  }
  if (pending_corr) {
    r.kind = CT_KIND_GPU;
    r.u.gpu = (struct ct_gpu){.corr = pending_corr, .start_ns = pending_t + 5000,
                              .end_ns = pending_t + 7000, .type = CT_GPU_KERNEL, .name = 5};
    add(w, &r);
  }
  add_end(w, t + 10000);
}

/* ---- the mixed scenario ----------------------------------------------------------- */

/* String ids of the mixed scenario. */
enum {
  S_HOST = 1, S_CMD, S_DEV, S_MAIN, S_WORKER, S_WRITER, S_MEMCPY_ASYNC, S_MEMCPY,
  S_MEMSET_ASYNC, S_LAUNCH, S_CU_LAUNCH, S_SGEMM, S_GEMM_BATCHED, S_STREAM_SYNC, S_VADD,
  S_REDUCE, S_SOFTMAX, S_STEP, S_FORWARD, S_FLUSH, S_COUNT
};

static const char *const mixed_strings[S_COUNT] = {
    [S_HOST] = "gen-host", [S_DEV] = "cutrace simulated GPU", [S_MAIN] = "main",
    [S_WORKER] = "worker", [S_WRITER] = "cutrace-writer",
    [S_MEMCPY_ASYNC] = "cudaMemcpyAsync", [S_MEMCPY] = "cudaMemcpy",
    [S_MEMSET_ASYNC] = "cudaMemsetAsync", [S_LAUNCH] = "__cudaLaunchKernel",
    [S_CU_LAUNCH] = "cuLaunchKernel", [S_SGEMM] = "cublasSgemm_v2",
    [S_GEMM_BATCHED] = "cublasGemmStridedBatchedEx",
    [S_STREAM_SYNC] = "cudaStreamSynchronize", [S_VADD] = "_Z4vaddPKfS0_Pfi",
    [S_REDUCE] = "_Z6reduceILi256EEvPKfPfi", [S_SOFTMAX] = "_Z11softmax_rowPfi",
    [S_STEP] = "step", [S_FORWARD] = "forward", [S_FLUSH] = "flush",
};

typedef struct mixed {
  ct_file_writer *w;
  uint64_t pid, corr;
} mixed;

/* One intercepted call: API record [b, e) on tid, returns its corr (0 when no GPU work). */
static uint64_t call(mixed *g, uint64_t tid, uint64_t name, uint64_t b, uint64_t e,
                     uint64_t stream, int gpu_work, uint64_t flags) {
  ct_record r = {0};
  uint64_t corr = ++g->corr;
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = tid, .name = name, .begin_ns = b, .end_ns = e,
                            .corr = corr, .stream = stream,
                            .device = stream == 8 ? stream8_device : 0,
                            .flags = flags | (gpu_work ? CT_API_TIMED : 0)};
  add(g->w, &r);
  return corr;
}

static void gpu(mixed *g, uint64_t corr, uint64_t stream, uint64_t s, uint64_t e,
                uint64_t type, uint64_t name) {
  ct_record r = {0};
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = corr, .device = stream == 8 ? stream8_device : 0,
                            .stream = stream, .start_ns = s, .end_ns = e, .type = type,
                            .name = name};
  add(g->w, &r);
}

static void launch(mixed *g, uint64_t tid, uint64_t api, uint64_t kernel, uint64_t b,
                   uint64_t e, uint64_t stream, uint64_t gs, uint64_t ge, uint64_t flags) {
  uint64_t corr = call(g, tid, api, b, e, stream, 1, flags);
  ct_record r = {0};
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){.corr = corr, .kernel = kernel, .grid_x = 256, .grid_y = 1,
                                  .grid_z = 1, .block_x = 256, .block_y = 1, .block_z = 1,
                                  .shmem = 1024};
  add(g->w, &r);
  gpu(g, corr, stream, gs, ge, CT_GPU_KERNEL, kernel);
}

/* A copy or set. sync = the GPU record is written before the API record, as a
 * synchronous copy's would be. */
static void memop(mixed *g, uint64_t tid, uint64_t api, uint64_t b, uint64_t e, uint64_t stream,
                  uint64_t kind, uint64_t bytes, uint64_t src, uint64_t dst, uint64_t gs,
                  uint64_t ge, int sync) {
  uint64_t type = kind == CT_MEMOP_MEMSET ? CT_GPU_MEMSET : CT_GPU_MEMCPY;
  if (sync) gpu(g, g->corr + 1, stream, gs, ge, type, 0);
  uint64_t corr = call(g, tid, api, b, e, stream, 1, 0);
  ct_record r = {0};
  r.kind = CT_KIND_MEMOP;
  r.u.memop = (struct ct_memop){.corr = corr, .bytes = bytes, .kind = kind, .src_mem = src,
                                .dst_mem = dst, .async = !sync};
  add(g->w, &r);
  if (!sync) gpu(g, corr, stream, gs, ge, type, 0);
}

static void gemm(mixed *g, uint64_t tid, uint64_t api, uint64_t b, uint64_t e, uint64_t stream,
                 uint64_t m, uint64_t n, uint64_t k, uint64_t batch, uint64_t type,
                 uint64_t gs, uint64_t ge) {
  uint64_t corr = call(g, tid, api, b, e, stream, 1, 0);
  ct_record r = {0};
  r.kind = CT_KIND_GEMM;
  r.u.gemm = (struct ct_gemm){.corr = corr, .m = m, .n = n, .k = k, .batch = batch,
                              .atype = type, .btype = type, .ctype = type,
                              .compute_type = 68 /* CUBLAS_COMPUTE_32F */};
  add(g->w, &r);
  gpu(g, corr, stream, gs, ge, CT_GPU_GEMM, 0);
}

static void range(mixed *g, uint64_t tid, uint64_t name, uint64_t b, uint64_t e, uint64_t depth) {
  ct_record r = {0};
  r.kind = CT_KIND_RANGE;
  r.u.range = (struct ct_range){.tid = tid, .name = name, .begin_ns = b, .end_ns = e,
                                .depth = depth};
  add(g->w, &r);
}

/*
 * Iteration i starts at t = 1.0001 s + i * 200 us. Main thread (tid = pid), stream 7:
 * H2D pinned 1 MiB copy (GPU 40 us), vadd (2 us), Sgemm 512^3 (50 us), on odd i a
 * batched half GEMM 128x256x64x8 (10 us), a stream sync; ranges "step" > "forward".
 * Worker (tid = pid + 1): reduce<256> on stream 8 (1..5 us, i % 5), a synchronous
 * pageable DtoH 4 KiB on stream 0 (2 us), on i % 4 == 0 a 64 KiB memset (1 us), on
 * even i a DtoD 2 MiB copy (10 us) and softmax_row via cuLaunchKernel (10 us), both on
 * stream 8. Writer thread (tid = pid + 2): a "flush" every 8th iteration (20 us).
 */
static void gen_mixed(ct_file_writer *w, unsigned long long iters, uint64_t pid) {
  char cmd[64];
  int cl = snprintf(cmd, sizeof cmd, "./mixed%c%llu", 0, iters);
  for (int id = 1; id < S_COUNT; id++) {
    if (id == S_CMD) add_string(w, S_CMD, cmd, (size_t)cl);
    else add_string(w, (uint64_t)id, mixed_strings[id], strlen(mixed_strings[id]));
  }
  add_process(w, pid, S_HOST, S_CMD, S_DEV);
  mixed g = {.w = w, .pid = pid};
  const uint64_t main_tid = pid, worker = pid + 1, writer = pid + 2;
  ct_record r = {0};
  static const uint64_t names[3] = {S_MAIN, S_WORKER, S_WRITER};
  for (int i = 0; i < 3; i++) {
    r.kind = CT_KIND_THREAD;
    r.u.thread = (struct ct_thread){.tid = pid + (uint64_t)i, .name = names[i],
                                    .start_ns = 1000000000ull};
    add(w, &r);
  }
  static const uint64_t streams[3][2] = {{0, CT_STREAM_LEGACY}, {7, CT_STREAM_NON_BLOCKING},
                                         {8, CT_STREAM_NON_BLOCKING}};
  for (int i = 0; i < 3; i++) {
    r.kind = CT_KIND_STREAM;
    r.u.stream = (struct ct_stream){.stream = streams[i][0], .handle = 0x5000 + streams[i][0],
                                    .device = streams[i][0] == 8 ? stream8_device : 0,
                                    .flags = streams[i][1]};
    add(w, &r);
  }
  uint64_t t = 1000100000ull;
  for (unsigned long long i = 0; i < iters; i++, t += 200000) {
    /* main thread */
    memop(&g, main_tid, S_MEMCPY_ASYNC, t, t + 4000, 7, CT_MEMOP_H2D, 1 << 20, CT_MEM_PINNED,
          CT_MEM_DEVICE, t + 5000, t + 45000, 0);
    launch(&g, main_tid, S_LAUNCH, S_VADD, t + 6000, t + 9000, 7, t + 45000, t + 47000, 0);
    gemm(&g, main_tid, S_SGEMM, t + 10000, t + 18000, 7, 512, 512, 512, 1, 0 /* CUDA_R_32F */,
         t + 47000, t + 97000);
    if (i & 1)
      gemm(&g, main_tid, S_GEMM_BATCHED, t + 19000, t + 24000, 7, 128, 256, 64, 8,
           2 /* CUDA_R_16F */, t + 97000, t + 107000);
    call(&g, main_tid, S_STREAM_SYNC, t + 25000, t + 107500, 7, 0, 0);
    range(&g, main_tid, S_FORWARD, t + 6000, t + 24500, 1);
    range(&g, main_tid, S_STEP, t, t + 108000, 0);
    /* worker thread */
    launch(&g, worker, S_LAUNCH, S_REDUCE, t + 2000, t + 5000, 8, t + 6000,
           t + 6000 + 1000 * (1 + i % 5), 0);
    memop(&g, worker, S_MEMCPY, t + 20000, t + 60000, 0, CT_MEMOP_D2H, 4096, CT_MEM_DEVICE,
          CT_MEM_PAGEABLE, t + 50000, t + 52000, 1);
    if (i % 4 == 0)
      memop(&g, worker, S_MEMSET_ASYNC, t + 61000, t + 63000, 8, CT_MEMOP_MEMSET, 65536,
            CT_MEM_UNKNOWN, CT_MEM_DEVICE, t + 64000, t + 65000, 0);
    if (i % 2 == 0) {
      memop(&g, worker, S_MEMCPY_ASYNC, t + 66000, t + 68000, 8, CT_MEMOP_D2D, 2 << 20,
            CT_MEM_DEVICE, CT_MEM_DEVICE, t + 70000, t + 80000, 0);
      launch(&g, worker, S_CU_LAUNCH, S_SOFTMAX, t + 69000, t + 71000, 8, t + 80000,
             t + 90000, CT_API_DRIVER);
    }
    /* the tracer's writer thread */
    if (i % 8 == 0) {
      r.kind = CT_KIND_TRACER;
      r.u.tracer = (struct ct_tracer){.tid = writer, .what = S_FLUSH, .begin_ns = t + 150000,
                                      .end_ns = t + 170000, .amount = 65536};
      add(w, &r);
    }
  }
  add_end(w, t);
}

static const char usage[] =
    "usage: cutrace-gentrace FILE N [CHUNK_BYTES]\n"
    "       cutrace-gentrace --drops FILE N [CHUNK_BYTES]\n"
    "       cutrace-gentrace --mixed [--two-devices] FILE ITERATIONS [PID [CHUNK_BYTES]]\n"
    "       cutrace-gentrace --ranged FILE N STEP_CALLS OUTER [CHUNK_BYTES]\n"
    "       cutrace-gentrace --churn FILE SHAPE N [CHUNK_BYTES]\n"
    "  Writes FILE, a synthetic trace of known content for tests and benchmarks\n"
    "  (tools/gentrace.c says what each holds):\n"
    "  (none)    a launch loop: N launches of one 2 us kernel, 3 us calls every 4 us\n"
    "  --drops   the launch loop on two streams with records missing, DROP records\n"
    "  --mixed   a realistic mix of threads, streams, copies, GEMMs, syncs and ranges\n"
    "            (--two-devices: its stream 8 on device 1)\n"
    "  --ranged  the launch loop inside NVTX ranges \"step\" (and \"train\" when OUTER is 1)\n"
    "  --churn   N distinct keys of one kind, a launch each; SHAPE is kernels, ranges,\n"
    "            streams, threads, sites or graphs (tools/gentrace_churn.c)\n";

/* The writing functions of gentrace.h, for gentrace_churn.c. */
void gt_add(ct_file_writer *w, ct_record *r) { add(w, r); }
void gt_add_string(ct_file_writer *w, uint64_t id, const char *s, size_t len) {
  add_string(w, id, s, len);
}
void gt_add_process(ct_file_writer *w, uint64_t pid, uint64_t host, uint64_t cmd,
                    uint64_t devname) {
  add_process(w, pid, host, cmd, devname);
}
void gt_add_end(ct_file_writer *w, uint64_t end_ns) { add_end(w, end_ns); }

static const char prog[] = "cutrace-gentrace";

/* --churn FILE SHAPE N [CHUNK_BYTES] (operands in arg[0 .. n-1]). */
static int churn_main(const char **arg, int n) {
  if (n < 3 || n > 4) return ha_usage_error(prog, "--churn takes FILE SHAPE N [CHUNK_BYTES]");
  int shape = gt_churn_parse(arg[1]);
  if (shape < 0)
    return ha_usage_error(prog, "SHAPE is kernels, ranges, streams, threads, sites or graphs");
  uint64_t keys, chunk = 1 << 20;
  if (ha_number(prog, "N", arg[2], &keys) ||
      (n == 4 && ha_number(prog, "CHUNK_BYTES", arg[3], &chunk)))
    return 2;
  ct_file_writer *w = ct_file_writer_open(arg[0], chunk);
  if (!w) {
    perror(arg[0]);
    return 1;
  }
  gt_gen_churn(w, (gt_churn)shape, keys);
  return ct_file_writer_close(w) < 0 ? 1 : 0;
}

int main(int argc, char **argv) {
  int drops = 0, mixed = 0, ranged = 0, two_devices = 0, churn = 0;
  const ha_option opts[] = {{"--drops", NULL, &drops},   {"--mixed", NULL, &mixed},
                            {"--ranged", NULL, &ranged}, {"--two-devices", NULL, &two_devices},
                            {"--churn", NULL, &churn},   {NULL, NULL, NULL}};
  const char *arg[5];
  int n;
  int rc = ha_parse(prog, usage, argc, argv, opts, arg, 5, &n);
  if (rc >= 0) return rc;
  if (drops + mixed + ranged + churn > 1)
    return ha_usage_error(prog, "takes one of --drops, --mixed, --ranged, --churn");
  if (two_devices && !mixed) return ha_usage_error(prog, "--two-devices goes with --mixed");
  stream8_device = two_devices ? 1 : 0;
  if (churn) return churn_main(arg, n);
  /* operands after FILE: their names, and how many are required */
  static const char *const loop_names[] = {"N", "CHUNK_BYTES"};
  static const char *const mixed_names[] = {"ITERATIONS", "PID", "CHUNK_BYTES"};
  static const char *const ranged_names[] = {"N", "STEP_CALLS", "OUTER", "CHUNK_BYTES"};
  const char *const *names = mixed ? mixed_names : ranged ? ranged_names : loop_names;
  int required = ranged ? 3 : 1, most = ranged ? 4 : mixed ? 3 : 2;
  if (n < 1 + required || n > 1 + most)
    return ha_usage_error(prog, !n       ? "needs the FILE to write"
                                : ranged ? "--ranged takes FILE N STEP_CALLS OUTER [CHUNK_BYTES]"
                                : mixed  ? "--mixed takes FILE ITERATIONS [PID [CHUNK_BYTES]]"
                                         : "takes FILE N [CHUNK_BYTES]");
  uint64_t v[4] = {0, mixed ? 4242 : 0, 0, 0};
  for (int i = 1; i < n; i++)
    if (ha_number(prog, names[i - 1], arg[i], &v[i - 1])) return 2;
  uint64_t chunk = n == 2 + most - 1 ? v[most - 1] : 1 << 20;
  if (ranged && v[2] > 1) return ha_usage_error(prog, "OUTER takes 0 or 1");
  ct_file_writer *w = ct_file_writer_open(arg[0], chunk);
  if (!w) {
    perror(arg[0]);
    return 1;
  }
  if (ranged) gen_ranged(w, v[0], v[1], (int)v[2]);
  else if (mixed) gen_mixed(w, v[0], v[1]);
  else gen_loop(w, v[0], drops);
  return ct_file_writer_close(w) < 0 ? 1 : 0;
}
