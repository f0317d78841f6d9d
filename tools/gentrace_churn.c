/*
 * cutrace-gentrace --churn FILE SHAPE N: N distinct keys of one kind, for measuring what
 * the post-processor keeps per distinct key (docs/performance.md "Memory per distinct
 * key"). One process (pid 4242), a launch per key: a 3 us call every 4 us on thread 4242
 * and stream 0 unless the shape varies them, its 2 us kernel "_Z5emptyv" starting 2 us
 * after the call ends. Shapes (i = 0 .. N-1):
 *   kernels  launch i runs kernel "triton_poi_fused_<i>" (JIT-compiled names)
 *   ranges   an NVTX range "step <i>" around launch i (a step number in the name)
 *   streams  launch i on stream i + 1 (a STREAM record each)
 *   threads  launch i from thread 10000 + i (a THREAD record each)
 *   sites    launch i from call site i + 1: STACK node i + 1 (pc 0x400000 + 16 i) under
 *            node 0 ... a one-frame stack each
 *   graphs   graph exec 1 updated to inventory version i + 1 (cudaGraphExecUpdate:
 *            "_Z3fixv" x2 and "_Z4odd_v" or "_Z5even_v" x1 by the version's parity),
 *            then launched once (cudaGraphLaunch, a 5 us graph activity)
 */
#include <stdio.h>
#include <string.h>

#include "gentrace.h"

static const char *const shape_names[GT_CHURN_COUNT] = {
    [GT_CHURN_KERNELS] = "kernels", [GT_CHURN_RANGES] = "ranges",
    [GT_CHURN_STREAMS] = "streams", [GT_CHURN_THREADS] = "threads",
    [GT_CHURN_SITES] = "sites",     [GT_CHURN_GRAPHS] = "graphs"};

int gt_churn_parse(const char *s) {
  for (int i = 0; i < GT_CHURN_COUNT; i++)
    if (!strcmp(s, shape_names[i])) return i;
  return -1;
}

/* String ids: fixed ones, then one per key from S_KEY0. */
enum { S_HOST = 1, S_CMD, S_DEV, S_LAUNCH, S_EMPTY, S_UPDATE, S_GRAPH_LAUNCH, S_FIX, S_ODD,
       S_EVEN, S_KEY0 = 100 };

static const char *const fixed[S_KEY0] = {
    [S_HOST] = "gen-host", [S_CMD] = "./churn", [S_DEV] = "cutrace simulated GPU",
    [S_LAUNCH] = "__cudaLaunchKernel", [S_EMPTY] = "_Z5emptyv",
    [S_UPDATE] = "cudaGraphExecUpdate", [S_GRAPH_LAUNCH] = "cudaGraphLaunch",
    [S_FIX] = "_Z3fixv", [S_ODD] = "_Z4odd_v", [S_EVEN] = "_Z5even_v"};

/* A string made for key i (its id S_KEY0 + i). */
static uint64_t key_string(ct_file_writer *w, const char *fmt, uint64_t i) {
  char b[64];
  int n = snprintf(b, sizeof b, fmt, (unsigned long long)i);
  gt_add_string(w, S_KEY0 + i, b, (size_t)n);
  return S_KEY0 + i;
}

/* Graph exec 1 updated to version v (its update call is corr), then launched (corr + 1)
 * at t. */
