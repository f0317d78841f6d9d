/*
 * cutrace trace format: the one definition of every record, shared by the
 * preload (writer) and the tools (readers). See docs/format.md for the spec.
 *
 * A trace file is: a fixed header, a schema block (which record kinds exist and
 * how each field is encoded), then a sequence of independent zstd frames. Each
 * frame decompresses to one "chunk": a run of encoded records whose delta state
 * starts from zero, so every whole frame can be decoded on its own.
 *
 * Every record is a kind byte followed by its fields, each a LEB128 varint of a
 * zigzag-encoded difference:
 *   D  difference from the same field of the previous record of the same kind
 *      in this chunk (0 for the first), so repeated values cost one byte;
 *   P  difference from the previous field of the same record (end after begin).
 * STRING records are special: id (D), length (D of 0 = plain), then raw bytes.
 *
 * All fields are uint64_t in memory. Times are host CLOCK_MONOTONIC nanoseconds.
 * String-valued fields hold a string id (0 = none) defined by an earlier STRING
 * record of the same file.
 *
 * Compatibility: a reader decodes with the schema stored in the file, so a newer
 * minor version that appends fields or kinds stays readable (unknown kinds are
 * skipped, unknown trailing fields ignored). A new major version is refused.
 */
#ifndef CUTRACE_FORMAT_H
#define CUTRACE_FORMAT_H

#include <stdint.h>

