/*
 * Graph execs edited in place: an exec's inventory (graph_walk.c) is that of the
 * graph it was instantiated from, but cuGraphExecKernelNodeSetParams and
 * cuGraphExecNodeSetParams (and the runtime's forms, which reach them) can give one
 * of its kernel nodes another function without a new instantiation. The kernel nodes
 * of each walked exec are kept here, sorted by node handle; an edit that changes a
 * node's function updates them and writes the exec's whole inventory again (GRAPH +
 * GRAPH_KERNEL, same exec id, the next version, the edit's corr), and the launches
 * that follow carry that version (GRAPH_LAUNCH.version), so the tools name what each
 * launch ran. cuGraphExecChildGraphNodeSetParams (and the runtime's form) gives a
 * child graph node another graph of the same topology: the kernel nodes the walk found
 * inside that child (a range of its walk order, kept per child graph node) take the new
 * graph's functions in order (ctph_graph_edit_child). What is kept for an exec handle
 * (40 bytes per kernel node, 16 per child graph node) lives until the handle is
 * instantiated or updated again, or destroyed (cuGraphExecDestroy,
 * cudaGraphExecDestroy answering success: ctph_graph_forget).
 *
 * A runtime edit (cudaGraphExecKernelNodeSetParams, cudaGraphExecNodeSetParams)
 * reaches the driver's form from libcudart, whose calls the driver wrapper only
 * forwards: the runtime wrapper leaves its corr in a thread-local for the duration of
 * the call (ctph_graph_edit_corr_swap), so that the inventory the driver wrapper
 * writes carries the runtime call's corr.
 *
 * At the final flush, a TRACER record "graph_kept" (amount: the bytes still kept here)
 * says what execs never destroyed left behind (written once anything was kept).
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
  uint64_t print;    /* its fingerprint (graph_walk.c) */
  struct ctpd_graph_node *nodes; /* sorted by node handle */
  size_t n;
  struct ctpd_child_range *children; /* its child graph nodes' kernels (walk order) */
  size_t nchildren;
  int device;
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept_exec *kept[KEPT_BUCKETS];
static __thread uint64_t runtime_edit_corr; /* corr of this thread's runtime edit call */
static size_t kept_bytes;  /* kept_exec structures and their nodes (under kept_lock) */
static int at_exit_registered;

/* The bytes kept for exec k's nodes and child ranges. */
static size_t bytes_of_nodes(const struct kept_exec *k) {
  return k->n * sizeof *k->nodes + k->nchildren * sizeof *k->children;
}

/* At the final flush: what is still kept. */
static void kept_at_exit(void) {
  pthread_mutex_lock(&kept_lock);
  size_t bytes = kept_bytes;
  pthread_mutex_unlock(&kept_lock);
  uint64_t now = ctp_now_ns();
  ctp_emit_tracer("graph_kept", now, now, bytes);
}

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
                     size_t n, int device, uint64_t print, struct ctpd_child_range *children,
                     size_t nchildren) {
  if (!exec) {
    free(nodes);
    free(children);
    return;
  }
  if (n > 1)
    qsort(nodes, n, sizeof *nodes, by_node);
  if (!__atomic_load_n(&at_exit_registered, __ATOMIC_RELAXED) &&
      !__atomic_exchange_n(&at_exit_registered, 1, __ATOMIC_ACQ_REL))
    ctp_at_final_flush(kept_at_exit);
  pthread_mutex_lock(&kept_lock);
  struct kept_exec *k = find_exec(exec);
  if (!k && (k = calloc(1, sizeof *k))) {
    unsigned b = bucket_of(exec);
    k->exec = exec;
    k->next = kept[b];
    kept[b] = k;
    kept_bytes += sizeof *k;
  }
  if (k) {
    kept_bytes -= bytes_of_nodes(k);
    free(k->nodes);
    free(k->children);
    k->children = children, children = NULL;
    k->nchildren = nchildren;
    k->g = *g;
    k->print = print;
    k->nodes = nodes, nodes = NULL;
    k->n = n;
    k->device = device;
    kept_bytes += bytes_of_nodes(k);
  }
  pthread_mutex_unlock(&kept_lock);
  free(nodes); /* out of memory: the exec's edits go unseen */
  free(children);
}

