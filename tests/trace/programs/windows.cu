/*
 * Recording windows for test_windows.py (simulated GPU, shared cudart).
 *
 * usage: windows profiler   run under CUTRACE_CAPTURE=profiler:
 *          paused:  3 w_before (inside NVTX range "warmup"), a graph of 2 w_graph
 *                   captured and instantiated, NVTX range "step" opened, a capture
 *                   begun on stream s3
 *          cudaProfilerStart
 *          window:  2 w_captured into s3's capture, capture ended and instantiated
 *                   (must hold exactly 2 kernel nodes), the paused-time graph
 *                   launched once, 4 w_inside, sync, "step" closed
 *          cudaProfilerStop
 *          paused:  3 w_after inside NVTX range "cooldown", sync
 *          cudaProfilerStart, 2 w_second, sync, cudaProfilerStop; exits paused
 *        windows timed SECONDS   3 w_early at once, sync, sleep until SECONDS after
 *                   main began, 3 w_late, sync (for CUTRACE_DELAY / CUTRACE_DURATION)
 * Exit status 0 when every CUDA call succeeded and the graphs are as built.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define N 4096

__global__ void w_before(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void w_graph(float *x) { x[threadIdx.x] += 2.0f; }
__global__ void w_captured(float *x) { x[threadIdx.x] += 3.0f; }
__global__ void w_inside(float *x) { x[threadIdx.x] += 4.0f; }
__global__ void w_after(float *x) { x[threadIdx.x] += 5.0f; }
__global__ void w_second(float *x) { x[threadIdx.x] += 6.0f; }
__global__ void w_early(float *x) { x[threadIdx.x] += 7.0f; }
__global__ void w_late(float *x) { x[threadIdx.x] += 8.0f; }

static int failed;

static void check(cudaError_t err, const char *what) {
  if (err != cudaSuccess) {
    fprintf(stderr, "windows: %s: %s\n", what, cudaGetErrorString(err));
    failed = 1;
  }
}

/* The nodes of graph g must be exactly want (asked of the driver: a tracer that
 * recorded events into a capture would have added nodes). */
static void check_nodes(cudaGraph_t g, size_t want, const char *what) {
  typedef int (*get_nodes_fn)(cudaGraph_t, void *, size_t *);
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  get_nodes_fn get_nodes = drv ? (get_nodes_fn)dlsym(drv, "cuGraphGetNodes") : NULL;
  size_t n = 0;
  if (!get_nodes || get_nodes(g, NULL, &n) != 0) {
    fprintf(stderr, "windows: cuGraphGetNodes unavailable or failed\n");
    failed = 1;
  } else if (n != want) {
    fprintf(stderr, "windows: %s has %zu nodes, want %zu\n", what, n, want);
    failed = 1;
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_profiler(float *x) {
  cudaStream_t s1, s3;
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream s1");
  check(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking), "stream s3");

  nvtxRangePushA("warmup");
  for (int i = 0; i < 3; i++) w_before<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync before");
  nvtxRangePop();

  cudaGraph_t g1, g3;
  cudaGraphExec_t e1, e3;
  check(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), "capture s1");
  for (int i = 0; i < 2; i++) w_graph<<<1, 32, 0, s1>>>(x);
  check(cudaStreamEndCapture(s1, &g1), "end capture s1");
  check_nodes(g1, 2, "graph 1");
  check(cudaGraphInstantiate(&e1, g1, 0), "instantiate graph 1");

  nvtxRangePushA("step");
  check(cudaStreamBeginCapture(s3, cudaStreamCaptureModeGlobal), "capture s3");
  check(cudaProfilerStart(), "cudaProfilerStart");
  for (int i = 0; i < 2; i++) w_captured<<<1, 32, 0, s3>>>(x);
  check(cudaStreamEndCapture(s3, &g3), "end capture s3");
  check_nodes(g3, 2, "graph 3");
  check(cudaGraphInstantiate(&e3, g3, 0), "instantiate graph 3");
  check(cudaGraphLaunch(e1, s1), "launch graph 1");
  for (int i = 0; i < 4; i++) w_inside<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync inside");
  nvtxRangePop();
  check(cudaProfilerStop(), "cudaProfilerStop");

  nvtxRangePushA("cooldown");
  for (int i = 0; i < 3; i++) w_after<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync after");
  nvtxRangePop();

  check(cudaProfilerStart(), "cudaProfilerStart 2");
  for (int i = 0; i < 2; i++) w_second<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync second");
  check(cudaProfilerStop(), "cudaProfilerStop 2");

  check(cudaGraphExecDestroy(e1), "destroy e1");
  check(cudaGraphExecDestroy(e3), "destroy e3");
  check(cudaGraphDestroy(g1), "destroy g1");
  check(cudaGraphDestroy(g3), "destroy g3");
  check(cudaStreamDestroy(s1), "destroy s1");
  check(cudaStreamDestroy(s3), "destroy s3");
}

static void run_timed(float *x, double seconds) {
  double t0 = now_s();
  for (int i = 0; i < 3; i++) w_early<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync early");
  double left = seconds - (now_s() - t0);
  if (left > 0) usleep((useconds_t)(left * 1e6));
  for (int i = 0; i < 3; i++) w_late<<<1, 32>>>(x);
  check(cudaDeviceSynchronize(), "sync late");
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "profiler";
  float *x = NULL;
  check(cudaMalloc(&x, N * sizeof *x), "cudaMalloc");
  if (failed) return 1;
  if (!strcmp(mode, "profiler"))
    run_profiler(x);
  else if (!strcmp(mode, "timed"))
    run_timed(x, argc > 2 ? atof(argv[2]) : 1.0);
  else {
    fprintf(stderr, "windows: unknown mode %s\n", mode);
    return 2;
  }
  check(cudaFree(x), "cudaFree");
  printf("windows %s: %s\n", mode, failed ? "FAILED" : "ok");
  return failed;
}
