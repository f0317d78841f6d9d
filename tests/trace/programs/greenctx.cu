// Green contexts and context-wide events (test_greenctx.py), simulated GPU, shared cudart,
// on device 1 of two (SIMCUDA_DEVICES=2). Device 1's SMs are split into groups of 64; a
// green context G is made from the first group, with a stream GS (cuGreenCtxStreamCreate),
// beside a created non-blocking stream PS of device 1's primary context P.
//   phase 1: the long gc_producer on PS; gc_warm on GS; cuCtxRecordEvent(P, e1) (found
//            with cuGetProcAddress), cuGreenCtxWaitEvent(G, e1) (found with dlsym), then
//            gc_consumer on GS: GS idles until gc_producer ends (another stream's work).
//            gc_consumer directly follows gc_warm on GS in the thread (event chaining).
//   phase 2: the same the other way: gc_green_long on GS, gc_warm on PS,
//            cuGreenCtxRecordEvent(G, e2), cuCtxWaitEvent(P, e2), gc_after on PS.
//   phase 3: G made current (cuCtxFromGreenCtx): gc_in_green on GS through the runtime,
//            then gc_green_null on the NULL stream (G's own); G popped, P current again:
//            gc_primary_null on the NULL stream (P's), which runs meanwhile.
//   failures: cuCtxWaitEvent(P, NULL) and cuGreenCtxRecordEvent(G, NULL) answer
//            CUDA_ERROR_INVALID_HANDLE (400).
// Prints "greenctx: ok"; exit status 1 when any call answered something unexpected (an
// event of a context-wide record still pending once its waiter's work finished: the
// simulated wait did not hold).
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>

#include "driver_proc.h"

#define CHECK(call)                                                                 \
  do {                                                                              \
    int e_ = (int)(call);                                                           \
    if (e_) {                                                                       \
      fprintf(stderr, "greenctx: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

__global__ void gc_warm(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void gc_producer(float *x) { x[threadIdx.x] *= 2.0f; }
__global__ void gc_consumer(float *x) { x[threadIdx.x] -= 1.0f; }
__global__ void gc_green_long(float *x) { x[threadIdx.x] *= 3.0f; }
__global__ void gc_after(float *x) { x[threadIdx.x] -= 2.0f; }
__global__ void gc_in_green(float *x) { x[threadIdx.x] += 5.0f; }
__global__ void gc_green_null(float *x) { x[threadIdx.x] += 6.0f; }
__global__ void gc_primary_null(float *x) { x[threadIdx.x] += 7.0f; }

typedef CUresult (*ctx_event_fn)(CUcontext, CUevent);
typedef CUresult (*green_event_fn)(CUgreenCtx, CUevent);

int main() {
  CHECK(cudaSetDevice(1));
  float *x;
  CHECK(cudaMalloc(&x, 1024 * sizeof *x));
  CUcontext primary;
  CHECK(cuCtxGetCurrent(&primary));
  CUdevResource all, groups[2], rest;
  unsigned n = 2;
  CHECK(cuDeviceGetDevResource(1, &all, CU_DEV_RESOURCE_TYPE_SM));
  CHECK(cuDevSmResourceSplitByCount(groups, &n, &all, &rest, 0, 64));
  CHECK(n != 2 || groups[0].sm.smCount != 64);
  CUdevResourceDesc desc;
  CHECK(cuDevResourceGenerateDesc(&desc, &groups[0], 1));
  CUgreenCtx green;
  CHECK(cuGreenCtxCreate(&green, desc, 1, CU_GREEN_CTX_DEFAULT_STREAM));
  CUstream gs;
  CHECK(cuGreenCtxStreamCreate(&gs, green, CU_STREAM_NON_BLOCKING, 0));
  cudaStream_t ps;
  CHECK(cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking));
  CUevent e1, e2, probe;
  CHECK(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
  CHECK(cuEventCreate(&probe, CU_EVENT_DISABLE_TIMING));

  // two routes: cuGetProcAddress (as a runtime finds them) and dlsym on libcuda
  ctx_event_fn ctx_record = (ctx_event_fn)driver_proc("cuCtxRecordEvent", 12050, 0);
  green_event_fn green_record = (green_event_fn)driver_proc("cuGreenCtxRecordEvent", 12040, 0);
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY);
  ctx_event_fn ctx_wait = lib ? (ctx_event_fn)dlsym(lib, "cuCtxWaitEvent") : NULL;
  green_event_fn green_wait = lib ? (green_event_fn)dlsym(lib, "cuGreenCtxWaitEvent") : NULL;
  CHECK(!ctx_record || !green_record || !ctx_wait || !green_wait);

  // phase 1: the green context waits for the primary's work
  gc_producer<<<1, 32, 0, ps>>>(x + 32);
  gc_warm<<<1, 32, 0, (cudaStream_t)gs>>>(x);
  CHECK(cudaGetLastError());
  CHECK(ctx_record(primary, e1));
  CHECK(green_wait(green, e1));
  gc_consumer<<<1, 32, 0, (cudaStream_t)gs>>>(x);
  CHECK(cudaGetLastError());
  CHECK(cuEventRecord(probe, gs));
  CHECK(cuEventSynchronize(probe));
  CHECK(cuEventQuery(e1));  // the producer's end was captured and has passed
  CHECK(cudaStreamSynchronize(ps));

  // phase 2: the primary context waits for the green context's work
  gc_green_long<<<1, 32, 0, (cudaStream_t)gs>>>(x + 96);
  gc_warm<<<1, 32, 0, ps>>>(x + 64);
  CHECK(cudaGetLastError());
  CHECK(green_record(green, e2));
  CHECK(ctx_wait(primary, e2));
  gc_after<<<1, 32, 0, ps>>>(x + 64);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(ps));
  CHECK(cuEventQuery(e2));

  // phase 3: the green context current, a launch on its stream through the runtime
  CUcontext as_ctx;
  CHECK(cuCtxFromGreenCtx(&as_ctx, green));
  CHECK(cuCtxPushCurrent(as_ctx));
  gc_in_green<<<1, 32, 0, (cudaStream_t)gs>>>(x + 128);
  CHECK(cudaGetLastError());
  CHECK(cuStreamSynchronize(gs));
  gc_green_null<<<1, 32>>>(x + 160);  // G's NULL stream
  CHECK(cudaGetLastError());
  CUcontext popped;
  CHECK(cuCtxPopCurrent(&popped));
  gc_primary_null<<<1, 32>>>(x + 192);  // P's NULL stream: not behind gc_green_null
  CHECK(cudaGetLastError());
  CHECK(cuCtxPushCurrent(as_ctx));
  CHECK(cuCtxSynchronize());
  CHECK(cuCtxPopCurrent(&popped));

  // failures, passed through with their results
  CHECK(ctx_wait(primary, NULL) != CUDA_ERROR_INVALID_HANDLE);
  CHECK(green_record(green, NULL) != CUDA_ERROR_INVALID_HANDLE);
  CHECK(cudaDeviceSynchronize());
  printf("greenctx: ok\n");
  return 0;
}
