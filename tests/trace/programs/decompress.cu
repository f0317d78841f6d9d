// Decompressions by the copy engines (test_decompress.py), through cuGetProcAddress
// (12060), on one non-blocking stream between two kernels dc_before and dc_after:
//   cuMemBatchDecompressAsync of 3 operations writing 4096 + 8192 + 1024 bytes,
//   cuMemBatchDecompressAsync_ptsz of 1 operation (2048 bytes) on the same stream,
//   cuMemBatchDecompressAsync of 1 operation with an unknown algorithm (fails).
// Prints "decompress: ok" when the first two succeeded and the third failed.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "driver_proc.h"

#define CHECK(call)                                                                   \
  do {                                                                                \
    int e_ = (int)(call);                                                             \
    if (e_) {                                                                         \
      fprintf(stderr, "decompress: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

__global__ void dc_before(char *p) { p[threadIdx.x] = 1; }
__global__ void dc_after(char *p) { p[threadIdx.x] += 1; }

typedef CUresult (*decompress_fn)(CUmemDecompressParams *, size_t, unsigned, size_t *, CUstream);

static CUmemDecompressParams op(char *src, char *dst, size_t in, size_t out, cuuint32_t *actual,
                                CUmemDecompressAlgorithm algo) {
  CUmemDecompressParams p;
  memset(&p, 0, sizeof p);
  p.srcNumBytes = in;
  p.dstNumBytes = out;
  p.dstActBytes = actual;
  p.src = src;
  p.dst = dst;
  p.algo = algo;
  return p;
}

int main() {
  cudaStream_t s;
  char *in, *out;
  cuuint32_t *actual;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&in, 65536));
  CHECK(cudaMalloc(&out, 65536));
  CHECK(cudaMallocHost(&actual, 4 * sizeof *actual));
  decompress_fn plain = (decompress_fn)driver_proc("cuMemBatchDecompressAsync", 12060, 0);
  decompress_fn per_thread = (decompress_fn)driver_proc("cuMemBatchDecompressAsync", 12060, 2);
  CHECK(!plain || !per_thread);
  dc_before<<<1, 32, 0, s>>>(out);
  CUmemDecompressParams three[3] = {
      op(in, out, 1000, 4096, &actual[0], CU_MEM_DECOMPRESS_ALGORITHM_DEFLATE),
      op(in + 1024, out + 4096, 2000, 8192, &actual[1], CU_MEM_DECOMPRESS_ALGORITHM_SNAPPY),
      op(in + 4096, out + 16384, 500, 1024, &actual[2], CU_MEM_DECOMPRESS_ALGORITHM_LZ4)};
  size_t bad = 0;
  CHECK(plain(three, 3, 0, &bad, (CUstream)s));
  CUmemDecompressParams one = op(in + 8192, out + 32768, 700, 2048, &actual[3],
                                 CU_MEM_DECOMPRESS_ALGORITHM_LZ4);
  CHECK(per_thread(&one, 1, 0, &bad, (CUstream)s));
  CUmemDecompressParams wrong = op(in, out, 10, 10, NULL, (CUmemDecompressAlgorithm)0x80);
  CHECK(plain(&wrong, 1, 0, &bad, (CUstream)s) == CUDA_SUCCESS);
  dc_after<<<1, 32, 0, s>>>(out);
  CHECK(cudaStreamSynchronize(s));
  printf("decompress: ok\n");
  return 0;
}
