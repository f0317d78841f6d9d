/*
 * cuBLAS and cuBLASLt GEMMs: each call becomes an API record and a GEMM record (m,
 * n, k, batch, transposes, data and compute types, Lt epilogue) and, when
 * outermost, one GPU activity (CT_GPU_GEMM) timed with events around the call on
 * its stream: the handle's stream (cublasGetStream_v2), the legacy API's kernel
 * stream (cublasSetKernelStream), or cublasLtMatmul's stream argument. cuBLAS's
 * own kernels are launched inside the library through the driver, so they are not
 * seen here; a cuBLAS call that calls cublasLtMatmul gives one timed span with a
 * depth-1 child. Entry points: the float, double and half GEMMs (plain, strided
 * batched, pointer-array batched, with their _64 forms), cublasGemmEx and its batched
 * forms, cublasLtMatmul, and the legacy handle-less cublas{S,D,C,Z}gemm; the complex,
 * typed-operand and grouped GEMMs are in blas_more.c (shared macros: blas_internal.h).
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <dlfcn.h>

#include "blas_internal.h"

/* The legacy handle-less API (cublas.h conflicts with cublas_v2.h, which maps the
 * name cublasSgemm to cublasSgemm_v2). */
#undef cublasSgemm
CTP_EXPORT void cublasSgemm(char transa, char transb, int m, int n, int k, float alpha,
                            const float *A, int lda, const float *B, int ldb, float beta, float *C,
                            int ldc);
#undef cublasDgemm
#undef cublasCgemm
#undef cublasZgemm
CTP_EXPORT void cublasDgemm(char transa, char transb, int m, int n, int k, double alpha,
                            const double *A, int lda, const double *B, int ldb, double beta,
                            double *C, int ldc);
CTP_EXPORT void cublasCgemm(char transa, char transb, int m, int n, int k, cuComplex alpha,
                            const cuComplex *A, int lda, const cuComplex *B, int ldb,
                            cuComplex beta, cuComplex *C, int ldc);
CTP_EXPORT void cublasZgemm(char transa, char transb, int m, int n, int k, cuDoubleComplex alpha,
                            const cuDoubleComplex *A, int lda, const cuDoubleComplex *B, int ldb,
                            cuDoubleComplex beta, cuDoubleComplex *C, int ldc);
CTP_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream);

/* The stream of the legacy API, as last set by the program. */
static cudaStream_t legacy_kernel_stream;

/* The GEMM record of the call corr. */
void ctph_emit_gemm(uint64_t corr, const struct gemm_shape *g) {
  ct_record r = {.kind = CT_KIND_GEMM};
  r.u.gemm.corr = corr;
  r.u.gemm.m = g->m;
  r.u.gemm.n = g->n;
  r.u.gemm.k = g->k;
  r.u.gemm.batch = g->batch;
  r.u.gemm.transa = g->transa;
  r.u.gemm.transb = g->transb;
  r.u.gemm.atype = g->atype;
  r.u.gemm.btype = g->btype;
  r.u.gemm.ctype = g->ctype;
  r.u.gemm.compute_type = g->compute;
  r.u.gemm.epilogue = g->epilogue;
  ctp_emit(&r);
}

/* The stream of a cuBLAS handle (0 when it cannot be had). */
cudaStream_t ctph_blas_stream(cublasHandle_t handle) {
  static __typeof__(&cublasGetStream_v2) get_stream;
  __typeof__(&cublasGetStream_v2) fn = __atomic_load_n(&get_stream, __ATOMIC_RELAXED);
  if (!fn) {
    fn = (__typeof__(&cublasGetStream_v2))ctph_real_by_name("cublasGetStream_v2");
    __atomic_store_n(&get_stream, fn, __ATOMIC_RELAXED);
  }
  cudaStream_t s = 0;
  if (!fn || fn(handle, &s) != CUBLAS_STATUS_SUCCESS)
    s = 0;
  return s;
}

