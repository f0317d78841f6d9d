// Tiny assertion helpers shared by the simulator's runtime test programs.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

#define CHECK_CUDA(call)                                                     \
  do {                                                                       \
    cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,   \
                   cudaGetErrorName(e_));                                    \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

// Column-major reference: C = alpha op(A) op(B) + beta C.
static inline void ref_gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float *A, int lda,
                            const float *B, int ldb, float beta, float *C, int ldc)
{
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double acc = 0;
      for (int l = 0; l < k; l++)
        acc += (double)(ta ? A[l + i * lda] : A[i + l * lda]) * (tb ? B[j + l * ldb] : B[l + j * ldb]);
      C[i + j * ldc] = (float)(alpha * acc + (beta != 0 ? beta * C[i + j * ldc] : 0));
    }
}

static inline bool close_enough(const float *x, const float *y, int count, float tol)
{
  for (int i = 0; i < count; i++)
    if (!(std::fabs(x[i] - y[i]) <= tol * (1 + std::fabs(y[i])))) {
      std::fprintf(stderr, "mismatch at %d: %g vs %g\n", i, x[i], y[i]);
      return false;
    }
  return true;
}
