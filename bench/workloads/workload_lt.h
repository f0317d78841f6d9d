/* nn.Linear through cuBLASLt: the descriptors of y = x . W^T (+ bias,
 * activation) for row-major PyTorch-style tensors, shared by linear and mlp. */
#ifndef CUTRACE_WORKLOAD_LT_H
#define CUTRACE_WORKLOAD_LT_H

#include "workload_blas.h"
#include <cublasLt.h>

/* The descriptors of one nn.Linear-shaped matmul, built once. */
typedef struct {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t w_layout, x_layout, y_layout;
  cublasLtMatmulAlgo_t algo;
} linear_plan;

/* Describes y^T = W . x^T in cuBLASLt's column-major terms: W (stored as the
 * column-major IN x OUT matrix W^T) is transposed, x^T is IN x BATCH and y^T is
 * OUT x BATCH with the bias added per row (per output feature), then the
 * epilogue's activation if any. */
static inline void linear_plan_create(cublasLtHandle_t lt, linear_plan *plan, int batch, int in, int out,
                                      cublasLtEpilogue_t epilogue, const float *bias,
                                      size_t workspace_bytes)
{
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  WL_CHECK_BLAS(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  WL_CHECK_BLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                               sizeof transpose));
  WL_CHECK_BLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  WL_CHECK_BLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                               sizeof epilogue));
  WL_CHECK_BLAS(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                               sizeof bias));
  WL_CHECK_BLAS(cublasLtMatrixLayoutCreate(&plan->w_layout, CUDA_R_32F, in, out, in));
  WL_CHECK_BLAS(cublasLtMatrixLayoutCreate(&plan->x_layout, CUDA_R_32F, in, batch, in));
  WL_CHECK_BLAS(cublasLtMatrixLayoutCreate(&plan->y_layout, CUDA_R_32F, out, batch, out));

  cublasLtMatmulPreference_t preference;
  WL_CHECK_BLAS(cublasLtMatmulPreferenceCreate(&preference));
  WL_CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                     &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  WL_CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, plan->desc, plan->w_layout, plan->x_layout,
                                               plan->y_layout, plan->y_layout, preference, 1, &result,
                                               &found));
  if (found < 1) {
    fprintf(stderr, "%s: cuBLASLt found no algorithm for %dx%dx%d, epilogue %d\n", wl_prog,
            batch, in, out, (int)epilogue);
    exit(1);
  }
  plan->algo = result.algo;
  WL_CHECK_BLAS(cublasLtMatmulPreferenceDestroy(preference));
}

/* Releases what linear_plan_create made. */
static inline void linear_plan_destroy(linear_plan *plan)
{
  WL_CHECK_BLAS(cublasLtMatrixLayoutDestroy(plan->w_layout));
  WL_CHECK_BLAS(cublasLtMatrixLayoutDestroy(plan->x_layout));
  WL_CHECK_BLAS(cublasLtMatrixLayoutDestroy(plan->y_layout));
  WL_CHECK_BLAS(cublasLtMatmulDescDestroy(plan->desc));
}

/* Runs y = act(x . W^T + b) as planned, on stream. */
static inline void linear_plan_run(cublasLtHandle_t lt, const linear_plan *plan, const float *w,
                                   const float *x, float *y, void *workspace, size_t workspace_bytes,
                                   cudaStream_t stream)
{
  const float one = 1.0f, zero = 0.0f;
  WL_CHECK_BLAS(cublasLtMatmul(lt, plan->desc, &one, w, plan->w_layout, x, plan->x_layout, &zero, y,
                               plan->y_layout, y, plan->y_layout, &plan->algo, workspace,
                               workspace_bytes, stream));
}

#endif