int ctpd_graph_kept_same(CUgraphExec exec, uint64_t version, uint64_t print) {
  pthread_mutex_lock(&kept_lock);
  const struct kept_exec *k = exec ? find_exec(exec) : NULL;
  int same = k && k->g.version == version && k->print == print;
  pthread_mutex_unlock(&kept_lock);
  return same;
}

void ctph_graph_forget(CUgraphExec exec, uint64_t id) {
  if (!exec)
    return;
  int saved = errno;
  pthread_mutex_lock(&kept_lock);
  struct kept_exec **at = &kept[bucket_of(exec)];
  while (*at && (*at)->exec != exec)
    at = &(*at)->next;
  struct kept_exec *k = *at;
  if (k && k->g.exec != id) /* a newer exec at that address: not the one destroyed */
    k = NULL;
  if (k) {
    *at = k->next;
    kept_bytes -= sizeof *k + bytes_of_nodes(k);
  }
  pthread_mutex_unlock(&kept_lock);
  if (k) {
    free(k->nodes);
    free(k->children);
    free(k);
  }
  ctpd_graph_forget_id(exec, id);
  errno = saved;
}

uint64_t ctph_graph_edit_corr_swap(uint64_t corr) {
  uint64_t was = runtime_edit_corr;
  runtime_edit_corr = corr;
  return was;
}

uint64_t ctpd_graph_runtime_edit_corr(void) {
  return runtime_edit_corr;
}

/* Writes exec k's inventory again as a new version made by the call corr (lock held). */
static void new_version(struct kept_exec *k, CUgraphExec exec, uint64_t corr) {
  k->g.corr = corr;
  k->g.version++;
  k->print = ctpd_graph_emit(&k->g, k->nodes, k->n, k->device);
  ctpd_graph_set_version(exec, k->g.version);
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
    at->block_threads = (uint32_t)block_threads;
    at->dyn_smem = (uint32_t)dyn_smem;
    if (changed) {
      at->name = name;
      at->attr = ctph_launch_attr(f, 0, name, (unsigned)block_threads, dyn_smem, k->device);
      new_version(k, exec, corr);
    }
  }
  pthread_mutex_unlock(&kept_lock);
  errno = saved;
}

void ctph_graph_edit_child(uint64_t corr, CUgraphExec exec, CUgraphNode node, CUgraph child) {
  if (!exec || !node || !child)
    return;
  int saved = errno;
  pthread_mutex_lock(&kept_lock);
  const struct kept_exec *known = find_exec(exec);
  int device = known ? known->device : -1;
  pthread_mutex_unlock(&kept_lock);
  struct ctpd_graph_node *fresh = NULL;
  size_t n = 0;
  /* the new child's kernels, walked without the lock (driver queries) */
  if (!known || ctpd_graph_walk_kernels(child, device, &fresh, &n) < 0) {
    errno = saved;
    return;
  }
  pthread_mutex_lock(&kept_lock);
  struct kept_exec *k = find_exec(exec);
  const struct ctpd_child_range *range = NULL;
  for (size_t i = 0; k && i < k->nchildren && !range; i++)
    if (k->children[i].child == node)
      range = &k->children[i];
  /* CUDA requires the new graph's topology and node order to be the child's: its j-th
   * kernel node replaces the child's j-th */
  if (range && range->count == n && !k->g.partial) {
    int changed = 0;
    for (size_t i = 0; i < k->n; i++) {
      struct ctpd_graph_node *at = &k->nodes[i];
      if (at->order < range->first || at->order - range->first >= range->count)
        continue;
      const struct ctpd_graph_node *now = &fresh[at->order - range->first];
      changed |= at->name != now->name;
      at->name = now->name, at->attr = now->attr;
      at->block_threads = now->block_threads, at->dyn_smem = now->dyn_smem;
    }
    if (changed)
      new_version(k, exec, corr);
  }
  pthread_mutex_unlock(&kept_lock);
  free(fresh);
  errno = saved;
}
