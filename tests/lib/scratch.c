/* Scratch directories of the C tests (see scratch.h). */
#define _XOPEN_SOURCE 700
#include "scratch.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ct_scratch_dir(const char *prefix, char *buf, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  int n = snprintf(buf, cap, "%s/%sXXXXXX", tmp, prefix);
  if (n < 0 || (size_t)n >= cap) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  return mkdtemp(buf);
}

/* nftw callback: removes one entry (children come first: FTW_DEPTH). */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st, (void)type, (void)ftw;
  return remove(path);
}

int ct_scratch_done(const char *dir, int passed) {
  const char *keep = getenv("CUTRACE_KEEP_TMP");
  if (!passed || (keep && strcmp(keep, "1") == 0)) {
    fprintf(stderr, "scratch directory kept: %s\n", dir);
    return 0;
  }
  return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}
