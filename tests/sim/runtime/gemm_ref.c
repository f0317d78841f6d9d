/* CPU reference GEMM (column-major, any mix of fp32/fp64/fp16/bf16 operands). */
#include "gemm_ref.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

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

static double load(const void *base, cudaDataType type, long long index)
{
  switch (type) {
  case CUDA_R_64F: return ((const double *)base)[index];
  case CUDA_R_16F: return half_to_float(((const uint16_t *)base)[index]);
  case CUDA_R_16BF: return bf16_to_float(((const uint16_t *)base)[index]);
  default: return ((const float *)base)[index];
  }
}

static void store(void *base, cudaDataType type, long long index, double v)
{
  switch (type) {
  case CUDA_R_64F: ((double *)base)[index] = v; break;
  case CUDA_R_16F: ((uint16_t *)base)[index] = float_to_half((float)v); break;
  case CUDA_R_16BF: ((uint16_t *)base)[index] = float_to_bf16((float)v); break;
  default: ((float *)base)[index] = (float)v; break;
  }
}

double sim_load_scalar(const void *p, cudaDataType type)
{
  return p ? load(p, type, 0) : 0.0;
}

static size_t element_size(cudaDataType type)
{
  return type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
}

static const void *batch_base(const struct sim_matrix *x, long long batch)
{
  return (const char *)x->data + (size_t)(batch * x->stride) * element_size(x->type);
}

void sim_gemm_compute(const struct sim_gemm *g)
{
  for (long long p = 0; p < g->batch; p++) {
    const void *a = batch_base(&g->a, p);
    const void *b = batch_base(&g->b, p);
    const void *c = g->c.data ? batch_base(&g->c, p) : NULL;
    void *d = (void *)batch_base(&g->d, p);
    for (long long j = 0; j < g->n; j++) {
      for (long long i = 0; i < g->m; i++) {
        double acc = 0.0;
        for (long long l = 0; l < g->k; l++) {
          long long ai = g->transa ? l + i * g->a.ld : i + l * g->a.ld;
          long long bi = g->transb ? j + l * g->b.ld : l + j * g->b.ld;
          acc += load(a, g->a.type, ai) * load(b, g->b.type, bi);
        }
        double v = g->alpha * acc;
        if (g->beta != 0.0 && c)
          v += g->beta * load(c, g->c.type, i + j * g->c.ld);
        if (g->bias)
          v += load(g->bias, g->bias_type, i);
        if (g->relu && !(v > 0.0))
          v = 0.0;
        store(d, g->d.type, i + j * g->d.ld, v);
      }
    }
  }
}

double sim_gemm_flops(const struct sim_gemm *g)
{
  return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
}