#define CT_FILE_MAGIC "CUTRACE\x01"  /* 8 bytes */
#define CT_FORMAT_MAJOR 1
#define CT_FORMAT_MINOR 14 /* 1.1: STACK, MODULE, api.stack, api.parent;
                             1.2: GRAPH, GRAPH_KERNEL, GRAPH_LAUNCH;
                             1.3: PAUSE, PYCODE, Python frames in STACK;
                             1.4: JOB, device.pci_bus_id, device.uuid;
                             1.5: ALLOC;
                             1.6: KERNEL_ATTR, OCCUPANCY, launch.attr, device SM limits
                                  and CUDA versions,
                                  graph_kernel attr and shape;
                             1.7: MEMOP kinds prefetch and mixed, memop.count;
                             1.8: MEMOP kind discard;
                             1.9: MEMOP kind stream_ops;
                             1.10: ALLOC kind array, MEMOP kinds ext_wait and ext_signal;
                             1.11: MEMOP kind decompress;
                             1.12: POLL (coalesced event/stream queries);
                             1.13: graph, graph_kernel and graph_launch version;
                             1.14: STREAM flag green (a green context's NULL stream) */
#define CT_MAX_FIELDS 16          /* most fields any record kind may have */
#define CT_MAX_KINDS 64           /* kind ids are < this */
#define CT_MAX_CHUNK_BYTES (16u << 20) /* readers reject larger chunks as corrupt */
#define CT_MAX_STRING_BYTES (1u << 20)

/* Field encodings. */
#define CT_ENC_D 1
#define CT_ENC_P 2

/*
 * The record kinds: X(NAME, id, lowercase_name). Ids are stable forever; append only.
 */
#define CT_RECORD_KINDS(X)                                                      \
  X(STRING, 1, string)       /* interned string: see ct_string */               \
  X(PROCESS, 2, process)     /* once per file, first after strings it uses */   \
  X(DEVICE, 3, device)       /* one per visible device */                       \
  X(THREAD, 4, thread)       /* first record of each thread that records */    \
  X(STREAM, 5, stream)       /* first use of a stream */                        \
  X(API, 6, api)             /* CPU span of one intercepted call */             \
  X(LAUNCH, 7, launch)       /* arguments of a kernel launch (by corr) */       \
  X(MEMOP, 8, memop)         /* a copy, set, prefetch, discard or memory-op batch */ \
  X(GEMM, 9, gemm)           /* arguments of a cuBLAS GEMM (by corr) */         \
  X(GPU, 10, gpu)            /* one GPU activity, timed on the GPU */           \
  X(DROP, 11, drop)          /* records lost, counted */                        \
  X(TRACER, 12, tracer)      /* the tracer's own work (flush, poll, ...) */     \
  X(CLOCK, 13, clock)        /* a GPU-to-host clock anchor */                   \
  X(RANGE, 14, range)        /* an NVTX range, closed */                        \
  X(MARK, 15, mark)          /* an NVTX mark */                                 \
  X(END, 16, end)            /* clean end of the trace */                       \
  X(STACK, 17, stack)        /* one node of the call-stack tree (1.1) */       \
  X(MODULE, 18, module)      /* a loaded ELF object, for offline symbols (1.1) */ \
  X(GRAPH, 19, graph)        /* a graph instantiation's inventory (1.2) */      \
  X(GRAPH_KERNEL, 20, graph_kernel) /* one kernel name of an inventory (1.2) */ \
  X(GRAPH_LAUNCH, 21, graph_launch) /* the exec a graph launch ran (1.2) */ \
  X(PAUSE, 24, pause)        /* a time the tracer did not record (1.3) */   \
  X(PYCODE, 22, pycode)      /* a Python code object of Python frames (1.3) */ \
  X(JOB, 25, job)            /* the process's rank in a distributed job (1.4) */ \
  X(ALLOC, 26, alloc)        /* an allocation or release call's detail (1.5) */ \
  X(KERNEL_ATTR, 27, kernel_attr) /* a launched function's attributes (1.6) */ \
  X(OCCUPANCY, 28, occupancy) /* resident blocks per SM of one launch shape (1.6) */ \
  X(POLL, 29, poll)          /* the polls one query record stands for (1.12) */

/* Fields of each kind: F(name, encoding). Append only. */
#define CT_FIELDS_string(F) F(id, D) F(len, D)
#define CT_FIELDS_process(F)                                                    \
  F(pid, D) F(ppid, D) F(start_ns, D) F(realtime_ns, D) F(host, D)              \
  F(cmdline, D) /* string: the arguments separated by NUL bytes */              \
  F(exe, D) F(driver_version, D) F(runtime_version, D) F(tracer_version, D)
#define CT_FIELDS_device(F)                                                     \
  F(device, D) F(name, D) F(cc_major, D) F(cc_minor, D) F(sm_count, D)          \
  F(mem_bytes, D)                                                               \
  F(pci_bus_id, D) /* 1.4: string "0000:3b:00.0" (0 = unknown) */               \
  F(uuid, D)       /* 1.4: string "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */   \
  F(max_threads_per_sm, D) F(warp_size, D) F(regs_per_sm, D)                    \
  F(smem_per_sm, D) F(max_blocks_per_sm, D) /* 1.6: SM limits, 0 = unknown */ \
  F(driver_version, D) F(runtime_version, D) /* 1.6: CUDA versions, 13000 = 13.0 */
#define CT_FIELDS_poll(F) F(corr, D) F(polls, D) /* 1.12: polls coalesced into the call */
#define CT_FIELDS_thread(F) F(tid, D) F(name, D) F(start_ns, D)
#define CT_FIELDS_stream(F)                                                     \
  F(stream, D)     /* small id used by every other record; 0 = legacy default */ \
  F(handle, D)     /* the CUstream value */                                     \
  F(device, D) F(flags, D) /* CT_STREAM_* */                                    \
  F(owner_tid, D)  /* for a per-thread default stream: its thread */            \
  F(priority, D)
#define CT_FIELDS_api(F)                                                        \
  F(tid, D) F(name, D) /* string: the entry point, e.g. "cudaMemcpyAsync" */    \
  F(begin_ns, D) F(end_ns, P) F(corr, D) F(device, D) F(stream, D)              \
  F(result, D)     /* the call's return code (CUresult/cudaError_t/status) */   \
  F(depth, D)      /* 0 = outermost intercepted call on this thread */          \
  F(flags, D)      /* CT_API_* */                                               \
  F(stack, D)      /* 1.1: STACK node id of the call site (0 = not captured) */ \
  F(parent, D)     /* 1.1: corr of the outermost call enclosing it (depth > 0) */
#define CT_FIELDS_launch(F)                                                     \
  F(corr, D) F(kernel, D) /* string: mangled name */                            \
  F(grid_x, D) F(grid_y, D) F(grid_z, D) F(block_x, D) F(block_y, D)            \
  F(block_z, D) F(shmem, D)                                                     \
  F(attr, D) /* 1.6: the KERNEL_ATTR id of the launched function (0 = unknown) */
#define CT_FIELDS_memop(F)                                                      \
  F(corr, D) F(bytes, D) F(kind, D) /* CT_MEMOP_* */                            \
  F(src_mem, D) F(dst_mem, D) /* CT_MEM_* */ F(async, D) F(value, D)           \
  F(count, D) /* 1.7: copies or ranges of a batch call (0 = one operation) */
#define CT_FIELDS_gemm(F)                                                       \
  F(corr, D) F(m, D) F(n, D) F(k, D) F(batch, D) F(transa, D) F(transb, D)      \
  F(atype, D) F(btype, D) F(ctype, D) /* cudaDataType values */                 \
  F(compute_type, D) /* cublasComputeType_t (or the legacy data type) */         \
  F(epilogue, D)     /* cublasLtEpilogue_t, 0 for the cublas API */
#define CT_FIELDS_gpu(F)                                                        \
  F(corr, D) F(device, D) F(stream, D) F(start_ns, D) F(end_ns, P)              \
  F(type, D) /* CT_GPU_* */ F(name, D) /* string: kernel name, or 0 */
#define CT_FIELDS_drop(F) F(tid, D) F(count, D) F(first_ns, D) F(last_ns, D)
#define CT_FIELDS_tracer(F)                                                     \
  F(tid, D) F(what, D) /* string: "flush", "poll", "anchor", ... */             \
  F(begin_ns, D) F(end_ns, P) F(amount, D) /* bytes, events, ... */
#define CT_FIELDS_clock(F)                                                      \
  F(device, D) F(host_ns, D) F(offset_ns, D) /* int64: gpu - host */            \
  F(error_ns, D) /* half the width of the anchoring window */
#define CT_FIELDS_range(F)                                                      \
  F(tid, D) F(domain, D) F(name, D) F(begin_ns, D) F(end_ns, P) F(depth, D)     \
  F(flags, D)
#define CT_FIELDS_mark(F) F(tid, D) F(domain, D) F(name, D) F(ts_ns, D)
#define CT_FIELDS_end(F) F(records, D) F(drops, D) F(end_ns, D)
/* A call stack is a path in a tree of nodes, written once each: node `id` is the
 * frame at address `pc` (a return address, or the call site itself for the
 * innermost frame) called from node `parent` (0 = the outermost frame kept).
 * Ids are process-wide, 1, 2, 3, ... An API record names its innermost node. */
#define CT_FIELDS_stack(F) F(id, D) F(parent, D) F(pc, D)
/* An ELF object mapped in the process: addresses in [start, end) belong to it;
 * its file offset-free address is pc - bias (the dl_iterate_phdr load bias). */
#define CT_FIELDS_module(F)                                                     \
  F(path, D)      /* string: the file as loaded ("" main program: see exe) */   \
  F(bias, D) F(start, D) F(end, D)                                              \
  F(build_id, D)  /* string: hex GNU build-id, or 0 */                          \
  F(seen_ns, D)   /* when the tracer first saw it mapped */
/* What a graph instantiation (or exec update) holds, walked from its source graph:
 * `exec` is the per-process id of the exec handle (1, 2, 3, ...; the id its
 * GRAPH_LAUNCH records use). Child graphs are walked into; a child graph node
 * itself is not counted. nodes = kernels + memcpys + memsets + others. */
#define CT_FIELDS_graph(F)                                                      \
  F(corr, D)      /* the instantiate (or update) call's corr */                 \
  F(exec, D) F(nodes, D) F(kernels, D) F(memcpys, D) F(memsets, D)              \
  F(others, D)    /* host, event, wait, empty, memory, conditional ... nodes */ \
  F(partial, D)   /* CT_GRAPH_PARTIAL_*: 0 = the whole graph was walked */      \
  F(version, D)   /* 1.13: the exec's inventory version (1, 2, ...; 0 = older file) */
/* One distinct kernel of an inventory: `count` kernel nodes named `name`
 * (string id, 0 = unknown), written right after its GRAPH record. Since 1.6 the first
 * such node's function (`attr`, a KERNEL_ATTR id, 0 = unknown: its KERNEL_ATTR and
 * OCCUPANCY records precede the GRAPH record), device and launch shape. */
#define CT_FIELDS_graph_kernel(F)                                               \
  F(exec, D) F(name, D) F(count, D)                                             \
  F(attr, D) F(device, D) F(block_threads, D) F(dyn_smem, D) /* 1.6 */         \
  F(version, D) /* 1.13: the version of the GRAPH record it belongs to */
/* A graph launch's detail record (same corr as its API record): the exec it ran
 * (0 = unknown) and, since 1.13, the version of that exec's inventory current when
 * the launch was made (0 = none known, or an older file: the exec's latest). */
#define CT_FIELDS_graph_launch(F) F(corr, D) F(exec, D) F(version, D)
/* An interval during which the tracer recorded nothing of the program (1.3): before
 * CUTRACE_DELAY, outside cudaProfilerStart/Stop under CUTRACE_CAPTURE=profiler, after
 * CUTRACE_DURATION. Written by the writer when the pause begins (end_ns = 0: still
 * paused) and again, complete, when it ends; a pause still open at the END record
 * lasts to the end of the trace. Every record emitted after a pause began follows
 * its PAUSE record in the file. `why` is a string: "delay", "profiler", "nvtx", "duration". */
#define CT_FIELDS_pause(F) F(begin_ns, D) F(end_ns, P) F(why, D)
/* A Python code object (a function, class body or module) that Python frames of
 * STACK nodes name (1.3): written once per code object per file, before the first
 * STACK record naming it. `id` is process-wide (1, 2, 3, ...); `file` and `qualname`
 * are strings (co_filename, co_qualname), `first_line` co_firstlineno. */
#define CT_FIELDS_pycode(F) F(id, D) F(file, D) F(qualname, D) F(first_line, D)
/* Who the process is in a distributed job (1.4), read from the launcher's environment
 * at start-up (torchrun, Open MPI, MVAPICH2, PMIx, PMI, Slurm: docs/preload.md): written
 * once per file, right after PROCESS; absent when the environment names no rank, job
 * or CUDA_VISIBLE_DEVICES. `known` has a CT_JOB_* bit for each numeric field that holds
 * a value (0 otherwise). `source` is the variable the rank came from ("RANK",
 * "SLURM_PROCID", ...), `job_id` the job's id (SLURM_JOB_ID, else TORCHELASTIC_RUN_ID),
 * `visible_devices` CUDA_VISIBLE_DEVICES as given (CT_JOB_VISIBLE_DEVICES: it was set,
 * maybe empty); all strings, 0 = none. */
#define CT_FIELDS_job(F)                                                        \
  F(known, D) F(rank, D) F(world_size, D) F(local_rank, D) F(local_world_size, D) \
  F(node_rank, D) F(source, D) F(job_id, D) F(visible_devices, D)
/* The detail record of a successful allocation or release call (1.5; same corr as its
 * API record, written right before it, as every detail record: docs/format.md): `ptr` the address it returned (an allocation)
 * or was given (a release; never 0: a call on NULL has no ALLOC record), `bytes` the
 * size asked for (a pitched allocation: pitch x height; 0 for a release: the
 * allocation with the same ptr says), `kind` CT_ALLOC_*, `release` 1 for a free or an
 * unregistration, 0 for an allocation or a registration. */
#define CT_FIELDS_alloc(F) F(corr, D) F(ptr, D) F(bytes, D) F(kind, D) F(release, D)
/* The attributes of a launched function (1.6), written once per distinct function
 * handle (CUfunction, CUkernel, host stub or cudaKernel_t), by the first thread that
 * launches it, before that thread's LAUNCH records naming it (another thread's may
 * come first: join at the end, as for STACK). `id` is process-wide (not necessarily
 * consecutive); `name` the kernel's string (0 = unknown); values as
 * cuFuncGetAttribute / cudaFuncGetAttributes give them. */
#define CT_FIELDS_kernel_attr(F)                                                \
  F(id, D) F(name, D)                                                           \
  F(regs, D)          /* registers per thread (NUM_REGS) */                     \
  F(static_smem, D)   /* static shared memory per block, bytes */               \
  F(local_bytes, D)   /* local memory per thread, bytes */                      \
  F(const_bytes, D)   /* constant memory, bytes */                              \
  F(max_threads, D)   /* max threads per block for this function */             \
  F(max_dyn_smem, D)  /* max dynamic shared memory per block, bytes */          \
  F(ptx_version, D) F(binary_version, D) /* major * 10 + minor */
/* The theoretical occupancy of one launch shape (1.6): written once per distinct
 * (function, device, threads per block, dynamic shared memory), before the LAUNCH
 * records of that thread with that shape: `blocks_per_sm` is what
 * cuOccupancyMaxActiveBlocksPerMultiprocessor (the CUDA occupancy calculator) says
 * can be resident on one SM at once (0: none fit). */
#define CT_FIELDS_occupancy(F)                                                  \
  F(attr, D) F(device, D) F(block_threads, D) F(dyn_smem, D) F(blocks_per_sm, D)

/* CT_ALLOC_* kinds of an ALLOC record. A release names its entry point's family
 * (cudaFree / cuMemFree_v2: device, also for managed memory); the allocation it
 * releases has the exact kind. */
#define CT_ALLOC_DEVICE 1     /* cudaMalloc, cudaMallocPitch, cuMemAlloc_v2, cuMemAllocPitch_v2 */
#define CT_ALLOC_PINNED 2     /* cudaMallocHost, cudaHostAlloc, cuMemAllocHost_v2, cuMemHostAlloc */
#define CT_ALLOC_MANAGED 3    /* cudaMallocManaged, cuMemAllocManaged */
#define CT_ALLOC_ASYNC 4      /* stream-ordered: cudaMallocAsync, cuMemAllocAsync (+_ptsz) */
#define CT_ALLOC_REGISTERED 5 /* page-locked in place: cudaHostRegister, cuMemHostRegister_v2 */
#define CT_ALLOC_VMM 6        /* physical memory of a VMM handle: cuMemCreate / cuMemRelease (ptr: the handle) */
#define CT_ALLOC_ARRAY 7      /* 1.10: a CUDA array or mipmapped array (ptr: the handle; bytes: its
                                 elements' bytes, every level's: docs/format.md): cuArrayCreate_v2,
                                 cuArray3DCreate_v2, cuMipmappedArrayCreate, cudaMallocArray,
                                 cudaMalloc3DArray, cudaMallocMipmappedArray and their destroys/frees */

