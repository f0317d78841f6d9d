/*
 * The line a traced process that ended without using CUDA (and so without a trace
 * file: start.c) adds to CUTRACE_OUTPUT/.nocuda, so that `cutrace record` can say how
 * many processes ran without CUDA and `cutrace info` which (include/cutrace/nocuda.h).
 *
 * The append is the tracer's I/O, so it runs on a short-lived thread of its own (all
 * signals blocked) and the exiting program waits for that I/O at most 1 s (as a fatal
 * signal's flush waits, signals.c): on a local disk it takes tens of microseconds; a
 * stalled network filesystem costs the program that bound, once, and the line is then
 * written only if the thread finishes before the process is gone. The second counts
 * from when the thread begins its open, not from its creation, and is not shorter
 * because the I/O of a line competes for the CPU too: 200 idle fork children exiting
 * together on a 2-core VM at load 20-40 (tests/trace/test_forkstorm.py) took up to
 * 107 ms from the open to the close, and lost 30-65% of their lines to a 100 ms bound;
 * a line lost to the scheduler would make the count wrong where nothing stalled (at
 * most 5 s in all, whatever happens). The directory is never created for it: no trace
 * directory, no count.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "cutrace/nocuda.h"
#include "netaddr.h"

#define NOCUDA_IO_WAIT_NS 1000000000ull   /* for the open, write and close */
#define NOCUDA_MOST_WAIT_NS 5000000000ull  /* for the thread in all */

struct nocuda_note {
  char path[sizeof ctp_cfg.output + sizeof CT_NOCUDA_FILE + 1];
  char line[CT_NOCUDA_LINE_BYTES];
  uint64_t io_begin_ns; /* when the thread began its I/O (0: not yet running) */
};

static struct nocuda_note note; /* static: a thread left running past the wait still reads it */

static void *append_line(void *arg) {
  struct nocuda_note *n = arg;
  __atomic_store_n(&n->io_begin_ns, ctp_now_ns(), __ATOMIC_RELEASE);
  int fd = open(n->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ssize_t w;
    do w = write(fd, n->line, sizeof n->line); /* one write: O_APPEND keeps lines whole */
    while (w < 0 && errno == EINTR);
    close(fd);
  }
  return NULL;
}

/* The line: pid, ppid, the executable's base name (blanks and control bytes as '_'). */
static void format_line(char *line, pid_t pid, pid_t ppid, const char *exe) {
  const char *slash = exe ? strrchr(exe, '/') : NULL;
  const char *base = slash ? slash + 1 : (exe && *exe ? exe : "?");
  char name[CT_NOCUDA_NAME_MAX + 1];
  size_t len = 0;
  for (; base[len] && len < CT_NOCUDA_NAME_MAX; len++)
    name[len] = (unsigned char)base[len] <= ' ' || base[len] == 0x7f ? '_' : base[len];
  name[len] = 0;
  char buf[CT_NOCUDA_LINE_BYTES + 1];
  snprintf(buf, sizeof buf, "%-10d %-10d %-*s", (int)pid, (int)ppid, CT_NOCUDA_NAME_MAX, name);
  memcpy(line, buf, CT_NOCUDA_LINE_BYTES - 1);
  line[CT_NOCUDA_LINE_BYTES - 1] = '\n';
}

/* Joins the thread: at most NOCUDA_IO_WAIT_NS after it began its I/O, at most
 * NOCUDA_MOST_WAIT_NS after created_ns. Returns 1 when joined. */
static int wait_for(pthread_t thread, uint64_t created_ns) {
  for (;;) {
    uint64_t begun = __atomic_load_n(&note.io_begin_ns, __ATOMIC_ACQUIRE);
    uint64_t until = begun ? begun + NOCUDA_IO_WAIT_NS : ctp_now_ns() + NOCUDA_IO_WAIT_NS;
    if (until > created_ns + NOCUDA_MOST_WAIT_NS) until = created_ns + NOCUDA_MOST_WAIT_NS;
    /* pthread_timedjoin_np (CLOCK_REALTIME), not pthread_clockjoin_np: ThreadSanitizer
     * does not see the latter's join and reports the thread as leaked */
    uint64_t now = ctp_now_ns(), left = until > now ? until - now : 0;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    uint64_t ns = (uint64_t)deadline.tv_nsec + left;
    deadline.tv_sec += (time_t)(ns / 1000000000ull);
    deadline.tv_nsec = (long)(ns % 1000000000ull);
    if (pthread_timedjoin_np(thread, NULL, &deadline) == 0) return 1;
    if (begun || ctp_now_ns() >= created_ns + NOCUDA_MOST_WAIT_NS) return 0;
    /* not begun when the wait ran out: it waited for a CPU, not for I/O; once more */
  }
}

void ctp_nocuda_note(pid_t pid, pid_t ppid, const char *exe) {
  if (ct_netaddr_is_stream(ctp_cfg.output)) return; /* a collector: no connection, no count */
  int saved = errno;
  snprintf(note.path, sizeof note.path, "%s/%s", ctp_cfg.output, CT_NOCUDA_FILE);
  note.io_begin_ns = 0;
  format_line(note.line, pid, ppid, exe);
  pthread_attr_t attr;
  pthread_t thread;
  sigset_t all, old;
  sigfillset(&all);
  int made = pthread_attr_init(&attr) == 0;
  if (made) pthread_attr_setstacksize(&attr, 64 * 1024); /* open, write, close: little stack */
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&thread, made ? &attr : NULL, append_line, &note);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (made) pthread_attr_destroy(&attr);
  if (rc == 0 && !wait_for(thread, ctp_now_ns()))
    pthread_detach(thread); /* stalled: the process ends without waiting longer */
  errno = saved;
}
