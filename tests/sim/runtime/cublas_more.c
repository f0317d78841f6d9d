/* The simulated libcublas's complex, typed-operand and grouped GEMMs: cublasCgemm_v2,
 * cublasZgemm_v2, cublasCgemm3m, cublasZgemm3m, their strided and pointer-array batched
 * forms, cublasSgemmEx, cublasCgemmEx, cublasCgemm3mEx, cublasSgemmGroupedBatched,
 * cublasDgemmGroupedBatched and cublasGemmGroupedBatchedEx, each with its _64 form, and the
 * legacy handle-less cublasCgemm and cublasZgemm.
 * Complex GEMMs are computed on the CPU in double complex (one kernel per call, named
 * c32/c64, timed as 8 m n k flops per GEMM: a complex multiply-add is 8 real
 * operations); a grouped call runs each of its GEMMs as a real GEMM of its group's
 * shape (one kernel each). */
#include "cublas_internal.h"

#include <complex.h>
#include <stdint.h>

/* One complex operand: a base and batch stride (in elements), or an array of
 * per-batch pointers. */
struct cplx_operand {
  const void *base;
  long long ld, stride;
  const void *const *array;
};

static int op_ok(cublasOperation_t op)
{
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static long long at_least_1(long long x)
{
  return x > 1 ? x : 1;
}

/* The address of batch b of operand x (elements of `size` bytes). */
static const char *batch_base(const struct cplx_operand *x, long long b, size_t size)
{
  return x->array ? (const char *)x->array[b] : (const char *)x->base + (size_t)(b * x->stride) * size;
}

static double complex load_complex(const char *base, long long index, int dbl)
{
  if (dbl) {
    const double *p = (const double *)base + 2 * index;
    return p[0] + p[1] * I;
  }
  const float *p = (const float *)base + 2 * index;
  return p[0] + p[1] * I;
}

static void store_complex(char *base, long long index, int dbl, double complex v)
{
  if (dbl) {
    double *p = (double *)base + 2 * index;
    p[0] = creal(v), p[1] = cimag(v);
  } else {
    float *p = (float *)base + 2 * index;
    p[0] = (float)creal(v), p[1] = (float)cimag(v);
  }
}

/* Element (row, col) of op(X) where X is stored column-major with leading dimension ld. */
static double complex op_element(const char *x, long long ld, cublasOperation_t op, long long row, long long col,
                                 int dbl)
{
  if (op == CUBLAS_OP_N)
    return load_complex(x, row + col * ld, dbl);
  double complex v = load_complex(x, col + row * ld, dbl);
  return op == CUBLAS_OP_C ? conj(v) : v;
}

/* C = alpha op(A) op(B) + beta C over `batch` complex GEMMs (double: cuDoubleComplex). */
static cublasStatus_t complex_gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                   long long m, long long n, long long k, const void *alpha,
                                   struct cplx_operand a, struct cplx_operand b, const void *beta,
                                   struct cplx_operand c, long long batch, int dbl)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha || !beta || !op_ok(transa) || !op_ok(transb) || m < 0 || n < 0 || k < 0 || batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a.ld < at_least_1(transa == CUBLAS_OP_N ? m : k) || b.ld < at_least_1(transb == CUBLAS_OP_N ? k : n)
      || c.ld < at_least_1(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0 || batch == 0)
    return CUBLAS_STATUS_SUCCESS;
  size_t size = dbl ? 2 * sizeof(double) : 2 * sizeof(float);
  if (simkernel_compute_enabled()) {
    double complex al = load_complex(alpha, 0, dbl), be = load_complex(beta, 0, dbl);
    for (long long p = 0; p < batch; p++) {
      const char *pa = batch_base(&a, p, size), *pb = batch_base(&b, p, size);
      char *pc = (char *)batch_base(&c, p, size);
      for (long long j = 0; j < n; j++)
        for (long long i = 0; i < m; i++) {
          double complex sum = 0;
          for (long long l = 0; l < k; l++)
            sum += op_element(pa, a.ld, transa, i, l, dbl) * op_element(pb, b.ld, transb, l, j, dbl);
          double complex old = be == 0 ? 0 : load_complex(pc, i + j * c.ld, dbl);
          store_complex(pc, i + j * c.ld, dbl, al * sum + be * old);
        }
    }
  }
  char name[256];
  simkernel_gemm_name(name, sizeof name, dbl ? CUDA_C_64F : CUDA_C_32F, 0, transa != CUBLAS_OP_N,
                      transb != CUBLAS_OP_N, "");
  CUresult r = simkernel_launch(name, (unsigned)((m + 127) / 128), (unsigned)((n + 127) / 128), (unsigned)batch,
                                handle->stream, 8.0 * (double)m * (double)n * (double)k * (double)batch);
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

