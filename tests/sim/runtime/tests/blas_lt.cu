// cuBLASLt matmul as nn.Linear issues it: D = act(W^T X + bias) with TRANSA = T,
// for the DEFAULT, BIAS, RELU and RELU_BIAS epilogues, against a CPU reference.
#include "check.h"
#include <cublasLt.h>
#include <vector>

#define CHECK_BLAS(call) CHECK((call) == CUBLAS_STATUS_SUCCESS)

int main()
{
  const int in = 24, out = 17, rows = 9; // y[rows, out] = x[rows, in] W[out, in]^T + b
  std::vector<float> W(in * out), X(in * rows), bias(out);
  for (int i = 0; i < in * out; i++) W[i] = (float)((i * 7) % 11) / 4.0f - 1.25f;
  for (int i = 0; i < in * rows; i++) X[i] = (float)((i * 5) % 13) / 6.0f - 1.0f;
  for (int i = 0; i < out; i++) bias[i] = (float)i / 3.0f - 2.0f;
  float *dW, *dX, *dB, *dD;
  CHECK_CUDA(cudaMalloc(&dW, W.size() * 4));
  CHECK_CUDA(cudaMalloc(&dX, X.size() * 4));
  CHECK_CUDA(cudaMalloc(&dB, bias.size() * 4));
  CHECK_CUDA(cudaMalloc(&dD, out * rows * 4));
  CHECK_CUDA(cudaMemcpy(dW, W.data(), W.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dX, X.data(), X.size() * 4, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice));

  cublasLtHandle_t lt;
  CHECK_BLAS(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CHECK_BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dB, sizeof dB));
  cublasOperation_t back;
  size_t written = 0;
  CHECK_BLAS(cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, sizeof back, &written));
  CHECK(back == CUBLAS_OP_T && written == sizeof back);

  // Column-major views: A = W^T source is W stored as [in x out] (ld in), B = X as [in x rows].
  cublasLtMatrixLayout_t a, b, d;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, in, out, in));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, in, rows, in));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&d, CUDA_R_32F, out, rows, out));
  uint64_t got_rows = 0;
  CHECK_BLAS(cublasLtMatrixLayoutGetAttribute(a, CUBLASLT_MATRIX_LAYOUT_ROWS, &got_rows, sizeof got_rows, &written));
  CHECK(got_rows == (uint64_t)in);

  cublasLtMatmulPreference_t pref;
  CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  size_t ws = 1 << 20;
  CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));

  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  const cublasLtEpilogue_t epilogues[] = {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS,
                                          CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS};
  for (cublasLtEpilogue_t epi : epilogues) {
    CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, d, d, pref, 1, &result, &found));
    CHECK(found == 1 && result.state == CUBLAS_STATUS_SUCCESS);
    float alpha = 1.0f, beta = 0.0f;
    CHECK_BLAS(cublasLtMatmul(lt, desc, &alpha, dW, a, dX, b, &beta, dD, d, dD, d, &result.algo, nullptr, 0, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    std::vector<float> got(out * rows), ref(out * rows, 0.0f);
    CHECK_CUDA(cudaMemcpy(got.data(), dD, got.size() * 4, cudaMemcpyDeviceToHost));
    ref_gemm(true, false, out, rows, in, 1.0f, W.data(), in, X.data(), in, 0.0f, ref.data(), out);
    for (int j = 0; j < rows; j++)
      for (int i = 0; i < out; i++) {
        float &v = ref[i + j * out];
        if (epi & CUBLASLT_EPILOGUE_BIAS) v += bias[i];
        if ((epi & CUBLASLT_EPILOGUE_RELU) && v < 0) v = 0;
      }
    CHECK(close_enough(got.data(), ref.data(), out * rows, 1e-5f));
  }
  CHECK_BLAS(cublasLtMatmulPreferenceDestroy(pref));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(a));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(b));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(d));
  CHECK_BLAS(cublasLtMatmulDescDestroy(desc));
  CHECK_BLAS(cublasLtDestroy(lt));
  std::puts("blas_lt ok");
  return 0;
}
