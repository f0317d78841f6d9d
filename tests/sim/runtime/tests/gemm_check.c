/* The simulated cuBLAS's GEMM (gemm_ref.c, compiled in) against a slow,
 * straightforward reference written here: every product read element by
 * element and summed in double. Shapes from 1x1x1 to the linear workload's
 * 256x64x512, all four transpose pairs, fp32/fp64/fp16/bf16 and mixed
 * operands, batches with strides larger than a matrix, leading dimensions
 * larger than the minimum, bias and relu epilogues, beta 0 (C holds NaN and
 * must not be read), and C aliasing D. Each result must lie within a bound of
 * the reference derived from the accumulation and output precisions; the
 * padding between columns and batches of D must keep its sentinel bytes; the
 * 16- and 32-byte (AVX2) vector paths must give the same bytes.
 *
 * `gemm_check --bench [reps [MxNxK[TN]]]` instead prints the time of one fp32
 * GEMM with each vector width (best of reps) at 64^3, 512^3 and the linear workload's
 * 256x64x512 with A transposed, or at the one shape given (letters after the
 * shape: the transposes of A and B); not a test, nothing is asserted. */
#include "gemm_ref.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

static size_t type_size(cudaDataType type)
{
  return type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
}

static const char *type_name(cudaDataType type)
{
  return type == CUDA_R_64F ? "64F" : type == CUDA_R_32F ? "32F" : type == CUDA_R_16F ? "16F" : "16BF";
}

/* Half and bf16 decoding, written independently of gemm_ref.c. */
static double half_value(uint16_t h)
{
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp == 0 ? ldexp(mant, -24) : exp == 0x1f ? (mant ? NAN : INFINITY) : ldexp(1024 + mant, exp - 25);
  return h & 0x8000 ? -v : v;
}

static double bf16_value(uint16_t b)
{
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static double read_element(const void *base, cudaDataType type, long long index)
{
  if (type == CUDA_R_64F)
    return ((const double *)base)[index];
  if (type == CUDA_R_32F)
    return ((const float *)base)[index];
  uint16_t h = ((const uint16_t *)base)[index];
  return type == CUDA_R_16F ? half_value(h) : bf16_value(h);
}

/* Writes v, which must be exactly representable in `type` (the inputs are), or NaN. */
static void write_exact(void *base, cudaDataType type, long long index, double v)
{
  if (type == CUDA_R_64F) {
    ((double *)base)[index] = v;
  } else if (type == CUDA_R_32F) {
    ((float *)base)[index] = (float)v;
  } else if (type == CUDA_R_16BF) {
    float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    ((uint16_t *)base)[index] = (uint16_t)(bits >> 16);
  } else if (isnan(v)) {
    ((uint16_t *)base)[index] = 0x7e00;
  } else { /* half: v is 0 or a multiple of 1/64 below 4 in magnitude */
    uint16_t h = v < 0 ? 0x8000 : 0;
    double mag = fabs(v);
    if (mag != 0) {
      int exp;
      double frac = frexp(mag, &exp); /* mag = frac 2^exp, frac in [0.5, 1) */
      h |= (uint16_t)((exp - 1 + 15) << 10 | (int)((frac * 2 - 1) * 1024));
    }
    ((uint16_t *)base)[index] = h;
  }
}

static unsigned long long rng_state = 12345;

/* A value every type holds exactly for 16-bit types (a multiple of 1/64 in
 * [-2, 2)), otherwise a float in [-1, 1). */
static double random_value(cudaDataType type)
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  unsigned bits = (unsigned)(rng_state >> 33);
  if (type == CUDA_R_16F || type == CUDA_R_16BF)
    return (double)((int)(bits % 256) - 128) / 64.0;
  return (double)(float)((double)(bits % 2000001) / 1000000.0 - 1.0);
}

/* One operand's storage: rows x cols per batch with leading dimension ld and
 * batch stride stride, every element outside the matrix set to sentinel bytes. */
