/* The memset family. Bytes are set when the operation is enqueued; a fill lasts as
 * long as a device-to-device copy of its size (device bandwidth plus the fixed
 * latency). */
#include "sim.h"

#include <string.h>

void sim_fill_apply(const struct sim_fill *f)
{
  for (size_t y = 0; y < f->height; y++) {
    char *row = f->dst + y * f->pitch;
    if (f->element_size == 1) {
      memset(row, (int)(f->value & 0xff), f->width);
    } else if (f->element_size == 2) {
      uint16_t v = (uint16_t)f->value;
      for (size_t i = 0; i < f->width; i++)
        memcpy(row + 2 * i, &v, 2);
    } else {
      uint32_t v = f->value;
      for (size_t i = 0; i < f->width; i++)
        memcpy(row + 4 * i, &v, 4);
    }
  }
}

static CUresult fill_common(CUdeviceptr dst, size_t pitch, unsigned int value, int element_size, size_t width,
                            size_t height, CUstream hStream, int per_thread)
{
  if (!sim_initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  size_t row_bytes = width * (size_t)element_size;
  if (!width || !height)
    return CUDA_SUCCESS;
  if (height > 1 && pitch < row_bytes)
    return CUDA_ERROR_INVALID_VALUE;
  if (dst % (CUdeviceptr)element_size)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  char *base;
  size_t size;
  char *p = (char *)(uintptr_t)dst;
  size_t extent = (height - 1) * pitch + row_bytes;
  if (r == CUDA_SUCCESS && (sim_mem_lookup(p, &base, &size, NULL) == SIM_MEM_NONE || extent > size
                            || (size_t)(p - base) > size - extent))
    r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) {
    struct sim_op op = {.kind = SIM_OP_MEMSET};
    strcpy(op.name, "memset");
    op.u.fill = (struct sim_fill){.dst = p, .pitch = pitch, .width = width, .height = height, .value = value,
                                  .element_size = element_size};
    op.duration_ns = sim_transfer_ns(width * height * (size_t)element_size, sim_knobs.d2d_gbps);
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  /* Like the real driver, memsets of device memory are asynchronous to the host
   * even through the non-Async entry points. */
  return r;
}

static CUresult fill_1d(CUdeviceptr d, unsigned int v, int es, size_t n, CUstream h, int pt)
{
  return fill_common(d, n * (size_t)es, v, es, n, 1, h, pt);
}

/* One definer per shape: (name, value type, element size, per-thread). */
#define SIM_FILL(name, T, es, pt)                                                         \
  /** A fill of N elements (see the CUDA driver API of the same name). */                \
  SIM_API CUresult name(CUdeviceptr dstDevice, T value, size_t N)                          \
  {                                                                                       \
    return fill_1d(dstDevice, value, es, N, NULL, pt);                                    \
  }
#define SIM_FILL_ASYNC(name, T, es, pt)                                                   \
  /** A stream-ordered fill of N elements. */                                             \
  SIM_API CUresult name(CUdeviceptr dstDevice, T value, size_t N, CUstream hStream)        \
  {                                                                                       \
    return fill_1d(dstDevice, value, es, N, hStream, pt);                                 \
  }
#define SIM_FILL_2D(name, T, es, pt)                                                      \
  /** A 2-D fill of Width x Height elements. */                                           \
  SIM_API CUresult name(CUdeviceptr dstDevice, size_t dstPitch, T value, size_t Width, size_t Height) \
  {                                                                                       \
    return fill_common(dstDevice, dstPitch, value, es, Width, Height, NULL, pt);          \
  }
#define SIM_FILL_2D_ASYNC(name, T, es, pt)                                                \
  /** A stream-ordered 2-D fill. */                                                       \
  SIM_API CUresult name(CUdeviceptr dstDevice, size_t dstPitch, T value, size_t Width, size_t Height, \
                        CUstream hStream)                                                 \
  {                                                                                       \
    return fill_common(dstDevice, dstPitch, value, es, Width, Height, hStream, pt);       \
  }

SIM_FILL(cuMemsetD8_v2, unsigned char, 1, 0)
SIM_FILL(cuMemsetD8_v2_ptds, unsigned char, 1, 1)
SIM_FILL(cuMemsetD16_v2, unsigned short, 2, 0)
SIM_FILL(cuMemsetD16_v2_ptds, unsigned short, 2, 1)
SIM_FILL(cuMemsetD32_v2, unsigned int, 4, 0)
SIM_FILL(cuMemsetD32_v2_ptds, unsigned int, 4, 1)
SIM_FILL_ASYNC(cuMemsetD8Async, unsigned char, 1, 0)
SIM_FILL_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1, 1)
SIM_FILL_ASYNC(cuMemsetD16Async, unsigned short, 2, 0)
SIM_FILL_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2, 1)
SIM_FILL_ASYNC(cuMemsetD32Async, unsigned int, 4, 0)
SIM_FILL_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4, 1)
SIM_FILL_2D(cuMemsetD2D8_v2, unsigned char, 1, 0)
SIM_FILL_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1, 1)
SIM_FILL_2D(cuMemsetD2D16_v2, unsigned short, 2, 0)
SIM_FILL_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2, 1)
SIM_FILL_2D(cuMemsetD2D32_v2, unsigned int, 4, 0)
SIM_FILL_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4, 1)
SIM_FILL_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1, 0)
SIM_FILL_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1, 1)
SIM_FILL_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2, 0)
SIM_FILL_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2, 1)
SIM_FILL_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4, 0)
SIM_FILL_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4, 1)
