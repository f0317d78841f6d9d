/* Captures and graphs, shared by capture.c and graph.c. */
#ifndef SIM_DRIVER_GRAPH_H
#define SIM_DRIVER_GRAPH_H

#include "sim.h"

/* One node: the operation it replays, or (child != NULL) a child graph node
 * owning its copy of the child graph. */
struct sim_graph_node {
  struct sim_op op;
  struct sim_graph *child;
};

/* A graph: its nodes in capture order (replayed one after another). */
struct sim_graph {
  struct sim_graph_node **nodes;
  size_t count, capacity;
};

/* An instantiated graph: a private copy of the nodes, child graphs flattened. */
struct sim_graph_exec {
  struct sim_op *ops;
  const void **nodes; /* the graph node each op came from (SetParams finds ops by it) */
  size_t count;
};

struct sim_capture {
  struct sim_capture *next;
  struct sim_ctx *ctx;
  struct sim_stream *origin;
  CUstreamCaptureMode mode;
  pthread_t owner;
  int invalidated;
  unsigned long long id;
  struct sim_graph *graph;
  int user_graph; /* graph is the program's (cuStreamBeginCaptureToGraph) */
};

/* An empty graph, not yet a live handle; NULL when out of memory. */
struct sim_graph *sim_graph_new(void);

/* Makes `g` a live CUgraph handle (lock held). Returns 0 or -1. */
int sim_graph_register(struct sim_graph *g);

/* Frees a graph and its nodes (and forgets its handles; lock held). */
void sim_graph_free(struct sim_graph *g);

/* Appends a node replaying `op` (lock held). Returns 0 or -1. */
int sim_graph_append(struct sim_graph *g, const struct sim_op *op);

/* The current dependency set of a capture: its last node (0 or 1 of them). */
size_t sim_graph_tail(struct sim_graph *g, const CUgraphNode **deps);

#endif