/* CT_JOB_* bits of JOB.known. */
#define CT_JOB_RANK 0x1
#define CT_JOB_WORLD_SIZE 0x2
#define CT_JOB_LOCAL_RANK 0x4
#define CT_JOB_LOCAL_WORLD_SIZE 0x8
#define CT_JOB_NODE_RANK 0x10
#define CT_JOB_VISIBLE_DEVICES 0x20 /* CUDA_VISIBLE_DEVICES was set (maybe to "") */

/* A STACK node whose pc has CT_STACK_PY set is a Python frame, not a native address
 * (1.3): bits 24..62 hold the PYCODE id, bits 0..23 the line being run (0 = unknown,
 * larger lines are stored as 0xffffff). Native user-space addresses never have bit 63. */
#define CT_STACK_PY (1ull << 63)
#define CT_STACK_PY_LINE_MAX 0xffffffull
#define CT_STACK_PY_PC(code, line)                                              \
  (CT_STACK_PY | ((uint64_t)(code) << 24) |                                     \
   ((uint64_t)(line) < CT_STACK_PY_LINE_MAX ? (uint64_t)(line) : CT_STACK_PY_LINE_MAX))
#define CT_STACK_PY_CODE(pc) (((pc) >> 24) & ((1ull << 39) - 1))
#define CT_STACK_PY_LINE(pc) ((pc) & CT_STACK_PY_LINE_MAX)

