/* hk_app: the programs the interception tests trace. One scenario per run
 * (argv[1]); each prints what it observed (results, error codes, errno) so that
 * a run under the tracer can be compared line by line with a run without it.
 *
 *   kernels N     N x (k_alpha on the legacy stream, k_beta on a created stream),
 *                 then cudaLaunchKernel / cudaLaunchKernelExC /
 *                 cudaLaunchCooperativeKernel of k_gamma once each
 *   copies        one of each copy and set form, with known sizes and memory types
 *   errors        calls that fail on purpose, cudaGetLastError after them, errno
 *   threads T N   T threads, each N launches of k_alpha on its own stream
 *   capture N     stream capture (global mode) of 3 k_beta + memset + k_alpha
 *                 while another thread launches 20 k_gamma on its own stream,
 *                 instantiated (and a failing instantiate of no graph), then N
 *                 graph launches, cudaGraphExecUpdate, cudaGraphInstantiateWithParams
 *   blas          cuBLAS / cuBLASLt GEMMs of known shapes
 *   reset N       N launches, cudaDeviceReset, N more launches
 *   burst B N     B bursts of N k_beta launches on a non-blocking stream, each
 *                 followed by a sync and 5 ms of host sleep
 *   waits N       N x (k_beta on stream s; another thread: k_alpha on stream t
 *                 and an event on t; s waits for it; k_beta on s), non-blocking
 *   memory        stream-ordered allocation (cudaMallocAsync / cudaFreeAsync),
 *                 cudaHostRegister / cudaHostUnregister, cudaEventRecord(WithFlags),
 *                 cudaLaunchHostFunc, with a k_beta before and after on one stream
 *   devices N     N launches on device 1 (cudaSetDevice), then N on device 0
 *   paced B MS    B bursts of 4 k_alpha + 2 k_beta on the legacy stream, a sync
 *                 and MS milliseconds of host sleep after each (clock drift) */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The legacy handle-less cublasSgemm (cublas.h cannot be included with
 * cublas_v2.h, which maps the name cublasSgemm to cublasSgemm_v2). */
extern "C" void legacy_cublasSgemm(char, char, int, int, int, float, const float *, int,
                                   const float *, int, float, float *, int)
    __asm__("cublasSgemm");

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "hk_app: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
              cudaGetErrorName(e_));                                                   \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)
#define CHECK_BLAS(call)                                                               \
  do {                                                                                 \
    cublasStatus_t s_ = (call);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
      fprintf(stderr, "hk_app: %s:%d: %s: status %d\n", __FILE__, __LINE__, #call,     \
              (int)s_);                                                                \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

__global__ void k_alpha(float *p, int n) {
  if (p && threadIdx.x < n) p[threadIdx.x] += 1.0f;
}
__global__ void k_beta(int v) {}
__global__ void k_gamma(int v) {}
__device__ int d_table[256];

static int scenario_kernels(int n) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < n; i++) {
    k_alpha<<<dim3(2, 3, 1), dim3(64, 2, 1), 128>>>(NULL, 0);
    CHECK(cudaGetLastError());
    k_beta<<<4, 32, 0, s>>>(i);
    CHECK(cudaGetLastError());
  }
  int v = 7;
  void *args[] = {&v};
  CHECK(cudaLaunchKernel((const void *)k_gamma, dim3(5), dim3(96), args, 0, s));
  cudaLaunchConfig_t config;
  memset(&config, 0, sizeof config);
  config.gridDim = dim3(6);
  config.blockDim = dim3(32, 4);
  config.dynamicSmemBytes = 256;
  config.stream = s;
  CHECK(cudaLaunchKernelExC(&config, (const void *)k_gamma, args));
  CHECK(cudaLaunchCooperativeKernel((const void *)k_gamma, dim3(7), dim3(32), args, 0, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaStreamDestroy(s));
  printf("kernels: %d + %d + 3 launches ok\n", n, n);
  return 0;
}

