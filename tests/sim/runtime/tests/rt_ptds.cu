// Built with --default-stream per-thread: the program imports the _ptds/_ptsz
// entry points, and stream 0 is each thread's own default stream.
#include "check.h"
#include <cstring>
#include <thread>

__global__ void fill(float *x, float v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
}

static void work(int id, bool *ok)
{
  const int n = 256;
  float host[n], back[n];
  for (int i = 0; i < n; i++) host[i] = (float)(i + id);
  float *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, sizeof host));
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a, 0));
  CHECK_CUDA(cudaMemcpyAsync(dev, host, sizeof host, cudaMemcpyHostToDevice, 0));
  fill<<<1, n>>>(dev, 1.0f, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemset(dev, 0, sizeof host));
  CHECK_CUDA(cudaEventRecord(b, 0));
  CHECK_CUDA(cudaStreamSynchronize(0));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = -1;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  CHECK(ms >= 0);
  CHECK(cudaStreamQuery(0) == cudaSuccess);
  *ok = std::memcmp(back, host, sizeof back) == 0;
  CHECK_CUDA(cudaFree(dev));
}

int main()
{
  bool ok1 = false, ok2 = false;
  std::thread t([&] { work(1, &ok2); });
  work(0, &ok1);
  t.join();
  CHECK(ok1 && ok2);
  std::puts("rt_ptds ok");
  return 0;
}
