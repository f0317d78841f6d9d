/* The memcpy family (the memsets are in fill.c). Bytes move when the operation is
 * enqueued; the timing follows the model: pinned and pageable host copies at their
 * bandwidths (pageable ones synchronous with the host), device-to-device copies at
 * device bandwidth, each with a fixed latency. */
#include "sim.h"

#include <string.h>

void sim_copy_apply(const struct sim_copy *c)
{
  for (size_t z = 0; z < c->depth; z++)
    for (size_t y = 0; y < c->height; y++)
      memmove(c->dst + z * c->dst_slice + y * c->dst_pitch, c->src + z * c->src_slice + y * c->src_pitch,
              c->width);
}

/* Which side of the bus a pointer is on, as the copy engine sees it. */
enum side { SIDE_PAGEABLE, SIDE_PINNED, SIDE_DEVICE };

/* Classifies [p, p + extent) and checks that device memory holds it (lock held). */
static CUresult classify(const char *p, size_t extent, enum side *out)
{
  char *base;
  size_t size;
  enum sim_mem_type t = sim_mem_lookup(p, &base, &size, NULL);
  if (t == SIM_MEM_NONE) {
    *out = SIDE_PAGEABLE;
    return CUDA_SUCCESS;
  }
  if (extent > size || (size_t)(p - base) > size - extent)
    return CUDA_ERROR_INVALID_VALUE;
  *out = t == SIM_MEM_PINNED ? SIDE_PINNED : SIDE_DEVICE;
  return CUDA_SUCCESS;
}

/* Bytes spanned by a strided region. */
static size_t extent_of(size_t width, size_t height, size_t depth, size_t pitch, size_t slice)
{
  if (!width || !height || !depth)
    return 0;
  return (depth - 1) * slice + (height - 1) * pitch + width;
}

/* Enqueues a copy. `sync` is set for the non-Async entry points. */
CUresult sim_copy_submit(const struct sim_copy *c, enum sim_expect dst_expect, enum sim_expect src_expect,
                            CUstream hStream, int per_thread, int sync)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  size_t bytes = c->width * c->height * c->depth;
  if (bytes == 0)
    return CUDA_SUCCESS;
  if (!c->dst || !c->src)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  enum side dst_side = SIDE_PAGEABLE, src_side = SIDE_PAGEABLE;
  /* an array's bytes are device memory, their bounds checked by array.c */
  if (r == CUDA_SUCCESS && dst_expect == SIM_EXPECT_ARRAY)
    dst_side = SIDE_DEVICE;
  else if (r == CUDA_SUCCESS)
    r = classify(c->dst, extent_of(c->width, c->height, c->depth, c->dst_pitch, c->dst_slice), &dst_side);
  if (r == CUDA_SUCCESS && src_expect == SIM_EXPECT_ARRAY)
    src_side = SIDE_DEVICE;
  else if (r == CUDA_SUCCESS)
    r = classify(c->src, extent_of(c->width, c->height, c->depth, c->src_pitch, c->src_slice), &src_side);
  if (r == CUDA_SUCCESS && ((dst_expect == SIM_EXPECT_DEVICE && dst_side == SIDE_PAGEABLE)
                            || (src_expect == SIM_EXPECT_DEVICE && src_side == SIDE_PAGEABLE)))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS && sync && sim_capture_forbids_unsafe_call())
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (r != CUDA_SUCCESS) {
    sim_unlock();
    return r;
  }
  /* An explicit host side is host memory even when it is mapped device-visible. */
  int dst_dev = dst_expect == SIM_EXPECT_HOST ? 0 : dst_side == SIDE_DEVICE;
  int src_dev = src_expect == SIM_EXPECT_HOST ? 0 : src_side == SIDE_DEVICE;
  struct sim_op op = {.kind = SIM_OP_MEMCPY, .u.copy = *c};
  double gbps;
  int pageable = 0;
  if (dst_dev && src_dev) {
    strcpy(op.name, "DtoD");
    gbps = sim_knobs.d2d_gbps;
  } else if (dst_dev || src_dev) {
    strcpy(op.name, dst_dev ? "HtoD" : "DtoH");
    pageable = (dst_dev ? src_side : dst_side) == SIDE_PAGEABLE;
    gbps = pageable ? sim_knobs.pageable_gbps : sim_knobs.pinned_gbps;
  } else {
    strcpy(op.name, "HtoH");
    pageable = dst_side == SIDE_PAGEABLE || src_side == SIDE_PAGEABLE;
    gbps = sim_knobs.pageable_gbps;
  }
  op.duration_ns = sim_transfer_ns(bytes, gbps);
  uint64_t end = 0;
  int capturing = s->capture != NULL;
  r = sim_submit(s, &op, &end);
  sim_unlock();
  /* Synchronous copies return when done (device-to-device ones do not wait);
   * pageable copies are synchronous with the host even through Async calls. */
  if (r == CUDA_SUCCESS && !capturing && ((sync && !(dst_dev && src_dev)) || pageable))
    sim_wait_until(end);
  return r;
}

