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
#undef cuGraphExecKernelNodeSetParams /* and this to its _v2 */

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

/*
 * In-place edits of an exec's kernel node: cuGraphExecKernelNodeSetParams (CUDA 10.1
 * layout, then the _v2 layout of CUDA 12 with kern), cuGraphExecNodeSetParams (12.2).
 * Traced as an API record; after a success that gives the node another function, the
 * exec's inventory is written again (graph_edit.c). The edit is followed for every
 * caller, libcudart's included (whose runtime call is the span: its corr, left by the
 * runtime wrapper in a thread-local; 0 while paused) and while paused, so that the
 * inventory stays true.
 */
typedef CUresult (*kernel_edit_v1_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *);
typedef CUresult (*kernel_edit_fn)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*node_edit_fn)(CUgraphExec, CUgraphNode, CUgraphNodeParams *);

/* The body of an edit wrapper that the tracer follows: CALL forwards; after a success,
 * when WHEN holds, FOLLOW(corr, ...) updates the exec's inventory (corr: the call's, or
 * the runtime call's that reached it through libcudart, 0 while paused). */
#define FOLLOWED_EDIT_BODY(id, realp, ra, fn_type, CALL, WHEN, FOLLOW, ...)                \
  fn_type real = (fn_type)(realp);                                                        \
  if (!real)                                                                              \
    return CTPD_NO_REAL;                                                                  \
  if (CTPD_UNTRACED(real, ra)) {                                                          \
    CUresult r = CALL;                                                                    \
    if (r == CUDA_SUCCESS && ctph_alive() && (WHEN))                                      \
      FOLLOW(ctpd_graph_runtime_edit_corr(), __VA_ARGS__);                                \
    return r;                                                                             \
  }                                                                                       \
  ctpd_note_call();                                                                       \
  ctph_call c;                                                                            \
  ctph_call_begin(&c, id, 0, 0, CTPH_NO_STREAM, 0);                                       \
  c.flags |= CT_API_DRIVER;                                                               \
  CUresult r = CALL;                                                                      \
  CTPH_FINISH(c, r, if (r == CUDA_SUCCESS && (WHEN)) FOLLOW(c.corr, __VA_ARGS__));        \
  return r

/* A kernel node edit: after a success, when IS_KERNEL holds, the kernel node `node` of
 * exec now runs FUNC with BLOCK threads and SMEM bytes. */
#define EDIT_BODY(id, realp, ra, fn_type, CALL, exec, node, IS_KERNEL, FUNC, BLOCK, SMEM)   \
  FOLLOWED_EDIT_BODY(id, realp, ra, fn_type, CALL, IS_KERNEL, ctph_graph_edit_kernel, exec,  \
                     node, FUNC, BLOCK, SMEM)

#define BLOCK_OF(p) ((uint64_t)(p)->blockDimX * (p)->blockDimY * (p)->blockDimZ)

CTPD_INLINE CUresult kernel_edit_v1_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         CUgraphExec exec, CUgraphNode node,
                                         const CUDA_KERNEL_NODE_PARAMS_v1 *p) {
  (void)ptsz;
  EDIT_BODY(id, realp, ra, kernel_edit_v1_fn, real(exec, node, p), exec, node, p, p->func,
            BLOCK_OF(p), p->sharedMemBytes);
}

CTPD_INLINE CUresult kernel_edit_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUgraphExec exec, CUgraphNode node,
                                      const CUDA_KERNEL_NODE_PARAMS_v2 *p) {
  (void)ptsz;
  EDIT_BODY(id, realp, ra, kernel_edit_fn, real(exec, node, p), exec, node, p,
            p->func ? p->func : (CUfunction)p->kern, BLOCK_OF(p), p->sharedMemBytes);
}

CTPD_INLINE CUresult node_edit_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    CUgraphExec exec, CUgraphNode node, CUgraphNodeParams *p) {
  (void)ptsz;
  EDIT_BODY(id, realp, ra, node_edit_fn, real(exec, node, p), exec, node,
            p && p->type == CU_GRAPH_NODE_TYPE_KERNEL,
            p->kernel.func ? p->kernel.func : (CUfunction)p->kernel.kern, BLOCK_OF(&p->kernel),
            p->kernel.sharedMemBytes);
}

