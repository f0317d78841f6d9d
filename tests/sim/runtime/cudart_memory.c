/* Allocation, copies and memsets of the simulated libcudart. The plain entry
 * points use the legacy default stream; the _ptds/_ptsz ones use the driver's
 * per-thread variants, for which stream 0 is the per-thread default stream. */
#include "cudart_internal.h"

#include <string.h>

static cudaError_t check_kind(enum cudaMemcpyKind kind)
{
  if ((unsigned)kind > cudaMemcpyDefault)
    return rt_fail(cudaErrorInvalidMemcpyDirection);
  return cudaSuccess;
}

/** Allocates device memory. */
SIM_EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
  if (!ptr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  *ptr = NULL;
  if (size == 0)
    return cudaSuccess;
  CUdeviceptr d = 0;
  CUresult r = simdrv.MemAlloc(&d, size);
  if (r != CUDA_SUCCESS)
    return rt_fail(r == CUDA_ERROR_OUT_OF_MEMORY ? cudaErrorMemoryAllocation : rt_from_driver(r));
  *ptr = (void *)(uintptr_t)d;
  return cudaSuccess;
}

/** Allocates pitched device memory: `height` rows of at least `width` bytes
 * (cuMemAllocPitch with 16-byte elements). */
SIM_EXPORT cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
  if (!ptr || !pitch)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.MemAllocPitch);
  CUdeviceptr d = 0;
  CUresult r = simdrv.MemAllocPitch(&d, pitch, width, height, 16);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rt_fail(cudaErrorMemoryAllocation);
  if (r == CUDA_SUCCESS)
    *ptr = (void *)(uintptr_t)d;
  return rt_check(r);
}

/** Frees device memory (NULL is accepted). */
SIM_EXPORT cudaError_t cudaFree(void *ptr)
{
  RT_ENTER();
  if (!ptr)
    return cudaSuccess;
  CUresult r = simdrv.MemFree((CUdeviceptr)(uintptr_t)ptr);
  return r == CUDA_SUCCESS ? cudaSuccess : rt_fail(cudaErrorInvalidValue);
}

/** Allocates page-locked host memory. */
SIM_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
  if (!ptr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.MemAllocHost);
  CUresult r = simdrv.MemAllocHost(ptr, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rt_fail(cudaErrorMemoryAllocation);
  return rt_check(r);
}

/** Allocates page-locked host memory with cudaHostAlloc* flags. */
SIM_EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
  if (!ptr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.MemHostAlloc);
  CUresult r = simdrv.MemHostAlloc(ptr, size, flags);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rt_fail(cudaErrorMemoryAllocation);
  return rt_check(r);
}

/** Frees page-locked host memory. */
SIM_EXPORT cudaError_t cudaFreeHost(void *ptr)
{
  RT_ENTER();
  if (!ptr)
    return cudaSuccess;
  RT_NEED(simdrv.MemFreeHost);
  return rt_check(simdrv.MemFreeHost(ptr));
}

/** Page-locks an existing host range. */
SIM_EXPORT cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
  RT_ENTER();
  RT_NEED(simdrv.MemHostRegister);
  return rt_check(simdrv.MemHostRegister(ptr, size, flags));
}

/** Releases a range registered with cudaHostRegister. */
SIM_EXPORT cudaError_t cudaHostUnregister(void *ptr)
{
  RT_ENTER();
  RT_NEED(simdrv.MemHostUnregister);
  return rt_check(simdrv.MemHostUnregister(ptr));
}

/** Allocates managed memory. */
SIM_EXPORT cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
  if (!ptr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(simdrv.MemAllocManaged);
  CUdeviceptr d = 0;
  CUresult r = simdrv.MemAllocManaged(&d, size, flags ? flags : CU_MEM_ATTACH_GLOBAL);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rt_fail(cudaErrorMemoryAllocation);
  *ptr = (void *)(uintptr_t)d;
  return rt_check(r);
}

