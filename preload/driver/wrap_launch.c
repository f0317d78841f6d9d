/*
 * Driver launches: cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx (the
 * Triton launcher's entry point) and cuGraphLaunch, each with its _ptsz form, the
 * CUDA 1.x-3.x cuLaunch, cuLaunchGrid and cuLaunchGridAsync, and the deprecated
 * cuLaunchCooperativeKernelMultiDevice (a call per entry inside it). A
 * traced call is an API record flagged CT_API_DRIVER plus a LAUNCH record named by
 * cuFuncGetName / cuKernelGetName; when outermost (static cudart, Triton, -lcuda)
 * the kernel is timed with events on its stream. Inside a library call (a cuBLAS
 * GEMM span) it is a depth>0 child naming the library's real kernel; the library
 * call keeps its one GPU activity (see docs/preload.md, "Driver-level
 * interception").
 */
#include "wrap_common.h"

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

/* Writes the LAUNCH record of a call; with_attr (the launch succeeded, its block is
 * known): the function's KERNEL_ATTR and OCCUPANCY records first, at their first sight. */
static void emit_launch(const ctph_call *c, int with_attr, CUfunction f, uint64_t kernel,
                        unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem) {
  uint64_t attr =
      with_attr ? ctph_launch_attr(f, 0, kernel, bx * by * bz, shmem, c->device) : 0;
  ct_record r;
  r.kind = CT_KIND_LAUNCH;
  r.u.launch = (struct ct_launch){.corr = c->corr, .kernel = kernel, .grid_x = gx, .grid_y = gy,
                                  .grid_z = gz, .block_x = bx, .block_y = by, .block_z = bz,
                                  .shmem = shmem, .attr = attr};
  ctp_emit(&r);
}

