/* CUDA arrays: cuArrayCreate_v2, cuArray3DCreate_v2, their descriptors, cuArrayDestroy,
 * and the 1-D array copies (cuMemcpyHtoA / AtoH / DtoA / AtoD / AtoA, _v2 with _ptds,
 * and cuMemcpyHtoAAsync / AtoHAsync, _v2 with _ptsz).
 *
 * An array is host memory here, as device memory is: Width x Height x Depth elements
 * of (format size x channels) bytes, rows packed one after another (a row is Width
 * elements; Height 0 and Depth 0 count as 1). It counts against the device's memory.
 * The handle is the array's struct, registered as SIM_KIND_ARRAY. Copies treat an
 * array side as device memory (the truth log names them HtoD, DtoH, DtoD); the 1-D
 * copies address the array as its bytes in row order (offset + count within them).
 * 2-D and 3-D copies with CU_MEMORYTYPE_ARRAY sides (copy.c) and 3-D batch copies
 * with array operands (batch.c) find the region through sim_array_region.
 * Formats: 8-, 16- and 32-bit integers, half, float (NumChannels 1, 2 or 4), the
 * UNORM/SNORM INT8/INT16 X1/X2/X4 formats and UNORM_INT_101010_2; the block-compressed
 * and YUV formats are not simulated (CUDA_ERROR_NOT_SUPPORTED). */
#include "sim.h"

#include <stdlib.h>

struct sim_array {
  CUDA_ARRAY3D_DESCRIPTOR desc;
  size_t element_size;          /* bytes per element */
  size_t pitch, height, depth;  /* row bytes; rows and layers (at least 1) */
  char *data;
};

/* Bytes per element of a format with `channels` channels; 0 when not simulated. */
static size_t element_size_of(CUarray_format format, unsigned channels)
{
  size_t component;
  switch (format) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: component = 1; break;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: component = 2; break;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: component = 4; break;
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return channels == 1 ? 1 : 0;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: return channels == 2 ? 2 : 0;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: return channels == 4 ? 4 : 0;
  case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: return channels == 1 ? 2 : 0;
  case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: return channels == 2 ? 4 : 0;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return channels == 4 ? 8 : 0;
  case CU_AD_FORMAT_UNORM_INT_101010_2: return channels == 4 ? 4 : 0;
  default: return 0;
  }
  return channels == 1 || channels == 2 || channels == 4 ? component * channels : 0;
}

/* Whether the format is one of cuda.h's (simulated or not). */
static int format_known(CUarray_format format)
{
  return (format >= 0x01 && format <= 0x03) || (format >= 0x08 && format <= 0x0a) || format == 0x10
         || format == 0x20 || format == 0x50 || (format >= 0x91 && format <= 0xb5) || (format >= 0xc0 && format <= 0xcb);
}

CUresult sim_array_check(const CUDA_ARRAY3D_DESCRIPTOR *d, size_t *element)
{
  if (!d || !d->Width || (d->Depth && !d->Height && !(d->Flags & CUDA_ARRAY3D_LAYERED)) || !format_known(d->Format))
    return CUDA_ERROR_INVALID_VALUE;
  *element = element_size_of(d->Format, d->NumChannels);
  if (!*element)
    return d->NumChannels == 1 || d->NumChannels == 2 || d->NumChannels == 4 ? CUDA_ERROR_NOT_SUPPORTED
                                                                              : CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

static CUresult array_create(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *ctx;
  CUresult r = sim_require_ctx(&ctx);
  if (r != CUDA_SUCCESS)
    return r;
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  size_t element;
  r = sim_array_check(d, &element);
  if (r != CUDA_SUCCESS)
    return r;
  size_t height = d->Height ? d->Height : 1, depth = d->Depth ? d->Depth : 1;
  if (d->Width > SIZE_MAX / element / height / depth)
    return CUDA_ERROR_OUT_OF_MEMORY;
  struct sim_array *a = calloc(1, sizeof *a);
  size_t bytes = d->Width * element * height * depth;
  if (a)
    a->data = calloc(bytes ? bytes : 1, 1);
  if (!a || !a->data) {
    if (a)
      free(a);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  a->desc = *d;
  a->element_size = element;
  a->pitch = d->Width * element;
  a->height = height;
  a->depth = depth;
  sim_lock();
  r = sim_mem_charge(bytes) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS && sim_handle_add(a, SIM_KIND_ARRAY) != 0) {
    sim_mem_uncharge(bytes);
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  sim_unlock();
  if (r != CUDA_SUCCESS) {
    free(a->data);
    free(a);
    return r;
  }
  *out = (CUarray)a;
  return CUDA_SUCCESS;
}

/* The array behind a handle, or NULL (lock held). */
static struct sim_array *array_of(CUarray h)
{
  return h && sim_handle_kind(h) == SIM_KIND_ARRAY ? (struct sim_array *)h : NULL;
}

/** Creates a 1-D or 2-D CUDA array. */
SIM_API CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *p)
{
  if (!p)
    return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR d = {.Width = p->Width, .Height = p->Height, .Format = p->Format,
                               .NumChannels = p->NumChannels};
  return array_create(pHandle, &d);
}

/** Creates a 1-D, 2-D or 3-D (or layered) CUDA array. */
SIM_API CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *p)
{
  return array_create(pHandle, p);
}