static unsigned checksum(const unsigned char *p, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static int scenario_copies(void) {
  const size_t mb = 1 << 20;
  unsigned char *pageable = (unsigned char *)malloc(mb), *back = (unsigned char *)malloc(mb);
  unsigned char *pinned, *dev, *dev2, *managed;
  for (size_t i = 0; i < mb; i++) pageable[i] = (unsigned char)(i * 7 + 3);
  CHECK(cudaMallocHost((void **)&pinned, mb));
  memcpy(pinned, pageable, mb);
  CHECK(cudaMalloc((void **)&dev, mb));
  CHECK(cudaMalloc((void **)&dev2, mb));
  CHECK(cudaMallocManaged((void **)&managed, 65536, cudaMemAttachGlobal));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMemcpy(dev, pageable, mb, cudaMemcpyHostToDevice));            /* 1: pageable H2D */
  CHECK(cudaMemcpy(dev2, pinned, mb, cudaMemcpyHostToDevice));             /* 2: pinned H2D */
  CHECK(cudaMemcpy(back, dev, 524288, cudaMemcpyDeviceToHost));            /* 3: D2H pageable */
  CHECK(cudaMemcpy(dev2, dev, 262144, cudaMemcpyDeviceToDevice));          /* 4: D2D */
  CHECK(cudaMemcpy(dev, pinned, 4096, cudaMemcpyDefault));                 /* 5: default -> H2D */
  CHECK(cudaMemset(dev2, 0x5a, 65536));                                    /* 6: memset */
  CHECK(cudaMemcpy2D(dev, 512, pinned, 1024, 256, 16, cudaMemcpyHostToDevice)); /* 7: 2D */
  CHECK(cudaMemsetAsync(dev, 0x11, 8192, s));                              /* 8: memset async */
  CHECK(cudaMemcpyAsync(pinned, dev, 8192, cudaMemcpyDeviceToHost, s));    /* 9: async D2H */
  CHECK(cudaMemcpy(managed, dev2, 65536, cudaMemcpyDefault));              /* 10: D2D managed */
  int table[256];
  for (int i = 0; i < 256; i++) table[i] = i * i;
  CHECK(cudaMemcpyToSymbol(d_table, table, sizeof table));                 /* 11: to symbol */
  int again[256];
  CHECK(cudaMemcpyFromSymbol(again, d_table, sizeof again));               /* 12: from symbol */
  CHECK(cudaMemset2D(dev2, 1024, 0x22, 128, 8));                           /* 13: memset 2D */
  cudaMemcpy3DParms p;
  memset(&p, 0, sizeof p);
  p.srcPtr = make_cudaPitchedPtr(pinned, 256, 256, 4);
  p.dstPtr = make_cudaPitchedPtr(dev, 256, 256, 4);
  p.extent = make_cudaExtent(256, 4, 2);
  p.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&p));                                                  /* 14: 3D */
  CHECK(cudaStreamSynchronize(s));
  unsigned char tail[16];
  CHECK(cudaMemcpy(tail, dev2, 16, cudaMemcpyDeviceToHost));                /* 15: small D2H */
  printf("copies: back %08x pinned %08x table %d managed %d tail %d\n", checksum(back, 524288),
         checksum(pinned, 8192), again[255], managed[100], tail[3]);
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(dev));
  CHECK(cudaFree(dev2));
  CHECK(cudaFree(managed));
  CHECK(cudaFreeHost(pinned));
  free(pageable);
  free(back);
  return 0;
}

static int scenario_errors(void) {
  CHECK(cudaFree(0));
  k_beta<<<1, 2048>>>(1); /* too many threads per block */
  cudaError_t launch = cudaGetLastError();
  cudaError_t after = cudaGetLastError();
  printf("errors: bad launch -> %s, then %s\n", cudaGetErrorName(launch), cudaGetErrorName(after));
  errno = 1234;
  cudaError_t e = cudaMemcpy(NULL, NULL, 16, (cudaMemcpyKind)77);
  printf("errors: bad copy kind -> %s, peek %s, errno %d\n", cudaGetErrorName(e),
         cudaGetErrorName(cudaPeekAtLastError()), errno);
  cudaGetLastError();
  void *p = NULL;
  errno = 4321;
  e = cudaMalloc(&p, (size_t)1 << 60);
  printf("errors: huge malloc -> %s, last %s, errno %d\n", cudaGetErrorName(e),
         cudaGetErrorName(cudaGetLastError()), errno);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaStreamDestroy(s));
  e = cudaStreamSynchronize(s); /* destroyed stream */
  printf("errors: destroyed stream sync -> %s, last %s\n", cudaGetErrorName(e),
         cudaGetErrorName(cudaGetLastError()));
  k_beta<<<1, 1, 0, s>>>(2); /* launch into the destroyed stream */
  printf("errors: launch on destroyed stream -> %s\n", cudaGetErrorName(cudaGetLastError()));
  k_beta<<<1, 1>>>(3);
  errno = 99;
  e = cudaDeviceSynchronize();
  printf("errors: good launch then sync -> %s, last %s, errno %d\n", cudaGetErrorName(e),
         cudaGetErrorName(cudaGetLastError()), errno);
  return 0;
}

