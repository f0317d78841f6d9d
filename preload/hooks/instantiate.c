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

/* An untraced call's result r, after walking the new exec's inventory (corr 0) when
 * the tracer is paused rather than off (preload/core/window.c): graph launches
 * recorded in a later window then know what they run. arg0 is the exec's address
 * when fresh, else the exec. */
static inline cudaError_t paused_inventory(cudaError_t r, void *arg0, cudaGraph_t graph,
                                           int fresh) {
  if (r != cudaSuccess || !arg0 || !ctph_alive())
    return r;
  int saved = errno;
  ctph_graph_inventory(0, fresh ? *(CUgraphExec *)arg0 : (CUgraphExec)arg0, (CUgraph)graph, fresh);
  errno = saved;
  return r;
}

/* The body of an instantiate wrapper: exec is where the new exec is written, ARG3
 * the third argument (flags or the parameter block). */
#define INSTANTIATE_BODY(sym, ptsz, ARG3)                                                \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                \
  if (!real)                                                                             \
    return cudaErrorSharedObjectSymbolNotFound;                                          \
  if (CTP_UNLIKELY(!ctph_on()))                                                          \
    return paused_inventory(real(exec, graph, ARG3), exec, graph, 1);                    \
  ctph_call c;                                                                           \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, 0, CTPH_NO_STREAM, 0);                        \
  cudaError_t r = real(exec, graph, ARG3);                                               \
  CTPH_FINISH(c, r,                                                                      \
              if (r == cudaSuccess && exec)                                              \
                  ctph_graph_inventory(c.corr, (CUgraphExec)*exec, (CUgraph)graph, 1));  \
  return r

/*
 * cudaGraphInstantiate and cudaGraphExecUpdate changed arguments in CUDA 12 under the
 * same symbol: libcudart.so.11 takes (exec, graph, error node, log buffer, size) and
 * (exec, graph, error node, update result), libcudart.so.12+ (exec, graph, flags) and
 * (exec, graph, result info). These two wrappers take the longer list and forward all
 * of it, so either caller's arguments reach the real function unchanged (integer and
 * pointer arguments travel in registers on x86-64 and AArch64; a callee ignores the
 * extra ones). Only exec and graph are read.
 */
typedef cudaError_t (*graph_call5_fn)(void *, void *, uintptr_t, uintptr_t, uintptr_t);

CTP_EXPORT cudaError_t ctph_x_cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                   uintptr_t a2, uintptr_t a3, uintptr_t a4)
    __asm__("cudaGraphInstantiate");
CTP_EXPORT cudaError_t ctph_x_cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                                  uintptr_t a2, uintptr_t a3, uintptr_t a4)
    __asm__("cudaGraphExecUpdate");

/* The body of both: exec_out is where an instantiation wrote the new exec (NULL for
 * an update of `exec`). */
static inline __attribute__((always_inline)) cudaError_t
graph_call5(enum ctph_id id, const void *ra, const void *cfa, void *arg0, cudaGraph_t graph,
            uintptr_t a2, uintptr_t a3, uintptr_t a4, int fresh) {
  graph_call5_fn real = (graph_call5_fn)(__atomic_load_n(&ctph_real_table[id], __ATOMIC_ACQUIRE)
                                             ?: ctph_real_resolve(id));
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  if (CTP_UNLIKELY(!ctph_on()))
    return paused_inventory(real(arg0, graph, a2, a3, a4), arg0, graph, fresh);
  ctph_call c;
  ctph_call_begin_site(&c, ra, cfa, id, 0, 0, CTPH_NO_STREAM, 0);
  cudaError_t r = real(arg0, graph, a2, a3, a4);
  CTPH_FINISH(c, r,
              if (r == cudaSuccess && arg0) ctph_graph_inventory(
                  c.corr, fresh ? *(CUgraphExec *)arg0 : (CUgraphExec)arg0, (CUgraph)graph,
                  fresh));
  return r;
}

/** cudaGraphInstantiate (either form, see above), traced. */
CTP_EXPORT cudaError_t ctph_x_cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                                   uintptr_t a2, uintptr_t a3, uintptr_t a4) {
  return graph_call5(CTPH_ID_cudaGraphInstantiate, __builtin_return_address(0),
                     __builtin_dwarf_cfa(), exec, graph, a2, a3, a4, 1);
}

/** cudaGraphExecUpdate (either form, see above), traced: after a successful update the
 * exec (same id) gets the new graph's inventory. */
