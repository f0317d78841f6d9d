/* One model read fed to several consumers (model_tee.h). */
#include "model_tee.h"

int ct_model_tee_add(ct_model_tee *t, const ct_model_ops *ops, void *user) {
  if (t->n >= CT_MODEL_TEE_MAX) return -1;
  t->ops[t->n] = ops;
  t->user[t->n] = user;
  t->n++;
  return 0;
}

/* A callback of the tee: calls callback CB of every consumer that has one, with the
 * consumer's own user pointer and the event's arguments. */
#define TEE_CALLBACK(CB, PARAMS, ARGS)                       \
  static void tee_##CB PARAMS {                              \
    const ct_model_tee *t = user;                            \
    for (unsigned i = 0; i < t->n; i++)                      \
      if (t->ops[i]->CB) t->ops[i]->CB ARGS;                 \
  }

TEE_CALLBACK(on_process, (void *user, const ct_proc *p), (t->user[i], p))
TEE_CALLBACK(on_span, (void *user, const ct_span *s), (t->user[i], s))
TEE_CALLBACK(on_activity, (void *user, const ct_activity *a), (t->user[i], a))
TEE_CALLBACK(on_stream, (void *user, const ct_proc *p, const struct ct_stream *s),
             (t->user[i], p, s))
TEE_CALLBACK(on_thread,
             (void *user, const ct_proc *p, const struct ct_thread *th, const char *name),
             (t->user[i], p, th, name))
TEE_CALLBACK(on_range,
             (void *user, const ct_proc *p, const struct ct_range *r, const char *name),
             (t->user[i], p, r, name))
TEE_CALLBACK(on_drop, (void *user, const ct_proc *p, const struct ct_drop *d), (t->user[i], p, d))
TEE_CALLBACK(on_clock, (void *user, const ct_proc *p, const struct ct_clock *c),
             (t->user[i], p, c))
TEE_CALLBACK(on_stack, (void *user, const ct_proc *p, const struct ct_stack *s),
             (t->user[i], p, s))
TEE_CALLBACK(on_module,
             (void *user, const ct_proc *p, const struct ct_module *m, const char *path,
              const char *build_id),
             (t->user[i], p, m, path, build_id))
TEE_CALLBACK(on_pycode,
             (void *user, const ct_proc *p, const struct ct_pycode *c, const char *file,
              const char *qualname),
             (t->user[i], p, c, file, qualname))
TEE_CALLBACK(on_graph, (void *user, const ct_proc *p, const struct ct_graph *g),
             (t->user[i], p, g))
TEE_CALLBACK(on_graph_kernel,
             (void *user, const ct_proc *p, const struct ct_graph_kernel *k, const char *name),
             (t->user[i], p, k, name))
TEE_CALLBACK(on_pause,
             (void *user, const ct_proc *p, const struct ct_pause *pause, const char *why),
             (t->user[i], p, pause, why))
TEE_CALLBACK(on_kernel_attr,
             (void *user, const ct_proc *p, const struct ct_kernel_attr *a, const char *name),
             (t->user[i], p, a, name))
TEE_CALLBACK(on_occupancy, (void *user, const ct_proc *p, const struct ct_occupancy *o),
             (t->user[i], p, o))
TEE_CALLBACK(on_withheld,
             (void *user, const ct_proc *p, uint64_t corr, uint64_t device, uint64_t stream),
             (t->user[i], p, corr, device, stream))

int ct_model_tee_read(const ct_model_tee *t, const char *path, const ct_model_options *opts,
                      ct_model_stats *st) {
  /* Only the callbacks some consumer has: the model skips work for NULL ones. */
  ct_model_ops ops = {0};
#define TEE_USE(CB)                                          \
  for (unsigned i = 0; i < t->n; i++)                        \
    if (t->ops[i]->CB) ops.CB = tee_##CB;
  TEE_USE(on_process) TEE_USE(on_span) TEE_USE(on_activity) TEE_USE(on_stream)
  TEE_USE(on_thread) TEE_USE(on_range) TEE_USE(on_drop) TEE_USE(on_clock) TEE_USE(on_stack)
  TEE_USE(on_module) TEE_USE(on_pycode) TEE_USE(on_graph) TEE_USE(on_graph_kernel)
  TEE_USE(on_pause) TEE_USE(on_kernel_attr) TEE_USE(on_occupancy) TEE_USE(on_withheld)
#undef TEE_USE
  return ct_model_read(path, opts, &ops, (void *)t, st);
}
