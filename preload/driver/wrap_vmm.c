/*
 * CUDA's virtual memory management (VMM) API, as CPU spans (CT_API_DRIVER): what
 * PyTorch's caching allocator calls with expandable_segments:True (its
 * ExpandableSegment, c10/cuda/CUDACachingAllocator.cpp), and NCCL, TensorRT and
 * others for their pools. cuMemAddressReserve / cuMemAddressFree (a virtual range),
 * cuMemCreate / cuMemRelease (a handle to physical memory: where device memory is
 * really taken and given back), cuMemMap / cuMemUnmap (a handle into a range),
 * cuMemSetAccess (which devices may use a mapped range).
 *
 * Only cuMemCreate and cuMemRelease are followed by an ALLOC record (kind
 * CT_ALLOC_VMM, `ptr` the handle, `bytes` the size asked for; a cuMemCreate's API
 * record names the device the memory is on, prop->location.id, which need not be
 * the current one; its release counts where the allocation did): a reservation takes
 * address space only (PyTorch reserves 1 1/8 of the GPU's memory per segment), and a
 * mapping or an access change moves no memory, so counting them would count the
 * same bytes twice or count bytes that do not exist. Their spans are recorded, and
 * hooks.def lists all seven as ALLOC or FREE: `cutrace gaps` counts idle time during
 * any of them as cause `alloc`.
 */
#include "wrap_common.h"

typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*range_fn)(CUdeviceptr, size_t);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                           unsigned long long);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

/* A span without GPU work and without a detail record. */
#define VMM_SPAN(id, ptsz, realp, ra, type, CALL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, CTPH_NO_STREAM, 0, CALL, (void)0, (void)0)

/* A span with, when the call succeeded, its ALLOC record for `handle` (written before
 * the API record: CTPH_FINISH); AFTER runs after the real call (r its result),
 * before either is written. */
#define VMM_ALLOC_SPAN(id, ptsz, realp, ra, type, CALL, AFTER, HANDLE, BYTES, RELEASE) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, CTPH_NO_STREAM, 0, CALL, AFTER,            \
                 if (r == CUDA_SUCCESS) ctph_emit_alloc(c.corr, (const void *)(uintptr_t)(HANDLE), \
                                                        (BYTES), CT_ALLOC_VMM, (RELEASE)))

CTPD_INLINE CUresult reserve_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                  CUdeviceptr *p, size_t size, size_t alignment, CUdeviceptr addr,
                                  unsigned long long flags) {
  VMM_SPAN(id, ptsz, realp, ra, reserve_fn, real(p, size, alignment, addr, flags));
}

CTPD_INLINE CUresult range_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr p, size_t size) {
  VMM_SPAN(id, ptsz, realp, ra, range_fn, real(p, size));
}

CTPD_INLINE CUresult create_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 CUmemGenericAllocationHandle *handle, size_t size,
                                 const CUmemAllocationProp *prop, unsigned long long flags) {
  /* the memory's device, which need not be the current one */
  VMM_ALLOC_SPAN(id, ptsz, realp, ra, create_fn, real(handle, size, prop, flags),
                 if (r == CUDA_SUCCESS && prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
                     c.device = prop->location.id,
                 handle ? *handle : 0, size, 0);
}

CTPD_INLINE CUresult release_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                  CUmemGenericAllocationHandle handle) {
  VMM_ALLOC_SPAN(id, ptsz, realp, ra, release_fn, real(handle), (void)0, handle, 0, 1);
}

CTPD_INLINE CUresult map_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                              CUdeviceptr p, size_t size, size_t offset,
                              CUmemGenericAllocationHandle handle, unsigned long long flags) {
  VMM_SPAN(id, ptsz, realp, ra, map_fn, real(p, size, offset, handle, flags));
}

CTPD_INLINE CUresult access_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                 CUdeviceptr p, size_t size, const CUmemAccessDesc *desc,
                                 size_t count) {
  VMM_SPAN(id, ptsz, realp, ra, access_fn, real(p, size, desc, count));
}

CTPD_DEFINE(cuMemAddressReserve, 0, reserve_body,
            (CUdeviceptr * p, size_t size, size_t alignment, CUdeviceptr addr,
             unsigned long long flags),
            (p, size, alignment, addr, flags))
CTPD_DEFINE(cuMemAddressFree, 0, range_body, (CUdeviceptr p, size_t size), (p, size))
CTPD_DEFINE(cuMemCreate, 0, create_body,
            (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop,
             unsigned long long flags),
            (handle, size, prop, flags))
CTPD_DEFINE(cuMemRelease, 0, release_body, (CUmemGenericAllocationHandle handle), (handle))
CTPD_DEFINE(cuMemMap, 0, map_body,
            (CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags),
            (p, size, offset, handle, flags))
CTPD_DEFINE(cuMemUnmap, 0, range_body, (CUdeviceptr p, size_t size), (p, size))
CTPD_DEFINE(cuMemSetAccess, 0, access_body,
            (CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t count),
            (p, size, desc, count))
