/* Launches of the simulated cuBLAS/cuBLASLt kernels through the driver. */
#ifndef SIM_RUNTIME_SIMKERNEL_H
#define SIM_RUNTIME_SIMKERNEL_H

#include "simdrv.h"

/* Loads the driver and makes a context current if none is (cuBLAS is called
 * after the application's runtime made one current). */
CUresult simkernel_init(void);

/* Launches one kernel called `name` on `stream` with the given grid and a
 * 128-thread block, after asking the driver (simcuda_hint_next_launch_ns) to
 * make it last flops / (SIMCUDA_GEMM_TFLOPS, default 50, TFLOP/s), at least
 * 3 us. The kernel comes from a tiny PTX module with one empty entry named
 * `name`, loaded once per name with cuModuleLoadData + cuModuleGetFunction. */
CUresult simkernel_launch(const char *name, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                          CUstream stream, double flops);

/* Returns 1 unless SIMCUBLAS_COMPUTE=0 asks to skip the CPU computation (the
 * results are then left untouched; timing is unchanged). */
int simkernel_compute_enabled(void);

/* Spins for the host time the environment variable `var` plants (microseconds; none
 * when unset or 0): the library's own setup work, as in real cuBLAS
 * (SIMCUBLAS_CREATE_US for handle creation, SIMCUBLAS_HEURISTIC_US for
 * cublasLtMatmulAlgoGetHeuristic). Leaves errno as it found it. */
void simkernel_host_work(const char *var);


#include <library_types.h>
#include <stddef.h>

/* Writes a cuBLAS-like kernel name for a GEMM with element type `type`
 * (TF32 tensor-core naming when `tf32`), transposes `transa`/`transb` and an
 * epilogue token ("" or e.g. "bias_f32_relu_") into buf. */
void simkernel_gemm_name(char *buf, size_t size, cudaDataType type, int tf32, int transa, int transb,
                         const char *epilogue);

#endif
