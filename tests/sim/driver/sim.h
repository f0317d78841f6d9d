/* Internal interface of the simulated CUDA driver (libcuda.so.1).
 *
 * The whole driver state is protected by one mutex (sim_lock/sim_unlock); every
 * entry point takes it, and waits (syncs, a full queue) drop it while sleeping.
 * Streams are FIFOs on the host CLOCK_MONOTONIC timeline whose operations are
 * scheduled analytically when they are enqueued (see docs/simulator.md). */
#ifndef SIM_DRIVER_SIM_H
#define SIM_DRIVER_SIM_H

#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Marks a function exported from libcuda.so.1 (the library is -fvisibility=hidden). */
#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_DEVICES 16
#define SIM_QUEUE_DEPTH 1024 /* pending operations after which a launch blocks */

/* ---- knobs (knobs.c) ---- */

struct sim_kernel_rule {
  char *pattern; /* substring of the kernel name */
  double us;
};

/* Every SIMCUDA_* setting, read once by sim_knobs_load(). */
struct sim_knobs {
  int devices;
  double kernel_default_us;
  struct sim_kernel_rule *kernel_rules;
  size_t kernel_rule_count;
  double launch_us;           /* host time a launch call costs */
  double alloc_us;            /* host time an allocation or free call costs (not async) */
  double pinned_gbps;         /* H2D/D2H from page-locked memory */
  double pageable_gbps;       /* H2D/D2H from pageable memory */
  double d2d_gbps;            /* device to device, also memset */
  double copy_latency_us;     /* fixed cost of every copy/memset */
  double host_fn_us;          /* stream time a host function occupies */
  double extsem_us;           /* how long after a wait on an external semaphore is queued
                                 its producer outside CUDA signals it (extsem.c) */
  double clock_drift_ppm;     /* device clock rate error */
  double clock_offset_us;     /* device clock offset */
  int ctx_reuse;              /* SIMCUDA_CTX_REUSE=1: a destroyed context's address serves
                                 the next cuCtxCreate (context.c) */
  int truth_fd;               /* SIMCUDA_TRUTH_FILE, -1 when unset */
  int physical[SIM_MAX_DEVICES]; /* ordinal -> the index its PCI bus id and UUID name
                                    (CUDA_VISIBLE_DEVICES; the ordinal when unset) */
};

extern struct sim_knobs sim_knobs;

/* Reads the SIMCUDA_* environment once (thread-safe); bad values print one line
 * on stderr and keep the default. */
void sim_knobs_load(void);

/* Modelled duration in ns of a kernel called `name` (SIMCUDA_KERNEL_US: the
 * first pattern found in the mangled or the demangled name). */
uint64_t sim_kernel_duration_ns(const char *name);

/* The demangled form of a name, made on first need by sim_kernel_name_matches (free
 * text afterwards). */
struct sim_demangled {
  int tried;
  char *text;
};

/* 1 when pattern is a substring of the mangled name or of its demangled form. */
int sim_kernel_name_matches(const char *name, const char *pattern, struct sim_demangled *d);

/* The attributes SIMCUDA_KERNEL_ATTRS plants for a kernel called `name` (occupancy.c):
 * registers per thread, static shared memory and local memory per thread; 32, 0, 0
 * when no pattern matches. */
void sim_kernel_attrs(const char *name, int *regs, int *static_smem, int *local_bytes);

/* Enqueues one stream-ordered linear copy of n bytes between unified addresses
 * (cuMemcpyAsync's rules; batch.c). */
CUresult sim_copy_linear_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hStream,
                               int per_thread);

/* Enqueues one stream-ordered 3-D copy (cuMemcpy3DAsync's rules; batch.c). */
CUresult sim_copy_3d_async(const CUDA_MEMCPY3D *p, CUstream hStream, int per_thread);

/* What a copy expects of one side: anything, host memory, device memory, or an
 * array's bytes (device memory whose bounds the caller checked: array.c). */
enum sim_expect { SIM_EXPECT_ANY, SIM_EXPECT_HOST, SIM_EXPECT_DEVICE, SIM_EXPECT_ARRAY };

struct sim_copy;

/* Enqueues one strided copy with the copy engine's rules (copy.c): the sides'
 * memory checked and classified, the duration from the direction and host memory
 * type, synchronous with the host when `sync` (the non-Async entry points; not
 * device to device) or when a host side is pageable. Lock NOT held. */
CUresult sim_copy_submit(const struct sim_copy *c, enum sim_expect dst_expect, enum sim_expect src_expect,
                         CUstream hStream, int per_thread, int sync);

/* ---- arrays (array.c) ---- */

