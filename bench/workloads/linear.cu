/* linear: what PyTorch's nn.Linear does on fp32 2-D input, one cublasLtMatmul
 * per iteration with the BIAS epilogue: y[BATCH, OUT] = x[BATCH, IN] . W^T + b,
 * W stored [OUT, IN] row-major as PyTorch keeps it. The result is checked
 * against the CPU on a few elements (the simulated cuBLASLt computes it). */
#include "workload_lt.h"

int main(int argc, char **argv)
{
  wl_prog = "linear";
  wl_arg args[] = {{"BATCH", 1, 65536, 64}, {"IN", 1, 16384, 512}, {"OUT", 1, 16384, 256},
                   {"ITERS", 1, 100000, 10}};
  wl_parse_args(argc, argv, args, 4);
  const int batch = (int)args[0].value, in = (int)args[1].value, out = (int)args[2].value;
  const int iters = (int)args[3].value;
  const size_t x_bytes = (size_t)batch * in * sizeof(float), w_bytes = (size_t)out * in * sizeof(float);
  const size_t y_bytes = (size_t)batch * out * sizeof(float), workspace_bytes = 4u << 20;

  float *x = (float *)wl_alloc(x_bytes), *w = (float *)wl_alloc(w_bytes);
  float *b = (float *)wl_alloc(out * sizeof(float)), *y = (float *)wl_alloc(y_bytes);
  wl_fill(x, (unsigned long)batch * in, 11);
  wl_fill(w, (unsigned long)out * in, 12);
  wl_fill(b, out, 13);

  float *dx, *dw, *db, *dy;
  void *workspace;
  WL_CHECK(cudaMalloc((void **)&dx, x_bytes));
  WL_CHECK(cudaMalloc((void **)&dw, w_bytes));
  WL_CHECK(cudaMalloc((void **)&db, out * sizeof(float)));
  WL_CHECK(cudaMalloc((void **)&dy, y_bytes));
  WL_CHECK(cudaMalloc(&workspace, workspace_bytes));
  WL_CHECK(cudaMemcpy(dx, x, x_bytes, cudaMemcpyHostToDevice));
  WL_CHECK(cudaMemcpy(dw, w, w_bytes, cudaMemcpyHostToDevice));
  WL_CHECK(cudaMemcpy(db, b, out * sizeof(float), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  WL_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  WL_CHECK_BLAS(cublasLtCreate(&lt));
  linear_plan plan;
  linear_plan_create(lt, &plan, batch, in, out, CUBLASLT_EPILOGUE_BIAS, db, workspace_bytes);

  cudaEvent_t start, stop;
  WL_CHECK(cudaEventCreate(&start));
  WL_CHECK(cudaEventCreate(&stop));
  WL_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < iters; i++)
    linear_plan_run(lt, &plan, dw, dx, dy, workspace, workspace_bytes, stream);
  WL_CHECK(cudaEventRecord(stop, stream));
  WL_CHECK(cudaStreamSynchronize(stream));
  float ms = 0;
  WL_CHECK(cudaEventElapsedTime(&ms, start, stop));

  WL_CHECK(cudaMemcpy(y, dy, y_bytes, cudaMemcpyDeviceToHost));
  const int samples = 16;
  int failures = 0;
  for (int s = 0; s < samples; s++) {
    int row, col;
    wl_sample_position(s, batch, out, &row, &col);
    double want = wl_ref_dot(x, w, in, out, row, col, 1) + b[col];
    float got = y[(size_t)row * out + col];
    if (!wl_close(got, want, 1e-4) && failures++ == 0)
      fprintf(stderr, "linear: y[%d,%d] = %g, want %g\n", row, col, got, want);
  }
  printf("linear: BATCH=%d IN=%d OUT=%d iters=%d: %.3f ms/iter (events); matmul+bias check on %d "
         "elements: %s\n",
         batch, in, out, iters, ms / iters, samples, failures ? "FAILED" : "ok");

  linear_plan_destroy(&plan);
  WL_CHECK_BLAS(cublasLtDestroy(lt));
  WL_CHECK(cudaEventDestroy(start));
  WL_CHECK(cudaEventDestroy(stop));
  WL_CHECK(cudaStreamDestroy(stream));
  WL_CHECK(cudaFree(dx));
  WL_CHECK(cudaFree(dw));
  WL_CHECK(cudaFree(db));
  WL_CHECK(cudaFree(dy));
  WL_CHECK(cudaFree(workspace));
  free(x), free(w), free(b), free(y);
  return failures ? 1 : 0;
}
