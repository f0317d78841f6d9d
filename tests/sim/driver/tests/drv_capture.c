/* Stream capture rules and graph replay. */
#include "drv_test.h"

#include <pthread.h>
#include <string.h>

#define TOL_MS 0.002

static CUfunction step, blocker;

struct poller {
  CUstreamCaptureMode mode; /* the poller thread's capture interaction mode */
  CUevent event;
  CUresult result;
  CUcontext ctx;
};

/* Another thread's event query, as a tracer's poller would make. */
static void *poll_once(void *arg)
{
  struct poller *p = arg;
  CHECK_CU(cuCtxSetCurrent(p->ctx));
  CUstreamCaptureMode mode = p->mode;
  CHECK_CU(cuThreadExchangeStreamCaptureMode(&mode));
  p->result = cuEventQuery(p->event);
  CHECK_CU(cuThreadExchangeStreamCaptureMode(&mode));
  return NULL;
}

static CUresult query_from_other_thread(CUcontext ctx, CUevent e, CUstreamCaptureMode mode)
{
  struct poller p = {mode, e, CUDA_ERROR_UNKNOWN, ctx};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, poll_once, &p) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  return p.result;
}

static void check_rules(CUcontext ctx, CUstream s)
{
  CUevent unrelated, inside;
  CHECK_CU(cuEventCreate(&unrelated, 0));
  CHECK_CU(cuEventCreate(&inside, 0));
  CHECK_CU(cuEventRecord(unrelated, s));
  CHECK_CU(cuStreamSynchronize(s));
  CUgraph g = NULL;
  CUstreamCaptureStatus status;

  /* The legacy stream cannot capture; ending a capture that never began fails. */
  CHECK_RESULT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);

  /* Syncing the capturing stream invalidates the capture. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  test_launch(step, s);
  CHECK_RESULT(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK_CU(cuStreamIsCapturing(s, &status));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  CHECK_RESULT(cuLaunchKernel(step, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK(g == NULL);
  CHECK_CU(cuStreamIsCapturing(s, &status));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);

  /* Global mode: another thread's event query (a poller in global mode) is
   * refused and invalidates the capture... */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_RESULT(query_from_other_thread(ctx, unrelated, CU_STREAM_CAPTURE_MODE_GLOBAL),
               CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  /* ...unless that thread switched itself to thread-local or relaxed mode. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_CU(query_from_other_thread(ctx, unrelated, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CHECK_CU(query_from_other_thread(ctx, unrelated, CU_STREAM_CAPTURE_MODE_RELAXED));
  test_launch(step, s);
  CHECK_CU(cuStreamEndCapture(s, &g));
  CHECK_CU(cuGraphDestroy(g));
  /* A thread-local capture ignores other threads entirely. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CHECK_CU(query_from_other_thread(ctx, unrelated, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_CU(cuStreamEndCapture(s, &g));
  CHECK_CU(cuGraphDestroy(g));
  /* The capturing thread itself may not make unsafe calls unless relaxed. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  CHECK_RESULT(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CHECK_CU(cuEventQuery(unrelated));
  CHECK_RESULT(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_ERROR_ILLEGAL_STATE);
  test_launch(step, s);
  CHECK_CU(cuStreamEndCapture(s, &g));
  CHECK_CU(cuGraphDestroy(g));

  /* Work on the legacy stream while a blocking stream captures. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
  CHECK_RESULT(cuLaunchKernel(step, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  CHECK_RESULT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  /* An event recorded during capture cannot be queried or timed afterwards. */
  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  cuuint64_t id = 0;
  CUgraph live = NULL;
  const CUgraphNode *deps = NULL;
  size_t ndeps = 7;
  CHECK_CU(cuStreamGetCaptureInfo(s, &status, &id, &live, &deps, NULL, &ndeps));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && live != NULL && ndeps == 0);
  test_launch(step, s);
  CHECK_CU(cuEventRecord(inside, s));
  CHECK_CU(cuStreamGetCaptureInfo(s, &status, &id, &live, &deps, NULL, &ndeps));
  CHECK(ndeps == 1 && deps != NULL);
  CHECK_CU(cuStreamEndCapture(s, &g));
  CHECK_RESULT(cuEventQuery(inside), CUDA_ERROR_CAPTURED_EVENT);
  CHECK_RESULT(cuEventSynchronize(inside), CUDA_ERROR_CAPTURED_EVENT);
  float ms;
  CHECK_RESULT(cuEventElapsedTime(&ms, unrelated, inside), CUDA_ERROR_CAPTURED_EVENT);
  /* Recording it again outside capture makes it an ordinary event. */
  CHECK_CU(cuEventRecord(inside, s));
  CHECK_CU(cuEventSynchronize(inside));
  CHECK_CU(cuEventElapsedTime(&ms, unrelated, inside));
  CHECK(ms >= 0);
  CHECK_CU(cuGraphDestroy(g));
  CHECK_CU(cuEventDestroy(unrelated));
  CHECK_CU(cuEventDestroy(inside));
}

