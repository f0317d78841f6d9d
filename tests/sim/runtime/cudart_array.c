/* CUDA arrays in the simulated libcudart: cudaMallocArray, cudaMalloc3DArray,
 * cudaMallocMipmappedArray, cudaFreeArray, cudaFreeMipmappedArray, cudaArrayGetInfo, cudaCreateChannelDesc (a cudaArray_t is the driver's CUarray, as the CUDA
 * documentation says the two types are interchangeable), the copies to, from and
 * between arrays (cudaMemcpy{,2D}{To,From}Array(Async), cudaMemcpy{,2D}ArrayToArray,
 * each with _ptds/_ptsz) and the element size of cudaMemcpy3D(Peer) with arrays.
 *
 * Every copy is one cuMemcpy3D (or cuMemcpy3DAsync) with CU_MEMORYTYPE_ARRAY sides
 * and, for a pointer side, CU_MEMORYTYPE_UNIFIED (the simulator looks the pointer up,
 * as for cudaMemcpy2D). Offsets and widths are bytes in the 2-D forms; the 1-D forms
 * (count bytes from (wOffset, hOffset), in row order) must stay within one row or
 * cover whole rows from a row's start (else cudaErrorInvalidValue: one 3-D copy could
 * not express it). */
#include "cudart_internal.h"

#include <string.h>

/* Bytes per element of a driver array format (cuda.h; 0 for block-compressed and YUV). */
static size_t format_bytes(CUarray_format f, unsigned channels)
{
  switch (f) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return channels;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2 * channels;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4 * channels;
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 1;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: case CU_AD_FORMAT_UNORM_INT16X1:
  case CU_AD_FORMAT_SNORM_INT16X1: return 2;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: case CU_AD_FORMAT_UNORM_INT16X2:
  case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_UNORM_INT_101010_2: return 4;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 8;
  default: return 0;
  }
}

/* The driver descriptor of an array; records the error. */
static cudaError_t describe(cudaArray_const_t a, CUDA_ARRAY3D_DESCRIPTOR *d)
{
  RT_NEED(simdrv.Array3DGetDescriptor);
  return rt_check(simdrv.Array3DGetDescriptor(d, (CUarray)a));
}

/* Element size and row bytes of an array; records the error. */
static cudaError_t geometry(cudaArray_const_t a, size_t *element, size_t *row)
{
  CUDA_ARRAY3D_DESCRIPTOR d;
  cudaError_t e = describe(a, &d);
  if (e != cudaSuccess)
    return e;
  *element = format_bytes(d.Format, d.NumChannels);
  if (!*element)
    return rt_fail(cudaErrorNotSupported);
  *row = d.Width * *element;
  return cudaSuccess;
}

/* The driver format and channel count of a channel descriptor (equal sizes, 1, 2 or 4
 * channels of 8/16/32-bit signed, unsigned or float); records the error. */
static cudaError_t driver_format(const struct cudaChannelFormatDesc *desc, CUarray_format *f, unsigned *channels)
{
  if (!desc)
    return rt_fail(cudaErrorInvalidValue);
  int bits = desc->x;
  unsigned n = (desc->x != 0) + (desc->y != 0) + (desc->z != 0) + (desc->w != 0);
  int same = (!desc->y || desc->y == bits) && (!desc->z || desc->z == bits) && (!desc->w || desc->w == bits);
  *f = 0;
  if (same && (n == 1 || n == 2 || n == 4)) {
    if (desc->f == cudaChannelFormatKindFloat)
      *f = bits == 16 ? CU_AD_FORMAT_HALF : bits == 32 ? CU_AD_FORMAT_FLOAT : 0;
    else if (desc->f == cudaChannelFormatKindSigned)
      *f = bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16
           : bits == 32 ? CU_AD_FORMAT_SIGNED_INT32 : 0;
    else if (desc->f == cudaChannelFormatKindUnsigned)
      *f = bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
           : bits == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : 0;
  }
  if (!*f)
    return rt_fail(cudaErrorInvalidChannelDescriptor);
  *channels = n;
  return cudaSuccess;
}

/** A channel descriptor of the given bit sizes and kind (no checks, as the real one). */
SIM_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                            enum cudaChannelFormatKind f)
{
  struct cudaChannelFormatDesc d = {x, y, z, w, f};
  return d;
}