static void graph_step(ct_file_writer *w, uint64_t v, uint64_t corr, uint64_t t) {
  ct_record r = {0};
  r.kind = CT_KIND_GRAPH;
  r.u.graph = (struct ct_graph){.corr = corr, .exec = 1, .nodes = 3, .kernels = 3, .version = v};
  gt_add(w, &r);
  r.kind = CT_KIND_GRAPH_KERNEL;
  r.u.graph_kernel = (struct ct_graph_kernel){.exec = 1, .name = S_FIX, .count = 2, .version = v};
  gt_add(w, &r);
  r.kind = CT_KIND_GRAPH_KERNEL;
  r.u.graph_kernel =
      (struct ct_graph_kernel){.exec = 1, .name = v % 2 ? S_ODD : S_EVEN, .count = 1, .version = v};
  gt_add(w, &r);
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = 4242, .name = S_UPDATE, .begin_ns = t, .end_ns = t + 1000,
                            .corr = corr};
  gt_add(w, &r);
  r.kind = CT_KIND_GRAPH_LAUNCH;
  r.u.graph_launch = (struct ct_graph_launch){.corr = corr + 1, .exec = 1, .version = v};
  gt_add(w, &r);
  r.kind = CT_KIND_API;
  r.u.api = (struct ct_api){.tid = 4242, .name = S_GRAPH_LAUNCH, .begin_ns = t + 1500,
                            .end_ns = t + 3000, .corr = corr + 1, .flags = CT_API_TIMED};
  gt_add(w, &r);
  r.kind = CT_KIND_GPU;
  r.u.gpu = (struct ct_gpu){.corr = corr + 1, .start_ns = t + 3500, .end_ns = t + 8500,
                            .type = CT_GPU_GRAPH, .name = S_GRAPH_LAUNCH};
  gt_add(w, &r);
}

void gt_gen_churn(ct_file_writer *w, gt_churn shape, uint64_t n) {
  for (int id = 1; id < S_KEY0; id++)
    if (fixed[id]) gt_add_string(w, (uint64_t)id, fixed[id], strlen(fixed[id]));
  gt_add_process(w, 4242, S_HOST, S_CMD, S_DEV);
  ct_record r = {0};
  uint64_t t = 1000100000ull, corr = 1;
  for (uint64_t i = 0; i < n; i++, t += shape == GT_CHURN_GRAPHS ? 10000 : 4000) {
    if (shape == GT_CHURN_GRAPHS) {
      graph_step(w, i + 1, corr, t);
      corr += 2;
      continue;
    }
    uint64_t tid = 4242, stream = 0, kernel = S_EMPTY, stack = 0;
    if (shape == GT_CHURN_KERNELS) kernel = key_string(w, "triton_poi_fused_%llu", i);
    if (shape == GT_CHURN_STREAMS) {
      stream = i + 1;
      r.kind = CT_KIND_STREAM;
      r.u.stream = (struct ct_stream){.stream = stream, .handle = 0x50000 + stream,
                                      .flags = CT_STREAM_NON_BLOCKING};
      gt_add(w, &r);
    }
    if (shape == GT_CHURN_THREADS) {
      tid = 10000 + i;
      r.kind = CT_KIND_THREAD;
      r.u.thread = (struct ct_thread){.tid = tid, .start_ns = t - 100};
      gt_add(w, &r);
    }
    if (shape == GT_CHURN_SITES) {
      stack = i + 1;
      r.kind = CT_KIND_STACK;
      r.u.stack = (struct ct_stack){.id = stack, .pc = 0x400000 + 16 * i};
      gt_add(w, &r);
    }
    r.kind = CT_KIND_LAUNCH;
    r.u.launch = (struct ct_launch){.corr = corr, .kernel = kernel, .grid_x = 1, .grid_y = 1,
                                    .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1};
    gt_add(w, &r);
    r.kind = CT_KIND_API;
    r.u.api = (struct ct_api){.tid = tid, .name = S_LAUNCH, .begin_ns = t, .end_ns = t + 3000,
                              .corr = corr, .stream = stream, .flags = CT_API_TIMED,
                              .stack = stack};
    gt_add(w, &r);
    r.kind = CT_KIND_GPU;
    r.u.gpu = (struct ct_gpu){.corr = corr, .stream = stream, .start_ns = t + 5000,
                              .end_ns = t + 7000, .type = CT_GPU_KERNEL, .name = kernel};
    gt_add(w, &r);
    if (shape == GT_CHURN_RANGES) {
      uint64_t name = key_string(w, "step %llu", i);
      r.kind = CT_KIND_RANGE;
      r.u.range = (struct ct_range){.tid = tid, .name = name, .begin_ns = t - 200,
                                    .end_ns = t + 3500};
      gt_add(w, &r);
    }
    corr++;
  }
  gt_add_end(w, t + 10000);
}
