/* Simulated libcublasLt.so.13: descriptors, a one-answer heuristic, and
 * cublasLtMatmul computed on the CPU (epilogues DEFAULT, RELU, BIAS, RELU_BIAS)
 * followed by one cuBLAS-named driver launch on the given stream. */
#include "gemm_ref.h"
#include "simkernel.h"

#include <cublasLt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cublasLtContext {
  int unused;
};

/* Descriptor state, kept inside the public opaque storage. */
struct lt_matmul_desc {
  int32_t compute_type;
  int32_t scale_type;
  int32_t pointer_mode;
  int32_t transa, transb, transc;
  int32_t fill_mode;
  uint32_t epilogue;
  const void *bias;
  int32_t bias_type; /* -1: same as D */
  int64_t bias_batch_stride;
};

struct lt_layout {
  uint32_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t batch_stride;
};

_Static_assert(sizeof(struct lt_matmul_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc fits");
_Static_assert(sizeof(struct lt_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout fits");

static struct lt_matmul_desc *desc_of(cublasLtMatmulDesc_t d)
{
  return (struct lt_matmul_desc *)d->data;
}

static struct lt_layout *layout_of(cublasLtMatrixLayout_t l)
{
  return (struct lt_layout *)l->data;
}

/** Creates a cuBLASLt handle (loads the driver). */
SIM_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle)
{
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (simkernel_init() != CUDA_SUCCESS)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  simkernel_host_work("SIMCUBLAS_CREATE_US");
  *handle = calloc(1, sizeof **handle);
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

/** Destroys a cuBLASLt handle. */
SIM_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}

/** Reports the library version (CUBLAS_VERSION of the headers). */
SIM_EXPORT size_t cublasLtGetVersion(void)
{
  return CUBLAS_VERSION;
}

/** Reports the CUDA runtime version the library was built for. */
SIM_EXPORT size_t cublasLtGetCudartVersion(void)
{
  return CUDART_VERSION;
}

/** Reports one part of the library version. */
SIM_EXPORT cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int *value)
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
SIM_EXPORT const char *cublasLtGetStatusName(cublasStatus_t status)
{
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

/** Returns a description of a status. */
SIM_EXPORT const char *cublasLtGetStatusString(cublasStatus_t status)
{
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  default: return "unknown error";
  }
}

/* ---- attribute plumbing ---- */

/* Copies an attribute value in (set) or out (get) of `field`. */
static cublasStatus_t attribute_io(void *field, size_t field_size, int set, void *buf, size_t size,
                                   size_t *written)
{
  if (set) {
    if (!buf || size != field_size)
      return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, field_size);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (written)
    *written = field_size;
  if (size == 0 && !buf)
    return written ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  if (!buf || size < field_size)
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, field, field_size);
  return CUBLAS_STATUS_SUCCESS;
}

#define LT_FIELD(f) attribute_io(&(f), sizeof(f), set, buf, size, written)

static cublasStatus_t desc_attribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, int set,
                                     void *buf, size_t size, size_t *written)
{
  if (!d)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_matmul_desc *x = desc_of(d);
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return LT_FIELD(x->compute_type);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return LT_FIELD(x->scale_type);
  case CUBLASLT_MATMUL_DESC_POINTER_MODE: return LT_FIELD(x->pointer_mode);
  case CUBLASLT_MATMUL_DESC_TRANSA: return LT_FIELD(x->transa);
  case CUBLASLT_MATMUL_DESC_TRANSB: return LT_FIELD(x->transb);
  case CUBLASLT_MATMUL_DESC_TRANSC: return LT_FIELD(x->transc);
  case CUBLASLT_MATMUL_DESC_FILL_MODE: return LT_FIELD(x->fill_mode);
  case CUBLASLT_MATMUL_DESC_EPILOGUE: return LT_FIELD(x->epilogue);
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return LT_FIELD(x->bias);
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return LT_FIELD(x->bias_type);
  case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return LT_FIELD(x->bias_batch_stride);
  default:
    /* Other attributes (scale pointers, aux buffers, ...) are accepted and ignored. */
    if (set)
      return CUBLAS_STATUS_SUCCESS;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

static void desc_init(struct lt_matmul_desc *x, cublasComputeType_t compute, cudaDataType scale)
{
  memset(x, 0, sizeof *x);
  x->compute_type = compute;
  x->scale_type = scale;
  x->transa = x->transb = x->transc = CUBLAS_OP_N;
  x->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  x->bias_type = -1;
}

/** Initialises caller-provided matmul descriptor storage. */
SIM_EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t d, size_t size,
                                                          cublasComputeType_t compute, cudaDataType scale)
{
  if (!d || size < sizeof(struct lt_matmul_desc))
    return CUBLAS_STATUS_INVALID_VALUE;
  desc_init(desc_of(d), compute, scale);
  return CUBLAS_STATUS_SUCCESS;
}

