"""A planted trace (tracewrite.py) whose calls' detail records (LAUNCH, MEMOP, GEMM,
GRAPH_LAUNCH) land apart from their API records, as when the preload's writer drains a
thread's buffer between the two records while the thread is preempted: 30 ms of
another thread's records (past the reader's first 20 ms reorder window) come between
them. split_file(path, detail_first) writes the detail before its API record (as the
preload does since 2026-12-03: CTPH_FINISH) or after it (as before), for
test_detail_order.py. late_attr_file(path, late): thread 8's launches of a kernel come
before the KERNEL_ATTR and OCCUPANCY records they name (written by thread 7, which
launched it first and was preempted) and 40 ms of another thread's records, or after;
late_shape_file(path, late): thread 7's first launch of the kernel (KERNEL_ATTR and
OCCUPANCY for block 128 before it) and thread 8's launches of a new shape (block 256)
before the OCCUPANCY record of that shape (thread 7's second launch, preempted), or
after. late_stack_file(path, late, ancestors_only): the same with the STACK records of
the launches' call path (a Python frame, train.py:12 step) written by thread 7, or
(ancestors_only) only its ancestors late: the leaf node written by thread 8 before its
calls, its parent and root by thread 7 after.

pid 12, thread 10's calls, in this order, 40 ms apart:
  corr 1  cudaLaunchKernel of KERNEL, grid 4x2x1, block 128x1x1, timed
  corr 2  cudaMemcpy of 1 MiB host to device (pageable), synchronous, timed
  corr 3  cublasSgemm_v2 64x32x16, timed by the kernel it launched: corr 4 (depth 1,
          GEMM_KERNEL, its LAUNCH and API right together)
  corr 5  cudaLaunchKernel of KERNEL captured into a graph (no GPU record)
  corr 6  cudaGraphLaunch of exec 7, timed
"""
from tracewrite import TraceWriter

PID, TID, OTHER_TID = 12, 10, 11
MIB = 1 << 20
KERNEL, GEMM_KERNEL = "_Z6scale2v", "_Z9sgemm_k64v"
TIMED, CAPTURED, INNER_TIMED = 0x4, 0x2, 0x20
GPU_KERNEL, GPU_MEMCPY, GPU_GRAPH = 1, 2, 5
H2D, PAGEABLE, DEVICE_MEM = 1, 3, 1
SPLIT_NS = 30 * 10**6  # the other thread's record between a detail and its API record
STEP_NS = 40 * 10**6