static struct sim_copy linear(CUdeviceptr_v2 dst, const void *src, size_t n)
{
  struct sim_copy c = {.dst = (char *)(uintptr_t)dst, .src = src, .width = n, .height = 1, .depth = 1};
  return c;
}

#define DPTR(p) ((const void *)(uintptr_t)(p))

CUresult sim_copy_linear_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream,
                               int per_thread)
{
  struct sim_copy c = linear(dst, DPTR(src), n);
  return sim_copy_submit(&c, SIM_EXPECT_ANY, SIM_EXPECT_ANY, hStream, per_thread, 0);
}

/* X(name, per_thread, sync, dst expect, src expect, dst argument, src argument). */
#define SIM_LINEAR_COPIES(X)                                                               \
  X(cuMemcpyHtoD_v2, 0, 1, SIM_EXPECT_DEVICE, SIM_EXPECT_HOST, CUdeviceptr dst, const void *src)   \
  X(cuMemcpyHtoD_v2_ptds, 1, 1, SIM_EXPECT_DEVICE, SIM_EXPECT_HOST, CUdeviceptr dst, const void *src) \
  X(cuMemcpyDtoH_v2, 0, 1, SIM_EXPECT_HOST, SIM_EXPECT_DEVICE, void *dst, CUdeviceptr src)         \
  X(cuMemcpyDtoH_v2_ptds, 1, 1, SIM_EXPECT_HOST, SIM_EXPECT_DEVICE, void *dst, CUdeviceptr src)    \
  X(cuMemcpyDtoD_v2, 0, 1, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, CUdeviceptr dst, CUdeviceptr src) \
  X(cuMemcpyDtoD_v2_ptds, 1, 1, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, CUdeviceptr dst, CUdeviceptr src) \
  X(cuMemcpy, 0, 1, SIM_EXPECT_ANY, SIM_EXPECT_ANY, CUdeviceptr dst, CUdeviceptr src)              \
  X(cuMemcpy_ptds, 1, 1, SIM_EXPECT_ANY, SIM_EXPECT_ANY, CUdeviceptr dst, CUdeviceptr src)

#define SIM_ASYNC_COPIES(X)                                                                \
  X(cuMemcpyHtoDAsync_v2, 0, 0, SIM_EXPECT_DEVICE, SIM_EXPECT_HOST, CUdeviceptr dst, const void *src) \
  X(cuMemcpyHtoDAsync_v2_ptsz, 1, 0, SIM_EXPECT_DEVICE, SIM_EXPECT_HOST, CUdeviceptr dst, const void *src) \
  X(cuMemcpyDtoHAsync_v2, 0, 0, SIM_EXPECT_HOST, SIM_EXPECT_DEVICE, void *dst, CUdeviceptr src)    \
  X(cuMemcpyDtoHAsync_v2_ptsz, 1, 0, SIM_EXPECT_HOST, SIM_EXPECT_DEVICE, void *dst, CUdeviceptr src) \
  X(cuMemcpyDtoDAsync_v2, 0, 0, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, CUdeviceptr dst, CUdeviceptr src) \
  X(cuMemcpyDtoDAsync_v2_ptsz, 1, 0, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, CUdeviceptr dst, CUdeviceptr src) \
  X(cuMemcpyAsync, 0, 0, SIM_EXPECT_ANY, SIM_EXPECT_ANY, CUdeviceptr dst, CUdeviceptr src)         \
  X(cuMemcpyAsync_ptsz, 1, 0, SIM_EXPECT_ANY, SIM_EXPECT_ANY, CUdeviceptr dst, CUdeviceptr src)