/* Bytes per element of an array; 0 for a handle that is not a live array. */
size_t sim_array_element_size(CUarray h);

/* The region of an array a 2-D/3-D copy touches: `width_bytes` x `height` x `depth`
 * from (x_bytes, y, z); its first byte, the array's row pitch and layer size.
 * CUDA_ERROR_INVALID_HANDLE for a handle that is not an array, CUDA_ERROR_INVALID_VALUE
 * for a region outside it. Lock NOT held. */
CUresult sim_array_region(CUarray h, size_t x_bytes, size_t y, size_t z, size_t width_bytes, size_t height,
                          size_t depth, char **origin, size_t *pitch, size_t *slice);

/* Checks an array descriptor (width, height for a depth, a format and channel count
 * the simulator has) and gives its element size in bytes; CUDA_ERROR_INVALID_VALUE or,
 * for a real format not simulated, CUDA_ERROR_NOT_SUPPORTED. */
CUresult sim_array_check(const CUDA_ARRAY3D_DESCRIPTOR *d, size_t *element);

/* Modelled duration in ns of moving `bytes` at `gbps` (GB/s) plus the copy latency. */
uint64_t sim_transfer_ns(size_t bytes, double gbps);

/* ---- clock (knobs.c) ---- */

/* CLOCK_MONOTONIC in ns. */
uint64_t sim_now_ns(void);

/* The device clock (ns) that events report at host time `host_ns`. */
int64_t sim_device_clock_ns(uint64_t host_ns);

/* Sleeps (or spins for short waits) until CLOCK_MONOTONIC reaches `when_ns`. */
void sim_wait_until(uint64_t when_ns);

/* Busy-waits for `us` microseconds of host time (modelled API cost). */
void sim_spin_us(double us);

/* Appends one line to SIMCUDA_TRUTH_FILE when it is set. */
void sim_truth_log(const char *kind, const char *name, uintptr_t stream_handle, int device,
                   uint64_t enqueue_ns, uint64_t start_ns, uint64_t end_ns);

/* ---- global lock and handle registry (handles.c) ---- */

void sim_lock(void);
void sim_unlock(void);

enum sim_kind {
  SIM_KIND_NONE = 0,
  SIM_KIND_CONTEXT,
  SIM_KIND_STREAM,
  SIM_KIND_EVENT,
  SIM_KIND_MODULE,
  SIM_KIND_FUNCTION,
  SIM_KIND_LIBRARY,
  SIM_KIND_KERNEL,
  SIM_KIND_GRAPH,
  SIM_KIND_GRAPH_EXEC,
  SIM_KIND_GRAPH_NODE,
  SIM_KIND_MEM_HANDLE, /* cuMemCreate's physical memory (vmm.c) */
  SIM_KIND_ARRAY,      /* a CUDA array (array.c) */
  SIM_KIND_MIPMAP,     /* a CUDA mipmapped array (array.c) */
  SIM_KIND_EXT_SEM,    /* an imported external semaphore (extsem.c) */
  SIM_KIND_GREEN_CTX,  /* a green context (green.c) */
  SIM_KIND_RESOURCE_DESC, /* cuDevResourceGenerateDesc's descriptor (green.c) */
};

/* Remembers that `handle` is a live object of `kind` (lock held). Returns 0, or
 * -1 when out of memory. */
int sim_handle_add(const void *handle, enum sim_kind kind);

/* Forgets `handle` (lock held). */
void sim_handle_remove(const void *handle);

/* The kind of a live handle, SIM_KIND_NONE for anything else (lock held). */
enum sim_kind sim_handle_kind(const void *handle);

/* ---- devices and contexts (device.c, context.c) ---- */

struct sim_stream;

struct sim_ctx {
  int device;
  unsigned int flags;
  int primary;
  int retain_count;
  unsigned long long id;
  struct sim_stream *legacy;   /* the NULL stream of this context */
  struct sim_stream *streams;  /* every other live stream (list via ctx_next) */
  uint64_t retired_tail_ns;    /* latest end of destroyed blocking streams */
  uint64_t wait_ns;            /* cuCtxWaitEvent / cuGreenCtxWaitEvent: no later work of
                                  the context starts before this (green.c) */
  struct sim_ctx *parent;      /* a green context's: its device's primary context */
  struct sim_ctx *green_next;  /* the primary's green contexts (list via green_next) */
  struct sim_ctx *greens;
  void *green;                 /* the CUgreenCtx this context was converted from */
  struct sim_ctx *reuse_next;  /* SIMCUDA_CTX_REUSE: destroyed contexts to reuse */
};

/* Whether cuInit has succeeded. */
extern int sim_initialized;

/* The calling thread's current context, NULL when none. */
struct sim_ctx *sim_current_ctx(void);