/** Creates a matmul descriptor. */
SIM_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                                   cudaDataType_t scale)
{
  if (!d)
    return CUBLAS_STATUS_INVALID_VALUE;
  *d = calloc(1, sizeof **d);
  if (!*d)
    return CUBLAS_STATUS_ALLOC_FAILED;
  desc_init(desc_of(*d), compute, scale);
  return CUBLAS_STATUS_SUCCESS;
}

/** Destroys a matmul descriptor. */
SIM_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
  free(d);
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets a matmul descriptor attribute. */
SIM_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                         cublasLtMatmulDescAttributes_t attr,
                                                         const void *buf, size_t size)
{
  return desc_attribute(d, attr, 1, (void *)buf, size, NULL);
}

/** Reads a matmul descriptor attribute. */
SIM_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                         cublasLtMatmulDescAttributes_t attr, void *buf,
                                                         size_t size, size_t *written)
{
  return desc_attribute(d, attr, 0, buf, size, written);
}

static cublasStatus_t layout_attribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr,
                                       int set, void *buf, size_t size, size_t *written)
{
  if (!l)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct lt_layout *x = layout_of(l);
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE: return LT_FIELD(x->type);
  case CUBLASLT_MATRIX_LAYOUT_ORDER: return LT_FIELD(x->order);
  case CUBLASLT_MATRIX_LAYOUT_ROWS: return LT_FIELD(x->rows);
  case CUBLASLT_MATRIX_LAYOUT_COLS: return LT_FIELD(x->cols);
  case CUBLASLT_MATRIX_LAYOUT_LD: return LT_FIELD(x->ld);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return LT_FIELD(x->batch);
  case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return LT_FIELD(x->batch_stride);
  default:
    if (set)
      return CUBLAS_STATUS_SUCCESS;
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

static void layout_init(struct lt_layout *x, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld)
{
  memset(x, 0, sizeof *x);
  x->type = type;
  x->order = CUBLASLT_ORDER_COL;
  x->rows = rows;
  x->cols = cols;
  x->ld = ld;
  x->batch = 1;
}

/** Initialises caller-provided matrix layout storage. */
SIM_EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t l, size_t size,
                                                            cudaDataType type, uint64_t rows, uint64_t cols,
                                                            int64_t ld)
{
  if (!l || size < sizeof(struct lt_layout))
    return CUBLAS_STATUS_INVALID_VALUE;
  layout_init(layout_of(l), type, rows, cols, ld);
  return CUBLAS_STATUS_SUCCESS;
}

/** Creates a column-major matrix layout. */
SIM_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                     uint64_t rows, uint64_t cols, int64_t ld)
{
  if (!l)
    return CUBLAS_STATUS_INVALID_VALUE;
  *l = calloc(1, sizeof **l);
  if (!*l)
    return CUBLAS_STATUS_ALLOC_FAILED;
  layout_init(layout_of(*l), type, rows, cols, ld);
  return CUBLAS_STATUS_SUCCESS;
}

/** Destroys a matrix layout. */
SIM_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
  free(l);
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets a matrix layout attribute. */
SIM_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                           cublasLtMatrixLayoutAttribute_t attr,
                                                           const void *buf, size_t size)
{
  return layout_attribute(l, attr, 1, (void *)buf, size, NULL);
}