/* CT_API_* flags. */
#define CT_API_PTSZ 0x1      /* per-thread default stream entry point */
#define CT_API_CAPTURED 0x2  /* stream was capturing: no GPU record follows */
#define CT_API_TIMED 0x4     /* a GPU record with this corr follows later */
#define CT_API_UNTIMED 0x8   /* GPU work happened but could not be timed */
#define CT_API_DRIVER 0x10   /* reached through the driver API */
#define CT_API_INNER_TIMED 0x20 /* its GPU work is timed by its child calls (the
                                   launches of a library call), not by itself */

/* CT_GRAPH_PARTIAL_* bits of GRAPH.partial: why the walk stopped early. */
#define CT_GRAPH_PARTIAL_FAILED 0x1 /* a driver query failed or is missing */
#define CT_GRAPH_PARTIAL_LIMIT 0x2  /* more nodes than the walk's bound (100000) */
#define CT_GRAPH_PARTIAL_DEPTH 0x4  /* child graphs nested deeper than 16 */
#define CT_GRAPH_PARTIAL_NAMES 0x8  /* more distinct kernel names than kept (4096) */

/* CT_RANGE_* flags of a RANGE record. */
#define CT_RANGE_UNCLOSED 0x1 /* still open at its thread's exit or the final flush */
#define CT_RANGE_STARTEND 0x2 /* an nvtxRangeStart/End range (may end on another thread) */

