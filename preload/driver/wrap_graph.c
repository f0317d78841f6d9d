/*
 * Driver graph instantiation and exec update: cuGraphInstantiateWithFlags,
 * cuGraphInstantiateWithParams (+_ptsz), the CUDA 10.0 / 11.0 five-argument
 * cuGraphInstantiate / cuGraphInstantiate_v2, cuGraphExecUpdate_v2. A traced call
 * is an API record flagged CT_API_DRIVER; when it succeeded, the exec's inventory
 * is walked from the source graph (graph_walk.c) under the call's corr. Calls
 * from libcudart (its cudaGraphInstantiate*) only forward.
 */
#include "wrap_common.h"

#undef cuGraphInstantiate /* cuda.h maps it to cuGraphInstantiateWithFlags */

typedef CUresult (*instantiate_fn)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*instantiate_p_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);
typedef CUresult (*instantiate_legacy_fn)(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
typedef CUresult (*exec_update_fn)(CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *);

/* The inventory of a successful call: fresh for an instantiation, the same exec id
 * for an update. */
#define INVENTORY(exec, graph, fresh) \
  if (r == CUDA_SUCCESS) ctph_graph_inventory(c.corr, (exec), (graph), (fresh))

/* While paused: the inventory is still walked (corr 0), so that launches recorded
 * later in a window know what their exec runs; libcudart's calls only forward (its
 * own wrapper walks). */
#define PAUSED_INVENTORY(fn_type, CALL, exec, graph, fresh)                             \
  CTPD_WHILE_PAUSED(fn_type, CALL,                                                     \
                    if (r == CUDA_SUCCESS && !ctpd_caller_passes(ra))                  \
                        ctph_graph_inventory(0, (exec), (graph), (fresh)))

CTPD_INLINE CUresult instantiate_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUgraphExec *exec, CUgraph graph, unsigned long long flags) {
  PAUSED_INVENTORY(instantiate_fn, real(exec, graph, flags), exec ? *exec : NULL, graph, 1);
  CTPD_SPAN_BODY(id, ptsz, realp, ra, instantiate_fn, CTPH_NO_STREAM, 0,
                 real(exec, graph, flags), (void)0, INVENTORY(exec ? *exec : NULL, graph, 1));
}

CTPD_INLINE CUresult instantiate_p_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUgraphExec *exec, CUgraph graph,
                                        CUDA_GRAPH_INSTANTIATE_PARAMS *params) {
  PAUSED_INVENTORY(instantiate_p_fn, real(exec, graph, params), exec ? *exec : NULL, graph, 1);
  CTPD_SPAN_BODY(id, ptsz, realp, ra, instantiate_p_fn, CTPH_NO_STREAM, 0,
                 real(exec, graph, params), (void)0, INVENTORY(exec ? *exec : NULL, graph, 1));
}

CTPD_INLINE CUresult instantiate_legacy_body(enum ctph_id id, int ptsz, void *realp,
                                             const void *ra, CUgraphExec *exec, CUgraph graph,
                                             CUgraphNode *error_node, char *log, size_t log_size) {
  PAUSED_INVENTORY(instantiate_legacy_fn, real(exec, graph, error_node, log, log_size),
                   exec ? *exec : NULL, graph, 1);
  CTPD_SPAN_BODY(id, ptsz, realp, ra, instantiate_legacy_fn, CTPH_NO_STREAM, 0,
                 real(exec, graph, error_node, log, log_size), (void)0,
                 INVENTORY(exec ? *exec : NULL, graph, 1));
}

CTPD_INLINE CUresult exec_update_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUgraphExec exec, CUgraph graph,
                                      CUgraphExecUpdateResultInfo *info) {
  PAUSED_INVENTORY(exec_update_fn, real(exec, graph, info), exec, graph, 0);
  CTPD_SPAN_BODY(id, ptsz, realp, ra, exec_update_fn, CTPH_NO_STREAM, 0, real(exec, graph, info),
                 (void)0, INVENTORY(exec, graph, 0));
}

#define INSTANTIATE_PARAMS (CUgraphExec *exec, CUgraph graph, unsigned long long flags)
#define INSTANTIATE_P_PARAMS (CUgraphExec *exec, CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS *params)
#define INSTANTIATE_LEGACY_PARAMS \
  (CUgraphExec *exec, CUgraph graph, CUgraphNode *error_node, char *log, size_t log_size)

CTPD_DEFINE(cuGraphInstantiateWithFlags, 0, instantiate_body, INSTANTIATE_PARAMS,
            (exec, graph, flags))
CTPD_DEFINE(cuGraphInstantiateWithParams, 0, instantiate_p_body, INSTANTIATE_P_PARAMS,
            (exec, graph, params))
CTPD_DEFINE(cuGraphInstantiateWithParams_ptsz, 1, instantiate_p_body, INSTANTIATE_P_PARAMS,
            (exec, graph, params))
CTPD_DEFINE(cuGraphInstantiate, 0, instantiate_legacy_body, INSTANTIATE_LEGACY_PARAMS,
            (exec, graph, error_node, log, log_size))
CTPD_DEFINE(cuGraphInstantiate_v2, 0, instantiate_legacy_body, INSTANTIATE_LEGACY_PARAMS,
            (exec, graph, error_node, log, log_size))
CTPD_DEFINE(cuGraphExecUpdate_v2, 0, exec_update_body,
            (CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info),
            (exec, graph, info))
