/*
 * Driver stream memory operations, as CPU spans on their stream (CT_API_DRIVER),
 * like cuStreamWaitEvent: cuStreamWaitValue32 / cuStreamWaitValue64,
 * cuStreamWriteValue32 / cuStreamWriteValue64 and cuStreamBatchMemOp, in the CUDA
 * 8.0/9.0 ABI (the plain names) and the 11.7 one (_v2, what cuda.h 13 means), each
 * with _ptsz. The two ABIs take the same arguments (the flags' meaning changed).
 * Nothing is timed on the GPU: a wait holds its stream until another stream, the
 * host or a peer writes the value, and `cutrace gaps` names the idle time behind it
 * from this span (docs/gaps.md, cause other_stream); a write is a few bytes. A batch
 * carries a MEMOP record (CT_MEMOP_STREAM_OPS, format 1.9: its operations, the waits
 * among them, the bytes its writes write), so that a batch without a wait is not
 * taken for one. Every one is a barrier for event chaining (work the tracer does not
 * time runs there).
 */
#include "wrap_common.h"

#undef cuStreamWaitValue32 /* cuda.h 13 maps these to their _v2 */
#undef cuStreamWaitValue64
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#undef cuStreamBatchMemOp

typedef CUresult (*value32_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
typedef CUresult (*value64_fn)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
typedef CUresult (*batch_memop_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);

/* A span on stream s without GPU work; a barrier for event chaining when it succeeded;
 * DETAIL its detail record ((void)0: none). */
#define STREAM_MEMOP_BODY(id, ptsz, realp, ra, type, s, CALL, DETAIL)              \
  CTPD_SPAN_BODY(id, ptsz, realp, ra, type, s, 0, CALL, {                          \
    if (r == CUDA_SUCCESS && ctph_chain_on)                                       \
      ctph_stream_barrier(s, ptsz);                                               \
  }, DETAIL)

CTPD_INLINE CUresult value32_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                  CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned flags) {
  STREAM_MEMOP_BODY(id, ptsz, realp, ra, value32_fn, s, real(s, addr, value, flags), (void)0);
}
CTPD_INLINE CUresult value64_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                  CUstream s, CUdeviceptr addr, cuuint64_t value, unsigned flags) {
  STREAM_MEMOP_BODY(id, ptsz, realp, ra, value64_fn, s, real(s, addr, value, flags), (void)0);
}
CTPD_INLINE CUresult batch_memop_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                      CUstream s, unsigned count, CUstreamBatchMemOpParams *ops,
                                      unsigned flags) {
  STREAM_MEMOP_BODY(id, ptsz, realp, ra, batch_memop_fn, s, real(s, count, ops, flags),
                    ctph_emit_stream_ops(c.corr, r == CUDA_SUCCESS, ops, count));
}

#define V32 (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f)
#define V64 (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f)
#define BATCH (CUstream s, unsigned n, CUstreamBatchMemOpParams * o, unsigned f)
CTPD_DEFINE(cuStreamWaitValue32, 0, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue32_ptsz, 1, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue32_v2, 0, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue32_v2_ptsz, 1, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue64, 0, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue64_ptsz, 1, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue64_v2, 0, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWaitValue64_v2_ptsz, 1, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue32, 0, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue32_ptsz, 1, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue32_v2, 0, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue32_v2_ptsz, 1, value32_body, V32, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue64, 0, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue64_ptsz, 1, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue64_v2, 0, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamWriteValue64_v2_ptsz, 1, value64_body, V64, (s, a, v, f))
CTPD_DEFINE(cuStreamBatchMemOp, 0, batch_memop_body, BATCH, (s, n, o, f))
CTPD_DEFINE(cuStreamBatchMemOp_ptsz, 1, batch_memop_body, BATCH, (s, n, o, f))
CTPD_DEFINE(cuStreamBatchMemOp_v2, 0, batch_memop_body, BATCH, (s, n, o, f))
CTPD_DEFINE(cuStreamBatchMemOp_v2_ptsz, 1, batch_memop_body, BATCH, (s, n, o, f))
