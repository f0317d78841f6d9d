/*
 * Driver batch copies and managed-memory prefetches: cuMemcpyBatchAsync and
 * cuMemcpy3DBatchAsync (the CUDA 12.8 ABI, with failIdx) and their _v2 (13.0, what
 * cuda.h 13 means by the plain names), cuMemPrefetchAsync (8.0 ABI: a device ordinal) and
 * cuMemPrefetchAsync_v2 (12.2: a CUmemLocation), cuMemPrefetchBatchAsync,
 * cuMemDiscardBatchAsync and cuMemDiscardAndPrefetchBatchAsync (13.0; the latter
 * recorded as a prefetch batch), cuMemBatchDecompressAsync (12.6: decompressions by the
 * copy engines, MEMOP kind decompress, format 1.11), each with its _ptsz form. Recorded like wrap_memory.c's copies: an API record
 * (CT_API_DRIVER), one MEMOP record for the whole call (ctph_emit_copy_batch,
 * ctph_emit_prefetch: count and total bytes) and, when outermost, one GPU record
 * (CT_GPU_MEMCPY) timed on the stream from before the first operation of the call
 * to after its last.
 */
#include "wrap_common.h"

#undef cuMemcpyBatchAsync /* cuda.h 13 maps these to their _v2 */
#undef cuMemcpy3DBatchAsync
#undef cuMemPrefetchAsync
#undef cuMemBatchDecompressAsync

typedef CUresult (*batch_v1_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                                CUmemcpyAttributes *, size_t *, size_t, size_t *, CUstream);
typedef CUresult (*batch_fn)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                             CUmemcpyAttributes *, size_t *, size_t, CUstream);
typedef CUresult (*batch3d_v1_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *, unsigned long long,
                                  CUstream);
typedef CUresult (*batch3d_fn)(size_t, CUDA_MEMCPY3D_BATCH_OP *, unsigned long long, CUstream);
typedef CUresult (*prefetch_v1_fn)(CUdeviceptr, size_t, CUdevice, CUstream);
typedef CUresult (*prefetch_fn)(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream);
typedef CUresult (*prefetch_batch_fn)(CUdeviceptr *, size_t *, size_t, CUmemLocation *, size_t *,
                                      size_t, unsigned long long, CUstream);
typedef CUresult (*discard_batch_fn)(CUdeviceptr *, size_t *, size_t, unsigned long long, CUstream);
typedef CUresult (*decompress_fn)(CUmemDecompressParams *, size_t, unsigned, size_t *, CUstream);

#define BATCH_BODY(id, ptsz, realp, ra, type, stream, CALL, DETAIL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, CT_GPU_MEMCPY, CALL, (void)0, DETAIL)

CTPD_INLINE CUresult batch_v1_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                                   size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
                                   size_t num_attrs, size_t *fail_idx, CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, batch_v1_fn, s,
             real(dsts, srcs, sizes, count, attrs, idxs, num_attrs, fail_idx, s),
             ctph_emit_copy_batch(c.corr, r == CUDA_SUCCESS, (const uint64_t *)dsts,
                                  (const uint64_t *)srcs, sizes, count));
}
CTPD_INLINE CUresult batch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                CUmemcpyAttributes *attrs, size_t *idxs, size_t num_attrs,
                                CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, batch_fn, s,
             real(dsts, srcs, sizes, count, attrs, idxs, num_attrs, s),
             ctph_emit_copy_batch(c.corr, r == CUDA_SUCCESS, (const uint64_t *)dsts,
                                  (const uint64_t *)srcs, sizes, count));
}

CTPD_INLINE CUresult batch3d_v1_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     size_t n, CUDA_MEMCPY3D_BATCH_OP *ops, size_t *fail_idx,
                                     unsigned long long flags, CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, batch3d_v1_fn, s, real(n, ops, fail_idx, flags, s),
             ctph_emit_copy3d_batch(c.corr, r == CUDA_SUCCESS, ops, n));
}
CTPD_INLINE CUresult batch3d_body(enum ctph_id id, int ptsz, void *realp, const void *ra, size_t n,
                                  CUDA_MEMCPY3D_BATCH_OP *ops, unsigned long long flags,
                                  CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, batch3d_fn, s, real(n, ops, flags, s),
             ctph_emit_copy3d_batch(c.corr, r == CUDA_SUCCESS, ops, n));
}

