/*
 * Driver CUDA array allocations, as CPU spans (CT_API_DRIVER) with an ALLOC record
 * (kind CT_ALLOC_ARRAY, format 1.10; `ptr` the CUarray or CUmipmappedArray handle):
 * cuArrayCreate_v2, cuArray3DCreate_v2 (the CUDA 3.2 ABI, what cuda.h means),
 * cuMipmappedArrayCreate, cuArrayDestroy, cuMipmappedArrayDestroy. A static cudart's
 * cudaMallocArray / cudaMalloc3DArray / cudaMallocMipmappedArray reach these through
 * cuGetProcAddress; a shared libcudart's stay one runtime span (callers.c, and
 * preload/hooks/alloc_array.c). How the bytes are counted: alloc_array.c.
 */
#include "wrap_common.h"

typedef CUresult (*array_create_fn)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
typedef CUresult (*array3d_create_fn)(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
typedef CUresult (*mipmap_create_fn)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned);
typedef CUresult (*array_destroy_fn)(CUarray);
typedef CUresult (*mipmap_destroy_fn)(CUmipmappedArray);

/* A span without GPU work; when the call succeeded, the ALLOC record of HANDLE (read
 * after the call), before the API record. */
#define ARRAY_ALLOC_BODY(id, ptsz, realp, ra, type, CALL, HANDLE, BYTES, RELEASE)                  \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, CTPH_NO_STREAM, 0, CALL, (void)0,                \
                 if (r == CUDA_SUCCESS) ctph_emit_alloc(c.corr, (const void *)(HANDLE),   \
                                                        (BYTES), CT_ALLOC_ARRAY, (RELEASE)))

/* The bytes of a 3-D descriptor's array of `levels` levels (0 when there is none). */
static uint64_t descriptor_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels) {
  return d ? ctph_array_bytes(ctph_array_format_bytes(d->Format, d->NumChannels), d->Width,
                              d->Height, d->Depth, d->Flags, levels)
           : 0;
}

CTPD_INLINE CUresult array_create_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUarray *handle, const CUDA_ARRAY_DESCRIPTOR *d) {
  ARRAY_ALLOC_BODY(id, ptsz, realp, ra, array_create_fn, real(handle, d), handle ? *handle : NULL,
                   d ? ctph_array_bytes(ctph_array_format_bytes(d->Format, d->NumChannels),
                                        d->Width, d->Height, 0, 0, 1)
                     : 0,
                   0);
}

CTPD_INLINE CUresult array3d_create_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         CUarray *handle, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  ARRAY_ALLOC_BODY(id, ptsz, realp, ra, array3d_create_fn, real(handle, d), handle ? *handle : NULL,
                   descriptor_bytes(d, 1), 0);
}

CTPD_INLINE CUresult mipmap_create_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUmipmappedArray *handle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                        unsigned levels) {
  ARRAY_ALLOC_BODY(id, ptsz, realp, ra, mipmap_create_fn, real(handle, d, levels),
                   handle ? *handle : NULL, descriptor_bytes(d, levels), 0);
}

CTPD_INLINE CUresult array_destroy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUarray a) {
  ARRAY_ALLOC_BODY(id, ptsz, realp, ra, array_destroy_fn, real(a), a, 0, 1);
}

CTPD_INLINE CUresult mipmap_destroy_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         CUmipmappedArray m) {
  ARRAY_ALLOC_BODY(id, ptsz, realp, ra, mipmap_destroy_fn, real(m), m, 0, 1);
}

CTPD_DEFINE(cuArrayCreate_v2, 0, array_create_body,
            (CUarray * handle, const CUDA_ARRAY_DESCRIPTOR *d), (handle, d))
CTPD_DEFINE(cuArray3DCreate_v2, 0, array3d_create_body,
            (CUarray * handle, const CUDA_ARRAY3D_DESCRIPTOR *d), (handle, d))
CTPD_DEFINE(cuMipmappedArrayCreate, 0, mipmap_create_body,
            (CUmipmappedArray * handle, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels),
            (handle, d, levels))
CTPD_DEFINE(cuArrayDestroy, 0, array_destroy_body, (CUarray a), (a))
CTPD_DEFINE(cuMipmappedArrayDestroy, 0, mipmap_destroy_body, (CUmipmappedArray m), (m))
