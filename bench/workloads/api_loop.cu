/* api_loop: the host cost of one intercepted call of each kind, for the tracer's
 * overhead benchmark (bench/host_cost.py, bench/callgrind_launch.py).
 * N empty-kernel launches, N cudaMemcpyAsync of 256 bytes device to device and N
 * cublasSgemm of 16 x 16 matrices, all on one stream. Calls go in batches of 256
 * with an untimed cudaStreamSynchronize after each batch, so the stream's queue
 * never fills and only the host time of the calls themselves is counted.
 * MODE: 0 all three kinds, 1 launches only, 2 copies only, 3 GEMMs only.
 * Prints one line per kind: "api_loop: <kind>: <N> calls, <ns> ns per call". */
#include "workload_blas.h"
#include <cublas_v2.h>

#define BATCH 256
#define DIM 16

/* Does nothing. */
__global__ void api_loop_empty(int unused) {}

/* One batch of `count` calls of `kind` (1 launch, 2 copy, 3 GEMM). */
static void issue(int kind, long count, cudaStream_t stream, cublasHandle_t blas, float *a,
                  float *b, float *c)
{
  const float one = 1.0f, zero = 0.0f;
  for (long i = 0; i < count; i++) {
    if (kind == 1) {
      api_loop_empty<<<1, 1, 0, stream>>>((int)i);
    } else if (kind == 2) {
      WL_CHECK(cudaMemcpyAsync(b, a, 256, cudaMemcpyDeviceToDevice, stream));
    } else {
      WL_CHECK_BLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, DIM, DIM, DIM, &one, a, DIM, b,
                                DIM, &zero, c, DIM));
    }
  }
  if (kind == 1)
    WL_CHECK_LAUNCH();
}

/* Times n calls of `kind`; returns nanoseconds per call (host time of the calls only). */
static double time_kind(int kind, long n, cudaStream_t stream, cublasHandle_t blas, float *a,
                        float *b, float *c)
{
  issue(kind, n < BATCH ? n : BATCH, stream, blas, a, b, c); /* warm-up, untimed */
  WL_CHECK(cudaStreamSynchronize(stream));
  long long spent = 0;
  for (long done = 0; done < n; done += BATCH) {
    long count = n - done < BATCH ? n - done : BATCH;
    long long t0 = wl_now_ns();
    issue(kind, count, stream, blas, a, b, c);
    spent += wl_now_ns() - t0;
    WL_CHECK(cudaStreamSynchronize(stream));
  }
  return (double)spent / (double)n;
}

int main(int argc, char **argv)
{
  wl_prog = "api_loop";
  wl_arg args[] = {{"N", 1, 100000000, 10000}, {"MODE", 0, 3, 0}};
  wl_parse_args(argc, argv, args, 2);
  const long n = args[0].value;
  const int mode = (int)args[1].value;
  static const char *const names[] = {"", "launch", "copy", "gemm"};

  cudaStream_t stream;
  WL_CHECK(cudaStreamCreate(&stream));
  float *a, *b, *c;
  WL_CHECK(cudaMalloc((void **)&a, DIM * DIM * sizeof(float)));
  WL_CHECK(cudaMalloc((void **)&b, DIM * DIM * sizeof(float)));
  WL_CHECK(cudaMalloc((void **)&c, DIM * DIM * sizeof(float)));
  WL_CHECK(cudaMemset(a, 0, DIM * DIM * sizeof(float)));
  WL_CHECK(cudaMemset(b, 0, DIM * DIM * sizeof(float)));
  cublasHandle_t blas = NULL;
  if (mode == 0 || mode == 3) {
    WL_CHECK_BLAS(cublasCreate(&blas));
    WL_CHECK_BLAS(cublasSetStream(blas, stream));
  }
  for (int kind = 1; kind <= 3; kind++) {
    if (mode && mode != kind)
      continue;
    double ns = time_kind(kind, n, stream, blas, a, b, c);
    printf("api_loop: %s: %ld calls, %.1f ns per call\n", names[kind], n, ns);
  }
  WL_CHECK(cudaStreamSynchronize(stream));
  if (blas)
    WL_CHECK_BLAS(cublasDestroy(blas));
  WL_CHECK(cudaFree(a));
  WL_CHECK(cudaFree(b));
  WL_CHECK(cudaFree(c));
  WL_CHECK(cudaStreamDestroy(stream));
  return 0;
}