struct thread_arg {
  int n;
  int failures;
};

/* No stream is destroyed before every thread has created its own: the simulator, like
 * CUDA, may hand a destroyed stream's handle to the next cudaStreamCreate, and a
 * reused handle keeps its stream id (docs/preload.md), which would leave the test one
 * STREAM record short when a thread ends before another starts (seen under
 * ThreadSanitizer's slower scheduling, scripts/tsan). */
static pthread_barrier_t streams_made;

static void *thread_main(void *argp) {
  struct thread_arg *a = (struct thread_arg *)argp;
  cudaStream_t s;
  int made = cudaStreamCreate(&s) == cudaSuccess;
  pthread_barrier_wait(&streams_made);
  if (!made) {
    a->failures++;
    return NULL;
  }
  for (int i = 0; i < a->n; i++) {
    k_alpha<<<1, 32, 0, s>>>(NULL, i);
    if (cudaGetLastError() != cudaSuccess) a->failures++;
  }
  if (cudaStreamSynchronize(s) != cudaSuccess) a->failures++;
  cudaStreamDestroy(s);
  return NULL;
}

static int scenario_threads(int t, int n) {
  CHECK(cudaFree(0));
  pthread_t th[64];
  struct thread_arg args[64];
  pthread_barrier_init(&streams_made, NULL, (unsigned)t);
  for (int i = 0; i < t; i++) {
    args[i].n = n;
    args[i].failures = 0;
    pthread_create(&th[i], NULL, thread_main, &args[i]);
  }
  int failures = 0;
  for (int i = 0; i < t; i++) {
    pthread_join(th[i], NULL);
    failures += args[i].failures;
  }
  pthread_barrier_destroy(&streams_made);
  printf("threads: %d x %d launches, %d failures\n", t, n, failures);
  return failures != 0;
}

/* Launches 20 k_gamma on its own stream while the main thread captures. */
static void *capture_neighbour(void *arg) {
  cudaStream_t h = *(cudaStream_t *)arg;
  for (int i = 0; i < 20; i++) k_gamma<<<1, 1, 0, h>>>(i);
  return NULL;
}

static int scenario_capture(int n) {
  cudaStream_t s, h;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&h, cudaStreamNonBlocking));
  unsigned char *dev;
  CHECK(cudaMalloc((void **)&dev, 4096));
  CHECK(cudaMemset(dev, 0, 4096));
  k_gamma<<<1, 1, 0, s>>>(0); /* timed, before the capture */
  CHECK(cudaDeviceSynchronize());
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; i++) k_beta<<<1, 1, 0, s>>>(i);
  CHECK(cudaMemsetAsync(dev, 0x5a, 4096, s));
  k_alpha<<<1, 1, 0, s>>>(NULL, 0);
  /* Another thread works on its own stream meanwhile (and the tracer's poller
   * queries its events): the global-mode capture must survive both. */
  pthread_t neighbour;
  pthread_create(&neighbour, NULL, capture_neighbour, &h);
  pthread_join(neighbour, NULL);
  struct timespec pause = {0, 60 * 1000000L};
  nanosleep(&pause, NULL);
  cudaError_t end = cudaStreamEndCapture(s, &graph);
  printf("capture: end capture -> %s\n", cudaGetErrorName(end));
  if (end != cudaSuccess) return 1;
  cudaGraphExec_t exec, exec2, bad;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  /* a failing instantiate keeps its error, for the call and for cudaGetLastError */
  cudaError_t bad_r = cudaGraphInstantiate(&bad, NULL, 0);
  printf("capture: instantiate of no graph -> %s, last error %s\n", cudaGetErrorName(bad_r),
         cudaGetErrorName(cudaGetLastError()));
  for (int i = 0; i < n; i++) CHECK(cudaGraphLaunch(exec, s));
  cudaGraphExecUpdateResultInfo info;
  CHECK(cudaGraphExecUpdate(exec, graph, &info));
  cudaGraphInstantiateParams params;
  memset(&params, 0, sizeof params);
  CHECK(cudaGraphInstantiateWithParams(&exec2, graph, &params));
  CHECK(cudaGraphExecDestroy(exec2));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaStreamSynchronize(h));
  unsigned char host[4096];
  CHECK(cudaMemcpy(host, dev, 4096, cudaMemcpyDeviceToHost));
  printf("capture: %d graph launches, byte %d\n", n, host[4095]);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return host[4095] != 0x5a;
}

