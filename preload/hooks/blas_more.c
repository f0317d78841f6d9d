/*
 * The cuBLAS GEMMs beyond blas.c's real ones, with the same records (API, GEMM, and
 * when outermost the whole call timed as CT_GPU_GEMM on the handle's stream unless
 * its kernels are): the single and double complex GEMMs (cublasCgemm_v2,
 * cublasZgemm_v2, the Gauss 3m forms cublasCgemm3m / cublasZgemm3m, their strided and
 * pointer-array batched forms), the typed-operand cublasSgemmEx / cublasCgemmEx /
 * cublasCgemm3mEx, and the grouped batched GEMMs (cublasSgemmGroupedBatched,
 * cublasDgemmGroupedBatched, cublasGemmGroupedBatchedEx), each with its _64 form.
 *
 * A grouped call runs group_size[i] GEMMs of shape i for each of its group_count
 * groups; its one GEMM record has batch = all of them, and m, n, k and the
 * transposes of its groups when every group has the same ones; when they differ, m,
 * n and k are 0 (one record cannot hold several shapes) and the transposes the first
 * group's. The host arrays of shapes and sizes are read only after a successful call.
 */
#include <cuComplex.h>

#include "blas_internal.h"

/* cublasCgemm_v2, cublasZgemm_v2, cublasCgemm3m, cublasZgemm3m (+_64), traced. */
TYPED_GEMM(cublasCgemm_v2, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasCgemm_v2_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasZgemm_v2, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasZgemm_v2_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasCgemm3m, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasCgemm3m_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_GEMM(cublasZgemm3m, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasZgemm3m_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
/* Their strided batched forms (+_64), traced. */
TYPED_STRIDED(cublasCgemmStridedBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_STRIDED(cublasCgemmStridedBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_STRIDED(cublasZgemmStridedBatched, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasZgemmStridedBatched_64, int64_t, cuDoubleComplex, CUDA_C_64F,
              CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasCgemm3mStridedBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_STRIDED(cublasCgemm3mStridedBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
/* Their pointer-array batched forms (+_64), traced. */
TYPED_BATCHED(cublasCgemmBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasCgemmBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasZgemmBatched, int, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasZgemmBatched_64, int64_t, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasCgemm3mBatched, int, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasCgemm3mBatched_64, int64_t, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)

/* cublasSgemmEx, cublasCgemmEx, cublasCgemm3mEx: typed operands, scalars of type S,
 * computed in CT. */
#define TYPED_OPERANDS(sym, IDX, S, CT)                                                         \
  CTP_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa,                \
                                cublasOperation_t transb, IDX m, IDX n, IDX k, const S *alpha,  \
                                const void *A, cudaDataType Atype, IDX lda, const void *B,      \
                                cudaDataType Btype, IDX ldb, const S *beta, void *C,            \
                                cudaDataType Ctype, IDX ldc) {                                  \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),     \
              (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,   \
               Ctype, ldc),                                                                     \
              ((struct gemm_shape){(uint64_t)m, (uint64_t)n, (uint64_t)k, 1, transa, transb,    \
                                   Atype, Btype, Ctype, CT, 0}));                               \
  }

TYPED_OPERANDS(cublasSgemmEx, int, float, CUBLAS_COMPUTE_32F)
TYPED_OPERANDS(cublasSgemmEx_64, int64_t, float, CUBLAS_COMPUTE_32F)
TYPED_OPERANDS(cublasCgemmEx, int, cuComplex, CUBLAS_COMPUTE_32F)
TYPED_OPERANDS(cublasCgemmEx_64, int64_t, cuComplex, CUBLAS_COMPUTE_32F)
TYPED_OPERANDS(cublasCgemm3mEx, int, cuComplex, CUBLAS_COMPUTE_32F)
TYPED_OPERANDS(cublasCgemm3mEx_64, int64_t, cuComplex, CUBLAS_COMPUTE_32F)

/* The GEMM record of a grouped call whose index type is IDX (see the top of the file):
 * read only when the call succeeded (its host arrays were then valid). */
#define GROUPED_SHAPE_FN(name, IDX)                                                            \
  static struct gemm_shape name(int ok, const cublasOperation_t *ta, const cublasOperation_t *tb, \
                                const IDX *m, const IDX *n, const IDX *k, IDX groups,           \
                                const IDX *size, uint64_t atype, uint64_t btype, uint64_t ctype, \
                                uint64_t compute) {                                             \
    struct gemm_shape g = {0, 0, 0, 0, 0, 0, atype, btype, ctype, compute, 0};                  \
    if (!ok || groups <= 0 || !ta || !tb || !m || !n || !k || !size)                            \
      return g;                                                                                 \
    int uniform = 1;                                                                            \
    for (IDX i = 0; i < groups; i++) {                                                          \
      g.batch += size[i] > 0 ? (uint64_t)size[i] : 0;                                           \
      uniform = uniform && ta[i] == ta[0] && tb[i] == tb[0] && m[i] == m[0] && n[i] == n[0] &&   \
                k[i] == k[0];                                                                   \
    }                                                                                           \
    g.transa = (uint64_t)ta[0];                                                                 \
    g.transb = (uint64_t)tb[0];                                                                 \
    if (uniform) {                                                                              \
      g.m = (uint64_t)m[0];                                                                     \
      g.n = (uint64_t)n[0];                                                                     \
      g.k = (uint64_t)k[0];                                                                     \
    }                                                                                           \
    return g;                                                                                   \
  }

GROUPED_SHAPE_FN(grouped_shape, int)
GROUPED_SHAPE_FN(grouped_shape_64, int64_t)

#define GROUPED_TYPED(sym, IDX, SHAPE_FN, T, DT, CT)                                            \
  CTP_EXPORT cublasStatus_t sym(                                                                \
      cublasHandle_t handle, const cublasOperation_t transa_array[],                            \
      const cublasOperation_t transb_array[], const IDX m_array[], const IDX n_array[],         \
      const IDX k_array[], const T alpha_array[], const T *const Aarray[], const IDX lda_array[], \
      const T *const Barray[], const IDX ldb_array[], const T beta_array[], T *const Carray[],  \
      const IDX ldc_array[], IDX group_count, const IDX group_size[]) {                         \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),     \
              (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array,      \
               Aarray, lda_array, Barray, ldb_array, beta_array, Carray, ldc_array, group_count, \
               group_size),                                                                     \
              SHAPE_FN(r == CUBLAS_STATUS_SUCCESS, transa_array, transb_array, m_array, n_array, \
                       k_array, group_count, group_size, DT, DT, DT, CT));                      \
  }

/* cublasSgemmGroupedBatched, cublasDgemmGroupedBatched (+_64), traced. */
GROUPED_TYPED(cublasSgemmGroupedBatched, int, grouped_shape, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
GROUPED_TYPED(cublasSgemmGroupedBatched_64, int64_t, grouped_shape_64, float, CUDA_R_32F,
              CUBLAS_COMPUTE_32F)
GROUPED_TYPED(cublasDgemmGroupedBatched, int, grouped_shape, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
GROUPED_TYPED(cublasDgemmGroupedBatched_64, int64_t, grouped_shape_64, double, CUDA_R_64F,
              CUBLAS_COMPUTE_64F)

#define GROUPED_EX(sym, IDX, SHAPE_FN)                                                          \
  CTP_EXPORT cublasStatus_t sym(                                                                \
      cublasHandle_t handle, const cublasOperation_t transa_array[],                            \
      const cublasOperation_t transb_array[], const IDX m_array[], const IDX n_array[],         \
      const IDX k_array[], const void *alpha_array, const void *const Aarray[],                 \
      cudaDataType_t Atype, const IDX lda_array[], const void *const Barray[],                  \
      cudaDataType_t Btype, const IDX ldb_array[], const void *beta_array,                      \
      void *const Carray[], cudaDataType_t Ctype, const IDX ldc_array[], IDX group_count,       \
      const IDX group_size[], cublasComputeType_t computeType) {                                \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),     \
              (handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array,      \
               Aarray, Atype, lda_array, Barray, Btype, ldb_array, beta_array, Carray, Ctype,   \
               ldc_array, group_count, group_size, computeType),                                \
              SHAPE_FN(r == CUBLAS_STATUS_SUCCESS, transa_array, transb_array, m_array, n_array, \
                       k_array, group_count, group_size, Atype, Btype, Ctype, computeType));    \
  }

/* cublasGemmGroupedBatchedEx (+_64), traced. */
GROUPED_EX(cublasGemmGroupedBatchedEx, int, grouped_shape)
GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t, grouped_shape_64)