static struct cplx_operand strided(const void *base, long long ld, long long stride)
{
  struct cplx_operand x = {base, ld, stride, NULL};
  return x;
}

static struct cplx_operand pointers(const void *const *array, long long ld)
{
  struct cplx_operand x = {NULL, ld, 0, array};
  return x;
}

#define COMPLEX_PLAIN(sym, IDX, T, DBL)                                                                      \
  /** A complex GEMM (see the top of the file). */                                                          \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                                IDX m, IDX n, IDX k, const T *alpha, const T *A, IDX lda, const T *B,       \
                                IDX ldb, const T *beta, T *C, IDX ldc)                                      \
  {                                                                                                          \
    return complex_gemm(handle, transa, transb, m, n, k, alpha, strided(A, lda, 0), strided(B, ldb, 0), beta, \
                        strided(C, ldc, 0), 1, DBL);                                                         \
  }

#define COMPLEX_STRIDED(sym, IDX, T, DBL)                                                                    \
  /** A strided batched complex GEMM. */                                                                    \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                                IDX m, IDX n, IDX k, const T *alpha, const T *A, IDX lda, long long sa,     \
                                const T *B, IDX ldb, long long sb, const T *beta, T *C, IDX ldc,            \
                                long long sc, IDX batch)                                                     \
  {                                                                                                          \
    return complex_gemm(handle, transa, transb, m, n, k, alpha, strided(A, lda, sa), strided(B, ldb, sb),   \
                        beta, strided(C, ldc, sc), batch, DBL);                                              \
  }

#define COMPLEX_BATCHED(sym, IDX, T, DBL)                                                                    \
  /** A pointer-array batched complex GEMM. */                                                              \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                                IDX m, IDX n, IDX k, const T *alpha, const T *const A[], IDX lda,           \
                                const T *const B[], IDX ldb, const T *beta, T *const C[], IDX ldc,          \
                                IDX batch)                                                                   \
  {                                                                                                          \
    if (batch > 0 && (!A || !B || !C))                                                                       \
      return CUBLAS_STATUS_INVALID_VALUE;                                                                    \
    return complex_gemm(handle, transa, transb, m, n, k, alpha, pointers((const void *const *)A, lda),      \
                        pointers((const void *const *)B, ldb), beta, pointers((const void *const *)C, ldc), \
                        batch, DBL);                                                                         \
  }

COMPLEX_PLAIN(cublasCgemm_v2, int, cuComplex, 0)
COMPLEX_PLAIN(cublasCgemm_v2_64, int64_t, cuComplex, 0)
COMPLEX_PLAIN(cublasZgemm_v2, int, cuDoubleComplex, 1)
COMPLEX_PLAIN(cublasZgemm_v2_64, int64_t, cuDoubleComplex, 1)
COMPLEX_PLAIN(cublasCgemm3m, int, cuComplex, 0)
COMPLEX_PLAIN(cublasCgemm3m_64, int64_t, cuComplex, 0)
COMPLEX_PLAIN(cublasZgemm3m, int, cuDoubleComplex, 1)
COMPLEX_PLAIN(cublasZgemm3m_64, int64_t, cuDoubleComplex, 1)
COMPLEX_STRIDED(cublasCgemmStridedBatched, int, cuComplex, 0)
COMPLEX_STRIDED(cublasCgemmStridedBatched_64, int64_t, cuComplex, 0)
COMPLEX_STRIDED(cublasZgemmStridedBatched, int, cuDoubleComplex, 1)
COMPLEX_STRIDED(cublasZgemmStridedBatched_64, int64_t, cuDoubleComplex, 1)
COMPLEX_STRIDED(cublasCgemm3mStridedBatched, int, cuComplex, 0)
COMPLEX_STRIDED(cublasCgemm3mStridedBatched_64, int64_t, cuComplex, 0)
COMPLEX_BATCHED(cublasCgemmBatched, int, cuComplex, 0)
COMPLEX_BATCHED(cublasCgemmBatched_64, int64_t, cuComplex, 0)
COMPLEX_BATCHED(cublasZgemmBatched, int, cuDoubleComplex, 1)
COMPLEX_BATCHED(cublasZgemmBatched_64, int64_t, cuDoubleComplex, 1)
COMPLEX_BATCHED(cublasCgemm3mBatched, int, cuComplex, 0)
COMPLEX_BATCHED(cublasCgemm3mBatched_64, int64_t, cuComplex, 0)