/* The MEMOP value of a prefetch's destination: 1 + device ordinal, 0 for the host. */
static uint64_t location_value(CUmemLocation loc) {
  return loc.type == CU_MEM_LOCATION_TYPE_DEVICE && loc.id >= 0 ? 1 + (uint64_t)loc.id : 0;
}

/* A single prefetch: returns before it is done, so its return bounds its start
 * (preload/hooks/call.c), as for an asynchronous pinned copy. */
#define PREFETCH_BODY(id, ptsz, realp, ra, type, stream, CALL, DETAIL) \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, stream, CT_GPU_MEMCPY, CALL, c.returns_early = 1, DETAIL)

CTPD_INLINE CUresult prefetch_v1_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUdeviceptr p, size_t n, CUdevice dev, CUstream s) {
  PREFETCH_BODY(id, ptsz, realp, ra, prefetch_v1_fn, s, real(p, n, dev, s),
                ctph_emit_prefetch(c.corr, n, 0, dev >= 0 ? 1 + (uint64_t)dev : 0));
}
CTPD_INLINE CUresult prefetch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                   CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags,
                                   CUstream s) {
  PREFETCH_BODY(id, ptsz, realp, ra, prefetch_fn, s, real(p, n, loc, flags, s),
                ctph_emit_prefetch(c.corr, n, 0, location_value(loc)));
}
CTPD_INLINE CUresult prefetch_batch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                         CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                         CUmemLocation *locs, size_t *loc_idxs, size_t num_locs,
                                         unsigned long long flags, CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, prefetch_batch_fn, s,
             real(ptrs, sizes, count, locs, loc_idxs, num_locs, flags, s),
             ctph_emit_prefetch(c.corr, ctph_batch_bytes(r == CUDA_SUCCESS, sizes, count), count,
                                r == CUDA_SUCCESS && locs && num_locs ? location_value(locs[0]) : 0));
}

CTPD_INLINE CUresult discard_batch_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                        CUdeviceptr *ptrs, size_t *sizes, size_t count,
                                        unsigned long long flags, CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, discard_batch_fn, s, real(ptrs, sizes, count, flags, s),
             ctph_emit_discard(c.corr, ctph_batch_bytes(r == CUDA_SUCCESS, sizes, count), count));
}

/* The MEMOP record of a decompression batch: count its operations, bytes what they are
 * to write (their dstNumBytes; 0 when the call failed: its array is not read). */
static void emit_decompress(uint64_t corr, int ok, const CUmemDecompressParams *params,
                            size_t count) {
  ct_record rec = {.kind = CT_KIND_MEMOP};
  rec.u.memop.corr = corr;
  rec.u.memop.kind = CT_MEMOP_DECOMPRESS;
  rec.u.memop.src_mem = CT_MEM_DEVICE;
  rec.u.memop.dst_mem = CT_MEM_DEVICE;
  rec.u.memop.async = 1;
  rec.u.memop.count = count;
  for (size_t i = 0; ok && params && i < count; i++)
    rec.u.memop.bytes += params[i].dstNumBytes;
  ctp_emit(&rec);
}

CTPD_INLINE CUresult decompress_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                     CUmemDecompressParams *params, size_t count, unsigned flags,
                                     size_t *error_index, CUstream s) {
  BATCH_BODY(id, ptsz, realp, ra, decompress_fn, s, real(params, count, flags, error_index, s),
             emit_decompress(c.corr, r == CUDA_SUCCESS, params, count));
}

#define BATCH_V1_PARAMS                                                                    \
  (CUdeviceptr * d, CUdeviceptr * sr, size_t * sz, size_t n, CUmemcpyAttributes * a,      \
   size_t * ai, size_t na, size_t * fi, CUstream s)
#define BATCH_PARAMS                                                                       \
  (CUdeviceptr * d, CUdeviceptr * sr, size_t * sz, size_t n, CUmemcpyAttributes * a,      \
   size_t * ai, size_t na, CUstream s)
#define PREFETCH_BATCH_PARAMS                                                              \
  (CUdeviceptr * p, size_t * sz, size_t n, CUmemLocation * l, size_t * li, size_t nl,      \
   unsigned long long f, CUstream s)
