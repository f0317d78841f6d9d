/*
 * What a CUDA graph runs, recorded when it is instantiated: the source graph is
 * walked with the tracer's own driver table (cuGraphGetNodes, cuGraphNodeGetType,
 * cuGraphKernelNodeGetParams, cuGraphChildGraphNodeGetGraph; never traced), kernel
 * nodes named like launches (cuFuncGetName / cuKernelGetName, cached per handle).
 * The app's graphs are only read. Bounded: at most WALK_MAX_NODES nodes, child
 * graphs WALK_MAX_DEPTH deep, WALK_MAX_NAMES distinct kernels; a failing query ends
 * the walk. What was not walked is said by GRAPH.partial (CT_GRAPH_PARTIAL_*).
 * The walk's own time is a TRACER record "graph_walk" (amount = nodes visited).
 */
#include <stdlib.h>
#include <string.h>

#include "driver_internal.h"
#include "../hooks/map.h"

#define WALK_MAX_NODES 100000
#define WALK_MAX_DEPTH 16
#define WALK_MAX_NAMES 4096
#define WALK_INDEX_SLOTS (2 * WALK_MAX_NAMES) /* a power of two, at most half full */

/* exec handle -> (v1 = its current id, v2 = the version of its latest inventory); the
 * slot is removed when the exec is destroyed (ctpd_graph_forget_id), so the map holds
 * the execs alive, not every address ever instantiated. Read with ctph_map_get. */
static struct ctph_map execs = CTPH_MAP_INIT(6);
static uint64_t last_exec_id;

/* One distinct kernel of a walk. */
struct name_count {
  uint64_t name, count;
  uint64_t attr, block_threads, dyn_smem; /* of the first node with that name (1.6) */
};

/* What a walk found so far. */
struct walk {
  struct ct_graph g;
  uint64_t visited;          /* nodes looked at, child graph nodes included */
  struct name_count *names;  /* in first-seen order (allocated at the first kernel) */
  uint32_t *index;           /* open addressing by name: 1 + position in names */
  unsigned nnames;
  int device;                /* the current context's device (-1 unknown) */
  struct ctpd_graph_node *kept; /* the kernel nodes, for in-place edits (graph_edit.c) */
  size_t nkept, kept_cap;
  uint32_t kernels_seen;     /* kernel nodes so far (their walk order) */
  struct ctpd_child_range *children; /* the child graph nodes' kernels (graph_edit.c) */
  size_t nchildren, children_cap;   /* (children_cap SIZE_MAX: out of memory) */
};

/* An exec's id and the version of its current inventory (0, 0: none). */
struct exec_ids {
  uint64_t id, version;
};

/* exec's ids; fresh: the exec gets a new id and no inventory version (the handle was
 * just instantiated, possibly at the address of a destroyed exec). Zeros for NULL or
 * when memory runs out. Stores go through ctph_map_store: a store into a slot found
 * before a concurrent growth would be lost. */
static struct exec_ids exec_ids(CUgraphExec exec, int fresh) {
  struct exec_ids out = {0, 0};
  if (!exec)
    return out;
  if (!fresh && ctph_map_get(&execs, (uintptr_t)exec, 0, &out.id, &out.version))
    return out;
  uint64_t id = __atomic_add_fetch(&last_exec_id, 1, __ATOMIC_RELAXED), none = 0;
  int inserted = 0;
  if (!ctph_map_insert(&execs, (uintptr_t)exec, 0, id, 0, &inserted))
    return out;
  if (inserted || (fresh && ctph_map_store(&execs, (uintptr_t)exec, 0, &id, &none) == 0))
    return (struct exec_ids){id, 0};
  /* two threads meeting an unknown exec at once both use the id that was kept */
  if (!fresh && ctph_map_get(&execs, (uintptr_t)exec, 0, &out.id, &out.version))
    return out;
  return (struct exec_ids){0, 0};
}

uint64_t ctph_graph_exec_id(CUgraphExec exec) {
  return exec_ids(exec, 0).id;
}