struct operand {
  void *data;
  cudaDataType type;
  long long rows, cols, ld, stride, batch;
  size_t bytes;
};

static void operand_make(struct operand *x, cudaDataType type, long long rows, long long cols, long long pad,
                         long long batch, int fill_nan)
{
  x->type = type, x->rows = rows, x->cols = cols, x->batch = batch;
  x->ld = (rows > 1 ? rows : 1) + pad;
  x->stride = x->ld * cols + pad * 5;
  x->bytes = (size_t)(x->stride * batch + 1) * type_size(type);
  x->data = malloc(x->bytes);
  memset(x->data, 0xa5, x->bytes);
  for (long long p = 0; p < batch; p++)
    for (long long j = 0; j < cols; j++)
      for (long long i = 0; i < rows; i++)
        write_exact(x->data, type, p * x->stride + i + j * x->ld, fill_nan ? NAN : random_value(type));
}

static struct sim_matrix operand_matrix(const struct operand *x)
{
  struct sim_matrix s = {x->data, x->type, x->ld, x->stride};
  return s;
}

/* 1 when element (i, j) of batch p lies inside the matrix. */
static int operand_holds(const struct operand *x, long long index)
{
  long long p = index / x->stride, rest = index % x->stride;
  return p < x->batch && rest % x->ld < x->rows && rest / x->ld < x->cols;
}

struct features {
  int transa, transb, bias, relu, alias, pad, batch;
  double alpha, beta;
  cudaDataType a, b, c, d, bias_type;
};

/* Unit roundoff of a type. */
static double roundoff(cudaDataType type)
{
  return type == CUDA_R_64F ? 0x1p-53 : type == CUDA_R_32F ? 0x1p-24 : type == CUDA_R_16F ? 0x1p-11 : 0x1p-8;
}

