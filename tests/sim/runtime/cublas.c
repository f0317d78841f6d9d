/* Simulated libcublas.so.13: GEMMs are computed on the CPU at enqueue time
 * (simulated device memory is host-addressable), then one cuBLAS-named kernel is
 * launched on the handle's stream so the driver models its duration. */
#include "cublas_internal.h"
#include <stdlib.h>


/** Creates a handle bound to the current context, on the legacy default stream, after
 * the host time SIMCUBLAS_CREATE_US plants. */
SIM_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (simkernel_init() != CUDA_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  simkernel_host_work("SIMCUBLAS_CREATE_US");
  struct cublasContext *h = calloc(1, sizeof *h);
  if (!h)
    return CUBLAS_STATUS_ALLOC_FAILED;
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

/** Destroys a handle. */
SIM_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets the stream later calls are enqueued on. */
SIM_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the handle's stream. */
SIM_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!stream)
    return CUBLAS_STATUS_INVALID_VALUE;
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets the math mode (TF32 mode changes the kernel names only). */
SIM_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the math mode. */
SIM_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets the pointer mode (alpha/beta are readable either way in the simulator). */
SIM_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the pointer mode. */
SIM_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets the atomics mode (recorded only). */
SIM_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->atomics_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the atomics mode. */
SIM_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t *mode)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets the user workspace (recorded only). */
SIM_EXPORT cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace, size_t size)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->workspace = workspace;
  handle->workspace_size = size;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the library version (CUBLAS_VERSION of the headers). */
SIM_EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
{
  (void)handle;
  if (!version)
    return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports one part of the library version. */
SIM_EXPORT cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
{
  if (!value)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
  case MAJOR_VERSION: *value = CUBLAS_VER_MAJOR; break;
  case MINOR_VERSION: *value = CUBLAS_VER_MINOR; break;
  case PATCH_LEVEL: *value = CUBLAS_VER_PATCH; break;
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/** Returns the enumerator name of a status. */
SIM_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

/** Returns a description of a status. */
SIM_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
  case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
  default: return "unknown error";
  }
}

/* ---- GEMM core ---- */

static int is_transposed(cublasOperation_t op)
{
  return op != CUBLAS_OP_N;
}

static int valid_op(cublasOperation_t op)
{
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static long long max1(long long x)
{
  return x > 1 ? x : 1;
}

cublasStatus_t sim_cublas_run_gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                               struct sim_gemm *g, int tf32)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!valid_op(transa) || !valid_op(transb) || g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  g->transa = is_transposed(transa);
  g->transb = is_transposed(transb);
  if (g->a.ld < max1(g->transa ? g->k : g->m) || g->b.ld < max1(g->transb ? g->n : g->k)
      || g->d.ld < max1(g->m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!sim_gemm_type_supported(g->a.type) || !sim_gemm_type_supported(g->b.type)
      || !sim_gemm_type_supported(g->d.type))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (g->m == 0 || g->n == 0 || g->batch == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (simkernel_compute_enabled() && sim_gemm_compute(g) != 0)
    return CUBLAS_STATUS_ALLOC_FAILED;
  char name[256];
  int use_tf32 = tf32 || (handle->math_mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH;
  simkernel_gemm_name(name, sizeof name, g->a.type, use_tf32 && g->a.type == CUDA_R_32F,
                      g->transa, g->transb, "");
  CUresult r = simkernel_launch(name, (unsigned)((g->m + 127) / 128), (unsigned)((g->n + 127) / 128),
                                (unsigned)g->batch, handle->stream, sim_gemm_flops(g));
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}


static cublasStatus_t sgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                            long long m, long long n, long long k, const float *alpha, const float *A,
                            long long lda, long long stride_a, const float *B, long long ldb,
                            long long stride_b, const float *beta, float *C, long long ldc,
                            long long stride_c, long long batch)
{
  if (!alpha || !beta)
    return handle ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
  struct sim_gemm g = {0};
  g.m = m, g.n = n, g.k = k, g.batch = batch;
  g.alpha = *alpha;
  g.beta = *beta;
  g.a = sim_cublas_matrix(A, CUDA_R_32F, lda, stride_a);
  g.b = sim_cublas_matrix(B, CUDA_R_32F, ldb, stride_b);
  g.c = sim_cublas_matrix(C, CUDA_R_32F, ldc, stride_c);
  g.d = g.c;
  return sim_cublas_run_gemm(handle, transa, transb, &g, 0);
}

/** C = alpha op(A) op(B) + beta C in single precision. */
SIM_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                         const float *A, int lda, const float *B, int ldb, const float *beta,
                                         float *C, int ldc)
{
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

/** cublasSgemm_v2 with 64-bit sizes. */
SIM_EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                            const float *alpha, const float *A, int64_t lda, const float *B,
                                            int64_t ldb, const float *beta, float *C, int64_t ldc)
{
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

/** Strided batched SGEMM. */
SIM_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                    cublasOperation_t transb, int m, int n, int k,
                                                    const float *alpha, const float *A, int lda,
                                                    long long stride_a, const float *B, int ldb,
                                                    long long stride_b, const float *beta, float *C, int ldc,
                                                    long long stride_c, int batch)
{
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
               stride_c, batch);
}

