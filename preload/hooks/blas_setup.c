/*
 * cuBLAS and cuBLASLt setup calls that take host time and queue no GPU work: handle
 * creation (cublasCreate_v2, cublasLtCreate: the library's own initialisation, about
 * a millisecond) and cublasLtMatmulAlgoGetHeuristic (the algorithm search that
 * PyTorch runs for each new GEMM shape). Each wrapper forwards with the same arguments
 * and returns the result unchanged; when tracing, the call is one API record with no
 * stream and no GPU activity, so that `cutrace gaps` can name a gap the program spent
 * inside it (inside_call) instead of counting the time as outside CUDA. The cheap ones
 * (descriptor and preference creation, attribute setters, cublasSetWorkspace_v2, which
 * PyTorch calls at every handle fetch) are left unhooked: docs/preload.md, "Entry
 * points".
 */
#include <cublasLt.h>
#include <cublas_v2.h>

#include "hooks_internal.h"

/* Forward; when tracing, one API record without a stream or GPU work. */
#define SETUP_BODY(sym, call_args)                                   \
  __typeof__(&sym) real = CTPH_REAL(sym);                            \
  if (!real)                                                         \
    return CUBLAS_STATUS_NOT_INITIALIZED;                            \
  ctph_call c;                                                       \
  ctph_call_begin(&c, CTPH_ID_##sym, 0, 0, CTPH_NO_STREAM, 0);       \
  cublasStatus_t r = real call_args;                                 \
  CTPH_FINISH(c, r, (void)0);                                        \
  return r

/** cublasCreate_v2 (cublasCreate in cublas_v2.h), traced. */
CTP_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  SETUP_BODY(cublasCreate_v2, (handle));
}

/** cublasLtCreate, traced. */
CTP_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
  SETUP_BODY(cublasLtCreate, (lightHandle));
}

/** cublasLtMatmulAlgoGetHeuristic, traced. */
CTP_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount) {
  SETUP_BODY(cublasLtMatmulAlgoGetHeuristic,
             (lightHandle, operationDesc, Adesc, Bdesc, Cdesc, Ddesc, preference,
              requestedAlgoCount, heuristicResultsArray, returnAlgoCount));
}
