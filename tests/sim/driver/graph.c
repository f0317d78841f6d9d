/* Minimal graphs: a captured sequence of operations that can be instantiated
 * and launched; a launch enqueues the nodes in order with the same durations. */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

struct sim_graph *sim_graph_new(void)
{
  return calloc(1, sizeof(struct sim_graph));
}

int sim_graph_register(struct sim_graph *g)
{
  if (sim_handle_add(g, SIM_KIND_GRAPH) != 0)
    return -1;
  for (size_t i = 0; i < g->count; i++)
    if (sim_handle_add(g->nodes[i], SIM_KIND_GRAPH_NODE) != 0)
      return -1;
  return 0;
}

void sim_graph_free(struct sim_graph *g)
{
  for (size_t i = 0; i < g->count; i++) {
    sim_handle_remove(g->nodes[i]);
    free(g->nodes[i]);
  }
  sim_handle_remove(g);
  free(g->nodes);
  free(g);
}

int sim_graph_append(struct sim_graph *g, const struct sim_op *op)
{
  if (g->count == g->capacity) {
    size_t cap = g->capacity ? g->capacity * 2 : 16;
    struct sim_graph_node **grown = realloc(g->nodes, cap * sizeof *grown);
    if (!grown)
      return -1;
    g->nodes = grown;
    g->capacity = cap;
  }
  struct sim_graph_node *n = malloc(sizeof *n);
  if (!n)
    return -1;
  n->op = *op;
  g->nodes[g->count++] = n;
  return 0;
}

size_t sim_graph_tail(struct sim_graph *g, const CUgraphNode **deps)
{
  if (deps)
    *deps = g->count ? (const CUgraphNode *)&g->nodes[g->count - 1] : NULL;
  return g->count ? 1 : 0;
}

/** Creates an empty graph. */
SIM_API CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!phGraph || flags)
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_graph *g = sim_graph_new();
  if (!g)
    return CUDA_ERROR_OUT_OF_MEMORY;
  sim_lock();
  int failed = sim_graph_register(g);
  sim_unlock();
  if (failed) {
    free(g);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *phGraph = (CUgraph)g;
  return CUDA_SUCCESS;
}

/** Destroys a graph (instantiated copies stay usable). */
SIM_API CUresult cuGraphDestroy(CUgraph hGraph)
{
  sim_lock();
  int ok = sim_handle_kind(hGraph) == SIM_KIND_GRAPH;
  if (ok)
    sim_graph_free((struct sim_graph *)hGraph);
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** The nodes of a graph, in capture order. */
SIM_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
  if (!numNodes)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(hGraph) == SIM_KIND_GRAPH;
  if (ok) {
    struct sim_graph *g = (struct sim_graph *)hGraph;
    if (nodes) {
      size_t n = *numNodes < g->count ? *numNodes : g->count;
      for (size_t i = 0; i < n; i++)
        nodes[i] = (CUgraphNode)g->nodes[i];
      for (size_t i = n; i < *numNodes; i++)
        nodes[i] = NULL;
    } else {
      *numNodes = g->count;
    }
  }
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** The type of a graph node (kernel, memcpy, memset or event record). */
SIM_API CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
  if (!type)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  int ok = sim_handle_kind(hNode) == SIM_KIND_GRAPH_NODE;
  if (ok) {
    switch (((struct sim_graph_node *)hNode)->op.kind) {
    case SIM_OP_KERNEL: *type = CU_GRAPH_NODE_TYPE_KERNEL; break;
    case SIM_OP_MEMCPY: *type = CU_GRAPH_NODE_TYPE_MEMCPY; break;
    case SIM_OP_MEMSET: *type = CU_GRAPH_NODE_TYPE_MEMSET; break;
    case SIM_OP_HOST: *type = CU_GRAPH_NODE_TYPE_HOST; break;
    default: *type = CU_GRAPH_NODE_TYPE_EVENT_RECORD; break;
    }
  }
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult instantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
  if (!phGraphExec)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  struct sim_graph_exec *x = NULL;
  if (sim_handle_kind(hGraph) != SIM_KIND_GRAPH)
    r = CUDA_ERROR_INVALID_VALUE;
  else {
    struct sim_graph *g = (struct sim_graph *)hGraph;
    x = calloc(1, sizeof *x);
    if (x && g->count)
      x->ops = malloc(g->count * sizeof *x->ops);
    if (!x || (g->count && !x->ops) || sim_handle_add(x, SIM_KIND_GRAPH_EXEC) != 0) {
      if (x)
        free(x->ops);
      free(x);
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      for (size_t i = 0; i < g->count; i++)
        x->ops[i] = g->nodes[i]->op;
      x->count = g->count;
      *phGraphExec = (CUgraphExec)x;
    }
  }
  sim_unlock();
  return r;
}

/** Instantiates a graph (flags accepted and ignored). */
SIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
  return instantiate(phGraphExec, hGraph);
}

/** Instantiates a graph with a parameter block. */
SIM_API CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
  CUresult r = instantiate(phGraphExec, hGraph);
  if (instantiateParams) {
    instantiateParams->hErrNode_out = NULL;
    instantiateParams->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
  }
  return r;
}

/** cuGraphInstantiateWithParams through the per-thread default stream entry point. */
SIM_API CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
  return cuGraphInstantiateWithParams(phGraphExec, hGraph, instantiateParams);
}

/** Destroys an instantiated graph. */
SIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
  sim_lock();
  int ok = sim_handle_kind(hGraphExec) == SIM_KIND_GRAPH_EXEC;
  if (ok)
    sim_handle_remove(hGraphExec);
  sim_unlock();
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  free(((struct sim_graph_exec *)hGraphExec)->ops);
  free(hGraphExec);
  return CUDA_SUCCESS;
}

static CUresult graph_launch(CUgraphExec hGraphExec, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  sim_spin_us(sim_knobs.launch_us);
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && sim_handle_kind(hGraphExec) != SIM_KIND_GRAPH_EXEC)
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) {
    struct sim_graph_exec *x = (struct sim_graph_exec *)hGraphExec;
    for (size_t i = 0; i < x->count && r == CUDA_SUCCESS; i++) {
      const struct sim_op *op = &x->ops[i];
      if (op->kind == SIM_OP_EVENT && sim_handle_kind(op->event) != SIM_KIND_EVENT)
        continue; /* the event was destroyed since */
      r = sim_submit(s, op, NULL);
    }
  }
  sim_unlock();
  return r;
}

/** Enqueues the graph's operations on the stream, in order. */
SIM_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
  return graph_launch(hGraphExec, hStream, 0);
}

/** cuGraphLaunch through the per-thread default stream entry point. */
SIM_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return graph_launch(hGraphExec, hStream, 1);
}

static CUresult graph_upload(CUgraphExec hGraphExec, CUstream hStream, int per_thread)
{
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && sim_handle_kind(hGraphExec) != SIM_KIND_GRAPH_EXEC)
    r = CUDA_ERROR_INVALID_VALUE;
  sim_unlock();
  return r;
}

/** Uploads a graph (nothing to do in the simulator). */
SIM_API CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
  return graph_upload(hGraphExec, hStream, 0);
}

/** cuGraphUpload through the per-thread default stream entry point. */
SIM_API CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
  return graph_upload(hGraphExec, hStream, 1);
}
