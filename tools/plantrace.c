/*
 * cutrace-plantrace: writes a trace of planned scenarios with planted GPU idle gaps,
 * and prints the planted answers as JSON on stdout, for tests of `cutrace gaps`.
 *
 * usage: cutrace-plantrace FILE [--pid N] [--loop N [--loop-apis K]] [--pinned N] [--waiting N]
 *                          [--dropped N] [--chunk BYTES]
 *
 * Default: one process, device 0, a sequence of segments, each planting gaps of one
 * cause (host sleeps between launches, syncs, pageable synchronous copies in a loop,
 * a launch-bound stretch, a wait on another stream, tracer flushes, a queued op that
 * starts late, cudaMalloc/cudaFree around every launch) and one stretch of back-to-back kernels with no gap at all. Every
 * GPU operation says which cause the gap before it (if any) was planted with; the
 * expected device gaps are found by sorting and merging the planned intervals (an
 * implementation independent of gaps.c) and must each end at an op with a planted
 * cause.
 *
 * --loop N: N kernels of 2 us launched every 6 us (gaps of 4 us, launch overhead),
 * and every 100th launch 1 ms late (host wait): a long trace with known counts.
 * --loop-apis K: launch i of the loop is made by an entry point of its own,
 * "__cudaLaunchKernel_<i % K>" (K distinct ending calls, for gaps' bounded grouping).
 * --pinned N: after the default scenario, N asynchronous 1 MiB copies from pinned
 * memory to the device, 20 us each on the GPU (the scenario's pageable ones take 40 us:
 * the pinned rate twice the pageable), 100 us apart.
 * --waiting N: gaps waiting for their outermost call. Thread 1001 is inside one
 * cublasSgemm_v2 that never ends (no record: the process died in it) and launches N
 * kernels from it, 20 us apart; then thread 1002 makes 50 cublasLtMatmul calls of
 * 300 us, each launching 3 kernels 100 us apart (every gap before them is read while
 * its cublasLtMatmul still runs). Device gaps: N - 1 under the launches of thread 1001,
 * 150 under cublasLtMatmul.
 * --dropped N: thread 1002 is inside one cublasLtMatmul of 35 ms and launches 4 kernels
 * from it, 100 us apart; meanwhile thread 1004 launches N kernels, 20 us apart, each
 * from an outermost call whose record was dropped, each followed by an outermost
 * cudaGetLastError. Device gaps: 3 under cublasLtMatmul, N under the launches of thread
 * 1004 (their outermost calls lost: their gaps need not wait, so they do not fill the
 * list of waiting gaps and push out the 3 gaps, older, that wait for cublasLtMatmul).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "helper_args.h"

#define US 1000ull
#define T0 1000000000ull /* process start */
#define MAX_STRINGS 2048 /* --loop-apis names up to 2,000 entry points */
#define TID_MAIN 1001
#define TID_HELPER 1002
#define TID_TRACER 1003
#define TID_DROPPED 1004

enum cause { C_NONE = -1, C_HOST_WAIT, C_LAUNCH, C_SYNC, C_ALLOC, C_OTHER_STREAM, C_TRACER, C_OTHER,
             C_EXTERNAL_WAIT, C_COUNT };
static const char *const cause_names[C_COUNT] = {"host_wait", "launch_overhead", "sync", "alloc",
                                                 "other_stream", "tracer", "other",
                                                 "external_wait"};

/* A record with the time the preload would have written it. */
typedef struct item {
  uint64_t when, seq;
  ct_record rec;
} item;

/* A planned GPU operation. */
typedef struct op {
  uint64_t start, end, stream, device;
  int cause_before;
} op;

static item *items;
static size_t nitems, capitems;
static op *ops;
static size_t nops, capops;
static const char *strings[MAX_STRINGS];
static unsigned nstrings;
static uint64_t next_corr = 1;
static unsigned pid = 4242;
static uint64_t cur_device; /* the device launches go to */

static void *grow(void *p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return p;
  *cap = *cap ? *cap * 2 : 1024;
  p = realloc(p, *cap * size);
  if (!p) {
    perror("cutrace-plantrace");
    exit(1);
  }
  return p;
}

