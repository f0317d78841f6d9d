/*
 * dt_app MODE: small programs that reach the (simulated) driver the ways real
 * software does, for test_driver.py. Each prints what it did on stdout (the same
 * with and without the tracer) and exits 0, or prints "dt_app: ..." and exits 1.
 *   triton    dlopen("libcuda.so.1") + dlsym(h, "cuLaunchKernelEx"), as Triton's
 *             launcher does: 20 launches of "triton_kernel"
 *   linked    linked with -lcuda: 10 cuLaunchKernel of "linked_kernel", a 4 KiB
 *             HtoD / DtoH copy pair, a 1 KiB cuMemsetD8, cuStreamSynchronize
 *   shapes    linked with -lcuda: a 2D HtoD copy (64 B x 8 rows), a 3D DtoH copy
 *             (32 B x 4 x 2), a peer copy of 256 B (same context), cuMemsetD16 of
 *             64 elements, cuMemsetD2D32Async of 8 x 4 and cuMemsetD2D8 of 16 x 2,
 *             an event recorded and waited on (cuStreamWaitEvent on a created
 *             stream, cuEventSynchronize), a cuLaunchHostFunc, cuCtxSynchronize_v2
 *             and one launch of "after_kernel" on the created stream
 *   extension PATH  dlopen(PATH, RTLD_LOCAL) of a library linked with libcudart (as
 *             Python imports an extension module) and a call of its dt_ext_work:
 *             the runtime calls it makes must work under the tracer too
 *   xla [PATH] as XLA's stubs do: libcudart.so.13 (or the copy at PATH) loaded
 *             RTLD_LOCAL (this program does not link it) and its functions called
 *             through dlsym(handle): cudaMalloc, a 2 KiB cudaMemsetAsync,
 *             cudaStreamSynchronize, a 2 KiB cudaMemcpy DtoH
 *   procaddr  cuGetProcAddress (4 arguments, version 11030) and
 *             cuGetProcAddress_v2 (5 arguments): 5 launches each of "v1_kernel",
 *             "v2_kernel", and 5 of "pt_kernel" through the _ptsz answer, plus
 *             cuGetProcAddress fetched through itself at both versions
 *   dlsym     the program's own dlsym(RTLD_NEXT, ...) / dlsym(RTLD_DEFAULT, ...)
 *             answers are checked, then 3 launches of "default_kernel" through the
 *             RTLD_DEFAULT pointer
 *   hidden    fetches cuGetProcAddress_v2 but only initialises the driver
 *   default_local  (dt_local: built without -lcuda, so libcuda.so.1 is only
 *             loaded RTLD_LOCAL) launches 3 times "local_kernel" through
 *             dlsym(RTLD_DEFAULT, "cuLaunchKernel") when that finds anything
 *   graph     linked with -lcuda: a graph captured on a created stream (one
 *             "graph_kernel") with a child graph node holding a captured graph of
 *             2 "inner_kernel" and a cuMemsetD8Async; cuGraphInstantiateWithFlags
 *             of it (and a failing one of a NULL graph), 3 cuGraphLaunch,
 *             cuGraphExecUpdate from the same graph, cuGraphInstantiateWithParams
 *             of the child graph alone and 1 launch of it
 *   alloc     linked with -lcuda: one launch of "alloc_kernel", then cuMemAlloc (4 KiB,
 *             freed by cuMemFree while the kernel runs), cuMemAllocPitch (100 B x 4
 *             rows, elements of 4 B), cuMemAllocManaged (1 KiB), cuMemAllocHost
 *             (2 KiB), cuMemHostAlloc (3 KiB), cuMemHostRegister / Unregister of a
 *             4 KiB static buffer, cuMemAllocAsync / cuMemFreeAsync (512 B) on a
 *             created stream, their _ptsz forms through cuGetProcAddress_v2 (flag
 *             2, stream 0), cuMemAllocFromPoolAsync (768 B, the device's default
 *             pool) on the created stream and its _ptsz form on stream 0, each freed
 *             by cuMemFreeAsync of the same form, the frees, and a cuMemFree of a
 *             pointer never allocated (CUDA_ERROR_INVALID_VALUE, printed)
 *   vmm       linked with -lcuda: the virtual memory management calls (dt_vmm.c)
 *   bench_vmm N  N cycles of cuMemCreate, cuMemMap, cuMemSetAccess, cuMemUnmap,
 *             cuMemRelease (linked, dt_vmm.c): prints the mean host time per call
 *   bench N   N cuLaunchKernel calls (linked) in a loop, after 1,000 warm-up
 *             launches: prints the mean host time per launch (for the report, not
 *             checked by the tests)
 *   bench_alloc N  N pairs of cuMemAlloc (256 B) and cuMemFree (linked), after 1,000
 *             warm-up pairs: prints the mean host time per call (bench/host_cost.py)
 */
