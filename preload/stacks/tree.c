/*
 * The process-wide call-stack tree: node (parent, pc) -> id, ids 1, 2, 3, ... in
 * creation order, each written once as a STACK record (docs/format.md). A stack is
 * inserted root-first, so a node's parent always has the smaller id and its STACK
 * record comes first on the inserting thread.
 *
 * Only the miss path of ctp_stack_here comes here; it takes the tree lock (a plain
 * mutex, held across fork by the atfork handlers so a child never inherits it held).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stacks_internal.h"

struct slot {
  uint64_t parent, pc, id; /* id 0 = empty */
};

static pthread_mutex_t tree_lock = PTHREAD_MUTEX_INITIALIZER;
/* Held by the writer thread's work ahead of the first stack, and by fork() (taken
 * before the tree lock): never by a program thread, which therefore never waits for
 * that work (it did, for 20-40 ms under load, when the work held the tree lock). */
static pthread_mutex_t ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;       /* open addressing, linear probing */
static size_t slot_mask;         /* slots - 1 (a power of two) */
static uint64_t *node_parent, *node_pc; /* by id (index 0 unused) */
static size_t node_cap;
static uint64_t node_count;
int ctps_rewrite_pending;

static inline size_t slot_of(uint64_t parent, uint64_t pc) {
  uint64_t h = (pc ^ (parent * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
  return (size_t)(h ^ (h >> 29));
}

/* Room for one more node: node arrays and a table at most half full. */
static int reserve_node(void) {
  if (node_count + 1 >= node_cap) {
    size_t cap = node_cap ? node_cap * 2 : 1024;
    uint64_t *p = realloc(node_parent, cap * sizeof *p);
    if (!p) return -1;
    node_parent = p;
    uint64_t *q = realloc(node_pc, cap * sizeof *q);
    if (!q) return -1;
    node_pc = q;
    node_cap = cap;
  }
  if (!slots || (node_count + 1) * 2 > slot_mask + 1) {
    size_t n = slots ? (slot_mask + 1) * 2 : 2048;
    struct slot *fresh = calloc(n, sizeof *fresh);
    if (!fresh) return -1;
    for (uint64_t id = 1; id <= node_count; id++) {
      size_t i = slot_of(node_parent[id], node_pc[id]) & (n - 1);
      while (fresh[i].id) i = (i + 1) & (n - 1);
      fresh[i] = (struct slot){node_parent[id], node_pc[id], id};
    }
    free(slots);
    slots = fresh;
    slot_mask = n - 1;
  }
  return 0;
}

static void emit_node(uint64_t id) {
  ct_record r;
  r.kind = CT_KIND_STACK;
  r.u.stack = (struct ct_stack){.id = id, .parent = node_parent[id], .pc = node_pc[id]};
  ctp_emit(&r);
}

/* The id of node (parent, pc), created and written when new; 0 when out of memory. */
static uint64_t find_or_add(uint64_t parent, uint64_t pc) {
  if (slots) {
    size_t i = slot_of(parent, pc) & slot_mask;
    for (; slots[i].id; i = (i + 1) & slot_mask)
      if (slots[i].parent == parent && slots[i].pc == pc) return slots[i].id;
  }
  if (reserve_node() < 0) return 0;
  uint64_t id = ++node_count;
  node_parent[id] = parent;
  node_pc[id] = pc;
  size_t i = slot_of(parent, pc) & slot_mask;
  while (slots[i].id) i = (i + 1) & slot_mask;
  slots[i] = (struct slot){parent, pc, id};
  if (!(pc & CT_STACK_PY)) ctps_module_cover(pc); /* MODULE before its first STACK record */
  emit_node(id);
  return id;
}

uint64_t ctps_tree_insert(const uint64_t *pcs, int n) {
  pthread_mutex_lock(&tree_lock);
  ctps_modules_check_changes();
  uint64_t id = 0;
  for (int i = n - 1; i >= 0; i--) {
    id = find_or_add(id, pcs[i]);
    if (!id) break;
  }
  pthread_mutex_unlock(&tree_lock);
  return id;
}

int ctps_tree_path(uint64_t id, uint64_t *pcs, int max) {
  int n = 0;
  pthread_mutex_lock(&tree_lock);
  for (; id && id <= node_count && n < max; id = node_parent[id]) pcs[n++] = node_pc[id];
  pthread_mutex_unlock(&tree_lock);
  return n;
}

uint64_t ctps_tree_nodes(void) { return __atomic_load_n(&node_count, __ATOMIC_RELAXED); }

void ctps_tree_rewrite(void) {
  pthread_mutex_lock(&tree_lock);
  if (__atomic_load_n(&ctps_rewrite_pending, __ATOMIC_ACQUIRE)) {
    ctps_modules_rewrite();
    for (uint64_t id = 1; id <= node_count; id++) emit_node(id);
    __atomic_store_n(&ctps_rewrite_pending, 0, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tree_lock);
}

void ctps_tree_scan_modules_ahead(void (*also)(void)) {
  uint64_t begin_ns = ctp_now_ns();
  /* Under the ahead lock, which fork() waits for (fork_prepare): a child never
   * inherits the loader's lock that dl_iterate_phdr holds (glibc resets only
   * dl_load_lock in a fork child). The listing is made apart and installed under the
   * tree lock in a moment, so a program thread's first stack never waits for it. */
  pthread_mutex_lock(&ahead_lock);
  void *collected = ctps_modules_collect_ahead();
  pthread_mutex_lock(&tree_lock);
  long objects = ctps_modules_install_ahead(collected);
  pthread_mutex_unlock(&tree_lock);
  uint64_t scanned_ns = ctp_now_ns();
  also();
  pthread_mutex_unlock(&ahead_lock);
  uint64_t end_ns = ctp_now_ns();
  if (objects >= 0) ctp_emit_tracer("modules", begin_ns, scanned_ns, (uint64_t)objects);
  ctp_emit_tracer("unwinder", scanned_ns, end_ns, 1);
}

void ctps_tree_fork_prepare(void) {
  pthread_mutex_lock(&ahead_lock);
  pthread_mutex_lock(&tree_lock);
}

void ctps_tree_fork_parent(void) {
  pthread_mutex_unlock(&tree_lock);
  pthread_mutex_unlock(&ahead_lock);
}

void ctps_tree_new_file(void) {
  pthread_mutex_lock(&tree_lock);
  if (node_count) __atomic_store_n(&ctps_rewrite_pending, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&tree_lock);
}

void ctps_tree_fork_child(void) {
  pthread_mutex_init(&tree_lock, NULL);
  pthread_mutex_init(&ahead_lock, NULL);
  if (node_count) __atomic_store_n(&ctps_rewrite_pending, 1, __ATOMIC_RELEASE);
}
