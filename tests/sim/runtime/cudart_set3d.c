/* 3-D fills of the simulated libcudart: cudaMemset3D (+_ptds) and cudaMemset3DAsync
 * (+_ptsz), one cuMemsetD2D8(Async) per slice of the extent (a slice is pitch x ysize
 * bytes; extent.width is in bytes for linear memory). */
#include "cudart_internal.h"

static cudaError_t memset_3d(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t stream,
                             int async, int pt)
{
  if (e.width > p.pitch && (e.height > 1 || e.depth > 1))
    return rt_fail(cudaErrorInvalidPitchValue);
  if (e.depth > 1 && e.height > p.ysize)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  if (e.width == 0 || e.height == 0 || e.depth == 0)
    return cudaSuccess;
  size_t slice = p.pitch * p.ysize;
  for (size_t z = 0; z < e.depth; z++) {
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)p.ptr + z * slice;
    CUresult r;
    if (async) {
      RT_NEED(RT_PICK(pt, MemsetD2D8Async));
      r = RT_PICK(pt, MemsetD2D8Async)(d, p.pitch, (unsigned char)value, e.width, e.height, stream);
    } else {
      RT_NEED(RT_PICK(pt, MemsetD2D8));
      r = RT_PICK(pt, MemsetD2D8)(d, p.pitch, (unsigned char)value, e.width, e.height);
    }
    if (r != CUDA_SUCCESS)
      return rt_check(r);
  }
  return cudaSuccess;
}

/** Fills a pitched 3-D region. */
SIM_EXPORT cudaError_t cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value, struct cudaExtent extent)
{
  return memset_3d(pitchedDevPtr, value, extent, 0, 0, 0);
}

/** Fills a pitched 3-D region (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value, struct cudaExtent extent)
{
  return memset_3d(pitchedDevPtr, value, extent, 0, 0, 1);
}

/** Stream-ordered 3-D fill. */
SIM_EXPORT cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value, struct cudaExtent extent,
                                         cudaStream_t stream)
{
  return memset_3d(pitchedDevPtr, value, extent, stream, 1, 0);
}

/** Stream-ordered 3-D fill (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                              struct cudaExtent extent, cudaStream_t stream)
{
  return memset_3d(pitchedDevPtr, value, extent, stream, 1, 1);
}
