/*
 * Graph instantiation and exec update through the runtime: each wrapper forwards
 * with the same arguments and returns the result unchanged; when tracing, the call
 * is an API record and, when it succeeded, the exec's inventory is walked from the
 * source graph (GRAPH and GRAPH_KERNEL records with the call's corr; see
 * preload/driver/graph_walk.c). The runtime reaches the driver's instantiate from
 * libcudart, which the driver wrappers only forward: one span per call.
 */
#include "hooks_internal.h"

/* Not declared by cuda_runtime_api.h unless compiled for per-thread default streams. */
CTP_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                           cudaGraphInstantiateParams *params);

/* The body of an instantiate wrapper: exec is where the new exec is written, ARG3
 * the third argument (flags or the parameter block). */
#define INSTANTIATE_BODY(sym, ptsz, ARG3)                                                \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                \
  if (!real)                                                                             \
    return cudaErrorSharedObjectSymbolNotFound;                                          \
  if (CTP_UNLIKELY(!ctph_on()))                                                          \
    return real(exec, graph, ARG3);                                                      \
  ctph_call c;                                                                           \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, 0, CTPH_NO_STREAM, 0);                        \
  cudaError_t r = real(exec, graph, ARG3);                                               \
  CTPH_FINISH(c, r,                                                                      \
              if (r == cudaSuccess && exec)                                              \
                  ctph_graph_inventory(c.corr, (CUgraphExec)*exec, (CUgraph)graph, 1));  \
  return r

/** cudaGraphInstantiate (CUDA 12+ form: flags), traced. */
CTP_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                            unsigned long long flags) {
  INSTANTIATE_BODY(cudaGraphInstantiate, 0, flags);
}

/** cudaGraphInstantiateWithFlags, traced. */
CTP_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                     unsigned long long flags) {
  INSTANTIATE_BODY(cudaGraphInstantiateWithFlags, 0, flags);
}

/** cudaGraphInstantiateWithParams, traced. */
CTP_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams *params) {
  INSTANTIATE_BODY(cudaGraphInstantiateWithParams, 0, params);
}

/** cudaGraphInstantiateWithParams_ptsz, traced. */
CTP_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                           cudaGraphInstantiateParams *params) {
  INSTANTIATE_BODY(cudaGraphInstantiateWithParams_ptsz, 1, params);
}

/** cudaGraphExecUpdate, traced: after a successful update the exec (same id) gets
 * the new graph's inventory. */
CTP_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                           cudaGraphExecUpdateResultInfo *info) {
  __typeof__(&cudaGraphExecUpdate) real = CTPH_REAL(cudaGraphExecUpdate);
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  if (CTP_UNLIKELY(!ctph_on()))
    return real(exec, graph, info);
  ctph_call c;
  ctph_call_begin(&c, CTPH_ID_cudaGraphExecUpdate, 0, 0, CTPH_NO_STREAM, 0);
  cudaError_t r = real(exec, graph, info);
  CTPH_FINISH(c, r,
              if (r == cudaSuccess) ctph_graph_inventory(c.corr, (CUgraphExec)exec, (CUgraph)graph, 0));
  return r;
}
