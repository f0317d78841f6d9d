/* Helpers shared by the NVTX test drivers (see nvtx_check.h). */
#include "nvtx_check.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

int check_run(const char *const env[], char *const argv[], int *child_pid) {
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; env[i]; i++) {
      const char *eq = strchr(env[i], '=');
      if (!eq) {
        unsetenv(env[i]);
        continue;
      }
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
      setenv(name, eq + 1, 1);
    }
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  if (child_pid) *child_pid = (int)pid;
  return status;
}

int check_list_traces(const char *dir, char (*paths)[4096], int cap) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len <= 4 || strcmp(e->d_name + len - 4, ".ctr") != 0) continue;
    if (n < cap) snprintf(paths[n], sizeof paths[n], "%s/%s", dir, e->d_name);
    n++;
  }
  if (d) closedir(d);
  return n;
}
