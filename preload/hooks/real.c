/*
 * Resolution of the real functions, in one place:
 * - every hooks.def entry point: dlsym(RTLD_NEXT, name), on first use, cached; when
 *   the global scope has none, the definition in a library loaded RTLD_LOCAL;
 * - the driver functions the tracer itself calls (events, contexts, pointer
 *   attributes): from libcuda.so.1 through cuGetProcAddress_v2, the way libcudart
 *   reaches the driver (see /work/shared/notes/cuda-interception.md, section 2),
 *   so the tracer never calls cudart and never disturbs cudaGetLastError.
 */
#include "hooks_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void *ctph_real_table[CTPH_ID_COUNT];
static uint64_t hook_name_ids[CTPH_ID_COUNT];

static const char *const hook_names[CTPH_ID_COUNT] = {
#define CT_HOOK(sym, layer, category) #sym,
#include "cutrace/hooks.def"
#undef CT_HOOK
};

const char *ctph_hook_name(enum ctph_id id) {
  return (unsigned)id < CTPH_ID_COUNT ? hook_names[id] : "?";
}

/* Names of the loaded objects (dl_iterate_phdr), collected so that nothing is
 * dlopen'ed while the loader's lock is held (a Python process with PyTorch maps
 * hundreds of objects: the list grows as needed). */
struct loaded_names {
  char **names;
  unsigned n, cap;
};

static int collect_name(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  struct loaded_names *ln = arg;
  if (!info->dlpi_name || !info->dlpi_name[0])
    return 0;
  if (ln->n == ln->cap) {
    unsigned cap = ln->cap ? ln->cap * 2 : 256;
    char **grown = realloc(ln->names, cap * sizeof *grown);
    if (!grown)
      return 1; /* what was collected is searched */
    ln->names = grown;
    ln->cap = cap;
  }
  ln->names[ln->n++] = strdup(info->dlpi_name);
  return 0;
}

/*
 * The definition of name in a loaded shared object other than libtrace.so, first in
 * load order, or NULL. dlsym(RTLD_NEXT) only searches the global scope; a library
 * loaded RTLD_LOCAL (libcudart as the dependency of a Python extension, XLA's
 * dlopen'ed cuBLAS) is not in it, yet its users reach our exported wrapper first,
 * which must then forward to that library's function, not fail.
 */
static void *local_definition(const char *name) {
  Dl_info self;
  if (!dladdr((void *)&local_definition, &self) || !self.dli_fname)
    return NULL;
  struct loaded_names ln = {NULL, 0, 0};
  dl_iterate_phdr(collect_name, &ln);
  void *found = NULL;
  for (unsigned i = 0; i < ln.n; i++) {
    if (!found && ln.names[i] && strcmp(ln.names[i], self.dli_fname) != 0) {
      void *h = dlopen(ln.names[i], RTLD_LAZY | RTLD_NOLOAD);
      void *fn = h ? dlsym(h, name) : NULL;
      Dl_info at;
      /* defined by this object itself, not found among its dependencies */
      if (fn && dladdr(fn, &at) && at.dli_fname && strcmp(at.dli_fname, ln.names[i]) == 0)
        found = fn;
      if (h)
        dlclose(h);
    }
    free(ln.names[i]);
  }
  free(ln.names);
  return found;
}

void *ctph_real_by_name(const char *name) {
  int saved = errno;
  void *fn = dlsym(RTLD_NEXT, name);
  if (!fn)
    fn = local_definition(name);
  errno = saved;
  return fn;
}

void *ctph_real_resolve(enum ctph_id id) {
  if ((unsigned)id >= CTPH_ID_COUNT)
    return NULL;
  void *fn = ctph_real_by_name(hook_names[id]);
  /* A missing symbol is not cached: the library may be dlopened later. */
  if (fn)
    __atomic_store_n(&ctph_real_table[id], fn, __ATOMIC_RELEASE);
  return fn;
}

uint64_t ctph_hook_name_id(enum ctph_id id) {
  uint64_t v = __atomic_load_n(&hook_name_ids[id], __ATOMIC_RELAXED);
  if (CTP_LIKELY(v))
    return v;
  v = ctp_intern(hook_names[id]);
  __atomic_store_n(&hook_name_ids[id], v, __ATOMIC_RELAXED);
  return v;
}

/* ---------------------------------------------------------------- driver */

struct ctph_driver ctph_drv;
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

/* One driver function: the cuGetProcAddress name, its exported fallback name,
 * whether the per-thread-default-stream variant is wanted, and the CUDA version
 * whose ABI the member's prototype is (cuGetProcAddress answers per version:
 * "cuCtxGetDevice" at 13000 is cuCtxGetDevice_v2, which takes a context too). */
struct driver_sym {
  const char *name, *exported;
  int per_thread, version;
  size_t offset;
};

#define DRV(member, name, exported, pt, version) \
  {name, exported, pt, version, offsetof(struct ctph_driver, member)}
