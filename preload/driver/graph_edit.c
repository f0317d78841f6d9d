/*
 * Graph execs edited in place: an exec's inventory (graph_walk.c) is that of the
 * graph it was instantiated from, but cuGraphExecKernelNodeSetParams and
 * cuGraphExecNodeSetParams (and the runtime's forms, which reach them) can give one
 * of its kernel nodes another function without a new instantiation. The kernel nodes
 * of each walked exec are kept here, sorted by node handle; an edit that changes a
 * node's function updates them and writes the exec's whole inventory again (GRAPH +
 * GRAPH_KERNEL, same exec id, the edit's corr), so the tools, which keep an exec's
 * latest inventory, name what it launches now. What is kept for an exec handle lives
 * until the handle is instantiated or updated again (execs are not tracked to their
 * destruction): 40 bytes per kernel node.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver_internal.h"

#define KEPT_BUCKETS 1024 /* a power of two */

/* The kernel nodes of one exec's latest inventory. */
struct kept_exec {
  struct kept_exec *next;
  CUgraphExec exec;
  struct ct_graph g; /* the inventory as last written (corr replaced at each write) */
  struct ctpd_graph_node *nodes; /* sorted by node handle */
  size_t n;
  int device;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept_exec *kept[KEPT_BUCKETS];

static unsigned bucket_of(CUgraphExec exec) {
  return (unsigned)(((uintptr_t)exec * 0x9E3779B97F4A7C15ull) >> 40) & (KEPT_BUCKETS - 1);
}

static int by_node(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const struct ctpd_graph_node *)a)->node;
  uintptr_t y = (uintptr_t)((const struct ctpd_graph_node *)b)->node;
  return x < y ? -1 : x > y;
}

/* The kept exec of handle exec (lock held), or NULL. */
static struct kept_exec *find_exec(CUgraphExec exec) {
  for (struct kept_exec *k = kept[bucket_of(exec)]; k; k = k->next)
    if (k->exec == exec)
      return k;
  return NULL;
}

void ctpd_graph_keep(CUgraphExec exec, const struct ct_graph *g, struct ctpd_graph_node *nodes,
                     size_t n, int device) {
  if (!exec) {
    free(nodes);
    return;
  }
  if (n > 1)
    qsort(nodes, n, sizeof *nodes, by_node);
  pthread_mutex_lock(&kept_lock);
  struct kept_exec *k = find_exec(exec);
  if (!k && (k = calloc(1, sizeof *k))) {
    unsigned b = bucket_of(exec);
    k->exec = exec;
    k->next = kept[b];
    kept[b] = k;
  }
  if (k) {
    free(k->nodes);
    k->g = *g;
    k->nodes = nodes, nodes = NULL;
    k->n = n;
    k->device = device;
  }
  pthread_mutex_unlock(&kept_lock);
  free(nodes); /* out of memory: the exec's edits go unseen */
}

void ctph_graph_edit_kernel(uint64_t corr, CUgraphExec exec, CUgraphNode node, CUfunction f,
                            uint64_t block_threads, uint64_t dyn_smem) {
  if (!exec || !node || !f)
    return;
  int saved = errno;
  uint64_t name = ctpd_function_name_id(f);
  pthread_mutex_lock(&kept_lock);
  struct kept_exec *k = find_exec(exec);
  struct ctpd_graph_node key = {.node = node};
  struct ctpd_graph_node *at = k ? bsearch(&key, k->nodes, k->n, sizeof key, by_node) : NULL;
  if (at) {
    int changed = at->name != name;
    at->block_threads = block_threads;
    at->dyn_smem = dyn_smem;
    if (changed) {
      at->name = name;
      at->attr = ctph_launch_attr(f, 0, name, (unsigned)block_threads, dyn_smem, k->device);
      k->g.corr = corr;
      ctpd_graph_emit(&k->g, k->nodes, k->n, k->device);
    }
  }
  pthread_mutex_unlock(&kept_lock);
  errno = saved;
}
