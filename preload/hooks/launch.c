/*
 * Kernel launches and graph launches: each wrapper forwards to the real entry point
 * with the same arguments and returns its result; when tracing, the call becomes an
 * API record plus a LAUNCH record (same corr), and the kernel (or the whole graph)
 * is timed with events on the launch's stream.
 */
#include <vector_types.h>

#include "hooks_internal.h"

/* The nvcc-13 launch entry points and the _ptsz forms have no prototype in the
 * public headers when compiling C without per-thread default stream. */
CTP_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                          size_t shmem, cudaStream_t stream);
CTP_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
                                               void **args, size_t shmem, cudaStream_t stream);
CTP_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                             size_t shmem, cudaStream_t stream);
CTP_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
                                                const void *func, void **args);
CTP_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block,
                                                        void **args, size_t shmem,
                                                        cudaStream_t stream);
CTP_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream);

/* Writes the LAUNCH record of a call; when the launch succeeded, the function's
 * KERNEL_ATTR and OCCUPANCY records first, at their first sight. */
static inline __attribute__((always_inline)) void emit_launch(const ctph_call *c, cudaError_t result, const void *func, uint64_t kernel,
                        dim3 grid, dim3 block, size_t shmem) {
  uint64_t attr = result == cudaSuccess
                      ? ctph_launch_attr(func, 1, kernel, block.x * block.y * block.z, shmem,
                                         c->device)
                      : 0;
  uint64_t corr = c->corr;
  ct_record r;
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){
      .corr = corr,
      .kernel = kernel,
      .grid_x = grid.x,
      .grid_y = grid.y,
      .grid_z = grid.z,
      .block_x = block.x,
      .block_y = block.y,
      .block_z = block.z,
      .shmem = shmem,
      .attr = attr,
  };
  ctp_emit(&r);
}

/* The body shared by the wrappers with the cudaLaunchKernel argument list. */
#define LAUNCH_BODY(sym, ptsz, func)                                                      \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                 \
  if (!real)                                                                              \
    return cudaErrorSharedObjectSymbolNotFound;                                           \
  if (CTP_UNLIKELY(!ctph_on()))                                                           \
    return real(func, grid, block, args, shmem, stream);                                  \
  uint64_t name = ctph_kernel_name_id((const void *)(func));                              \
  ctph_call c;                                                                            \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, CT_GPU_KERNEL, (CUstream)stream, name);        \
  cudaError_t r = real(func, grid, block, args, shmem, stream);                           \
  CTPH_FINISH(c, r, emit_launch(&c, r, (const void *)(func), name, grid, block, shmem));  \
  return r

/** __cudaLaunchKernel (what nvcc-13 <<<>>> stubs call), traced. */
CTP_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shmem, cudaStream_t stream) {
  LAUNCH_BODY(__cudaLaunchKernel, 0, kernel);
}

/** __cudaLaunchKernel_ptsz (--default-stream per-thread stubs), traced. */
CTP_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                                    size_t shmem, cudaStream_t stream) {
  LAUNCH_BODY(__cudaLaunchKernel_ptsz, 1, kernel);
}

/** cudaLaunchKernel (CUDA 12 stubs, explicit launches), traced. */
CTP_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                             cudaStream_t stream) {
  LAUNCH_BODY(cudaLaunchKernel, 0, func);
}

/** cudaLaunchKernel_ptsz, traced. */
CTP_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                  size_t shmem, cudaStream_t stream) {
  LAUNCH_BODY(cudaLaunchKernel_ptsz, 1, func);
}

/** cudaLaunchCooperativeKernel, traced. */
CTP_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                        size_t shmem, cudaStream_t stream) {
  LAUNCH_BODY(cudaLaunchCooperativeKernel, 0, func);
}

/** cudaLaunchCooperativeKernel_ptsz, traced. */
CTP_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
                                             size_t shmem, cudaStream_t stream) {
  LAUNCH_BODY(cudaLaunchCooperativeKernel_ptsz, 1, func);
}

/* cudaLaunchKernelExC: grid, block, shared memory and stream come from config. */
#define LAUNCH_EX_BODY(sym, ptsz)                                                        \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                \
  if (!real)                                                                             \
    return cudaErrorSharedObjectSymbolNotFound;                                          \
  if (CTP_UNLIKELY(!ctph_on()) || !config)                                               \
    return real(config, func, args);                                                     \
  uint64_t name = ctph_kernel_name_id(func);                                             \
  ctph_call c;                                                                           \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, CT_GPU_KERNEL, (CUstream)config->stream, name); \
  cudaError_t r = real(config, func, args);                                              \
  CTPH_FINISH(c, r,                                                                      \
              emit_launch(&c, r, func, name, config->gridDim, config->blockDim,          \
                          config->dynamicSmemBytes));                                    \
  return r

/** cudaLaunchKernelExC (cudaLaunchKernelEx in C++), traced. */
CTP_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args) {
  LAUNCH_EX_BODY(cudaLaunchKernelExC, 0);
}

/** cudaLaunchKernelExC_ptsz, traced. */
CTP_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
                                     void **args) {
  LAUNCH_EX_BODY(cudaLaunchKernelExC_ptsz, 1);
}

/* A graph launch: one API record, timed as one activity (CT_GPU_GRAPH), and a
 * GRAPH_LAUNCH record naming the exec (whose inventory graph_walk.c recorded). */
#define GRAPH_BODY(sym, ptsz)                                                            \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                \
  if (!real)                                                                             \
    return cudaErrorSharedObjectSymbolNotFound;                                          \
  if (CTP_UNLIKELY(!ctph_on()))                                                          \
    return real(exec, stream);                                                           \
  ctph_call c;                                                                           \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, CT_GPU_GRAPH, (CUstream)stream,               \
                  ctph_hook_name_id(CTPH_ID_##sym));                                     \
  cudaError_t r = real(exec, stream);                                                    \
  CTPH_FINISH(c, r, ctph_graph_emit_launch(c.corr, (CUgraphExec)exec));                  \
  return r

/** cudaGraphLaunch, traced. */
CTP_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  GRAPH_BODY(cudaGraphLaunch, 0);
}

/** cudaGraphLaunch_ptsz, traced. */
CTP_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  GRAPH_BODY(cudaGraphLaunch_ptsz, 1);
}
