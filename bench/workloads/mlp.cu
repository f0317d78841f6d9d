/* mlp: a three-layer perceptron forward pass on one stream, ITERS times.
 *   layer 1: h1 = relu(x . W1)            cublasSgemm, then the relu kernel
 *   layer 2: h2 = relu(h1 . W2^T + b2)    cublasLtMatmul, RELU_BIAS epilogue
 *   layer 3: y  = relu(h2 . W3)           cublasSgemm, then the relu kernel
 * All tensors are row-major fp32, x is [BATCH, WIDTH], weights WIDTH x WIDTH.
 * Each layer's output is checked against the CPU from the input it really got
 * (copied back): on the simulator the relu kernels compute nothing, so h1 and y
 * keep the zeros they were cleared to and only the GEMMs and the Lt epilogue
 * are checked; on a real GPU the relu kernels are checked too. */
#include "workload_lt.h"
#include <cublas_v2.h>

/* out[i] = max(in[i], 0) for i < count. */
__global__ void relu(const float *in, float *out, long count)
{
  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

/* Device buffers of the network. */
typedef struct {
  float *x, *w1, *w2, *b2, *w3;
  float *h1_pre, *h1, *h2, *y_pre, *y;
} mlp_buffers;

/* Row-major out[batch, width] = in . w through cuBLAS, then relu into act. */
static void gemm_relu_layer(cublasHandle_t blas, const float *in, const float *w, float *out, float *act,
                            int batch, int width, cudaStream_t stream)
{
  const float one = 1.0f, zero = 0.0f;
  WL_CHECK_BLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, width, batch, width, &one, w, width, in, width,
                            &zero, out, width));
  long count = (long)batch * width;
  relu<<<(unsigned)((count + 255) / 256), 256, 0, stream>>>(out, act, count);
  WL_CHECK_LAUNCH();
}