uint64_t ctph_graph_exec_known_id(CUgraphExec exec) {
  uint64_t id = 0;
  return exec && ctph_map_get(&execs, (uintptr_t)exec, 0, &id, NULL) ? id : 0;
}

void ctpd_graph_set_version(CUgraphExec exec, uint64_t version) {
  if (exec)
    (void)ctph_map_store(&execs, (uintptr_t)exec, 0, NULL, &version);
}

void ctpd_graph_forget_id(CUgraphExec exec, uint64_t id) {
  if (id && exec)
    (void)ctph_map_remove_if(&execs, (uintptr_t)exec, 0, id);
}

/* Counts one kernel node. */
static void count_name(struct walk *w, const struct ctpd_graph_node *k) {
  uint64_t name = k->name;
  if (!w->index) {
    w->index = calloc(WALK_INDEX_SLOTS, sizeof *w->index);
    w->names = malloc(WALK_MAX_NAMES * sizeof *w->names);
  }
  if (!w->index || !w->names) {
    w->g.partial |= CT_GRAPH_PARTIAL_NAMES;
    return;
  }
  unsigned i = (unsigned)((name * 0x9E3779B97F4A7C15ull) >> 40) & (WALK_INDEX_SLOTS - 1);
  for (;; i = (i + 1) & (WALK_INDEX_SLOTS - 1)) {
    uint32_t at = w->index[i];
    if (!at)
      break;
    if (w->names[at - 1].name == name) {
      w->names[at - 1].count++;
      return;
    }
  }
  if (w->nnames == WALK_MAX_NAMES) {
    w->g.partial |= CT_GRAPH_PARTIAL_NAMES;
    return;
  }
  w->names[w->nnames] = (struct name_count){name, 1, k->attr, k->block_threads, k->dyn_smem};
  w->index[i] = ++w->nnames;
}

/* The name, function attributes and shape of a kernel node (zeros when they cannot be
 * had: the walk goes on); the function's KERNEL_ATTR and the shape's OCCUPANCY records
 * at their first sight, as for a launch. */
static struct ctpd_graph_node kernel_node(struct walk *w, CUgraphNode node) {
  struct ctpd_graph_node k = {node, 0, 0, 0, 0, w->kernels_seen++};
  CUDA_KERNEL_NODE_PARAMS_v2 p;
  memset(&p, 0, sizeof p);
  if (!ctph_drv.GraphKernelNodeGetParams ||
      ctph_drv.GraphKernelNodeGetParams(node, &p) != CUDA_SUCCESS) {
    w->g.partial |= CT_GRAPH_PARTIAL_FAILED;
    return k;
  }
  CUfunction f = p.func ? p.func : (CUfunction)p.kern;
  k.name = ctpd_function_name_id(f);
  k.block_threads = p.blockDimX * p.blockDimY * p.blockDimZ;
  k.dyn_smem = p.sharedMemBytes;
  k.attr = f ? ctph_launch_attr(f, 0, k.name, k.block_threads, p.sharedMemBytes,
                                w->device)
             : 0;
  return k;
}

/* The growable array `items` (*n elements of `size` bytes, room for *cap; doubling from
 * `first`) with room for one more, or NULL when memory ran out now or before: the array
 * is then freed for good (*cap SIZE_MAX, *n 0). */
static void *room_for_one(void *items, size_t *n, size_t *cap, size_t size, size_t first) {
  if (*cap == SIZE_MAX || *n < *cap)
    return items;
  size_t grown_cap = *cap ? 2 * *cap : first;
  void *grown = realloc(items, grown_cap * size);
  if (grown) {
    *cap = grown_cap;
    return grown;
  }
  free(items);
  *n = 0, *cap = SIZE_MAX;
  return NULL;
}

/* Keeps a kernel node for graph_edit.c (when memory runs out, the exec's later edits
 * are not seen: its inventory stays that of the walk) and counts it. */
static void keep_node(struct walk *w, const struct ctpd_graph_node *k) {
  w->kept = room_for_one(w->kept, &w->nkept, &w->kept_cap, sizeof *k, 64);
  if (w->kept)
    w->kept[w->nkept++] = *k;
  count_name(w, k);
}