static void check_case(long long m, long long n, long long k, const struct features *f)
{
  struct operand a, b, c, d, bias;
  operand_make(&a, f->a, f->transa ? k : m, f->transa ? m : k, f->pad, f->batch, 0);
  operand_make(&b, f->b, f->transb ? n : k, f->transb ? k : n, f->pad, f->batch, 0);
  operand_make(&c, f->c, m, n, f->pad, f->batch, f->beta == 0.0);
  operand_make(&bias, f->bias_type, m, 1, 0, 1, 0);
  if (f->alias) {
    d = c;
    d.data = malloc(c.bytes);
    memcpy(d.data, c.data, c.bytes); /* the original C, for the reference */
  } else {
    operand_make(&d, f->d, m, n, f->pad + 1, f->batch, 0);
    memset(d.data, 0x5a, d.bytes);
  }
  const struct operand *original_c = f->alias ? &d : &c;
  struct sim_gemm g = {0};
  g.transa = f->transa, g.transb = f->transb;
  g.m = m, g.n = n, g.k = k, g.batch = f->batch;
  g.alpha = f->alpha, g.beta = f->beta;
  g.a = operand_matrix(&a), g.b = operand_matrix(&b), g.c = operand_matrix(&c);
  g.d = f->alias ? g.c : operand_matrix(&d);
  g.bias = f->bias ? bias.data : NULL;
  g.bias_type = f->bias_type;
  g.relu = f->relu;
  /* Both vector widths from the same bytes; they must agree bit for bit. */
  const struct operand *out = f->alias ? &c : &d;
  unsigned char *before = malloc(out->bytes), *narrow = malloc(out->bytes);
  memcpy(before, out->data, out->bytes);
  if (sim_gemm_compute_with(&g, 16) != 0) {
    fprintf(stderr, "sim_gemm_compute_with 16 failed\n");
    failures++;
  }
  memcpy(narrow, out->data, out->bytes);
  memcpy(out->data, before, out->bytes);
  if (sim_gemm_compute_with(&g, 32) != 0) {
    fprintf(stderr, "sim_gemm_compute_with 32 failed\n");
    failures++;
  }
  if (memcmp(narrow, out->data, out->bytes) != 0) {
    fprintf(stderr, "m=%lld n=%lld k=%lld: 16- and 32-byte vectors disagree\n", m, n, k);
    failures++;
  }
  free(before), free(narrow);
  double acc_u = f->a == CUDA_R_64F || f->b == CUDA_R_64F ? 0x1p-53 : 0x1p-24;
  int shown = 0;
  for (long long p = 0; p < f->batch; p++) {
    for (long long j = 0; j < n; j++) {
      for (long long i = 0; i < m; i++) {
        double sum = 0, magnitude = 0;
        for (long long l = 0; l < k; l++) {
          long long ai = p * a.stride + (f->transa ? l + i * a.ld : i + l * a.ld);
          long long bi = p * b.stride + (f->transb ? j + l * b.ld : l + j * b.ld);
          double product = read_element(a.data, a.type, ai) * read_element(b.data, b.type, bi);
          sum += product;
          magnitude += fabs(product);
        }
        double want = f->alpha * sum;
        magnitude = fabs(f->alpha) * magnitude;
        if (f->beta != 0.0) {
          double from_c = f->beta * read_element(original_c->data, f->c, p * c.stride + i + j * c.ld);
          want += from_c;
          magnitude += fabs(from_c);
        }
        if (f->bias) {
          double from_bias = read_element(bias.data, bias.type, i);
          want += from_bias;
          magnitude += fabs(from_bias);
        }
        if (f->relu && !(want > 0.0))
          want = 0.0;
        long long di = p * out->stride + i + j * out->ld;
        double got = read_element(out->data, out->type, di);
        double bound = (double)(k + 4) * acc_u * magnitude + roundoff(out->type) * fabs(want) + 1e-7;
        if (!(fabs(got - want) <= bound) && shown++ < 3) {
          fprintf(stderr,
                  "m=%lld n=%lld k=%lld trans %d%d %s*%s+%s->%s batch %d pad %d alias %d bias %d relu %d "
                  "beta %g: D[%lld,%lld] batch %lld = %.9g, want %.9g (bound %.3g)\n",
                  m, n, k, f->transa, f->transb, type_name(f->a), type_name(f->b), type_name(f->c),
                  type_name(out->type), f->batch, f->pad, f->alias, f->bias, f->relu, f->beta, i, j, p, got,
                  want, bound);
          failures++;
        }
      }
    }
  }
  /* Nothing outside D was written (the aliased C/D keeps its NaN-free pads). */
  const unsigned char *bytes = out->data;
  unsigned char sentinel = f->alias ? 0xa5 : 0x5a;
  size_t size = type_size(out->type);
  for (size_t e = 0; e < out->bytes / size; e++) {
    if (operand_holds(out, (long long)e))
      continue;
    for (size_t s = 0; s < size; s++)
      if (bytes[e * size + s] != sentinel) {
        fprintf(stderr, "m=%lld n=%lld k=%lld: element %zu outside D was written\n", m, n, k, e);
        failures++;
        e = out->bytes, s = size;
      }
  }
  free(a.data), free(b.data), free(c.data), free(d.data), free(bias.data);
}

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Prints the time of one fp32 GEMM at each shape (best of reps) with each vector
 * width the CPU has; `only`, when not NULL, names the one shape to time. */