/* The current context, or CUDA_ERROR_NOT_INITIALIZED / CUDA_ERROR_INVALID_CONTEXT.
 * Lock NOT required. */
CUresult sim_require_ctx(struct sim_ctx **out);

/* Sets up a context's fields and legacy stream (lock held). Returns 0 or -1. */
int sim_ctx_setup(struct sim_ctx *c, int device, unsigned int flags, int is_primary);

/* A destroyed created or green context (lock held; its handle already removed): with
 * SIMCUDA_CTX_REUSE=1 its streams' handles go and its memory serves the next
 * cuCtxCreate; else it is kept (a stale handle then never aliases a new one). */
void sim_ctx_release(struct sim_ctx *c);

/* The primary context of `device` (no retain; lock held). */
struct sim_ctx *sim_primary_ctx(int device);

/* CUDA_SUCCESS for a valid device ordinal after cuInit, else the real error. */
CUresult sim_check_device(CUdevice dev);

/* ---- streams and the execution model (stream.c) ---- */

enum sim_op_kind { SIM_OP_KERNEL, SIM_OP_MEMCPY, SIM_OP_MEMSET, SIM_OP_EVENT, SIM_OP_HOST,
                   SIM_OP_PREFETCH, /* a managed-memory migration: takes time, moves no bytes */
                   SIM_OP_VALUE     /* a stream memory operation's write (streammem.c) */ };

/* A strided copy (1-D copies have height = depth = 1). */
struct sim_copy {
  char *dst;
  const char *src;
  size_t width, height, depth;
  size_t dst_pitch, src_pitch, dst_slice, src_slice;
};

/* A strided fill with an 8-, 16- or 32-bit value. */
struct sim_fill {
  char *dst;
  size_t pitch, width, height; /* width in elements */
  unsigned int value;
  int element_size;
};

/* A host function (cuLaunchHostFunc) or stream callback (cuStreamAddCallback). */
struct sim_host_call {
  CUhostFn fn;               /* set for cuLaunchHostFunc */
  CUstreamCallback callback; /* set for cuStreamAddCallback */
  CUstream stream;           /* the handle the callback receives */
  void *data;
};

/* One GPU operation, as executed or as recorded into a graph. */
struct sim_op {
  enum sim_op_kind kind;
  char name[64];             /* kernel name (truncated) or copy direction */
  const char *full_name;     /* kernel: the function's full name (lives with it) */
  const void *func;          /* kernel: the CUfunction or CUkernel it was launched with */
  unsigned grid[3], block[3], shared_mem; /* kernel: its launch configuration */
  uint64_t duration_ns;
  struct sim_event *event;   /* SIM_OP_EVENT: the event recorded */
  int external;              /* SIM_OP_EVENT: CU_EVENT_RECORD_EXTERNAL (a graph node when captured) */
  union {
    struct sim_copy copy;
    struct sim_fill fill;
    struct sim_host_call host;
  } u;
};

struct sim_capture;

struct sim_stream {
  struct sim_ctx *ctx;
  struct sim_stream *ctx_next;
  unsigned int flags;        /* CU_STREAM_DEFAULT / CU_STREAM_NON_BLOCKING */
  int priority;
  int is_legacy, is_per_thread;
  unsigned long long id;
  uint64_t tail_ns;          /* end of the last operation (or satisfied wait) */
  uint64_t pending_end[SIM_QUEUE_DEPTH]; /* ring of recent operation ends */
  unsigned pending_next;
  struct sim_capture *capture; /* non-NULL while capturing (or joined to one) */
};

/* Resolves a stream handle; `per_thread` says the call came through a _ptsz/_ptds
 * entry point (then handle 0 is the per-thread default stream). Lock held. */
CUresult sim_stream_resolve(CUstream handle, int per_thread, struct sim_stream **out);

/* sim_stream_resolve for an operation the simulator's graphs have no node for (stream
 * memory operations, external semaphores): a capturing stream is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and its capture invalidated (streammem.c).
 * Lock held. */
CUresult sim_stream_resolve_uncaptured(CUstream handle, int per_thread, struct sim_stream **out);

/* The handle that names `s` in the truth log. */
uintptr_t sim_stream_log_handle(const struct sim_stream *s);

/* Earliest start of a new operation on `s`: its tail and, for the legacy stream or
 * blocking streams, the implicit synchronisation. Lock held. */
uint64_t sim_stream_ready_ns(struct sim_stream *s);

/* Executes (or, while capturing, records) one operation on `s`. Moves real bytes
 * for copies and fills. Lock held; may drop it while the queue is full.
 * `end_out` (may be NULL) receives the operation's end time. */
