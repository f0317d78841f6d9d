/* launch_loop: N launches of an empty kernel, then one cudaDeviceSynchronize.
 * The tracer's overhead benchmark: compare its host time per launch with and
 * without LD_PRELOAD=libtrace.so (informational; tests never assert on it). */
#include "workload.h"

/* Does nothing. */
__global__ void tiny(int unused) {}

int main(int argc, char **argv)
{
  wl_prog = "launch_loop";
  wl_arg args[] = {{"N", 1, 100000000, 10000}};
  wl_parse_args(argc, argv, args, 1);
  const long n = args[0].value;

  WL_CHECK(cudaFree(0)); /* context creation is not part of the loop */
  tiny<<<1, 1>>>(0);     /* nor is the first launch's module loading */
  WL_CHECK_LAUNCH();
  WL_CHECK(cudaDeviceSynchronize());

  long long start_ns = wl_now_ns();
  for (long i = 0; i < n; i++) {
    tiny<<<1, 1>>>((int)i);
    WL_CHECK_LAUNCH();
  }
  long long launched_ns = wl_now_ns();
  WL_CHECK(cudaDeviceSynchronize());
  long long done_ns = wl_now_ns();
  printf("launch_loop: N=%ld: %.3f us per launch (host), %.3f ms until synchronised\n", n,
         (launched_ns - start_ns) / 1e3 / n, (done_ns - start_ns) / 1e6);
  return 0;
}