/* cublasSgemmEx: real operands of the given types, float scalars, fp32 compute. */
static cublasStatus_t sgemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                               long long m, long long n, long long k, const float *alpha, const void *A,
                               cudaDataType at, long long lda, const void *B, cudaDataType bt, long long ldb,
                               const float *beta, void *C, cudaDataType ct, long long ldc)
{
  return sim_cublas_gemm_ex(handle, transa, transb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct,
                            ldc, 0, 1, CUBLAS_COMPUTE_32F);
}

/* cublasCgemmEx / cublasCgemm3mEx: only single complex operands are simulated. */
static cublasStatus_t cgemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                               long long m, long long n, long long k, const cuComplex *alpha, const void *A,
                               cudaDataType at, long long lda, const void *B, cudaDataType bt, long long ldb,
                               const cuComplex *beta, void *C, cudaDataType ct, long long ldc)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (at != CUDA_C_32F || bt != CUDA_C_32F || ct != CUDA_C_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return complex_gemm(handle, transa, transb, m, n, k, alpha, strided(A, lda, 0), strided(B, ldb, 0), beta,
                      strided(C, ldc, 0), 1, 0);
}

#define TYPED_EX(sym, IDX, S, FN)                                                                            \
  /** A GEMM with typed operands. */                                                                        \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,  \
                                IDX m, IDX n, IDX k, const S *alpha, const void *A, cudaDataType at,        \
                                IDX lda, const void *B, cudaDataType bt, IDX ldb, const S *beta, void *C,   \
                                cudaDataType ct, IDX ldc)                                                    \
  {                                                                                                          \
    return FN(handle, transa, transb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc);             \
  }

TYPED_EX(cublasSgemmEx, int, float, sgemm_ex)
TYPED_EX(cublasSgemmEx_64, int64_t, float, sgemm_ex)
TYPED_EX(cublasCgemmEx, int, cuComplex, cgemm_ex)
TYPED_EX(cublasCgemmEx_64, int64_t, cuComplex, cgemm_ex)
TYPED_EX(cublasCgemm3mEx, int, cuComplex, cgemm_ex)
TYPED_EX(cublasCgemm3mEx_64, int64_t, cuComplex, cgemm_ex)

/* The bytes of one scalar of a real type. */
static size_t scalar_bytes(cudaDataType t)
{
  return t == CUDA_R_64F ? 8 : t == CUDA_R_16F || t == CUDA_R_16BF ? 2 : 4;
}

/* A grouped call: group i runs size[i] real GEMMs of its shape, alpha and beta (scalars
 * of type st), operands taken in order from the pointer arrays. IDX is int or int64_t. */
#define GROUPED_RUN(name, IDX)                                                                               \
  static cublasStatus_t name(cublasHandle_t handle, const cublasOperation_t *ta, const cublasOperation_t *tb, \
                             const IDX *m, const IDX *n, const IDX *k, const void *alpha, const void *const *A, \
                             cudaDataType at, const IDX *lda, const void *const *B, cudaDataType bt,         \
                             const IDX *ldb, const void *beta, void *const *C, cudaDataType ct,              \
                             const IDX *ldc, IDX groups, const IDX *size, cudaDataType st, int tf32)         \
  {                                                                                                          \
    if (!handle)                                                                                             \
      return CUBLAS_STATUS_NOT_INITIALIZED;                                                                  \
    if (groups < 0 || (groups > 0 && (!ta || !tb || !m || !n || !k || !alpha || !beta || !lda || !ldb ||     \
                                      !ldc || !size)))                                                       \
      return CUBLAS_STATUS_INVALID_VALUE;                                                                    \
    long long problem = 0;                                                                                   \
    for (IDX i = 0; i < groups; i++) {                                                                       \
      if (size[i] < 0)                                                                                       \
        return CUBLAS_STATUS_INVALID_VALUE;                                                                  \
      for (IDX p = 0; p < size[i]; p++, problem++) {                                                         \
        struct sim_gemm g = {0};                                                                             \
        g.m = m[i], g.n = n[i], g.k = k[i], g.batch = 1;                                                     \
        g.alpha = sim_load_scalar((const char *)alpha + (size_t)i * scalar_bytes(st), st);                   \
        g.beta = sim_load_scalar((const char *)beta + (size_t)i * scalar_bytes(st), st);                     \
        g.a = sim_cublas_matrix(A[problem], at, lda[i], 0);                                                  \
        g.b = sim_cublas_matrix(B[problem], bt, ldb[i], 0);                                                  \
        g.c = sim_cublas_matrix(C[problem], ct, ldc[i], 0);                                                  \
        g.d = g.c;                                                                                           \
        cublasStatus_t s = sim_cublas_run_gemm(handle, ta[i], tb[i], &g, tf32);                              \
        if (s != CUBLAS_STATUS_SUCCESS)                                                                      \
          return s;                                                                                          \
      }                                                                                                      \
    }                                                                                                        \
    return CUBLAS_STATUS_SUCCESS;                                                                            \
  }