static int bench(int reps, const char *only)
{
  long long shapes[][5] = {
      {64, 64, 64, 0, 0}, {512, 512, 512, 0, 0}, {256, 64, 512, 1, 0}, /* the linear workload */
  };
  size_t count = sizeof shapes / sizeof shapes[0];
  if (only) {
    char trans[3] = "NN";
    if (sscanf(only, "%lldx%lldx%lld%2[NT]", &shapes[0][0], &shapes[0][1], &shapes[0][2], trans) < 3) {
      fprintf(stderr, "gemm_check: bad shape '%s' (want MxNxK, optionally followed by NN, TN, NT or TT)\n",
              only);
      return 2;
    }
    shapes[0][3] = trans[0] == 'T', shapes[0][4] = trans[1] == 'T';
    count = 1;
  }
  for (size_t s = 0; s < count; s++) {
    long long m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    struct features f = {.transa = (int)shapes[s][3], .transb = (int)shapes[s][4], .batch = 1, .alpha = 1,
                         .a = CUDA_R_32F, .b = CUDA_R_32F, .c = CUDA_R_32F, .d = CUDA_R_32F};
    struct operand a, b, d;
    operand_make(&a, f.a, f.transa ? k : m, f.transa ? m : k, 0, 1, 0);
    operand_make(&b, f.b, f.transb ? n : k, f.transb ? k : n, 0, 1, 0);
    operand_make(&d, f.d, m, n, 0, 1, 0);
    struct sim_gemm g = {.transa = f.transa, .transb = f.transb, .m = m, .n = n, .k = k, .batch = 1, .alpha = 1,
                         .a = operand_matrix(&a), .b = operand_matrix(&b), .d = operand_matrix(&d)};
    g.c = g.d;
    for (int width = 16; width <= sim_gemm_vector_bytes(); width *= 2) {
      double best = 1e300;
      for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        if (sim_gemm_compute_with(&g, width) != 0)
          return 1;
        double t = now_ms() - t0;
        best = t < best ? t : best;
      }
      printf("%lldx%lldx%lld trans %c%c fp32, %d-byte vectors: %.3f ms\n", m, n, k, f.transa ? 'T' : 'N',
             f.transb ? 'T' : 'N', width, best);
    }
    free(a.data), free(b.data), free(d.data);
  }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--bench") == 0)
    return bench(argc > 2 ? atoi(argv[2]) : 5, argc > 3 ? argv[3] : NULL);
  static const long long shapes[][3] = {{1, 1, 1},   {7, 5, 3},      {8, 6, 16},   {9, 7, 1},   {13, 67, 129},
                                        {64, 64, 64}, {33, 17, 0},   {5, 300, 40}, {256, 64, 512}};
  static const cudaDataType types[][5] = {
      /* A, B, C, D, bias */
      {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
      {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F},
      {CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F},
      {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F},
      {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F},
      {CUDA_R_32F, CUDA_R_16F, CUDA_R_64F, CUDA_R_32F, CUDA_R_16BF},
      {CUDA_R_64F, CUDA_R_32F, CUDA_R_32F, CUDA_R_64F, CUDA_R_32F},
  };
  const size_t type_sets = sizeof types / sizeof types[0];
  int cases = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (int trans = 0; trans < 4; trans++) {
      for (size_t t = 0; t < type_sets; t++, cases++) {
        struct features f = {0};
        f.transa = trans & 1, f.transb = trans >> 1;
        f.a = types[t][0], f.b = types[t][1], f.c = types[t][2], f.d = types[t][3], f.bias_type = types[t][4];
        f.bias = cases % 3 == 1;
        f.relu = cases % 4 >= 2;
        f.alias = cases % 5 == 2 && f.c == f.d;
        f.pad = cases % 2 ? 3 : 0;
        f.batch = shapes[s][0] * shapes[s][1] * shapes[s][2] <= 100000 && cases % 7 < 3 ? 3 : 1;
        f.alpha = cases % 6 == 5 ? -1.5 : 1.0;
        f.beta = cases % 5 < 2 ? 0.0 : cases % 5 == 2 ? 0.5 : -1.0;
        if (f.alias && f.beta == 0.0)
          f.beta = 0.25;
        check_case(shapes[s][0], shapes[s][1], shapes[s][2], &f);
      }
    }
  }
  printf("gemm_check: %d cases, each with 16- and %d-byte vectors, %d failures\n", cases,
         sim_gemm_vector_bytes(), failures);
  return failures ? 1 : 0;
}
