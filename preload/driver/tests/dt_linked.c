/*
 * The dt_app modes that call the driver through its exported names (linked with
 * -lcuda): linked, alloc, shapes, graph, and the bench modes. dt_local (built
 * without -lcuda) leaves this file out. What each mode does: dt_app.c's header.
 */
#include "dt_app.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/** dt_app linked (see dt_app.c). */
int dt_run_linked(void) {
  CUfunction f;
  if (dt_setup(&f, "linked_kernel"))
    return 1;
  for (int i = 0; i < 10; i++)
    if (cuLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, 0, NULL, NULL))
      return FAIL("launch %d", i);
  static unsigned char host[4096], back[4096];
  memset(host, 7, sizeof host);
  CUdeviceptr d;
  if (cuMemAlloc(&d, sizeof host) || cuMemcpyHtoD(d, host, sizeof host) ||
      cuMemsetD8(d, 3, 1024) || cuMemcpyDtoH(back, d, sizeof back) || cuStreamSynchronize(0))
    return FAIL("copies");
  printf("linked: 10 launches, back[0]=%d back[2000]=%d\n", back[0], back[2000]);
  return 0;
}

typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);

/** dt_app alloc (see dt_app.c). */
int dt_run_alloc(void) {
  CUfunction f;
  if (dt_setup(&f, "alloc_kernel"))
    return 1;
  static unsigned char pinned_here[4096] __attribute__((aligned(4096)));
  CUdeviceptr d, pitched, managed, a1, a2;
  size_t pitch = 0;
  void *host = NULL, *host2 = NULL;
  CUstream s;
  if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL) || cuMemAlloc(&d, 4096) ||
      cuMemFree(d))
    return FAIL("alloc: cuMemAlloc / cuMemFree");
  if (cuMemAllocPitch(&pitched, &pitch, 100, 4, 4) || cuMemAllocManaged(&managed, 1024, CU_MEM_ATTACH_GLOBAL) ||
      cuMemAllocHost(&host, 2048) || cuMemHostAlloc(&host2, 3072, CU_MEMHOSTALLOC_PORTABLE) ||
      cuMemHostRegister(pinned_here, sizeof pinned_here, 0) || cuMemHostUnregister(pinned_here))
    return FAIL("alloc: pitched, managed, host allocations");
  if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAllocAsync(&a1, 512, s) ||
      cuMemFreeAsync(a1, s))
    return FAIL("alloc: stream-ordered");
  get_proc5_fn gp5 = (get_proc5_fn)dt_sym("cuGetProcAddress_v2");
  void *pa = NULL, *pf = NULL;
  CUdriverProcAddressQueryResult st;
  if (!gp5 || gp5("cuMemAllocAsync", &pa, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ||
      gp5("cuMemFreeAsync", &pf, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ||
      ((alloc_async_fn)pa)(&a2, 512, 0) || ((free_async_fn)pf)(a2, 0))
    return FAIL("alloc: per-thread stream-ordered");
  CUmemoryPool pool;
  CUdeviceptr p1, p2;
  void *ppa = NULL;
  if (cuDeviceGetDefaultMemPool(&pool, 0) || cuMemAllocFromPoolAsync(&p1, 768, pool, s) ||
      cuMemFreeAsync(p1, s) ||
      gp5("cuMemAllocFromPoolAsync", &ppa, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ||
      ((alloc_pool_fn)ppa)(&p2, 768, pool, 0) || ((free_async_fn)pf)(p2, 0))
    return FAIL("alloc: pool allocations");
  if (cuMemFree(pitched) || cuMemFree(managed) || cuMemFreeHost(host) || cuMemFreeHost(host2))
    return FAIL("alloc: frees");
  CUresult bad = cuMemFree((CUdeviceptr)(uintptr_t)pinned_here);
  printf("alloc: pitch %zu, bad free %d\n", pitch, (int)bad);
  return dt_ctx_sync();
}

static int host_calls;
static void CUDA_CB count_host_call(void *arg) { (void)arg; __atomic_add_fetch(&host_calls, 1, __ATOMIC_SEQ_CST); }

/** dt_app shapes (see dt_app.c). */
int dt_run_shapes(void) {
  CUfunction f;
  if (dt_setup(&f, "after_kernel"))
    return 1;
  static unsigned char host[512], back[64];
  memset(host, 9, sizeof host);
  CUdeviceptr d, e;
  CUstream s;
  CUevent ev;
  CUcontext ctx;
  if (cuMemAlloc(&d, 4096) || cuMemAlloc(&e, 4096) || cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) ||
      cuEventCreate(&ev, CU_EVENT_DEFAULT) || cuCtxGetCurrent(&ctx))
    return FAIL("shapes: set-up");
  CUDA_MEMCPY2D c2 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = host, .srcPitch = 64,
                      .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = d, .dstPitch = 128,
                      .WidthInBytes = 64, .Height = 8};
  CUDA_MEMCPY3D c3 = {.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = d, .srcPitch = 128,
                      .srcHeight = 4, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = back,
                      .dstPitch = 32, .dstHeight = 1, .WidthInBytes = 32, .Height = 1, .Depth = 2};
  if (cuMemcpy2D(&c2))
    return FAIL("shapes: cuMemcpy2D");
  if (cuMemcpy3D(&c3))
    return FAIL("shapes: cuMemcpy3D");
  if (cuMemcpyPeer(e, ctx, d, ctx, 256))
    return FAIL("shapes: cuMemcpyPeer");
  if (cuMemsetD16(e, 0x0102, 64) || cuMemsetD2D32Async(e, 64, 0x05050505u, 8, 4, s) ||
      cuMemsetD2D8(d + 1024, 32, 7, 16, 2))
    return FAIL("shapes: sets");
  if (cuEventRecord(ev, 0) || cuStreamWaitEvent(s, ev, 0) || cuEventSynchronize(ev))
    return FAIL("shapes: event wait");
  if (cuLaunchHostFunc(s, count_host_call, NULL))
    return FAIL("shapes: cuLaunchHostFunc");
  if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL) || cuStreamSynchronize(s) ||
      cuCtxSynchronize_v2(ctx))
    return FAIL("shapes: launch and syncs");
  /* the simulator's stream sync does not wait for the function's real run */
  for (int i = 0; i < 5000 && !__atomic_load_n(&host_calls, __ATOMIC_SEQ_CST); i++)
    usleep(1000);
  printf("shapes: back[0]=%d back[63]=%d host calls=%d\n", back[0], back[63],
         __atomic_load_n(&host_calls, __ATOMIC_SEQ_CST));
  return 0;
}
/* Captures on s what fill() queues into a new graph. */
static int capture(CUstream s, CUgraph *g, int (*fill)(CUstream, void *), void *arg) {
  if (cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) || fill(s, arg) ||
      cuStreamEndCapture(s, g))
    return FAIL("capture");
  return 0;
}