static cudaError_t malloc_array(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                size_t height, size_t depth, unsigned flags)
{
  if (!array)
    return rt_fail(cudaErrorInvalidValue);
  CUDA_ARRAY3D_DESCRIPTOR d = {.Width = width, .Height = height, .Depth = depth, .Flags = flags};
  cudaError_t e = driver_format(desc, &d.Format, &d.NumChannels);
  if (e != cudaSuccess)
    return e;
  RT_ENTER();
  RT_NEED(simdrv.Array3DCreate);
  return rt_check(simdrv.Array3DCreate((CUarray *)array, &d));
}

/** Allocates a 1-D (height 0) or 2-D CUDA array. */
SIM_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                       size_t height, unsigned int flags)
{
  return malloc_array(array, desc, width, height, 0, flags);
}

/** Allocates a CUDA array of the extent's shape (in elements). */
SIM_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                         struct cudaExtent extent, unsigned int flags)
{
  return malloc_array(array, desc, extent.width, extent.height, extent.depth, flags);
}

/** Allocates a mipmapped CUDA array of numLevels levels, the extent's shape at level 0. */
SIM_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                                const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
                                                unsigned int numLevels, unsigned int flags)
{
  if (!mipmappedArray)
    return rt_fail(cudaErrorInvalidValue);
  CUDA_ARRAY3D_DESCRIPTOR d = {.Width = extent.width, .Height = extent.height, .Depth = extent.depth,
                               .Flags = flags};
  cudaError_t e = driver_format(desc, &d.Format, &d.NumChannels);
  if (e != cudaSuccess)
    return e;
  RT_ENTER();
  RT_NEED(simdrv.MipmappedArrayCreate);
  return rt_check(simdrv.MipmappedArrayCreate((CUmipmappedArray *)mipmappedArray, &d, numLevels));
}

/** Frees a mipmapped CUDA array (NULL does nothing). */
SIM_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
  if (!mipmappedArray)
    return cudaSuccess;
  RT_ENTER();
  RT_NEED(simdrv.MipmappedArrayDestroy);
  return rt_check(simdrv.MipmappedArrayDestroy((CUmipmappedArray)mipmappedArray));
}

/** Frees a CUDA array (NULL does nothing). */
SIM_EXPORT cudaError_t cudaFreeArray(cudaArray_t array)
{
  if (!array)
    return cudaSuccess;
  RT_ENTER();
  RT_NEED(simdrv.ArrayDestroy);
  return rt_check(simdrv.ArrayDestroy((CUarray)array));
}

/** The channel descriptor, extent (elements) and flags an array was made with. */
SIM_EXPORT cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent,
                                        unsigned int *flags, cudaArray_t array)
{
  RT_ENTER();
  CUDA_ARRAY3D_DESCRIPTOR d;
  cudaError_t e = describe(array, &d);
  if (e != cudaSuccess)
    return e;
  if (desc) {
    size_t element = format_bytes(d.Format, d.NumChannels);
    int bits = d.NumChannels ? (int)(8 * element / d.NumChannels) : 0;
    memset(desc, 0, sizeof *desc);
    desc->x = bits;
    desc->y = d.NumChannels > 1 ? bits : 0;
    desc->z = desc->w = d.NumChannels > 2 ? bits : 0;
    desc->f = d.Format == CU_AD_FORMAT_HALF || d.Format == CU_AD_FORMAT_FLOAT ? cudaChannelFormatKindFloat
              : d.Format == CU_AD_FORMAT_SIGNED_INT8 || d.Format == CU_AD_FORMAT_SIGNED_INT16
                  || d.Format == CU_AD_FORMAT_SIGNED_INT32 ? cudaChannelFormatKindSigned
                                                           : cudaChannelFormatKindUnsigned;
  }
  if (extent)
    *extent = (struct cudaExtent){d.Width, d.Height, d.Depth};
  if (flags)
    *flags = d.Flags;
  return cudaSuccess;
}

cudaError_t rt_array_element(cudaArray_const_t src, cudaArray_const_t dst, size_t *element)
{
  size_t row;
  *element = 1;
  return src || dst ? geometry(src ? src : dst, element, &row) : cudaSuccess;
}

/* One side of an array copy: an array at (x bytes, y), or a pointer with its pitch. */
struct side {
  cudaArray_const_t array;
  size_t x, y;
  const void *ptr;
  size_t pitch;
};

