/*
 * A program that shows it will use CUDA long before it records anything: it looks up
 * the simulated driver's entry points the way a runtime does (dlopen libcuda.so.1,
 * dlsym cuGetProcAddress_v2, cuGetProcAddress_v2 per function), waits SETTLE_MS, then
 * makes its first CUDA calls on a new thread. Run under LD_PRELOAD=libtrace.so with the
 * simulator (test_ring_want.py): that thread's first record should find a ready ring
 * (no TRACER "ring" span on it), made when the lookup told the tracer CUDA is coming.
 *
 * usage: ring_want SETTLE_MS   prints "thread_tid N" and "ok"
 */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
                                CUdriverProcAddressQueryResult *);

static CUresult (*init_fn)(unsigned);
static CUresult (*device_get_fn)(CUdevice *, int);
static CUresult (*retain_fn)(CUcontext *, CUdevice);
static CUresult (*set_current_fn)(CUcontext);
static CUresult (*alloc_fn)(CUdeviceptr *, size_t);
static CUresult (*free_fn)(CUdeviceptr);
static int calls_ok;

static void *first_cuda_calls(void *arg) {
  (void)arg;
  printf("thread_tid %ld\n", (long)syscall(SYS_gettid));
  CUdevice dev;
  CUcontext ctx;
  CUdeviceptr p;
  calls_ok = init_fn(0) == CUDA_SUCCESS && device_get_fn(&dev, 0) == CUDA_SUCCESS &&
             retain_fn(&ctx, dev) == CUDA_SUCCESS && set_current_fn(ctx) == CUDA_SUCCESS &&
             alloc_fn(&p, 4096) == CUDA_SUCCESS && free_fn(p) == CUDA_SUCCESS;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ring_want SETTLE_MS\n");
    return 2;
  }
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  get_proc_fn get_proc = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  if (!get_proc) {
    fprintf(stderr, "ring_want: no libcuda.so.1 with cuGetProcAddress_v2\n");
    return 1;
  }
  struct {
    const char *name;
    void **fn;
  } want[] = {{"cuInit", (void **)&init_fn},
              {"cuDeviceGet", (void **)&device_get_fn},
              {"cuDevicePrimaryCtxRetain", (void **)&retain_fn},
              {"cuCtxSetCurrent", (void **)&set_current_fn},
              {"cuMemAlloc", (void **)&alloc_fn},
              {"cuMemFree", (void **)&free_fn}};
  for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
    CUdriverProcAddressQueryResult status;
    if (get_proc(want[i].name, want[i].fn, 12000, 0, &status) != CUDA_SUCCESS || !*want[i].fn) {
      fprintf(stderr, "ring_want: no %s\n", want[i].name);
      return 1;
    }
  }
  unsigned long ms = strtoul(argv[1], NULL, 10);
  struct timespec settle = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
  nanosleep(&settle, NULL);
  pthread_t t;
  pthread_create(&t, NULL, first_cuda_calls, NULL);
  pthread_join(t, NULL);
  printf("%s\n", calls_ok ? "ok" : "a CUDA call failed");
  return calls_ok ? 0 : 1;
}
