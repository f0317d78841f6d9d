// Last-error semantics: failing calls set it, cudaGetLastError returns and clears it,
// cudaPeekAtLastError does not clear it.
#include "check.h"
#include <cstring>

__global__ void noop() {}

int main()
{
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaSetDevice(9999) == cudaErrorInvalidDevice);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);

  float *dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, 16));
  float host[4];
  CHECK(cudaMemcpy(host, dev, 16, (cudaMemcpyKind)42) == cudaErrorInvalidMemcpyDirection);
  // A later successful call does not clear the error.
  CHECK_CUDA(cudaMemcpy(host, dev, 16, cudaMemcpyDeviceToHost));
  CHECK(cudaGetLastError() == cudaErrorInvalidMemcpyDirection);

  noop<<<1, 4096>>>();
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaSuccess);
  noop<<<1, 32>>>();
  CHECK(cudaGetLastError() == cudaSuccess);

  CHECK(cudaStreamSynchronize((cudaStream_t)0x1234) != cudaSuccess);
  CHECK(cudaGetLastError() != cudaSuccess);

  CHECK(cudaMalloc(&dev, (size_t)1 << 62) == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);

  CHECK(std::strcmp(cudaGetErrorString(cudaSuccess), "no error") == 0);
  CHECK(std::strcmp(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument") == 0);
  CHECK(std::strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
  CHECK(std::strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code") == 0);
  std::puts("rt_errors ok");
  return 0;
}