struct graph_parts {
  CUfunction outer, inner;
  CUdeviceptr buf;
};

static int fill_inner(CUstream s, void *arg) {
  const struct graph_parts *p = arg;
  for (int i = 0; i < 2; i++)
    if (cuLaunchKernel(p->inner, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL))
      return 1;
  return cuMemsetD8Async(p->buf, 7, 256, s) != CUDA_SUCCESS;
}

static int fill_outer(CUstream s, void *arg) {
  const struct graph_parts *p = arg;
  return cuLaunchKernel(p->outer, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL) != CUDA_SUCCESS;
}

/** dt_app graph (see dt_app.c). */
int dt_run_graph(void) {
  struct graph_parts p;
  CUstream s;
  CUgraph child, parent;
  CUgraphNode node;
  CUgraphExec exec, exec2, bad = NULL;
  if (dt_setup(&p.inner, "inner_kernel") || dt_setup(&p.outer, "graph_kernel"))
    return 1;
  if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuMemAlloc(&p.buf, 256))
    return FAIL("stream or memory");
  if (capture(s, &child, fill_inner, &p) || capture(s, &parent, fill_outer, &p))
    return 1;
  if (cuGraphAddChildGraphNode(&node, parent, NULL, 0, child))
    return FAIL("cuGraphAddChildGraphNode");
  if (cuGraphInstantiateWithFlags(&exec, parent, 0))
    return FAIL("cuGraphInstantiateWithFlags");
  CUresult r = cuGraphInstantiateWithFlags(&bad, NULL, 0);
  printf("graph: instantiate of no graph -> %d\n", (int)r);
  for (int i = 0; i < 3; i++)
    if (cuGraphLaunch(exec, s))
      return FAIL("cuGraphLaunch %d", i);
  CUgraphExecUpdateResultInfo info;
  r = cuGraphExecUpdate(exec, parent, &info);
  printf("graph: update -> %d (result %d)\n", (int)r, (int)info.result);
  CUDA_GRAPH_INSTANTIATE_PARAMS params = {0};
  if (cuGraphInstantiateWithParams(&exec2, child, &params) || cuGraphLaunch(exec2, s))
    return FAIL("cuGraphInstantiateWithParams");
  if (cuStreamSynchronize(s))
    return FAIL("cuStreamSynchronize");
  printf("graph: 4 launches, instantiate result_out %d\n", (int)params.result_out);
  cuGraphExecDestroy(exec2);
  cuGraphExecDestroy(exec);
  cuGraphDestroy(parent);
  cuGraphDestroy(child);
  cuMemFree(p.buf);
  return 0;
}

/** dt_app bench (see dt_app.c). */
int dt_run_bench(long n) {
  CUfunction f;
  if (n < 1 || dt_setup(&f, "bench_kernel"))
    return FAIL("bench: bad count or setup");
  for (int i = 0; i < 1000; i++)
    cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL);
  cuCtxSynchronize();
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++)
    if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL))
      return FAIL("launch %ld", i);
  clock_gettime(CLOCK_MONOTONIC, &b);
  cuCtxSynchronize();
  double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
  printf("bench: %ld launches, %.1f ns per launch\n", n, ns);
  return 0;
}

/** dt_app bench_alloc (see dt_app.c). */
int dt_run_bench_alloc(long n) {
  CUfunction f;
  if (n < 1 || dt_setup(&f, "bench_kernel"))
    return FAIL("bench_alloc: bad count or setup");
  CUdeviceptr d;
  for (int i = 0; i < 1000; i++)
    if (cuMemAlloc(&d, 256) || cuMemFree(d))
      return FAIL("bench_alloc: warm-up");
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++)
    if (cuMemAlloc(&d, 256) || cuMemFree(d))
      return FAIL("bench_alloc: pair %ld", i);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (2.0 * (double)n);
  printf("bench_alloc: %ld calls, %.1f ns per call\n", 2 * n, ns);
  return 0;
}