static cudaError_t malloc_async(void **ptr, size_t size, cudaStream_t stream, int pt)
{
  if (!ptr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemAllocAsync));
  CUdeviceptr d = 0;
  CUresult r = RT_PICK(pt, MemAllocAsync)(&d, size, stream);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return rt_fail(cudaErrorMemoryAllocation);
  *ptr = (void *)(uintptr_t)d;
  return rt_check(r);
}

/** Stream-ordered allocation. */
SIM_EXPORT cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
  return malloc_async(ptr, size, stream, 0);
}

/** Stream-ordered allocation (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
  return malloc_async(ptr, size, stream, 1);
}

static cudaError_t free_async(void *ptr, cudaStream_t stream, int pt)
{
  RT_ENTER();
  RT_NEED(RT_PICK(pt, MemFreeAsync));
  return rt_check(RT_PICK(pt, MemFreeAsync)((CUdeviceptr)(uintptr_t)ptr, stream));
}

/** Stream-ordered free. */
SIM_EXPORT cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
  return free_async(ptr, stream, 0);
}

/** Stream-ordered free (per-thread default stream). */
SIM_EXPORT cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
  return free_async(ptr, stream, 1);
}

/** Reports free and total device memory. */
SIM_EXPORT cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
  RT_ENTER();
  RT_NEED(simdrv.MemGetInfo);
  return rt_check(simdrv.MemGetInfo(free_bytes, total_bytes));
}

/** Describes a pointer; unknown host pointers are cudaMemoryTypeUnregistered. */
SIM_EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *attr, const void *ptr)
{
  if (!attr)
    return rt_fail(cudaErrorInvalidValue);
  RT_ENTER();
  memset(attr, 0, sizeof *attr);
  attr->device = rt_current_device();
  unsigned int type = 0;
  CUdeviceptr p = (CUdeviceptr)(uintptr_t)ptr;
  if (!simdrv.PointerGetAttribute
      || simdrv.PointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS) {
    attr->type = cudaMemoryTypeUnregistered;
    attr->hostPointer = (void *)ptr;
    return cudaSuccess;
  }
  int managed = 0;
  simdrv.PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
  if (managed)
    attr->type = cudaMemoryTypeManaged;
  else
    attr->type = type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  int ordinal = 0;
  if (simdrv.PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) == CUDA_SUCCESS)
    attr->device = ordinal;
  void *dp = NULL, *hp = NULL;
  if (simdrv.PointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p) != CUDA_SUCCESS)
    dp = attr->type == cudaMemoryTypeDevice ? (void *)ptr : NULL;
  if (simdrv.PointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p) != CUDA_SUCCESS)
    hp = attr->type == cudaMemoryTypeDevice ? NULL : (void *)ptr;
  attr->devicePointer = dp;
  attr->hostPointer = hp;
  return cudaSuccess;
}

/* ---- copies ---- */

static cudaError_t memcpy_sync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, int pt)
{
  if (check_kind(kind))
    return cudaErrorInvalidMemcpyDirection;
  RT_ENTER();
  if (count == 0)
    return cudaSuccess;
  return rt_check(RT_PICK(pt, Memcpy)((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count));
}

static cudaError_t memcpy_async(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                cudaStream_t stream, int pt)
{
  if (check_kind(kind))
    return cudaErrorInvalidMemcpyDirection;
  RT_ENTER();
  if (count == 0)
    return cudaSuccess;
  return rt_check(RT_PICK(pt, MemcpyAsync)((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
                                           count, stream));
}

/** Synchronous copy between any two addresses. */
SIM_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
  return memcpy_sync(dst, src, count, kind, 0);
}

/** Synchronous copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
  return memcpy_sync(dst, src, count, kind, 1);
}

/** Stream-ordered copy. */
SIM_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                       enum cudaMemcpyKind kind, cudaStream_t stream)
{
  return memcpy_async(dst, src, count, kind, stream, 0);
}

