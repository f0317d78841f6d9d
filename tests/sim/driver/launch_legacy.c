/* The launch API of CUDA 1.x-3.x, deprecated since 4.0 but still exported: the block
 * shape and dynamic shared memory set on the function (cuFuncSetBlockShape,
 * cuFuncSetSharedSize), the parameters set one by one (cuParamSetSize, cuParamSeti,
 * cuParamSetf, cuParamSetv: checked against the size, not kept: the simulator runs no
 * device code), then cuLaunch (a 1 x 1 grid), cuLaunchGrid (on the legacy stream) or
 * cuLaunchGridAsync, each a launch of the function through sim_launch. A launch before
 * a block shape was set fails with CUDA_ERROR_INVALID_VALUE. */
#define CUDA_ENABLE_DEPRECATED
#include "module.h"

/* Runs fn on the function of handle f (lock held around it); invalid handle when none. */
#define WITH_FUNCTION(f, BODY)                           \
  do {                                                   \
    sim_lock();                                          \
    struct sim_function *fn = sim_function_of(f);        \
    CUresult r_ = fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; \
    if (fn) {                                            \
      BODY;                                              \
    }                                                    \
    sim_unlock();                                        \
    return r_;                                           \
  } while (0)

/** Sets the block shape of the function's later legacy launches. */
SIM_API CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
  if (x <= 0 || y <= 0 || z <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  WITH_FUNCTION(hfunc, fn->legacy_block[0] = (unsigned)x; fn->legacy_block[1] = (unsigned)y;
                fn->legacy_block[2] = (unsigned)z);
}

/** Sets the dynamic shared memory of the function's later legacy launches. */
SIM_API CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
  WITH_FUNCTION(hfunc, fn->legacy_shared = bytes);
}

/** Sets the size of the function's parameter buffer. */
SIM_API CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
  WITH_FUNCTION(hfunc, fn->legacy_param_size = numbytes);
}

/* Checks that [offset, offset + n) lies in the parameter buffer (lock held). */
static CUresult param_range(const struct sim_function *fn, int offset, unsigned n)
{
  return offset >= 0 && (unsigned long long)offset + n <= fn->legacy_param_size ? CUDA_SUCCESS
                                                                                 : CUDA_ERROR_INVALID_VALUE;
}

/** Sets an integer parameter (checked, not kept). */
SIM_API CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
  (void)value;
  WITH_FUNCTION(hfunc, r_ = param_range(fn, offset, sizeof value));
}

/** Sets a float parameter (checked, not kept). */
SIM_API CUresult cuParamSetf(CUfunction hfunc, int offset, float value)
{
  (void)value;
  WITH_FUNCTION(hfunc, r_ = param_range(fn, offset, sizeof value));
}

/** Sets numbytes of parameters (checked, not kept). */
SIM_API CUresult cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes)
{
  if (!ptr && numbytes)
    return CUDA_ERROR_INVALID_VALUE;
  WITH_FUNCTION(hfunc, r_ = param_range(fn, offset, numbytes));
}

static CUresult legacy_launch(CUfunction f, int grid_width, int grid_height, CUstream stream)
{
  if (grid_width <= 0 || grid_height <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  unsigned block[3] = {0, 0, 0}, shared = 0;
  sim_lock();
  struct sim_function *fn = sim_function_of(f);
  if (fn) {
    block[0] = fn->legacy_block[0], block[1] = fn->legacy_block[1], block[2] = fn->legacy_block[2];
    shared = fn->legacy_shared;
  }
  sim_unlock();
  if (!fn)
    return CUDA_ERROR_INVALID_HANDLE;
  const unsigned grid[3] = {(unsigned)grid_width, (unsigned)grid_height, 1};
  return sim_launch(f, grid, block, shared, stream, 0, NULL, NULL, 0);
}

/** Launches a 1 x 1 grid of the function on the legacy stream. */
SIM_API CUresult cuLaunch(CUfunction f)
{
  return legacy_launch(f, 1, 1, NULL);
}

/** Launches a grid_width x grid_height grid of the function on the legacy stream. */
SIM_API CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
  return legacy_launch(f, grid_width, grid_height, NULL);
}

/** Launches a grid_width x grid_height grid of the function on the stream. */
SIM_API CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
  return legacy_launch(f, grid_width, grid_height, hStream);
}