/** Strided batched SGEMM with 64-bit sizes. */
SIM_EXPORT cublasStatus_t cublasSgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int64_t m, int64_t n,
                                                       int64_t k, const float *alpha, const float *A,
                                                       int64_t lda, long long stride_a, const float *B,
                                                       int64_t ldb, long long stride_b, const float *beta,
                                                       float *C, int64_t ldc, long long stride_c,
                                                       int64_t batch)
{
  return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
               stride_c, batch);
}

/* C = alpha op(A) op(B) + beta C in double precision (cublasDgemm_v2 and the legacy cublasDgemm). */
static cublasStatus_t dgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                            int n, int k, const double *alpha, const double *A, int lda, const double *B,
                            int ldb, const double *beta, double *C, int ldc)
{
  if (!alpha || !beta)
    return handle ? CUBLAS_STATUS_INVALID_VALUE : CUBLAS_STATUS_NOT_INITIALIZED;
  struct sim_gemm g = {0};
  g.m = m, g.n = n, g.k = k, g.batch = 1;
  g.alpha = *alpha;
  g.beta = *beta;
  g.a = sim_cublas_matrix(A, CUDA_R_64F, lda, 0);
  g.b = sim_cublas_matrix(B, CUDA_R_64F, ldb, 0);
  g.c = sim_cublas_matrix(C, CUDA_R_64F, ldc, 0);
  g.d = g.c;
  return sim_cublas_run_gemm(handle, transa, transb, &g, 0);
}

/** C = alpha op(A) op(B) + beta C in double precision. */
SIM_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                         const double *A, int lda, const double *B, int ldb,
                                         const double *beta, double *C, int ldc)
{
  return dgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

cudaDataType sim_cublas_scale_type(cublasComputeType_t compute)
{
  switch (compute) {
  case CUBLAS_COMPUTE_64F:
  case CUBLAS_COMPUTE_64F_PEDANTIC:
    return CUDA_R_64F;
  case CUBLAS_COMPUTE_16F:
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

cublasStatus_t sim_cublas_gemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                  long long m, long long n, long long k, const void *alpha, const void *A,
                                  cudaDataType a_type, long long lda, long long stride_a, const void *B,
                                  cudaDataType b_type, long long ldb, long long stride_b, const void *beta,
                                  void *C, cudaDataType c_type, long long ldc, long long stride_c,
                                  long long batch, cublasComputeType_t compute)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  cudaDataType st = sim_cublas_scale_type(compute);
  struct sim_gemm g = {0};
  g.m = m, g.n = n, g.k = k, g.batch = batch;
  g.alpha = sim_load_scalar(alpha, st);
  g.beta = sim_load_scalar(beta, st);
  g.a = sim_cublas_matrix(A, a_type, lda, stride_a);
  g.b = sim_cublas_matrix(B, b_type, ldb, stride_b);
  g.c = sim_cublas_matrix(C, c_type, ldc, stride_c);
  g.d = g.c;
  int tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  return sim_cublas_run_gemm(handle, transa, transb, &g, tf32);
}

/** Mixed-type GEMM (fp32, fp64, fp16, bf16 operands). */
SIM_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                       cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                       const void *A, cudaDataType a_type, int lda, const void *B,
                                       cudaDataType b_type, int ldb, const void *beta, void *C,
                                       cudaDataType c_type, int ldc, cublasComputeType_t compute,
                                       cublasGemmAlgo_t algo)
{
  (void)algo;
  return sim_cublas_gemm_ex(handle, transa, transb, m, n, k, alpha, A, a_type, lda, 0, B, b_type, ldb, 0, beta, C,
                 c_type, ldc, 0, 1, compute);
}

/** cublasGemmEx with 64-bit sizes. */
SIM_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                          const void *alpha, const void *A, cudaDataType a_type, int64_t lda,
                                          const void *B, cudaDataType b_type, int64_t ldb, const void *beta,
                                          void *C, cudaDataType c_type, int64_t ldc,
                                          cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
  (void)algo;
  return sim_cublas_gemm_ex(handle, transa, transb, m, n, k, alpha, A, a_type, lda, 0, B, b_type, ldb, 0, beta, C,
                 c_type, ldc, 0, 1, compute);
}