/** Stream-ordered copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                            enum cudaMemcpyKind kind, cudaStream_t stream)
{
  return memcpy_async(dst, src, count, kind, stream, 1);
}

static void fill_2d(CUDA_MEMCPY2D *c, void *dst, size_t dpitch, const void *src, size_t spitch,
                    size_t width, size_t height)
{
  memset(c, 0, sizeof *c);
  c->srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  c->srcDevice = (CUdeviceptr)(uintptr_t)src;
  c->srcPitch = spitch;
  c->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  c->dstDevice = (CUdeviceptr)(uintptr_t)dst;
  c->dstPitch = dpitch;
  c->WidthInBytes = width;
  c->Height = height;
}

static cudaError_t memcpy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, int async, int pt)
{
  if (check_kind(kind))
    return cudaErrorInvalidMemcpyDirection;
  if (width > dpitch || width > spitch)
    return rt_fail(cudaErrorInvalidPitchValue);
  RT_ENTER();
  if (width == 0 || height == 0)
    return cudaSuccess;
  CUDA_MEMCPY2D c;
  fill_2d(&c, dst, dpitch, src, spitch, width, height);
  if (async) {
    RT_NEED(RT_PICK(pt, Memcpy2DAsync));
    return rt_check(RT_PICK(pt, Memcpy2DAsync)(&c, stream));
  }
  RT_NEED(RT_PICK(pt, Memcpy2DUnaligned));
  return rt_check(RT_PICK(pt, Memcpy2DUnaligned)(&c));
}

/** Synchronous pitched 2-D copy. */
SIM_EXPORT cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                    size_t width, size_t height, enum cudaMemcpyKind kind)
{
  return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, 0, 0, 0);
}

/** Synchronous pitched 2-D copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                         size_t width, size_t height, enum cudaMemcpyKind kind)
{
  return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, 0, 0, 1);
}

/** Stream-ordered pitched 2-D copy. */
SIM_EXPORT cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                         size_t width, size_t height, enum cudaMemcpyKind kind,
                                         cudaStream_t stream)
{
  return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, 0);
}

/** Stream-ordered pitched 2-D copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                              size_t width, size_t height, enum cudaMemcpyKind kind,
                                              cudaStream_t stream)
{
  return memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 1, 1);
}

static cudaError_t memcpy_3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream, int async, int pt)
{
  if (!p)
    return rt_fail(cudaErrorInvalidValue);
  if (check_kind(p->kind))
    return cudaErrorInvalidMemcpyDirection;
  RT_ENTER();
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  RT_MEMCPY3D_LINEAR(c, p);
  size_t element;
  cudaError_t e = rt_array_element(p->srcArray, p->dstArray, &element);
  if (e != cudaSuccess)
    return e;
  RT_MEMCPY3D_ARRAYS(c, p, element);
  if (async) {
    RT_NEED(RT_PICK(pt, Memcpy3DAsync));
    return rt_check(RT_PICK(pt, Memcpy3DAsync)(&c, stream));
  }
  RT_NEED(RT_PICK(pt, Memcpy3D));
  return rt_check(RT_PICK(pt, Memcpy3D)(&c));
}

/** Synchronous 3-D copy between pitched linear allocations and CUDA arrays. */
SIM_EXPORT cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
  return memcpy_3d(p, 0, 0, 0);
}

/** Synchronous 3-D copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
  return memcpy_3d(p, 0, 0, 1);
}

/** Stream-ordered 3-D copy. */
SIM_EXPORT cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
  return memcpy_3d(p, stream, 1, 0);
}

