/*
 * Kernel attributes and theoretical occupancy (format 1.6). The first launch of a
 * function handle writes its KERNEL_ATTR record (registers per thread, static shared
 * memory, local memory, ... as cuFuncGetAttribute / cudaFuncGetAttributes say); the
 * first launch of each (function, device, threads per block, dynamic shared memory)
 * writes an OCCUPANCY record with what cuOccupancyMaxActiveBlocksPerMultiprocessor /
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor say. Both are cached: a repeated launch
 * pays two thread-local compares (ctph_launch_attr, inline in hooks_internal.h), a new
 * shape of a known function two lock-free map lookups.
 *
 * Driver launches query the driver through the tracer's own resolved pointers
 * (ctph_drv, never our wrappers). Runtime launches name a host stub or a cudaKernel_t,
 * which only the runtime can turn into a function in every CUDA version, so they ask
 * the runtime (its real entry points, dlsym RTLD_NEXT: ours are not hooked) after the
 * launch succeeded, and only when cudaPeekAtLastError says no error is pending; a
 * query that fails anyway is cleared with cudaGetLastError, which leaves the
 * program's last error exactly as it was (cudaSuccess). With an error pending the
 * lookup waits for a later launch.
 */
#include <string.h>

#include "driver_internal.h"
#include "../hooks/map.h"

#define ATTR_FAILED UINT64_MAX /* the handle's attributes could not be had */

/* (handle, its name's string id << 9 | device << 1 | 0 driver / 1 runtime) -> v1
 * KERNEL_ATTR id (or ATTR_FAILED), v2 the CUfunction to ask for occupancy (driver
 * handles). The name is in the key because a host stub registered again (a module
 * reloaded at the same address, hooks/names.c) names another kernel; the device because
 * a host stub or CUkernel runs other code on a GPU of another architecture (the runtime
 * and cuFuncGetAttribute answer for the current device). */
static struct ctph_map functions = CTPH_MAP_INIT(8);
/* (attr id | device << 48, threads per block | dynamic shared memory << 16) -> v1 1 */
static struct ctph_map shapes = CTPH_MAP_INIT(8);
static uint64_t last_attr_id;

__thread struct ctph_last_shape ctph_last_shape;

/* ---------------------------------------------------------------- the runtime */

struct runtime_fns {
  cudaError_t (*peek)(void);
  cudaError_t (*get_last)(void);
  cudaError_t (*attributes)(struct cudaFuncAttributes *, const void *);
  cudaError_t (*occupancy)(int *, const void *, int, size_t);
};
static struct runtime_fns rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void resolve_runtime(void) {
  rt.peek = (__typeof__(rt.peek))ctph_real_by_name("cudaPeekAtLastError");
  rt.get_last = (__typeof__(rt.get_last))ctph_real_by_name("cudaGetLastError");
  rt.attributes = (__typeof__(rt.attributes))ctph_real_by_name("cudaFuncGetAttributes");
  rt.occupancy = (__typeof__(rt.occupancy))ctph_real_by_name(
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
}

/* 1 when the runtime may be asked now: its functions exist and no error is pending
 * (asking could otherwise replace the program's pending error by ours). */
static int runtime_quiet(void) {
  pthread_once(&rt_once, resolve_runtime);
  return rt.peek && rt.get_last && rt.peek() == cudaSuccess;
}

/* Fills a from cudaFuncGetAttributes: 1 done, 0 failed for good, -1 not now. */
static int runtime_attributes(const void *func, struct ct_kernel_attr *a) {
  if (!runtime_quiet())
    return -1;
  if (!rt.attributes)
    return 0;
  struct cudaFuncAttributes fa;
  memset(&fa, 0, sizeof fa);
  if (rt.attributes(&fa, func) != cudaSuccess) {
    rt.get_last(); /* the error was ours: clear it */
    return 0;
  }
  a->regs = (uint64_t)fa.numRegs;
  a->static_smem = fa.sharedSizeBytes;
  a->local_bytes = fa.localSizeBytes;
  a->const_bytes = fa.constSizeBytes;
  a->max_threads = (uint64_t)fa.maxThreadsPerBlock;
  a->max_dyn_smem = (uint64_t)fa.maxDynamicSharedSizeBytes;
  a->ptx_version = (uint64_t)fa.ptxVersion;
  a->binary_version = (uint64_t)fa.binaryVersion;
  return 1;
}

/* Resident blocks per SM from the runtime: >= 0, or -1 failed for good, -2 not now. */
static int runtime_occupancy(const void *func, unsigned threads, size_t dyn_smem) {
  if (!runtime_quiet())
    return -2;
  int blocks = 0;
  if (!rt.occupancy)
    return -1;
  if (rt.occupancy(&blocks, func, (int)threads, dyn_smem) != cudaSuccess) {
    rt.get_last();
    return -1;
  }
  return blocks < 0 ? 0 : blocks;
}

/* ---------------------------------------------------------------- the driver */

/* Fills a from cuFuncGetAttribute on f, or on the function of f taken as a CUkernel
 * (cuda.h lets a launch pass either); *fn_out is the CUfunction asked. 1 or 0. */
static int driver_attributes(CUfunction f, struct ct_kernel_attr *a, CUfunction *fn_out) {
  if (!ctph_driver_load() || !ctph_drv.FuncGetAttribute)
    return 0;
  int v = 0;
  if (ctph_drv.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) != CUDA_SUCCESS) {
    CUfunction of_kernel = NULL;
    if (!ctph_drv.KernelGetFunction ||
        ctph_drv.KernelGetFunction(&of_kernel, (CUkernel)f) != CUDA_SUCCESS || !of_kernel ||
        ctph_drv.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, of_kernel) != CUDA_SUCCESS)
      return 0;
    f = of_kernel;
  }
  *fn_out = f;
  a->regs = (uint64_t)v;
  static const CUfunction_attribute more[7] = {
      CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,     CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
      CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,      CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_PTX_VERSION,
      CU_FUNC_ATTRIBUTE_BINARY_VERSION};
  uint64_t *out[7] = {&a->static_smem, &a->local_bytes, &a->const_bytes, &a->max_threads,
                      &a->max_dyn_smem, &a->ptx_version, &a->binary_version};
  for (int i = 0; i < 7; i++) {
    v = 0;
    if (ctph_drv.FuncGetAttribute(&v, more[i], f) != CUDA_SUCCESS || v < 0)
      v = 0;
    *out[i] = (uint64_t)v;
  }
  return 1;
}