#include "dt_app.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Only the program itself defines this (exported with -rdynamic). */
__attribute__((visibility("default"))) int dt_app_own_symbol(void) { return 42; }

void *dt_libcuda;

/** A driver function by name from dt_libcuda. */
void *dt_sym(const char *name) { return dlsym(dt_libcuda, name); }

/** cuInit, device 0's primary context current, and a function of a loaded module. */
int dt_setup(CUfunction *f, const char *kernel) {
  CUresult (*init)(unsigned) = (__typeof__(init))dt_sym("cuInit");
  CUresult (*dev_get)(CUdevice *, int) = (__typeof__(dev_get))dt_sym("cuDeviceGet");
  CUresult (*retain)(CUcontext *, CUdevice) = (__typeof__(retain))dt_sym("cuDevicePrimaryCtxRetain");
  CUresult (*set)(CUcontext) = (__typeof__(set))dt_sym("cuCtxSetCurrent");
  CUresult (*load)(CUmodule *, const void *) = (__typeof__(load))dt_sym("cuModuleLoadData");
  CUresult (*get_fn)(CUfunction *, CUmodule, const char *) =
      (__typeof__(get_fn))dt_sym("cuModuleGetFunction");
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  if (!init || !dev_get || !retain || !set || !load || !get_fn)
    return FAIL("driver functions missing");
  if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set(ctx))
    return FAIL("no context");
  if (load(&mod, "dt_app image") || get_fn(f, mod, kernel))
    return FAIL("no module function %s", kernel);
  return 0;
}

/** cuCtxSynchronize through dt_libcuda. */
int dt_ctx_sync(void) {
  CUresult (*s)(void) = (__typeof__(s))dt_sym("cuCtxSynchronize");
  return s && s() == CUDA_SUCCESS ? 0 : FAIL("cuCtxSynchronize");
}

/** n launches of f through launch. */
int dt_launch_n(launch_fn launch, CUfunction f, int n) {
  for (int i = 0; i < n; i++)
    if (!launch || launch(f, 2, 1, 1, 32, 1, 1, 0, 0, NULL, NULL))
      return FAIL("launch %d", i);
  return 0;
}

static int run_triton(void) {
  CUfunction f;
  if (dt_setup(&f, "triton_kernel"))
    return 1;
  CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **) =
      (__typeof__(launch_ex))dt_sym("cuLaunchKernelEx");
  if (!launch_ex)
    return FAIL("no cuLaunchKernelEx");
  CUlaunchConfig cfg = {.gridDimX = 8, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64,
                        .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = 128, .hStream = 0};
  for (int i = 0; i < 20; i++)
    if (launch_ex(&cfg, f, NULL, NULL))
      return FAIL("launch %d", i);
  printf("triton: 20 launches\n");
  return dt_ctx_sync();
}

