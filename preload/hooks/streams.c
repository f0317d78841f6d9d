/*
 * Devices, streams and captures as the hooks see them: the current device (from
 * the driver's current context, with a DEVICE record the first time), small stream
 * ids with a STREAM record at first use, which streams are capturing, and the
 * memory type of a pointer.
 */
#include "hooks_internal.h"
#include "map.h"

#include <stdlib.h>
#include <string.h>

/* Device ordinal -> its context as last seen by an app thread (not a green context's:
 * a primary or a created context), and whether its DEVICE record was written. */
static CUcontext device_ctx[CTPH_MAX_DEVICES];
static int device_reported[CTPH_MAX_DEVICES];

CUcontext ctph_device_context(int device) {
  if (device < 0 || device >= CTPH_MAX_DEVICES)
    return NULL;
  return __atomic_load_n(&device_ctx[device], __ATOMIC_ACQUIRE);
}

/* The device's UUID as nvidia-smi writes it ("GPU-" and 32 hex digits in 8-4-4-4-12
 * groups) into buf (at least 41 bytes); "" when the driver cannot say. */
static void device_uuid(CUdevice dev, char *buf) {
  CUuuid u;
  buf[0] = 0;
  if (!ctph_drv.DeviceGetUuid || ctph_drv.DeviceGetUuid(&u, dev) != CUDA_SUCCESS) return;
  static const char hex[] = "0123456789abcdef";
  char *p = buf + 4;
  memcpy(buf, "GPU-", 4);
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
    *p++ = hex[(unsigned char)u.bytes[i] >> 4];
    *p++ = hex[(unsigned char)u.bytes[i] & 15];
  }
  *p = 0;
}

/* Writes the DEVICE record of `device` (name, compute capability, SMs, memory, PCI bus
 * id and UUID: what tells two processes' "device 0" apart). */
