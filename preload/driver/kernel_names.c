/*
 * Kernel names at the driver level: cuFuncGetName on the CUfunction a launch
 * receives, and cuKernelGetName when the handle is really a CUkernel (cuda.h lets
 * either be passed). Names are interned once per handle. The two functions are
 * resolved through cuGetProcAddress_v2 of libcuda.so.1 (version 12030) like the
 * tracer's other driver functions, so they never pass through our wrappers.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "driver_internal.h"
#include "../hooks/map.h"

typedef CUresult (*func_name_fn)(const char **, CUfunction);
typedef CUresult (*kernel_name_fn)(const char **, CUkernel);

static func_name_fn func_get_name;
static kernel_name_fn kernel_get_name;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
/* handle -> (v1 = string id) */
static struct ctph_map names = CTPH_MAP_INIT(10);

static void resolve_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib)
    return;
  CUresult (*get_proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
      (__typeof__(get_proc))dlsym(lib, "cuGetProcAddress_v2"); /* ours: passes through */
  if (!get_proc)
    return;
  CUdriverProcAddressQueryResult st;
  void *fn = NULL;
  if (get_proc("cuFuncGetName", &fn, 12030, 0, &st) == CUDA_SUCCESS && fn)
    func_get_name = (func_name_fn)fn;
  fn = NULL;
  if (get_proc("cuKernelGetName", &fn, 12030, 0, &st) == CUDA_SUCCESS && fn)
    kernel_get_name = (kernel_name_fn)fn;
}

static __thread CUfunction last_func;
static __thread uint64_t last_id;

uint64_t ctpd_function_name_id(CUfunction f) {
  if (!f)
    return 0;
  if (CTP_LIKELY(f == last_func && last_id))
    return last_id;
  struct ctph_map_slot *s = ctph_map_find(&names, (uintptr_t)f, 0);
  uint64_t id = s ? __atomic_load_n(&s->v1, __ATOMIC_RELAXED) : 0;
  if (!id) {
    int saved = errno;
    pthread_once(&names_once, resolve_once);
    const char *name = NULL;
    if (!func_get_name || func_get_name(&name, f) != CUDA_SUCCESS || !name) {
      name = NULL;
      if (kernel_get_name && kernel_get_name(&name, (CUkernel)f) != CUDA_SUCCESS)
        name = NULL;
    }
    id = name ? ctp_intern(name) : 0;
    if (id) {
      int inserted;
      ctph_map_insert(&names, (uintptr_t)f, 0, id, 0, &inserted);
    }
    errno = saved;
  }
  last_func = f, last_id = id;
  return id;
}
