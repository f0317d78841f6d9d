/* cuBLAS / cuBLASLt error checks and a CPU reference for the GEMM workloads. */
#ifndef CUTRACE_WORKLOAD_BLAS_H
#define CUTRACE_WORKLOAD_BLAS_H

#include "workload.h"
#include <library_types.h>
#include <cublas_api.h>

/* Name of a cuBLAS status, without calling into cuBLAS (so the check adds no
 * imported symbol of its own). */
static inline const char *wl_blas_status_name(cublasStatus_t status)
{
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  default: return "unknown cuBLAS status";
  }
}

/* Exits 1 with the failing cuBLAS/cuBLASLt call and its status. */
#define WL_CHECK_BLAS(call)                                                      \
  do {                                                                           \
    cublasStatus_t wl_status_ = (call);                                          \
    if (wl_status_ != CUBLAS_STATUS_SUCCESS) {                                   \
      fprintf(stderr, "%s: %s:%d: %s failed: %s (%d)\n", wl_prog, __FILE__,      \
              __LINE__, #call, wl_blas_status_name(wl_status_), (int)wl_status_);\
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

/* One element of the row-major product x[rows, inner] . w[inner, cols] (or
 * . w^T when w_transposed and w is stored [cols, inner]), in double. */
static inline double wl_ref_dot(const float *x, const float *w, int inner, int cols, int row, int col,
                         int w_transposed)
{
  double acc = 0.0;
  for (int k = 0; k < inner; k++) {
    double wk = w_transposed ? w[(size_t)col * inner + k] : w[(size_t)k * cols + col];
    acc += (double)x[(size_t)row * inner + k] * wk;
  }
  return acc;
}

/* The sample-th of the spread-out positions the result checks look at, in a
 * rows x cols matrix (the corners first, then a scatter). */
static inline void wl_sample_position(int sample, int rows, int cols, int *row, int *col)
{
  if (sample < 4) {
    *row = (sample & 1) ? rows - 1 : 0;
    *col = (sample & 2) ? cols - 1 : 0;
    return;
  }
  *row = (int)((sample * 7919L + 3) % rows);
  *col = (int)((sample * 104729L + 11) % cols);
}

#endif