static int scenario_blas(void) {
  float *a, *b, *c, *bias;
  CHECK(cudaMalloc((void **)&a, 1 << 20));
  CHECK(cudaMalloc((void **)&b, 1 << 20));
  CHECK(cudaMalloc((void **)&c, 1 << 20));
  CHECK(cudaMalloc((void **)&bias, 4096));
  CHECK(cudaMemset(a, 0, 1 << 20));
  CHECK(cudaMemset(b, 0, 1 << 20));
  CHECK(cudaMemset(bias, 0, 4096));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  CHECK_BLAS(cublasSetStream(h, s));
  const float one = 1.0f, zero = 0.0f;
  /* m=64 n=32 k=16, A transposed */
  CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, &one, a, 16, b, 16, &zero, c, 64));
  CHECK_BLAS(cublasSgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 20, 10, 5, &one, a, 20, b, 5, &zero, c, 20));
  CHECK_BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 8, 12, 4, &one, a, 8, 32, b, 12,
                                       48, &zero, c, 8, 96, 3));
  CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 24, 16, 8, &one, a, CUDA_R_32F, 24, b,
                          CUDA_R_32F, 8, &zero, c, CUDA_R_32F, 24, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
  CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 8, 4, &one, a, CUDA_R_32F,
                                        16, 64, b, CUDA_R_32F, 4, 32, &zero, c, CUDA_R_32F, 16,
                                        128, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  /* m=10 n=6 k=4 in double precision, B transposed */
  const double done = 1.0, dzero = 0.0;
  CHECK_BLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 10, 6, 4, &done, (const double *)a, 10,
                         (const double *)b, 6, &dzero, (double *)c, 10));
  cublasLtHandle_t lt;
  CHECK_BLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CHECK_BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T;
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                            sizeof bias));
  /* D = op(A) B + bias: m=48 n=40 k=24; A stored k x m (transposed) */
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 24, 48, 24));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 24, 40, 24));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, 48, 40, 48));
  CHECK_BLAS(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, c, lc, c, lc, NULL, NULL, 0, s));
  legacy_cublasSgemm('N', 'T', 12, 6, 3, 1.0f, a, 12, b, 6, 0.0f, c, 12);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaDeviceSynchronize());
  float out[4];
  CHECK(cudaMemcpy(out, c, sizeof out, cudaMemcpyDeviceToHost));
  printf("blas: 7 GEMMs, c[0] = %g\n", out[0]);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  return 0;
}

static int scenario_reset(int n) {
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < n; i++) k_alpha<<<1, 1>>>(NULL, round);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    if (round == 0) CHECK(cudaDeviceReset());
  }
  printf("reset: 2 x %d launches around a device reset\n", n);
  return 0;
}

static int scenario_paced(int bursts, int ms) {
  CHECK(cudaFree(0));
  for (int b = 0; b < bursts; b++) {
    for (int i = 0; i < 4; i++) k_alpha<<<1, 1>>>(NULL, i);
    for (int i = 0; i < 2; i++) k_beta<<<1, 1>>>(i);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
  }
  printf("paced: %d bursts, %d ms apart\n", bursts, ms);
  return 0;
}

