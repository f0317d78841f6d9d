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
    if (g->nodes[i]->child)
      sim_graph_free(g->nodes[i]->child);
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
  n->child = NULL;
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
  if (ok && ((struct sim_graph_node *)hNode)->child) {
    *type = CU_GRAPH_NODE_TYPE_GRAPH;
  } else if (ok) {
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

/* Operations a graph replays, child graphs included (lock held). */
static size_t flat_count(const struct sim_graph *g)
{
  size_t n = 0;
  for (size_t i = 0; i < g->count; i++)
    n += g->nodes[i]->child ? flat_count(g->nodes[i]->child) : 1;
  return n;
}

/* Copies the operations of g (child graphs flattened) to ops and the nodes they came
 * from to nodes; returns how many. */
static size_t flatten(const struct sim_graph *g, struct sim_op *ops, const void **nodes)
{
  size_t n = 0;
  for (size_t i = 0; i < g->count; i++) {
    if (g->nodes[i]->child) {
      n += flatten(g->nodes[i]->child, ops + n, nodes + n);
    } else {
      nodes[n] = g->nodes[i];
      ops[n++] = g->nodes[i]->op;
    }
  }
  return n;
}

/* The operations of graph handle hGraph, flattened, in a fresh array (lock held). */
static CUresult flat_ops(CUgraph hGraph, struct sim_op **ops, const void ***nodes, size_t *count)
{
  if (sim_handle_kind(hGraph) != SIM_KIND_GRAPH)
    return CUDA_ERROR_INVALID_VALUE;
  const struct sim_graph *g = (const struct sim_graph *)hGraph;
  *count = flat_count(g);
  *ops = *count ? malloc(*count * sizeof **ops) : NULL;
  *nodes = *count ? malloc(*count * sizeof **nodes) : NULL;
  if (*count && (!*ops || !*nodes)) {
    free(*ops), free(*nodes);
    *ops = NULL, *nodes = NULL;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  flatten(g, *ops, *nodes);
  return CUDA_SUCCESS;
}

static CUresult instantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
  if (!phGraphExec)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_graph_exec *x = calloc(1, sizeof *x);
  CUresult r = x ? flat_ops(hGraph, &x->ops, &x->nodes, &x->count) : CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS && sim_handle_add(x, SIM_KIND_GRAPH_EXEC) != 0)
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    *phGraphExec = (CUgraphExec)x;
  } else if (x) {
    free(x->ops);
    free(x->nodes);
    free(x);
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

/** Destroys an instantiated graph. Refused as a potentially unsafe call while a capture
 * forbids those (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture invalidated; the exec
 * stays valid): the simulator's choice, made so that a destroy of a live exec can fail. */
SIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
  sim_lock();
  int ok = sim_handle_kind(hGraphExec) == SIM_KIND_GRAPH_EXEC;
  if (ok && sim_capture_forbids_unsafe_call()) {
    sim_unlock();
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  if (ok)
    sim_handle_remove(hGraphExec);
  sim_unlock();
  if (!ok)
    return CUDA_ERROR_INVALID_VALUE;
  free(((struct sim_graph_exec *)hGraphExec)->ops);
  free(((struct sim_graph_exec *)hGraphExec)->nodes);
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

/* A copy of graph g with its own node handles (lock held); NULL when out of memory. */
static struct sim_graph *graph_clone(const struct sim_graph *g)
{
  struct sim_graph *c = sim_graph_new();
  if (!c)
    return NULL;
  for (size_t i = 0; i < g->count; i++) {
    struct sim_graph *child = NULL;
    if (g->nodes[i]->child && !(child = graph_clone(g->nodes[i]->child)))
      goto fail;
    if (sim_graph_append(c, &g->nodes[i]->op) != 0) {
      if (child)
        sim_graph_free(child);
      goto fail;
    }
    c->nodes[c->count - 1]->child = child;
  }
  if (sim_graph_register(c) == 0)
    return c;
fail:
  sim_graph_free(c);
  return NULL;
}

/** Adds a node running a copy of childGraph (appended: sim graphs are sequences,
 * so the dependencies only have to be nodes of hGraph). */
SIM_API CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                          const CUgraphNode *dependencies, size_t numDependencies,
                                          CUgraph childGraph)
{
  if (!phGraphNode || (numDependencies && !dependencies))
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (sim_handle_kind(hGraph) != SIM_KIND_GRAPH || sim_handle_kind(childGraph) != SIM_KIND_GRAPH ||
      hGraph == childGraph)
    r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; r == CUDA_SUCCESS && i < numDependencies; i++)
    if (sim_handle_kind(dependencies[i]) != SIM_KIND_GRAPH_NODE)
      r = CUDA_ERROR_INVALID_VALUE;
  struct sim_graph *g = (struct sim_graph *)hGraph, *copy = NULL;
  struct sim_op none = {.kind = SIM_OP_EVENT};
  if (r == CUDA_SUCCESS && !(copy = graph_clone((const struct sim_graph *)childGraph)))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS && sim_graph_append(g, &none) != 0)
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS && sim_handle_add(g->nodes[g->count - 1], SIM_KIND_GRAPH_NODE) != 0) {
    free(g->nodes[--g->count]);
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    g->nodes[g->count - 1]->child = copy;
    *phGraphNode = (CUgraphNode)g->nodes[g->count - 1];
  } else if (copy) {
    sim_graph_free(copy);
  }
  sim_unlock();
  return r;
}

