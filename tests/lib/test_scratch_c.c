/*
 * Driver of test_scratch.py for the C tests' scratch directories: makes one with
 * ct_scratch_dir("ct-scratch-"), fills it (a file and a subdirectory with a file)
 * and ends it with ct_scratch_done(dir, argv[1] is "pass"). Exit 0 when every step
 * succeeded, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "scratch.h"

/* Writes one short file at dir/name; returns 0 on success. */
static int put(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs("x\n", f);
  return fclose(f);
}

int main(int argc, char **argv) {
  char dir[4096], sub[4200];
  if (argc != 2 || !ct_scratch_dir("ct-scratch-", dir, sizeof dir)) return 1;
  snprintf(sub, sizeof sub, "%s/sub", dir);
  if (put(dir, "a") || mkdir(sub, 0700) || put(sub, "b")) return 1;
  return ct_scratch_done(dir, strcmp(argv[1], "pass") == 0) == 0 ? 0 : 1;
}