static const struct driver_sym driver_syms[] = {
    DRV(CtxGetCurrent, "cuCtxGetCurrent", "cuCtxGetCurrent", 0, 4000),
    DRV(CtxSetCurrent, "cuCtxSetCurrent", "cuCtxSetCurrent", 0, 4000),
    DRV(CtxGetDevice, "cuCtxGetDevice", "cuCtxGetDevice", 0, 2000),
    DRV(CtxPushCurrent, "cuCtxPushCurrent", "cuCtxPushCurrent_v2", 0, 4000),
    DRV(CtxPopCurrent, "cuCtxPopCurrent", "cuCtxPopCurrent_v2", 0, 4000),
    DRV(DeviceGetName, "cuDeviceGetName", "cuDeviceGetName", 0, 2000),
    DRV(DeviceGetAttribute, "cuDeviceGetAttribute", "cuDeviceGetAttribute", 0, 2000),
    DRV(DeviceTotalMem, "cuDeviceTotalMem", "cuDeviceTotalMem_v2", 0, 3020),
    DRV(DriverGetVersion, "cuDriverGetVersion", "cuDriverGetVersion", 0, 2020),
    DRV(DeviceGetPCIBusId, "cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId", 0, 4010),
    DRV(DeviceGetUuid, "cuDeviceGetUuid", "cuDeviceGetUuid_v2", 0, 11040),
    DRV(EventCreate, "cuEventCreate", "cuEventCreate", 0, 2000),
    DRV(EventDestroy, "cuEventDestroy", "cuEventDestroy_v2", 0, 4000),
    DRV(EventRecord, "cuEventRecord", "cuEventRecord", 0, 2000),
    DRV(EventQuery, "cuEventQuery", "cuEventQuery", 0, 2000),
    DRV(EventSynchronize, "cuEventSynchronize", "cuEventSynchronize", 0, 2000),
    DRV(EventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2", 0, 12080),
    DRV(StreamCreate, "cuStreamCreate", "cuStreamCreate", 0, 2000),
    DRV(StreamIsCapturing, "cuStreamIsCapturing", "cuStreamIsCapturing", 0, 10000),
    DRV(StreamGetFlags, "cuStreamGetFlags", "cuStreamGetFlags", 0, 5050),
    DRV(StreamGetPriority, "cuStreamGetPriority", "cuStreamGetPriority", 0, 5050),
    DRV(StreamGetCtx, "cuStreamGetCtx", "cuStreamGetCtx", 0, 9020),
    DRV(ThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",
        "cuThreadExchangeStreamCaptureMode", 0, 10010),
    DRV(PointerGetAttributes, "cuPointerGetAttributes", "cuPointerGetAttributes", 0, 7000),
    DRV(GraphGetNodes, "cuGraphGetNodes", "cuGraphGetNodes", 0, 10000),
    DRV(GraphNodeGetType, "cuGraphNodeGetType", "cuGraphNodeGetType", 0, 10000),
    DRV(GraphKernelNodeGetParams, "cuGraphKernelNodeGetParams", "cuGraphKernelNodeGetParams_v2",
        0, 12000),
    DRV(GraphChildGraphNodeGetGraph, "cuGraphChildGraphNodeGetGraph",
        "cuGraphChildGraphNodeGetGraph", 0, 10000),
    DRV(FuncGetAttribute, "cuFuncGetAttribute", "cuFuncGetAttribute", 0, 2020),
    DRV(KernelGetFunction, "cuKernelGetFunction", "cuKernelGetFunction", 0, 12000),
    DRV(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
        "cuOccupancyMaxActiveBlocksPerMultiprocessor", 0, 6050),
    DRV(Array3DGetDescriptor, "cuArray3DGetDescriptor", "cuArray3DGetDescriptor_v2", 0, 3020),
};
#undef DRV

static void driver_load_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib)
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return;
  get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
  for (size_t i = 0; i < sizeof driver_syms / sizeof driver_syms[0]; i++) {
    const struct driver_sym *s = &driver_syms[i];
    void *fn = NULL;
    if (get_proc) {
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      cuuint64_t flags = s->per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                       : CU_GET_PROC_ADDRESS_DEFAULT;
      if (get_proc(s->name, &fn, s->version, flags, &status) != CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS)
        fn = NULL;
    }
    if (!fn)
      fn = dlsym(lib, s->exported);
    memcpy((char *)&ctph_drv + s->offset, &fn, sizeof fn);
  }
  int ok = ctph_drv.CtxGetCurrent && ctph_drv.EventCreate && ctph_drv.EventRecord &&
           ctph_drv.EventQuery && ctph_drv.EventElapsedTime && ctph_drv.EventSynchronize &&
           ctph_drv.CtxSetCurrent && ctph_drv.StreamCreate;
  __atomic_store_n(&ctph_drv.loaded, ok, __ATOMIC_RELEASE);
}

int ctph_driver_load(void) {
  if (CTP_LIKELY(__atomic_load_n(&ctph_drv.loaded, __ATOMIC_ACQUIRE)))
    return 1;
  int saved = errno;
  pthread_once(&driver_once, driver_load_once);
  errno = saved;
  return __atomic_load_n(&ctph_drv.loaded, __ATOMIC_ACQUIRE);
}
