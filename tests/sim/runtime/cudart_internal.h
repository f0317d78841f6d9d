/* Shared state of the simulated libcudart.so.13. */
#ifndef SIM_RUNTIME_CUDART_INTERNAL_H
#define SIM_RUNTIME_CUDART_INTERNAL_H

#include "simdrv.h"

#include <cuda_runtime_api.h>

/* Records `err` as the calling thread's last error unless it is a success or
 * cudaErrorNotReady, and returns it. */
cudaError_t rt_fail(cudaError_t err);

/* Maps a driver result to the runtime error the real libcudart reports. */
cudaError_t rt_from_driver(CUresult r);

/* Maps a driver result and records it as the last error; returns the runtime error. */
cudaError_t rt_check(CUresult r);

/* Loads the driver and makes the current device's primary context current on
 * this thread. Returns cudaSuccess or the (already recorded) error. */
cudaError_t rt_enter(void);

/* The device selected by cudaSetDevice on this thread (default 0). */
int rt_current_device(void);

/* Called by cudaDeviceReset: forgets every loaded module so that the next use
 * loads it again into the fresh context. */
void rt_forget_modules(void);

/* The driver function of a registered kernel (a host stub or cudaKernel_t), its module
 * loaded first; records and returns the error when there is none. */
cudaError_t rt_kernel_function(const void *func, CUfunction *out);

/* Looks up the registered device variable whose host shadow is `symbol` and
 * returns its device address and size. */
cudaError_t rt_symbol_address(const void *symbol, CUdeviceptr *address, size_t *size);

/* The primary context of `device` (retained), for peer copies; records the error. */
cudaError_t rt_peer_context(int device, CUcontext *ctx);

/* Returns the per-call function pointer: the _ptsz/_ptds driver variant when
 * `per_thread` is set and the driver has one. */
#define RT_PICK(per_thread, member) \
  (((per_thread) && simdrv.member##_pt) ? simdrv.member##_pt : simdrv.member)

/* Fails with cudaErrorNotSupported (recorded) when a driver function is missing. */
#define RT_NEED(fn) \
  do { if (!(fn)) return rt_fail(cudaErrorNotSupported); } while (0)

/* Fills the driver's 3-D copy descriptor `c` (CUDA_MEMCPY3D or CUDA_MEMCPY3D_PEER, whose
 * linear-memory fields have the same names) from the runtime's parameters `p`
 * (cudaMemcpy3DParms or cudaMemcpy3DPeerParms): positions, pitched pointers as unified
 * memory, extent. */
#define RT_MEMCPY3D_LINEAR(c, p)                                 \
  do {                                                           \
    (c).srcXInBytes = (p)->srcPos.x;                             \
    (c).srcY = (p)->srcPos.y;                                    \
    (c).srcZ = (p)->srcPos.z;                                    \
    (c).srcMemoryType = CU_MEMORYTYPE_UNIFIED;                   \
    (c).srcDevice = (CUdeviceptr)(uintptr_t)(p)->srcPtr.ptr;     \
    (c).srcPitch = (p)->srcPtr.pitch;                            \
    (c).srcHeight = (p)->srcPtr.ysize;                           \
    (c).dstXInBytes = (p)->dstPos.x;                             \
    (c).dstY = (p)->dstPos.y;                                    \
    (c).dstZ = (p)->dstPos.z;                                    \
    (c).dstMemoryType = CU_MEMORYTYPE_UNIFIED;                   \
    (c).dstDevice = (CUdeviceptr)(uintptr_t)(p)->dstPtr.ptr;     \
    (c).dstPitch = (p)->dstPtr.pitch;                            \
    (c).dstHeight = (p)->dstPtr.ysize;                           \
    (c).WidthInBytes = (p)->extent.width;                        \
    (c).Height = (p)->extent.height;                             \
    (c).Depth = (p)->extent.depth;                               \
  } while (0)

/* Bytes per element of the array a 3-D copy's extent counts (src's, else dst's;
 * cudart_array.c): 1 when neither side is an array. Records and returns the error of an
 * array the driver does not know. */
cudaError_t rt_array_element(cudaArray_const_t src, cudaArray_const_t dst, size_t *element);

/* The array sides of the driver's 3-D copy descriptor `c` (CUDA_MEMCPY3D or
 * CUDA_MEMCPY3D_PEER), after RT_MEMCPY3D_LINEAR, from the runtime's parameters `p`
 * (cudaMemcpy3DParms or cudaMemcpy3DPeerParms): CU_MEMORYTYPE_ARRAY sides, their x
 * position and the extent's width (in the array's elements) in bytes. */
#define RT_MEMCPY3D_ARRAYS(c, p, element)                           \
  do {                                                              \
    (c).WidthInBytes = (p)->extent.width * (element);               \
    if ((p)->srcArray) {                                            \
      (c).srcMemoryType = CU_MEMORYTYPE_ARRAY;                      \
      (c).srcArray = (CUarray)(p)->srcArray;                        \
      (c).srcXInBytes = (p)->srcPos.x * (element);                  \
    }                                                               \
    if ((p)->dstArray) {                                            \
      (c).dstMemoryType = CU_MEMORYTYPE_ARRAY;                      \
      (c).dstArray = (CUarray)(p)->dstArray;                        \
      (c).dstXInBytes = (p)->dstPos.x * (element);                  \
    }                                                               \
  } while (0)

/* Enters the runtime or returns the error. */
#define RT_ENTER() \
  do { cudaError_t rt_e_ = rt_enter(); if (rt_e_ != cudaSuccess) return rt_e_; } while (0)

#endif
