// The NULL and per-thread default streams of three contexts of one device
// (test_ctxstreams.py), simulated GPU with SIMCUDA_CTX_REUSE=1, shared cudart:
// device 0's primary context P, a created context C (cuCtxCreate) and the context Gc a
// green context G converts to (cuCtxFromGreenCtx). Each context has a NULL stream and a
// per-thread default stream of its own, which the GPU runs apart from the others'.
//   phase 1, twice, 30 ms apart: with each context current in turn, cx_<ctx>_null on
//            its NULL stream and cx_<ctx>_pt on cudaStreamPerThread (6 streams).
//   phase 2 (address reuse): a thread T makes G2's converted context X current and
//            launches cx_reuse_green (NULL) and cx_reuse_green_pt (per-thread); then the
//            main thread destroys G2 and creates a context at the same address
//            (the simulator reuses it); T makes it current (the same address as
//            before) and launches cx_reuse_created and cx_reuse_created_pt there.
//   phase 3 (destroy): a created context D, cx_destroyed_* on its NULL, per-thread and a
//            created stream; D destroyed; a new context at D's address, cx_after_* on
//            the same three kinds of stream.
// Prints one "ctx NAME 0x..." line per context and "ctxstreams: ok"; exit 1 when a call
// fails or an address was not reused.
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define CHECK(call)                                                                   \
  do {                                                                                \
    int e_ = (int)(call);                                                             \
    if (e_) {                                                                         \
      fprintf(stderr, "ctxstreams: %s failed: %d (line %d)\n", #call, e_, __LINE__);   \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__global__ void cx_p_null() {}
__global__ void cx_p_pt() {}
__global__ void cx_c_null() {}
__global__ void cx_c_pt() {}
__global__ void cx_g_null() {}
__global__ void cx_g_pt() {}
__global__ void cx_reuse_green() {}
__global__ void cx_reuse_green_pt() {}
__global__ void cx_reuse_created() {}
__global__ void cx_reuse_created_pt() {}
__global__ void cx_destroyed_null() {}
__global__ void cx_destroyed_pt() {}
__global__ void cx_destroyed_s() {}
__global__ void cx_after_null() {}
__global__ void cx_after_pt() {}
__global__ void cx_after_s() {}

// A green context of half of device 0's SMs.
static int make_green(CUgreenCtx *green) {
  CUdevResource all, groups[1], rest;
  unsigned n = 1;
  CHECK(cuDeviceGetDevResource(0, &all, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(cuDevSmResourceSplitByCount(groups, &n, &all, &rest, 0, 64));
  CUdevResourceDesc desc;
  CHECK(cuDevResourceGenerateDesc(&desc, &groups[0], 1));
  CHECK(cuGreenCtxCreate(green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
  return 0;
}

// One kernel on the current context's NULL stream and one on its per-thread stream.
static int plant(void (*on_null)(), void (*on_pt)()) {
  on_null<<<1, 32>>>();
  on_pt<<<1, 32, 0, cudaStreamPerThread>>>();
  CHECK(cudaGetLastError());
  return 0;
}

// Phase 2's thread: launches with X current, before and after X is reused.
static CUcontext reused_ctx;
static pthread_barrier_t step;
static int thread_failed;

static void *reuse_thread(void *arg) {
  (void)arg;
  // the runtime first (the simulated one makes the primary context current at a
  // thread's first runtime call), then X
  if (cudaSetDevice(0) || cuCtxSetCurrent(reused_ctx) || plant(cx_reuse_green, cx_reuse_green_pt) ||
      cuCtxSynchronize())
    thread_failed = 1;
  pthread_barrier_wait(&step);  // main destroys G2 and creates a context at X
  pthread_barrier_wait(&step);
  if (cuCtxSetCurrent(reused_ctx) || plant(cx_reuse_created, cx_reuse_created_pt) || cuCtxSynchronize())
    thread_failed = 1;
  return NULL;
}

int main() {
  CHECK(cudaSetDevice(0));
  CHECK(cudaFree(0));
  CUcontext p, c, gc, popped;
  CHECK(cuCtxGetCurrent(&p));
  CHECK(cuCtxCreate(&c, NULL, 0, 0));
  CHECK(cuCtxPopCurrent(&popped));
  CUgreenCtx g;
  CHECK(make_green(&g));
  CHECK(cuCtxFromGreenCtx(&gc, g));
  printf("ctx P %p\nctx C %p\nctx G %p\n", (void *)p, (void *)c, (void *)gc);

  // phase 1: six streams, two rounds
  for (int round = 0; round < 2; round++) {
    CHECK(plant(cx_p_null, cx_p_pt));
    CHECK(cuCtxPushCurrent(c));
    CHECK(plant(cx_c_null, cx_c_pt));
    CHECK(cuCtxPopCurrent(&popped));
    CHECK(cuCtxPushCurrent(gc));
    CHECK(plant(cx_g_null, cx_g_pt));
    CHECK(cuCtxPopCurrent(&popped));
    if (round == 0)
      usleep(30000);
  }
  CHECK(cudaDeviceSynchronize());
  CUcontext all[2] = {c, gc};
  for (int i = 0; i < 2; i++) {
    CHECK(cuCtxPushCurrent(all[i]));
    CHECK(cuCtxSynchronize());
    CHECK(cuCtxPopCurrent(&popped));
  }

  // phase 2: a green context's converted context's address serves a created one
  CUgreenCtx g2;
  CHECK(make_green(&g2));
  CHECK(cuCtxFromGreenCtx(&reused_ctx, g2));
  pthread_barrier_init(&step, NULL, 2);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, reuse_thread, NULL));
  pthread_barrier_wait(&step);
  CHECK(cuGreenCtxDestroy(g2));
  CUcontext y;
  CHECK(cuCtxCreate(&y, NULL, 0, 0));
  CHECK(cuCtxPopCurrent(&popped));
  CHECK(y != reused_ctx);  // SIMCUDA_CTX_REUSE=1 hands the address out again
  printf("ctx X %p\n", (void *)y);
  pthread_barrier_wait(&step);
  CHECK(pthread_join(t, NULL));
  CHECK(thread_failed);

  // phase 3: a destroyed created context's streams, then a new context at its address
  CUcontext d, e;
  CUstream ds, es;
  CHECK(cuCtxCreate(&d, NULL, 0, 0));
  CHECK(cuStreamCreate(&ds, CU_STREAM_NON_BLOCKING));
  CHECK(plant(cx_destroyed_null, cx_destroyed_pt));
  cx_destroyed_s<<<1, 32, 0, (cudaStream_t)ds>>>();
  CHECK(cudaGetLastError());
  CHECK(cuCtxSynchronize());
  CHECK(cuCtxDestroy(d));
  CHECK(cuCtxCreate(&e, NULL, 0, 0));
  CHECK(e != d);
  CHECK(cuStreamCreate(&es, CU_STREAM_NON_BLOCKING));
  CHECK(plant(cx_after_null, cx_after_pt));
  cx_after_s<<<1, 32, 0, (cudaStream_t)es>>>();
  CHECK(cudaGetLastError());
  CHECK(cuCtxSynchronize());
  printf("ctx D %p\nstream reused %d\n", (void *)e, es == ds);
  CHECK(cuCtxDestroy(e));
  printf("ctxstreams: ok\n");
  return 0;
}