/** Stream-ordered 3-D copy (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p, cudaStream_t stream)
{
  return memcpy_3d(p, stream, 1, 1);
}

cudaError_t rt_peer_context(int device, CUcontext *ctx)
{
  CUdevice dev;
  if (simdrv.DeviceGet(&dev, device) != CUDA_SUCCESS)
    return rt_fail(cudaErrorInvalidDevice);
  return rt_check(simdrv.DevicePrimaryCtxRetain(ctx, dev));
}

static cudaError_t memcpy_peer(void *dst, int dst_dev, const void *src, int src_dev, size_t count,
                               cudaStream_t stream, int async, int pt)
{
  RT_ENTER();
  CUcontext dctx, sctx;
  cudaError_t e = rt_peer_context(dst_dev, &dctx);
  if (e == cudaSuccess)
    e = rt_peer_context(src_dev, &sctx);
  if (e != cudaSuccess)
    return e;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
  if (async) {
    RT_NEED(RT_PICK(pt, MemcpyPeerAsync));
    return rt_check(RT_PICK(pt, MemcpyPeerAsync)(d, dctx, s, sctx, count, stream));
  }
  RT_NEED(RT_PICK(pt, MemcpyPeer));
  return rt_check(RT_PICK(pt, MemcpyPeer)(d, dctx, s, sctx, count));
}

/** Synchronous copy between devices. */
SIM_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dst_dev, const void *src, int src_dev, size_t count)
{
  return memcpy_peer(dst, dst_dev, src, src_dev, count, 0, 0, 0);
}

/** Synchronous copy between devices (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyPeer_ptds(void *dst, int dst_dev, const void *src, int src_dev, size_t count)
{
  return memcpy_peer(dst, dst_dev, src, src_dev, count, 0, 0, 1);
}

/** Stream-ordered copy between devices. */
SIM_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev,
                                           size_t count, cudaStream_t stream)
{
  return memcpy_peer(dst, dst_dev, src, src_dev, count, stream, 1, 0);
}

/** Stream-ordered copy between devices (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyPeerAsync_ptsz(void *dst, int dst_dev, const void *src, int src_dev,
                                                size_t count, cudaStream_t stream)
{
  return memcpy_peer(dst, dst_dev, src, src_dev, count, stream, 1, 1);
}

static cudaError_t symbol_copy(void *dst, const void *src, size_t count, size_t offset, int to_symbol,
                               const void *symbol, enum cudaMemcpyKind kind, cudaStream_t stream,
                               int async, int pt)
{
  if (check_kind(kind))
    return cudaErrorInvalidMemcpyDirection;
  RT_ENTER();
  CUdeviceptr base;
  size_t size;
  cudaError_t e = rt_symbol_address(symbol, &base, &size);
  if (e != cudaSuccess)
    return e;
  if (offset > size || count > size - offset)
    return rt_fail(cudaErrorInvalidValue);
  void *dev = (void *)(uintptr_t)(base + offset);
  if (to_symbol)
    dst = dev;
  else
    src = dev;
  return async ? memcpy_async(dst, src, count, kind, stream, pt) : memcpy_sync(dst, src, count, kind, pt);
}

/** Copies host/device data into a __device__ variable. */
SIM_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                          size_t offset, enum cudaMemcpyKind kind)
{
  return symbol_copy(NULL, src, count, offset, 1, symbol, kind, 0, 0, 0);
}

/** Copies into a __device__ variable (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                               size_t offset, enum cudaMemcpyKind kind)
{
  return symbol_copy(NULL, src, count, offset, 1, symbol, kind, 0, 0, 1);
}

/** Copies a __device__ variable out. */
SIM_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                            size_t offset, enum cudaMemcpyKind kind)
{
  return symbol_copy(dst, NULL, count, offset, 0, symbol, kind, 0, 0, 0);
}

/** Copies a __device__ variable out (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                                 size_t offset, enum cudaMemcpyKind kind)
{
  return symbol_copy(dst, NULL, count, offset, 0, symbol, kind, 0, 0, 1);
}

/** Stream-ordered copy into a __device__ variable. */
SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                               size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
  return symbol_copy(NULL, src, count, offset, 1, symbol, kind, stream, 1, 0);
}