static uint64_t sid(const char *s) {
  for (unsigned i = 0; i < nstrings; i++)
    if (!strcmp(strings[i], s)) return i + 1;
  if (nstrings == MAX_STRINGS) exit(1);
  strings[nstrings++] = s;
  return nstrings;
}

static void emit(uint64_t when, const ct_record *r) {
  items = grow(items, &capitems, nitems, sizeof *items);
  items[nitems].when = when;
  items[nitems].seq = nitems;
  items[nitems].rec = *r;
  nitems++;
}

static void plan_op(uint64_t start, uint64_t end, uint64_t stream, int cause_before) {
  ops = grow(ops, &capops, nops, sizeof *ops);
  ops[nops++] = (op){start, end, stream, cur_device, cause_before};
}

/* A CUDA call without GPU work. */
static void call(uint64_t tid, const char *name, uint64_t begin, uint64_t dur) {
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = tid, .name = sid(name), .begin_ns = begin,
                            .end_ns = begin + dur, .corr = next_corr++};
  emit(begin + dur, &r);
}

static void tracer_span(uint64_t tid, const char *what, uint64_t begin, uint64_t dur) {
  ct_record r = {.kind = CT_KIND_TRACER};
  r.u.tracer = (struct ct_tracer){.tid = tid, .what = sid(what), .begin_ns = begin,
                                  .end_ns = begin + dur, .amount = 4096};
  emit(begin + dur, &r);
}

/* A kernel launch: call [cb, cb+cd], kernel [gs, gs+gd] on stream. */
/* The entry point the next launch() names (--loop-apis), NULL for __cudaLaunchKernel. */
static const char *launch_api;

static void launch(uint64_t tid, uint64_t stream, uint64_t cb, uint64_t cd, uint64_t gs,
                   uint64_t gd, const char *kernel, int cause_before) {
  uint64_t corr = next_corr++;
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = tid, .name = sid(launch_api ? launch_api : "__cudaLaunchKernel"),
                            .begin_ns = cb,
                            .end_ns = cb + cd, .corr = corr, .device = cur_device,
                            .stream = stream, .flags = CT_API_TIMED};
  emit(cb + cd, &r);
  r = (ct_record){.kind = CT_KIND_LAUNCH};
  r.u.launch = (struct ct_launch){.corr = corr, .kernel = sid(kernel), .grid_x = 1, .grid_y = 1,
                                  .grid_z = 1, .block_x = 128, .block_y = 1, .block_z = 1};
  emit(cb + cd, &r);
  r = (ct_record){.kind = CT_KIND_GPU};
  r.u.gpu = (struct ct_gpu){.corr = corr, .device = cur_device, .stream = stream, .start_ns = gs,
                            .end_ns = gs + gd, .type = CT_GPU_KERNEL, .name = sid(kernel)};
  emit(gs + gd + 50 * US, &r);
  plan_op(gs, gs + gd, stream, cause_before);
}

/* A copy: call [cb, cb+cd], transfer [gs, gs+gd]. */
static void copy(uint64_t tid, const char *api, uint64_t cb, uint64_t cd, uint64_t gs, uint64_t gd,
                 uint64_t kind, uint64_t bytes, uint64_t src_mem, uint64_t async, int cause_before) {
  uint64_t corr = next_corr++;
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = tid, .name = sid(api), .begin_ns = cb, .end_ns = cb + cd,
                            .corr = corr, .flags = CT_API_TIMED};
  emit(cb + cd, &r);
  r = (ct_record){.kind = CT_KIND_MEMOP};
  r.u.memop = (struct ct_memop){.corr = corr, .bytes = bytes, .kind = kind, .src_mem = src_mem,
                                .dst_mem = CT_MEM_DEVICE, .async = async};
  emit(cb + cd, &r);
  r = (ct_record){.kind = CT_KIND_GPU};
  r.u.gpu = (struct ct_gpu){.corr = corr, .start_ns = gs, .end_ns = gs + gd, .type = CT_GPU_MEMCPY};
  emit(gs + gd + 50 * US, &r);
  plan_op(gs, gs + gd, 0, cause_before);
}

