/* gappy: a fixed sequence of phases, each planting a known kind of GPU idle
 * time (or none), for testing `cutrace gaps`. The plan is printed on stdout as
 * the program goes, one machine-readable line per item (docs/workloads.md has
 * the grammar and the tolerances). No arguments: the plan is fixed.
 *
 * Kernel durations: on a real GPU each gappy_* kernel spins for its planned
 * time; on the simulator run with the SIMCUDA_KERNEL_US value gappy prints
 * (GAPPY_SIM_KERNEL_US below). "main" is the legacy default stream, "side" a
 * non-blocking stream. */
#include "workload.h"
#include <stdarg.h>
#include <unistd.h>

#define TINY_US 1
#define SHORT_US 20
#define WORK_US 100
#define LONG_US 2000
#define HOST_SLEEP_US 20000 /* 10 x LONG_US: a loaded host's stalls of a few ms neither
                             * make an extra gap this long nor outlast the sleeps */
#define PAGEABLE_BYTES (1u << 20)
#define GAPPY_SIM_KERNEL_US "gappy_tiny=1,gappy_short=20,gappy_work=100,gappy_long=2000"

/* Lasts `ns` of GPU time on a real GPU (SHORT_US in the plan). */
__global__ void gappy_short(long long ns) { wl_gpu_spin_ns(ns); }
/* Lasts `ns` of GPU time on a real GPU (WORK_US in the plan). */
__global__ void gappy_work(long long ns) { wl_gpu_spin_ns(ns); }
/* Lasts `ns` of GPU time on a real GPU (LONG_US in the plan). */
__global__ void gappy_long(long long ns) { wl_gpu_spin_ns(ns); }
/* Does nothing: shorter than its own launch (launch-bound). */
__global__ void gappy_tiny(int unused) {}

static cudaStream_t side;

/* Launches one of the spinning kernels for `us` microseconds on stream. */
static void launch_spin(void (*kernel)(long long), int us, cudaStream_t stream)
{
  kernel<<<1, 1, 0, stream>>>((long long)us * 1000);
  WL_CHECK_LAUNCH();
}