static void report_device(int device) {
  int expected = 0;
  if (!__atomic_compare_exchange_n(&device_reported[device], &expected, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  char name[256] = "";
  int major = 0, minor = 0, sms = 0;
  size_t mem = 0;
  CUdevice dev = (CUdevice)device;
  if (ctph_drv.DeviceGetName && ctph_drv.DeviceGetName(name, sizeof name - 1, dev) != CUDA_SUCCESS)
    name[0] = 0;
  if (ctph_drv.DeviceGetAttribute) {
    ctph_drv.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    ctph_drv.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    ctph_drv.DeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  }
  /* 1.6: the SM limits the occupancy of a launch is measured against */
  static const CUdevice_attribute sm_limits[5] = {
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_WARP_SIZE,
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR};
  int limit[5] = {0, 0, 0, 0, 0};
  for (int i = 0; i < 5 && ctph_drv.DeviceGetAttribute; i++)
    if (ctph_drv.DeviceGetAttribute(&limit[i], sm_limits[i], dev) != CUDA_SUCCESS || limit[i] < 0)
      limit[i] = 0;
  if (ctph_drv.DeviceTotalMem)
    ctph_drv.DeviceTotalMem(&mem, dev);
  char bus[64] = "", uuid[48];
  if (ctph_drv.DeviceGetPCIBusId &&
      ctph_drv.DeviceGetPCIBusId(bus, sizeof bus - 1, dev) != CUDA_SUCCESS)
    bus[0] = 0;
  device_uuid(dev, uuid);
  /* 1.6: the CUDA versions the process runs with, as Kineto writes them (13000 = 13.0):
   * the driver's, and the runtime's when the process uses a shared one the tracer can
   * reach (a static runtime has no symbol to ask: 0). Neither call touches an error
   * state; cudaRuntimeGetVersion needs no initialised runtime. */
  int driver_version = 0, runtime_version = 0;
  if (ctph_drv.DriverGetVersion && ctph_drv.DriverGetVersion(&driver_version) != CUDA_SUCCESS)
    driver_version = 0;
  int (*runtime_get_version)(int *) =
      (int (*)(int *))ctph_real_by_name("cudaRuntimeGetVersion");
  if (runtime_get_version && runtime_get_version(&runtime_version) != 0)
    runtime_version = 0;
  ct_record r = {.kind = CT_KIND_DEVICE};
  r.u.device.device = (uint64_t)device;
  r.u.device.name = name[0] ? ctp_intern(name) : 0;
  r.u.device.cc_major = (uint64_t)major;
  r.u.device.cc_minor = (uint64_t)minor;
  r.u.device.sm_count = (uint64_t)sms;
  r.u.device.mem_bytes = mem;
  r.u.device.pci_bus_id = bus[0] ? ctp_intern(bus) : 0;
  r.u.device.uuid = uuid[0] ? ctp_intern(uuid) : 0;
  r.u.device.max_threads_per_sm = (uint64_t)limit[0];
  r.u.device.warp_size = (uint64_t)limit[1];
  r.u.device.regs_per_sm = (uint64_t)limit[2];
  r.u.device.smem_per_sm = (uint64_t)limit[3];
  r.u.device.max_blocks_per_sm = (uint64_t)limit[4];
  r.u.device.driver_version = driver_version > 0 ? (uint64_t)driver_version : 0;
  r.u.device.runtime_version = runtime_version > 0 ? (uint64_t)runtime_version : 0;
  ctp_emit(&r);
}

int ctph_current_device(CUcontext *ctx_out) {
  if (ctx_out)
    *ctx_out = NULL;
  if (CTP_UNLIKELY(!__atomic_load_n(&ctph_drv.loaded, __ATOMIC_ACQUIRE)) && !ctph_driver_load())
    return -1;
  CUcontext ctx = NULL;
  struct ctph_thread *t = &ctph_tls;
  if (ctph_drv.CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx) {
    t->cached_ctx = NULL; /* the next stream lookups are the primary context's */
    t->cached_ctx_tag = 0;
    t->last_stream_dev = 0;
    return -1;
  }
  if (ctx_out)
    *ctx_out = ctx;
  /* the same context as last time, and no context created or destroyed since */
  uint32_t generation = __atomic_load_n(&ctph_context_generation, __ATOMIC_ACQUIRE);
  if (CTP_LIKELY(ctx == t->cached_ctx && generation == t->cached_generation))
    return t->cached_device;
  CUdevice dev = 0;
  if (!ctph_drv.CtxGetDevice || ctph_drv.CtxGetDevice(&dev) != CUDA_SUCCESS)
    dev = 0;
  int device = (int)dev;
  if (device < 0 || device >= CTPH_MAX_DEVICES)
    return -1;
  uint64_t tag = ctph_context_tag(ctx);
  if (!(tag & 1)) /* not a green context's */
    __atomic_store_n(&device_ctx[device], ctx, __ATOMIC_RELEASE);
  t->cached_ctx = ctx;
  t->cached_device = device;
  t->cached_ctx_tag = tag;
  t->cached_generation = generation;
  t->last_stream_dev = 0; /* the NULL stream may now be another context's */
  report_device(device);
  return device;
}

/* ---------------------------------------------------------------- streams */

/* (normalised handle, device | owner tid << 8) -> v1 = small id, v2 = its state. The
 * NULL and per-thread default streams of a context that is not a primary context
 * (contexts.c): (its serial, device | owner tid << 8 | CTX_NULL or CTX_PER_THREAD). */
static struct ctph_map stream_ids = CTPH_MAP_INIT(8);
static uint32_t next_stream_id = 1;
#define CTX_NULL (1ull << 62)
#define CTX_PER_THREAD (1ull << 61)

/* Writes the STREAM record of a newly seen stream. ctx_tag: the tag of the context
 * whose NULL or per-thread default stream it is (0: the primary context's; else
 * handle is that context). */
static void report_stream(uint32_t id, int device, uintptr_t handle, int per_thread, int legacy,
                          uint64_t owner, uint64_t ctx_tag) {
  ct_record r = {.kind = CT_KIND_STREAM};
  r.u.stream.stream = id;
  r.u.stream.handle = handle;
  r.u.stream.device = (uint64_t)device;
  r.u.stream.owner_tid = owner;
  uint64_t green = ctx_tag & 1 ? CT_STREAM_GREEN : 0;
  if (legacy) {
    r.u.stream.flags = CT_STREAM_LEGACY | green;
  } else if (per_thread) {
    r.u.stream.flags = CT_STREAM_PER_THREAD | green;
  } else {
    unsigned flags = 0;
    int priority = 0;
    if (ctph_drv.StreamGetFlags && ctph_drv.StreamGetFlags((CUstream)handle, &flags) == CUDA_SUCCESS &&
        (flags & CU_STREAM_NON_BLOCKING))
      r.u.stream.flags = CT_STREAM_NON_BLOCKING;
    if (ctph_drv.StreamGetPriority &&
        ctph_drv.StreamGetPriority((CUstream)handle, &priority) == CUDA_SUCCESS)
      r.u.stream.priority = (uint64_t)(int64_t)priority;
  }
  ctp_emit(&r);
}

/* Sets an app-created stream's state as a new stream's: chainable when created
 * non-blocking, and the context it belongs to (the driver's answer; else the calling
 * thread's current one). */
static void init_state(struct ctph_stream_state *st, CUstream handle) {
  unsigned flags = 0;
  if (ctph_drv.StreamGetFlags && ctph_drv.StreamGetFlags(handle, &flags) == CUDA_SUCCESS)
    st->chainable = (flags & CU_STREAM_NON_BLOCKING) != 0;
  CUcontext ctx = NULL;
  if (ctph_drv.StreamGetCtx && ctph_drv.StreamGetCtx(handle, &ctx) == CUDA_SUCCESS && ctx) {
    st->ctx = ctx;
    st->ctx_tag = ctph_context_tag(ctx);
  } else {
    st->ctx = ctph_tls.cached_ctx;
    st->ctx_tag = ctph_tls.cached_ctx_tag;
  }
}

/* A new stream's state. */
static struct ctph_stream_state *new_state(CUstream handle, int legacy, int per_thread) {
  struct ctph_stream_state *st = calloc(1, sizeof *st);
  if (st && !legacy && !per_thread)
    init_state(st, handle);
  return st;
}

/* An app-created stream whose handle now names a stream of another context: the
 * context it was first seen in (a created or green one) was destroyed, and the driver
 * handed the address out again. It gets a new id (a destroyed context's stream ids
 * serve no other context's streams) and a new STREAM record; its state is set anew
 * (a barrier for event chaining). Returns the id, or `id` when the context lives. */
static uint32_t renew_if_dead(struct ctph_stream_state *st, uint32_t id, int device,
                              uint64_t key, uint64_t key2) {
  static pthread_mutex_t renewing = PTHREAD_MUTEX_INITIALIZER;
  if (ctph_context_tag(st->ctx) == st->ctx_tag)
    return id; /* used from another context while its own lives */
  pthread_mutex_lock(&renewing);
  uint64_t now = id;
  struct ctph_map_slot *s = ctph_map_find(&stream_ids, key, key2);
  if (s)
    now = __atomic_load_n(&s->v1, __ATOMIC_ACQUIRE);
  if (s && now == id && ctph_context_tag(st->ctx) != st->ctx_tag) {
    uint32_t fresh = __atomic_fetch_add(&next_stream_id, 1, __ATOMIC_RELAXED);
    init_state(st, (CUstream)(uintptr_t)key);
    __atomic_store_n(&st->owner_tid, 0, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st->seq, 1, __ATOMIC_RELEASE);
    uint64_t was;
    if (ctph_map_exchange(&stream_ids, key, key2, fresh, &was) == 0) {
      report_stream(fresh, device, (uintptr_t)key, 0, 0, 0, 0);
      now = fresh;
    }
  }
  pthread_mutex_unlock(&renewing);
  return (uint32_t)now;
}

/* ctph_stream_id when the stream is not the thread's last one: the map lookup, and
 * the STREAM record of a new stream. Kept out of line so that the common case (a
 * launch loop on one stream) needs no stack frame. */
static __attribute__((noinline)) uint32_t stream_id_lookup(int device, CUstream handle, int pt,
                                                           struct ctph_stream_state **state) {
  uintptr_t h = (uintptr_t)handle;
  uint32_t dev1 = (uint32_t)device + 1;
  struct ctph_thread *t = &ctph_tls;
  int legacy = !pt && (h == 0 || h == (uintptr_t)CU_STREAM_LEGACY);
  /* the NULL and per-thread streams of a created or green context are its own */
  uint64_t tag = (legacy || pt) && t->cached_ctx && t->cached_device == device ? t->cached_ctx_tag : 0;
  uint64_t owner = pt ? ctp_tid() : 0;
  uint64_t key = tag ? tag >> 1 : legacy ? 0 : pt ? (uintptr_t)CU_STREAM_PER_THREAD : h;
  uint64_t key2 = ((uint64_t)device & 0xff) | owner << 8 | (!tag ? 0 : legacy ? CTX_NULL : CTX_PER_THREAD);
  uint32_t id;
  struct ctph_map_slot *s = ctph_map_find(&stream_ids, key, key2);
  if (!s) {
    id = legacy && !tag ? 0 : __atomic_fetch_add(&next_stream_id, 1, __ATOMIC_RELAXED);
    struct ctph_stream_state *st = new_state(handle, legacy, pt);
    int inserted = 0;
    s = ctph_map_insert(&stream_ids, key, key2, id, (uintptr_t)st, &inserted);
    if (inserted)
      report_stream(id, device, tag ? (uintptr_t)t->cached_ctx : legacy ? 0 : key, pt, legacy,
                    owner, tag);
    else
      free(st);
  }
  struct ctph_stream_state *st = s ? (struct ctph_stream_state *)(uintptr_t)s->v2 : NULL;
  id = s ? (uint32_t)s->v1 : 0;
  /* an app-created stream first seen in a created or green context other than the
   * current one: that context may have been destroyed and its address reused */
  if (CTP_UNLIKELY(st && !legacy && !pt && st->ctx_tag && st->ctx_tag != t->cached_ctx_tag))
    id = renew_if_dead(st, id, device, key, key2);
  t->last_stream_key = h;
  t->last_stream_dev = dev1;
  t->last_stream_pt = (uint32_t)pt;
  t->last_stream_id = id;
  t->last_stream_state = st;
  if (state)
    *state = st;
  return id;
}

uint32_t ctph_stream_id(int device, CUstream handle, int per_thread,
                        struct ctph_stream_state **state) {
  uintptr_t h = (uintptr_t)handle;
  int pt = h == (uintptr_t)CU_STREAM_PER_THREAD || (h == 0 && per_thread);
  struct ctph_thread *t = &ctph_tls;
  if (CTP_UNLIKELY(t->last_stream_key != h || t->last_stream_dev != (uint32_t)device + 1 ||
                   t->last_stream_pt != (uint32_t)pt))
    return stream_id_lookup(device, handle, pt, state);
  if (state)
    *state = t->last_stream_state;
  return t->last_stream_id;
}

void ctph_stream_barrier(CUstream handle, int per_thread) {
  int device = ctph_current_device(NULL);
  if (device < 0)
    return;
  struct ctph_stream_state *st = NULL;
  ctph_stream_id(device, handle, per_thread, &st);
  if (st)
    __atomic_fetch_add(&st->seq, 1, __ATOMIC_RELEASE);
}

/* --------------------------------------------------------------- capture */

int ctph_captures_active;
/* (normalised handle, owner tid for the per-thread stream) -> v1 = capturing. */
static struct ctph_map capturing = CTPH_MAP_INIT(6);

/* Key of a stream in the capturing map: the per-thread default stream is
 * (CU_STREAM_PER_THREAD, its thread), any other stream (handle, 0). */
static uint64_t capture_key(CUstream handle, int per_thread, uint64_t *key2) {
  uintptr_t h = (uintptr_t)handle;
  int pt = h == (uintptr_t)CU_STREAM_PER_THREAD || (h == 0 && per_thread);
  *key2 = pt ? ctp_tid() : 0;
  return pt ? (uintptr_t)CU_STREAM_PER_THREAD : h;
}

void ctph_capture_begun(CUstream handle, int per_thread) {
  int inserted;
  uint64_t key2, key = capture_key(handle, per_thread, &key2);
  /* The flag changes under the map's mutex (ctph_map_exchange): an exchange through a
   * slot found before another thread's insert grew the table would be lost, and the
   * count of active captures would then drift (0 while a capture runs). */
  uint64_t was = 1;
  int known = ctph_map_insert(&capturing, key, key2, 0, 0, &inserted) != NULL &&
              ctph_map_exchange(&capturing, key, key2, 1, &was) == 0;
  if (!was || !known)
    __atomic_fetch_add(&ctph_captures_active, 1, __ATOMIC_ACQ_REL);
}

void ctph_capture_ended(CUstream handle, int per_thread) {
  uint64_t key2, key = capture_key(handle, per_thread, &key2);
  uint64_t was = 0;
  if (ctph_map_find(&capturing, key, key2) &&
      ctph_map_exchange(&capturing, key, key2, 0, &was) == 0 && was)
    __atomic_fetch_sub(&ctph_captures_active, 1, __ATOMIC_ACQ_REL);
}

int ctph_stream_capturing(CUstream handle) {
  if (CTP_LIKELY(!__atomic_load_n(&ctph_captures_active, __ATOMIC_ACQUIRE)))
    return 0;
  /* A capture is active somewhere: ask the driver (a stream joined to a capture by
   * an event wait is capturing too). Any doubt means "capturing". */
  if (!ctph_drv.StreamIsCapturing)
    return 1;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  return ctph_drv.StreamIsCapturing(handle, &st) != CUDA_SUCCESS ||
         st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* ---------------------------------------------------------- memory types */

int ctph_memory_type(const void *ptr) {
  if (!ptr || !ctph_driver_load())
    return CT_MEM_UNKNOWN;
  CUmemorytype type = 0;
  unsigned managed = 0;
  /* One driver call for both; memory the driver does not know (pageable host memory)
   * answers success with type 0 (cuPointerGetAttribute would fail on it). */
  CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED};
  void *values[2] = {&type, &managed};
  if (!ctph_drv.PointerGetAttributes ||
      ctph_drv.PointerGetAttributes(2, attrs, values, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
    return CT_MEM_UNKNOWN;
  if (!type)
    return CT_MEM_PAGEABLE;
  if (managed)
    return CT_MEM_MANAGED;
  switch (type) {
  case CU_MEMORYTYPE_DEVICE:
    return CT_MEM_DEVICE;
  case CU_MEMORYTYPE_HOST:
    return CT_MEM_PINNED;
  default:
    return CT_MEM_UNKNOWN;
  }
}