/* ---- the scenario ---------------------------------------------------------------- */

static uint64_t no_gap_from, no_gap_to, other_stream_gap[4];
static uint64_t n_little_syncs, n_alloc_gaps, alloc_gap_ns;
/* the little syncs' time and GPU work, the sync gaps their returns opened: how many,
 * their idle, and their idle after the syncs returned */
static uint64_t little_sync_ns, little_sync_gpu_ns, little_sync_gaps, little_sync_gap_ns,
    little_sync_after_ns, little_sync_twice_ns;

/* Builds the default scenario; returns the end time. */
static uint64_t scenario(void) {
  uint64_t t = T0 + 1000 * US;
  /* 1. Back-to-back: 20 kernels of 20 us, queued ahead (calls 5 us apart): no gap. */
  no_gap_from = t + 10 * US;
  for (int i = 0; i < 20; i++)
    launch(TID_MAIN, 0, t + i * 5 * US, 3 * US, t + 10 * US + i * 20 * US, 20 * US, "_Z6warmupv",
           C_NONE);
  no_gap_to = t + 10 * US + 20 * 20 * US;
  t = no_gap_to;
  /* 2. Host sleeps: 5 x (kernel 50 us, then 500 us outside CUDA with 3 syncs on nothing
   *    in the middle and a 200 us cudaMalloc on the helper thread). Host wait. */
  for (int i = 0; i < 5; i++) {
    uint64_t cb = t + 1000 * US;
    launch(TID_MAIN, 0, cb, 3 * US, cb + 4 * US, 50 * US, "_Z5sleepyPf", C_HOST_WAIT);
    uint64_t end = cb + 54 * US;
    for (int k = 0; k < 3; k++) call(TID_MAIN, "cudaDeviceSynchronize", end + (100 + 100 * k) * US, 3 * US);
    call(TID_HELPER, "cudaMalloc", end + 150 * US, 200 * US);
    t = end + 500 * US - 1000 * US; /* next call 500 us after this kernel's end */
  }
  t += 1000 * US;
  /* 3. Syncs that return late: 5 x (kernel 200 us, cudaDeviceSynchronize returning 150 us
   *    after it ends, the next launch at once). Sync. */
  for (int i = 0; i < 5; i++) {
    uint64_t cb = t + (i ? 0 : 300 * US);
    launch(TID_MAIN, 0, cb, 3 * US, cb + 4 * US, 200 * US, "_Z5stepAPf", i ? C_SYNC : C_HOST_WAIT);
    call(TID_MAIN, "cudaDeviceSynchronize", cb + 3 * US, 351 * US);
    t = cb + 355 * US;
  }
  /* 4. Pageable synchronous copies in a loop: 12 x (cudaMemcpy of 110 us, its transfer
   *    from +60 to +100 us; a 30 us kernel launched at once after the call returns; 105 us
   *    outside CUDA before the next copy, whose call stages for 60 us). The gap before
   *    each kernel is the copy call waiting (sync); the gap before each copy is mostly
   *    outside CUDA (host wait). */
  for (int i = 0; i < 12; i++) {
    uint64_t cb = t + (i ? 0 : 1000 * US);
    copy(TID_MAIN, "cudaMemcpy", cb, 110 * US, cb + 60 * US, 40 * US, CT_MEMOP_H2D, 1 << 20,
         CT_MEM_PAGEABLE, 0, C_HOST_WAIT);
    launch(TID_MAIN, 0, cb + 111 * US, 3 * US, cb + 115 * US, 30 * US, "_Z3usePf", C_SYNC);
    t = cb + 250 * US;
  }
  /* 5. Launch-bound: 50 kernels of 2 us, calls of 8 us back to back (gaps of 6 us). */
  uint64_t lb = t + 500 * US;
  for (int i = 0; i < 50; i++)
    launch(TID_MAIN, 0, lb + i * 8 * US, 8 * US, lb + i * 8 * US + 6 * US, 2 * US, "_Z4tinyv",
           i ? C_LAUNCH : C_HOST_WAIT);
  t = lb + 50 * 8 * US;
  /* 6. Cross-stream: C on stream 2, A on stream 1 covering it, B on stream 2 waiting on
   *    A's event: stream 2 idles 402 us (other stream); the device only 2 us. */
  uint64_t x = t + 1000 * US;
  launch(TID_MAIN, 2, x - 260 * US, 3 * US, x - 150 * US, 50 * US, "_Z1Cv", C_NONE);
  launch(TID_MAIN, 1, x - 240 * US, 3 * US, x - 200 * US, 500 * US, "_Z1Av", C_HOST_WAIT);
  call(TID_MAIN, "cudaStreamWaitEvent", x - 185 * US, 2 * US);
  launch(TID_MAIN, 2, x - 180 * US, 3 * US, x + 302 * US, 50 * US, "_Z1Bv", C_LAUNCH);
  other_stream_gap[0] = x - 100 * US;
  other_stream_gap[1] = x + 302 * US;
  /* 6c. The same, but B2's call comes 10 us after C2 ended: the CPU was a little late,
   *     the stream then sat queued behind A2's event for 390 us (other stream). */
  uint64_t y = x + 1000 * US;
  launch(TID_MAIN, 2, y - 260 * US, 3 * US, y - 150 * US, 50 * US, "_Z1Cv", C_NONE);
  launch(TID_MAIN, 1, y - 240 * US, 3 * US, y - 200 * US, 500 * US, "_Z1Av", C_HOST_WAIT);
  call(TID_MAIN, "cudaStreamWaitEvent", y - 95 * US, 2 * US);
  launch(TID_MAIN, 2, y - 90 * US, 3 * US, y + 302 * US, 50 * US, "_Z1Bv", C_LAUNCH);
  other_stream_gap[2] = y - 100 * US;
  other_stream_gap[3] = y + 302 * US;
  t = y + 352 * US;
  /* 6b. Slow launches back to back: 30 kernels of 2 us, launch calls of 20 us one after
   *     the other (gaps of 18 us, above the threshold, while the thread was launching):
   *     launch overhead, and a second launch-bound stretch. */
  uint64_t sl = t + 1000 * US;
  for (int i = 0; i < 30; i++)
    launch(TID_MAIN, 0, sl + i * 20 * US, 20 * US, sl + i * 20 * US + 18 * US, 2 * US, "_Z4slowv",
           i ? C_LAUNCH : C_HOST_WAIT);
  t = sl + 30 * 20 * US;
  /* 7. Tracer flushes: 3 x (kernel 100 us; right after it the main thread flushes for
   *    400 us, then launches). */
  for (int i = 0; i < 3; i++) {
    uint64_t cb = t + (i ? 0 : 1000 * US);
    launch(TID_MAIN, 0, cb, 3 * US, cb + 4 * US, 100 * US, "_Z4workPf", i ? C_TRACER : C_HOST_WAIT);
    tracer_span(TID_MAIN, "flush", cb + 105 * US, 400 * US);
    t = cb + 506 * US;
  }
  /* 8. Queued long before, started late, no other stream involved: other. */
  uint64_t q = t + 1000 * US;
  launch(TID_MAIN, 0, q, 3 * US, q + 4 * US, 100 * US, "_Z6beforev", C_HOST_WAIT);
  launch(TID_MAIN, 0, q + 10 * US, 3 * US, q + 404 * US, 100 * US, "_Z5laterv", C_OTHER);
  t = q + 504 * US;
  /* 8b. Device 1, from the helper thread: 3 kernels of 100 us on stream 5, launched
   *     400 us apart: two host-wait gaps of 300 us on device 1 only. */
  cur_device = 1;
  for (int i = 0; i < 3; i++)
    launch(TID_HELPER, 5, t + 200 * US + i * 400 * US, 3 * US, t + 204 * US + i * 400 * US, 100 * US,
           "_Z6otherdv", i ? C_HOST_WAIT : C_NONE);
  cur_device = 0;
  /* 9. Syncs on little work: 6 x (kernel 20 us, cudaDeviceSynchronize returning 1 us after
   *    it, the next launch 1 us later: gaps of 6 us, mostly in the launch call, 5 us of
   *    each after the return: launch_overhead, and the little syncs' cost, the queue they
   *    drained, for the two before kernels 2 and 4). The syncs after kernels 0, 2 and 4
   *    return 41 us after their kernel instead: the gap each opens (46 us, 41 of them in
   *    the sync) is sync, 5 us of it after the return. Each sync after the first begins
   *    1 us before its kernel starts: that 1 us of its calls - GPU is the last of the
   *    previous gap's 5 us after a return (counted once: twice_ns). */
  for (int i = 0; i < 6; i++) {
    uint64_t cb = t + (i ? 0 : 1000 * US), late = i % 2 ? 0 : 40 * US;
    launch(TID_MAIN, 0, cb, 3 * US, cb + 4 * US, 20 * US, "_Z5smallv",
           !i ? C_HOST_WAIT : (i - 1) % 2 ? C_LAUNCH : C_SYNC);
    call(TID_MAIN, "cudaDeviceSynchronize", cb + 3 * US, 22 * US + late);
    n_little_syncs++;
    if (i) little_sync_twice_ns += 1 * US;
    little_sync_ns += 22 * US + late;
    little_sync_gpu_ns += 20 * US;
    if (i < 5) { /* the last one's gap is the allocation's (10.) */
      little_sync_gaps++;
      little_sync_gap_ns += late ? 46 * US : 6 * US;
      little_sync_after_ns += 5 * US;
    }
    t = cb + 26 * US + late;
  }
  /* 10. Allocation in the loop: 5 x (cudaMalloc of 300 us, a 100 us kernel launched at
   *     once, cudaFree called right after the launch, waiting for the kernel and returning
   *     250 us after its end; the next cudaMalloc at once). Each gap after the first (the
   *     free's last 250 us, the next malloc, the launch) is alloc: a free that drained the
   *     pipeline is the allocation's cost, not a sync. The fourth gap also holds a 50 us
   *     cudaStreamSynchronize before the malloc: still alloc (the larger amount; the
   *     sync comes later in the precedence). */
  uint64_t kernel_end = 0;
  for (int i = 0; i < 5; i++) {
    uint64_t cb = t + (i ? 0 : 1000 * US);
    if (i == 3) {
      call(TID_MAIN, "cudaStreamSynchronize", cb, 50 * US);
      cb += 50 * US;
    }
    call(TID_MAIN, "cudaMalloc", cb, 300 * US);
    uint64_t l = cb + 300 * US;
    launch(TID_MAIN, 0, l, 3 * US, l + 4 * US, 100 * US, "_Z7scratchPf", i ? C_ALLOC : C_HOST_WAIT);
    call(TID_MAIN, "cudaFree", l + 3 * US, 101 * US + 250 * US);
    if (i) {
      n_alloc_gaps++;
      alloc_gap_ns += l + 4 * US - kernel_end;
    }
    kernel_end = l + 104 * US;
    t = kernel_end + 250 * US;
  }
  /* The tracer's poller, on its own thread, all along: must explain nothing. */
  for (uint64_t p = T0 + 1000 * US; p < t; p += 1000 * US) tracer_span(TID_TRACER, "poll", p, 5 * US);
  return t;
}