GROUPED_RUN(grouped, int)
GROUPED_RUN(grouped_64, int64_t)

#define GROUPED_TYPED(sym, IDX, RUN, T, DT)                                                                  \
  /** A grouped batched GEMM of T operands. */                                                              \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, const cublasOperation_t transa_array[],              \
                                const cublasOperation_t transb_array[], const IDX m_array[],                \
                                const IDX n_array[], const IDX k_array[], const T alpha_array[],            \
                                const T *const Aarray[], const IDX lda_array[], const T *const Barray[],    \
                                const IDX ldb_array[], const T beta_array[], T *const Carray[],             \
                                const IDX ldc_array[], IDX group_count, const IDX group_size[])              \
  {                                                                                                          \
    return RUN(handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array,                   \
               (const void *const *)Aarray, DT, lda_array, (const void *const *)Barray, DT, ldb_array,       \
               beta_array, (void *const *)Carray, DT, ldc_array, group_count, group_size, DT, 0);            \
  }

GROUPED_TYPED(cublasSgemmGroupedBatched, int, grouped, float, CUDA_R_32F)
GROUPED_TYPED(cublasSgemmGroupedBatched_64, int64_t, grouped_64, float, CUDA_R_32F)
GROUPED_TYPED(cublasDgemmGroupedBatched, int, grouped, double, CUDA_R_64F)
GROUPED_TYPED(cublasDgemmGroupedBatched_64, int64_t, grouped_64, double, CUDA_R_64F)

#define GROUPED_EX(sym, IDX, RUN)                                                                            \
  /** A grouped batched GEMM of typed operands. */                                                          \
  SIM_EXPORT cublasStatus_t sym(cublasHandle_t handle, const cublasOperation_t transa_array[],              \
                                const cublasOperation_t transb_array[], const IDX m_array[],                \
                                const IDX n_array[], const IDX k_array[], const void *alpha_array,          \
                                const void *const Aarray[], cudaDataType_t at, const IDX lda_array[],       \
                                const void *const Barray[], cudaDataType_t bt, const IDX ldb_array[],       \
                                const void *beta_array, void *const Carray[], cudaDataType_t ct,            \
                                const IDX ldc_array[], IDX group_count, const IDX group_size[],             \
                                cublasComputeType_t compute)                                                 \
  {                                                                                                          \
    return RUN(handle, transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, at,       \
               lda_array, Barray, bt, ldb_array, beta_array, Carray, ct, ldc_array, group_count, group_size, \
               sim_cublas_scale_type(compute), compute == CUBLAS_COMPUTE_32F_FAST_TF32);                     \
  }

GROUPED_EX(cublasGemmGroupedBatchedEx, int, grouped)
GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t, grouped_64)

/* The legacy handle-less complex GEMMs (cublas.h: scalars by value, status through
 * cublasGetError), on the legacy handle. */
#define LEGACY_COMPLEX(sym, T, DBL)                                                                          \
  /** A legacy complex GEMM. */                                                                             \
  SIM_EXPORT void sym(char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda,          \
                      const T *B, int ldb, T beta, T *C, int ldc)                                            \
  {                                                                                                          \
    struct cublasContext *h = sim_cublas_legacy_begin();                                                     \
    if (h)                                                                                                   \
      sim_cublas_legacy_end(complex_gemm(h, sim_cublas_legacy_op(transa), sim_cublas_legacy_op(transb), m, n, \
                                         k, &alpha, strided(A, lda, 0), strided(B, ldb, 0), &beta,           \
                                         strided(C, ldc, 0), 1, DBL));                                       \
  }

LEGACY_COMPLEX(cublasCgemm, cuComplex, 0)
LEGACY_COMPLEX(cublasZgemm, cuDoubleComplex, 1)
