/*
 * Internal interface of the driver-level half of libtrace.so (preload/driver/).
 *
 *   dlsym_hook.c   exported dlsym / dlvsym: lookups by handle of wrapped names
 *                  return our wrappers; RTLD_NEXT / RTLD_DEFAULT pass straight
 *                  through (a tail jump, so glibc still sees the real caller)
 *   elf_symbol.c   finds libc's own dlsym / dlvsym without calling either
 *   procaddr.c     cuGetProcAddress / cuGetProcAddress_v2 and the wrapper table
 *                  keyed by (name, ABI version, per-thread flag)
 *   wrap_*.c       the cu* wrappers (launches, copies and sets, sync and capture)
 *   kernel_names.c cuFuncGetName / cuKernelGetName, cached per handle
 *   kernel_attrs.c kernel attributes and occupancy per handle and launch shape
 *   graph_walk.c   graph inventories at instantiation, exec ids (used by both halves)
 *   callers.c      who called a wrapper (the runtime and libcuda pass through)
 *   usage.c        "nothing_intercepted" at exit
 *
 * Built on preload/hooks/hooks_internal.h (spans, GPU timing, streams).
 */
#ifndef CUTRACE_PRELOAD_DRIVER_INTERNAL_H
#define CUTRACE_PRELOAD_DRIVER_INTERNAL_H

#include "../hooks/hooks_internal.h"

#define CTPD_HIDDEN CTP_HIDDEN

/* The real dlsym and dlvsym of libc (NULL until found). */
extern void *(*ctpd_real_dlsym)(void *, const char *) CTPD_HIDDEN;
extern void *(*ctpd_real_dlvsym)(void *, const char *, const char *) CTPD_HIDDEN;

/* Finds the real dlsym / dlvsym once; returns ctpd_real_dlsym. */
void *ctpd_resolve_real_dl(void) CTPD_HIDDEN;

/* The address of a default-version dynamic symbol of the loaded object whose path
 * contains `object` (e.g. "libc.so.6"), read from its ELF tables; NULL if absent. */
void *ctpd_elf_default_symbol(const char *object, const char *name) CTPD_HIDDEN;

/* 1 when addr lies in libtrace.so itself. */
int ctpd_in_self(const void *addr) CTPD_HIDDEN;

/* One wrapped driver entry point (driver.def). */
struct ctpd_entry {
  const char *symbol;    /* exported name, e.g. "cuMemcpyHtoD_v2_ptds" */
  const char *proc_name; /* cuGetProcAddress name, e.g. "cuMemcpyHtoD" */
  int per_thread, has_twin, min_version, max_version;
  void *wrapper;         /* forwards to *real_slot */
  void **real_slot;      /* the function the wrapper forwards to (set once) */
};

/* The driver.def table (wrap_*.c define the wrappers). */
extern const struct ctpd_entry ctpd_entries[] CTPD_HIDDEN;
extern const unsigned ctpd_entry_count CTPD_HIDDEN;

/* The wrapper to hand out for `real`, found as entry e: e's wrapper when its slot
 * is free or already holds real, else real itself (never a wrong forward). */
void *ctpd_wrap_entry(const struct ctpd_entry *e, void *real) CTPD_HIDDEN;

/* What a dlsym by handle of `name` that returned `real` should hand back. */
void *ctpd_wrap_symbol(const char *name, void *real) CTPD_HIDDEN;

/* 1 when a wrapper called from return address ra must only forward: the caller is
 * the CUDA runtime (whose own call is the span), libcuda itself or libtrace. */
int ctpd_caller_passes(const void *ra) CTPD_HIDDEN;

/* The string id of the kernel behind a CUfunction (or CUkernel), 0 if unknown. */
uint64_t ctpd_function_name_id(CUfunction f) CTPD_HIDDEN;

/* The block shape and dynamic shared memory set on f with cuFuncSetBlockShape /
 * cuFuncSetSharedSize (wrap_func_shape.c); 0 for what was never set. */
void ctpd_function_shape(CUfunction f, unsigned *bx, unsigned *by, unsigned *bz,
                         unsigned *shmem) CTPD_HIDDEN;

