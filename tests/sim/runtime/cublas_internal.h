/* What the simulated libcublas's files share: the handle, and the GEMM core of
 * cublas.c that cublas_more.c's entry points also use. */
#ifndef SIM_RUNTIME_CUBLAS_INTERNAL_H
#define SIM_RUNTIME_CUBLAS_INTERNAL_H

#include "gemm_ref.h"
#include "simkernel.h"

#include <cublas_api.h>

struct cublasContext {
  CUstream stream;
  cublasMath_t math_mode;
  cublasPointerMode_t pointer_mode;
  cublasAtomicsMode_t atomics_mode;
  void *workspace;
  size_t workspace_size;
};

/* Validates, computes and launches one (batched) GEMM of real operands: one kernel
 * on the handle's stream (TF32 naming when tf32 or the handle's math mode asks). */
cublasStatus_t sim_cublas_run_gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                   struct sim_gemm *g, int tf32);

/* A (strided batched) GEMM of real operands of the given types, alpha and beta of the
 * compute type's scalar type (sim_cublas_scale_type), as cublasGemmEx. */
cublasStatus_t sim_cublas_gemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                  long long m, long long n, long long k, const void *alpha, const void *A,
                                  cudaDataType a_type, long long lda, long long stride_a, const void *B,
                                  cudaDataType b_type, long long ldb, long long stride_b, const void *beta,
                                  void *C, cudaDataType c_type, long long ldc, long long stride_c,
                                  long long batch, cublasComputeType_t compute);

/* The legacy API's handle, its library initialised; NULL (the legacy status set) when
 * it cannot be. */
struct cublasContext *sim_cublas_legacy_begin(void);

/* Records a legacy call's status for cublasGetError (success leaves it). */
void sim_cublas_legacy_end(cublasStatus_t s);

/* cublasOperation_t of a legacy 'N' / 'T' / 'C' character ((cublasOperation_t)-1 if none). */
cublasOperation_t sim_cublas_legacy_op(char op);

/* The type of alpha/beta for a compute type. */
cudaDataType sim_cublas_scale_type(cublasComputeType_t compute);

/* An operand of a GEMM. */
static inline struct sim_matrix sim_cublas_matrix(const void *data, cudaDataType type, long long ld,
                                                  long long stride)
{
  struct sim_matrix x = {data, type, ld, stride};
  return x;
}

#endif