/* cublasDgemm_v2, cublasHgemm and their _64 forms, traced. */
TYPED_GEMM(cublasDgemm_v2, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasDgemm_v2_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_GEMM(cublasHgemm, int, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_GEMM(cublasHgemm_64, int64_t, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
/* cublasDgemmStridedBatched, cublasHgemmStridedBatched and their _64 forms, traced. */
TYPED_STRIDED(cublasDgemmStridedBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasDgemmStridedBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_STRIDED(cublasHgemmStridedBatched, int, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_STRIDED(cublasHgemmStridedBatched_64, int64_t, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
/* cublas{S,D,H}gemmBatched (arrays of matrix pointers) and their _64 forms, traced. */
TYPED_BATCHED(cublasSgemmBatched, int, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasSgemmBatched_64, int64_t, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
TYPED_BATCHED(cublasDgemmBatched, int, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasDgemmBatched_64, int64_t, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
TYPED_BATCHED(cublasHgemmBatched, int, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
TYPED_BATCHED(cublasHgemmBatched_64, int64_t, half_element, CUDA_R_16F, CUBLAS_COMPUTE_16F)
/* cublasGemmBatchedEx and its _64 form, traced. */
TYPED_BATCHED_EX(cublasGemmBatchedEx, int)
TYPED_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)

/** cublasSgemm_v2 (cublasSgemm in cublas_v2.h), traced. */
CTP_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         const float *B, int ldb, const float *beta, float *C,
                                         int ldc) {
  GEMM_BODY(cublasSgemm_v2, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), SHAPE_S(1));
}

/** cublasSgemm_v2_64, traced. */
CTP_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n,
                                            int64_t k, const float *alpha, const float *A,
                                            int64_t lda, const float *B, int64_t ldb,
                                            const float *beta, float *C, int64_t ldc) {
  GEMM_BODY(cublasSgemm_v2_64, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED,
            ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), SHAPE_S(1));
}

/** cublasSgemmStridedBatched, traced. */
CTP_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float *alpha, const float *A, int lda, long long int strideA, const float *B, int ldb,
    long long int strideB, const float *beta, float *C, int ldc, long long int strideC,
    int batchCount) {
  GEMM_BODY(cublasSgemmStridedBatched, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED,
            ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
             ldc, strideC, batchCount),
            SHAPE_S(batchCount));
}

/** cublasSgemmStridedBatched_64, traced. */
CTP_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const float *alpha, const float *A, int64_t lda, long long int strideA,
    const float *B, int64_t ldb, long long int strideB, const float *beta, float *C, int64_t ldc,
    long long int strideC, int64_t batchCount) {
  GEMM_BODY(cublasSgemmStridedBatched_64, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED,
            ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
             ldc, strideC, batchCount),
            SHAPE_S(batchCount));
}

/** cublasGemmEx, traced. */
CTP_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, int m, int n, int k,
                                       const void *alpha, const void *A, cudaDataType Atype,
                                       int lda, const void *B, cudaDataType Btype, int ldb,
                                       const void *beta, void *C, cudaDataType Ctype, int ldc,
                                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  GEMM_BODY(cublasGemmEx, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
             ldc, computeType, algo),
            SHAPE_EX(1));
}

/** cublasGemmEx_64, traced. */
CTP_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int64_t m, int64_t n,
                                          int64_t k, const void *alpha, const void *A,
                                          cudaDataType Atype, int64_t lda, const void *B,
                                          cudaDataType Btype, int64_t ldb, const void *beta,
                                          void *C, cudaDataType Ctype, int64_t ldc,
                                          cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  GEMM_BODY(cublasGemmEx_64, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
             ldc, computeType, algo),
            SHAPE_EX(1));
}

/** cublasGemmStridedBatchedEx, traced. */
CTP_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long int strideA,
    const void *B, cudaDataType Btype, int ldb, long long int strideB, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  GEMM_BODY(cublasGemmStridedBatchedEx, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED,
            ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
             beta, C, Ctype, ldc, strideC, batchCount, computeType, algo),
            SHAPE_EX(batchCount));
}

/** cublasGemmStridedBatchedEx_64, traced. */
CTP_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void *B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void *beta, void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  GEMM_BODY(cublasGemmStridedBatchedEx_64, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED,
            ctph_blas_stream(handle),
            (handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,
             beta, C, Ctype, ldc, strideC, batchCount, computeType, algo),
            SHAPE_EX(batchCount));
}

/* cublasOperation_t of a legacy 'N' / 'T' / 'C' character. */
static uint64_t legacy_op(char t) {
  return t == 'T' || t == 't' ? CUBLAS_OP_T : t == 'C' || t == 'c' ? CUBLAS_OP_C : CUBLAS_OP_N;
}

/* A legacy handle-less GEMM (cublas.h: scalars by value, errors through
 * cublasGetError, so treated as success), traced on the cublasSetKernelStream stream. */