/* A kernel node of a walked graph (graph_walk.c): its handle, the string id of its
 * function, that function's KERNEL_ATTR id and the node's shape (format 1.6). */
struct ctpd_graph_node {
  CUgraphNode node;
  uint64_t name, attr;
  uint32_t block_threads, dyn_smem;
  uint32_t order; /* its place among the graph's kernel nodes in the walk's order */
};

/* The kernel nodes a child graph node of a walked graph holds (at any depth): those of
 * walk order [first, first + count) (graph_edit.c follows the child graph node given
 * another graph). */
struct ctpd_child_range {
  CUgraphNode child;
  uint32_t first, count;
};

/* Writes the inventory g (its corr, exec, counts, partial and version as given) with
 * one GRAPH_KERNEL record per distinct function among the n kernel nodes. Returns the
 * inventory's fingerprint (equal for equal inventories). */
uint64_t ctpd_graph_emit(const struct ct_graph *g, const struct ctpd_graph_node *nodes, size_t n,
                     int device) CTPD_HIDDEN;

/* Keeps the kernel nodes (malloc'd, ownership passes; NULL for none) of the inventory
 * g (fingerprint print) just written for exec, replacing what was kept for that
 * handle: its in-place edits (ctph_graph_edit_kernel) are applied to them. */
void ctpd_graph_keep(CUgraphExec exec, const struct ct_graph *g, struct ctpd_graph_node *nodes,
                     size_t n, int device, uint64_t print, struct ctpd_child_range *children,
                     size_t nchildren) CTPD_HIDDEN;

/* The kernel nodes of graph g (child graphs walked into), in the walk's order, as a walk
 * keeps them (malloc'd into *nodes, ownership passes; the functions' KERNEL_ATTR and
 * OCCUPANCY records written at their first sight). Returns 0, or -1 when the walk was
 * partial or memory ran out (*nodes NULL). */
int ctpd_graph_walk_kernels(CUgraph g, int device, struct ctpd_graph_node **nodes, size_t *n)
    CTPD_HIDDEN;

/* 1 when the inventory kept for exec is version `version` with fingerprint print. */
int ctpd_graph_kept_same(CUgraphExec exec, uint64_t version, uint64_t print) CTPD_HIDDEN;

/* Sets the inventory version the next launches of exec carry (graph_walk.c's map). */
void ctpd_graph_set_version(CUgraphExec exec, uint64_t version) CTPD_HIDDEN;

/* Removes exec from graph_walk.c's map when its id is still `id` (the exec was
 * destroyed; the handle's next instantiation gives it a new id). */
void ctpd_graph_forget_id(CUgraphExec exec, uint64_t id) CTPD_HIDDEN;

/* The corr of the runtime edit call open on this thread (0: none): the inventory a
 * runtime edit's driver call leads to carries it. */
uint64_t ctpd_graph_runtime_edit_corr(void) CTPD_HIDDEN;

/* Counts a traced driver-level call (for "nothing_intercepted"). */
extern unsigned long ctpd_calls_seen CTPD_HIDDEN;
static inline void ctpd_note_call(void) {
  __atomic_store_n(&ctpd_calls_seen, 1, __ATOMIC_RELAXED);
}

/* Registers the exit check once (called from the first cuGetProcAddress / dlsym). */
void ctpd_usage_init(void) CTPD_HIDDEN;

/* The next definition of a driver entry point when dlsym(RTLD_NEXT) has none:
 * libcuda.so.1 loaded RTLD_LOCAL (by the runtime or a launcher) while the app
 * reached our exported wrapper by RTLD_DEFAULT. NULL when libcuda is not loaded. */
void *ctpd_next_in_libcuda(enum ctph_id id) CTPD_HIDDEN;

/* The real function behind a hooks.def id (dlsym RTLD_NEXT, cached). */
static inline void *ctpd_next(enum ctph_id id) {
  void *p = __atomic_load_n(&ctph_real_table[id], __ATOMIC_ACQUIRE);
  if (CTP_LIKELY(p))
    return p;
  p = ctph_real_resolve(id);
  return p ? p : ctpd_next_in_libcuda(id);
}

#endif