static int run_default_local(void) {
  CUfunction f;
  if (dt_setup(&f, "local_kernel"))
    return 1;
  launch_fn launch = (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
  if (launch && dt_launch_n(launch, f, 3))
    return 1;
  printf("default_local: done\n");
  return dt_ctx_sync();
}

static int run_xla(const char *path) {
  void *rt = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!rt)
    return FAIL("dlopen %s: %s", path, dlerror());
  int (*rt_malloc)(void **, size_t) = (__typeof__(rt_malloc))dlsym(rt, "cudaMalloc");
  int (*rt_memset_async)(void *, int, size_t, void *) =
      (__typeof__(rt_memset_async))dlsym(rt, "cudaMemsetAsync");
  int (*rt_sync)(void *) = (__typeof__(rt_sync))dlsym(rt, "cudaStreamSynchronize");
  int (*rt_memcpy)(void *, const void *, size_t, int) = (__typeof__(rt_memcpy))dlsym(rt, "cudaMemcpy");
  if (!rt_malloc || !rt_memset_async || !rt_sync || !rt_memcpy)
    return FAIL("libcudart functions missing");
  void *d = NULL;
  static unsigned char back[2048];
  if (rt_malloc(&d, sizeof back) || rt_memset_async(d, 5, sizeof back, NULL) || rt_sync(NULL) ||
      rt_memcpy(back, d, sizeof back, 2 /* cudaMemcpyDeviceToHost */))
    return FAIL("runtime calls");
  printf("xla: back[0]=%d back[2047]=%d\n", back[0], back[2047]);
  return 0;
}