#define SIM_DEFINE_LINEAR(name, pt, sync, de, se, dst_decl, src_decl)                       \
  /** A linear copy (see the CUDA driver API of the same name). */                         \
  SIM_API CUresult name(dst_decl, src_decl, size_t ByteCount)                               \
  {                                                                                         \
    struct sim_copy c = linear((CUdeviceptr)(uintptr_t)dst, DPTR(src), ByteCount);          \
    return sim_copy_submit(&c, de, se, NULL, pt, sync);                                         \
  }
#define SIM_DEFINE_ASYNC(name, pt, sync, de, se, dst_decl, src_decl)                        \
  /** A stream-ordered linear copy (see the CUDA driver API of the same name). */          \
  SIM_API CUresult name(dst_decl, src_decl, size_t ByteCount, CUstream hStream)             \
  {                                                                                         \
    struct sim_copy c = linear((CUdeviceptr)(uintptr_t)dst, DPTR(src), ByteCount);          \
    return sim_copy_submit(&c, de, se, hStream, pt, sync);                                      \
  }

SIM_LINEAR_COPIES(SIM_DEFINE_LINEAR)
SIM_ASYNC_COPIES(SIM_DEFINE_ASYNC)

/** Copy between contexts (device to device). */
SIM_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount)
{
  struct sim_copy c = linear(dstDevice, DPTR(srcDevice), ByteCount);
  return sim_copy_submit(&c, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, NULL, 0, 1);
}

/** cuMemcpyPeer through the per-thread default stream entry point. */
SIM_API CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount)
{
  struct sim_copy c = linear(dstDevice, DPTR(srcDevice), ByteCount);
  return sim_copy_submit(&c, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, NULL, 1, 1);
}

/** Stream-ordered copy between contexts. */
SIM_API CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
  struct sim_copy c = linear(dstDevice, DPTR(srcDevice), ByteCount);
  return sim_copy_submit(&c, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, hStream, 0, 0);
}

/** cuMemcpyPeerAsync through the per-thread default stream entry point. */
SIM_API CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
  struct sim_copy c = linear(dstDevice, DPTR(srcDevice), ByteCount);
  return sim_copy_submit(&c, SIM_EXPECT_DEVICE, SIM_EXPECT_DEVICE, hStream, 1, 0);
}

static CUresult copy_3d(const CUDA_MEMCPY3D *p, CUstream hStream, int per_thread, int sync);

/* A 2-D copy is a 3-D copy of depth 1. */
static CUresult copy_2d(const CUDA_MEMCPY2D *p, CUstream hStream, int per_thread, int sync)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D c = {
    .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcMemoryType = p->srcMemoryType,
    .srcHost = p->srcHost, .srcDevice = p->srcDevice, .srcArray = p->srcArray, .srcPitch = p->srcPitch,
    .srcHeight = p->Height,
    .dstXInBytes = p->dstXInBytes, .dstY = p->dstY, .dstMemoryType = p->dstMemoryType,
    .dstHost = p->dstHost, .dstDevice = p->dstDevice, .dstArray = p->dstArray, .dstPitch = p->dstPitch,
    .dstHeight = p->Height,
    .WidthInBytes = p->WidthInBytes, .Height = p->Height, .Depth = 1,
  };
  return copy_3d(&c, hStream, per_thread, sync);
}

/** A 2-D copy. */
SIM_API CUresult cuMemcpy2D(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, NULL, 0, 1); }
/** cuMemcpy2D, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, NULL, 1, 1); }
/** A 2-D copy without alignment restrictions. */
SIM_API CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, NULL, 0, 1); }
/** cuMemcpy2DUnaligned, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy) { return copy_2d(pCopy, NULL, 1, 1); }
/** A stream-ordered 2-D copy. */
SIM_API CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *pCopy, CUstream hStream) { return copy_2d(pCopy, hStream, 0, 0); }
/** cuMemcpy2DAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream) { return copy_2d(pCopy, hStream, 1, 0); }

/* One side of a 2-D/3-D copy descriptor: the address of its first byte, its pitch and
 * layer size, and what the copy expects of it. An array side's region is checked
 * against the array (sim_array_region); a linear side's pitch must hold a row and, for
 * several layers, its height the rows. */
struct copy_side {
  char *origin;
  size_t pitch, slice;
  enum sim_expect expect;
};