/* Copies count floats of a device buffer back into a new host buffer. */
static float *copy_back(const float *device, size_t count)
{
  float *host = (float *)wl_alloc(count * sizeof(float));
  WL_CHECK(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

/* Checks sampled elements of got = f(in . W) where f is the identity, or relu
 * with bias when bias is set, against the CPU; returns the failures. */
static int check_layer(const char *what, const float *in, const float *w, int w_transposed,
                       const float *bias, const float *got, int batch, int width)
{
  int failures = 0;
  for (int s = 0; s < 16; s++) {
    int row, col;
    wl_sample_position(s, batch, width, &row, &col);
    double want = wl_ref_dot(in, w, width, width, row, col, w_transposed);
    if (bias) {
      want += bias[col];
      want = want > 0 ? want : 0;
    }
    float value = got[(size_t)row * width + col];
    if (!wl_close(value, want, 1e-4) && failures++ == 0)
      fprintf(stderr, "mlp: %s[%d,%d] = %g, want %g\n", what, row, col, value, want);
  }
  return failures;
}

/* Checks sampled elements of act = relu(pre); returns the failures. */
static int check_relu(const char *what, const float *pre, const float *act, int batch, int width)
{
  int failures = 0;
  for (int s = 0; s < 16; s++) {
    int row, col;
    wl_sample_position(s, batch, width, &row, &col);
    size_t at = (size_t)row * width + col;
    float want = pre[at] > 0 ? pre[at] : 0;
    if (act[at] != want && failures++ == 0)
      fprintf(stderr, "mlp: %s[%d,%d] = %g, want %g\n", what, row, col, act[at], want);
  }
  return failures;
}

int main(int argc, char **argv)
{
  wl_prog = "mlp";
  wl_arg args[] = {{"BATCH", 1, 65536, 64}, {"WIDTH", 1, 8192, 256}, {"ITERS", 1, 100000, 10}};
  wl_parse_args(argc, argv, args, 3);
  const int batch = (int)args[0].value, width = (int)args[1].value, iters = (int)args[2].value;
  const size_t act_count = (size_t)batch * width, w_count = (size_t)width * width;
  const size_t workspace_bytes = 4u << 20;

  float *x = (float *)wl_alloc(act_count * sizeof(float));
  float *w[3], *b2 = (float *)wl_alloc(width * sizeof(float));
  wl_fill(x, act_count, 21);
  wl_fill(b2, width, 25);
  for (int l = 0; l < 3; l++) {
    w[l] = (float *)wl_alloc(w_count * sizeof(float));
    wl_fill(w[l], w_count, 22 + l);
  }

  mlp_buffers d;
  float **activations[] = {&d.x, &d.h1_pre, &d.h1, &d.h2, &d.y_pre, &d.y};
  for (int i = 0; i < 6; i++) {
    WL_CHECK(cudaMalloc((void **)activations[i], act_count * sizeof(float)));
    WL_CHECK(cudaMemset(*activations[i], 0, act_count * sizeof(float)));
  }
  float **weights[] = {&d.w1, &d.w2, &d.w3};
  for (int l = 0; l < 3; l++) {
    WL_CHECK(cudaMalloc((void **)weights[l], w_count * sizeof(float)));
    WL_CHECK(cudaMemcpy(*weights[l], w[l], w_count * sizeof(float), cudaMemcpyHostToDevice));
  }
  WL_CHECK(cudaMalloc((void **)&d.b2, width * sizeof(float)));
  WL_CHECK(cudaMemcpy(d.b2, b2, width * sizeof(float), cudaMemcpyHostToDevice));
  WL_CHECK(cudaMemcpy(d.x, x, act_count * sizeof(float), cudaMemcpyHostToDevice));
  void *workspace;
  WL_CHECK(cudaMalloc(&workspace, workspace_bytes));

  cudaStream_t stream;
  WL_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t blas;
  WL_CHECK_BLAS(cublasCreate(&blas));
  WL_CHECK_BLAS(cublasSetStream(blas, stream));
  cublasLtHandle_t lt;
  WL_CHECK_BLAS(cublasLtCreate(&lt));
  linear_plan layer2;
  linear_plan_create(lt, &layer2, batch, width, width, CUBLASLT_EPILOGUE_RELU_BIAS, d.b2, workspace_bytes);

  cudaEvent_t start, stop;
  WL_CHECK(cudaEventCreate(&start));
  WL_CHECK(cudaEventCreate(&stop));
  WL_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < iters; i++) {
    gemm_relu_layer(blas, d.x, d.w1, d.h1_pre, d.h1, batch, width, stream);
    linear_plan_run(lt, &layer2, d.w2, d.h1, d.h2, workspace, workspace_bytes, stream);
    gemm_relu_layer(blas, d.h2, d.w3, d.y_pre, d.y, batch, width, stream);
  }
  WL_CHECK(cudaEventRecord(stop, stream));
  WL_CHECK(cudaStreamSynchronize(stream));
  float ms = 0;
  WL_CHECK(cudaEventElapsedTime(&ms, start, stop));

  float *h1_pre = copy_back(d.h1_pre, act_count), *h1 = copy_back(d.h1, act_count);
  float *h2 = copy_back(d.h2, act_count), *y_pre = copy_back(d.y_pre, act_count);
  float *y = copy_back(d.y, act_count);
  int failures = check_layer("h1_pre", x, w[0], 0, NULL, h1_pre, batch, width) +
                 check_layer("h2", h1, w[1], 1, b2, h2, batch, width) +
                 check_layer("y_pre", h2, w[2], 0, NULL, y_pre, batch, width);
  const int simulated = wl_on_simulator();
  if (!simulated)
    failures += check_relu("h1", h1_pre, h1, batch, width) + check_relu("y", y_pre, y, batch, width);
  printf("mlp: BATCH=%d WIDTH=%d iters=%d: %.3f ms/iter (events); gemm and lt checks: %s; relu check: %s\n",
         batch, width, iters, ms / iters, failures ? "FAILED" : "ok",
         simulated ? "skipped (simulated GPU: its kernels compute nothing)" : (failures ? "FAILED" : "ok"));

  linear_plan_destroy(&layer2);
  WL_CHECK_BLAS(cublasLtDestroy(lt));
  WL_CHECK_BLAS(cublasDestroy(blas));
  WL_CHECK(cudaEventDestroy(start));
  WL_CHECK(cudaEventDestroy(stop));
  WL_CHECK(cudaStreamDestroy(stream));
  for (int i = 0; i < 6; i++)
    WL_CHECK(cudaFree(*activations[i]));
  for (int l = 0; l < 3; l++) {
    WL_CHECK(cudaFree(*weights[l]));
    free(w[l]);
  }
  WL_CHECK(cudaFree(d.b2));
  WL_CHECK(cudaFree(workspace));
  free(x), free(b2), free(h1_pre), free(h1), free(h2), free(y_pre), free(y);
  return failures ? 1 : 0;
}
