// cuBLAS GEMMs beyond the real ones (test_gemm_more.py), each called on a stream after
// the GPU went idle and the host slept 2 ms, so that its first kernel ends a planted
// host_wait gap. Planted calls (transposes, m n k, batch):
//   cublasCgemm_v2 NN 24 40 8 (twice), cublasZgemm_v2 CN 16 16 32, cublasZgemm_v2_64
//   NT 8 8 8, cublasCgemm3m NN 8 8 8, cublasCgemmStridedBatched TN 8 8 8 x3,
//   cublasZgemmBatched NN 4 4 4 x2, cublasSgemmEx NN 32 16 8 (f16 A and B, f32 C),
//   cublasCgemmEx NN 8 16 4, cublasSgemmGroupedBatched (2 groups NN 16 8 4 of 2 and 3),
//   cublasGemmGroupedBatchedEx (f32: NN 8 8 8 x1, TN 16 4 2 x2),
//   cublasDgemmGroupedBatched_64 (1 group NN 4 4 4 x2), and the legacy handle-less
//   cublasDgemm NN 8 8 8, cublasCgemm NT 16 8 4, cublasZgemm CN 4 8 2 (on the legacy
//   stream).
// Prints "gemm_more: ok" when every call succeeded.
// `gemm_more loop N WHAT` instead makes N calls of one GEMM of 16 x 16 x 16 on the
// stream, synchronising every 256 (bench/callgrind_launch.py, docs/performance.md):
// WHAT sgemm (cublasSgemm_v2, for comparison), cgemm (cublasCgemm_v2) or grouped
// (cublasSgemmGroupedBatched, two groups of one GEMM).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    int e_ = (int)(call);                                                            \
    if (e_) {                                                                        \
      fprintf(stderr, "gemm_more: %s failed: %d (line %d)\n", #call, e_, __LINE__);  \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// The GPU idle and the host away for 2 ms, then the planted call.
#define PLANT(call)                      \
  do {                                   \
    CHECK(cudaStreamSynchronize(s));     \
    usleep(2000);                        \
    CHECK(call);                         \
  } while (0)

// The same, for a legacy call (no status: cublasGetError says it, checked after).
#define PLANT_VOID(call)                 \
  do {                                   \
    CHECK(cudaStreamSynchronize(s));     \
    CHECK(cudaStreamSynchronize(0));     \
    usleep(2000);                        \
    call;                                \
    CHECK(legacy_cublasGetError());      \
  } while (0)

// The legacy handle-less API (cublas.h cannot be included with cublas_v2.h, which maps
// these names to the _v2 forms).
extern "C" void legacy_cublasDgemm(char, char, int, int, int, double, const double *, int,
                                   const double *, int, double, double *, int) __asm__("cublasDgemm");
extern "C" void legacy_cublasCgemm(char, char, int, int, int, cuComplex, const cuComplex *, int,
                                   const cuComplex *, int, cuComplex, cuComplex *, int)
    __asm__("cublasCgemm");
extern "C" void legacy_cublasZgemm(char, char, int, int, int, cuDoubleComplex, const cuDoubleComplex *,
                                   int, const cuDoubleComplex *, int, cuDoubleComplex, cuDoubleComplex *,
                                   int) __asm__("cublasZgemm");
extern "C" cublasStatus_t legacy_cublasGetError(void) __asm__("cublasGetError");

static const size_t BYTES = 1 << 20;

// The loop mode (see the top of the file); a, b, c and the pointer arrays as main's.
static int loop(cublasHandle_t h, cudaStream_t s, long count, const char *what, char *a, char *b, char *c,
                void **pa, void **pb, void **pc) {
  const cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_N};
  const int dims[2] = {16, 16}, size[2] = {1, 1};
  const float one[2] = {1, 1}, zero[2] = {0, 0};
  const cuComplex c1 = {1, 0}, c0 = {0, 0};
  for (long i = 0; i < count; i++) {
    if (!strcmp(what, "sgemm"))
      CHECK(cublasSgemm(h, ops[0], ops[0], 16, 16, 16, one, (float *)a, 16, (float *)b, 16, zero, (float *)c, 16));
    else if (!strcmp(what, "cgemm"))
      CHECK(cublasCgemm(h, ops[0], ops[0], 16, 16, 16, &c1, (cuComplex *)a, 16, (cuComplex *)b, 16, &c0,
                        (cuComplex *)c, 16));
    else if (!strcmp(what, "grouped"))
      CHECK(cublasSgemmGroupedBatched(h, ops, ops, dims, dims, dims, one, (const float *const *)pa, dims,
                                      (const float *const *)pb, dims, zero, (float *const *)pc, dims, 2, size));
    else {
      fprintf(stderr, "gemm_more: unknown loop call %s\n", what);
      return 2;
    }
    if (i % 256 == 255) CHECK(cudaStreamSynchronize(s));
  }
  CHECK(cudaStreamSynchronize(s));
  printf("gemm_more: %ld %s calls\n", count, what);
  return 0;
}

int main(int argc, char **argv) {
  cudaStream_t s;
  cublasHandle_t h;
  char *a, *b, *c;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cublasCreate(&h));
  CHECK(cublasSetStream(h, s));
  CHECK(cudaMalloc(&a, BYTES));
  CHECK(cudaMalloc(&b, BYTES));
  CHECK(cudaMalloc(&c, BYTES));
  CHECK(cudaMemsetAsync(a, 0, BYTES, s));
  CHECK(cudaMemsetAsync(b, 0, BYTES, s));
  CHECK(cudaMemsetAsync(c, 0, BYTES, s));
  // pointer arrays (device memory): 8 problems, each 64 KiB apart
  void **pa, **pb, **pc, *ha[8], *hb[8], *hc[8];
  for (int i = 0; i < 8; i++) {
    ha[i] = a + i * 65536;
    hb[i] = b + i * 65536;
    hc[i] = c + i * 65536;
  }
  CHECK(cudaMalloc(&pa, sizeof ha));
  CHECK(cudaMalloc(&pb, sizeof hb));
  CHECK(cudaMalloc(&pc, sizeof hc));
  CHECK(cudaMemcpy(pa, ha, sizeof ha, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(pb, hb, sizeof hb, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(pc, hc, sizeof hc, cudaMemcpyHostToDevice));

  if (argc == 4 && !strcmp(argv[1], "loop")) return loop(h, s, atol(argv[2]), argv[3], a, b, c, pa, pb, pc);

  const cublasOperation_t N = CUBLAS_OP_N, T = CUBLAS_OP_T, C = CUBLAS_OP_C;
  cuComplex c1 = {1, 0}, c0 = {0, 0};
  cuDoubleComplex z1 = {1, 0}, z0 = {0, 0};
  float f1 = 1, f0 = 0;
  cuComplex *ca = (cuComplex *)a, *cb = (cuComplex *)b, *cc = (cuComplex *)c;
  cuDoubleComplex *za = (cuDoubleComplex *)a, *zb = (cuDoubleComplex *)b, *zc = (cuDoubleComplex *)c;

  for (int i = 0; i < 2; i++)
    PLANT(cublasCgemm(h, N, N, 24, 40, 8, &c1, ca, 24, cb, 8, &c0, cc, 24));
  PLANT(cublasZgemm(h, C, N, 16, 16, 32, &z1, za, 32, zb, 32, &z0, zc, 16));
  PLANT(cublasZgemm_64(h, N, T, 8, 8, 8, &z1, za, 8, zb, 8, &z0, zc, 8));
  PLANT(cublasCgemm3m(h, N, N, 8, 8, 8, &c1, ca, 8, cb, 8, &c0, cc, 8));
  PLANT(cublasCgemmStridedBatched(h, T, N, 8, 8, 8, &c1, ca, 8, 64, cb, 8, 64, &c0, cc, 8, 64, 3));
  PLANT(cublasZgemmBatched(h, N, N, 4, 4, 4, &z1, (const cuDoubleComplex *const *)pa, 4,
                           (const cuDoubleComplex *const *)pb, 4, &z0, (cuDoubleComplex *const *)pc, 4, 2));
  PLANT(cublasSgemmEx(h, N, N, 32, 16, 8, &f1, a, CUDA_R_16F, 32, b, CUDA_R_16F, 8, &f0, c, CUDA_R_32F, 32));
  PLANT(cublasCgemmEx(h, N, N, 8, 16, 4, &c1, a, CUDA_C_32F, 8, b, CUDA_C_32F, 4, &c0, c, CUDA_C_32F, 8));
  {
    cublasOperation_t ta[2] = {N, N}, tb[2] = {N, N};
    int m[2] = {16, 16}, n[2] = {8, 8}, k[2] = {4, 4}, ld[2] = {16, 16}, size[2] = {2, 3};
    float alpha[2] = {1, 1}, beta[2] = {0, 0};
    PLANT(cublasSgemmGroupedBatched(h, ta, tb, m, n, k, alpha, (const float *const *)pa, ld,
                                    (const float *const *)pb, ld, beta, (float *const *)pc, ld, 2, size));
  }
  {
    cublasOperation_t ta[2] = {N, T}, tb[2] = {N, N};
    int m[2] = {8, 16}, n[2] = {8, 4}, k[2] = {8, 2}, lda[2] = {8, 2}, ldb[2] = {8, 2}, ldc[2] = {8, 16},
        size[2] = {1, 2};
    float alpha[2] = {1, 1}, beta[2] = {0, 0};
    PLANT(cublasGemmGroupedBatchedEx(h, ta, tb, m, n, k, alpha, (const void *const *)pa, CUDA_R_32F, lda,
                                     (const void *const *)pb, CUDA_R_32F, ldb, beta, (void *const *)pc,
                                     CUDA_R_32F, ldc, 2, size, CUBLAS_COMPUTE_32F));
  }
  {
    cublasOperation_t ta[1] = {N}, tb[1] = {N};
    int64_t m[1] = {4}, n[1] = {4}, k[1] = {4}, ld[1] = {4}, size[1] = {2};
    double alpha[1] = {1}, beta[1] = {0};
    PLANT(cublasDgemmGroupedBatched_64(h, ta, tb, m, n, k, alpha, (const double *const *)pa, ld,
                                       (const double *const *)pb, ld, beta, (double *const *)pc, ld, 1, size));
  }
  PLANT_VOID(legacy_cublasDgemm('N', 'N', 8, 8, 8, 1.0, (double *)a, 8, (double *)b, 8, 0.0, (double *)c, 8));
  PLANT_VOID(legacy_cublasCgemm('N', 'T', 16, 8, 4, c1, ca, 16, cb, 8, c0, cc, 16));
  PLANT_VOID(legacy_cublasZgemm('C', 'N', 4, 8, 2, z1, za, 2, zb, 2, z0, zc, 4));
  CHECK(cudaStreamSynchronize(0));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cublasDestroy(h));
  printf("gemm_more: ok\n");
  return 0;
}