/* Prints a plan line and flushes, so that a reader sees it as it happens. */
static void say(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  vprintf(format, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

/* Marks a phase boundary: everything before it is finished (device-wide
 * synchronise) and the host goes on at once, so boundary gaps are short. */
static void phase(const char *name, const char *edge)
{
  if (!strcmp(edge, "end"))
    WL_CHECK(cudaDeviceSynchronize());
  say("phase name=%s %s_ns=%lld", name, edge, wl_now_ns());
}

/* Back-to-back work, queued faster than it runs: no gap at all. */
static void phase_busy(void)
{
  phase("busy", "begin");
  say("expect none phase=busy stream=main max_gap_us=50");
  for (int i = 0; i < 10; i++)
    launch_spin(gappy_work, WORK_US, 0);
  phase("busy", "end");
}

/* The host is late: it sleeps between launches, outside any CUDA call. Each
 * gap lasts at least HOST_SLEEP_US - SHORT_US (the kernel runs during the
 * sleep). */
static void phase_host_wait(void)
{
  phase("host_wait", "begin");
  say("planted gap phase=host_wait cause=host_wait stream=main count=4 dur_us=%d before=gappy_short",
      HOST_SLEEP_US - SHORT_US);
  launch_spin(gappy_short, SHORT_US, 0);
  for (int i = 0; i < 4; i++) {
    usleep(HOST_SLEEP_US);
    launch_spin(gappy_short, SHORT_US, 0);
  }
  phase("host_wait", "end");
}

/* The host waits in cudaDeviceSynchronize for long work on the side stream
 * while the main stream, whose next work it would issue, sits idle. */
static void phase_sync(void)
{
  phase("sync", "begin");
  say("planted gap phase=sync cause=sync stream=main count=3 dur_us=%d before=gappy_short "
      "device_idle=no",
      LONG_US - SHORT_US);
  for (int i = 0; i < 3; i++) {
    /* main first: main's gap then lasts at least LONG_US - SHORT_US however
     * late the host is in launching gappy_long. */
    launch_spin(gappy_short, SHORT_US, 0);
    launch_spin(gappy_long, LONG_US, side);
    WL_CHECK(cudaDeviceSynchronize());
  }
  /* The third gap ends at the first main-stream work of the next phase. */
  phase("sync", "end");
}

/* The main stream waits on an event recorded after long side-stream work. */
static void phase_other_stream(cudaEvent_t side_done)
{
  phase("other_stream", "begin");
  say("planted gap phase=other_stream cause=other_stream stream=main count=3 dur_us=%d "
      "before=gappy_work device_idle=no",
      LONG_US - SHORT_US);
  for (int i = 0; i < 3; i++) {
    launch_spin(gappy_short, SHORT_US, 0); /* first, as in phase_sync */
    launch_spin(gappy_long, LONG_US, side);
    WL_CHECK(cudaEventRecord(side_done, side));
    WL_CHECK(cudaStreamWaitEvent(0, side_done, 0));
    launch_spin(gappy_work, WORK_US, 0);
    WL_CHECK(cudaDeviceSynchronize());
  }
  phase("other_stream", "end");
}

/* Host and device buffers of the pageable phase, prepared before the first
 * phase so that no long host work sits at a phase boundary. */
typedef struct {
  unsigned char *source[4], *back, *device;
} pageable_buffers;

/* Allocates and fills the pageable phase's buffers (source[i] holds i + 1). */
static void pageable_prepare(pageable_buffers *buffers)
{
  for (int i = 0; i < 4; i++) {
    buffers->source[i] = (unsigned char *)wl_alloc(PAGEABLE_BYTES);
    memset(buffers->source[i], i + 1, PAGEABLE_BYTES);
  }
  buffers->back = (unsigned char *)wl_alloc(PAGEABLE_BYTES);
  memset(buffers->back, 0, PAGEABLE_BYTES);
  WL_CHECK(cudaMalloc((void **)&buffers->device, PAGEABLE_BYTES));
  /* Touch the device buffer now: its first use must not cost page faults
   * (device memory is host memory on the simulator). */
  WL_CHECK(cudaMemset(buffers->device, 0, PAGEABLE_BYTES));
  WL_CHECK(cudaDeviceSynchronize());
}

/* Frees what pageable_prepare allocated. */
static void pageable_release(pageable_buffers *buffers)
{
  WL_CHECK(cudaFree(buffers->device));
  for (int i = 0; i < 4; i++)
    free(buffers->source[i]);
  free(buffers->back);
}

/* Pageable (malloc'd) copies in a loop around a short kernel; only a few
 * bytes of each round trip are checked, so the host adds no long work. */
static void phase_pageable(const pageable_buffers *buffers)
{
  phase("pageable", "begin");
  say("planted finding phase=pageable kind=pageable_copy count=8 bytes=%u directions=HtoD,DtoH",
      PAGEABLE_BYTES);
  for (int i = 0; i < 4; i++) {
    WL_CHECK(cudaMemcpy(buffers->device, buffers->source[i], PAGEABLE_BYTES, cudaMemcpyHostToDevice));
    launch_spin(gappy_short, SHORT_US, 0);
    WL_CHECK(cudaMemcpy(buffers->back, buffers->device, PAGEABLE_BYTES, cudaMemcpyDeviceToHost));
    for (unsigned at = 0; at < PAGEABLE_BYTES; at += PAGEABLE_BYTES / 8 - 1)
      if (buffers->back[at] != i + 1) {
        fprintf(stderr, "gappy: pageable round trip %d: byte %u is %d, want %d\n", i, at,
                buffers->back[at], i + 1);
        exit(1);
      }
  }
  phase("pageable", "end");
}

/* Many kernels shorter than their launches, back to back, one final sync. */
static void phase_launch_bound(void)
{
  phase("launch_bound", "begin");
  say("planted finding phase=launch_bound kind=launch_bound count=200 kernel=gappy_tiny");
  say("planted gap phase=launch_bound cause=launch_overhead stream=main count=199 max_dur_us=50 "
      "before=gappy_tiny");
  for (int i = 0; i < 200; i++) {
    gappy_tiny<<<1, 1>>>(i);
    WL_CHECK_LAUNCH();
  }
  phase("launch_bound", "end");
}

/* A device-wide synchronise after every short kernel. */
static void phase_sync_little_work(void)
{
  phase("sync_little_work", "begin");
  say("planted finding phase=sync_little_work kind=sync_little_work count=20 work_us=%d", SHORT_US);
  for (int i = 0; i < 20; i++) {
    launch_spin(gappy_short, SHORT_US, 0);
    WL_CHECK(cudaDeviceSynchronize());
  }
  phase("sync_little_work", "end");
}

int main(int argc, char **argv)
{
  wl_prog = "gappy";
  wl_parse_args(argc, argv, NULL, 0);
  say("gappy plan=1 kernel_us tiny=%d short=%d work=%d long=%d host_sleep_us=%d", TINY_US, SHORT_US,
      WORK_US, LONG_US, HOST_SLEEP_US);
  say("simulator SIMCUDA_KERNEL_US=%s", GAPPY_SIM_KERNEL_US);
  const char *model = getenv("SIMCUDA_KERNEL_US");
  if (wl_on_simulator() && (!model || !strstr(model, GAPPY_SIM_KERNEL_US)))
    fprintf(stderr, "gappy: warning: on the simulator set SIMCUDA_KERNEL_US=%s (or a list containing "
                    "it) for the planted durations to hold\n",
            GAPPY_SIM_KERNEL_US);

  WL_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t side_done;
  WL_CHECK(cudaEventCreateWithFlags(&side_done, cudaEventDisableTiming));
  pageable_buffers buffers;
  pageable_prepare(&buffers);
  /* Warm-up: first launches pay module loading on a real GPU. */
  phase("warmup", "begin");
  launch_spin(gappy_short, SHORT_US, 0);
  launch_spin(gappy_short, SHORT_US, side);
  phase("warmup", "end");

  phase_busy();
  phase_host_wait();
  phase_sync();
  phase_other_stream(side_done);
  phase_pageable(&buffers);
  phase_launch_bound();
  phase_sync_little_work();

  pageable_release(&buffers);
  WL_CHECK(cudaEventDestroy(side_done));
  WL_CHECK(cudaStreamDestroy(side));
  say("gappy done");
  return 0;
}
