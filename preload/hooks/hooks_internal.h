/*
 * Internal interface of the interception half of libtrace.so (preload/hooks/).
 *
 *   real.c      the real entry points (one table from hooks.def) and the driver
 *               functions the tracer itself uses (resolved through libcuda.so.1)
 *   names.c     kernel names: host stub / cudaKernel_t -> interned mangled name
 *   streams.c   small stream ids, STREAM and DEVICE records, capture tracking
 *   gputime.c   event pool and per-thread queues of timed operations
 *   poller.c    the poller thread, clock anchors, GPU records, final drain
 *   call.c      the span helpers every wrapper uses (API records)
 *   launch.c, memops.c, blas.c, sync.c, instantiate.c   the wrappers
 *
 * Nothing here is exported from libtrace.so; only the wrappers are.
 */
#ifndef CUTRACE_PRELOAD_HOOKS_INTERNAL_H
#define CUTRACE_PRELOAD_HOOKS_INTERNAL_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdint.h>

#include "trace.h"

#define CTPH_HIDDEN CTP_HIDDEN

/* ------------------------------------------------------------------ real.c */

/* One id per hooks.def entry: CTPH_ID_cudaLaunchKernel, ... */
enum ctph_id {
#define CT_HOOK(sym, layer, category) CTPH_ID_##sym,
#include "cutrace/hooks.def"
#undef CT_HOOK
  CTPH_ID_COUNT
};

/* The hooks.def name of id. */
const char *ctph_hook_name(enum ctph_id id) CTPH_HIDDEN;

/* The next definition of entry point id after libtrace.so (dlsym RTLD_NEXT),
 * resolved on first use and cached; NULL when no library defines it (yet). */
void *ctph_real_resolve(enum ctph_id id) CTPH_HIDDEN;

/* The next definition of name after libtrace.so: dlsym(RTLD_NEXT), else the one in a
 * library loaded RTLD_LOCAL (see real.c). For functions the hooks call themselves
 * (cublasGetStream_v2, ...); errno is kept. NULL when no loaded object defines it. */
void *ctph_real_by_name(const char *name) CTPH_HIDDEN;

extern void *ctph_real_table[CTPH_ID_COUNT] CTPH_HIDDEN;