def split_file(path, detail_first, split_ns=None):
    """Writes the trace (split_ns: how long thread 11's record between a detail and its
    call lasts, SPLIT_NS unless given; 0 keeps them together); returns {corr: (name,
    flags)} of thread 10's outermost calls."""
    split_ns = SPLIT_NS if split_ns is None else split_ns
    w = TraceWriter()
    w.add("process", pid=PID, start_ns=10**9)
    unwinder = w.string("unwinder")
    kernel, gemm_kernel = w.string(KERNEL), w.string(GEMM_KERNEL)
    t = 10**9 + 1000
    calls = {}

    def api(name, corr, begin, end, flags, depth=0, parent=0):
        w.add("api", tid=TID, name=w.string(name), begin_ns=begin, end_ns=end, corr=corr,
              flags=flags, depth=depth, parent=parent)

    def call(name, corr, flags, record, begin, gpu=None, **detail):
        """The call's detail and API records (then its GPU record, gpu: type, start and
        end offsets from the call's end, name) with 30 ms of thread 11's records between:
        detail, thread 11, API, GPU, or API, GPU, thread 11, detail."""
        end = begin + 100 * 1000
        call_records = [lambda: api(name, corr, begin, end, flags)]
        if gpu:
            call_records.append(lambda: w.add("gpu", corr=corr, stream=0, start_ns=end + gpu[1],
                                              end_ns=end + gpu[2], type=gpu[0], name=gpu[3]))
        records = [lambda: w.add(record, corr=corr, **detail),
                   lambda: w.add("tracer", tid=OTHER_TID, what=unwinder, begin_ns=begin,
                                 end_ns=begin + split_ns, amount=1)] + call_records
        for add in records if detail_first else call_records + records[1::-1]:
            add()
        calls[corr] = (name, flags)

    call("cudaLaunchKernel", 1, TIMED, "launch", t, (GPU_KERNEL, 1000, 6000, kernel),
         kernel=kernel, grid_x=4, grid_y=2, grid_z=1, block_x=128, block_y=1, block_z=1)
    t += STEP_NS
    call("cudaMemcpy", 2, TIMED, "memop", t, (GPU_MEMCPY, -90 * 1000, -10 * 1000, 0),
         bytes=MIB, kind=H2D, src_mem=PAGEABLE, dst_mem=DEVICE_MEM, **{"async": 0})
    t += STEP_NS
    # the GEMM's own kernel: its records together (inside the GEMM, before it ends)
    w.add("launch", corr=4, kernel=gemm_kernel, grid_x=8, grid_y=1, grid_z=1, block_x=256,
          block_y=1, block_z=1)
    api("cudaLaunchKernel", 4, t + 10 * 1000, t + 20 * 1000, TIMED, depth=1, parent=3)
    w.add("gpu", corr=4, stream=0, start_ns=t + 30 * 1000, end_ns=t + 80 * 1000,
          type=GPU_KERNEL, name=gemm_kernel)
    call("cublasSgemm_v2", 3, INNER_TIMED, "gemm", t, m=64, n=32, k=16, batch=1)
    t += STEP_NS
    call("cudaLaunchKernel", 5, CAPTURED, "launch", t, kernel=kernel, grid_x=4, grid_y=2,
         grid_z=1, block_x=128, block_y=1, block_z=1)
    t += STEP_NS
    call("cudaGraphLaunch", 6, TIMED, "graph_launch", t, (GPU_GRAPH, 1000, 9000, 0), exec=7)
    t += STEP_NS
    w.add("end", records=0, end_ns=t)
    w.save(path)
    return calls


ATTR_KERNEL = "_Z1kv"