/* Notes that child graph node `child` holds the kernel nodes of walk order [first,
 * kernels_seen) (when memory runs out, its later changes are not followed). */
static void note_child(struct walk *w, CUgraphNode child, uint32_t first) {
  w->children =
      room_for_one(w->children, &w->nchildren, &w->children_cap, sizeof *w->children, 8);
  if (w->children)
    w->children[w->nchildren++] =
        (struct ctpd_child_range){child, first, w->kernels_seen - first};
}

/* Counts the nodes of graph g and of its child graphs. Returns 0 to go on, -1 when
 * the walk must end (a failed query or the node bound). */
static int walk_graph(struct walk *w, CUgraph g, unsigned depth) {
  if (depth >= WALK_MAX_DEPTH) {
    w->g.partial |= CT_GRAPH_PARTIAL_DEPTH;
    return 0;
  }
  size_t n = 0;
  if (ctph_drv.GraphGetNodes(g, NULL, &n) != CUDA_SUCCESS) {
    w->g.partial |= CT_GRAPH_PARTIAL_FAILED;
    return -1;
  }
  int stop = 0;
  if (n > WALK_MAX_NODES - w->visited) {
    n = WALK_MAX_NODES - w->visited;
    w->g.partial |= CT_GRAPH_PARTIAL_LIMIT;
    stop = -1;
  }
  if (!n)
    return stop;
  CUgraphNode *nodes = malloc(n * sizeof *nodes);
  size_t got = n;
  if (!nodes || ctph_drv.GraphGetNodes(g, nodes, &got) != CUDA_SUCCESS) {
    free(nodes);
    w->g.partial |= CT_GRAPH_PARTIAL_FAILED;
    return -1;
  }
  if (got < n) /* the app changed the graph in between */
    n = got;
  for (size_t i = 0; i < n && !stop; i++) {
    CUgraphNodeType type;
    CUgraph child;
    w->visited++;
    if (ctph_drv.GraphNodeGetType(nodes[i], &type) != CUDA_SUCCESS) {
      w->g.partial |= CT_GRAPH_PARTIAL_FAILED;
      stop = -1;
      break;
    }
    if (type == CU_GRAPH_NODE_TYPE_GRAPH) {
      if (!ctph_drv.GraphChildGraphNodeGetGraph ||
          ctph_drv.GraphChildGraphNodeGetGraph(nodes[i], &child) != CUDA_SUCCESS) {
        w->g.partial |= CT_GRAPH_PARTIAL_FAILED;
        stop = -1;
      } else {
        uint32_t first = w->kernels_seen;
        stop = walk_graph(w, child, depth + 1);
        note_child(w, nodes[i], first);
      }
      continue;
    }
    w->g.nodes++;
    switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      w->g.kernels++;
      {
        struct ctpd_graph_node k = kernel_node(w, nodes[i]);
        keep_node(w, &k);
      }
      break;
    case CU_GRAPH_NODE_TYPE_MEMCPY: w->g.memcpys++; break;
    case CU_GRAPH_NODE_TYPE_MEMSET: w->g.memsets++; break;
    default: w->g.others++; break;
    }
  }
  free(nodes);
  return stop;
}

/* A 64-bit mix (splitmix64's finaliser). */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* What w counted, as a number: equal for equal inventories (node counts, partial and
 * the distinct kernels with their counts, attributes and shapes, in any order). */
static uint64_t fingerprint(const struct walk *w, const struct ct_graph *g) {
  uint64_t h = mix64(g->nodes ^ mix64(g->kernels ^ mix64(g->memcpys ^ mix64(
                   g->memsets ^ mix64(g->others ^ mix64(g->partial + 1))))));
  for (unsigned i = 0; i < w->nnames; i++) {
    const struct name_count *n = &w->names[i];
    h += mix64(n->name ^ mix64(n->count ^ mix64(n->attr ^ mix64(n->block_threads ^
                                                                 mix64(n->dyn_smem)))));
  }
  return h;
}

/* Writes the GRAPH record g and one GRAPH_KERNEL record per distinct kernel that w
 * counted. */
