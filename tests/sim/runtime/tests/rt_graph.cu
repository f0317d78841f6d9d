// Stream capture into a graph, instantiate, replay.
#include "check.h"

__global__ void step(float *x) { x[threadIdx.x] += 1.0f; }

int main()
{
  float *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, 32 * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  cudaStreamCaptureStatus status;
  CHECK_CUDA(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);

  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CHECK_CUDA(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusActive);
  unsigned long long id = 0;
  CHECK_CUDA(cudaStreamGetCaptureInfo(s, &status, &id, nullptr, nullptr, nullptr, nullptr));
  CHECK(status == cudaStreamCaptureStatusActive);
  CHECK_CUDA(cudaMemsetAsync(dev, 0, 32 * sizeof(float), s));
  for (int i = 0; i < 3; i++) step<<<1, 32, 0, s>>>(dev);
  CHECK_CUDA(cudaGetLastError());
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamEndCapture(s, &graph));
  CHECK(graph != nullptr);
  CHECK_CUDA(cudaStreamIsCapturing(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);

  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 5; i++) CHECK_CUDA(cudaGraphLaunch(exec, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaFree(dev));
  std::puts("rt_graph ok");
  return 0;
}
