/* hk_late_shim: makes the host late inside a launch call, between the tracer's
 * wrapper (which has already decided how to time the operation) and the
 * submission. Preloaded after libtrace.so, it stands between the tracer and the
 * runtime for __cudaLaunchKernel (what nvcc-13 <<<>>> stubs call), cudaLaunchKernel,
 * cuMemcpyHtoDAsync_v2 (reached by the program through dlsym, the simulated
 * libcuda.so.1 being loaded RTLD_LOCAL by the runtime), cudaMemcpyAsync, cudaMemsetAsync and
 * cudaGraphLaunch: when the program armed it (hk_late_arm), the calling thread's
 * next one of these calls sleeps that long before forwarding, as a host
 * descheduled there would; armed with hk_late_arm_after, it sleeps after the
 * runtime returned (the work went out on time, the call returns late). */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <time.h>

static __thread unsigned armed_us, armed_after_us;

/* The calling thread's next call of a shimmed entry point sleeps `us` microseconds
 * before it reaches the runtime. */
__attribute__((visibility("default"))) void hk_late_arm(unsigned us) { armed_us = us; }

/* The calling thread's next call of a shimmed entry point sleeps `us` microseconds
 * after the runtime returned (the work was submitted on time). */
__attribute__((visibility("default"))) void hk_late_arm_after(unsigned us) { armed_after_us = us; }

/* Sleeps *us microseconds (the whole time, through interruptions), then disarms. */
static void sleep_armed(unsigned *us) {
  if (!*us)
    return;
  struct timespec left = {*us / 1000000, (long)(*us % 1000000) * 1000L};
  *us = 0;
  while (nanosleep(&left, &left) != 0) {
  }
}

#define FORWARD(sym, ...)                                                          \
  __typeof__(&sym) real = (__typeof__(&sym))dlsym(RTLD_NEXT, #sym);                 \
  if (!real)                                                                       \
    return cudaErrorSharedObjectSymbolNotFound;                                    \
  sleep_armed(&armed_us);                                                          \
  cudaError_t r = real(__VA_ARGS__);                                               \
  sleep_armed(&armed_after_us);                                                    \
  return r

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t smem, cudaStream_t stream);

__attribute__((visibility("default"))) cudaError_t
__cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                   cudaStream_t stream) {
  FORWARD(__cudaLaunchKernel, kernel, grid, block, args, smem, stream);
}

__attribute__((visibility("default"))) cudaError_t
cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                 cudaStream_t stream) {
  FORWARD(cudaLaunchKernel, func, grid, block, args, smem, stream);
}

__attribute__((visibility("default"))) cudaError_t
cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                cudaStream_t stream) {
  FORWARD(cudaMemcpyAsync, dst, src, count, kind, stream);
}

__attribute__((visibility("default"))) cudaError_t
cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream) {
  FORWARD(cudaMemsetAsync, dst, value, count, stream);
}

__attribute__((visibility("default"))) cudaError_t cudaGraphLaunch(cudaGraphExec_t exec,
                                                                   cudaStream_t stream) {
  FORWARD(cudaGraphLaunch, exec, stream);
}

/* The driver's own definition: libcuda.so.1 is loaded RTLD_LOCAL by the runtime, so
 * RTLD_NEXT may not see it. */
static void *driver_symbol(const char *name) {
  void *next = dlsym(RTLD_NEXT, name);
  void *lib = next ? NULL : dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (lib) {
    next = dlsym(lib, name);
    dlclose(lib);
  }
  return next;
}

__attribute__((visibility("default"))) CUresult
cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  __typeof__(&cuMemcpyHtoDAsync_v2) real =
      (__typeof__(&cuMemcpyHtoDAsync_v2))driver_symbol("cuMemcpyHtoDAsync_v2");
  if (!real)
    return CUDA_ERROR_NOT_FOUND;
  sleep_armed(&armed_us);
  CUresult r = real(dst, src, bytes, stream);
  sleep_armed(&armed_after_us);
  return r;
}
