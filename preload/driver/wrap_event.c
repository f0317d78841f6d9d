/*
 * The program's own event records at the driver level: cuEventRecord and
 * cuEventRecordWithFlags (+_ptsz), as CPU spans on their stream (CT_API_DRIVER), as
 * the runtime's cudaEventRecord is traced: a static-cudart program's records are
 * seen only here. Calls from the hooked libcudart (whose own call is the span) only
 * forward (callers.c); the tracer's own timing events are recorded through its
 * driver table (preload/hooks/real.c), which holds libcuda's functions, never these.
 */
#include "wrap_common.h"

typedef CUresult (*event_record_fn)(CUevent, CUstream);
typedef CUresult (*event_record_flags_fn)(CUevent, CUstream, unsigned);

CTPD_INLINE CUresult event_record_body(enum ctph_id id, int ptsz, void *realp, const void *ra,
                                       CUevent e, CUstream s) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, event_record_fn, s, 0, real(e, s), (void)0, (void)0);
}

CTPD_INLINE CUresult event_record_flags_body(enum ctph_id id, int ptsz, void *realp,
                                             const void *ra, CUevent e, CUstream s,
                                             unsigned flags) {
  CTPD_SPAN_BODY(id, ptsz, realp, ra, event_record_flags_fn, s, 0, real(e, s, flags), (void)0,
                 (void)0);
}

CTPD_DEFINE(cuEventRecord, 0, event_record_body, (CUevent e, CUstream s), (e, s))
CTPD_DEFINE(cuEventRecord_ptsz, 1, event_record_body, (CUevent e, CUstream s), (e, s))
CTPD_DEFINE(cuEventRecordWithFlags, 0, event_record_flags_body,
            (CUevent e, CUstream s, unsigned flags), (e, s, flags))
CTPD_DEFINE(cuEventRecordWithFlags_ptsz, 1, event_record_flags_body,
            (CUevent e, CUstream s, unsigned flags), (e, s, flags))
