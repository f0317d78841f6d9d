/* Kernel launch entry points and the private duration hint used by the
 * simulated cuBLAS. */
#include "sim.h"

__thread unsigned long long sim_next_launch_ns;

/** Private to the simulator: the calling thread's next launch lasts `ns` (used by
 * the simulated cuBLAS for FLOP-based GEMM durations). */
SIM_API void simcuda_hint_next_launch_ns(unsigned long long ns)
{
  sim_next_launch_ns = ns;
}

static CUresult launch_classic(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shm, CUstream h, void **params, void **extra, int pt,
                               int cooperative)
{
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  return sim_launch(f, grid, block, shm, h, pt, params, extra, cooperative);
}

/** Launches a kernel (a CUkernel may be passed as the CUfunction). */
SIM_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
  return launch_classic(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, extra, 0, 0);
}

/** cuLaunchKernel through the per-thread default stream entry point. */
SIM_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
  return launch_classic(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, extra, 1, 0);
}

/** Launches a cooperative kernel (the grid must fit on the device at once). */
SIM_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void **kernelParams)
{
  return launch_classic(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, NULL, 0, 1);
}

/** cuLaunchCooperativeKernel through the per-thread default stream entry point. */
SIM_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX,
                                                unsigned int blockDimY, unsigned int blockDimZ,
                                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
  return launch_classic(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                        kernelParams, NULL, 1, 1);
}

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra, int pt)
{
  if (!config || (config->numAttrs && !config->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  int cooperative = 0;
  for (unsigned i = 0; i < config->numAttrs; i++)
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && config->attrs[i].value.cooperative)
      cooperative = 1;
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  return sim_launch(f, grid, block, config->sharedMemBytes, config->hStream, pt, params, extra, cooperative);
}

/** Launches a kernel described by a CUlaunchConfig (attributes mostly ignored). */
SIM_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
  return launch_ex(config, f, kernelParams, extra, 0);
}

/** cuLaunchKernelEx through the per-thread default stream entry point. */
SIM_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                       void **extra)
{
  return launch_ex(config, f, kernelParams, extra, 1);
}