static cudaError_t copy(struct side dst, struct side src, size_t width, size_t height, enum cudaMemcpyKind kind,
                        cudaStream_t stream, int async, int pt)
{
  if ((unsigned)kind > cudaMemcpyDefault)
    return rt_fail(cudaErrorInvalidMemcpyDirection);
  if ((!dst.array && width > dst.pitch) || (!src.array && width > src.pitch))
    return rt_fail(cudaErrorInvalidPitchValue);
  RT_ENTER();
  if (!width || !height)
    return cudaSuccess;
  CUDA_MEMCPY3D c;
  memset(&c, 0, sizeof c);
  c.WidthInBytes = width;
  c.Height = height;
  c.Depth = 1;
  c.srcMemoryType = src.array ? CU_MEMORYTYPE_ARRAY : CU_MEMORYTYPE_UNIFIED;
  c.srcArray = (CUarray)src.array;
  c.srcXInBytes = src.x;
  c.srcY = src.y;
  c.srcDevice = (CUdeviceptr)(uintptr_t)src.ptr;
  c.srcPitch = src.pitch;
  c.srcHeight = height;
  c.dstMemoryType = dst.array ? CU_MEMORYTYPE_ARRAY : CU_MEMORYTYPE_UNIFIED;
  c.dstArray = (CUarray)dst.array;
  c.dstXInBytes = dst.x;
  c.dstY = dst.y;
  c.dstDevice = (CUdeviceptr)(uintptr_t)dst.ptr;
  c.dstPitch = dst.pitch;
  c.dstHeight = height;
  if (async) {
    RT_NEED(RT_PICK(pt, Memcpy3DAsync));
    return rt_check(RT_PICK(pt, Memcpy3DAsync)(&c, stream));
  }
  RT_NEED(RT_PICK(pt, Memcpy3D));
  return rt_check(RT_PICK(pt, Memcpy3D)(&c));
}

/* The 2-D shape of `count` bytes from (w, h) of an array, in row order: within one row,
 * or whole rows from a row's start; sets the side's position. */