/* --pinned N: N pinned HtoD copies of 1 MiB, 20 us on the GPU, after time t; returns the end. */
static uint64_t pinned_copies(uint64_t t, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t cb = t + 1000 * US + i * 100 * US;
    copy(TID_MAIN, "cudaMemcpyAsync", cb, 5 * US, cb + 2 * US, 20 * US, CT_MEMOP_H2D, 1 << 20,
         CT_MEM_PINNED, 1, C_HOST_WAIT);
  }
  return t + 1000 * US + n * 100 * US;
}

/* --loop N: a long launch loop with known gaps. */
static uint64_t loop(uint64_t n, uint64_t apis) {
  uint64_t t = T0 + 1000 * US;
  static char names[2000][32]; /* the strings table keeps pointers */
  if (apis > 2000) {
    fprintf(stderr, "cutrace-plantrace: --loop-apis takes at most 2000\n");
    exit(2);
  }
  for (uint64_t i = 0; i < n; i++) {
    if (apis) {
      snprintf(names[i % apis], sizeof names[0], "__cudaLaunchKernel_%llu", (unsigned long long)(i % apis));
      launch_api = names[i % apis];
    }
    if (i && i % 100 == 0) t += 1000 * US;
    launch(TID_MAIN, 0, t, 3 * US, t + 4 * US, 2 * US, "_Z4stepv",
           i % 100 == 0 ? C_HOST_WAIT : C_LAUNCH);
    t += 6 * US;
  }
  return t;
}

