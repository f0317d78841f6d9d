/* multistream: one producer stream and STREAMS-1 consumer streams, all
 * non-blocking, tied together only by events. Each iteration the producer runs
 * ms_produce and fills a buffer with the iteration number (cudaMemsetAsync),
 * then records an event; every consumer waits on that event, copies the buffer
 * (device to device) and runs ms_consume, then records its own event, on which
 * the producer waits before it overwrites the buffer in the next iteration.
 * So the consumers idle while the producer works and the other way round.
 * The copies check the ordering: at the end each consumer's copy must hold the
 * last iteration's value (the simulator copies real bytes). */
#include "workload.h"

#define PRODUCE_US 200
#define CONSUME_US 100
#define BUFFER_BYTES 4096

/* Producer work: lasts `ns` on a real GPU. */
__global__ void ms_produce(long long ns) { wl_gpu_spin_ns(ns); }
/* Consumer work: lasts `ns` on a real GPU. */
__global__ void ms_consume(long long ns) { wl_gpu_spin_ns(ns); }

int main(int argc, char **argv)
{
  wl_prog = "multistream";
  wl_arg args[] = {{"STREAMS", 2, 64, 2}, {"ITERS", 1, 100000, 10}};
  wl_parse_args(argc, argv, args, 2);
  const int streams = (int)args[0].value, iters = (int)args[1].value;

  cudaStream_t *stream = (cudaStream_t *)wl_alloc(streams * sizeof(cudaStream_t));
  cudaEvent_t *done = (cudaEvent_t *)wl_alloc(streams * sizeof(cudaEvent_t));
  unsigned char **copy = (unsigned char **)wl_alloc(streams * sizeof(unsigned char *));
  unsigned char *shared;
  WL_CHECK(cudaMalloc((void **)&shared, BUFFER_BYTES));
  for (int s = 0; s < streams; s++) {
    WL_CHECK(cudaStreamCreateWithFlags(&stream[s], cudaStreamNonBlocking));
    WL_CHECK(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
    WL_CHECK(cudaMalloc((void **)&copy[s], BUFFER_BYTES));
    WL_CHECK(cudaMemset(copy[s], 0, BUFFER_BYTES));
  }

  long long start_ns = wl_now_ns();
  for (int i = 0; i < iters; i++) {
    for (int s = 1; s < streams; s++)
      WL_CHECK(cudaStreamWaitEvent(stream[0], done[s], 0));
    ms_produce<<<1, 1, 0, stream[0]>>>(PRODUCE_US * 1000ll);
    WL_CHECK_LAUNCH();
    WL_CHECK(cudaMemsetAsync(shared, (i + 1) & 0xff, BUFFER_BYTES, stream[0]));
    WL_CHECK(cudaEventRecord(done[0], stream[0]));
    for (int s = 1; s < streams; s++) {
      WL_CHECK(cudaStreamWaitEvent(stream[s], done[0], 0));
      WL_CHECK(cudaMemcpyAsync(copy[s], shared, BUFFER_BYTES, cudaMemcpyDeviceToDevice, stream[s]));
      ms_consume<<<1, 1, 0, stream[s]>>>(CONSUME_US * 1000ll);
      WL_CHECK_LAUNCH();
      WL_CHECK(cudaEventRecord(done[s], stream[s]));
    }
  }
  WL_CHECK(cudaDeviceSynchronize());
  long long elapsed_ns = wl_now_ns() - start_ns;

  unsigned char host[BUFFER_BYTES];
  int failures = 0;
  for (int s = 1; s < streams; s++) {
    WL_CHECK(cudaMemcpy(host, copy[s], BUFFER_BYTES, cudaMemcpyDeviceToHost));
    failures += !wl_bytes_are(host, BUFFER_BYTES, iters & 0xff, "a consumer stream's copy");
  }
  printf("multistream: STREAMS=%d iters=%d: %.3f ms host time; cross-stream order check: %s\n", streams,
         iters, elapsed_ns / 1e6, failures ? "FAILED" : "ok");

  for (int s = 0; s < streams; s++) {
    WL_CHECK(cudaFree(copy[s]));
    WL_CHECK(cudaEventDestroy(done[s]));
    WL_CHECK(cudaStreamDestroy(stream[s]));
  }
  WL_CHECK(cudaFree(shared));
  free(stream), free(done), free(copy);
  return failures ? 1 : 0;
}