/* CT_STREAM_* flags. */
#define CT_STREAM_NON_BLOCKING 0x1
#define CT_STREAM_PER_THREAD 0x2
#define CT_STREAM_LEGACY 0x4
#define CT_STREAM_GREEN 0x8 /* 1.14: with LEGACY, the NULL stream of a green context's
                               converted context (its own id; handle: that context);
                               since 2026-12-07 also with PER_THREAD: its per-thread
                               default stream */

/* CT_MEMOP_* kinds. */
#define CT_MEMOP_H2D 1
#define CT_MEMOP_D2H 2
#define CT_MEMOP_D2D 3
#define CT_MEMOP_H2H 4
#define CT_MEMOP_MEMSET 5
#define CT_MEMOP_P2P 6
#define CT_MEMOP_PREFETCH 7 /* 1.7: a managed-memory prefetch (bytes migrated) */
#define CT_MEMOP_MIXED 8    /* 1.7: a batch whose copies go different ways */
#define CT_MEMOP_DISCARD 9  /* 1.8: a managed-memory discard (bytes discarded) */
#define CT_MEMOP_STREAM_OPS 10 /* 1.9: a batch of stream memory operations (cuStreamBatchMemOp):
                                  count the operations, value the waits among them,
                                  bytes what its writes write */
