/*
 * cutrace-gentrace: writes a synthetic trace with known content, for tests and
 * benchmarks: PROCESS, DEVICE, STREAM records, then N launches (API + LAUNCH + GPU)
 * on one stream, and an END record.
 * usage: cutrace-gentrace FILE N [CHUNK_BYTES]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

static int add(ct_file_writer *w, ct_record *r) {
  if (ct_file_writer_add(w, r) < 0) {
    perror("cutrace-gentrace");
    exit(1);
  }
  memset(r, 0, sizeof *r);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: cutrace-gentrace FILE N [CHUNK_BYTES]\n");
    return 2;
  }
  unsigned long long n = strtoull(argv[2], NULL, 10);
  ct_file_writer *w = ct_file_writer_open(argv[1], argc == 4 ? strtoull(argv[3], NULL, 10) : 1 << 20);
  if (!w) {
    perror(argv[1]);
    return 1;
  }
  static const char cmd[] = "./launch_loop\0" "1000";
  ct_file_writer_add_string(w, 1, "gen-host", 8);
  ct_file_writer_add_string(w, 2, cmd, sizeof cmd - 1);
  ct_file_writer_add_string(w, 3, "cutrace simulated GPU", 21);
  ct_file_writer_add_string(w, 4, "__cudaLaunchKernel", 18);
  ct_file_writer_add_string(w, 5, "_Z5emptyv", 9);
  ct_record r = {0};
  r.kind = CT_KIND_PROCESS;
  r.u.process = (struct ct_process){.pid = 4242, .ppid = 1, .start_ns = 1000000000ull,
                                    .host = 1, .cmdline = 2, .driver_version = 13000,
                                    .runtime_version = 13000};
  add(w, &r);
  r.kind = CT_KIND_DEVICE;
  r.u.device = (struct ct_device){.device = 0, .name = 3, .cc_major = 9, .sm_count = 132,
                                  .mem_bytes = 141ull << 30};
  add(w, &r);
  uint64_t t = 1000100000ull;
  for (unsigned long long i = 0; i < n; i++) {
    r.kind = CT_KIND_API;
    r.u.api = (struct ct_api){.tid = 4242, .name = 4, .begin_ns = t, .end_ns = t + 3000,
                              .corr = i + 1, .flags = CT_API_TIMED};
    add(w, &r);
    r.kind = CT_KIND_LAUNCH;
    r.u.launch = (struct ct_launch){.corr = i + 1, .kernel = 5, .grid_x = 1, .grid_y = 1,
                                    .grid_z = 1, .block_x = 32, .block_y = 1, .block_z = 1};
    add(w, &r);
    r.kind = CT_KIND_GPU;
    r.u.gpu = (struct ct_gpu){.corr = i + 1, .start_ns = t + 5000, .end_ns = t + 7000,
                              .type = CT_GPU_KERNEL, .name = 5};
    add(w, &r);
    t += 4000;
  }
  r.kind = CT_KIND_END;
  r.u.end = (struct ct_end){.records = 2 + 3 * n, .end_ns = t};
  add(w, &r);
  return ct_file_writer_close(w) < 0 ? 1 : 0;
}
