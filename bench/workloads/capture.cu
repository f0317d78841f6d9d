/* capture: records a short sequence (three capture_step kernels, a memset, one
 * more kernel) into a CUDA graph by stream capture, instantiates it and
 * launches the graph ITERS times. The buffer is cleared outside the graph
 * first, so the final check (every byte = the memset's value) shows that the
 * graph really ran (the simulator replays captured memsets with real bytes). */
#include "workload.h"

#define STEP_US 10
#define BUFFER_BYTES 4096
#define FILL 0x5a

/* One captured step: lasts `ns` on a real GPU. */
__global__ void capture_step(long long ns) { wl_gpu_spin_ns(ns); }

int main(int argc, char **argv)
{
  wl_prog = "capture";
  wl_arg args[] = {{"ITERS", 1, 1000000, 10}};
  wl_parse_args(argc, argv, args, 1);
  const int iters = (int)args[0].value;

  cudaStream_t stream;
  WL_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned char *device;
  WL_CHECK(cudaMalloc((void **)&device, BUFFER_BYTES));
  WL_CHECK(cudaMemset(device, 0, BUFFER_BYTES));
  WL_CHECK(cudaDeviceSynchronize());

  cudaGraph_t graph;
  WL_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; i++) {
    capture_step<<<1, 1, 0, stream>>>(STEP_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaMemsetAsync(device, FILL, BUFFER_BYTES, stream));
  capture_step<<<1, 1, 0, stream>>>(STEP_US * 1000ll);
  WL_CHECK_LAUNCH();
  WL_CHECK(cudaStreamEndCapture(stream, &graph));

  cudaGraphExec_t exec;
  WL_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  unsigned char host[BUFFER_BYTES];
  WL_CHECK(cudaMemcpy(host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost));
  int failures = host[0] != 0; /* capturing must not have run anything */
  if (failures)
    fprintf(stderr, "capture: the memset ran during capture (byte 0 = %d)\n", host[0]);
  for (int i = 0; i < iters; i++)
    WL_CHECK(cudaGraphLaunch(exec, stream));
  WL_CHECK(cudaStreamSynchronize(stream));

  WL_CHECK(cudaMemcpy(host, device, BUFFER_BYTES, cudaMemcpyDeviceToHost));
  failures += !wl_bytes_are(host, BUFFER_BYTES, FILL, "buffer after the graph launches");
  printf("capture: one graph of 4 kernels and a memset, launched %d times; graph check: %s\n", iters,
         failures ? "FAILED" : "ok");
  WL_CHECK(cudaGraphExecDestroy(exec));
  WL_CHECK(cudaGraphDestroy(graph));
  WL_CHECK(cudaFree(device));
  WL_CHECK(cudaStreamDestroy(stream));
  return failures ? 1 : 0;
}
