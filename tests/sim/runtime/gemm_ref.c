/* The simulated cuBLAS's GEMM on the CPU (column-major, any mix of
 * fp32/fp64/fp16/bf16 operands): op(A) and op(B) are converted once into
 * packed panels of the accumulation type (float, or double for fp64), a
 * register tile of MR x GEMM_NR results sums its products over l in order
 * (gemm_kernel.inc, once per accumulation type), and the epilogue (alpha,
 * beta C, bias, relu) is applied per tile column in double. No element type is
 * looked up per product: each run of elements is converted by one loop per
 * type. */
#include "gemm_ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Columns of a register tile; rows are two vectors of the accumulation type. */
#define GEMM_NR 6
/* Rows of the widest tile (float: two 8-lane vectors). */
#define GEMM_MR_MAX 16
/* x86-64 compilers that can build AVX2 functions into a baseline build. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GEMM_HAVE_AVX2 1
#else
#define GEMM_HAVE_AVX2 0
#endif
/* Bytes of packed op(A) one block of tile rows aims to keep in the cache
 * while every column panel of op(B) passes over it. */
#define GEMM_A_BLOCK_BYTES (256 * 1024)

static float half_to_float(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: renormalise */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while (!(mant & 0x400u));
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float_to_half(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  int32_t exp = (int32_t)((bits >> 23) & 0xffu) - 127 + 15;
  uint32_t mant = bits & 0x7fffffu;
  if (((bits >> 23) & 0xffu) == 0xffu) /* inf or nan */
    return sign | 0x7c00u | (mant ? 0x200u : 0);
  if (exp >= 0x1f)
    return sign | 0x7c00u;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000u;
    uint32_t shift = (uint32_t)(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u)))
      half++;
    return sign | (uint16_t)half;
  }
  uint32_t half = (uint32_t)exp << 10 | mant >> 13;
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    half++; /* may carry into the exponent, which is the correct rounding */
  return sign | (uint16_t)half;
}

static float bf16_to_float(uint16_t b)
{
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float_to_bf16(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

int sim_gemm_type_supported(cudaDataType type)
{
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

/* Rounds `count` doubles to `type` into base[index...]. */
static void store_doubles(void *base, cudaDataType type, long long index, const double *src, long long count)
{
  switch (type) {
  case CUDA_R_64F:
    memcpy((double *)base + index, src, (size_t)count * sizeof *src);
    break;
  case CUDA_R_16F: {
    uint16_t *dst = (uint16_t *)base + index;
    for (long long i = 0; i < count; i++)
      dst[i] = float_to_half((float)src[i]);
    break;
  }
  case CUDA_R_16BF: {
    uint16_t *dst = (uint16_t *)base + index;
    for (long long i = 0; i < count; i++)
      dst[i] = float_to_bf16((float)src[i]);
    break;
  }
  default: {
    float *dst = (float *)base + index;
    for (long long i = 0; i < count; i++)
      dst[i] = (float)src[i];
    break;
  }
  }
}

static size_t element_size(cudaDataType type)
{
  return type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
}

static const void *batch_base(const struct sim_matrix *x, long long batch)
{
  return (const char *)x->data + (size_t)(batch * x->stride) * element_size(x->type);
}

static long long round_up(long long x, long long to)
{
  return (x + to - 1) / to * to;
}

static long long min_ll(long long a, long long b)
{
  return a < b ? a : b;
}

static long long max_ll(long long a, long long b)
{
  return a > b ? a : b;
}

static void finish_tile(const struct sim_gemm *g, long long p, long long i0, long long rows, long long j0,
                        long long cols, const double *tile, long long tile_ld);

#define GEMM_TARGET
#define GEMM_VEC_BYTES 16
#define GEMM_T float
#define GEMM_FN(name) name##_f32
#include "gemm_kernel.inc"
#undef GEMM_T
#undef GEMM_FN
#define GEMM_T double
#define GEMM_FN(name) name##_f64
#include "gemm_kernel.inc"
#undef GEMM_T
#undef GEMM_FN
#undef GEMM_VEC_BYTES
#undef GEMM_TARGET

#if GEMM_HAVE_AVX2
/* The same with 32-byte vectors for CPUs with AVX2 (chosen at run time); no FMA,
 * so every result is bit-identical to the 16-byte path's. */
#define GEMM_TARGET __attribute__((target("avx2")))
#define GEMM_VEC_BYTES 32
#define GEMM_T float
#define GEMM_FN(name) name##_f32_avx2
#include "gemm_kernel.inc"
#undef GEMM_T
#undef GEMM_FN
#define GEMM_T double
#define GEMM_FN(name) name##_f64_avx2
#include "gemm_kernel.inc"
#undef GEMM_T
#undef GEMM_FN
#undef GEMM_VEC_BYTES
#undef GEMM_TARGET
#endif

static void finish_tile(const struct sim_gemm *g, long long p, long long i0, long long rows, long long j0,
                        long long cols, const double *tile, long long tile_ld)
{
  const void *c = g->beta != 0.0 && g->c.data ? batch_base(&g->c, p) : NULL;
  void *d = (void *)batch_base(&g->d, p);
  double bias[GEMM_MR_MAX], from_c[GEMM_MR_MAX], v[GEMM_MR_MAX];
  if (g->bias)
    load_f64(bias, g->bias, g->bias_type, i0, rows);
  for (long long jj = 0; jj < cols; jj++) {
    const double *sum = tile + jj * tile_ld;
    for (long long r = 0; r < rows; r++)
      v[r] = g->alpha * sum[r];
    if (c) {
      load_f64(from_c, c, g->c.type, i0 + (j0 + jj) * g->c.ld, rows);
      for (long long r = 0; r < rows; r++)
        v[r] += g->beta * from_c[r];
    }
    if (g->bias)
      for (long long r = 0; r < rows; r++)
        v[r] += bias[r];
    if (g->relu)
      for (long long r = 0; r < rows; r++)
        if (!(v[r] > 0.0))
          v[r] = 0.0;
    store_doubles(d, g->d.type, i0 + (j0 + jj) * g->d.ld, v, rows);
  }
}

double sim_load_scalar(const void *p, cudaDataType type)
{
  double v = 0.0;
  if (p)
    load_f64(&v, p, type, 0, 1);
  return v;
}

int sim_gemm_vector_bytes(void)
{
#if GEMM_HAVE_AVX2
  return __builtin_cpu_supports("avx2") ? 32 : 16;
#else
  return 16;
#endif
}

int sim_gemm_compute_with(const struct sim_gemm *g, int vector_bytes)
{
  int wide = 0;
#if GEMM_HAVE_AVX2
  wide = vector_bytes == 32 && __builtin_cpu_supports("avx2");
  if (wide)
    return g->a.type == CUDA_R_64F || g->b.type == CUDA_R_64F ? gemm_compute_f64_avx2(g)
                                                                : gemm_compute_f32_avx2(g);
#endif
  (void)vector_bytes, (void)wide;
  return g->a.type == CUDA_R_64F || g->b.type == CUDA_R_64F ? gemm_compute_f64(g) : gemm_compute_f32(g);
}

int sim_gemm_compute(const struct sim_gemm *g)
{
  return sim_gemm_compute_with(g, sim_gemm_vector_bytes());
}

double sim_gemm_flops(const struct sim_gemm *g)
{
  return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
}