/** Strided batched mixed-type GEMM. */
SIM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                     cublasOperation_t transb, int m, int n, int k,
                                                     const void *alpha, const void *A, cudaDataType a_type,
                                                     int lda, long long stride_a, const void *B,
                                                     cudaDataType b_type, int ldb, long long stride_b,
                                                     const void *beta, void *C, cudaDataType c_type, int ldc,
                                                     long long stride_c, int batch,
                                                     cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
  (void)algo;
  return sim_cublas_gemm_ex(handle, transa, transb, m, n, k, alpha, A, a_type, lda, stride_a, B, b_type, ldb,
                 stride_b, beta, C, c_type, ldc, stride_c, batch, compute);
}

/** Strided batched mixed-type GEMM with 64-bit sizes. */
SIM_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                        cublasOperation_t transb, int64_t m, int64_t n,
                                                        int64_t k, const void *alpha, const void *A,
                                                        cudaDataType a_type, int64_t lda, long long stride_a,
                                                        const void *B, cudaDataType b_type, int64_t ldb,
                                                        long long stride_b, const void *beta, void *C,
                                                        cudaDataType c_type, int64_t ldc, long long stride_c,
                                                        int64_t batch, cublasComputeType_t compute,
                                                        cublasGemmAlgo_t algo)
{
  (void)algo;
  return sim_cublas_gemm_ex(handle, transa, transb, m, n, k, alpha, A, a_type, lda, stride_a, B, b_type, ldb,
                 stride_b, beta, C, c_type, ldc, stride_c, batch, compute);
}

/* ---- legacy handle-less API (cublas.h) ---- */

static struct cublasContext legacy_handle;
static cublasStatus_t legacy_status;

/** Initialises the legacy API. */
SIM_EXPORT cublasStatus_t cublasInit(void)
{
  return simkernel_init() == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

/** Shuts the legacy API down. */
SIM_EXPORT cublasStatus_t cublasShutdown(void)
{
  return CUBLAS_STATUS_SUCCESS;
}

/** Returns and clears the legacy API's last status. */
SIM_EXPORT cublasStatus_t cublasGetError(void)
{
  cublasStatus_t s = legacy_status;
  legacy_status = CUBLAS_STATUS_SUCCESS;
  return s;
}

/** Sets the legacy API's stream. */
SIM_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
  legacy_handle.stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasOperation_t sim_cublas_legacy_op(char op)
{
  switch (op) {
  case 'N': case 'n': return CUBLAS_OP_N;
  case 'T': case 't': return CUBLAS_OP_T;
  case 'C': case 'c': return CUBLAS_OP_C;
  default: return (cublasOperation_t)-1;
  }
}

struct cublasContext *sim_cublas_legacy_begin(void)
{
  if (simkernel_init() != CUDA_SUCCESS) {
    legacy_status = CUBLAS_STATUS_NOT_INITIALIZED;
    return NULL;
  }
  return &legacy_handle;
}

void sim_cublas_legacy_end(cublasStatus_t s)
{
  if (s != CUBLAS_STATUS_SUCCESS)
    legacy_status = s;
}

/** Legacy handle-less DGEMM (by value alpha/beta; status via cublasGetError). */
SIM_EXPORT void cublasDgemm(char transa, char transb, int m, int n, int k, double alpha, const double *A,
                            int lda, const double *B, int ldb, double beta, double *C, int ldc)
{
  struct cublasContext *h = sim_cublas_legacy_begin();
  if (h)
    sim_cublas_legacy_end(dgemm(h, sim_cublas_legacy_op(transa), sim_cublas_legacy_op(transb), m, n, k, &alpha, A, lda, B,
                                         ldb, &beta, C, ldc));
}

/** Legacy handle-less SGEMM (by value alpha/beta; status via cublasGetError). */
SIM_EXPORT void cublasSgemm(char transa, char transb, int m, int n, int k, float alpha, const float *A,
                            int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
  if (simkernel_init() != CUDA_SUCCESS) {
    legacy_status = CUBLAS_STATUS_NOT_INITIALIZED;
    return;
  }
  cublasStatus_t s = sgemm(&legacy_handle, sim_cublas_legacy_op(transa), sim_cublas_legacy_op(transb), m, n, k, &alpha, A, lda, 0,
                           B, ldb, 0, &beta, C, ldc, 0, 1);
  if (s != CUBLAS_STATUS_SUCCESS)
    legacy_status = s;
}