/** The 3-D descriptor an array was created with (also for 1-D and 2-D arrays). */
SIM_API CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *out, CUarray hArray)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_array *a = array_of(hArray);
  if (a)
    *out = a->desc;
  sim_unlock();
  return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/** The 2-D descriptor of a 1-D or 2-D array (a 3-D array: CUDA_ERROR_INVALID_VALUE). */
SIM_API CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *out, CUarray hArray)
{
  CUDA_ARRAY3D_DESCRIPTOR d;
  CUresult r = cuArray3DGetDescriptor_v2(out ? &d : NULL, hArray);
  if (r != CUDA_SUCCESS)
    return r;
  if (d.Depth)
    return CUDA_ERROR_INVALID_VALUE;
  *out = (CUDA_ARRAY_DESCRIPTOR){.Width = d.Width, .Height = d.Height, .Format = d.Format,
                                 .NumChannels = d.NumChannels};
  return CUDA_SUCCESS;
}

/** Destroys an array once the context's work has finished (as cuMemFree waits). */
SIM_API CUresult cuArrayDestroy(CUarray hArray)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  struct sim_ctx *ctx;
  CUresult r = sim_require_ctx(&ctx);
  if (r != CUDA_SUCCESS)
    return r;
  sim_lock();
  struct sim_array *a = array_of(hArray);
  if (!a) {
    sim_unlock();
    return CUDA_ERROR_INVALID_HANDLE;
  }
  sim_handle_remove(a);
  sim_mem_uncharge(a->pitch * a->height * a->depth);
  uint64_t until = sim_ctx_tail_ns(ctx);
  sim_unlock();
  sim_wait_until(until);
  free(a->data);
  free(a);
  return CUDA_SUCCESS;
}

size_t sim_array_element_size(CUarray h)
{
  sim_lock();
  struct sim_array *a = array_of(h);
  size_t size = a ? a->element_size : 0;
  sim_unlock();
  return size;
}

CUresult sim_array_region(CUarray h, size_t x_bytes, size_t y, size_t z, size_t width_bytes, size_t height,
                          size_t depth, char **origin, size_t *pitch, size_t *slice)
{
  sim_lock();
  struct sim_array *a = array_of(h);
  CUresult r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (a && (x_bytes > a->pitch || width_bytes > a->pitch - x_bytes || y > a->height || height > a->height - y
            || z > a->depth || depth > a->depth - z))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) {
    *pitch = a->pitch;
    *slice = a->pitch * a->height;
    *origin = a->data + z * *slice + y * a->pitch + x_bytes;
  }
  sim_unlock();
  return r;
}

/* The address of bytes [offset, offset + count) of an array, in row order. */
static CUresult array_bytes(CUarray h, size_t offset, size_t count, char **out)
{
  sim_lock();
  struct sim_array *a = array_of(h);
  CUresult r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  size_t total = a ? a->pitch * a->height * a->depth : 0;
  if (a && (offset > total || count > total - offset))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS)
    *out = a->data + offset;
  sim_unlock();
  return r;
}

/* One 1-D array copy: dst_array / src_array (or NULL) with their offsets, else the
 * pointers; enqueued with cuMemcpy's rules (sync: the non-Async entry points). */
