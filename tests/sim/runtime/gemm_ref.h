/* The simulated cuBLAS and cuBLASLt's GEMM: computed on the CPU at enqueue time,
 * column-major, any mix of fp32/fp64/fp16/bf16 operands. */
#ifndef SIM_RUNTIME_GEMM_REF_H
#define SIM_RUNTIME_GEMM_REF_H

#include <library_types.h>

/* One operand: base address, element type, leading dimension, batch stride
 * (in elements). */
struct sim_matrix {
  const void *data;
  cudaDataType type;
  long long ld;
  long long stride;
};

/* D = act(alpha * op(A) * op(B) + beta * C + bias), column-major; op(A) is m x k,
 * op(B) is k x n, C and D are m x n (C may alias D). bias (length m, type of
 * bias_type) is optional; relu applies max(0, x). */
struct sim_gemm {
  int transa, transb; /* 0 = no transpose, otherwise transpose */
  long long m, n, k, batch;
  double alpha, beta;
  struct sim_matrix a, b, c, d;
  const void *bias;
  cudaDataType bias_type;
  int relu;
};

/* Returns 1 when the element type is supported (32F, 64F, 16F, 16BF). */
int sim_gemm_type_supported(cudaDataType type);

/* Reads a scalar of `type` (host or simulated device address) as a double. */
double sim_load_scalar(const void *p, cudaDataType type);

/* Computes the GEMM described by `g`: the products are summed in double when A
 * or B is fp64, otherwise in float (as cuBLAS's 32F compute types do for fp32,
 * fp16 and bf16 inputs), over l = 0..k-1 in order; alpha, beta, C, the bias and
 * relu are then applied in double and the result rounded once to D's type.
 * Returns 0, or -1 (D untouched) when the packing buffers cannot be allocated. */
int sim_gemm_compute(const struct sim_gemm *g);

/* The vector width sim_gemm_compute uses: 32 (bytes) on an x86-64 CPU with AVX2,
 * else 16. */
int sim_gemm_vector_bytes(void);

/* sim_gemm_compute with `vector_bytes` 16 or 32 (32 falls back to 16 where the CPU
 * lacks AVX2); both give bit-identical results. For tests and benchmarks. */
int sim_gemm_compute_with(const struct sim_gemm *g, int vector_bytes);

/* Number of floating-point operations of `g` (2 m n k per batch). */
double sim_gemm_flops(const struct sim_gemm *g);

#endif
