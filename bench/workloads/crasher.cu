/* crasher: launches crash_work LAUNCHES times, synchronises, says so on
 * stdout, then calls abort(). For testing that a tracer keeps what it recorded
 * when the program dies of a signal (the exit status is SIGABRT's). */
#include "workload.h"

#define WORK_US 10

/* Work before the crash: lasts `ns` on a real GPU. */
__global__ void crash_work(long long ns) { wl_gpu_spin_ns(ns); }

int main(int argc, char **argv)
{
  wl_prog = "crasher";
  wl_arg args[] = {{"LAUNCHES", 1, 1000000, 10}};
  wl_parse_args(argc, argv, args, 1);
  const int launches = (int)args[0].value;

  for (int i = 0; i < launches; i++) {
    crash_work<<<1, 1>>>(WORK_US * 1000ll);
    WL_CHECK_LAUNCH();
  }
  WL_CHECK(cudaDeviceSynchronize());
  printf("crasher: launched %d kernels, aborting now\n", launches);
  fflush(stdout);
  abort();
}