static cudaError_t linear_shape(cudaArray_const_t a, size_t w, size_t h, size_t count, struct side *s,
                                size_t *width, size_t *height)
{
  size_t element, row;
  cudaError_t e = geometry(a, &element, &row);
  if (e != cudaSuccess)
    return e;
  size_t start = h * row + w;
  s->array = a;
  s->x = start % row;
  s->y = start / row;
  if (s->x + count <= row) {
    *width = count;
    *height = 1;
  } else if (s->x == 0 && count % row == 0) {
    *width = row;
    *height = count / row;
  } else {
    return rt_fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

static cudaError_t to_array(cudaArray_t dst, size_t w, size_t h, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream, int async, int pt)
{
  struct side d, s = {.ptr = src};
  size_t width, height;
  RT_ENTER();
  cudaError_t e = linear_shape(dst, w, h, count, &d, &width, &height);
  if (e != cudaSuccess)
    return e;
  s.pitch = width;
  return copy(d, s, width, height, kind, stream, async, pt);
}

static cudaError_t from_array(void *dst, cudaArray_const_t src, size_t w, size_t h, size_t count,
                              enum cudaMemcpyKind kind, cudaStream_t stream, int async, int pt)
{
  struct side d = {.ptr = dst}, s;
  size_t width, height;
  RT_ENTER();
  cudaError_t e = linear_shape(src, w, h, count, &s, &width, &height);
  if (e != cudaSuccess)
    return e;
  d.pitch = width;
  return copy(d, s, width, height, kind, stream, async, pt);
}

static cudaError_t array_to_array(cudaArray_t dst, size_t wd, size_t hd, cudaArray_const_t src, size_t ws,
                                  size_t hs, size_t count, enum cudaMemcpyKind kind, int pt)
{
  struct side d, s;
  size_t dw, dh, sw, sh;
  RT_ENTER();
  cudaError_t e = linear_shape(dst, wd, hd, count, &d, &dw, &dh);
  if (e == cudaSuccess)
    e = linear_shape(src, ws, hs, count, &s, &sw, &sh);
  if (e != cudaSuccess)
    return e;
  if (dw != sw || dh != sh)
    return rt_fail(cudaErrorInvalidValue);
  return copy(d, s, dw, dh, kind, 0, 0, pt);
}

#define ARRAY_SIDE(a, w, h) ((struct side){.array = (a), .x = (w), .y = (h)})
#define PTR_SIDE(p, row_pitch) ((struct side){.ptr = (p), .pitch = (row_pitch)})

/* Each entry point with its per-thread twin: X(name, pt, body) defines name##suffix. */
#define TWO(name, ptname, params, call0, call1)                     \
  /** A copy with a CUDA array (legacy default stream). */        \
  SIM_EXPORT cudaError_t name params { return call0; }             \
  /** The same copy (per-thread default stream). */               \
  SIM_EXPORT cudaError_t ptname params { return call1; }

TWO(cudaMemcpyToArray, cudaMemcpyToArray_ptds,
    (cudaArray_t dst, size_t w, size_t h, const void *src, size_t count, enum cudaMemcpyKind kind),
    to_array(dst, w, h, src, count, kind, 0, 0, 0), to_array(dst, w, h, src, count, kind, 0, 0, 1))
TWO(cudaMemcpyToArrayAsync, cudaMemcpyToArrayAsync_ptsz,
    (cudaArray_t dst, size_t w, size_t h, const void *src, size_t count, enum cudaMemcpyKind kind,
     cudaStream_t stream),
    to_array(dst, w, h, src, count, kind, stream, 1, 0), to_array(dst, w, h, src, count, kind, stream, 1, 1))
TWO(cudaMemcpyFromArray, cudaMemcpyFromArray_ptds,
    (void *dst, cudaArray_const_t src, size_t w, size_t h, size_t count, enum cudaMemcpyKind kind),
    from_array(dst, src, w, h, count, kind, 0, 0, 0), from_array(dst, src, w, h, count, kind, 0, 0, 1))
TWO(cudaMemcpyFromArrayAsync, cudaMemcpyFromArrayAsync_ptsz,
    (void *dst, cudaArray_const_t src, size_t w, size_t h, size_t count, enum cudaMemcpyKind kind,
     cudaStream_t stream),
    from_array(dst, src, w, h, count, kind, stream, 1, 0), from_array(dst, src, w, h, count, kind, stream, 1, 1))
TWO(cudaMemcpyArrayToArray, cudaMemcpyArrayToArray_ptds,
    (cudaArray_t dst, size_t wd, size_t hd, cudaArray_const_t src, size_t ws, size_t hs, size_t count,
     enum cudaMemcpyKind kind),
    array_to_array(dst, wd, hd, src, ws, hs, count, kind, 0), array_to_array(dst, wd, hd, src, ws, hs, count, kind, 1))
TWO(cudaMemcpy2DToArray, cudaMemcpy2DToArray_ptds,
    (cudaArray_t dst, size_t w, size_t h, const void *src, size_t spitch, size_t width, size_t height,
     enum cudaMemcpyKind kind),
    copy(ARRAY_SIDE(dst, w, h), PTR_SIDE(src, spitch), width, height, kind, 0, 0, 0),
    copy(ARRAY_SIDE(dst, w, h), PTR_SIDE(src, spitch), width, height, kind, 0, 0, 1))
TWO(cudaMemcpy2DToArrayAsync, cudaMemcpy2DToArrayAsync_ptsz,
    (cudaArray_t dst, size_t w, size_t h, const void *src, size_t spitch, size_t width, size_t height,
     enum cudaMemcpyKind kind, cudaStream_t stream),
    copy(ARRAY_SIDE(dst, w, h), PTR_SIDE(src, spitch), width, height, kind, stream, 1, 0),
    copy(ARRAY_SIDE(dst, w, h), PTR_SIDE(src, spitch), width, height, kind, stream, 1, 1))
TWO(cudaMemcpy2DFromArray, cudaMemcpy2DFromArray_ptds,
    (void *dst, size_t dpitch, cudaArray_const_t src, size_t w, size_t h, size_t width, size_t height,
     enum cudaMemcpyKind kind),
    copy(PTR_SIDE(dst, dpitch), ARRAY_SIDE(src, w, h), width, height, kind, 0, 0, 0),
    copy(PTR_SIDE(dst, dpitch), ARRAY_SIDE(src, w, h), width, height, kind, 0, 0, 1))
TWO(cudaMemcpy2DFromArrayAsync, cudaMemcpy2DFromArrayAsync_ptsz,
    (void *dst, size_t dpitch, cudaArray_const_t src, size_t w, size_t h, size_t width, size_t height,
     enum cudaMemcpyKind kind, cudaStream_t stream),
    copy(PTR_SIDE(dst, dpitch), ARRAY_SIDE(src, w, h), width, height, kind, stream, 1, 0),
    copy(PTR_SIDE(dst, dpitch), ARRAY_SIDE(src, w, h), width, height, kind, stream, 1, 1))
TWO(cudaMemcpy2DArrayToArray, cudaMemcpy2DArrayToArray_ptds,
    (cudaArray_t dst, size_t wd, size_t hd, cudaArray_const_t src, size_t ws, size_t hs, size_t width,
     size_t height, enum cudaMemcpyKind kind),
    copy(ARRAY_SIDE(dst, wd, hd), ARRAY_SIDE(src, ws, hs), width, height, kind, 0, 0, 0),
    copy(ARRAY_SIDE(dst, wd, hd), ARRAY_SIDE(src, ws, hs), width, height, kind, 0, 0, 1))