static int run_procaddr(void) {
  CUfunction f1, f2, f3;
  if (dt_setup(&f1, "v1_kernel"))
    return 1;
  CUresult (*get_fn)(CUfunction *, CUmodule, const char *) =
      (__typeof__(get_fn))dt_sym("cuModuleGetFunction");
  CUresult (*load)(CUmodule *, const void *) = (__typeof__(load))dt_sym("cuModuleLoadData");
  CUmodule mod;
  if (load(&mod, "dt_app image 2") || get_fn(&f2, mod, "v2_kernel") ||
      get_fn(&f3, mod, "pt_kernel"))
    return FAIL("functions");
  get_proc4_fn gp4 = (get_proc4_fn)dt_sym("cuGetProcAddress");
  get_proc5_fn gp5 = (get_proc5_fn)dt_sym("cuGetProcAddress_v2");
  if (!gp4 || !gp5)
    return FAIL("no cuGetProcAddress");
  void *p = NULL;
  CUdriverProcAddressQueryResult st;
  /* 4-argument form, CUDA 11.3 ABI */
  if (gp4("cuLaunchKernel", &p, 11030, 0) || dt_launch_n((launch_fn)p, f1, 5))
    return 1;
  /* cuGetProcAddress asked for itself: the 5-argument form at 12000 */
  get_proc5_fn self5 = NULL;
  if (gp5("cuGetProcAddress", (void **)&self5, 12000, 0, &st) || !self5)
    return FAIL("cuGetProcAddress at 12000");
  p = NULL;
  if (self5("cuLaunchKernel", &p, 12000, 0, &st) || dt_launch_n((launch_fn)p, f2, 5))
    return 1;
  p = NULL;
  if (self5("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ||
      dt_launch_n((launch_fn)p, f3, 5))
    return 1;
  /* ... and the 4-argument form at 11030 */
  get_proc4_fn self4 = NULL;
  if (gp5("cuGetProcAddress", (void **)&self4, 11030, 0, &st) || !self4)
    return FAIL("cuGetProcAddress at 11030");
  p = NULL;
  if (self4("cuLaunchKernel", &p, 11030, 0) || dt_launch_n((launch_fn)p, f1, 5))
    return 1;
  /* a name that does not exist stays unanswered */
  p = (void *)1;
  CUresult r = gp5("cuNoSuchFunction", &p, 12000, 0, &st);
  printf("procaddr: 20 launches; unknown name: result %d status %d null %d\n", (int)r, (int)st,
         p == NULL);
  return dt_ctx_sync();
}

static int run_dlsym(void) {
  void *next_getpid = dlsym(RTLD_NEXT, "getpid");
  void *default_getpid = dlsym(RTLD_DEFAULT, "getpid");
  if (!next_getpid || next_getpid != default_getpid || next_getpid != (void *)&getpid)
    return FAIL("getpid: next %p default %p", next_getpid, default_getpid);
  /* RTLD_NEXT from the program skips the program itself; RTLD_DEFAULT does not. */
  if (dlsym(RTLD_NEXT, "dt_app_own_symbol") != NULL)
    return FAIL("RTLD_NEXT found the program's own symbol");
  if (dlsym(RTLD_DEFAULT, "dt_app_own_symbol") != (void *)&dt_app_own_symbol)
    return FAIL("RTLD_DEFAULT missed the program's own symbol");
  if (dlsym(RTLD_DEFAULT, "dt_no_such_symbol_anywhere") != NULL || !dlerror())
    return FAIL("missing symbol found, or no dlerror");
  void *v = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.34");
  if (!v)
    v = dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
  if (!v)
    return FAIL("dlvsym(RTLD_DEFAULT, dlsym) failed");
  CUfunction f;
  if (dt_setup(&f, "default_kernel"))
    return 1;
  launch_fn launch = (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
  if (dt_launch_n(launch, f, 3))
    return 1;
  printf("dlsym: RTLD_NEXT and RTLD_DEFAULT answers right; 3 launches\n");
  return dt_ctx_sync();
}

static int run_hidden(void) {
  get_proc5_fn gp5 = (get_proc5_fn)dt_sym("cuGetProcAddress_v2");
  void *init = NULL;
  CUdriverProcAddressQueryResult st;
  if (!gp5 || gp5("cuInit", &init, 12000, 0, &st) || !init)
    return FAIL("no cuInit");
  printf("hidden: cuInit %d\n", (int)((CUresult(*)(unsigned))init)(0));
  return 0;
}

int main(int argc, char **argv) {
#ifndef DT_LOCAL_ONLY
  if (argc == 3 && !strcmp(argv[1], "bench")) {
    dt_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return dt_libcuda ? dt_run_bench(atol(argv[2])) : FAIL("dlopen libcuda.so.1");
  }
  if (argc == 3 && !strcmp(argv[1], "bench_vmm"))
    return dt_bench_vmm(atol(argv[2]));
  if (argc == 3 && !strcmp(argv[1], "bench_alloc")) {
    dt_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return dt_libcuda ? dt_run_bench_alloc(atol(argv[2])) : FAIL("dlopen libcuda.so.1");
  }
#endif
  if (argc == 3 && !strcmp(argv[1], "extension")) {
    void *ext = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    int (*work)(void) = ext ? (int (*)(void))dlsym(ext, "dt_ext_work") : NULL;
    if (!work)
      return FAIL("extension %s: %s", argv[2], dlerror());
    printf("extension: dt_ext_work %d\n", work());
    return 0;
  }
  if (argc == 3 && !strcmp(argv[1], "xla")) {
    dt_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return dt_libcuda ? run_xla(argv[2]) : FAIL("dlopen libcuda.so.1");
  }
  if (argc != 2)
    return FAIL("usage: dt_app triton|linked|shapes|procaddr|dlsym|hidden|xla [PATH]");
  dt_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!dt_libcuda)
    return FAIL("dlopen libcuda.so.1: %s", dlerror());
  const char *m = argv[1];
  return !strcmp(m, "triton")     ? run_triton()
#ifndef DT_LOCAL_ONLY
         : !strcmp(m, "linked")   ? dt_run_linked()
         : !strcmp(m, "shapes")   ? dt_run_shapes()
         : !strcmp(m, "graph")    ? dt_run_graph()
         : !strcmp(m, "alloc")    ? dt_run_alloc()
         : !strcmp(m, "vmm")      ? dt_run_vmm()
#endif
         : !strcmp(m, "procaddr") ? run_procaddr()
         : !strcmp(m, "xla")      ? run_xla("libcudart.so.13")
         : !strcmp(m, "dlsym")    ? run_dlsym()
         : !strcmp(m, "hidden")   ? run_hidden()
         : !strcmp(m, "default_local") ? run_default_local()
                                  : FAIL("unknown mode %s", m);
}