/** Reads a matrix layout attribute. */
SIM_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                           cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                           size_t size, size_t *written)
{
  return layout_attribute(l, attr, 0, buf, size, written);
}

/** Initialises caller-provided preference storage. */
SIM_EXPORT cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t p, size_t size)
{
  if (!p || size < sizeof *p)
    return CUBLAS_STATUS_INVALID_VALUE;
  memset(p, 0, sizeof *p);
  return CUBLAS_STATUS_SUCCESS;
}

/** Creates a heuristic preference (its attributes are accepted and stored). */
SIM_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
  if (!p)
    return CUBLAS_STATUS_INVALID_VALUE;
  *p = calloc(1, sizeof **p);
  return *p ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

/** Destroys a preference. */
SIM_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
  free(p);
  return CUBLAS_STATUS_SUCCESS;
}

/** Sets a preference attribute; the first 8 attribute ids are kept. */
SIM_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                               cublasLtMatmulPreferenceAttributes_t attr,
                                                               const void *buf, size_t size)
{
  if (!p || !buf)
    return CUBLAS_STATUS_INVALID_VALUE;
  if ((unsigned)attr < 8 && size <= sizeof p->data[0])
    memcpy(&p->data[attr], buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

/** Reads a preference attribute stored by cublasLtMatmulPreferenceSetAttribute. */
SIM_EXPORT cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t p,
                                                               cublasLtMatmulPreferenceAttributes_t attr,
                                                               void *buf, size_t size, size_t *written)
{
  if (!p || (unsigned)attr >= 8)
    return CUBLAS_STATUS_INVALID_VALUE;
  size_t field = attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ? 8 : 4;
  return attribute_io(&p->data[attr], field, 0, buf, size, written);
}

/* ---- matmul ---- */

/* Builds the GEMM of a cublasLtMatmul call; returns a status on bad input. */
static cublasStatus_t build_gemm(cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                                 cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                                 const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                 cublasLtMatrixLayout_t Ddesc, struct sim_gemm *g)
{
  if (!desc || !Adesc || !Bdesc || !Ddesc || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  const struct lt_matmul_desc *x = desc_of(desc);
  const struct lt_layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *d = layout_of(Ddesc);
  const struct lt_layout *c = Cdesc ? layout_of(Cdesc) : d;
  if (a->order != CUBLASLT_ORDER_COL || b->order != CUBLASLT_ORDER_COL || c->order != CUBLASLT_ORDER_COL
      || d->order != CUBLASLT_ORDER_COL)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  memset(g, 0, sizeof *g);
  g->transa = x->transa != CUBLAS_OP_N;
  g->transb = x->transb != CUBLAS_OP_N;
  g->m = (long long)d->rows;
  g->n = (long long)d->cols;
  g->k = (long long)(g->transa ? a->rows : a->cols);
  long long a_rows = (long long)(g->transa ? a->cols : a->rows);
  long long b_rows = (long long)(g->transb ? b->cols : b->rows);
  long long b_cols = (long long)(g->transb ? b->rows : b->cols);
  if (a_rows != g->m || b_rows != g->k || b_cols != g->n || c->rows != d->rows || c->cols != d->cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (a->ld < (int64_t)a->rows || b->ld < (int64_t)b->rows || d->ld < (int64_t)d->rows
      || c->ld < (int64_t)c->rows)
    return CUBLAS_STATUS_INVALID_VALUE;
  g->batch = d->batch > 0 ? d->batch : 1;
  cudaDataType scale = (cudaDataType)x->scale_type;
  g->alpha = sim_load_scalar(alpha, scale);
  g->beta = sim_load_scalar(beta, scale);
  g->a = (struct sim_matrix){A, (cudaDataType)a->type, a->ld, a->batch_stride};
  g->b = (struct sim_matrix){B, (cudaDataType)b->type, b->ld, b->batch_stride};
  g->c = (struct sim_matrix){C, (cudaDataType)c->type, c->ld, c->batch_stride};
  g->d = (struct sim_matrix){D, (cudaDataType)d->type, d->ld, d->batch_stride};
  switch (x->epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT: break;
  case CUBLASLT_EPILOGUE_RELU: g->relu = 1; break;
  case CUBLASLT_EPILOGUE_BIAS: g->bias = x->bias; break;
  case CUBLASLT_EPILOGUE_RELU_BIAS: g->bias = x->bias, g->relu = 1; break;
  default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if ((x->epilogue & CUBLASLT_EPILOGUE_BIAS) && !x->bias)
    return CUBLAS_STATUS_INVALID_VALUE;
  g->bias_type = x->bias_type >= 0 ? (cudaDataType)x->bias_type : g->d.type;
  if (!sim_gemm_type_supported(g->a.type) || !sim_gemm_type_supported(g->b.type)
      || !sim_gemm_type_supported(g->d.type) || (C && !sim_gemm_type_supported(g->c.type))
      || (g->bias && !sim_gemm_type_supported(g->bias_type)))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

/** Returns one usable algorithm (no workspace) for any supported problem, after the
 * host time SIMCUBLAS_HEURISTIC_US plants (the real search's). */
SIM_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle,
                                                         cublasLtMatmulDesc_t desc,
                                                         cublasLtMatrixLayout_t Adesc,
                                                         cublasLtMatrixLayout_t Bdesc,
                                                         cublasLtMatrixLayout_t Cdesc,
                                                         cublasLtMatrixLayout_t Ddesc,
                                                         cublasLtMatmulPreference_t pref, int requested,
                                                         cublasLtMatmulHeuristicResult_t results[],
                                                         int *returned)
{
  (void)pref;
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  simkernel_host_work("SIMCUBLAS_HEURISTIC_US");
  if (!results || !returned || requested <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  float one = 1.0f;
  double one_d = 1.0;
  const void *scale = desc && desc_of(desc)->scale_type == CUDA_R_64F ? (const void *)&one_d : &one;
  struct sim_gemm g;
  static const float dummy;
  /* A placeholder bias lets the shape check pass before the bias is known. */
  cublasStatus_t s = build_gemm(desc, scale, &dummy, Adesc, &dummy, Bdesc, scale, &dummy, Cdesc,
                                (void *)&dummy, Ddesc, &g);
  if (s == CUBLAS_STATUS_INVALID_VALUE && desc && (desc_of(desc)->epilogue & CUBLASLT_EPILOGUE_BIAS)
      && !desc_of(desc)->bias)
    s = CUBLAS_STATUS_SUCCESS;
  *returned = 0;
  if (s != CUBLAS_STATUS_SUCCESS)
    return s == CUBLAS_STATUS_NOT_SUPPORTED ? CUBLAS_STATUS_NOT_SUPPORTED : s;
  memset(&results[0], 0, sizeof results[0]);
  results[0].algo.data[0] = 1;
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

static const char *epilogue_token(const struct sim_gemm *g)
{
  if (g->bias && g->relu)
    return "bias_f32_relu_";
  if (g->bias)
    return "bias_f32_";
  if (g->relu)
    return "relu_";
  return "";
}

/** D = epilogue(alpha op(A) op(B) + beta C), computed on the CPU, then one launch on `stream`. */
SIM_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                         const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                         const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                         const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                         cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                         void *workspace, size_t workspace_size, cudaStream_t stream)
{
  (void)algo, (void)workspace, (void)workspace_size;
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  struct sim_gemm g;
  cublasStatus_t s = build_gemm(desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, &g);
  if (s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (g.m == 0 || g.n == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (simkernel_compute_enabled() && sim_gemm_compute(&g) != 0)
    return CUBLAS_STATUS_ALLOC_FAILED;
  char name[256];
  int tf32 = desc_of(desc)->compute_type == CUBLAS_COMPUTE_32F_FAST_TF32;
  simkernel_gemm_name(name, sizeof name, g.a.type, tf32 && g.a.type == CUDA_R_32F, g.transa, g.transb,
                      epilogue_token(&g));
  CUresult r = simkernel_launch(name, (unsigned)((g.m + 127) / 128), (unsigned)((g.n + 127) / 128),
                                (unsigned)g.batch, stream, sim_gemm_flops(&g));
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}