/* A captured fork/join over two streams replays in order with the modelled
 * durations, and captured fills move their bytes only when replayed. */
static void check_replay(CUstream s, CUstream side)
{
  const size_t n = 1000000;
  CUdeviceptr buf;
  CHECK_CU(cuMemAlloc(&buf, n));
  CHECK_CU(cuMemsetD8(buf, 1, n));
  CUevent fork, join, a, b, external;
  CHECK_CU(cuEventCreate(&external, 0));
  CHECK_CU(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
  CHECK_CU(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
  CHECK_CU(cuEventCreate(&a, 0));
  CHECK_CU(cuEventCreate(&b, 0));

  CHECK_CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CHECK_CU(cuMemsetD8Async(buf, 9, n, s));          /* 2 us + 1 MB / 1500 GB/s */
  CHECK_CU(cuEventRecord(fork, s));
  CHECK_CU(cuStreamWaitEvent(side, fork, 0));       /* `side` joins the capture */
  CUstreamCaptureStatus status;
  CHECK_CU(cuStreamIsCapturing(side, &status));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  test_launch(step, side);                          /* 100 us */
  CHECK_CU(cuEventRecord(join, side));
  CHECK_CU(cuStreamWaitEvent(s, join, 0));
  test_launch(step, s);
  test_launch(step, s);
  CHECK_CU(cuEventRecordWithFlags(external, s, CU_EVENT_RECORD_EXTERNAL)); /* a node */
  CUgraph g;
  CHECK_CU(cuStreamEndCapture(s, &g));
  CHECK_RESULT(cuEventQuery(external), CUDA_ERROR_CAPTURED_EVENT);
  CHECK_CU(cuStreamIsCapturing(side, &status));
  CHECK(status == CU_STREAM_CAPTURE_STATUS_NONE);
  unsigned char probe = 0;
  CHECK_CU(cuMemcpyDtoH(&probe, buf + 12345, 1));
  CHECK(probe == 1); /* captured, not executed */

  size_t count = 0;
  CHECK_CU(cuGraphGetNodes(g, NULL, &count));
  CHECK(count == 5);
  CUgraphNode nodes[5];
  CUgraphNodeType type;
  CHECK_CU(cuGraphGetNodes(g, nodes, &count));
  CHECK_CU(cuGraphNodeGetType(nodes[0], &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_MEMSET);
  CHECK_CU(cuGraphNodeGetType(nodes[3], &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_KERNEL);
  CHECK_CU(cuGraphNodeGetType(nodes[4], &type));
  CHECK(type == CU_GRAPH_NODE_TYPE_EVENT_RECORD);

  CUgraphExec exec;
  CHECK_CU(cuGraphInstantiate(&exec, g, 0));
  for (int i = 0; i < 3; i++) {
    test_launch(blocker, s);
    CHECK_CU(cuEventRecord(a, s));
    CHECK_CU(cuGraphLaunch(exec, s));
    CHECK_CU(cuEventRecord(b, s));
    CHECK_NEAR(test_elapsed_ms(a, b), 0.3 + 0.002667, TOL_MS);
    CHECK_NEAR(test_elapsed_ms(a, external), 0.3 + 0.002667, TOL_MS); /* recorded by the replay */
  }
  CHECK_CU(cuMemcpyDtoH(&probe, buf + 12345, 1));
  CHECK(probe == 9);
  CHECK_CU(cuGraphExecDestroy(exec));
  CHECK_RESULT(cuGraphLaunch(exec, s), CUDA_ERROR_INVALID_VALUE);
  CHECK_CU(cuGraphDestroy(g));
  CHECK_CU(cuMemFree(buf));
}

int main(void)
{
  setenv("SIMCUDA_KERNEL_US", "default=3,step=100,blocker=50000", 1);
  CUcontext ctx = test_init();
  step = test_kernel("step");
  blocker = test_kernel("blocker");
  CUstream s, side;
  CHECK_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT));
  CHECK_CU(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
  check_rules(ctx, s);
  check_replay(s, side);
  CHECK_CU(cuStreamDestroy(s));
  CHECK_CU(cuStreamDestroy(side));
  puts("drv_capture ok");
  return 0;
}