CTPD_INLINE CUresult launch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                 CUstream stream, void **params, void **extra) {
  launch_fn real = (launch_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (CTPD_UNTRACED(real, ra))
    return real(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
  ctpd_note_call();
  uint64_t name = ctpd_function_name_id(f);
  ctph_call c;
  ctph_call_begin(&c, id, ptsz, CT_GPU_KERNEL, stream, name);
  c.flags |= CT_API_DRIVER;
  CUresult r = real(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
  CTPH_FINISH(c, r, emit_launch(&c, r == CUDA_SUCCESS, f, name, gx, gy, gz, bx, by, bz, shmem));
  return r;
}

#define LAUNCH_PARAMS                                                                       \
  (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, \
   unsigned shmem, CUstream stream, void **params, void **extra)
#define LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra)

CTPD_DEFINE(cuLaunchKernel, 0, launch_body, LAUNCH_PARAMS, LAUNCH_ARGS)
CTPD_DEFINE(cuLaunchKernel_ptsz, 1, launch_body, LAUNCH_PARAMS, LAUNCH_ARGS)
CTPD_DEFINE(cuLaunchCooperativeKernel, 0, launch_body, LAUNCH_PARAMS, LAUNCH_ARGS)
CTPD_DEFINE(cuLaunchCooperativeKernel_ptsz, 1, launch_body, LAUNCH_PARAMS, LAUNCH_ARGS)

/* The launch API of CUDA 1.x-3.x (cuLaunch, cuLaunchGrid on the legacy stream,
 * cuLaunchGridAsync; deprecated since 4.0): the block shape and shared memory were set
 * on the function earlier (cuFuncSetBlockShape, cuFuncSetSharedSize: remembered by
 * wrap_func_shape.c), so the LAUNCH record has the grid, that block and shared memory
 * and, when the shape is known, the kernel's attributes and occupancy as for any
 * launch; block 0 x 0 x 0 and no attributes when no shape was seen. */
typedef CUresult (*legacy_launch_fn)(CUfunction, int, int, CUstream);

CTPD_INLINE CUresult legacy_launch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUfunction f, int gw, int gh, CUstream stream,
                                        int form) {
  if (!realp)
    return CTPD_NO_REAL;
  /* form 0: cuLaunch(f), 1: cuLaunchGrid(f, gw, gh), 2: cuLaunchGridAsync(f, gw, gh, s) */
#define LEGACY_CALL                                                                        \
  (form == 0 ? ((CUresult(*)(CUfunction))realp)(f)                                         \
   : form == 1 ? ((CUresult(*)(CUfunction, int, int))realp)(f, gw, gh)                     \
               : ((legacy_launch_fn)realp)(f, gw, gh, stream))
  if (CTPD_UNTRACED(realp, ra))
    return LEGACY_CALL;
  ctpd_note_call();
  uint64_t name = ctpd_function_name_id(f);
  ctph_call c;
  ctph_call_begin(&c, id, ptsz, CT_GPU_KERNEL, stream, name);
  c.flags |= CT_API_DRIVER;
  CUresult r = LEGACY_CALL;
#undef LEGACY_CALL
  unsigned bx, by, bz, shmem;
  ctpd_function_shape(f, &bx, &by, &bz, &shmem);
  CTPH_FINISH(c, r,
              emit_launch(&c, r == CUDA_SUCCESS && bx, f, name, gw > 0 ? (unsigned)gw : 0,
                          gh > 0 ? (unsigned)gh : 0, 1, bx, by, bz, shmem));
  return r;
}

CTPD_DEFINE(cuLaunch, 0, legacy_launch_body, (CUfunction f), (f, 1, 1, NULL, 0))
CTPD_DEFINE(cuLaunchGrid, 0, legacy_launch_body, (CUfunction f, int gw, int gh),
            (f, gw, gh, NULL, 1))
CTPD_DEFINE(cuLaunchGridAsync, 0, legacy_launch_body, (CUfunction f, int gw, int gh, CUstream s),
            (f, gw, gh, s, 2))

/* cuLaunchCooperativeKernelMultiDevice (CUDA 9.0, deprecated): one cooperative kernel on
 * each of several devices, each entry with its own function, shape and stream. Traced as
 * a call (depth 0, no LAUNCH and no GPU record of its own) and, inside it, one call per
 * entry (depth 1, the same name, its own corr; at most MULTI_ENTRIES entries): its LAUNCH
 * record, the device and stream of its stream's context (made current for the moment
 * when it is not: cuStreamGetCtx), and a kernel GPU record timed with events on its
 * stream when the call has one entry or CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC
 * (by default each kernel first waits for the earlier work of every entry's stream, which
 * a start event recorded before the call would count as the kernel's time; such entries
 * are flagged CT_API_UNTIMED). The outer call is flagged CT_API_INNER_TIMED when an entry
 * was timed. Without CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC every
 * stream's later work, the end event included, waits for all the kernels: each entry then
 * ends when the last one did. */
typedef CUresult (*launch_multi_fn)(CUDA_LAUNCH_PARAMS *, unsigned, unsigned);

#define MULTI_ENTRIES 16

/* Makes the context of stream s current (pushed) when another one is: returns 1 when it
 * pushed one (leave_stream_context pops it). */
static int enter_stream_context(CUstream s) {
  CUcontext ctx = NULL, current = NULL;
  if (!ctph_drv.StreamGetCtx || !ctph_drv.CtxPushCurrent || !ctph_drv.CtxPopCurrent ||
      ctph_drv.StreamGetCtx(s, &ctx) != CUDA_SUCCESS || !ctx ||
      (ctph_drv.CtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx))
    return 0;
  return ctph_drv.CtxPushCurrent(ctx) == CUDA_SUCCESS;
}

static void leave_stream_context(int pushed) {
  CUcontext popped;
  if (pushed)
    ctph_drv.CtxPopCurrent(&popped);
}

CTPD_INLINE CUresult launch_multi_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUDA_LAUNCH_PARAMS *list, unsigned n, unsigned flags) {
  launch_multi_fn real = (launch_multi_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (CTPD_UNTRACED(real, ra))
    return real(list, n, flags);
  ctpd_note_call();
  unsigned m = list ? (n < MULTI_ENTRIES ? n : MULTI_ENTRIES) : 0; /* empty: a span, its error */
  int timed = n == 1 || (flags & CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC);
  ctph_call c, entries[MULTI_ENTRIES];
  ctph_call_begin(&c, id, ptsz, 0, m ? list[0].hStream : CTPH_NO_STREAM, 0);
  c.flags |= CT_API_DRIVER;
  c.gpu_type = CT_GPU_KERNEL; /* untimed itself (begun without), its stack taken as a launch's */
  for (unsigned i = 0; c.traced && i < m; i++) {
    int saved = errno;
    int pushed = enter_stream_context(list[i].hStream);
    ctph_call_begin_entry(&entries[i], &c, list[i].hStream,
                          ctpd_function_name_id(list[i].function), timed);
    leave_stream_context(pushed);
    errno = saved;
  }
  CUresult r = real(list, n, flags);
  if (c.traced && m) {
    int saved = errno;
    for (unsigned i = 0; i < m; i++) {
      const CUDA_LAUNCH_PARAMS *p = &list[i];
      ctph_call *e = &entries[i];
      int pushed = enter_stream_context(p->hStream);
      ctph_call_settle(e, r);
      emit_launch(e, r == CUDA_SUCCESS, p->function, e->gpu_name, p->gridDimX, p->gridDimY,
                  p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ, p->sharedMemBytes);
      leave_stream_context(pushed);
      ctph_call_emit(e, r);
      if (e->flags & CT_API_TIMED)
        c.flags |= CT_API_INNER_TIMED;
    }
    ctph_chain_break(); /* the streams waited for each other: nothing chains from here */
    errno = saved;
  }
  CTPH_FINISH(c, r, (void)0);
  return r;
}

CTPD_DEFINE(cuLaunchCooperativeKernelMultiDevice, 0, launch_multi_body,
            (CUDA_LAUNCH_PARAMS *list, unsigned n, unsigned flags), (list, n, flags))

CTPD_INLINE CUresult launch_ex_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                    const CUlaunchConfig *config, CUfunction f, void **params,
                                    void **extra) {
  launch_ex_fn real = (launch_ex_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (CTPD_UNTRACED(real, ra) || !config)
    return real(config, f, params, extra);
  ctpd_note_call();
  uint64_t name = ctpd_function_name_id(f);
  ctph_call c;
  ctph_call_begin(&c, id, ptsz, CT_GPU_KERNEL, config->hStream, name);
  c.flags |= CT_API_DRIVER;
  CUresult r = real(config, f, params, extra);
  CTPH_FINISH(c, r,
              emit_launch(&c, r == CUDA_SUCCESS, f, name, config->gridDimX, config->gridDimY, config->gridDimZ,
                          config->blockDimX, config->blockDimY, config->blockDimZ,
                          config->sharedMemBytes));
  return r;
}

#define LAUNCH_EX_PARAMS (const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
#define LAUNCH_EX_ARGS (config, f, params, extra)
CTPD_DEFINE(cuLaunchKernelEx, 0, launch_ex_body, LAUNCH_EX_PARAMS, LAUNCH_EX_ARGS)
CTPD_DEFINE(cuLaunchKernelEx_ptsz, 1, launch_ex_body, LAUNCH_EX_PARAMS, LAUNCH_EX_ARGS)

CTPD_INLINE CUresult graph_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUgraphExec exec, CUstream stream) {
  graph_fn real = (graph_fn)realp;
  if (!real)
    return CTPD_NO_REAL;
  if (CTPD_UNTRACED(real, ra))
    return real(exec, stream);
  ctpd_note_call();
  ctph_call c;
  ctph_call_begin(&c, id, ptsz, CT_GPU_GRAPH, stream, ctph_hook_name_id(id));
  c.flags |= CT_API_DRIVER;
  CUresult r = real(exec, stream);
  CTPH_FINISH(c, r, ctph_graph_emit_launch(c.corr, exec));
  return r;
}

CTPD_DEFINE(cuGraphLaunch, 0, graph_body, (CUgraphExec exec, CUstream stream), (exec, stream))
CTPD_DEFINE(cuGraphLaunch_ptsz, 1, graph_body, (CUgraphExec exec, CUstream stream),
            (exec, stream))