def late_attr_file(path, late):
    """pid 7: 3 launches by thread 8 of ATTR_KERNEL (grid 264, block 128, 512 bytes of
    dynamic shared memory, attr 1: 64 registers, 1 KiB static shared memory, 8 resident
    blocks per SM on a 132-SM device of 2,048 threads per SM), with its KERNEL_ATTR and
    OCCUPANCY records before them or (late) after 40 ms of thread 9's records."""
    w = TraceWriter()
    w.add("process", pid=7, ppid=1, start_ns=10**9, host=w.string("h"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132,
          max_threads_per_sm=2048, warp_size=32, regs_per_sm=65536, smem_per_sm=233472,
          max_blocks_per_sm=32)
    name = w.string(ATTR_KERNEL)

    def attributes():
        w.add("kernel_attr", id=1, name=name, regs=64, static_smem=1024)
        w.add("occupancy", attr=1, device=0, block_threads=128, dyn_smem=512, blocks_per_sm=8)

    if not late:
        attributes()
    for i in range(3):
        t = 10**9 + (i + 1) * 100 * 1000
        w.add("launch", corr=i + 1, kernel=name, grid_x=264, grid_y=1, grid_z=1, block_x=128,
              block_y=1, block_z=1, shmem=512, attr=1)
        w.add("api", tid=8, name=w.string("cudaLaunchKernel"), begin_ns=t, end_ns=t + 2000,
              corr=i + 1, flags=TIMED)
        w.add("gpu", corr=i + 1, start_ns=t + 5000, end_ns=t + 25000, type=GPU_KERNEL, name=name)
    w.add("tracer", tid=9, what=w.string("unwinder"), begin_ns=10**9, end_ns=10**9 + 40 * 10**6,
          amount=1)
    if late:
        attributes()
    w.add("end", records=0, end_ns=10**9 + 50 * 10**6)
    w.save(path)


def late_shape_file(path, late):
    """pid 7, the device of late_attr_file: thread 7 launches ATTR_KERNEL (attr 1: 64
    registers, 1 KiB static shared memory) with block 128 (8 resident blocks per SM),
    its KERNEL_ATTR and OCCUPANCY records first; then thread 8 launches it 3 times with
    block 256 and 512 bytes of dynamic shared memory (6 resident blocks per SM: 75 %),
    the OCCUPANCY record of that shape before them or (late) after 40 ms of thread 9's
    records."""
    w = TraceWriter()
    w.add("process", pid=7, ppid=1, start_ns=10**9, host=w.string("h"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132,
          max_threads_per_sm=2048, warp_size=32, regs_per_sm=65536, smem_per_sm=233472,
          max_blocks_per_sm=32)
    name, api = w.string(ATTR_KERNEL), w.string("cudaLaunchKernel")

    def launch(corr, tid, t, block, shmem):
        w.add("launch", corr=corr, kernel=name, grid_x=264, grid_y=1, grid_z=1, block_x=block,
              block_y=1, block_z=1, shmem=shmem, attr=1)
        w.add("api", tid=tid, name=api, begin_ns=t, end_ns=t + 2000, corr=corr, flags=TIMED)
        w.add("gpu", corr=corr, start_ns=t + 5000, end_ns=t + 25000, type=GPU_KERNEL, name=name)

    def new_shape():
        w.add("occupancy", attr=1, device=0, block_threads=256, dyn_smem=512, blocks_per_sm=6)

    w.add("kernel_attr", id=1, name=name, regs=64, static_smem=1024)
    w.add("occupancy", attr=1, device=0, block_threads=128, dyn_smem=0, blocks_per_sm=8)
    launch(1, 7, 10**9 + 50 * 1000, 128, 0)
    if not late:
        new_shape()
    for i in range(3):
        launch(i + 2, 8, 10**9 + (i + 1) * 100 * 1000, 256, 512)
    w.add("tracer", tid=9, what=w.string("unwinder"), begin_ns=10**9, end_ns=10**9 + 40 * 10**6,
          amount=1)
    if late:
        new_shape()
    w.add("end", records=0, end_ns=10**9 + 50 * 10**6)
    w.save(path)


def late_stack_file(path, late, ancestors_only=False):
    """pid 7: 3 launches by thread 8 whose API records name STACK node 3 (root 0x1000 <
    train.py:12 step < 0x7000), with the STACK records before them or (late) after 40 ms
    of thread 9's records; ancestors_only (with late): node 3 before them, nodes 1 and 2
    after."""
    w = TraceWriter()
    w.add("process", pid=7, start_ns=10**9)
    w.add("pycode", id=2, file=w.string("/home/u/train.py"), qualname=w.string("step"),
          first_line=10)

    nodes = ((1, 0, 0x1000), (2, 1, (1 << 63) | (2 << 24) | 12), (3, 2, 0x7000))

    def stacks(which):
        for nid, parent, pc in which:
            w.add("stack", id=nid, parent=parent, pc=pc)

    if not late:
        stacks(nodes)
    elif ancestors_only:
        stacks(nodes[2:])
    name, kernel = w.string("cudaLaunchKernel"), w.string(ATTR_KERNEL)
    for i in range(3):
        t = 10**9 + (i + 1) * 100 * 1000
        w.add("launch", corr=i + 1, kernel=kernel, grid_x=1, grid_y=1, grid_z=1, block_x=1,
              block_y=1, block_z=1)
        w.add("api", tid=8, name=name, begin_ns=t, end_ns=t + 2000, corr=i + 1, flags=TIMED,
              stack=3)
        w.add("gpu", corr=i + 1, start_ns=t + 5000, end_ns=t + 25000, type=GPU_KERNEL,
              name=kernel)
    w.add("tracer", tid=9, what=w.string("unwinder"), begin_ns=10**9, end_ns=10**9 + 40 * 10**6,
          amount=1)
    if late:
        stacks(nodes[:2] if ancestors_only else nodes)
    w.add("end", records=0, end_ns=10**9 + 50 * 10**6)
    w.save(path)
