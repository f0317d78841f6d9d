/*
 * What the cuBLAS GEMM wrappers share (blas.c, blas_more.c): the GEMM record's
 * content, the stream a handle's calls run on, and the bodies of the wrappers, one
 * macro per argument-list family.
 */
#ifndef CUTRACE_PRELOAD_BLAS_INTERNAL_H
#define CUTRACE_PRELOAD_BLAS_INTERNAL_H

#include <cublasLt.h>
#include <cublas_v2.h>

#include "hooks_internal.h"

/* What a GEMM record says. */
struct gemm_shape {
  uint64_t m, n, k, batch, transa, transb, atype, btype, ctype, compute, epilogue;
};

/* Writes the GEMM detail record of the call `corr`. */
void ctph_emit_gemm(uint64_t corr, const struct gemm_shape *g) CTPH_HIDDEN;

/* The stream of a cuBLAS handle (0 when it cannot be had). Leaves errno as it was
 * only when the caller saves it (GEMM_BODY does). */
cudaStream_t ctph_blas_stream(cublasHandle_t handle) CTPH_HIDDEN;

/* Forward; when tracing, span + GEMM record (SHAPE initialises `struct gemm_shape g`). */
#define GEMM_BODY(sym, ret_type, fail, stream_expr, call_args, SHAPE)                  \
  __typeof__(&sym) real = CTPH_REAL(sym);                                              \
  if (!real)                                                                           \
    return fail;                                                                       \
  if (CTP_UNLIKELY(!ctph_on()))                                                        \
    return real call_args;                                                             \
  int saved_ = errno;                                                                  \
  cudaStream_t stream_ = stream_expr;                                                  \
  errno = saved_;                                                                      \
  ctph_call c;                                                                         \
  ctph_call_begin(&c, CTPH_ID_##sym, 0, CT_GPU_GEMM, (CUstream)stream_,                \
                  ctph_hook_name_id(CTPH_ID_##sym));                                   \
  ret_type r = real call_args;                                                         \
  CTPH_FINISH(c, r, struct gemm_shape g = SHAPE; ctph_emit_gemm(c.corr, &g));               \
  return r

#define SHAPE_S(batch) \
  {(uint64_t)m, (uint64_t)n, (uint64_t)k, (uint64_t)(batch), transa, transb, CUDA_R_32F, \
   CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0}
#define SHAPE_EX(batch) \
  {(uint64_t)m, (uint64_t)n, (uint64_t)k, (uint64_t)(batch), transa, transb, Atype, Btype, \
   Ctype, computeType, 0}

/* The double and half precision forms and the pointer-array batched forms: the same
 * argument lists as the float ones with another element type T (cudaDataType DT,
 * compute type CT) and index type IDX (int, or int64_t for the _64 forms). */
/* cublas_api.h declares the __half forms for C++ only: to C they take pointers to an
 * opaque 16-bit element, passed as they are. */
typedef struct cublas_half_element half_element;

#define SHAPE_T(batch, DT, CT) \
  {(uint64_t)m, (uint64_t)n, (uint64_t)k, (uint64_t)(batch), transa, transb, DT, DT, DT, CT, 0}

#define TYPED_GEMM(sym, IDX, T, DT, CT)                                                        \
  CTP_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa,               \
                                cublasOperation_t transb, IDX m, IDX n, IDX k, const T *alpha,  \
                                const T *A, IDX lda, const T *B, IDX ldb, const T *beta, T *C,  \
                                IDX ldc) {                                                      \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),        \
              (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),           \
              SHAPE_T(1, DT, CT));                                                              \
  }

#define TYPED_STRIDED(sym, IDX, T, DT, CT)                                                     \
  CTP_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa,               \
                                cublasOperation_t transb, IDX m, IDX n, IDX k, const T *alpha,  \
                                const T *A, IDX lda, long long int strideA, const T *B,         \
                                IDX ldb, long long int strideB, const T *beta, T *C, IDX ldc,   \
                                long long int strideC, IDX batchCount) {                        \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),        \
              (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,  \
               C, ldc, strideC, batchCount),                                                    \
              SHAPE_T(batchCount, DT, CT));                                                     \
  }

#define TYPED_BATCHED(sym, IDX, T, DT, CT)                                                     \
  CTP_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa,               \
                                cublasOperation_t transb, IDX m, IDX n, IDX k, const T *alpha,  \
                                const T *const Aarray[], IDX lda, const T *const Barray[],      \
                                IDX ldb, const T *beta, T *const Carray[], IDX ldc,             \
                                IDX batchCount) {                                               \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),        \
              (handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray,  \
               ldc, batchCount),                                                                \
              SHAPE_T(batchCount, DT, CT));                                                     \
  }

#define TYPED_BATCHED_EX(sym, IDX)                                                              \
  CTP_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa,               \
                                cublasOperation_t transb, IDX m, IDX n, IDX k, const void *alpha, \
                                const void *const Aarray[], cudaDataType Atype, IDX lda,        \
                                const void *const Barray[], cudaDataType Btype, IDX ldb,        \
                                const void *beta, void *const Carray[], cudaDataType Ctype,     \
                                IDX ldc, IDX batchCount, cublasComputeType_t computeType,       \
                                cublasGemmAlgo_t algo) {                                        \
    GEMM_BODY(sym, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),        \
              (handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb,  \
               beta, Carray, Ctype, ldc, batchCount, computeType, algo),                        \
              SHAPE_EX(batchCount));                                                            \
  }

#endif