CTP_EXPORT cudaError_t ctph_x_cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph,
                                                  uintptr_t a2, uintptr_t a3, uintptr_t a4) {
  return graph_call5(CTPH_ID_cudaGraphExecUpdate, __builtin_return_address(0),
                     __builtin_dwarf_cfa(), exec, graph, a2, a3, a4, 0);
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

/* A runtime edit the tracer follows (cudaGraphExecKernelNodeSetParams,
 * cudaGraphExecNodeSetParams, cudaGraphExecChildGraphNodeSetParams: exec, node, a
 * parameter block or a graph): the call's corr is left in a thread-local while
 * libcudart reaches the driver's edit, whose wrapper (only forwarding) writes the exec's
 * new inventory with it (preload/driver/graph_edit.c). */
typedef cudaError_t (*kernel_edit_fn)(cudaGraphExec_t, cudaGraphNode_t, const void *);

static inline __attribute__((always_inline)) cudaError_t
kernel_edit(enum ctph_id id, const void *ra, const void *cfa, cudaGraphExec_t exec,
            cudaGraphNode_t node, const void *params) {
  kernel_edit_fn real = (kernel_edit_fn)(__atomic_load_n(&ctph_real_table[id], __ATOMIC_ACQUIRE)
                                             ?: ctph_real_resolve(id));
  if (!real)
    return cudaErrorSharedObjectSymbolNotFound;
  if (CTP_UNLIKELY(!ctph_on()))
    return real(exec, node, params);
  ctph_call c;
  ctph_call_begin_site(&c, ra, cfa, id, 0, 0, CTPH_NO_STREAM, 0);
  uint64_t outer = ctph_graph_edit_corr_swap(c.traced ? c.corr : 0);
  cudaError_t r = real(exec, node, params);
  ctph_graph_edit_corr_swap(outer);
  CTPH_FINISH(c, r, (void)0);
  return r;
}

/** cudaGraphExecKernelNodeSetParams, traced: libcudart reaches the driver's form,
 * whose wrapper writes the exec's inventory again, with this call's corr, when the
 * node's function changed (preload/driver/graph_edit.c). */
CTP_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaKernelNodeParams *p) {
  return kernel_edit(CTPH_ID_cudaGraphExecKernelNodeSetParams, __builtin_return_address(0),
                     __builtin_dwarf_cfa(), exec, node, p);
}

/** cudaGraphExecNodeSetParams (CUDA 12.2), traced as cudaGraphExecKernelNodeSetParams. */
CTP_EXPORT cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                  struct cudaGraphNodeParams *p) {
  return kernel_edit(CTPH_ID_cudaGraphExecNodeSetParams, __builtin_return_address(0),
                     __builtin_dwarf_cfa(), exec, node, p);
}

/* The traced call of cudaGraphExecDestroy (an API record). */
static inline __attribute__((always_inline)) cudaError_t exec_destroy(cudaGraphExec_t exec) {
  CTPH_MEMOP_BODY(cudaGraphExecDestroy, 0, CTPH_NO_STREAM, 0, (exec), (void)0);
}

/** cudaGraphExecDestroy, traced (an API record): when it answers success, what the
 * tracer kept for the exec is freed and its id cleared, whether tracing or paused
 * (libcudart's driver call, which the driver wrapper forwards, does the same: harmless
 * twice, the id read before the call telling a newer exec at the same address apart);
 * a destroy that failed leaves the exec known. */
CTP_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  int known = exec && ctph_alive() && CTPH_REAL(cudaGraphExecDestroy);
  uint64_t exec_id = known ? ctph_graph_exec_known_id((CUgraphExec)exec) : 0;
  cudaError_t r = exec_destroy(exec);
  if (known && r == cudaSuccess)
    ctph_graph_forget((CUgraphExec)exec, exec_id);
  return r;
}

/** cudaGraphExecMemsetNodeSetParams, traced (a call: the inventory does not change). */
CTP_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemsetParams *p) {
  CTPH_MEMOP_BODY(cudaGraphExecMemsetNodeSetParams, 0, CTPH_NO_STREAM, 0, (exec, node, p), (void)0);
}

/** cudaGraphExecMemcpyNodeSetParams, traced (a call). */
CTP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                        const struct cudaMemcpy3DParms *p) {
  CTPH_MEMOP_BODY(cudaGraphExecMemcpyNodeSetParams, 0, CTPH_NO_STREAM, 0, (exec, node, p), (void)0);
}

/** cudaGraphExecMemcpyNodeSetParams1D, traced (a call). */
CTP_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node,
                                                          void *dst, const void *src, size_t count,
                                                          enum cudaMemcpyKind kind) {
  CTPH_MEMOP_BODY(cudaGraphExecMemcpyNodeSetParams1D, 0, CTPH_NO_STREAM, 0,
                  (exec, node, dst, src, count, kind), (void)0);
}

/** cudaGraphExecChildGraphNodeSetParams, traced: libcudart reaches the driver's form,
 * whose wrapper gives the exec the new child graph's kernels (and a new inventory, with
 * this call's corr, when they differ: preload/driver/graph_edit.c). */
CTP_EXPORT cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec,
                                                            cudaGraphNode_t node,
                                                            cudaGraph_t child) {
  return kernel_edit(CTPH_ID_cudaGraphExecChildGraphNodeSetParams, __builtin_return_address(0),
                     __builtin_dwarf_cfa(), exec, node, child);
}