/** Stream-ordered copy into a __device__ variable (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                    size_t offset, enum cudaMemcpyKind kind,
                                                    cudaStream_t stream)
{
  return symbol_copy(NULL, src, count, offset, 1, symbol, kind, stream, 1, 1);
}

/** Stream-ordered copy out of a __device__ variable. */
SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                                 size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
  return symbol_copy(dst, NULL, count, offset, 0, symbol, kind, stream, 1, 0);
}

/** Stream-ordered copy out of a __device__ variable (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                      size_t offset, enum cudaMemcpyKind kind,
                                                      cudaStream_t stream)
{
  return symbol_copy(dst, NULL, count, offset, 0, symbol, kind, stream, 1, 1);
}

/* ---- memsets ---- */

static cudaError_t memset_1d(void *ptr, int value, size_t count, cudaStream_t stream, int async, int pt)
{
  RT_ENTER();
  if (count == 0)
    return cudaSuccess;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)ptr;
  if (async)
    return rt_check(RT_PICK(pt, MemsetD8Async)(d, (unsigned char)value, count, stream));
  return rt_check(RT_PICK(pt, MemsetD8)(d, (unsigned char)value, count));
}

/** Fills device memory with a byte value. */
SIM_EXPORT cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
  return memset_1d(ptr, value, count, 0, 0, 0);
}

/** Fills device memory (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemset_ptds(void *ptr, int value, size_t count)
{
  return memset_1d(ptr, value, count, 0, 0, 1);
}

/** Stream-ordered fill. */
SIM_EXPORT cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
  return memset_1d(ptr, value, count, stream, 1, 0);
}

/** Stream-ordered fill (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *ptr, int value, size_t count, cudaStream_t stream)
{
  return memset_1d(ptr, value, count, stream, 1, 1);
}

static cudaError_t memset_2d(void *ptr, size_t pitch, int value, size_t width, size_t height,
                             cudaStream_t stream, int async, int pt)
{
  if (width > pitch && height > 1)
    return rt_fail(cudaErrorInvalidPitchValue);
  RT_ENTER();
  if (width == 0 || height == 0)
    return cudaSuccess;
  CUdeviceptr d = (CUdeviceptr)(uintptr_t)ptr;
  if (async) {
    RT_NEED(RT_PICK(pt, MemsetD2D8Async));
    return rt_check(RT_PICK(pt, MemsetD2D8Async)(d, pitch, (unsigned char)value, width, height, stream));
  }
  RT_NEED(RT_PICK(pt, MemsetD2D8));
  return rt_check(RT_PICK(pt, MemsetD2D8)(d, pitch, (unsigned char)value, width, height));
}

/** Fills a pitched 2-D region. */
SIM_EXPORT cudaError_t cudaMemset2D(void *ptr, size_t pitch, int value, size_t width, size_t height)
{
  return memset_2d(ptr, pitch, value, width, height, 0, 0, 0);
}

/** Fills a pitched 2-D region (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemset2D_ptds(void *ptr, size_t pitch, int value, size_t width, size_t height)
{
  return memset_2d(ptr, pitch, value, width, height, 0, 0, 1);
}

/** Stream-ordered 2-D fill. */
SIM_EXPORT cudaError_t cudaMemset2DAsync(void *ptr, size_t pitch, int value, size_t width, size_t height,
                                         cudaStream_t stream)
{
  return memset_2d(ptr, pitch, value, width, height, stream, 1, 0);
}

/** Stream-ordered 2-D fill (per-thread default stream). */
SIM_EXPORT cudaError_t cudaMemset2DAsync_ptsz(void *ptr, size_t pitch, int value, size_t width,
                                              size_t height, cudaStream_t stream)
{
  return memset_2d(ptr, pitch, value, width, height, stream, 1, 1);
}