static void emit_counted(const struct walk *w, const struct ct_graph *g) {
  ct_record r;
  r.kind = CT_KIND_GRAPH;
  r.u.graph = *g;
  ctp_emit(&r);
  for (unsigned i = 0; i < w->nnames; i++) {
    r.kind = CT_KIND_GRAPH_KERNEL;
    r.u.graph_kernel = (struct ct_graph_kernel){
        .exec = g->exec, .name = w->names[i].name, .count = w->names[i].count,
        .attr = w->names[i].attr, .device = (uint64_t)(w->device < 0 ? 0 : w->device),
        .block_threads = w->names[i].block_threads, .dyn_smem = w->names[i].dyn_smem,
        .version = g->version};
    ctp_emit(&r);
  }
}

uint64_t ctpd_graph_emit(const struct ct_graph *g, const struct ctpd_graph_node *nodes, size_t n,
                         int device) {
  struct walk w;
  memset(&w, 0, sizeof w);
  w.g = *g;
  w.device = device;
  for (size_t i = 0; i < n; i++)
    count_name(&w, &nodes[i]);
  emit_counted(&w, &w.g);
  uint64_t print = fingerprint(&w, &w.g);
  free(w.names);
  free(w.index);
  return print;
}

void ctph_graph_inventory(uint64_t corr, CUgraphExec exec, CUgraph graph, int fresh) {
  int saved = errno;
  uint64_t begin_ns = ctp_now_ns();
  struct walk w;
  memset(&w, 0, sizeof w);
  struct exec_ids ids = exec_ids(exec, fresh);
  uint64_t current = ids.version;
  w.g.corr = corr;
  w.g.exec = ids.id;
  w.device = ctph_current_device(NULL);
  if (!ctph_driver_load() || !ctph_drv.GraphGetNodes || !ctph_drv.GraphNodeGetType)
    w.g.partial |= CT_GRAPH_PARTIAL_FAILED;
  else
    walk_graph(&w, graph, 0);
  /* an update to what the exec already runs (a loop updating its exec at every step
   * with an equal graph) keeps the version: its launches stay one group */
  uint64_t print = fingerprint(&w, &w.g);
  w.g.version = current && ctpd_graph_kept_same(exec, current, print) ? current : current + 1;
  emit_counted(&w, &w.g);
  free(w.names);
  free(w.index);
  /* the exec's kernel nodes, for its in-place edits (ownership passes) */
  if (w.children_cap == SIZE_MAX)
    w.children = NULL;
  ctpd_graph_keep(exec, &w.g, w.kept, w.nkept, w.device, print, w.children, w.nchildren);
  if (w.g.exec)
    ctpd_graph_set_version(exec, w.g.version);
  /* the walk runs on the app's thread after its call returned: its cost, labelled */
  ctp_emit_tracer("graph_walk", begin_ns, ctp_now_ns(), w.visited);
  errno = saved;
}

int ctpd_graph_walk_kernels(CUgraph g, int device, struct ctpd_graph_node **nodes, size_t *n) {
  struct walk w;
  memset(&w, 0, sizeof w);
  w.device = device;
  if (!ctph_driver_load() || !ctph_drv.GraphGetNodes || !ctph_drv.GraphNodeGetType)
    w.g.partial |= CT_GRAPH_PARTIAL_FAILED;
  else
    walk_graph(&w, g, 0);
  free(w.names);
  free(w.index);
  free(w.children);
  if (w.g.partial || w.kept_cap == SIZE_MAX || w.nkept != w.kernels_seen) {
    free(w.kept);
    *nodes = NULL, *n = 0;
    return -1;
  }
  *nodes = w.kept, *n = w.nkept;
  return 0;
}

void ctph_graph_emit_launch(uint64_t corr, CUgraphExec exec) {
  ct_record r;
  struct exec_ids ids = exec_ids(exec, 0);
  r.kind = CT_KIND_GRAPH_LAUNCH;
  r.u.graph_launch =
      (struct ct_graph_launch){.corr = corr, .exec = ids.id, .version = ids.version};
  ctp_emit(&r);
}
