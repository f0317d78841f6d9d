/* hk_shim: a stand-in for a library that calls the CUDA runtime from inside its
 * own entry points (as cuBLAS does). Preloaded after libtrace.so, its
 * cublasSgemm_v2 first clears C with cudaMemsetAsync on the handle's stream (a call
 * that reaches libtrace.so's wrapper, nested), then forwards to the real
 * cublasSgemm_v2. The tests check that the nested call is a depth-1 child of the
 * GEMM's span and is not timed a second time. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

__attribute__((visibility("default"))) cublasStatus_t
cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
               int n, int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
               const float *beta, float *C, int ldc) {
  __typeof__(&cublasSgemm_v2) real = (__typeof__(&cublasSgemm_v2))dlsym(RTLD_NEXT, "cublasSgemm_v2");
  cudaStream_t stream = 0;
  if (!real || cublasGetStream_v2(handle, &stream) != CUBLAS_STATUS_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (cudaMemsetAsync(C, 0, (size_t)ldc * (size_t)n * sizeof(float), stream) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