static CUresult array_copy(CUarray dst_array, size_t dst_offset, char *dst, enum sim_expect dst_expect,
                           CUarray src_array, size_t src_offset, const char *src, enum sim_expect src_expect,
                           size_t count, CUstream hStream, int per_thread, int sync)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  char *p;
  CUresult r = CUDA_SUCCESS;
  if (dst_array) {
    r = array_bytes(dst_array, dst_offset, count, &p);
    dst = p;
  }
  if (r == CUDA_SUCCESS && src_array) {
    r = array_bytes(src_array, src_offset, count, &p);
    src = p;
  }
  if (r != CUDA_SUCCESS)
    return r;
  struct sim_copy c = {.dst = dst, .src = src, .width = count, .height = 1, .depth = 1};
  return sim_copy_submit(&c, dst_expect, src_expect, hStream, per_thread, sync);
}

#define ARR_DEV(p) ((char *)(uintptr_t)(p))

/** Copies host memory into an array. */
SIM_API CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, srcHost, SIM_EXPECT_HOST,
                    ByteCount, NULL, 0, 1);
}
/** cuMemcpyHtoA, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyHtoA_v2_ptds(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, srcHost, SIM_EXPECT_HOST,
                    ByteCount, NULL, 1, 1);
}
/** Copies an array into host memory. */
SIM_API CUresult cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
  return array_copy(NULL, 0, dstHost, SIM_EXPECT_HOST, srcArray, srcOffset, NULL, SIM_EXPECT_ARRAY,
                    ByteCount, NULL, 0, 1);
}
/** cuMemcpyAtoH, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyAtoH_v2_ptds(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
  return array_copy(NULL, 0, dstHost, SIM_EXPECT_HOST, srcArray, srcOffset, NULL, SIM_EXPECT_ARRAY,
                    ByteCount, NULL, 1, 1);
}
/** Copies device memory into an array. */
SIM_API CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, ARR_DEV(srcDevice),
                    SIM_EXPECT_DEVICE, ByteCount, NULL, 0, 1);
}
/** cuMemcpyDtoA, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyDtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, ARR_DEV(srcDevice),
                    SIM_EXPECT_DEVICE, ByteCount, NULL, 1, 1);
}
/** Copies an array into device memory. */
SIM_API CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
  return array_copy(NULL, 0, ARR_DEV(dstDevice), SIM_EXPECT_DEVICE, srcArray, srcOffset, NULL,
                    SIM_EXPECT_ARRAY, ByteCount, NULL, 0, 1);
}
/** cuMemcpyAtoD, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount)
{
  return array_copy(NULL, 0, ARR_DEV(dstDevice), SIM_EXPECT_DEVICE, srcArray, srcOffset, NULL,
                    SIM_EXPECT_ARRAY, ByteCount, NULL, 1, 1);
}
/** Copies between two arrays. */
SIM_API CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                 size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, srcArray, srcOffset, NULL,
                    SIM_EXPECT_ARRAY, ByteCount, NULL, 0, 1);
}
/** cuMemcpyAtoA, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyAtoA_v2_ptds(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
                                      size_t ByteCount)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, srcArray, srcOffset, NULL,
                    SIM_EXPECT_ARRAY, ByteCount, NULL, 1, 1);
}
/** Stream-ordered copy of host memory into an array. */
SIM_API CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount,
                                      CUstream hStream)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, srcHost, SIM_EXPECT_HOST,
                    ByteCount, hStream, 0, 0);
}
/** cuMemcpyHtoAAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray dstArray, size_t dstOffset, const void *srcHost,
                                           size_t ByteCount, CUstream hStream)
{
  return array_copy(dstArray, dstOffset, NULL, SIM_EXPECT_ARRAY, NULL, 0, srcHost, SIM_EXPECT_HOST,
                    ByteCount, hStream, 1, 0);
}
/** Stream-ordered copy of an array into host memory. */
SIM_API CUresult cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                      CUstream hStream)
{
  return array_copy(NULL, 0, dstHost, SIM_EXPECT_HOST, srcArray, srcOffset, NULL, SIM_EXPECT_ARRAY,
                    ByteCount, hStream, 0, 0);
}
/** cuMemcpyAtoHAsync, per-thread default stream entry point. */
SIM_API CUresult cuMemcpyAtoHAsync_v2_ptsz(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
                                           CUstream hStream)
{
  return array_copy(NULL, 0, dstHost, SIM_EXPECT_HOST, srcArray, srcOffset, NULL, SIM_EXPECT_ARRAY,
                    ByteCount, hStream, 1, 0);
}
