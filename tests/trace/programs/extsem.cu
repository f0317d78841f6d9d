/* A stream that waits on external semaphores (test_extsem.py). Two semaphores are
 * imported (timeline semaphores; the simulator does not use the handle). On stream s1
 * (non-blocking), in this order:
 *   es_before                                          (1 ms in the test)
 *   1 cudaWaitExternalSemaphoresAsync   sem A, value 5: never signalled by CUDA, so its
 *                                       producer outside CUDA signals it
 *                                       SIMCUDA_EXTSEM_US (300 ms in the test) later
 *   es_after                                           (2 ms)
 *   2 cudaSignalExternalSemaphoresAsync sem A, value 9
 *   (cudaStreamSynchronize(s1): the host catches up, so that call 4's wait starts later)
 *   3 cuWaitExternalSemaphoresAsync_ptsz (cuGetProcAddress_v2, per-thread flag) sem A,
 *                                       value 9: signalled by call 2 on s1 itself, no wait
 *   4 cuWaitExternalSemaphoresAsync     sems B and A, values 1 and 9: B's producer signals
 *                                       300 ms later
 *   5 cuSignalExternalSemaphoresAsync   sem B, value 3
 *   es_last                                            (1 ms)
 *   6 cudaWaitExternalSemaphoresAsync   a destroyed semaphore: fails
 *                                       (cudaErrorInvalidResourceHandle)
 * then cudaStreamSynchronize(s1). Prints s1's handle and "extsem: ok" when every call
 * gave its planted result. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_proc.h"

__global__ void es_before(int *p) { if (p) *p = 0; }
__global__ void es_after(int *p) { if (p) *p = 0; }
__global__ void es_last(int *p) { if (p) *p = 0; }

static int failed;

static void expect(cudaError_t e, cudaError_t want, const char *what) {
  if (e != want) {
    fprintf(stderr, "extsem: %s: %s\n", what, cudaGetErrorString(e));
    failed = 1;
  }
}

typedef CUresult (*wait_fn)(const CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *,
                            unsigned, CUstream);
typedef CUresult (*signal_fn)(const CUexternalSemaphore *, const CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS *,
                              unsigned, CUstream);

static cudaExternalSemaphore_t import_one(void) {
  cudaExternalSemaphoreHandleDesc desc;
  memset(&desc, 0, sizeof desc);
  desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
  desc.handle.fd = 3;
  cudaExternalSemaphore_t sem = NULL;
  expect(cudaImportExternalSemaphore(&sem, &desc), cudaSuccess, "cudaImportExternalSemaphore");
  return sem;
}

/* `extsem loop N WHAT` (bench/callgrind_launch.py): N calls on one non-blocking stream of
 * WHAT: signal (cudaSignalExternalSemaphoresAsync of one semaphore), wait
 * (cudaWaitExternalSemaphoresAsync of it, value 0: satisfied by the first signal) or
 * driver_wait (cuWaitExternalSemaphoresAsync, the same). */
static int loop(int n, const char *what) {
  cudaStream_t s;
  expect(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess, "stream");
  cudaExternalSemaphore_t a = import_one();
  CUexternalSemaphore da = (CUexternalSemaphore)a;
  wait_fn wait = (wait_fn)driver_proc("cuWaitExternalSemaphoresAsync", 10000, 0);
  cudaExternalSemaphoreWaitParams wp;
  cudaExternalSemaphoreSignalParams sp;
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS dwp;
  memset(&wp, 0, sizeof wp);
  memset(&sp, 0, sizeof sp);
  memset(&dwp, 0, sizeof dwp);
  expect(cudaSignalExternalSemaphoresAsync(&a, &sp, 1, s), cudaSuccess, "signal");
  for (int i = 0; i < n && !failed; i++) {
    if (!strcmp(what, "signal"))
      expect(cudaSignalExternalSemaphoresAsync(&a, &sp, 1, s), cudaSuccess, "signal");
    else if (!strcmp(what, "wait"))
      expect(cudaWaitExternalSemaphoresAsync(&a, &wp, 1, s), cudaSuccess, "wait");
    else if (wait)
      failed |= wait(&da, &dwp, 1, (CUstream)s) != CUDA_SUCCESS;
    else
      failed = 1;
  }
  expect(cudaStreamSynchronize(s), cudaSuccess, "sync");
  return failed;
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "loop")) return loop(atoi(argv[2]), argv[3]);
  cudaStream_t s1;
  expect(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess, "stream");
  cudaExternalSemaphore_t a = import_one(), b = import_one(), gone = import_one();
  expect(cudaDestroyExternalSemaphore(gone), cudaSuccess, "cudaDestroyExternalSemaphore");
  wait_fn wait_ptsz = (wait_fn)driver_proc("cuWaitExternalSemaphoresAsync", 10000, 2);
  wait_fn wait = (wait_fn)driver_proc("cuWaitExternalSemaphoresAsync", 10000, 0);
  signal_fn signal = (signal_fn)driver_proc("cuSignalExternalSemaphoresAsync", 10000, 0);
  if (!wait_ptsz || !wait || !signal) {
    fprintf(stderr, "extsem: a driver entry point is missing\n");
    return 1;
  }
  cudaExternalSemaphoreWaitParams wp;
  cudaExternalSemaphoreSignalParams sp;
  CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS dwp[2];
  CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS dsp;
  memset(&wp, 0, sizeof wp);
  memset(&sp, 0, sizeof sp);
  memset(dwp, 0, sizeof dwp);
  memset(&dsp, 0, sizeof dsp);

  es_before<<<1, 32, 0, s1>>>(NULL);
  wp.params.fence.value = 5;
  expect(cudaWaitExternalSemaphoresAsync(&a, &wp, 1, s1), cudaSuccess, "1 wait");
  es_after<<<1, 32, 0, s1>>>(NULL);
  sp.params.fence.value = 9;
  expect(cudaSignalExternalSemaphoresAsync(&a, &sp, 1, s1), cudaSuccess, "2 signal");
  expect(cudaStreamSynchronize(s1), cudaSuccess, "sync after 2");
  dwp[0].params.fence.value = 9;
  CUexternalSemaphore da = (CUexternalSemaphore)a, db = (CUexternalSemaphore)b;
  if (wait_ptsz(&da, dwp, 1, (CUstream)s1) != CUDA_SUCCESS) failed = 1;
  CUexternalSemaphore both[2] = {db, da};
  dwp[0].params.fence.value = 1;
  dwp[1].params.fence.value = 9;
  if (wait(both, dwp, 2, (CUstream)s1) != CUDA_SUCCESS) failed = 1;
  dsp.params.fence.value = 3;
  if (signal(&db, &dsp, 1, (CUstream)s1) != CUDA_SUCCESS) failed = 1;
  es_last<<<1, 32, 0, s1>>>(NULL);
  expect(cudaWaitExternalSemaphoresAsync(&gone, &wp, 1, s1), cudaErrorInvalidResourceHandle,
         "6 wait");
  cudaGetLastError();
  expect(cudaStreamSynchronize(s1), cudaSuccess, "sync");
  expect(cudaDestroyExternalSemaphore(a), cudaSuccess, "destroy a");
  expect(cudaDestroyExternalSemaphore(b), cudaSuccess, "destroy b");
  if (failed) return 1;
  printf("stream %p\nextsem: ok\n", (void *)s1);
  return 0;
}
