/*
 * CUDA array allocations in the runtime: cudaMallocArray, cudaMalloc3DArray,
 * cudaMallocMipmappedArray and their releases cudaFreeArray, cudaFreeMipmappedArray,
 * as CPU spans with an ALLOC record (kind CT_ALLOC_ARRAY, format 1.10; `ptr` the
 * cudaArray_t or cudaMipmappedArray_t handle). The driver's cuArrayCreate_v2,
 * cuArray3DCreate_v2, cuMipmappedArrayCreate and their destroys are
 * preload/driver/wrap_array_alloc.c's; both size an array here.
 *
 * The size is what the descriptor asks for, not what the driver reserves (it pads
 * and tiles arrays, and does not say by how much): width x height x depth elements
 * (a height or depth of 0 counts as 1; a layered array's depth is its layers, a
 * cubemap's its 6 faces, or 6 x layers) of the element size (the driver: the format's
 * size x NumChannels; the runtime: the channel descriptor's x + y + z + w bits / 8),
 * and for a mipmapped array the sum over its levels, level l being max(1, width >> l)
 * x max(1, height >> l) x max(1, depth >> l) (layers and faces do not shrink). A sparse
 * or deferred-mapping array takes no memory when created (its tiles are mapped later,
 * cuMemMapArrayAsync): 0 bytes; so does a format whose element size this does not know
 * (block-compressed, YUV).
 */
#include "hooks_internal.h"

uint64_t ctph_array_format_bytes(unsigned format, unsigned channels) {
  switch (format) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return channels;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    return 2ull * channels;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
    return 4ull * channels;
  case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: return 1;
  case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: case CU_AD_FORMAT_UNORM_INT16X1:
  case CU_AD_FORMAT_SNORM_INT16X1: return 2;
  case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: case CU_AD_FORMAT_UNORM_INT16X2:
  case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_UNORM_INT_101010_2: return 4;
  case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: return 8;
  default: return 0; /* block-compressed and YUV formats */
  }
}

/* a x b, UINT64_MAX when it overflows */
static uint64_t mul_sat(uint64_t a, uint64_t b) {
  uint64_t p;
  return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

static uint64_t level_extent(uint64_t n, unsigned level) {
  return level >= 64 || !(n >> level) ? 1 : n >> level;
}

uint64_t ctph_array_bytes(uint64_t element, uint64_t width, uint64_t height, uint64_t depth,
                          unsigned flags, unsigned levels) {
  if (!element || (flags & (CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING)))
    return 0;
  int fixed_depth = (flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
  uint64_t total = 0;
  if (!levels)
    levels = 1;
  for (unsigned l = 0; l < levels && l < 64; l++) { /* the driver refuses more than 64 */
    uint64_t w = level_extent(width, l);
    uint64_t h = height ? level_extent(height, l) : 1;
    uint64_t d = !depth ? 1 : fixed_depth ? depth : level_extent(depth, l);
    uint64_t bytes = mul_sat(mul_sat(mul_sat(w, h), d), element);
    total = total > UINT64_MAX - bytes ? UINT64_MAX : total + bytes;
  }
  return total;
}


/* Bytes per element of a runtime channel descriptor (0: unknown or none). */
static uint64_t channel_element_bytes(const struct cudaChannelFormatDesc *desc) {
  if (!desc)
    return 0;
  switch (desc->f) {
  case cudaChannelFormatKindSigned: case cudaChannelFormatKindUnsigned: case cudaChannelFormatKindFloat:
  case cudaChannelFormatKindUnsignedNormalized8X1: case cudaChannelFormatKindUnsignedNormalized8X2:
  case cudaChannelFormatKindUnsignedNormalized8X4: case cudaChannelFormatKindUnsignedNormalized16X1:
  case cudaChannelFormatKindUnsignedNormalized16X2: case cudaChannelFormatKindUnsignedNormalized16X4:
  case cudaChannelFormatKindSignedNormalized8X1: case cudaChannelFormatKindSignedNormalized8X2:
  case cudaChannelFormatKindSignedNormalized8X4: case cudaChannelFormatKindSignedNormalized16X1:
  case cudaChannelFormatKindSignedNormalized16X2: case cudaChannelFormatKindSignedNormalized16X4:
  case cudaChannelFormatKindUnsignedNormalized1010102: {
    int64_t bits = (int64_t)desc->x + desc->y + desc->z + desc->w;
    return bits > 0 ? (uint64_t)bits / 8 : 0;
  }
  default: return 0; /* none, NV12, block-compressed */
  }
}

/* A span with no GPU work and, when the call succeeded, the ALLOC record of the array
 * handle *OUT (an allocation) or HANDLE (a release), written before the API record. */
#define ARRAY_SPAN(sym, call_args, HANDLE, BYTES, RELEASE)                                   \
  __typeof__(&sym) real = CTPH_REAL(sym);                                                  \
  if (!real)                                                                               \
    return cudaErrorSharedObjectSymbolNotFound;                                            \
  ctph_call c;                                                                             \
  ctph_call_begin(&c, CTPH_ID_##sym, 0, 0, CTPH_NO_STREAM, 0);                             \
  cudaError_t r = real call_args;                                                          \
  CTPH_FINISH(c, r,                                                                        \
              if (r == cudaSuccess) ctph_emit_alloc(c.corr, (const void *)(HANDLE), (BYTES), \
                                                    CT_ALLOC_ARRAY, (RELEASE)));           \
  return r

/** cudaMallocArray (a 1-D or 2-D CUDA array), traced: its ALLOC record. */
CTP_EXPORT cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                       size_t width, size_t height, unsigned int flags) {
  ARRAY_SPAN(cudaMallocArray, (array, desc, width, height, flags), array ? *array : NULL,
             ctph_array_bytes(channel_element_bytes(desc), width, height, 0, flags, 1), 0);
}

/** cudaMalloc3DArray, traced: its ALLOC record. */
CTP_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                         struct cudaExtent extent, unsigned int flags) {
  ARRAY_SPAN(cudaMalloc3DArray, (array, desc, extent, flags), array ? *array : NULL,
             ctph_array_bytes(channel_element_bytes(desc), extent.width, extent.height,
                              extent.depth, flags, 1),
             0);
}

/** cudaMallocMipmappedArray, traced: its ALLOC record (every level's bytes). */
CTP_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmap,
                                                const struct cudaChannelFormatDesc *desc,
                                                struct cudaExtent extent, unsigned int levels,
                                                unsigned int flags) {
  ARRAY_SPAN(cudaMallocMipmappedArray, (mipmap, desc, extent, levels, flags),
             mipmap ? *mipmap : NULL,
             ctph_array_bytes(channel_element_bytes(desc), extent.width, extent.height,
                              extent.depth, flags, levels),
             0);
}

/** cudaFreeArray, traced: its ALLOC record (none for NULL). */
CTP_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
  ARRAY_SPAN(cudaFreeArray, (array), array, 0, 1);
}

/** cudaFreeMipmappedArray, traced: its ALLOC record (none for NULL). */
CTP_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmap) {
  ARRAY_SPAN(cudaFreeMipmappedArray, (mipmap), mipmap, 0, 1);
}