static int scenario_burst(int bursts, int n) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int b = 0; b < bursts; b++) {
    for (int i = 0; i < n; i++) k_beta<<<1, 1, 0, s>>>(i);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    struct timespec pause = {0, 5 * 1000000L};
    nanosleep(&pause, NULL);
  }
  CHECK(cudaStreamDestroy(s));
  printf("burst: %d x %d launches\n", bursts, n);
  return 0;
}

struct wait_job {
  cudaStream_t t;
  cudaEvent_t e;
  int i;
};

/* Another thread's work that the waits scenario's stream waits for. */
static void *wait_producer(void *arg) {
  struct wait_job *j = (struct wait_job *)arg;
  k_alpha<<<1, 1, 0, j->t>>>(NULL, j->i);
  cudaEventRecord(j->e, j->t);
  return NULL;
}

static int scenario_waits(int n) {
  struct wait_job job;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&job.t, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&job.e, cudaEventDisableTiming));
  for (int i = 0; i < n; i++) {
    k_beta<<<1, 1, 0, s>>>(i);
    job.i = i;
    pthread_t producer;
    pthread_create(&producer, NULL, wait_producer, &job);
    pthread_join(producer, NULL);
    CHECK(cudaStreamWaitEvent(s, job.e, 0));
    k_beta<<<1, 1, 0, s>>>(-i);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  printf("waits: %d rounds\n", n);
  return 0;
}

static int scenario_devices(int n) {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 2) {
    printf("devices: only %d device\n", count);
    return 3;
  }
  for (int dev = 1; dev >= 0; dev--) {
    CHECK(cudaSetDevice(dev));
    for (int i = 0; i < n; i++) k_beta<<<1, 1>>>(dev);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  printf("devices: %d launches on device 1, then on device 0\n", n);
  return 0;
}

static int host_func_calls;
static void CUDART_CB count_call(void *arg) { __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST); }

static int scenario_memory(void) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t ev;
  CHECK(cudaEventCreate(&ev));
  k_beta<<<1, 1, 0, s>>>(1);
  void *p = NULL;
  CHECK(cudaMallocAsync(&p, 4096, s));
  CHECK(cudaMemsetAsync(p, 7, 4096, s));
  CHECK(cudaFreeAsync(p, s));
  static char host[8192];
  CHECK(cudaHostRegister(host, sizeof host, cudaHostRegisterDefault));
  CHECK(cudaEventRecord(ev, s));
  CHECK(cudaEventRecordWithFlags(ev, s, cudaEventRecordDefault));
  CHECK(cudaLaunchHostFunc(s, count_call, &host_func_calls));
  k_beta<<<1, 1, 0, s>>>(2);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaHostUnregister(host));
  /* the simulator's stream sync does not wait for the function's real run */
  for (int i = 0; i < 5000 && !__atomic_load_n(&host_func_calls, __ATOMIC_SEQ_CST); i++)
    usleep(1000);
  printf("memory: host function calls %d, last error %s\n", host_func_calls,
         cudaGetErrorName(cudaGetLastError()));
  return 0;
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  int a = argc > 2 ? atoi(argv[2]) : 10, b = argc > 3 ? atoi(argv[3]) : 100;
  if (!strcmp(what, "kernels")) return scenario_kernels(a);
  if (!strcmp(what, "copies")) return scenario_copies();
  if (!strcmp(what, "errors")) return scenario_errors();
  if (!strcmp(what, "threads")) return scenario_threads(a > 64 ? 64 : a, b);
  if (!strcmp(what, "capture")) return scenario_capture(a);
  if (!strcmp(what, "blas")) return scenario_blas();
  if (!strcmp(what, "reset")) return scenario_reset(a);
  if (!strcmp(what, "paced")) return scenario_paced(a, b);
  if (!strcmp(what, "memory")) return scenario_memory();
  if (!strcmp(what, "devices")) return scenario_devices(a);
  if (!strcmp(what, "burst")) return scenario_burst(a, b);
  if (!strcmp(what, "waits")) return scenario_waits(a);
  fprintf(stderr, "usage: hk_app kernels|copies|errors|threads|capture|blas|reset|paced|devices|burst|waits|memory [N [M]]\n");
  return 2;
}
