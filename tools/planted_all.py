"""The planted trace that holds every record kind (formats 1.0 to 1.12: PROCESS, JOB,
DEVICE with its SM limits, THREAD, STREAM, MODULE, PYCODE, STACK, CLOCK, GRAPH,
GRAPH_KERNEL, KERNEL_ATTR, OCCUPANCY, API, LAUNCH, GPU, MEMOP (every kind: copies each
way, a set, a peer copy, a prefetch, batches of copies going one way and mixed ways, a
batch of prefetches, a batch of discards, external semaphore waits and signals), RANGE,
TRACER, GEMM, GRAPH_LAUNCH, ALLOC (device and array), POLL (a coalesced cudaEventQuery),
PAUSE, MARK, DROP, END), and
the driver's stream memory operations (spans on a stream, no GPU record), each detail
record before its API record as the preload writes them since 1.7, for the tools' fuzz
test (test_fuzz_cli.py) and damage test (test_damage.py)."""
from tracewrite import TraceWriter

US, MS, T0 = 1000, 1000 * 1000, 10**9


class OneRecordPerFrame(TraceWriter):
    """A TraceWriter that puts each record (strings too) in a frame of its own."""

    def __init__(self):
        super().__init__()
        self.ends = []  # body offset after each record

    def string(self, text):
        if text in self.strings:
            return self.strings[text]
        self.frame()
        sid = super().string(text)
        self.ends.append(len(self.body))
        return sid

    def add(self, kind, /, **fields):
        self.frame()
        super().add(kind, **fields)
        self.ends.append(len(self.body))


MEMOPS = [  # name, flags, MEMOP fields (1.7: prefetch 7, mixed 8, count; 1.8: discard 9), GPU type
    ("cudaMemcpyAsync", 0x4, dict(bytes=8192, kind=2, src_mem=1, dst_mem=2), 2),
    ("cuMemcpyDtoDAsync_v2", 0x14, dict(bytes=1 << 12, kind=3, src_mem=1, dst_mem=1), 2),
    ("cudaMemcpyAsync", 0x4, dict(bytes=256, kind=4, src_mem=2, dst_mem=3), 2),
    ("cuMemsetD32Async", 0x14, dict(bytes=512, kind=5, dst_mem=1, value=7), 3),
    ("cuMemcpyPeerAsync", 0x14, dict(bytes=1 << 16, kind=6, src_mem=1, dst_mem=1), 2),
    ("cudaMemPrefetchAsync", 0x4, dict(bytes=1 << 20, kind=7, src_mem=4, dst_mem=4, value=1), 2),
    ("cuMemcpyBatchAsync_v2", 0x14, dict(bytes=3 << 12, kind=1, src_mem=2, dst_mem=1, count=3), 2),
    ("cudaMemcpyBatchAsync", 0x4, dict(bytes=5 << 12, kind=8, count=5), 2),
    ("cuMemPrefetchBatchAsync", 0x14, dict(bytes=4 << 20, kind=7, src_mem=4, dst_mem=4, count=4), 2),
    ("cudaMemDiscardBatchAsync", 0x4, dict(bytes=2 << 20, kind=9, src_mem=4, dst_mem=4, count=2), 2),
    ("cuMemBatchDecompressAsync", 0x14, dict(bytes=15 << 10, kind=13, src_mem=1, dst_mem=1, count=3), 2),
]
STREAM_MEMOPS = ("cuStreamWriteValue32_v2", "cuStreamWaitValue32_v2", "cuStreamWriteValue64",
                 "cuStreamWaitValue64_v2_ptsz", "cuStreamBatchMemOp_v2")
EXT_SEMS = [  # 1.10: external semaphore waits (ext_wait 11) and signals (ext_signal 12)
    ("cudaWaitExternalSemaphoresAsync", 0x0, 11, 1, 5),
    ("cuSignalExternalSemaphoresAsync_ptsz", 0x11, 12, 2, 6),
]


def memops(w, t):
    """The other MEMOP kinds and the stream memory operations (the batch's MEMOP of
    kind stream_ops), from time t on stream 1: the detail first, then the API record,
    then the GPU record; 20 us apart."""
    for i, (name, flags, fields, gpu_type) in enumerate(MEMOPS):
        c, at = 300 + i, t + 20 * US * i
        w.add("memop", corr=c, **{"async": 1}, **fields)
        w.add("api", tid=7, name=w.string(name), begin_ns=at, end_ns=at + 2 * US, corr=c,
              stream=1, flags=flags)
        w.add("gpu", corr=c, stream=1, start_ns=at + 3 * US, end_ns=at + 15 * US, type=gpu_type)
    t += 20 * US * len(MEMOPS)
    for i, name in enumerate(STREAM_MEMOPS):
        if "BatchMemOp" in name:  # its MEMOP (format 1.9): a write and a wait
            w.add("memop", corr=320 + i, bytes=4, kind=10, count=2, value=1, **{"async": 1})
        w.add("api", tid=7, name=w.string(name), begin_ns=t + 4 * US * i,
              end_ns=t + 4 * US * i + US, corr=320 + i, stream=1,
              flags=0x10 | (1 if name.endswith("_ptsz") else 0))
    t += 4 * US * len(STREAM_MEMOPS)
    for i, (name, flags, kind, count, value) in enumerate(EXT_SEMS):
        w.add("memop", corr=330 + i, kind=kind, count=count, value=value, **{"async": 1})
        w.add("api", tid=7, name=w.string(name), begin_ns=t + 4 * US * i,
              end_ns=t + 4 * US * i + US, corr=330 + i, stream=1, flags=flags)