static CUresult side_of(CUmemorytype type, const void *host, CUdeviceptr device, CUarray array, size_t x, size_t y,
                        size_t z, size_t pitch, size_t rows, const CUDA_MEMCPY3D *p, struct copy_side *out)
{
  char *base;
  switch (type) {
  case CU_MEMORYTYPE_HOST: base = (char *)host; out->expect = SIM_EXPECT_HOST; break;
  case CU_MEMORYTYPE_DEVICE: base = (char *)(uintptr_t)device; out->expect = SIM_EXPECT_DEVICE; break;
  case CU_MEMORYTYPE_UNIFIED: base = (char *)(uintptr_t)device; out->expect = SIM_EXPECT_ANY; break;
  case CU_MEMORYTYPE_ARRAY:
    out->expect = SIM_EXPECT_ARRAY;
    return sim_array_region(array, x, y, z, p->WidthInBytes, p->Height, p->Depth, &out->origin, &out->pitch,
                            &out->slice);
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  if ((p->Height > 1 || p->Depth > 1) && pitch < p->WidthInBytes)
    return CUDA_ERROR_INVALID_VALUE;
  if (p->Depth > 1 && rows < p->Height)
    return CUDA_ERROR_INVALID_VALUE;
  out->pitch = pitch;
  out->slice = pitch * rows;
  out->origin = base + z * out->slice + y * pitch + x;
  return CUDA_SUCCESS;
}

static CUresult copy_3d(const CUDA_MEMCPY3D *p, CUstream hStream, int per_thread, int sync)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  struct copy_side d, s;
  CUresult r = side_of(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
                       p->dstPitch, p->dstHeight, p, &d);
  if (r == CUDA_SUCCESS)
    r = side_of(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
                p->srcPitch, p->srcHeight, p, &s);
  if (r != CUDA_SUCCESS)
    return r;
  struct sim_copy c = {
    .dst = d.origin, .src = s.origin, .width = p->WidthInBytes, .height = p->Height, .depth = p->Depth,
    .dst_pitch = d.pitch, .src_pitch = s.pitch, .dst_slice = d.slice, .src_slice = s.slice,
  };
  return sim_copy_submit(&c, d.expect, s.expect, hStream, per_thread, sync);
}

/** A 3-D copy. */
SIM_API CUresult cuMemcpy3D(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, NULL, 0, 1); }
/** cuMemcpy3D, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, NULL, 1, 1); }
/** A stream-ordered 3-D copy. */
SIM_API CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D *pCopy, CUstream hStream) { return copy_3d(pCopy, hStream, 0, 0); }
/** cuMemcpy3DAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream) { return copy_3d(pCopy, hStream, 1, 0); }

CUresult sim_copy_3d_async(const CUDA_MEMCPY3D *p, CUstream hStream, int per_thread)
{
  return copy_3d(p, hStream, per_thread, 0);
}

/* A 3-D copy between contexts: one address space here, so a 3-D copy. */
static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream hStream, int per_thread, int sync)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  CUDA_MEMCPY3D c = {
    .srcXInBytes = p->srcXInBytes, .srcY = p->srcY, .srcZ = p->srcZ, .srcMemoryType = p->srcMemoryType,
    .srcHost = p->srcHost, .srcDevice = p->srcDevice, .srcArray = p->srcArray, .srcPitch = p->srcPitch,
    .srcHeight = p->srcHeight, .dstXInBytes = p->dstXInBytes, .dstY = p->dstY, .dstZ = p->dstZ,
    .dstMemoryType = p->dstMemoryType, .dstHost = p->dstHost, .dstDevice = p->dstDevice,
    .dstArray = p->dstArray, .dstPitch = p->dstPitch, .dstHeight = p->dstHeight,
    .WidthInBytes = p->WidthInBytes, .Height = p->Height, .Depth = p->Depth,
  };
  return copy_3d(&c, hStream, per_thread, sync);
}

/** A 3-D copy between contexts. */
SIM_API CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy) { return copy_3d_peer(pCopy, NULL, 0, 1); }
/** cuMemcpy3DPeer, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy) { return copy_3d_peer(pCopy, NULL, 1, 1); }
/** A stream-ordered 3-D copy between contexts. */
SIM_API CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
{
  return copy_3d_peer(pCopy, hStream, 0, 0);
}
/** cuMemcpy3DPeerAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream)
{
  return copy_3d_peer(pCopy, hStream, 1, 0);
}
