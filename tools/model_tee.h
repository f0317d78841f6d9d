/*
 * One read of a trace file fed to several consumers of the trace model (model.h): a
 * command that needs two analyses of the same file (cutrace diff: the report's
 * tables and the gaps analysis) reads, decompresses and joins it once. Each
 * consumer gets every event its ops handle, in the model's delivery order; for each
 * event the consumers are called in the order they were added. Consumers must not
 * depend on each other: each sees exactly what ct_model_read would have given it.
 */
#ifndef CUTRACE_MODEL_TEE_H
#define CUTRACE_MODEL_TEE_H

#include "model.h"

#define CT_MODEL_TEE_MAX 4

/* The consumers of one read. Zero-initialise, then ct_model_tee_add each. */
typedef struct ct_model_tee {
  unsigned n;
  const ct_model_ops *ops[CT_MODEL_TEE_MAX];
  void *user[CT_MODEL_TEE_MAX];
} ct_model_tee;

/* Adds a consumer (ops and its user pointer). Returns 0, or -1 when the tee is full. */
int ct_model_tee_add(ct_model_tee *t, const ct_model_ops *ops, void *user);

/* ct_model_read of path with every consumer of t fed at once; returns and fills st
 * like ct_model_read (opts may be NULL). */
int ct_model_tee_read(const ct_model_tee *t, const char *path, const ct_model_options *opts,
                      ct_model_stats *st);

#endif