/* A launch at depth 1 inside the outermost call parent (--waiting): call [cb, cb+3 us],
 * kernel of 2 us 4 us after it begins. */
static void nested_launch(uint64_t tid, uint64_t parent, uint64_t cb) {
  uint64_t corr = next_corr++;
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = tid, .name = sid("__cudaLaunchKernel"), .begin_ns = cb,
                            .end_ns = cb + 3 * US, .corr = corr, .device = cur_device,
                            .depth = 1, .parent = parent, .flags = CT_API_TIMED};
  emit(cb + 3 * US, &r);
  r = (ct_record){.kind = CT_KIND_GPU};
  r.u.gpu = (struct ct_gpu){.corr = corr, .device = cur_device, .start_ns = cb + 4 * US,
                            .end_ns = cb + 6 * US, .type = CT_GPU_KERNEL, .name = sid("_Z4gemmv")};
  emit(cb + 56 * US, &r);
  plan_op(cb + 4 * US, cb + 6 * US, 0, C_HOST_WAIT);
}

/* --waiting N: see the top of the file. */
static uint64_t waiting(uint64_t n) {
  uint64_t t = T0 + 1000 * US, stuck = next_corr++; /* its record is never written */
  for (uint64_t i = 0; i < n; i++, t += 20 * US) nested_launch(TID_MAIN, stuck, t);
  for (unsigned i = 0; i < 50; i++, t += 40000 * US) {
    uint64_t corr = next_corr++;
    for (unsigned k = 0; k < 3; k++) nested_launch(TID_HELPER, corr, t + 10 * US + k * 100 * US);
    for (uint64_t q = t + 500 * US; q < t + 35000 * US; q += 500 * US) { /* time goes on meanwhile */
      ct_record r = {.kind = CT_KIND_API};
      r.u.api = (struct ct_api){.tid = TID_HELPER, .name = sid("cudaEventQuery"), .begin_ns = q,
                                .end_ns = q + 2 * US, .corr = next_corr++, .depth = 1, .parent = corr};
      emit(q + 2 * US, &r);
    }
    ct_record r = {.kind = CT_KIND_API};
    r.u.api = (struct ct_api){.tid = TID_HELPER, .name = sid("cublasLtMatmul"), .begin_ns = t,
                              .end_ns = t + 35000 * US, .corr = corr, .device = cur_device};
    emit(t + 35000 * US, &r);
  }
  return t;
}

