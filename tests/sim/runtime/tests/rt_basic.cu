// Launch + memcpy round trips through the simulated runtime.
#include "check.h"
#include <cstring>

__device__ float device_table[8];
__global__ void scale(float *x, float s, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

int main()
{
  int version = 0;
  CHECK_CUDA(cudaRuntimeGetVersion(&version));
  CHECK(version == 13000);
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  CHECK(count >= 1);
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  CHECK(prop.name[0] != 0);

  const int n = 1000;
  float host[n], back[n];
  for (int i = 0; i < n; i++) host[i] = (float)i;
  float *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
  scale<<<(n + 255) / 256, 256>>>(dev, 2.0f, n);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::memset(back, 0, sizeof back);
  CHECK_CUDA(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
  // Kernels do not run in the simulator: the data comes back unchanged.
  CHECK(std::memcmp(back, host, sizeof back) == 0);

  const char *name = nullptr;
  CHECK_CUDA(cudaFuncGetName(&name, (const void *)scale));
  CHECK(name && std::strcmp(name, "_Z5scalePffi") == 0);
  float factor = 1.0f;
  int count_arg = n;
  void *args[] = {&dev, &factor, &count_arg};
  CHECK_CUDA(cudaLaunchKernel((const void *)scale, dim3(4), dim3(256), args, 0, 0));

  // Stream-ordered copies, memset, events.
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a, s));
  CHECK_CUDA(cudaMemsetAsync(dev, 0, sizeof host, s));
  scale<<<4, 256, 0, s>>>(dev, 3.0f, n);
  CHECK_CUDA(cudaMemcpyAsync(back, dev, sizeof back, cudaMemcpyDeviceToHost, s));
  CHECK_CUDA(cudaEventRecord(b, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaEventSynchronize(b));
  float ms = -1;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  CHECK(ms >= 0);
  for (int i = 0; i < n; i++) CHECK(back[i] == 0.0f);

  // 2-D copy of a 3 x 4 sub-block.
  float pitched[6 * 4], dst2[3 * 4];
  for (int i = 0; i < 24; i++) pitched[i] = (float)i;
  CHECK_CUDA(cudaMemcpy2D(dev, 3 * sizeof(float), pitched, 6 * sizeof(float), 3 * sizeof(float), 4,
                          cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dst2, dev, sizeof dst2, cudaMemcpyDeviceToHost));
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 3; c++) CHECK(dst2[r * 3 + c] == pitched[r * 6 + c]);

  // __device__ variable round trip.
  float table[8] = {1, 2, 3, 4, 5, 6, 7, 8}, table_back[8] = {0};
  CHECK_CUDA(cudaMemcpyToSymbol(device_table, table, sizeof table));
  CHECK_CUDA(cudaMemcpyFromSymbol(table_back, device_table, sizeof table));
  CHECK(std::memcmp(table, table_back, sizeof table) == 0);

  // Pinned memory.
  float *pinned = nullptr;
  CHECK_CUDA(cudaMallocHost(&pinned, 64));
  CHECK_CUDA(cudaMemcpy(pinned, dev, 64, cudaMemcpyDefault));
  CHECK_CUDA(cudaFreeHost(pinned));

  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaFree(dev));
  CHECK_CUDA(cudaGetLastError());
  std::puts("rt_basic ok");
  return 0;
}