#define CT_MEMOP_EXT_WAIT 11   /* 1.10: a wait on external semaphores (cuWaitExternalSemaphoresAsync,
                                  cudaWaitExternalSemaphoresAsync): count the semaphores, value the
                                  first one's fence value (a keyed mutex: its key) */
#define CT_MEMOP_EXT_SIGNAL 12 /* 1.10: a signal of external semaphores (cuSignalExternalSemaphoresAsync,
                                  cudaSignalExternalSemaphoresAsync): count and value as ext_wait */
#define CT_MEMOP_DECOMPRESS 13 /* 1.11: a batch of decompressions by the copy engines
                                  (cuMemBatchDecompressAsync): count its operations, bytes what
                                  they are to write (dstNumBytes summed), memory types device */

/* CT_MEM_* memory types of a copy's source or destination. */
#define CT_MEM_UNKNOWN 0
#define CT_MEM_DEVICE 1
#define CT_MEM_PINNED 2
#define CT_MEM_PAGEABLE 3
#define CT_MEM_MANAGED 4

/* CT_GPU_* activity types. */
#define CT_GPU_KERNEL 1
#define CT_GPU_MEMCPY 2
#define CT_GPU_MEMSET 3
#define CT_GPU_GEMM 4   /* a library call timed as one activity */
#define CT_GPU_GRAPH 5  /* a graph launch timed as one activity */

/* Kind ids as an enum: CT_KIND_STRING, CT_KIND_API, ... */
enum ct_kind {
#define CT_KIND_ENUM(NAME, id, lname) CT_KIND_##NAME = id,
  CT_RECORD_KINDS(CT_KIND_ENUM)
#undef CT_KIND_ENUM
};

/* One struct per kind, all fields uint64_t: struct ct_api, struct ct_gpu, ... */
#define CT_FIELD_DECL(name, enc) uint64_t name;
#define CT_KIND_STRUCT(NAME, id, lname) struct ct_##lname { CT_FIELDS_##lname(CT_FIELD_DECL) };
CT_RECORD_KINDS(CT_KIND_STRUCT)
#undef CT_KIND_STRUCT
#undef CT_FIELD_DECL

/* A decoded or to-be-encoded record. */
typedef struct ct_record {
  uint8_t kind;       /* enum ct_kind */
  uint8_t nfields;    /* fields present (set by the decoder) */
  uint32_t str_len;   /* STRING: length of str */
  const char *str;    /* STRING: bytes (not NUL-terminated); valid until next read */
  union {
    uint64_t v[CT_MAX_FIELDS];
#define CT_KIND_MEMBER(NAME, id, lname) struct ct_##lname lname;
    CT_RECORD_KINDS(CT_KIND_MEMBER)
#undef CT_KIND_MEMBER
  } u;
} ct_record;

/* The fixed file header (little-endian), followed by the schema block. */
struct ct_file_header {
  char magic[8];            /* CT_FILE_MAGIC */
  uint16_t major, minor;    /* CT_FORMAT_MAJOR, CT_FORMAT_MINOR */
  uint32_t schema_bytes;    /* size of the schema block that follows */
  uint64_t flags;           /* reserved, 0 */
  uint64_t reserved;
};

#endif
