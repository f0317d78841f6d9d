/* matmul_add: the torch.profiler tutorial's torch.add(torch.matmul(x, w), b)
 * in CUDA C. Each iteration is one cublasSgemm (y = x . w, fp32, N x N,
 * row-major) and one bias_add kernel (out = y + b, b broadcast over rows).
 * WARMUP untimed iterations come first, then ITERS timed with events, then a
 * final cudaDeviceSynchronize. The SGEMM output is checked against the CPU on a
 * few elements; the bias add only on a real GPU (simulated kernels compute
 * nothing). */
#include "workload_blas.h"
#include <cublas_v2.h>

/* out[r, c] = y[r, c] + b[c] for an n x n row-major matrix. */
__global__ void bias_add(const float *y, const float *b, float *out, int n)
{
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long)n * n)
    out[i] = y[i] + b[i % n];
}

/* One matmul_add step: y = x . w through cuBLAS, then out = y + b. */
static void matmul_add_step(cublasHandle_t blas, const float *x, const float *w, const float *b,
                            float *y, float *out, int n)
{
  const float one = 1.0f, zero = 0.0f;
  /* Row-major y = x . w is column-major y^T = w^T . x^T: pass w first. */
  WL_CHECK_BLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, w, n, x, n, &zero, y, n));
  long elements = (long)n * n;
  bias_add<<<(unsigned)((elements + 255) / 256), 256>>>(y, b, out, n);
  WL_CHECK_LAUNCH();
}

int main(int argc, char **argv)
{
  wl_prog = "matmul_add";
  wl_arg args[] = {{"N", 1, 8192, 256}, {"ITERS", 1, 100000, 10}, {"WARMUP", 0, 100000, 2}};
  wl_parse_args(argc, argv, args, 3);
  const int n = (int)args[0].value, iters = (int)args[1].value, warmup = (int)args[2].value;
  const size_t matrix_bytes = (size_t)n * n * sizeof(float);

  float *x = (float *)wl_alloc(matrix_bytes), *w = (float *)wl_alloc(matrix_bytes);
  float *b = (float *)wl_alloc(n * sizeof(float));
  float *y = (float *)wl_alloc(matrix_bytes), *out = (float *)wl_alloc(matrix_bytes);
  wl_fill(x, (unsigned long)n * n, 1);
  wl_fill(w, (unsigned long)n * n, 2);
  wl_fill(b, n, 3);

  float *dx, *dw, *db, *dy, *dout;
  WL_CHECK(cudaMalloc((void **)&dx, matrix_bytes));
  WL_CHECK(cudaMalloc((void **)&dw, matrix_bytes));
  WL_CHECK(cudaMalloc((void **)&db, n * sizeof(float)));
  WL_CHECK(cudaMalloc((void **)&dy, matrix_bytes));
  WL_CHECK(cudaMalloc((void **)&dout, matrix_bytes));
  WL_CHECK(cudaMemcpy(dx, x, matrix_bytes, cudaMemcpyHostToDevice));
  WL_CHECK(cudaMemcpy(dw, w, matrix_bytes, cudaMemcpyHostToDevice));
  WL_CHECK(cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice));

  cublasHandle_t blas;
  WL_CHECK_BLAS(cublasCreate(&blas));
  for (int i = 0; i < warmup; i++)
    matmul_add_step(blas, dx, dw, db, dy, dout, n);

  cudaEvent_t start, stop;
  WL_CHECK(cudaEventCreate(&start));
  WL_CHECK(cudaEventCreate(&stop));
  WL_CHECK(cudaEventRecord(start, 0));
  for (int i = 0; i < iters; i++)
    matmul_add_step(blas, dx, dw, db, dy, dout, n);
  WL_CHECK(cudaEventRecord(stop, 0));
  WL_CHECK(cudaDeviceSynchronize());
  float ms = 0;
  WL_CHECK(cudaEventElapsedTime(&ms, start, stop));

  WL_CHECK(cudaMemcpy(y, dy, matrix_bytes, cudaMemcpyDeviceToHost));
  WL_CHECK(cudaMemcpy(out, dout, matrix_bytes, cudaMemcpyDeviceToHost));
  const int samples = 16;
  int failures = 0;
  for (int s = 0; s < samples; s++) {
    int row, col;
    wl_sample_position(s, n, n, &row, &col);
    double want = wl_ref_dot(x, w, n, n, row, col, 0);
    float got = y[(size_t)row * n + col];
    if (!wl_close(got, want, 1e-4) && failures++ == 0)
      fprintf(stderr, "matmul_add: sgemm y[%d,%d] = %g, want %g\n", row, col, got, want);
  }
  const int simulated = wl_on_simulator();
  if (!simulated) {
    for (int s = 0; s < samples; s++) {
      int row, col;
      wl_sample_position(s, n, n, &row, &col);
      size_t at = (size_t)row * n + col;
      if (!wl_close(out[at], (double)y[at] + b[col], 1e-6) && failures++ == 0)
        fprintf(stderr, "matmul_add: bias_add out[%d,%d] = %g, want %g\n", row, col, out[at],
                (double)y[at] + b[col]);
    }
  }
  printf("matmul_add: N=%d warmup=%d iters=%d: %.3f ms/iter (events); sgemm check on %d "
         "elements: %s; bias_add check: %s\n",
         n, warmup, iters, ms / iters, samples, failures ? "FAILED" : "ok",
         simulated ? "skipped (simulated GPU: its kernels compute nothing)" : (failures ? "FAILED" : "ok"));

  WL_CHECK_BLAS(cublasDestroy(blas));
  WL_CHECK(cudaEventDestroy(start));
  WL_CHECK(cudaEventDestroy(stop));
  WL_CHECK(cudaFree(dx));
  WL_CHECK(cudaFree(dw));
  WL_CHECK(cudaFree(db));
  WL_CHECK(cudaFree(dy));
  WL_CHECK(cudaFree(dout));
  free(x), free(w), free(b), free(y), free(out);
  return failures ? 1 : 0;
}