def fill(w):
    """Writes the planted records into w (a tracewrite.TraceWriter); returns w."""
    w.add("process", pid=7, ppid=1, start_ns=T0, realtime_ns=17 * 10**17, host=w.string("h"),
          cmdline=w.string("./a\0b"), exe=w.string("/bin/a"))
    w.add("job", known=31, rank=1, world_size=2, local_rank=1, local_world_size=2,
          source=w.string("RANK"), job_id=w.string("42"), visible_devices=w.string("0,1"))
    w.add("device", device=0, name=w.string("GPU"), cc_major=9, sm_count=132, mem_bytes=1 << 36,
          pci_bus_id=w.string("0000:01:00.0"), uuid=w.string("GPU-00000000-0000-0000-0000-000000000000"),
          max_threads_per_sm=2048, warp_size=32, regs_per_sm=65536, smem_per_sm=233472,
          max_blocks_per_sm=32)
    w.add("thread", tid=7, name=w.string("main"), start_ns=T0)
    w.add("stream", stream=1, handle=0x10, device=0, flags=1, owner_tid=7)
    w.add("module", path=w.string("/bin/a"), bias=0x400000, start=0x400000, end=0x500000,
          build_id=w.string("abcd"), seen_ns=T0)
    w.add("pycode", id=1, file=w.string("train.py"), qualname=w.string("step"), first_line=3)
    w.add("stack", id=1, parent=0, pc=0x401000)
    w.add("stack", id=2, parent=1, pc=(1 << 63) | (1 << 24) | 5)
    w.add("clock", device=0, host_ns=T0, offset_ns=5, error_ns=100)
    w.add("graph", corr=0, exec=1, nodes=3, kernels=2, memcpys=1)
    w.add("graph_kernel", exec=1, name=w.string("_Z1gv"), count=2, attr=1, device=0,
          block_threads=64, dyn_smem=0)
    w.add("kernel_attr", id=1, name=w.string("_Z1kv"), regs=40, static_smem=1024, local_bytes=8,
          max_threads=1024, max_dyn_smem=48128, ptx_version=90, binary_version=90)
    w.add("occupancy", attr=1, device=0, block_threads=32, dyn_smem=0, blocks_per_sm=32)
    w.add("occupancy", attr=1, device=0, block_threads=64, dyn_smem=0, blocks_per_sm=0)
    t = T0 + MS
    for i in range(40):
        c = i + 1
        flags = 4
        w.add("api", tid=7, name=w.string("cudaLaunchKernel" if i % 4 else "cudaMemcpyAsync"),
              begin_ns=t, end_ns=t + 3 * US, corr=c, stream=1, flags=flags, stack=2)
        if i % 4:
            w.add("launch", corr=c, kernel=w.string("_Z1kv"), grid_x=1, grid_y=1, grid_z=1,
                  block_x=32 * (1 + i % 3), block_y=1, block_z=1, attr=1 if i % 5 else 2)
            w.add("gpu", corr=c, stream=1, start_ns=t + 5 * US, end_ns=t + 25 * US, type=1,
                  name=w.string("_Z1kv"))
        else:
            w.add("memop", corr=c, bytes=4096, kind=1, src_mem=2, dst_mem=1, **{"async": 1})
            w.add("gpu", corr=c, stream=1, start_ns=t + 5 * US, end_ns=t + 9 * US, type=2)
        if i % 10 == 9:
            w.add("range", tid=7, name=w.string("step"), begin_ns=t - 40 * US, end_ns=t + 4 * US)
            w.add("tracer", tid=8, what=w.string("flush"), begin_ns=t, end_ns=t + US, amount=10)
        t += 50 * US
    w.add("api", tid=7, name=w.string("cublasSgemm_v2"), begin_ns=t, end_ns=t + 9 * US, corr=99,
          stream=1, flags=4)
    w.add("gemm", corr=99, m=64, n=64, k=64, batch=1)
    w.add("gpu", corr=99, stream=1, start_ns=t + 10 * US, end_ns=t + 30 * US, type=4)
    w.add("api", tid=7, name=w.string("cudaGraphLaunch"), begin_ns=t + 40 * US, end_ns=t + 41 * US,
          corr=100, stream=1, flags=4)
    w.add("graph_launch", corr=100, exec=1)
    w.add("gpu", corr=100, stream=1, start_ns=t + 42 * US, end_ns=t + 60 * US, type=5)
    for k, (name, ptr, size, kind, release) in enumerate([("cudaMalloc", 0x7000, 1 << 20, 1, 0),
                                                          ("cudaFree", 0x7000, 0, 1, 1),
                                                          ("cudaFree", 0x9000, 0, 1, 1),
                                                          ("cudaMallocArray", 0xa000, 4096, 7, 0),
                                                          ("cuArrayDestroy", 0xa000, 0, 7, 1)]):
        w.add("api", tid=7, name=w.string(name), begin_ns=t + (70 + 5 * k) * US,
              end_ns=t + (72 + 5 * k) * US, corr=200 + k)
        w.add("alloc", corr=200 + k, ptr=ptr, bytes=size, kind=kind, release=release)
    memops(w, t + 100 * US)
    w.add("poll", corr=400, polls=1234)  # 1.12: a spin of 1234 cudaEventQuery polls
    w.add("api", tid=7, name=w.string("cudaEventQuery"), begin_ns=t + 500 * US, end_ns=t + 700 * US,
          corr=400, flags=0)
    w.add("pause", begin_ns=t + MS, end_ns=0, why=w.string("profiler"))
    w.add("pause", begin_ns=t + MS, end_ns=t + 2 * MS, why=w.string("profiler"))
    w.add("mark", tid=7, name=w.string("m"), ts_ns=t + 3 * MS)
    w.add("drop", tid=7, count=3, first_ns=t, last_ns=t + MS)
    w.add("end", records=200, drops=3, end_ns=t + 4 * MS)
    return w