/* Resident blocks per SM from the driver: >= 0, or -1 when it cannot say. */
static int driver_occupancy(CUfunction f, unsigned threads, size_t dyn_smem) {
  int blocks = 0;
  if (!f || !ctph_drv.OccupancyMaxActiveBlocksPerMultiprocessor ||
      ctph_drv.OccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, (int)threads, dyn_smem) !=
          CUDA_SUCCESS)
    return -1;
  return blocks < 0 ? 0 : blocks;
}

/* ---------------------------------------------------------------- the caches */

/* The KERNEL_ATTR id of handle (0 unknown), writing its record at first sight; *fn
 * is the CUfunction to ask for occupancy (driver handles); *final is 1 unless the
 * runtime must be asked again later. */
static uint64_t function_attr(const void *handle, int runtime, uint64_t name, int device,
                              CUfunction *fn, int *final) {
  *final = 0;
  uint64_t key2 = (name & (UINT64_MAX >> 10)) << 9 | (uint64_t)(device & 0xff) << 1 |
                  (uint64_t)runtime;
  struct ctph_map_slot *s = ctph_map_find(&functions, (uintptr_t)handle, key2);
  if (!s) {
    struct ct_kernel_attr a;
    memset(&a, 0, sizeof a);
    CUfunction asked = NULL;
    int got = runtime ? runtime_attributes(handle, &a)
                      : driver_attributes((CUfunction)handle, &a, &asked);
    if (got < 0)
      return 0; /* not now: a later launch asks again */
    uint64_t id = got ? __atomic_add_fetch(&last_attr_id, 1, __ATOMIC_RELAXED) : ATTR_FAILED;
    int inserted = 0;
    s = ctph_map_insert(&functions, (uintptr_t)handle, key2, id,
                        (uintptr_t)asked, &inserted);
    if (!s)
      return 0;
    if (inserted && got) {
      a.id = id;
      a.name = name;
      ct_record r = {.kind = CT_KIND_KERNEL_ATTR};
      r.u.kernel_attr = a;
      ctp_emit(&r);
    }
  }
  *final = 1;
  uint64_t id = __atomic_load_n(&s->v1, __ATOMIC_RELAXED);
  *fn = (CUfunction)(uintptr_t)__atomic_load_n(&s->v2, __ATOMIC_RELAXED);
  return id == ATTR_FAILED ? 0 : id;
}

/* Writes the OCCUPANCY record of a shape at its first sight. 1 when the shape is
 * settled (written, or known not to be had), 0 when the runtime must be asked later. */
static int shape_occupancy(uint64_t attr, const void *handle, int runtime, CUfunction fn,
                           unsigned threads, size_t dyn_smem, int device) {
  uint64_t key = attr | (uint64_t)(unsigned)device << 48;
  uint64_t key2 = (uint64_t)threads | (uint64_t)dyn_smem << 16;
  if (key2 >> 63 || ctph_map_find(&shapes, key, key2))
    return 1;
  int blocks = runtime ? runtime_occupancy(handle, threads, dyn_smem)
                       : driver_occupancy(fn, threads, dyn_smem);
  if (blocks == -2)
    return 0;
  int inserted = 0;
  if (!ctph_map_insert(&shapes, key, key2, 1, 0, &inserted))
    return 0;
  if (inserted && blocks >= 0) {
    ct_record r = {.kind = CT_KIND_OCCUPANCY};
    r.u.occupancy = (struct ct_occupancy){.attr = attr, .device = (uint64_t)device,
                                          .block_threads = threads, .dyn_smem = dyn_smem,
                                          .blocks_per_sm = (uint64_t)blocks};
    ctp_emit(&r);
  }
  return 1;
}

uint64_t ctph_launch_attr_slow(const void *handle, int runtime, uint64_t name, unsigned threads,
                               size_t dyn_smem, int device, uint64_t key) {
  if (!handle)
    return 0;
  int saved = errno;
  /* The queries are no stream work, but a global-mode capture forbids the calls the
   * driver deems unsafe, and which those are is not documented call by call: while any
   * capture is active the thread asks in relaxed mode (as call.c records its events)
   * and gets its own mode back after. */
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  int relaxed = CTP_UNLIKELY(__atomic_load_n(&ctph_captures_active, __ATOMIC_RELAXED)) &&
                ctph_drv.ThreadExchangeStreamCaptureMode &&
                ctph_drv.ThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
  CUfunction fn = NULL;
  int settled = 0;
  uint64_t attr = function_attr(handle, runtime, name, device < 0 ? 0 : device, &fn, &settled);
  if (attr)
    settled = shape_occupancy(attr, handle, runtime, fn, threads, dyn_smem,
                              device < 0 ? 0 : device);
  if (settled && key) {
    ctph_last_shape.handle = handle;
    ctph_last_shape.name = name;
    ctph_last_shape.key = key;
    ctph_last_shape.attr = attr;
  }
  if (relaxed)
    ctph_drv.ThreadExchangeStreamCaptureMode(&mode);
  errno = saved;
  return attr;
}