CUresult sim_submit(struct sim_stream *s, const struct sim_op *op, uint64_t *end_out);

/* Latest end of any operation in `ctx` (lock held). */
uint64_t sim_ctx_tail_ns(struct sim_ctx *ctx);

/* Creates the legacy stream of a context (lock held). */
struct sim_stream *sim_stream_new_legacy(struct sim_ctx *ctx);

/* ---- events (event.c) ---- */

struct sim_event {
  struct sim_ctx *ctx;
  unsigned int flags;
  int recorded;
  int recorded_in_capture;
  struct sim_capture *capture; /* the capture it was last recorded in */
  uint64_t time_ns;          /* host time at which the record completes */
};

/* ---- capture (capture.c) ---- */

/* Whether the calling thread may not make a potentially unsafe call now; when it
 * may not, invalidates the captures that forbid it (lock held). */
int sim_capture_forbids_unsafe_call(void);

/* Records `op` into the capture of `s` (lock held). */
CUresult sim_capture_add(struct sim_stream *s, const struct sim_op *op);

/* Invalidates the capture `s` takes part in (lock held). */
void sim_capture_invalidate(struct sim_stream *s);

/* For an operation on the legacy stream: fails (and invalidates) when a blocking
 * stream of the context is capturing (lock held). */
CUresult sim_capture_check_legacy(struct sim_stream *s);

/* cuStreamWaitEvent on a capturing event: joins `s` to that capture (lock held).
 * Returns 1 when it did. */
int sim_capture_join(struct sim_stream *s, struct sim_event *e);

/* Ends every capture a destroyed stream takes part in (lock held). */
void sim_capture_forget_stream(struct sim_stream *s);

/* ---- memory (memory.c) ---- */

enum sim_mem_type { SIM_MEM_NONE = 0, SIM_MEM_DEVICE, SIM_MEM_PINNED, SIM_MEM_MANAGED };

/* One allocation or registered host range. */
struct sim_mem_range {
  char *base;
  size_t size;
  enum sim_mem_type type;
  int device;
  int owned;            /* allocated by the driver (else registered) */
  unsigned int flags;   /* cuMemHostAlloc / cuMemHostRegister / managed flags */
  unsigned long long id;
};

/* The range containing `p`, or NULL (lock held). */
const struct sim_mem_range *sim_mem_range_of(const void *p);

/* What `p` points into; fills base/size/device when known (lock held). */
enum sim_mem_type sim_mem_lookup(const void *p, char **base, size_t *size, int *device);

/* Allocates device memory for a module global on device 0 (lock held); 0 when
 * out of memory. */
CUdeviceptr sim_mem_alloc_internal(size_t size);

/* For vmm.c (lock held): a reserved virtual range [base, base+size) answers as
 * device memory (not owned: cuMemFree refuses it); 0 or -1 (out of memory). */
int sim_mem_add_reserved(char *base, size_t size, int device);

/* Forgets the reserved range that starts at `base` (lock held). */
void sim_mem_remove_reserved(char *base);

/* Counts `size` bytes of device memory as taken: 0, or -1 when the device has not
 * that much left; sim_mem_uncharge gives them back (lock held). */
int sim_mem_charge(size_t size);
void sim_mem_uncharge(size_t size);

/* Moves the bytes of a copy / a fill (no timing). */
void sim_copy_apply(const struct sim_copy *c);
void sim_fill_apply(const struct sim_fill *f);

/* ---- host functions (hostfn.c) ---- */

/* Runs `call` on the driver's host-function thread at host time `when_ns`
 * (lock held). Returns 0, or -1 when the thread cannot be started. */
int sim_host_call_schedule(const struct sim_host_call *call, uint64_t when_ns);

/* ---- modules and launches (module.c, launch.c, image.c) ---- */

struct sim_function;

/* Resolves a CUfunction, or a CUkernel passed as one; NULL if neither (lock held). */
struct sim_function *sim_function_of(const void *handle);

/* Checks a launch configuration, charges SIMCUDA_LAUNCH_US of host time and
 * enqueues the kernel on the stream (lock NOT held by the caller). */
CUresult sim_launch(const void *fhandle, const unsigned grid[3], const unsigned block[3], unsigned shared_mem,
                    CUstream hStream, int per_thread, void **params, void **extra, int cooperative);

/* Size in bytes of the global `name` as recorded in an (uncompressed) ELF image
 * or a fat binary holding one; 0 when it cannot be told. */
size_t sim_image_symbol_size(const void *image, const char *name);

/* Per-thread duration override set by simcuda_hint_next_launch_ns (0 = none). */
extern __thread unsigned long long sim_next_launch_ns;

#endif
