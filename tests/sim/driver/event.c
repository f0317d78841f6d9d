/* Events: zero-duration operations whose completion time is read on the
 * simulated device clock (host clock with SIMCUDA_CLOCK_DRIFT_PPM and
 * SIMCUDA_CLOCK_OFFSET_US applied, 512 ns resolution). */
#include "sim.h"

#include <stdlib.h>

#define SIM_EVENT_RESOLUTION_NS 512

static const unsigned int event_flags_allowed =
    CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

/** Creates an event (CU_EVENT_BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS). */
SIM_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
  struct sim_ctx *c;
  CUresult r = sim_require_ctx(&c);
  if (r != CUDA_SUCCESS)
    return r;
  if (!phEvent || (Flags & ~event_flags_allowed))
    return CUDA_ERROR_INVALID_VALUE;
  if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
    return CUDA_ERROR_INVALID_VALUE;
  struct sim_event *e = calloc(1, sizeof *e);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  e->ctx = c;
  e->flags = Flags;
  sim_lock();
  int failed = sim_handle_add(e, SIM_KIND_EVENT);
  sim_unlock();
  if (failed) {
    free(e);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *phEvent = (CUevent)e;
  return CUDA_SUCCESS;
}

/** Destroys an event (a pending record still completes). */
SIM_API CUresult cuEventDestroy(CUevent hEvent)
{
  sim_lock();
  if (!sim_initialized || sim_handle_kind(hEvent) != SIM_KIND_EVENT) {
    sim_unlock();
    return sim_initialized ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_NOT_INITIALIZED;
  }
  sim_handle_remove(hEvent);
  sim_unlock();
  free(hEvent);
  return CUDA_SUCCESS;
}

static CUresult event_record(CUevent hEvent, CUstream hStream, unsigned int flags, int per_thread)
{
  if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  struct sim_stream *s;
  CUresult r = sim_stream_resolve(hStream, per_thread, &s);
  if (r == CUDA_SUCCESS && sim_handle_kind(hEvent) != SIM_KIND_EVENT)
    r = CUDA_ERROR_INVALID_HANDLE;
  if (r == CUDA_SUCCESS) {
    struct sim_op op = {.kind = SIM_OP_EVENT, .event = (struct sim_event *)hEvent,
                        .external = (flags & CU_EVENT_RECORD_EXTERNAL) != 0};
    r = sim_submit(s, &op, NULL);
  }
  sim_unlock();
  return r;
}

/** Records the event as an operation on the stream. */
SIM_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
  return event_record(hEvent, hStream, 0, 0);
}

/** cuEventRecord through the per-thread default stream entry point. */
SIM_API CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
  return event_record(hEvent, hStream, 0, 1);
}

/** cuEventRecord with flags (CU_EVENT_RECORD_EXTERNAL). */
SIM_API CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
  return event_record(hEvent, hStream, flags, 0);
}

/** cuEventRecordWithFlags through the per-thread default stream entry point. */
SIM_API CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
  return event_record(hEvent, hStream, flags, 1);
}

/* Common checks of query and synchronize; gives the completion time. */
static CUresult event_completion(CUevent hEvent, uint64_t *when)
{
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  if (!sim_initialized)
    r = CUDA_ERROR_NOT_INITIALIZED;
  else if (sim_handle_kind(hEvent) != SIM_KIND_EVENT)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (sim_capture_forbids_unsafe_call())
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  else if (((struct sim_event *)hEvent)->recorded_in_capture)
    r = CUDA_ERROR_CAPTURED_EVENT;
  else {
    struct sim_event *e = (struct sim_event *)hEvent;
    *when = e->recorded ? e->time_ns : 0; /* never recorded: complete */
  }
  sim_unlock();
  return r;
}

/** CUDA_SUCCESS once the last record has completed (or none was made). */
SIM_API CUresult cuEventQuery(CUevent hEvent)
{
  uint64_t when = 0;
  CUresult r = event_completion(hEvent, &when);
  if (r != CUDA_SUCCESS)
    return r;
  return sim_now_ns() >= when ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/** Waits until the last record of the event has completed. */
SIM_API CUresult cuEventSynchronize(CUevent hEvent)
{
  uint64_t when = 0;
  CUresult r = event_completion(hEvent, &when);
  if (r != CUDA_SUCCESS)
    return r;
  sim_wait_until(when);
  return CUDA_SUCCESS;
}

/* The device timestamp of a completed record, at event resolution. */
static int64_t event_device_time(const struct sim_event *e)
{
  int64_t t = sim_device_clock_ns(e->time_ns);
  int64_t q = t / SIM_EVENT_RESOLUTION_NS;
  if (t < 0 && q * SIM_EVENT_RESOLUTION_NS != t)
    q--;
  return q * SIM_EVENT_RESOLUTION_NS;
}

/** Milliseconds of device time between two completed records. */
SIM_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
  if (!pMilliseconds)
    return CUDA_ERROR_INVALID_VALUE;
  sim_lock();
  CUresult r = CUDA_SUCCESS;
  struct sim_event *a = (struct sim_event *)hStart, *b = (struct sim_event *)hEnd;
  if (!sim_initialized)
    r = CUDA_ERROR_NOT_INITIALIZED;
  else if (sim_handle_kind(a) != SIM_KIND_EVENT || sim_handle_kind(b) != SIM_KIND_EVENT)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (a->recorded_in_capture || b->recorded_in_capture)
    r = CUDA_ERROR_CAPTURED_EVENT;
  else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (!a->recorded || !b->recorded)
    r = CUDA_ERROR_INVALID_HANDLE;
  else {
    uint64_t now = sim_now_ns();
    if (now < a->time_ns || now < b->time_ns)
      r = CUDA_ERROR_NOT_READY;
    else
      *pMilliseconds = (float)((double)(event_device_time(b) - event_device_time(a)) / 1e6);
  }
  sim_unlock();
  return r;
}
