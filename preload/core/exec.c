/*
 * The exec family. A successful exec replaces this image without running exit
 * handlers, so the tracer finishes its file first: the hooks' final callbacks,
 * every buffered record, the END record. If the exec then fails, tracing resumes
 * in a new file <host>.<pid>.<n>.ctr (the hooks' GPU timing stays stopped).
 *
 * To keep failed attempts rare, the file is finished only when the target looks
 * executable (access X_OK on a regular file, PATH searched for the p variants):
 * a PATH search done by the program itself (one execve per directory) does not
 * finish the trace at each miss.
 *
 * Intercepted: execve, execv, execvp, execvpe, execl, execle, execlp, fexecve.
 * Inside glibc, the exec variants call the kernel directly, so each is wrapped
 * here and forwarded to the next definition of the same name.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static int is_executable_file(const char *path) {
  struct stat st;
  return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether exec of file would find an executable (PATH searched when search and no '/'). */
static int exec_target_ok(const char *file, int search) {
  if (!file || !*file) return 0;
  if (!search || strchr(file, '/')) return is_executable_file(file);
  const char *path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin";
  size_t flen = strlen(file);
  char buf[4096];
  for (const char *p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t dlen = end ? (size_t)(end - p) : strlen(p);
    if (dlen + flen + 2 <= sizeof buf) {
      if (dlen) memcpy(buf, p, dlen); else buf[dlen++] = '.';
      buf[dlen] = '/';
      memcpy(buf + dlen + 1, file, flen + 1);
      if (is_executable_file(buf)) return 1;
    }
    if (!end) return 0;
    p = end;
  }
}

/* Finishes the trace when this exec will probably replace the image. Returns 1 if done. */
static int before_exec(const char *file, int search) {
  if (!__atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE)) return 0;
  int saved = errno;
  int done = exec_target_ok(file, search) && ctp_exec_finish();
  errno = saved;
  return done;
}

static int after_failed_exec(int finished, int rc) {
  if (finished) {
    int saved = errno;
    ctp_exec_resume();
    errno = saved;
  }
  return rc;
}

static void *next_definition(const char *name) {
  void *fn = dlsym(RTLD_NEXT, name);
  if (!fn) errno = ENOSYS;
  return fn;
}

CTP_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  execve_fn real = (execve_fn)next_definition("execve");
  if (!real) return -1;
  int fin = before_exec(path, 0);
  return after_failed_exec(fin, real(path, argv, envp));
}

CTP_EXPORT int execv(const char *path, char *const argv[]) {
  execv_fn real = (execv_fn)next_definition("execv");
  if (!real) return -1;
  int fin = before_exec(path, 0);
  return after_failed_exec(fin, real(path, argv));
}

CTP_EXPORT int execvp(const char *file, char *const argv[]) {
  execv_fn real = (execv_fn)next_definition("execvp");
  if (!real) return -1;
  int fin = before_exec(file, 1);
  return after_failed_exec(fin, real(file, argv));
}

CTP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  execve_fn real = (execve_fn)next_definition("execvpe");
  if (!real) return -1;
  int fin = before_exec(file, 1);
  return after_failed_exec(fin, real(file, argv, envp));
}

CTP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
  fexecve_fn real = (fexecve_fn)next_definition("fexecve");
  if (!real) return -1;
  int fin = 0;
  if (__atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE)) {
    struct stat st;
    int saved = errno;
    fin = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ctp_exec_finish();
    errno = saved;
  }
  return after_failed_exec(fin, real(fd, argv, envp));
}

enum list_variant { LIST_L, LIST_LP, LIST_LE };

/* The execl family: gathers the NULL-terminated list (and envp for execle) into an argv. */
static int exec_list(enum list_variant variant, const char *file, const char *arg, va_list ap) {
  size_t n = 1;
  va_list count;
  va_copy(count, ap);
  while (va_arg(count, const char *)) n++;
  va_end(count);
  char *argv[n + 1];
  argv[0] = (char *)arg;
  for (size_t i = 1; i <= n; i++) argv[i] = va_arg(ap, char *); /* argv[n] = the NULL */
  switch (variant) {
  case LIST_LP: return execvp(file, argv);
  case LIST_LE: return execve(file, argv, va_arg(ap, char *const *));
  default: return execv(file, argv);
  }
}

CTP_EXPORT int execl(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(LIST_L, path, arg, ap);
  va_end(ap);
  return rc;
}

CTP_EXPORT int execlp(const char *file, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(LIST_LP, file, arg, ap);
  va_end(ap);
  return rc;
}

CTP_EXPORT int execle(const char *path, const char *arg, ...) {
  va_list ap;
  va_start(ap, arg);
  int rc = exec_list(LIST_LE, path, arg, ap);
  va_end(ap);
  return rc;
}
