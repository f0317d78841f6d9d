// cuBLAS GEMMs against a CPU reference: every transpose pair, alpha/beta,
// padded leading dimensions, 64-bit and legacy entry points, strided batches,
// GemmEx in fp32 and fp16/bf16 inputs.
#include "check.h"
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector>

#define CHECK_BLAS(call) CHECK((call) == CUBLAS_STATUS_SUCCESS)
// The legacy handle-less cublasSgemm (cublas_v2.h #defines that name to
// cublasSgemm_v2, so it is declared under another name bound to the symbol).
extern "C" void legacy_cublasSgemm(char, char, int, int, int, float, const float *, int, const float *, int,
                                   float, float *, int) __asm__("cublasSgemm");

static std::vector<float> random_matrix(size_t count, unsigned seed)
{
  std::vector<float> v(count);
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (float)((seed >> 16) % 17) / 8.0f - 1.0f;
  }
  return v;
}

static float *to_device(const std::vector<float> &v)
{
  float *d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, v.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

static std::vector<float> from_device(const float *d, size_t count)
{
  std::vector<float> v(count);
  CHECK_CUDA(cudaMemcpy(v.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  return v;
}

int main()
{
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_BLAS(cublasSetStream(h, s));
  cudaStream_t got;
  CHECK_BLAS(cublasGetStream(h, &got));
  CHECK(got == s);
  CHECK_BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  cublasMath_t mode;
  CHECK_BLAS(cublasGetMathMode(h, &mode));
  CHECK(mode == CUBLAS_TF32_TENSOR_OP_MATH);
  int version = 0;
  CHECK_BLAS(cublasGetVersion(h, &version));
  CHECK(version >= 130000);

  const int m = 37, n = 23, k = 19, pad = 3;
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++) {
      int lda = (ta ? k : m) + pad, ldb = (tb ? n : k) + pad, ldc = m + pad;
      auto A = random_matrix((size_t)lda * (ta ? m : k), 1 + ta);
      auto B = random_matrix((size_t)ldb * (tb ? k : n), 7 + tb);
      auto C = random_matrix((size_t)ldc * n, 13);
      float *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
      float alpha = 1.5f, beta = -0.5f;
      CHECK_BLAS(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                             &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
      CHECK_CUDA(cudaStreamSynchronize(s));
      auto ref = C;
      ref_gemm(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, ref.data(), ldc);
      CHECK(close_enough(from_device(dC, C.size()).data(), ref.data(), (int)C.size(), 1e-5f));

      // The same product through the 64-bit entry point, beta = 0 over garbage.
      std::vector<float> nan_c(C.size(), NAN);
      CHECK_CUDA(cudaMemcpy(dC, nan_c.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
      float zero = 0.0f;
      CHECK_BLAS(cublasSgemm_v2_64(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n,
                                   k, &alpha, dA, lda, dB, ldb, &zero, dC, ldc));
      auto ref0 = nan_c;
      ref_gemm(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, 0.0f, ref0.data(), ldc);
      auto out0 = from_device(dC, C.size());
      for (int j = 0; j < n; j++)
        CHECK(close_enough(out0.data() + j * ldc, ref0.data() + j * ldc, m, 1e-5f));

      // GemmEx fp32.
      CHECK_CUDA(cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
      CHECK_BLAS(cublasGemmEx(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
                              &alpha, dA, CUDA_R_32F, lda, dB, CUDA_R_32F, ldb, &beta, dC, CUDA_R_32F, ldc,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      CHECK(close_enough(from_device(dC, C.size()).data(), ref.data(), (int)C.size(), 1e-5f));

      // Legacy handle-less API on the legacy stream.
      CHECK_CUDA(cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
      legacy_cublasSgemm(ta ? 'T' : 'N', tb ? 't' : 'n', m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc);
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK(close_enough(from_device(dC, C.size()).data(), ref.data(), (int)C.size(), 1e-5f));
      CHECK_CUDA(cudaFree(dA));
      CHECK_CUDA(cudaFree(dB));
      CHECK_CUDA(cudaFree(dC));
    }

  // Strided batched (float and Ex).
  const int batch = 3;
  long long sa = (long long)m * k + 5, sb = (long long)k * n + 2, sc = (long long)m * n + 1;
  auto A = random_matrix(sa * batch, 3), B = random_matrix(sb * batch, 4), C = random_matrix(sc * batch, 5);
  float *dA = to_device(A), *dB = to_device(B), *dC = to_device(C);
  float alpha = 0.75f, beta = 2.0f;
  CHECK_BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, sa, dB, k, sb,
                                       &beta, dC, m, sc, batch));
  auto ref = C;
  for (int p = 0; p < batch; p++)
    ref_gemm(false, false, m, n, k, alpha, A.data() + p * sa, m, B.data() + p * sb, k, beta,
             ref.data() + p * sc, m);
  auto out = from_device(dC, C.size());
  for (int p = 0; p < batch; p++) CHECK(close_enough(out.data() + p * sc, ref.data() + p * sc, m * n, 1e-5f));
  CHECK_CUDA(cudaMemcpy(dC, C.data(), C.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, CUDA_R_32F, m, sa,
                                        dB, CUDA_R_32F, k, sb, &beta, dC, CUDA_R_32F, m, sc, batch,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  out = from_device(dC, C.size());
  for (int p = 0; p < batch; p++) CHECK(close_enough(out.data() + p * sc, ref.data() + p * sc, m * n, 1e-5f));

  // fp16 and bf16 inputs, fp32 output (values are exact in both formats).
  std::vector<__half> Ah(m * k), Bh(k * n);
  std::vector<__nv_bfloat16> Ab(m * k), Bb(k * n);
  for (int i = 0; i < m * k; i++) Ah[i] = __float2half(A[i]), Ab[i] = __float2bfloat16(A[i]);
  for (int i = 0; i < k * n; i++) Bh[i] = __float2half(B[i]), Bb[i] = __float2bfloat16(B[i]);
  void *dAh, *dBh;
  CHECK_CUDA(cudaMalloc(&dAh, m * k * 2));
  CHECK_CUDA(cudaMalloc(&dBh, k * n * 2));
  std::vector<float> ref16(m * n, 0.0f);
  ref_gemm(false, false, m, n, k, 1.0f, A.data(), m, B.data(), k, 0.0f, ref16.data(), m);
  float one = 1.0f, zero = 0.0f;
  for (int bf = 0; bf < 2; bf++) {
    CHECK_CUDA(cudaMemcpy(dAh, bf ? (void *)Ab.data() : (void *)Ah.data(), m * k * 2, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dBh, bf ? (void *)Bb.data() : (void *)Bh.data(), k * n * 2, cudaMemcpyHostToDevice));
    cudaDataType t = bf ? CUDA_R_16BF : CUDA_R_16F;
    CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dAh, t, m, dBh, t, k, &zero, dC,
                            CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(close_enough(from_device(dC, m * n).data(), ref16.data(), m * n, 1e-5f));
  }

  // Argument errors.
  CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m - 1, dB, k, &beta, dC, m) ==
        CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasGetStatusString(CUBLAS_STATUS_SUCCESS) != nullptr);
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_BLAS(cublasDestroy(h));
  std::puts("blas_gemm ok");
  return 0;
}
