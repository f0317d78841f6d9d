// Library setup the GPU waits for (test_libsetup.py): cuBLAS and cuBLASLt handles are
// created (cublasLtCreate, cublasCreate_v2), a kernel runs on stream s and the host
// waits for it, then cublasLtMatmulAlgoGetHeuristic (planted slow by the simulator's
// SIMCUBLAS_HEURISTIC_US) picks the algorithm of the next GEMM, and cublasLtMatmul
// runs it on s: the GPU is idle while the host searches. D = A B (4 x 4, column-major,
// A = all 1, B(i, j) = j) is checked; prints "libsetup: ok D[0,3]=12" when it holds.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define CHECK(call)                                                                \
  do {                                                                             \
    int e_ = (int)(call);                                                          \
    if (e_) {                                                                      \
      fprintf(stderr, "libsetup: %s failed: %d (line %d)\n", #call, e_, __LINE__); \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

__global__ void fill(float *x, float v) { x[threadIdx.x] = v; }

int main(void) {
  const int n = 4;
  float *A, *B, *D, *scratch;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMalloc(&A, n * n * sizeof(float)));
  CHECK(cudaMalloc(&B, n * n * sizeof(float)));
  CHECK(cudaMalloc(&D, n * n * sizeof(float)));
  CHECK(cudaMalloc(&scratch, n * n * sizeof(float)));
  float ha[16], hb[16], hd[16];
  for (int i = 0; i < n * n; i++) {
    ha[i] = 1.0f;
    hb[i] = (float)(i / n);  // column j holds j
  }
  CHECK(cudaMemcpy(A, ha, sizeof ha, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, hb, sizeof hb, cudaMemcpyHostToDevice));

  cublasLtHandle_t lt;
  cublasHandle_t handle;
  CHECK(cublasLtCreate(&lt));
  CHECK(cublasCreate_v2(&handle));
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t layout;
  cublasLtMatmulPreference_t pref;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, n, n, n));
  CHECK(cublasLtMatmulPreferenceCreate(&pref));

  fill<<<1, n * n, 0, s>>>(scratch, 1.0f);  // the kernel before the gap
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(s));
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, layout, layout, layout, layout, pref, 1, &heur,
                                       &found));
  if (found != 1) {
    fprintf(stderr, "libsetup: %d algorithms found\n", found);
    return 1;
  }
  float one = 1.0f, zero = 0.0f;
  CHECK(cublasLtMatmul(lt, desc, &one, A, layout, B, layout, &zero, D, layout, D, layout,
                       &heur.algo, NULL, 0, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(hd, D, sizeof hd, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n * n; i++)
    if (hd[i] != (float)(n * (i / n))) {
      fprintf(stderr, "libsetup: D[%d] = %g, want %d\n", i, hd[i], n * (i / n));
      return 1;
    }
  CHECK(cublasLtMatmulPreferenceDestroy(pref));
  CHECK(cublasLtMatrixLayoutDestroy(layout));
  CHECK(cublasLtMatmulDescDestroy(desc));
  CHECK(cublasDestroy_v2(handle));
  CHECK(cublasLtDestroy(lt));
  printf("libsetup: ok D[0,3]=%g\n", hd[12]);
  return 0;
}