#define LEGACY_GEMM(sym, T, DT, CT)                                                            \
  CTP_EXPORT void sym(char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, \
                      const T *B, int ldb, T beta, T *C, int ldc) {                            \
    __typeof__(&sym) real = CTPH_REAL(sym);                                                    \
    if (!real)                                                                                 \
      return;                                                                                  \
    if (CTP_UNLIKELY(!ctph_on())) {                                                            \
      real(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                      \
      return;                                                                                  \
    }                                                                                          \
    ctph_call c;                                                                               \
    ctph_call_begin(&c, CTPH_ID_##sym, 0, CT_GPU_GEMM,                                         \
                    (CUstream)__atomic_load_n(&legacy_kernel_stream, __ATOMIC_RELAXED),        \
                    ctph_hook_name_id(CTPH_ID_##sym));                                         \
    real(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                        \
    CTPH_FINISH(c, 0, struct gemm_shape g = {(uint64_t)m, (uint64_t)n, (uint64_t)k, 1,         \
                                             legacy_op(transa), legacy_op(transb), DT, DT, DT, \
                                             CT, 0};                                           \
                ctph_emit_gemm(c.corr, &g));                                                   \
  }

/* The legacy cublasSgemm, cublasDgemm, cublasCgemm and cublasZgemm, traced. */
LEGACY_GEMM(cublasSgemm, float, CUDA_R_32F, CUBLAS_COMPUTE_32F)
LEGACY_GEMM(cublasDgemm, double, CUDA_R_64F, CUBLAS_COMPUTE_64F)
LEGACY_GEMM(cublasCgemm, cuComplex, CUDA_C_32F, CUBLAS_COMPUTE_32F)
LEGACY_GEMM(cublasZgemm, cuDoubleComplex, CUDA_C_64F, CUBLAS_COMPUTE_64F)

/** cublasSetKernelStream (legacy API), forwarded; remembers the stream. */
CTP_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream) {
  __typeof__(&cublasSetKernelStream) real = CTPH_REAL(cublasSetKernelStream);
  if (!real)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  cublasStatus_t r = real(stream);
  if (r == CUBLAS_STATUS_SUCCESS)
    __atomic_store_n(&legacy_kernel_stream, stream, __ATOMIC_RELAXED);
  return r;
}

/* ------------------------------------------------------------- cuBLASLt */

static __typeof__(&cublasLtMatmulDescGetAttribute) lt_desc_get;
static __typeof__(&cublasLtMatrixLayoutGetAttribute) lt_layout_get;

/* Reads one attribute of size `size` (left as is when it cannot be read). */
static void desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void *buf,
                      size_t size) {
  size_t written = 0;
  if (lt_desc_get && d)
    lt_desc_get(d, a, buf, size, &written);
}

static void layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, void *buf,
                        size_t size) {
  size_t written = 0;
  if (lt_layout_get && l)
    lt_layout_get(l, a, buf, size, &written);
}

/* The shape of an Lt matmul, from its descriptors: D is m x n (rows x cols), k
 * from A (its columns, or rows when transposed). */
static struct gemm_shape lt_shape(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Adesc,
                                  cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
                                  cublasLtMatrixLayout_t Ddesc) {
  if (!lt_desc_get) {
    lt_desc_get = (__typeof__(lt_desc_get))ctph_real_by_name("cublasLtMatmulDescGetAttribute");
    lt_layout_get =
        (__typeof__(lt_layout_get))ctph_real_by_name("cublasLtMatrixLayoutGetAttribute");
  }
  int32_t compute = 0, transa = 0, transb = 0;
  uint32_t epilogue = 0, atype = 0, btype = 0, ctype = 0;
  uint64_t rows = 0, cols = 0, a_rows = 0, a_cols = 0;
  int32_t batch = 1;
  desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  cublasLtMatrixLayout_t out = Ddesc ? Ddesc : Cdesc;
  layout_attr(out, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows);
  layout_attr(out, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols);
  layout_attr(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  layout_attr(Adesc, CUBLASLT_MATRIX_LAYOUT_ROWS, &a_rows, sizeof a_rows);
  layout_attr(Adesc, CUBLASLT_MATRIX_LAYOUT_COLS, &a_cols, sizeof a_cols);
  layout_attr(Adesc, CUBLASLT_MATRIX_LAYOUT_TYPE, &atype, sizeof atype);
  layout_attr(Bdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, &btype, sizeof btype);
  layout_attr(Cdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, &ctype, sizeof ctype);
  struct gemm_shape g = {
      .m = rows,
      .n = cols,
      .k = transa == CUBLAS_OP_N ? a_cols : a_rows,
      .batch = batch > 0 ? (uint64_t)batch : 1,
      .transa = (uint64_t)transa,
      .transb = (uint64_t)transb,
      .atype = atype,
      .btype = btype,
      .ctype = ctype,
      .compute = (uint64_t)compute,
      .epilogue = epilogue,
  };
  return g;
}

/** cublasLtMatmul, traced (timed on its stream argument). */
CTP_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                                         cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                         const void *A, cublasLtMatrixLayout_t Adesc,
                                         const void *B, cublasLtMatrixLayout_t Bdesc,
                                         const void *beta, const void *C,
                                         cublasLtMatrixLayout_t Cdesc, void *D,
                                         cublasLtMatrixLayout_t Ddesc,
                                         const cublasLtMatmulAlgo_t *algo, void *workspace,
                                         size_t workspaceSizeInBytes, cudaStream_t stream) {
  GEMM_BODY(cublasLtMatmul, cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, stream,
            (lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
             workspace, workspaceSizeInBytes, stream),
            lt_shape(computeDesc, Adesc, Bdesc, Cdesc, Ddesc));
}
