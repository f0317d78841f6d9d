/* Kernel launch entry points (also the deprecated multi-device cooperative launch) and
 * the private duration hint used by the simulated cuBLAS. */
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

/* Lifts the tail of every stream of the list to their latest (lock taken); 0, or the
 * error of a stream that does not resolve. */
static CUresult multi_device_barrier(const CUDA_LAUNCH_PARAMS *list, unsigned n)
{
  sim_lock();
  uint64_t latest = 0;
  struct sim_stream *s;
  CUresult r = CUDA_SUCCESS;
  for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++)
    if ((r = sim_stream_resolve(list[i].hStream, 0, &s)) == CUDA_SUCCESS) {
      uint64_t t = sim_stream_ready_ns(s);
      latest = t > latest ? t : latest;
    }
  for (unsigned i = 0; r == CUDA_SUCCESS && i < n; i++)
    if (sim_stream_resolve(list[i].hStream, 0, &s) == CUDA_SUCCESS && s->tail_ns < latest)
      s->tail_ns = latest;
  sim_unlock();
  return r;
}

/** One cooperative kernel per entry, each on its stream (deprecated since CUDA 11.3).
 * Checked: a list, the two sync flags only, created streams (not NULL, LEGACY or
 * PER_THREAD); each kernel waits for all the streams' earlier work (unless
 * CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC), and their later work waits
 * for all the kernels (unless ..._NO_POST_LAUNCH_SYNC). Not checked: one entry per
 * device, identical kernels and shapes; a failing entry leaves the earlier ones
 * launched. */
SIM_API CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList,
                                                      unsigned int numDevices, unsigned int flags)
{
  const unsigned known = CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC |
                         CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC;
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!launchParamsList || !numDevices || (flags & ~known))
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < numDevices; i++) {
    CUstream h = launchParamsList[i].hStream;
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
      return CUDA_ERROR_INVALID_VALUE;
  }
  CUresult r = CUDA_SUCCESS;
  if (!(flags & CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC))
    r = multi_device_barrier(launchParamsList, numDevices);
  for (unsigned i = 0; r == CUDA_SUCCESS && i < numDevices; i++) {
    const CUDA_LAUNCH_PARAMS *p = &launchParamsList[i];
    r = launch_classic(p->function, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
                       p->blockDimZ, p->sharedMemBytes, p->hStream, p->kernelParams, NULL, 0, 1);
  }
  if (r == CUDA_SUCCESS && !(flags & CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC))
    r = multi_device_barrier(launchParamsList, numDevices);
  return r;
}
