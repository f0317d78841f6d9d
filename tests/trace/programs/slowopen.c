/*
 * A slow filesystem for test_file_open.py: preloaded before libtrace.so, it delays every
 * open, openat and mkdir of a path at or under SLOWOPEN_DIR by SLOWOPEN_MS milliseconds
 * (default 2000), then forwards to the next definition, as a stalled network filesystem
 * would. Other paths (the program's, the simulator's) are not delayed.
 */
#undef _FILE_OFFSET_BITS /* open and open64 are both defined here, not one renamed */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*mkdir_fn)(const char *, mode_t);
typedef int (*mkdirat_fn)(int, const char *, mode_t);

/* Sleeps SLOWOPEN_MS when path is SLOWOPEN_DIR or lies under it. */
static void delay_if_slow(const char *path) {
  const char *dir = getenv("SLOWOPEN_DIR");
  size_t n = dir ? strlen(dir) : 0;
  if (!n || !path || strncmp(path, dir, n) != 0 || (path[n] != '/' && path[n] != 0)) return;
  const char *ms_text = getenv("SLOWOPEN_MS");
  long ms = ms_text ? atol(ms_text) : 2000;
  struct timespec delay = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&delay, &delay) != 0) {
  }
}

/* The mode argument, present when flags create a file. */
static mode_t mode_of(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

static int slow_open(const char *name, const char *path, int flags, mode_t mode) {
  delay_if_slow(path);
  open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
  return real ? real(path, flags, mode) : -1;
}

static int slow_openat(const char *name, int dirfd, const char *path, int flags, mode_t mode) {
  delay_if_slow(path);
  openat_fn real = (openat_fn)dlsym(RTLD_NEXT, name);
  return real ? real(dirfd, path, flags, mode) : -1;
}

/** open, late under SLOWOPEN_DIR. */
int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return slow_open("open", path, flags, mode);
}

/** open64, late under SLOWOPEN_DIR. */
int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return slow_open("open64", path, flags, mode);
}

/** openat, late under SLOWOPEN_DIR. */
int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return slow_openat("openat", dirfd, path, flags, mode);
}

/** openat64, late under SLOWOPEN_DIR. */
int openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return slow_openat("openat64", dirfd, path, flags, mode);
}

/** mkdir, late under SLOWOPEN_DIR. */
int mkdir(const char *path, mode_t mode) {
  delay_if_slow(path);
  mkdir_fn real = (mkdir_fn)dlsym(RTLD_NEXT, "mkdir");
  return real ? real(path, mode) : -1;
}

/** mkdirat, late under SLOWOPEN_DIR. */
int mkdirat(int dirfd, const char *path, mode_t mode) {
  delay_if_slow(path);
  mkdirat_fn real = (mkdirat_fn)dlsym(RTLD_NEXT, "mkdirat");
  return real ? real(dirfd, path, mode) : -1;
}