/* The real function of a hooked symbol, typed like the wrapper. */
#define CTPH_REAL(sym)                                                              \
  ((__typeof__(&sym))(__atomic_load_n(&ctph_real_table[CTPH_ID_##sym], __ATOMIC_ACQUIRE) \
                          ?: ctph_real_resolve(CTPH_ID_##sym)))

/* The interned string id of the entry point's name (0 while tracing is off). */
uint64_t ctph_hook_name_id(enum ctph_id id) CTPH_HIDDEN;

/* Driver functions used by the tracer itself, resolved from libcuda.so.1 the way
 * the runtime does (cuGetProcAddress_v2), never through cudart. */
struct ctph_driver {
  int loaded;  /* 1 when every function below that is non-NULL may be used */
  CUresult (*CtxGetCurrent)(CUcontext *);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxGetDevice)(CUdevice *);
  CUresult (*CtxPushCurrent)(CUcontext);
  CUresult (*CtxPopCurrent)(CUcontext *);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*DeviceTotalMem)(size_t *, CUdevice);
  CUresult (*DriverGetVersion)(int *);
  CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
  CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
  CUresult (*EventCreate)(CUevent *, unsigned);
  CUresult (*EventDestroy)(CUevent);
  CUresult (*EventRecord)(CUevent, CUstream);
  CUresult (*EventQuery)(CUevent);
  CUresult (*EventSynchronize)(CUevent);
  CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*StreamCreate)(CUstream *, unsigned);
  CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
  CUresult (*StreamGetFlags)(CUstream, unsigned *);
  CUresult (*StreamGetPriority)(CUstream, int *);
  CUresult (*StreamGetCtx)(CUstream, CUcontext *);
  CUresult (*ThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
  CUresult (*PointerGetAttributes)(unsigned, CUpointer_attribute *, void **, CUdeviceptr);
  /* the graph walk (preload/driver/graph_walk.c) */
  CUresult (*GraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
  CUresult (*GraphNodeGetType)(CUgraphNode, CUgraphNodeType *);
  CUresult (*GraphKernelNodeGetParams)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2 *);
  CUresult (*GraphChildGraphNodeGetGraph)(CUgraphNode, CUgraph *);
  /* kernel attributes and occupancy (preload/driver/kernel_attrs.c) */
  CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
  CUresult (*KernelGetFunction)(CUfunction *, CUkernel);
  CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
  /* the element size of a CUDA array in a 3-D copy (memops_batch.c) */
  CUresult (*Array3DGetDescriptor)(CUDA_ARRAY3D_DESCRIPTOR *, CUarray);
};

extern struct ctph_driver ctph_drv CTPH_HIDDEN;

/* Loads the driver table once (thread-safe). Returns ctph_drv.loaded. */
int ctph_driver_load(void) CTPH_HIDDEN;

/* ---------------------------------------------------------------- call.c */

/* A thread's open sequence of polls (poll.c): queries of one event or stream through
 * one entry point that answered not ready, not yet written. polls 0: none open. */
#define CTPH_POLL_SLOTS 4 /* targets a thread may poll round-robin, each coalesced */
#define CTPH_POLL_KEY_FINAL UINT32_MAX /* a slot's key while the final flush copies it */
struct ctph_poll_seq {
  uint32_t polls;          /* polls so far (0 = no sequence open) */
  uint32_t id;             /* enum ctph_id of the entry point */
  uint64_t target;         /* the event or stream handle queried */
  uint64_t begin_ns, end_ns, corr, stack, parent, result;
  uint32_t depth, flags, stream;
  int32_t device;
};

/* Per-thread state of the hooks (initial-exec TLS). */
struct ctph_thread {
  uint32_t depth;          /* intercepted calls open on this thread */
  uint64_t outer_corr;     /* corr of the outermost open call (the api.parent of
                              every call nested in it) */
  uint32_t outer_is_library; /* the outermost open call is a library call (a GEMM):
                                GPU work queued inside it is timed op by op */
  uint32_t inner_flags;    /* CT_API_TIMED/CAPTURED/UNTIMED of the operations timed
                              inside the outermost open call, or-ed */
  uint64_t inner_timed;    /* operations timed inside library calls (ever, this thread) */
  int32_t cached_device;   /* device of cached_ctx, -1 when none */
  uint32_t cached_generation; /* ctph_context_generation when cached_ctx was looked up */
  CUcontext cached_ctx;
  uint64_t cached_ctx_tag; /* ctph_context_tag of cached_ctx: 0 a primary context */
  /* one-entry cache of the last stream looked up */
  uint64_t last_stream_key;   /* handle */
  uint32_t last_stream_dev;   /* device + 1 (0 = empty) */
  uint32_t last_stream_pt;    /* per-thread default stream */
  uint32_t last_stream_id;
  struct ctph_stream_state *last_stream_state;
  /* coalesced event/stream queries (poll.c): up to CTPH_POLL_SLOTS open sequences, one
   * per target; the keys apart, in one cache line, for the lookup of every poll */
  uint64_t poll_target[CTPH_POLL_SLOTS]; /* the event or stream handle of each slot */
  uint32_t poll_key[CTPH_POLL_SLOTS];    /* enum ctph_id + 1 of its entry point; 0: free;
                                            CTPH_POLL_KEY_FINAL: being written by the final
                                            flush (another thread); atomic: whoever writes a
                                            spin first claims its key (poll.c) */
  uint32_t polls_open;                   /* slots in use */
  uint32_t poll_change[CTPH_POLL_SLOTS]; /* per slot: odd while the thread updates the spin's
                                            polls, end or result (a sequence lock for the
                                            final flush's copy) */
  struct ctph_poll_seq poll[CTPH_POLL_SLOTS];
  struct ctph_thread **poll_owner;       /* its entry in poll.c's table of polling threads
                                            (their spins are written at process exit); NULL none */
  uint32_t poll_armed;                   /* its exit key is set (spins written at thread exit) */
  uint64_t poll_tid;                     /* its tid, for the writing of its spins by another */
  uint32_t poll_epoch;                   /* ctp_pause_epoch when its open sequences began */
};

extern __thread struct ctph_thread ctph_tls CTPH_HIDDEN;

/* The stream argument of a call that has none. */
#define CTPH_NO_STREAM ((CUstream)(intptr_t)-1)

/* What one wrapper call is doing. */
typedef struct ctph_call {
  enum ctph_id id;
  int traced;          /* 0: tracing is off for this call, only forward */
  int saved_errno;     /* errno as the real function left it */
  uint32_t depth;      /* depth of this call (0 = outermost) */
  uint32_t flags;      /* CT_API_* */
  int device;          /* -1 until known */
  int ptsz;            /* a _ptsz/_ptds entry point: stream 0 is per-thread */
  uint32_t stream;     /* small stream id */
  CUstream handle;     /* the app's stream argument, or CTPH_NO_STREAM */
  uint64_t begin_ns, corr;
  uint64_t end_ns;     /* set by ctph_call_settle */
  /* GPU timing of this call (only the outermost call is timed) */
  int timing;          /* events were taken and the start event recorded */
  int gpu_type;        /* CT_GPU_* to time, 0 for none */
  uint64_t gpu_name;   /* GPU record name */
  CUevent ev_start, ev_end;
  int returns_early;   /* the call returns before its work is done (asynchronous to
                          the host): its return bounds the work's start. Set for every
                          kind but copies at begin; a copy's wrapper sets it when it
                          knows that the copy does (ctph_copy_returns_early) */
  int chained;         /* ev_start is the previous operation's end event */
  struct ctph_stream_state *state; /* the stream's shared state, or NULL */
  int inner_op;        /* GPU work queued inside a library call, timed on its own */
  int own_skipped;     /* a library call expected to be timed by its inner operations
                          recorded no start event of its own */
  uint64_t inner_mark; /* ctph_tls.inner_timed when the call began */
  int unchained;       /* never part of event chaining (ctph_call_begin_entry) */
  /* the call site, for its stack: the return address into the caller and the CFA of
   * the exported wrapper (the return address lies at site_cfa - 8 on x86-64) */
  const void *site_ra, *site_cfa;
} ctph_call;

/* 1 when tracing is on (starting the tracer on first use) and recording (not in a
 * pause: preload/core/window.c). When 0 (paused or over), the calling thread's open
 * spins of queries are written as they stand (ctph_poll_break): every hooked entry that
 * asks does what a poll does then. */
int ctph_on(void) CTPH_HIDDEN;

/* 1 when the tracer runs, recording or paused: state the hooks track (captures,
 * device resets) must be kept up to date then. */
static inline int ctph_alive(void) { return __atomic_load_n(&ctp_enabled, __ATOMIC_RELAXED); }

/*
 * Opens a call: when tracing is on, takes the begin time and a corr and raises the
 * thread's depth. gpu_type (CT_GPU_*, 0 for none) is timed with events on `stream`
 * (the per-thread default stream when ptsz and stream is 0) if the stream is not
 * capturing and this is the outermost call, or an operation (kernel, copy, set,
 * graph) queued inside an outermost library call (gpu_type CT_GPU_GEMM: cuBLAS's
 * own launches). A library call whose entry point was timed through its inner
 * operations last time records no start event of its own. stream is
 * CTPH_NO_STREAM for calls without one. Leaves errno as it found it.
 */
void ctph_call_begin_site(ctph_call *c, const void *site_ra, const void *site_cfa,
                          enum ctph_id id, int ptsz, int gpu_type, CUstream stream,
                          uint64_t gpu_name) CTPH_HIDDEN;

/*
 * Opens one entry of a call that queues work on several streams at once (the entries of
 * cuLaunchCooperativeKernelMultiDevice): a call of its own (corr, API record) at depth
 * outer->depth + 1 under `outer` (open, traced), of kernel gpu_name on `stream` of the
 * current context's device (the caller makes the entry stream's context current around
 * this call and around its ctph_call_settle), timed with its own events there when
 * `timed` (else flagged CT_API_UNTIMED), never chained (chain.c). Closed with
 * ctph_call_settle and ctph_call_emit like any call. Leaves errno.
 */
void ctph_call_begin_entry(ctph_call *c, const ctph_call *outer, CUstream stream,
                           uint64_t gpu_name, int timed) CTPH_HIDDEN;

/* ctph_call_begin from a wrapper's body: the call site is that of the function the
 * body is expanded or always-inlined into (the exported wrapper), which is where
 * __builtin_return_address(0) and __builtin_dwarf_cfa() are evaluated. */
#define ctph_call_begin(c, ...) \
  ctph_call_begin_site((c), __builtin_return_address(0), __builtin_dwarf_cfa(), __VA_ARGS__)

/*
 * First half of closing a traced call after the real function returned `result` (0 =
 * success in every layer): records the end event and queues the timing when the call
 * succeeded, takes the end time, and resolves the device and stream when the call
 * began without them. A library call in which at least one operation was timed gets
 * CT_API_INNER_TIMED and no GPU record of its own (its own events, if any, are given
 * back). The caller then writes the call's detail record with c->corr, and the API
 * record with ctph_call_emit (see CTPH_FINISH).
 */
void ctph_call_settle(ctph_call *c, uint64_t result) CTPH_HIDDEN;

/* Second half: emits the API record of a call settled by ctph_call_settle (with the
 * call site's stack) and lowers the depth. */
void ctph_call_emit(ctph_call *c, uint64_t result) CTPH_HIDDEN;

/*
 * Wraps up a call: when the call was traced, settles it, runs DETAIL (the variadic
 * part: a statement emitting the call's detail record, LAUNCH, MEMOP, GEMM,
 * GRAPH_LAUNCH, ALLOC, or a graph's inventory), emits the API record, and leaves errno
 * as the real function left it.
 *
 * The detail is written before the API record. The writer may drain the thread's
 * buffer between two records (the thread preempted there): a detail written after the
 * API record could then land behind other threads' records, and when those end more
 * than the reader's reorder window (20 ms at first) later, the tools delivered the
 * call's span without it (seen under load for ALLOC: an allocation missing from
 * report's table; the same for a launch's grid and block, a copy's bytes, a GEMM's
 * shape). A detail written first waits in the reader's table of calls until its API
 * record comes, however far apart they land. The end time is taken before the detail
 * (ctph_call_settle), so the detail's cost (a kernel's attributes at first sight, a
 * copy's pointer kinds) stays out of the call's span, as before.
 */
#define CTPH_FINISH(c, result, ...)                 \
  do {                                              \
    if ((c).traced) {                               \
      (c).saved_errno = errno;                      \
      ctph_call_settle(&(c), (uint64_t)(result));   \
      __VA_ARGS__;                                  \
      ctph_call_emit(&(c), (uint64_t)(result));     \
      errno = (c).saved_errno;                      \
    }                                               \
  } while (0)

/* ---------------------------------------------------------------- poll.c */

/* Writes the thread's open poll sequences as they stand (their last answer not ready),
 * oldest first, and closes them. Called when the thread makes any other intercepted call
 * (recording or paused), polls while tracing is paused or over, pushes or pops an NVTX
 * range (ctph_poll_break), exits, or exits the process. Leaves errno. */
void ctph_poll_flush(void) CTPH_HIDDEN;

/* After a query's real call that did not simply extend an open sequence: `slot` the
 * open sequence it continued (its answer ended it) or -1, then begin_ns is the call's
 * own; stream is the queried stream or CTPH_NO_STREAM (an event); flags CT_API_*.
 * Writes a record when the sequence ends, else opens one (writing the thread's
 * least recently polled sequence as it stands when all slots are in use). Leaves errno
 * to the caller (may change it). */
void ctph_poll_record(enum ctph_id id, int ptsz, uint32_t flags, uint64_t target, CUstream stream,
                      int slot, uint64_t begin_ns, uint64_t result, int not_ready,
                      const void *site_ra, const void *site_cfa) CTPH_HIDDEN;

/* The slot of the thread's open sequence of (id, target), or -1. When tracing has paused
 * since the thread's open sequences began (another thread's cudaProfilerStop, say, between
 * two of its polls), they are written as they stand first (ending at their last poll, before
 * the pause) and -1 is returned: no spin straddles a pause. */
static inline int ctph_poll_slot(struct ctph_thread *t, enum ctph_id id, uint64_t target) {
  if (CTP_UNLIKELY(t->poll_epoch != __atomic_load_n(&ctp_pause_epoch, __ATOMIC_RELAXED))) {
    ctph_poll_flush();
    return -1;
  }
  uint32_t key = (uint32_t)id + 1;
  for (int i = 0; i < CTPH_POLL_SLOTS; i++)
    if (__atomic_load_n(&t->poll_key[i], __ATOMIC_RELAXED) == key && t->poll_target[i] == target)
      return i;
  return -1;
}

/* A not-ready poll that ended at end_ns continues the thread's open spin in slot i: one
 * more poll, ending then. Written under the slot's sequence lock (plain stores on x86),
 * so that the final flush, run by another thread at process exit, copies the spin whole. */
static inline void ctph_poll_extend(struct ctph_thread *t, int i, uint64_t end_ns) {
  uint32_t change = __atomic_load_n(&t->poll_change[i], __ATOMIC_RELAXED);
  __atomic_store_n(&t->poll_change[i], change + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  __atomic_store_n(&t->poll[i].polls, __atomic_load_n(&t->poll[i].polls, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
  __atomic_store_n(&t->poll[i].end_ns, end_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&t->poll_change[i], change + 2, __ATOMIC_RELEASE);
}

/* A poll of the thread's open spin ended at end_ns, at or after the end of the recording
 * (CUTRACE_DURATION): the poll is not counted, the thread's open spins are written as they
 * stood at their last poll, and the pause begins. Leaves errno. */
void ctph_poll_late(void) CTPH_HIDDEN;

/*
 * The body of a query wrapper (cudaEventQuery, cuStreamQuery, ...): forwards when
 * UNTRACED holds; else one poll, coalesced with the thread's open sequence of polls of
 * the same target through the same entry point while they answer NOT_READY (up to
 * CTPH_POLL_SLOTS targets polled in turn each have theirs). A poll that continues a
 * sequence and is still not ready costs a look at the slots' keys, one clock read, a
 * compare with the end of the recording (CUTRACE_DURATION: a poll ending after it is not
 * counted, the spin ends at its last poll before it) and four stores (ctph_poll_extend). UNTRACED must mean that tracing is paused or off (!ctph_on()): the thread's
 * open spins are then written as they stand (a call that passes untraced for another
 * reason, the runtime's own driver query, must be forwarded before this body).
 * Never changes the result or errno. TYPE_: the result type; CALL: the real call.
 */
#define CTPH_POLL_BODY(TYPE_, ID_, PTSZ_, FLAGS_, TARGET_, STREAM_, UNTRACED, CALL, NOT_READY)      \
  if (UNTRACED) {                                                                            \
    if (CTP_UNLIKELY(ctph_tls.polls_open))                                                   \
      ctph_poll_flush(); /* tracing paused or over: the spins open stop at their last poll */ \
    return CALL;                                                                             \
  }                                                                                          \
  int saved_ = errno;                                                                        \
  struct ctph_thread *t_ = &ctph_tls;                                                        \
  int slot_ = t_->polls_open ? ctph_poll_slot(t_, (ID_), (uint64_t)(TARGET_)) : -1;           \
  uint64_t begin_ = 0;                                                                       \
  if (slot_ < 0)                                                                             \
    begin_ = ctp_now_ns();                                                                   \
  errno = saved_;                                                                            \
  TYPE_ r_ = CALL;                                                                            \
  saved_ = errno;                                                                            \
  if (CTP_LIKELY(slot_ >= 0 && r_ == (NOT_READY))) {                                         \
    uint64_t end_ = ctp_now_ns();                                                            \
    if (CTP_LIKELY(end_ < __atomic_load_n(&ctp_stop_at_ns, __ATOMIC_RELAXED)))               \
      ctph_poll_extend(t_, slot_, end_);                                                     \
    else                                                                                     \
      ctph_poll_late(); /* CUTRACE_DURATION over: its spins end at their last poll */        \
  } else {                                                                                   \
    ctph_poll_record((ID_), (PTSZ_), (FLAGS_), (uint64_t)(TARGET_), (CUstream)(STREAM_), slot_, begin_, \
                     (uint64_t)r_, r_ == (NOT_READY), __builtin_return_address(0),           \
                     __builtin_dwarf_cfa());                                                 \
  }                                                                                          \
  errno = saved_;                                                                            \
  return r_

/* ------------------------------------------------- graph_walk.c (preload/driver/) */

/* The per-process id of a graph exec handle (1, 2, ...), given at its first sight:
 * instantiation, or a launch of an exec instantiated before tracing began (which
 * then has no inventory). 0 for NULL or when memory runs out. */
uint64_t ctph_graph_exec_id(CUgraphExec exec) CTPH_HIDDEN;

/* The id exec has now, without giving it one: 0 for NULL, an exec never seen or one
 * destroyed. What ctph_graph_forget is given, read before the destroy call. */
uint64_t ctph_graph_exec_known_id(CUgraphExec exec) CTPH_HIDDEN;

/* After a successful instantiation (fresh = 1: the exec gets a new id) or exec
 * update (fresh = 0: same id) by the call `corr`: walks `graph` with the tracer's
 * own driver calls and writes its GRAPH and GRAPH_KERNEL records. Leaves errno. */
void ctph_graph_inventory(uint64_t corr, CUgraphExec exec, CUgraph graph, int fresh) CTPH_HIDDEN;

/* After a successful in-place edit of exec's kernel node `node` (cuGraphExecKernelNode-
 * SetParams, cuGraphExecNodeSetParams, the runtime's forms through them) by the call
 * `corr` (0: none traced): when the node now runs another function than the exec's
 * kept inventory says, writes the exec's whole inventory again (same exec id), with
 * the node's new function, block_threads and dyn_smem. Nothing when the exec or node
 * is unknown (instantiated before tracing). Leaves errno. */
void ctph_graph_edit_kernel(uint64_t corr, CUgraphExec exec, CUgraphNode node, CUfunction f,
                            uint64_t block_threads, uint64_t dyn_smem) CTPH_HIDDEN;

/* After a successful cuGraphExecChildGraphNodeSetParams (or the runtime's form through
 * it) by the call `corr`: the kernels of child graph node `node` of exec are now those of
 * `child` (walked with the tracer's own driver calls; CUDA requires the same topology
 * and node order); when a kernel node now runs another function, writes the exec's
 * inventory again (next version). Nothing when the exec or node is unknown, the walk
 * fails or the kernel counts differ. Leaves errno. */
void ctph_graph_edit_child(uint64_t corr, CUgraphExec exec, CUgraphNode node, CUgraph child)
    CTPH_HIDDEN;

/* The GRAPH_LAUNCH detail record of a graph launch: its exec and that exec's current
 * inventory version. */
void ctph_graph_emit_launch(uint64_t corr, CUgraphExec exec) CTPH_HIDDEN;

/* After exec was destroyed (cuGraphExecDestroy, cudaGraphExecDestroy answered success):
 * frees the kernel nodes kept for its edits and clears its id, provided its id is still
 * `id` (ctph_graph_exec_known_id before the call): once the destroy returned, another
 * thread may have instantiated a new exec at the same address, whose new id and
 * inventory are left alone. A destroy that failed forgets nothing (the exec lives on).
 * Leaves errno. */
void ctph_graph_forget(CUgraphExec exec, uint64_t id) CTPH_HIDDEN;

/* Sets the corr of the runtime edit call open on this thread (0: none) and returns the
 * one it replaces: the driver's edit wrapper, reached from libcudart, gives the
 * inventory it writes that corr. */
uint64_t ctph_graph_edit_corr_swap(uint64_t corr) CTPH_HIDDEN;

/* ---------------------------------------------- kernel_attrs.c (preload/driver/) */

/* The last launch shape of this thread and its KERNEL_ATTR id: a launch loop's
 * repeated launch is answered by two compares (ctph_launch_attr). */
struct ctph_last_shape {
  const void *handle;
  uint64_t name; /* the kernel's string id (a stub registered again names another) */
  uint64_t key;  /* ctph_shape_key; 0 never matches a launch */
  uint64_t attr;
};
extern __thread struct ctph_last_shape ctph_last_shape CTPH_HIDDEN;

/* threads per block, dynamic shared memory, device and the launch's layer in one word
 * (0 when they do not fit: never cached). */
static inline uint64_t ctph_shape_key(unsigned threads, size_t dyn_smem, int device, int runtime) {
  if (threads > 2047 || (unsigned)device > 255 || dyn_smem >> 43)
    return 0;
  return 1 | (uint64_t)runtime << 1 | (uint64_t)threads << 2 | (uint64_t)device << 13 |
         (uint64_t)dyn_smem << 21;
}

/* The lookup behind ctph_launch_attr when the last shape does not match. */
uint64_t ctph_launch_attr_slow(const void *handle, int runtime, uint64_t name, unsigned threads,
                               size_t dyn_smem, int device, uint64_t key) CTPH_HIDDEN;

/* The KERNEL_ATTR id (format 1.6) of the function `handle` that a launch has just run
 * (runtime = 0: a CUfunction or CUkernel of a driver launch; 1: a host stub or
 * cudaKernel_t of a runtime launch, asked of the runtime only when no error is
 * pending) with block_threads threads per block and dyn_smem bytes of dynamic shared
 * memory on `device`; on the first sight of the function (and of the shape) writes its
 * KERNEL_ATTR (and OCCUPANCY) record first. 0 when unknown. Leaves errno and the
 * runtime's last error as they were. */
static inline uint64_t ctph_launch_attr(const void *handle, int runtime, uint64_t name,
                                        unsigned block_threads, size_t dyn_smem, int device) {
  uint64_t key = ctph_shape_key(block_threads, dyn_smem, device < 0 ? 0 : device, runtime);
  if (CTP_LIKELY(handle == ctph_last_shape.handle && key == ctph_last_shape.key && key &&
                 name == ctph_last_shape.name))
    return ctph_last_shape.attr;
  return ctph_launch_attr_slow(handle, runtime, name, block_threads, dyn_smem, device, key);
}

/* ------------------------------------------------- wrap_alloc.c (preload/driver/) */

/* The ALLOC detail record of the successful allocation or release call corr (format
 * 1.5): ptr, bytes asked for (0 for a release), CT_ALLOC_* kind. Nothing for ptr 0. */
void ctph_emit_alloc(uint64_t corr, const void *ptr, uint64_t bytes, int kind,
                     int release) CTPH_HIDDEN;

/* ------------------------------------------------------------ alloc_array.c */

/* Bytes per element of a driver array format (CUarray_format) with `channels` channels:
 * the format's size x channels, a packed format's size; 0 for block-compressed and
 * YUV formats (not known). */
uint64_t ctph_array_format_bytes(unsigned format, unsigned channels) CTPH_HIDDEN;

/* The bytes a CUDA array asks for (ALLOC kind array, format 1.10): width x height x
 * depth elements of `element` bytes (height, depth 0 count as 1), summed over `levels`
 * mipmap levels (0 or 1: a plain array; layered and cubemap arrays keep their depth);
 * 0 for a sparse or deferred-mapping array, or an unknown element size. */
uint64_t ctph_array_bytes(uint64_t element, uint64_t width, uint64_t height, uint64_t depth,
                          unsigned flags, unsigned levels) CTPH_HIDDEN;

/* --------------------------------------------------------------- names.c */

/* The string id of the kernel behind a host stub or cudaKernel_t (0 if unknown). */
uint64_t ctph_kernel_name_id(const void *func) CTPH_HIDDEN;

/* ------------------------------------------------------------- streams.c */

/* The device of the calling thread's current context, or -1 (no context or no
 * driver). Emits the DEVICE record the first time a device is seen. */
int ctph_current_device(CUcontext *ctx_out) CTPH_HIDDEN;

struct ctph_pending;

/* What the hooks keep per stream (allocated once, never moves). */
struct ctph_stream_state {
  uint64_t owner_tid;  /* event chaining: the one thread using it, or CTPH_SHARED */
  uint32_t seq;        /* bumped by barriers (waits, capture begin/end) */
  uint32_t chainable;  /* an app-created non-blocking stream */
  CUcontext ctx;       /* an app-created stream's context (cuStreamGetCtx at first use) */
  uint64_t ctx_tag;    /* ctph_context_tag of ctx then: 0 a primary (or unknown) one */
};
#define CTPH_SHARED (~0ull)

/* The small id of (device, handle) seen by a call; per_thread: the handle is the
 * calling thread's per-thread default stream. Emits the STREAM record at first use.
 * *state (if state is not NULL) gets the stream's state, or NULL. */
uint32_t ctph_stream_id(int device, CUstream handle, int per_thread,
                        struct ctph_stream_state **state) CTPH_HIDDEN;

/* Notes work on the stream that the tracer does not see the end of (a wait on an
 * event, capture begin/end): event chaining restarts there. */
void ctph_stream_barrier(CUstream handle, int per_thread) CTPH_HIDDEN;

/* Number of captures begun through the runtime and not yet ended. */
extern int ctph_captures_active CTPH_HIDDEN;

/* Notes a capture begun / ended on a stream (after the real call succeeded). */
void ctph_capture_begun(CUstream handle, int per_thread) CTPH_HIDDEN;
void ctph_capture_ended(CUstream handle, int per_thread) CTPH_HIDDEN;

/* 1 when the stream (a handle as the driver takes it: CU_STREAM_PER_THREAD for a
 * per-thread default stream) is or may be capturing, 0 when it is known not to be. */
int ctph_stream_capturing(CUstream handle) CTPH_HIDDEN;

/* The device's primary context as seen by some app thread (NULL when unknown; never a
 * green context's). */
CUcontext ctph_device_context(int device) CTPH_HIDDEN;

/* ------------------------------------------------------------ contexts.c */

/* Bumped when a context is created or destroyed: a thread's cached answers for its
 * current context (ctph_current_device) older than this are looked up again. */
extern uint32_t ctph_context_generation CTPH_HIDDEN;

/* The tag of a context that has NULL and per-thread default streams of its own, apart
 * from its device's primary context's: serial << 1 (a created context) or serial << 1
 * | 1 (a green context's converted context), the serial never reused in the process;
 * 0 for a primary context (or one never seen created or converted). Lock-free. */
uint64_t ctph_context_tag(CUcontext ctx) CTPH_HIDDEN;

/* After cuCtxCreate made ctx: a new context, with a new tag (also when the address
 * served a destroyed context before). Leaves errno. */
void ctph_context_created(CUcontext ctx) CTPH_HIDDEN;

/* After cuCtxDestroy destroyed ctx, whose tag was `tag` before the call: forgotten
 * (unless the address already serves a newer context). Leaves errno. */
void ctph_context_destroyed(CUcontext ctx, uint64_t tag) CTPH_HIDDEN;

/* After cuCtxFromGreenCtx gave ctx for green: ctx has a NULL stream of its own (work on
 * the NULL stream while ctx is current gets its own stream id). Leaves errno. */
void ctph_green_context_seen(CUgreenCtx green, CUcontext ctx) CTPH_HIDDEN;

/* After green was destroyed: its converted context is forgotten. Leaves errno. */
void ctph_green_context_destroyed(CUgreenCtx green) CTPH_HIDDEN;

/* Memory type (CT_MEM_*) of a pointer, from the driver's pointer attributes. */
int ctph_memory_type(const void *ptr) CTPH_HIDDEN;

/* CT_MEMOP_* direction of a copy from the memory types (CT_MEM_*) of its two sides. */
static inline int ctph_copy_direction(int src_mem, int dst_mem) {
  int src_dev = src_mem == CT_MEM_DEVICE || src_mem == CT_MEM_MANAGED;
  int dst_dev = dst_mem == CT_MEM_DEVICE || dst_mem == CT_MEM_MANAGED;
  return src_dev ? (dst_dev ? CT_MEMOP_D2D : CT_MEMOP_D2H) : (dst_dev ? CT_MEMOP_H2D : CT_MEMOP_H2H);
}

/* The body of the runtime's set, batch-copy and prefetch wrappers (memops*.c):
 * forward, and when tracing, a span (gpu_type timed on stream), AFTER once the real
 * call returned (r, c.timing known; before the span closes), DETAIL (c.corr, r). */
#define CTPH_MEMOP_BODY_AFTER(sym, ptsz, stream, gpu_type, call_args, AFTER, DETAIL)   \
  __typeof__(&sym) real = CTPH_REAL(sym);                                              \
  if (!real)                                                                           \
    return cudaErrorSharedObjectSymbolNotFound;                                        \
  if (CTP_UNLIKELY(!ctph_on()))                                                        \
    return real call_args;                                                             \
  ctph_call c;                                                                         \
  ctph_call_begin(&c, CTPH_ID_##sym, ptsz, gpu_type, (CUstream)(stream), 0);           \
  cudaError_t r = real call_args;                                                      \
  if (c.traced) {                                                                      \
    AFTER;                                                                             \
  }                                                                                    \
  CTPH_FINISH(c, r, DETAIL);                                                           \
  return r

/* CTPH_MEMOP_BODY_AFTER with nothing after the call. */
#define CTPH_MEMOP_BODY(sym, ptsz, stream, gpu_type, call_args, DETAIL) \
  CTPH_MEMOP_BODY_AFTER(sym, ptsz, stream, gpu_type, call_args, (void)0, DETAIL)

/* ------------------------------------------------------ memops_batch.c */

/* The MEMOP record of a batch of `count` copies (cuMemcpyBatchAsync and the runtime's
 * cudaMemcpyBatchAsync; addresses as 64-bit words): total bytes, the direction and
 * memory types the copies share (CT_MEMOP_MIXED / CT_MEM_UNKNOWN where they differ;
 * two pointer-attribute queries per copy), count. ok = 0 (the call failed: the
 * arrays may be invalid) reads none of the arrays: bytes 0, kind 0. */
void ctph_emit_copy_batch(uint64_t corr, int ok, const uint64_t *dsts, const uint64_t *srcs,
                          const size_t *sizes, size_t count) CTPH_HIDDEN;

/* Bytes per element of a CUDA array (a CUarray, or the runtime's cudaArray_t, which is
 * the same handle), from the driver's descriptor (one cuArray3DGetDescriptor_v2 call,
 * the tracer's own): component size x channels for the integer, half, float and
 * normalised formats; 1 for the others (block-compressed, YUV) and when the query
 * fails, so that an extent in elements is counted as bytes. */
uint64_t ctph_array_element_size(const void *array) CTPH_HIDDEN;

/* The MEMOP record of a batch of `count` 3-D copies (cuMemcpy3DBatchAsync and the
 * runtime's cudaMemcpy3DBatchAsync, whose operations have the same layout), as
 * ctph_emit_copy_batch: bytes the extents' elements times their element size (1
 * between pointers; an array operand's, ctph_array_element_size), an array operand
 * device memory. */
void ctph_emit_copy3d_batch(uint64_t corr, int ok, const CUDA_MEMCPY3D_BATCH_OP *ops,
                            size_t count) CTPH_HIDDEN;

/* The MEMOP record of a prefetch of `bytes` bytes of managed memory (CT_MEMOP_PREFETCH;
 * count: ranges of a batch call, 0 for a single prefetch; value: 1 + the destination
 * device ordinal, 0 for the host). */
void ctph_emit_prefetch(uint64_t corr, uint64_t bytes, uint64_t count, uint64_t value) CTPH_HIDDEN;

/* The MEMOP record of a batch of `count` discards of managed memory, `bytes` in all
 * (CT_MEMOP_DISCARD, format 1.8). */
void ctph_emit_discard(uint64_t corr, uint64_t bytes, uint64_t count) CTPH_HIDDEN;

/* The MEMOP record of a batch of `count` stream memory operations (cuStreamBatchMemOp,
 * CT_MEMOP_STREAM_OPS, format 1.9): value the wait operations among them, bytes what
 * its write operations write (4 or 8 each). ok = 0 (the call failed: the array may be
 * invalid, and nothing was queued) reads none of it: value and bytes 0. */
void ctph_emit_stream_ops(uint64_t corr, int ok, const CUstreamBatchMemOpParams *ops,
                          unsigned count) CTPH_HIDDEN;

/* The MEMOP record of an external semaphore signal or wait of `count` semaphores (kind
 * CT_MEMOP_EXT_SIGNAL or CT_MEMOP_EXT_WAIT, format 1.10; extsem.c): value the first
 * semaphore's fence value, its keyed-mutex key when that is 0; 0 when !ok (the call
 * failed: its parameters are not read). */
void ctph_emit_ext_sem(uint64_t corr, int kind, int ok, unsigned count, uint64_t fence,
                       uint64_t key) CTPH_HIDDEN;

/* The sum of sizes[0..count) when ok (the call succeeded), else 0. */
uint64_t ctph_batch_bytes(int ok, const size_t *sizes, size_t count) CTPH_HIDDEN;

/* 1 when a copy's call returns before the copy is done (its return then bounds the
 * copy's start): a device-to-device or peer copy in any form, or an Async form with
 * no pageable side. Other copies return only once done (CUDA's "API synchronization
 * behavior"; a pageable host-to-device Async copy may return after staging, counted
 * as done: no bound, as before). dir: CT_MEMOP_*; src_mem, dst_mem: CT_MEM_*. */
static inline int ctph_copy_returns_early(int dir, int src_mem, int dst_mem, int async) {
  if (dir == CT_MEMOP_D2D || dir == CT_MEMOP_P2P)
    return 1;
  return async && src_mem != CT_MEM_PAGEABLE && dst_mem != CT_MEM_PAGEABLE;
}

/* --------------------------------------------------------------- chain.c */

/* CUTRACE_EVENT_CHAIN=1: an operation queued behind a still-running operation of
 * the same thread on the same non-blocking stream starts at that operation's end
 * event; no start event of its own is recorded. */
extern int ctph_chain_on CTPH_HIDDEN;

/* Before the start event: 1 when c can start from the previous operation's end
 * (c->ev_start is then that event and c->chained is set). */
int ctph_chain_start(ctph_call *c) CTPH_HIDDEN;

/* Fills p's chaining fields (keep_end, release) before it is queued. */
void ctph_chain_prepare(const ctph_call *c, struct ctph_pending *p) CTPH_HIDDEN;

/* After the queue took p: the thread now holds p->end for the next operation. */
void ctph_chain_commit(const ctph_call *c, const struct ctph_pending *p) CTPH_HIDDEN;

/* The call queued GPU work outside the chain (untimed): the next one starts anew. */
void ctph_chain_break(void) CTPH_HIDDEN;

/* A wait that holds every stream of a context (cuCtxWaitEvent, cuGreenCtxWaitEvent):
 * every thread's chain restarts at its next operation. */
void ctph_barrier_all(void) CTPH_HIDDEN;

/* ------------------------------------------------------------- gputime.c */

#define CTPH_MAX_DEVICES 16

/* A timed operation waiting for its events. */
struct ctph_pending {
  uint64_t corr, begin_ns, name;
  uint64_t submitted_ns; /* host time the real call returned; 0 = no bound (a copy done by then) */
  uint32_t device, stream, type;
  uint8_t start_shared;  /* start is the previous operation's end (event chaining) */
  uint8_t keep_end;      /* end stays with the launching thread: not recycled here */
  uint16_t release_device;
  CUevent start, end;
  CUevent release;       /* an event the launching thread no longer needs, or NULL */
};

/* Takes an event of `device` from the pool (creating more in ctx when empty).
 * Returns NULL when none can be had. */
CUevent ctph_event_get(int device) CTPH_HIDDEN;

/* Returns an unused (or no longer needed) event to the pool of `device`. */
void ctph_event_put(int device, CUevent ev) CTPH_HIDDEN;

/* Forgets the pooled events of `device` (its context is being reset). */
void ctph_event_pool_reset(int device) CTPH_HIDDEN;

/* In a fork child (one thread): the event pools' and pending rings' locks, which
 * the parent's poller thread may have held at the fork, made free again. */
void ctph_gputime_reinit_locks(void) CTPH_HIDDEN;

/* 1 when no thread has a timed operation waiting. */
int ctph_pending_empty(void) CTPH_HIDDEN;

/* In a fork child (only the forking thread left): empties every queue without
 * touching its events. The operations are the parent's, timed by the parent's
 * poller; the child may not use the parent's CUDA context. */
void ctph_pending_forget(void) CTPH_HIDDEN;

/* Queues a timed operation for the poller. Returns 0, or -1 when the calling
 * thread's queue is full (the caller then gives the events back). */
int ctph_pending_push(const struct ctph_pending *p) CTPH_HIDDEN;

/* Starts the poller thread once. */
void ctph_poller_ensure(void) CTPH_HIDDEN;

/* 1 while GPU timing is possible (not after fork, not after the final drain). */
extern int ctph_gpu_timing_on CTPH_HIDDEN;

/* Calls fn on every queued operation of every thread, oldest first per thread,
 * while fn returns 1; used by the poller (single consumer). Returns how many
 * operations fn consumed. */
unsigned ctph_pending_consume(int (*fn)(struct ctph_pending *p, void *arg), void *arg)
    CTPH_HIDDEN;

/* Makes the poller start a new clock timeline for `device` (it is being reset). */
void ctph_clock_forget(int device) CTPH_HIDDEN;

/* Waits for and converts every queued timing. final: at exit, stops the poller and
 * does the work itself (cuEventSynchronize), then turns GPU timing off; otherwise
 * (device reset, module teardown) waits up to 5 s for the poller to empty the
 * queues. Timings that cannot be had any more are counted (TRACER "gpu_lost"). */
void ctph_gpu_drain(int final) CTPH_HIDDEN;

#endif