/* --dropped N: see the top of the file. */
static uint64_t dropped(uint64_t n) {
  uint64_t t = T0 + 1000 * US, corr = next_corr++;
  for (unsigned k = 0; k < 4; k++) nested_launch(TID_HELPER, corr, t + 10 * US + k * 100 * US);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t cb = t + 400 * US + i * 20 * US;
    nested_launch(TID_DROPPED, next_corr++, cb); /* its outermost call: no record */
    ct_record r = {.kind = CT_KIND_API};
    r.u.api = (struct ct_api){.tid = TID_DROPPED, .name = sid("cudaGetLastError"), .begin_ns = cb + 10 * US,
                              .end_ns = cb + 11 * US, .corr = next_corr++};
    emit(cb + 11 * US, &r);
  }
  ct_record r = {.kind = CT_KIND_API};
  r.u.api = (struct ct_api){.tid = TID_HELPER, .name = sid("cublasLtMatmul"), .begin_ns = t,
                            .end_ns = t + 35000 * US, .corr = corr, .device = cur_device};
  emit(t + 35000 * US, &r);
  return t + 35000 * US;
}

/* ---- output ------------------------------------------------------------------------- */

static int cmp_item(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->when != y->when) return x->when < y->when ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_op(const void *a, const void *b) {
  const op *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static void add(ct_file_writer *w, const ct_record *r) {
  if (ct_file_writer_add(w, r) < 0) {
    perror("cutrace-plantrace");
    exit(1);
  }
}

/* Prints the planted answers: device gaps found by merging the planned intervals. */
static void print_answers(uint64_t end) {
  qsort(ops, nops, sizeof *ops, cmp_op);
  /* device 1's operations go to the end (after a stable sort by device, the starts stay sorted) */
  size_t n1 = 0;
  op *dev1 = malloc((nops + 1) * sizeof *dev1);
  if (!dev1) exit(1);
  size_t n0 = 0;
  for (size_t i = 0; i < nops; i++) {
    if (ops[i].device == 1) dev1[n1++] = ops[i];
    else ops[n0++] = ops[i];
  }
  nops = n0;
  uint64_t busy = 0, cur_s = ops[0].start, cur_e = ops[0].end, ngaps = 0;
  uint64_t by[C_COUNT] = {0};
  printf("{\n  \"pid\": %u,\n  \"gaps\": [", pid);
  for (size_t i = 1; i <= nops; i++) {
    if (i < nops && ops[i].start <= cur_e) {
      if (ops[i].end > cur_e) cur_e = ops[i].end;
      continue;
    }
    busy += cur_e - cur_s;
    if (i == nops) break;
    /* a gap [cur_e, ops[i].start], ended by ops[i] */
    if (ops[i].cause_before < 0) {
      fprintf(stderr, "cutrace-plantrace: unplanned gap at %llu\n", (unsigned long long)cur_e);
      exit(1);
    }
    by[ops[i].cause_before] += ops[i].start - cur_e;
    if (ngaps < 100000)
      printf("%s\n    {\"start_ns\": %llu, \"end_ns\": %llu, \"cause\": \"%s\"}", ngaps ? "," : "",
             (unsigned long long)cur_e, (unsigned long long)ops[i].start,
             cause_names[ops[i].cause_before]);
    ngaps++;
    cur_s = ops[i].start;
    cur_e = ops[i].end;
  }
  printf("\n  ],\n  \"gap_count\": %llu,\n  \"busy_ns\": %llu,\n  \"first_ns\": %llu,\n"
         "  \"last_ns\": %llu,\n  \"idle\": {",
         (unsigned long long)ngaps, (unsigned long long)busy, (unsigned long long)ops[0].start,
         (unsigned long long)cur_e);
  for (int k = 0; k < C_COUNT; k++)
    printf("%s\"%s_ns\": %llu", k ? ", " : "", cause_names[k], (unsigned long long)by[k]);
  printf("},\n  \"no_gap\": [%llu, %llu],\n  \"stream_gaps\": [", (unsigned long long)no_gap_from,
         (unsigned long long)no_gap_to);
  for (int i = 0; i < 2; i++)
    printf("%s{\"stream\": 2, \"start_ns\": %llu, \"end_ns\": %llu, \"cause\": \"other_stream\"}",
           i ? ", " : "", (unsigned long long)other_stream_gap[2 * i],
           (unsigned long long)other_stream_gap[2 * i + 1]);
  printf("],\n  \"device1_gaps\": [");
  for (size_t i = 1; i < n1; i++)
    printf("%s{\"start_ns\": %llu, \"end_ns\": %llu, \"cause\": \"%s\"}", i > 1 ? ", " : "",
           (unsigned long long)dev1[i - 1].end, (unsigned long long)dev1[i].start,
           cause_names[dev1[i].cause_before]);
  printf("],\n  \"little_syncs\": %llu,\n  \"little_sync\": {\"cpu_ns\": %llu, \"gpu_ns\": %llu, "
         "\"sync_gaps\": %llu, \"idle_ns\": %llu, \"idle_after_ns\": %llu, \"twice_ns\": %llu},\n"
         "  \"alloc_gaps\": %llu,\n  \"alloc_gap_ns\": %llu,\n  \"end_ns\": %llu\n}\n",
         (unsigned long long)n_little_syncs, (unsigned long long)little_sync_ns,
         (unsigned long long)little_sync_gpu_ns, (unsigned long long)little_sync_gaps,
         (unsigned long long)little_sync_gap_ns, (unsigned long long)little_sync_after_ns,
         (unsigned long long)little_sync_twice_ns, (unsigned long long)n_alloc_gaps,
         (unsigned long long)alloc_gap_ns, (unsigned long long)end);
  free(dev1);
}

static const char usage[] =
    "usage: cutrace-plantrace FILE [--pid N] [--loop N [--loop-apis K]] [--pinned N] [--waiting N]\n"
    "                         [--dropped N] [--chunk BYTES]\n"
    "  Writes FILE, a trace with planted GPU idle gaps (tools/plantrace.c says which),\n"
    "  and prints the planted answers as JSON on stdout, for tests of cutrace gaps.\n"
    "  --pid N          the process id written (default 4242)\n"
    "  --loop N         N kernels of 2 us every 6 us, every 100th launch 1 ms late\n"
    "  --loop-apis K    the loop's launches made by K entry points of their own\n"
    "  --pinned N       then N pinned 1 MiB copies, 100 us apart\n"
    "  --waiting N      gaps waiting for their outermost call (N launches in one that never ends)\n"
    "  --dropped N      N launches whose outermost calls were dropped, beside a long call\n"
    "  --chunk BYTES    the writer's chunk size (default 1 MiB)\n";

int main(int argc, char **argv) {
  uint64_t pid_arg = pid, loop_n = 0, loop_apis = 0, pinned_n = 0, waiting_n = 0, dropped_n = 0,
           chunk = 1 << 20;
  const ha_option opts[] = {{"--pid", &pid_arg, NULL},       {"--loop", &loop_n, NULL},
                            {"--loop-apis", &loop_apis, NULL}, {"--chunk", &chunk, NULL},
                            {"--pinned", &pinned_n, NULL},   {"--waiting", &waiting_n, NULL},
                            {"--dropped", &dropped_n, NULL}, {NULL, NULL, NULL}};
  const char *path;
  int npaths;
  int rc = ha_parse("cutrace-plantrace", usage, argc, argv, opts, &path, 1, &npaths);
  if (rc >= 0) return rc;
  if (npaths != 1) return ha_usage_error("cutrace-plantrace", "needs the FILE to write");
  if (pid_arg > UINT32_MAX) return ha_usage_error("cutrace-plantrace", "--pid is too large");
  pid = (unsigned)pid_arg;
  sid("planted-host");
  sid("./planted\0");
  sid("cutrace simulated GPU");
  uint64_t end = loop_n       ? loop(loop_n, loop_apis)
                 : waiting_n  ? waiting(waiting_n)
                 : dropped_n  ? dropped(dropped_n)
                              : scenario();
  if (pinned_n && !loop_n) end = pinned_copies(end, pinned_n);
  ct_file_writer *w = ct_file_writer_open(path, chunk);
  if (!w) {
    perror(path);
    return 1;
  }
  for (unsigned i = 0; i < nstrings; i++)
    ct_file_writer_add_string(w, i + 1, strings[i], strlen(strings[i]));
  ct_record r = {.kind = CT_KIND_PROCESS};
  r.u.process = (struct ct_process){.pid = pid, .ppid = 1, .start_ns = T0,
                                    .realtime_ns = 1767225600000000000ull, .host = 1,
                                    .cmdline = 2, .driver_version = 13000, .runtime_version = 13000};
  add(w, &r);
  for (uint64_t dev = 0; dev < 2; dev++) {
    r = (ct_record){.kind = CT_KIND_DEVICE};
    r.u.device = (struct ct_device){.device = dev, .name = 3, .cc_major = 9, .sm_count = 132,
                                    .mem_bytes = 141ull << 30};
    add(w, &r);
  }
  qsort(items, nitems, sizeof *items, cmp_item);
  for (size_t i = 0; i < nitems; i++) add(w, &items[i].rec);
  r = (ct_record){.kind = CT_KIND_END};
  r.u.end = (struct ct_end){.records = nitems + 4 + nstrings, .end_ns = end};
  add(w, &r);
  if (ct_file_writer_close(w) < 0) {
    perror(path);
    return 1;
  }
  print_answers(end);
  return 0;
}
