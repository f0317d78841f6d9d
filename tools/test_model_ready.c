/*
 * The model's table of records read that spans and activities wait for
 * (model_ready.c): KERNEL_ATTR ids, launch shapes, and STACK nodes, ready only once
 * every ancestor was read, whatever the order the nodes come in: a chain of 40 nodes
 * read leaf first, one read in random order, a tree of two branches sharing a root read
 * last; a node settled while its parent is missing; more nodes waiting for an ancestor
 * than CT_READY_MAX_ORPHANS (the rest are taken as ready); shapes differing in one
 * field each; ids at and beyond CT_READY_MAX_ID.
 * usage: test_model_ready
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_ready.h"

#include "test_check.h"

/* A chain 1 < 2 < ... < n (node i's parent i - 1) read in the order of `order`: after
 * each read, node i is ready exactly when nodes 1..i were all read. */
static void check_chain(const unsigned *order, unsigned n, const char *label) {
  ct_ready r;
  memset(&r, 0, sizeof r);
  unsigned char read[64] = {0};
  for (unsigned k = 0; k < n; k++) {
    unsigned id = order[k];
    ct_ready_stack_read(&r, id, id - 1);
    read[id] = 1;
    int all = 1;
    for (unsigned i = 1; i <= n; i++) {
      all = all && read[i];
      CHECK(ct_ready_stack(&r, i) == all, "%s: after reading %u of %u, node %u ready %d", label,
            k + 1, n, i, !all);
    }
  }
  CHECK(r.n_orphans == 0, "%s: %zu nodes still wait for an ancestor", label, r.n_orphans);
  ct_ready_free(&r);
}

static void chains(void) {
  unsigned order[40];
  for (unsigned i = 0; i < 40; i++) order[i] = 40 - i; /* leaf first */
  check_chain(order, 40, "leaf first");
  for (unsigned i = 0; i < 40; i++) order[i] = i + 1;
  check_chain(order, 40, "root first");
  srand(7);
  for (int round = 0; round < 20; round++) {
    for (unsigned i = 39; i > 0; i--) {
      unsigned j = (unsigned)rand() % (i + 1), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    check_chain(order, 40, "random order");
  }
}

/* Root 1 with branches 1 < 2 < 3 and 1 < 4 < 5, the root read last; node 6's parent 7
 * never comes: 6 settled is ready, its child 8 too, 7 not. */
static void tree_and_settle(void) {
  ct_ready r;
  memset(&r, 0, sizeof r);
  ct_ready_stack_read(&r, 3, 2);
  ct_ready_stack_read(&r, 5, 4);
  ct_ready_stack_read(&r, 2, 1);
  ct_ready_stack_read(&r, 4, 1);
  for (uint64_t i = 1; i <= 5; i++) CHECK(!ct_ready_stack(&r, i), "node %llu ready before the root", (unsigned long long)i);
  ct_ready_stack_read(&r, 1, 0);
  for (uint64_t i = 1; i <= 5; i++) CHECK(ct_ready_stack(&r, i), "node %llu not ready after the root", (unsigned long long)i);
  CHECK(ct_ready_stack(&r, 0), "no node (0) is ready");
  ct_ready_stack_read(&r, 6, 7);
  CHECK(!ct_ready_stack(&r, 6), "node 6 ready without its parent");
  ct_ready_stack_settle(&r, 6);
  CHECK(ct_ready_stack(&r, 6) && !ct_ready_stack(&r, 7), "settled node 6: %d, 7: %d",
        ct_ready_stack(&r, 6), ct_ready_stack(&r, 7));
  ct_ready_stack_read(&r, 8, 6);
  CHECK(ct_ready_stack(&r, 8), "node 8 under settled node 6 not ready");
  CHECK(ct_ready_stack(&r, CT_READY_MAX_ID) && !ct_ready_stack(&r, CT_READY_MAX_ID - 1),
        "ids from CT_READY_MAX_ID on are ready, below it not");
  ct_ready_free(&r);
}

/* More nodes waiting for ancestors than are kept: the first CT_READY_MAX_ORPHANS wait,
 * the rest are ready at once; the kept ones become ready with their parent. */
static void orphan_limit(void) {
  ct_ready r;
  memset(&r, 0, sizeof r);
  uint64_t n = CT_READY_MAX_ORPHANS + 10;
  for (uint64_t i = 0; i < n; i++) ct_ready_stack_read(&r, 100 + i, 1); /* root 1 not read */
  uint64_t ready = 0;
  for (uint64_t i = 0; i < n; i++) ready += (uint64_t)ct_ready_stack(&r, 100 + i);
  CHECK(ready == 10 && r.n_orphans == CT_READY_MAX_ORPHANS, "%llu ready, %zu kept",
        (unsigned long long)ready, r.n_orphans);
  ct_ready_stack_read(&r, 1, 0);
  ready = 0;
  for (uint64_t i = 0; i < n; i++) ready += (uint64_t)ct_ready_stack(&r, 100 + i);
  CHECK(ready == n && r.n_orphans == 0, "after the root: %llu of %llu ready, %zu kept",
        (unsigned long long)ready, (unsigned long long)n, r.n_orphans);
  ct_ready_free(&r);
}

/* Attributes and shapes: read ones are ready, and only those (each field matters);
 * 1000 shapes (the table grows), every one found. */
static void attrs_and_shapes(void) {
  ct_ready r;
  memset(&r, 0, sizeof r);
  CHECK(ct_ready_attr(&r, 0) && !ct_ready_attr(&r, 5), "attr 0 ready, 5 not");
  ct_ready_attr_settle(&r, 5);
  CHECK(ct_ready_attr(&r, 5) && !ct_ready_attr(&r, 4) && !ct_ready_attr(&r, 6), "attr 5 alone");
  ct_shape s = {5, 1, 256, 512};
  CHECK(!ct_ready_shape(&r, &s), "shape ready before its record");
  ct_ready_shape_settle(&r, &s);
  CHECK(ct_ready_shape(&r, &s), "shape not ready after its record");
  ct_shape other[4] = {{6, 1, 256, 512}, {5, 0, 256, 512}, {5, 1, 128, 512}, {5, 1, 256, 0}};
  for (int i = 0; i < 4; i++) CHECK(!ct_ready_shape(&r, &other[i]), "shape %d ready", i);
  CHECK(ct_ready_shape(&r, &(ct_shape){0, 1, 256, 512}), "a shape without attributes (0) is not ready");
  for (uint64_t i = 0; i < 1000; i++) ct_ready_shape_settle(&r, &(ct_shape){7 + i % 3, i % 2, 32 * (i + 1), i * 16});
  int found = 0;
  for (uint64_t i = 0; i < 1000; i++) found += ct_ready_shape(&r, &(ct_shape){7 + i % 3, i % 2, 32 * (i + 1), i * 16});
  CHECK(found == 1000 && r.n_shapes == 1001 && ct_ready_shape(&r, &s), "%d of 1000 shapes found, %zu kept", found, r.n_shapes);
  ct_ready_free(&r);
}

int main(void) {
  chains();
  tree_and_settle();
  orphan_limit();
  attrs_and_shapes();
  if (!failures) printf("model_ready: all checks passed\n");
  return failures != 0;
}
