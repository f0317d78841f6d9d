/*
 * What a span or activity's output waits for (tools/model.c, awaits_join): the records
 * other threads write once per process that it names. A kernel's LAUNCH names a
 * KERNEL_ATTR id and a launch shape (the attr, the GPU record's device, threads per
 * block, dynamic shared memory) whose OCCUPANCY record the first thread to launch that
 * shape wrote; an API record names a STACK node, and the node its parent, up to the
 * root, each written by the first thread to call from that path. The writer drains
 * threads' buffers one by one, so another thread's launch or call can reach the file
 * before any of them. This table says which of them were read: an id or shape is
 * ready once its record was read, and a STACK node once it and all its ancestors were.
 *
 * A wait is bounded (2 s of trace time, model.c): when it ran out, the caller settles
 * the id, node or shape (ct_ready_*_settle), so that the next launch or call naming it
 * does not wait again (a shape the occupancy calculator could not answer for has no
 * OCCUPANCY record at all). Memory: one bit per KERNEL_ATTR and STACK id up to
 * CT_READY_MAX_ID (larger ids are always ready), one entry per distinct launch shape
 * (at most CT_READY_MAX_SHAPES, then none waits), and the STACK nodes read before an
 * ancestor (at most CT_READY_MAX_ORPHANS; more are taken as ready). Out of memory,
 * everything is ready (nothing waits).
 */
#ifndef CUTRACE_MODEL_READY_H
#define CUTRACE_MODEL_READY_H

#include <stddef.h>
#include <stdint.h>

#define CT_READY_MAX_ID (1u << 26)     /* ids noted (larger ones: never waited for) */
#define CT_READY_MAX_ORPHANS 4096      /* STACK nodes read before an ancestor, kept */
#define CT_READY_MAX_SHAPES (1u << 20) /* launch shapes kept (then every shape is ready) */

/* One bit per id. */
typedef struct ct_id_bits {
  uint8_t *bits;
  size_t n; /* bytes */
} ct_id_bits;

/* A launch shape: (KERNEL_ATTR id, device, threads per block, dynamic shared memory). */
typedef struct ct_shape {
  uint64_t attr, device, block_threads, dyn_smem;
} ct_shape;

/* A STACK node read before one of its ancestors. */
typedef struct ct_orphan {
  uint64_t id, parent;
} ct_orphan;

/* The table: zero-initialised is empty. */
typedef struct ct_ready {
  ct_id_bits attrs;   /* KERNEL_ATTR ids read (or settled) */
  ct_id_bits stacks;  /* STACK nodes read with all their ancestors (or settled) */
  ct_orphan *orphans; /* STACK nodes read whose parent is not ready yet */
  size_t n_orphans, cap_orphans;
  ct_shape *shapes;   /* open addressing; attr 0 = empty slot */
  size_t n_shapes, cap_shapes; /* cap a power of two (0: none yet) */
  int oom;            /* memory ran out: everything is ready */
} ct_ready;

/* The KERNEL_ATTR record of id was read (or its wait ran out). */
void ct_ready_attr_settle(ct_ready *r, uint64_t id);

/* 1 when id (0: none) needs no wait: its KERNEL_ATTR record was read or settled. */
int ct_ready_attr(const ct_ready *r, uint64_t id);

/* STACK node id with parent (0: a root) was read: the node is ready once its parent
 * is, and so are the nodes read before it that wait for it as an ancestor. */
void ct_ready_stack_read(ct_ready *r, uint64_t id, uint64_t parent);

/* Node id is taken as ready (its wait ran out; an ancestor may still come later). */
void ct_ready_stack_settle(ct_ready *r, uint64_t id);

/* 1 when STACK node id (0: none) needs no wait: it and every ancestor were read, or it
 * was settled. */
int ct_ready_stack(const ct_ready *r, uint64_t id);

/* The OCCUPANCY record of shape s was read (or its wait ran out). */
void ct_ready_shape_settle(ct_ready *r, const ct_shape *s);

/* 1 when shape s (attr 0: none) needs no wait: its OCCUPANCY record was read or it was
 * settled. */
int ct_ready_shape(const ct_ready *r, const ct_shape *s);

/* Frees the table's memory (it is empty again). */
void ct_ready_free(ct_ready *r);

#endif
