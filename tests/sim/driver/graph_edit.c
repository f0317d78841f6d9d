/* In-place edits of an instantiated graph: a kernel node of the exec (found by the
 * node of the source graph it came from) given another function or shape. The source
 * graph is not changed. Other node kinds are not supported. */
#include "graph.h"
#include "module.h"

#include <stdio.h>
#include <string.h>

/* The launch of a kernel node, as both parameter layouts give it. */
struct node_launch {
  CUfunction func;
  CUkernel kern;
  unsigned grid[3], block[3], shared_mem;
};

/* Sets the kernel op of exec x that came from node (lock held). */
static CUresult set_kernel_locked(CUgraphExec hGraphExec, CUgraphNode hNode,
                                  const struct node_launch *l)
{
  CUfunction func = l->func;
  CUkernel kern = l->kern;
  const unsigned *grid = l->grid, *block = l->block;
  unsigned shared_mem = l->shared_mem;
  if (sim_handle_kind(hGraphExec) != SIM_KIND_GRAPH_EXEC)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_graph_exec *x = (struct sim_graph_exec *)hGraphExec;
  const void *fhandle = func ? (const void *)func : (const void *)kern;
  struct sim_function *f = sim_function_of(fhandle);
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < x->count; i++) {
    struct sim_op *op = &x->ops[i];
    if (x->nodes[i] != (const void *)hNode)
      continue;
    if (op->kind != SIM_OP_KERNEL)
      return CUDA_ERROR_INVALID_VALUE;
    op->full_name = f->name;
    op->func = fhandle;
    snprintf(op->name, sizeof op->name, "%s", f->name);
    memcpy(op->grid, grid, sizeof op->grid);
    memcpy(op->block, block, sizeof op->block);
    op->shared_mem = shared_mem;
    op->duration_ns = f->duration_ns;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

/* Fills l from the fields both layouts share (v2 and v3 have the same ones first). */
#define NODE_LAUNCH(p)                                                                     \
  {(p)->func, (p)->kern, {(p)->gridDimX, (p)->gridDimY, (p)->gridDimZ},                    \
   {(p)->blockDimX, (p)->blockDimY, (p)->blockDimZ}, (p)->sharedMemBytes}

static CUresult set_kernel(CUgraphExec hGraphExec, CUgraphNode hNode, struct node_launch l)
{
  sim_lock();
  CUresult r = set_kernel_locked(hGraphExec, hNode, &l);
  sim_unlock();
  return r;
}

/** Gives an exec's kernel node another function or launch configuration (CUDA 12 layout). */
SIM_API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  return set_kernel(hGraphExec, hNode, (struct node_launch)NODE_LAUNCH(p));
}

/** The CUDA 12.2 generic form: kernel nodes only (others CUDA_ERROR_NOT_SUPPORTED). */
SIM_API CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                          CUgraphNodeParams *nodeParams)
{
  if (!nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  if (nodeParams->type != CU_GRAPH_NODE_TYPE_KERNEL)
    return CUDA_ERROR_NOT_SUPPORTED;
  return set_kernel(hGraphExec, hNode, (struct node_launch)NODE_LAUNCH(&nodeParams->kernel));
}

/* 0 when node is a node of exec whose op is of kind `kind` (lock held). */
static CUresult check_node_locked(CUgraphExec hGraphExec, CUgraphNode hNode, enum sim_op_kind kind)
{
  if (sim_handle_kind(hGraphExec) != SIM_KIND_GRAPH_EXEC)
    return CUDA_ERROR_INVALID_VALUE;
  const struct sim_graph_exec *x = (const struct sim_graph_exec *)hGraphExec;
  for (size_t i = 0; i < x->count; i++)
    if (x->nodes[i] == (const void *)hNode)
      return x->ops[i].kind == kind ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  return CUDA_ERROR_INVALID_VALUE;
}

static CUresult check_node(CUgraphExec hGraphExec, CUgraphNode hNode, enum sim_op_kind kind)
{
  sim_lock();
  CUresult r = check_node_locked(hGraphExec, hNode, kind);
  sim_unlock();
  return r;
}

/** An exec's set node given other parameters: checked (the exec, a set node of it),
 * the replayed set left as it was (its duration does not depend on them here). */
SIM_API CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
  (void)ctx;
  return p ? check_node(hGraphExec, hNode, SIM_OP_MEMSET) : CUDA_ERROR_INVALID_VALUE;
}

/** An exec's copy node given other parameters: checked as a set node is. */
SIM_API CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_MEMCPY3D *p, CUcontext ctx)
{
  (void)ctx;
  return p ? check_node(hGraphExec, hNode, SIM_OP_MEMCPY) : CUDA_ERROR_INVALID_VALUE;
}

/** An exec's child graph node given another graph: checked (a live exec, a child graph
 * node, a graph); the replayed operations are left as they were. */
SIM_API CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                    CUgraph childGraph)
{
  sim_lock();
  int ok = sim_handle_kind(hGraphExec) == SIM_KIND_GRAPH_EXEC &&
           sim_handle_kind(hNode) == SIM_KIND_GRAPH_NODE &&
           ((const struct sim_graph_node *)hNode)->child &&
           sim_handle_kind(childGraph) == SIM_KIND_GRAPH;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
