/*
 * Fuzz target for the trace reader: any byte string must be read without a crash,
 * a hang or a leak, returning whatever records it holds. Build with -Dfuzz=true and
 * CC=clang for libFuzzer; otherwise it is a replayer: fuzz_reader FILE... reads each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[] = "/tmp/ct-fuzz-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 0;
  if (write(fd, data, size) != (ssize_t)size) {
    close(fd);
    unlink(path);
    return 0;
  }
  close(fd);
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  if (r) {
    ct_record rec;
    /* half the inputs also skip some kinds undecoded (the input's last byte picks which) */
    if (size && (data[size - 1] & 1)) ct_reader_skip_kinds(r, (uint64_t)data[size - 1] << 1);
    while (ct_reader_next(r, &rec)) {
      if (rec.kind == CT_KIND_API) (void)ct_reader_string(r, rec.u.api.name, NULL);
    }
    (void)ct_reader_status(r);
    ct_reader_close(r);
  }
  unlink(path);
  return 0;
}

#ifdef CT_FUZZ_STANDALONE
int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    static uint8_t buf[1 << 24];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
  }
  return 0;
}
#endif
