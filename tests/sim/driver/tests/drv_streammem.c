/* The simulated driver's stream memory operations: a write lands and is timed on its
 * stream, a wait on another stream holds that stream until the write's GPU time, the
 * four wait conditions, a wait nothing will satisfy (CUDA_ERROR_NOT_SUPPORTED),
 * cuStreamBatchMemOp, the 8.0/9.0 and 11.7 ABIs through cuGetProcAddress, capture.
 * Timed while a blocker keeps the streams busy (as drv_timing does), so that a loaded
 * host's scheduling does not move the events. */
#include "drv_test.h"

#include <string.h>

void simcuda_hint_next_launch_ns(unsigned long long ns);

/* Launches f on stream for us microseconds. */
static CUresult test_launch_us(CUfunction f, CUstream stream, unsigned long long us)
{
  simcuda_hint_next_launch_ns(us * 1000ull);
  return cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
}

#define BLOCKER_MS 50
#define TOL_MS 0.002 /* four event ticks */

static void *proc(const char *name, int version)
{
  void *fn = NULL;
  CUdriverProcAddressQueryResult q;
  CHECK_CU(cuGetProcAddress(name, &fn, version, 0, &q));
  CHECK(fn != NULL && q == CU_GET_PROC_ADDRESS_SUCCESS);
  return fn;
}

int main(void)
{
  test_init();
  CUstream s1, s2;
  CHECK_CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
  CHECK_CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
  CUdeviceptr flag;
  CHECK_CU(cuMemAlloc(&flag, 64));
  CHECK_CU(cuMemsetD8(flag, 0, 64));
  CHECK_CU(cuCtxSynchronize());
  CUevent start, end;
  CHECK_CU(cuEventCreate(&start, 0));
  CHECK_CU(cuEventCreate(&end, 0));

  /* s2: 20 ms of kernel, then the write; s1 waits for it. s1 is kept busy by a blocker
   * and s2's kernel starts at `start` (an event wait), so the elapsed time is the
   * model's whatever the host's scheduling, unless the host took longer than the
   * blocker to enqueue (preempted): then the bound widens by that overrun. */
  CUfunction slow = test_kernel("slow");
  unsigned long long t0 = test_now_ns();
  CHECK_CU(test_launch_us(slow, s1, BLOCKER_MS * 1000));
  CHECK_CU(cuEventRecord(start, s1));
  CHECK_CU(cuStreamWaitEvent(s2, start, 0));
  CHECK_CU(test_launch_us(slow, s2, 20000));
  CHECK_CU(cuStreamWriteValue32(s2, flag, 1, 0));
  CHECK_CU(cuStreamWaitValue32(s1, flag, 1, CU_STREAM_WAIT_VALUE_GEQ));
  CHECK_CU(cuEventRecord(end, s1));
  double late = test_host_overrun_ms(t0, BLOCKER_MS);
  CHECK_NEAR(test_elapsed_ms(start, end), 20.0 + late / 2, TOL_MS + late / 2);
  unsigned v = 0;
  CHECK_CU(cuMemcpyDtoH(&v, flag, 4));
  CHECK(v == 1);

  /* conditions on the value now in memory (1): no write pending, no wait */
  CHECK_CU(cuStreamWaitValue32(s1, flag, 1, CU_STREAM_WAIT_VALUE_EQ));
  CHECK_CU(cuStreamWaitValue32(s1, flag, 3, CU_STREAM_WAIT_VALUE_AND));
  CHECK_CU(cuStreamWaitValue32(s1, flag, 0xfffffffc, CU_STREAM_WAIT_VALUE_NOR));
  CHECK_RESULT(cuStreamWaitValue32(s1, flag, 0xfffffffe, CU_STREAM_WAIT_VALUE_NOR), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_RESULT(cuStreamWaitValue32(s1, flag, 2, CU_STREAM_WAIT_VALUE_GEQ), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_RESULT(cuStreamWaitValue32(s1, flag, 2, CU_STREAM_WAIT_VALUE_EQ), CUDA_ERROR_NOT_SUPPORTED);
  CHECK_RESULT(cuStreamWaitValue32(s1, flag + 1, 1, 0), CUDA_ERROR_INVALID_VALUE); /* unaligned */
  CHECK_RESULT(cuStreamWriteValue32(s1, flag, 1, 2), CUDA_ERROR_INVALID_VALUE);
  int local = 0;
  CHECK_RESULT(cuStreamWriteValue32(s1, (CUdeviceptr)(uintptr_t)&local, 1, 0), CUDA_ERROR_INVALID_VALUE);

  /* 64-bit, through a batch: the write after 10 ms of kernel, the wait on s1 */
  CUstreamBatchMemOpParams ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[0].writeValue.address = flag + 8;
  ops[0].writeValue.value64 = 1ull << 40;
  ops[1].operation = CU_STREAM_MEM_OP_BARRIER;
  CHECK_CU(cuStreamSynchronize(s1));
  t0 = test_now_ns();
  CHECK_CU(test_launch_us(slow, s1, BLOCKER_MS * 1000));
  CHECK_CU(cuEventRecord(start, s1));
  CHECK_CU(cuStreamWaitEvent(s2, start, 0));
  CHECK_CU(test_launch_us(slow, s2, 10000));
  CHECK_CU(cuStreamBatchMemOp(s2, 2, ops, 0));
  CUstreamBatchMemOpParams wait;
  memset(&wait, 0, sizeof wait);
  wait.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
  wait.waitValue.address = flag + 8;
  wait.waitValue.value64 = 1ull << 40;
  wait.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  CHECK_CU(cuStreamBatchMemOp(s1, 1, &wait, 0));
  CHECK_CU(cuEventRecord(end, s1));
  late = test_host_overrun_ms(t0, BLOCKER_MS);
  CHECK_NEAR(test_elapsed_ms(start, end), 10.0 + late / 2, TOL_MS + late / 2);
  wait.operation = (CUstreamBatchMemOpType)99;
  CHECK_RESULT(cuStreamBatchMemOp(s1, 1, &wait, 0), CUDA_ERROR_INVALID_VALUE);

  /* the older ABI's entry points (same arguments) */
  typedef CUresult (*value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
  value32_fn wait_v1 = (value32_fn)proc("cuStreamWaitValue32", 8000);
  CHECK((void *)wait_v1 != proc("cuStreamWaitValue32", 11070));
  CHECK_CU(wait_v1(s1, flag, 1, CU_STREAM_WAIT_VALUE_EQ));

  /* refused inside a capture, which it invalidates */
  CHECK_CU(cuStreamSynchronize(s1));
  CHECK_CU(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_RESULT(cuStreamWriteValue32(s1, flag, 5, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph g = NULL;
  CHECK_RESULT(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK_CU(cuCtxSynchronize());
  CHECK_CU(cuMemFree(flag));
  printf("ok\n");
  return 0;
}
