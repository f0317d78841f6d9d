/* Helpers shared by the NVTX test drivers (see nvtx_check.h). */
#include "nvtx_check.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

int check_failures;

void check_copy_string(const ct_reader *r, uint64_t id, char *out, size_t cap) {
  size_t len = 0;
  const char *s = id ? ct_reader_string(r, id, &len) : "";
  if (!s) s = "?", len = 1;
  if (len >= cap) len = cap - 1;
  memcpy(out, s, len);
  out[len] = '\0';
}

void check_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4096];
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}