/** The graph a child graph node runs (owned by the node). */
SIM_API CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
  if (!phGraph)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  const struct sim_graph_node *n = (const struct sim_graph_node *)hNode;
  int ok = sim_handle_kind(hNode) == SIM_KIND_GRAPH_NODE && n->child;
  if (ok)
    *phGraph = (CUgraph)n->child;
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** A kernel node's parameters (CUDA 12 layout): the function it launches is given
 * back as it was launched (func, or kern for a CUkernel handle), the geometry and
 * arguments are not kept by the simulator (zero). */
SIM_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
  if (!nodeParams)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  const struct sim_graph_node *n = (const struct sim_graph_node *)hNode;
  int ok = sim_handle_kind(hNode) == SIM_KIND_GRAPH_NODE && !n->child &&
           n->op.kind == SIM_OP_KERNEL;
  if (ok) {
    memset(nodeParams, 0, sizeof *nodeParams);
    if (sim_handle_kind(n->op.func) == SIM_KIND_KERNEL)
      nodeParams->kern = (CUkernel)n->op.func;
    else
      nodeParams->func = (CUfunction)n->op.func;
    nodeParams->gridDimX = n->op.grid[0], nodeParams->gridDimY = n->op.grid[1];
    nodeParams->gridDimZ = n->op.grid[2];
    nodeParams->blockDimX = n->op.block[0], nodeParams->blockDimY = n->op.block[1];
    nodeParams->blockDimZ = n->op.block[2];
    nodeParams->sharedMemBytes = n->op.shared_mem;
  }
  sim_unlock();
  return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/** Updates an exec from a graph of the same shape: the same number of nodes of the
 * same kinds (after flattening child graphs); else nothing changes and
 * resultInfo says CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED. */
SIM_API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                      CUgraphExecUpdateResultInfo *resultInfo)
{
  if (!resultInfo)
    return CUDA_ERROR_INVALID_VALUE;
  resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR;
  resultInfo->errorNode = NULL;
  resultInfo->errorFromNode = NULL;
  sim_lock();
  struct sim_op *ops = NULL;
  const void **nodes = NULL;
  size_t count = 0;
  CUresult r = sim_handle_kind(hGraphExec) == SIM_KIND_GRAPH_EXEC
                   ? flat_ops(hGraph, &ops, &nodes, &count)
                   : CUDA_ERROR_INVALID_VALUE;
  struct sim_graph_exec *x = (struct sim_graph_exec *)hGraphExec;
  if (r == CUDA_SUCCESS) {
    int same = count == x->count;
    for (size_t i = 0; same && i < count; i++)
      same = ops[i].kind == x->ops[i].kind;
    if (same) {
      free(x->ops);
      free(x->nodes);
      x->ops = ops, ops = NULL;
      x->nodes = nodes, nodes = NULL;
      resultInfo->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    } else {
      resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
      r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
  }
  free(ops);
  free(nodes);
  sim_unlock();
  return r;
}