CTPD_DEFINE(cuGraphExecKernelNodeSetParams, 0, kernel_edit_v1_body,
            (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v1 *p),
            (exec, node, p))
CTPD_DEFINE(cuGraphExecKernelNodeSetParams_v2, 0, kernel_edit_body,
            (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS_v2 *p),
            (exec, node, p))
CTPD_DEFINE(cuGraphExecNodeSetParams, 0, node_edit_body,
            (CUgraphExec exec, CUgraphNode node, CUgraphNodeParams *p), (exec, node, p))

/*
 * cuGraphExecDestroy: traced as an API record. When it answers success, what
 * graph_edit.c kept for the exec is freed and its id cleared, for every caller
 * (libcudart's cudaGraphExecDestroy included) and while paused; a destroy that failed
 * leaves the exec known (its later launches and edits keep its id and inventory). The
 * id is read before the call: once it returns, another thread may instantiate a new
 * exec at the same address, which ctph_graph_forget then leaves alone.
 */
typedef CUresult (*exec_destroy_fn)(CUgraphExec);

CTPD_INLINE CUresult exec_destroy_call(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUgraphExec exec) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, exec_destroy_fn, CTPH_NO_STREAM, 0, real(exec), (void)0,
                 (void)0);
}

CTPD_INLINE CUresult exec_destroy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUgraphExec exec) {
  int known = realp && exec && ctph_alive();
  uint64_t exec_id = known ? ctph_graph_exec_known_id(exec) : 0;
  CUresult r = exec_destroy_call(id, ptsz, realp, ra, exec);
  if (known && r == CUDA_SUCCESS)
    ctph_graph_forget(exec, exec_id);
  return r;
}

CTPD_DEFINE(cuGraphExecDestroy, 0, exec_destroy_body, (CUgraphExec exec), (exec))

/*
 * Edits in place of an exec's set, copy and child graph nodes: API records (the
 * inventory counts nodes by kind and names kernels: a set or copy node stays one). A
 * child graph node given another graph is followed like a kernel edit, for every caller
 * (libcudart's with its runtime call's corr) and while paused: the exec's kernels of
 * that child become the new graph's (graph_edit.c).
 */
typedef CUresult (*memset_edit_fn)(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *,
                                   CUcontext);
typedef CUresult (*memcpy_edit_fn)(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *, CUcontext);
typedef CUresult (*child_edit_fn)(CUgraphExec, CUgraphNode, CUgraph);

CTPD_INLINE CUresult memset_edit_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUgraphExec exec, CUgraphNode node,
                                      const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, memset_edit_fn, CTPH_NO_STREAM, 0,
                 real(exec, node, p, ctx), (void)0, (void)0);
}

CTPD_INLINE CUresult memcpy_edit_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D *p,
                                      CUcontext ctx) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, memcpy_edit_fn, CTPH_NO_STREAM, 0,
                 real(exec, node, p, ctx), (void)0, (void)0);
}

CTPD_INLINE CUresult child_edit_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUgraphExec exec, CUgraphNode node, CUgraph child) {
  (void)ptsz;
  FOLLOWED_EDIT_BODY(id, realp, ra, child_edit_fn, real(exec, node, child), 1,
                     ctph_graph_edit_child, exec, node, child);
}

CTPD_DEFINE(cuGraphExecMemsetNodeSetParams, 0, memset_edit_body,
            (CUgraphExec exec, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx),
            (exec, node, p, ctx))
CTPD_DEFINE(cuGraphExecMemcpyNodeSetParams, 0, memcpy_edit_body,
            (CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D *p, CUcontext ctx),
            (exec, node, p, ctx))
CTPD_DEFINE(cuGraphExecChildGraphNodeSetParams, 0, child_edit_body,
            (CUgraphExec exec, CUgraphNode node, CUgraph child), (exec, node, child))
