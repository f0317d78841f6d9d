/*
 * A shared library that stk_app loads with dlopen after its first stacks (stk_app
 * settle PLUGIN): its call site lies in an object loaded after the tracer listed the
 * modules, so the stack's pc is outside every known one and the tracer must scan
 * again and describe this library in a MODULE record before the STACK record.
 */
#include <cuda_runtime_api.h>

#define BYTES 4096

/* cudaMemsetAsync on dev from this library's code; returns the CUDA result. */
__attribute__((visibility("default"), noinline)) int stk_plugin_site(void *dev) {
  int r = (int)cudaMemsetAsync(dev, 9, BYTES, 0);
  __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a tail call */
  return r;
}