CTPD_DEFINE(cuMemcpyBatchAsync, 0, batch_v1_body, BATCH_V1_PARAMS, (d, sr, sz, n, a, ai, na, fi, s))
CTPD_DEFINE(cuMemcpyBatchAsync_ptsz, 1, batch_v1_body, BATCH_V1_PARAMS,
            (d, sr, sz, n, a, ai, na, fi, s))
CTPD_DEFINE(cuMemcpyBatchAsync_v2, 0, batch_body, BATCH_PARAMS, (d, sr, sz, n, a, ai, na, s))
CTPD_DEFINE(cuMemcpyBatchAsync_v2_ptsz, 1, batch_body, BATCH_PARAMS, (d, sr, sz, n, a, ai, na, s))
CTPD_DEFINE(cuMemPrefetchAsync, 0, prefetch_v1_body,
            (CUdeviceptr p, size_t n, CUdevice dev, CUstream s), (p, n, dev, s))
CTPD_DEFINE(cuMemPrefetchAsync_ptsz, 1, prefetch_v1_body,
            (CUdeviceptr p, size_t n, CUdevice dev, CUstream s), (p, n, dev, s))
CTPD_DEFINE(cuMemPrefetchAsync_v2, 0, prefetch_body,
            (CUdeviceptr p, size_t n, CUmemLocation l, unsigned f, CUstream s), (p, n, l, f, s))
CTPD_DEFINE(cuMemPrefetchAsync_v2_ptsz, 1, prefetch_body,
            (CUdeviceptr p, size_t n, CUmemLocation l, unsigned f, CUstream s), (p, n, l, f, s))
CTPD_DEFINE(cuMemPrefetchBatchAsync, 0, prefetch_batch_body, PREFETCH_BATCH_PARAMS,
            (p, sz, n, l, li, nl, f, s))
CTPD_DEFINE(cuMemPrefetchBatchAsync_ptsz, 1, prefetch_batch_body, PREFETCH_BATCH_PARAMS,
            (p, sz, n, l, li, nl, f, s))
CTPD_DEFINE(cuMemDiscardBatchAsync, 0, discard_batch_body,
            (CUdeviceptr * p, size_t * sz, size_t n, unsigned long long f, CUstream s), (p, sz, n, f, s))
CTPD_DEFINE(cuMemDiscardBatchAsync_ptsz, 1, discard_batch_body,
            (CUdeviceptr * p, size_t * sz, size_t n, unsigned long long f, CUstream s), (p, sz, n, f, s))
CTPD_DEFINE(cuMemDiscardAndPrefetchBatchAsync, 0, prefetch_batch_body, PREFETCH_BATCH_PARAMS,
            (p, sz, n, l, li, nl, f, s))
CTPD_DEFINE(cuMemDiscardAndPrefetchBatchAsync_ptsz, 1, prefetch_batch_body, PREFETCH_BATCH_PARAMS,
            (p, sz, n, l, li, nl, f, s))
#define B3D_V1 (size_t n, CUDA_MEMCPY3D_BATCH_OP * o, size_t * fi, unsigned long long f, CUstream s)
#define B3D (size_t n, CUDA_MEMCPY3D_BATCH_OP * o, unsigned long long f, CUstream s)
CTPD_DEFINE(cuMemcpy3DBatchAsync, 0, batch3d_v1_body, B3D_V1, (n, o, fi, f, s))
CTPD_DEFINE(cuMemcpy3DBatchAsync_ptsz, 1, batch3d_v1_body, B3D_V1, (n, o, fi, f, s))
CTPD_DEFINE(cuMemcpy3DBatchAsync_v2, 0, batch3d_body, B3D, (n, o, f, s))
CTPD_DEFINE(cuMemcpy3DBatchAsync_v2_ptsz, 1, batch3d_body, B3D, (n, o, f, s))
#define DECOMPRESS_PARAMS \
  (CUmemDecompressParams * p, size_t n, unsigned f, size_t * e, CUstream s)
CTPD_DEFINE(cuMemBatchDecompressAsync, 0, decompress_body, DECOMPRESS_PARAMS, (p, n, f, e, s))
CTPD_DEFINE(cuMemBatchDecompressAsync_ptsz, 1, decompress_body, DECOMPRESS_PARAMS, (p, n, f, e, s))
