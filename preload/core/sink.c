/*
 * Where the trace goes: a file in the CUTRACE_OUTPUT directory, or a stream to a
 * collector (CUTRACE_OUTPUT=tcp:HOST:PORT or unix:PATH). Either way the bytes are the
 * same (header, schema, frames); a stream first sends one preamble line naming the
 * file the collector is to write (docs/format.md, "Stream framing").
 *
 * The program's thread only names the trace (ctp_sink_name: no I/O); the writer thread
 * opens it (ctp_sink_open: creates the directory and the file and writes the header, or
 * resolves and connects to the collector and sends the preamble and the header), never
 * the program's: on a stalled network filesystem, a full disk or an unanswering
 * collector, the program's records wait in the threads' buffers meanwhile.
 *
 * The writer thread is the only one that writes after the header. A stream is sent
 * with MSG_NOSIGNAL (no SIGPIPE, whatever the thread's mask) and MSG_DONTWAIT plus
 * poll(): a collector that stops reading blocks the writer, never the program (its
 * threads' buffers fill and records are dropped and counted), and once the final
 * flush has begun (exit, exec) a deadline bounds the wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "netaddr.h"


static int stream_mode;            /* CUTRACE_OUTPUT names a collector */
static ct_netaddr target;          /* its address, parsed at start-up */
static ct_sockaddr peers[4];       /* resolved by the first writer that connects */
static int npeers;                 /* 0 until then (a fork child inherits them) */
static uint64_t exit_deadline_ns;  /* 0, or when sends give up (final flush) */
static char failure_text[440];     /* "send the trace to ADDR" */
/* Held while the writer's descriptor is created (a socket) or published (a file: the
 * open itself may be slow and fork() must not wait for it) or closed, and across fork():
 * a fork child sees the writer's descriptor in its sink, and closes its copy. */
static pthread_mutex_t descriptor_lock = PTHREAD_MUTEX_INITIALIZER;

/* One resolution per process image and the children it forks, in a page they share
 * (mapped at start-up, before any fork): a child forked while another process's
 * getaddrinfo was under way must not call getaddrinfo itself, since glibc's internal
 * locks (AI_ADDRCONFIG's interface query among them) may have been copied held, for
 * ever; it waits for that process's answer instead. */
enum { RESOLVE_IDLE, RESOLVE_BUSY, RESOLVE_DONE, RESOLVE_FAILED };
struct shared_resolve {
  int state;      /* RESOLVE_*, atomic */
  pid_t resolver; /* the process resolving (RESOLVE_BUSY) */
  int n;
  ct_sockaddr peers[4];
  char err[400];
};
static struct shared_resolve *shared;

_Static_assert(sizeof ((struct ctp_sink *)0)->stream_name == CT_STREAM_NAME_MAX + 1,
               "ctp_sink.stream_name holds a stream name");

/* A relative CUTRACE_OUTPUT means relative to the working directory at start-up. */
static void make_absolute(char *path, size_t cap) {
  if (path[0] == '/') return;
  char cwd[4096], joined[4096 + 128];
  if (!getcwd(cwd, sizeof cwd)) return;
  int n = snprintf(joined, sizeof joined, "%s/%s", cwd, path);
  if (n > 0 && (size_t)n < cap) memcpy(path, joined, (size_t)n + 1);
}

int ctp_sink_prepare(void) {
  stream_mode = ct_netaddr_is_stream(ctp_cfg.output);
  if (!stream_mode) {
    make_absolute(ctp_cfg.output, sizeof ctp_cfg.output);
    return 0;
  }
  char err[400];
  if (ct_netaddr_parse(ctp_cfg.output, &target, err, sizeof err) < 0) {
    ctp_warn("cannot use CUTRACE_OUTPUT: %s; not tracing", err);
    return -1;
  }
  /* relative to the working directory now; kept relative when too long */
  if (target.is_unix) make_absolute(target.path, sizeof target.path);
  npeers = 0; /* a name is resolved on the writer thread: it may need a slow DNS lookup */
  if (ct_netaddr_is_literal(&target)) { /* an address or a path: converted now, no I/O */
    char unused[400];
    int n = ct_netaddr_resolve(&target, 0, peers, 4, unused, sizeof unused);
    npeers = n > 0 ? n : 0; /* (never fails; 0 would resolve again on the writer thread) */
  } else { /* the page the process tree shares for that one lookup (shared_resolve) */
    void *page = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                      -1, 0);
    shared = page == MAP_FAILED ? NULL : page; /* NULL: each process resolves (as before) */
  }
  snprintf(failure_text, sizeof failure_text, "send the trace to %.400s", ctp_cfg.output);
  return 0;
}

/* mkdir -p with mode 0700 for what it creates. The directory is used by its absolute
 * path, not kept open: a program that closes every descriptor must not find one of
 * ours in use (nor we one of its own). */
static int make_output_dir(const char *path) {
  char buf[sizeof ctp_cfg.output];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0700) < 0 && errno != EEXIST) break;
    *p = '/';
  }
  struct stat st;
  if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
    ctp_warn("cannot create %s (%s); not tracing", path, strerror(errno));
    return -1;
  }
  if (stat(buf, &st) < 0) {
    ctp_warn("cannot use %s (%s); not tracing", path, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    ctp_warn("cannot use %s (not a directory); not tracing", path);
    return -1;
  }
  return 0;
}

/* Creates <base>.ctr in the output directory (or <base>.<n>.ctr when taken), base being
 * <prefix><host>.<pid>. Returns the fd or -1 after one line on stderr. */
static int create_trace_file(const char *base, pid_t pid) {
  char name[sizeof ctp_cfg.output + 512];
  int fd = -1;
  for (int n = 0; n < 1000 && fd < 0; n++) {
    if (n == 0)
      snprintf(name, sizeof name, "%s/%s.ctr", ctp_cfg.output, base);
    else
      snprintf(name, sizeof name, "%s/%s.%d.ctr", ctp_cfg.output, base, n);
    fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      ctp_warn("cannot create %s (%s); not tracing", name, strerror(errno));
      return -1;
    }
  }
  if (fd < 0)
    ctp_warn("cannot create a trace file for pid %d in %s (all names taken); not tracing",
             (int)pid, ctp_cfg.output);
  return fd;
}

/* send() of all n bytes without SIGPIPE; waits in poll() while the socket is full,
 * until limit_ns (0: no limit) or exit_deadline_ns. Returns 0, or -1 (errno). */
static int stream_send(int fd, const uint8_t *p, size_t n, uint64_t limit_ns) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w >= 0) {
      p += w;
      n -= (size_t)w;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    uint64_t dl = __atomic_load_n(&exit_deadline_ns, __ATOMIC_ACQUIRE);
    if (limit_ns && (!dl || limit_ns < dl)) dl = limit_ns;
    int ms = 100; /* a deadline set meanwhile by another thread is seen within this */
    if (dl) {
      uint64_t now = ctp_now_ns();
      if (now >= dl) {
        errno = ETIMEDOUT;
        return -1;
      }
      if (dl - now < 100000000ull) ms = (int)((dl - now) / 1000000) + 1;
    }
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    poll(&pfd, 1, ms);
  }
  return 0;
}

/* Creates a socket for addr and makes it s's descriptor, under descriptor_lock (fork). */
static int socket_for(struct ctp_sink *s, const ct_sockaddr *addr) {
  pthread_mutex_lock(&descriptor_lock);
  int fd = socket(addr->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) < 0) {
    close(fd);
    fd = -1;
  }
  if (fd >= 0) {
    s->fd = fd;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
  }
  pthread_mutex_unlock(&descriptor_lock);
  return fd;
}

/* Closes s's socket under descriptor_lock, keeping errno. */
static void socket_drop(struct ctp_sink *s) {
  int e = errno;
  pthread_mutex_lock(&descriptor_lock);
  ctp_sink_close(s);
  pthread_mutex_unlock(&descriptor_lock);
  errno = e;
}

/* A non-blocking connect of s to addr, waiting until limit_ns. Returns 0 (s->fd is the
 * connected socket), or -1 (errno; s->fd is -1). */
static int connect_one(struct ctp_sink *s, const ct_sockaddr *addr, uint64_t limit_ns) {
  int fd = socket_for(s, addr);
  if (fd < 0) return -1;
  int rc;
  while ((rc = connect(fd, (const struct sockaddr *)&addr->ss, addr->len)) < 0 &&
         errno == EAGAIN && ctp_now_ns() < limit_ns) { /* a unix listener's full backlog */
    struct timespec ms = {0, 10000000};
    nanosleep(&ms, NULL);
  }
  if (rc < 0 && errno == EAGAIN) errno = ETIMEDOUT; /* still full at the deadline */
  if (rc < 0 && errno == EINPROGRESS) {
    struct pollfd pfd = {.fd = fd, .events = POLLOUT};
    uint64_t now;
    while ((now = ctp_now_ns()) < limit_ns &&
           (rc = poll(&pfd, 1, (int)((limit_ns - now) / 1000000) + 1)) < 0 && errno == EINTR) {
    }
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (rc <= 0)
      errno = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
      errno = soerr ? soerr : errno;
    else
      rc = 0;
    if (rc > 0 || soerr) rc = -1;
  }
  if (rc < 0) {
    socket_drop(s);
    return -1;
  }
  return 0;
}

/* Resolves through the shared page: the first process of the tree to get here calls
 * getaddrinfo and publishes the answer; the others (a child forked during that call,
 * or one whose writer came second) wait for it, 2 ms per look, as long as the resolver
 * takes and its process lives. Returns what ct_netaddr_resolve does. */
static int shared_resolve(ct_sockaddr *found, char *err, size_t errlen) {
  int idle = RESOLVE_IDLE;
  if (__atomic_compare_exchange_n(&shared->state, &idle, RESOLVE_BUSY, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    shared->resolver = getpid();
    shared->n = ct_netaddr_resolve(&target, 0, shared->peers, 4, shared->err, sizeof shared->err);
    __atomic_store_n(&shared->state, shared->n > 0 ? RESOLVE_DONE : RESOLVE_FAILED,
                     __ATOMIC_RELEASE);
  }
  int state;
  while ((state = __atomic_load_n(&shared->state, __ATOMIC_ACQUIRE)) == RESOLVE_BUSY) {
    pid_t by = shared->resolver;
    if (by > 0 && by != getpid() && kill(by, 0) < 0 && errno == ESRCH) {
      snprintf(err, errlen, "%.300s: the process resolving it (pid %d) is gone", ctp_cfg.output,
               (int)by);
      return -1;
    }
    struct timespec ms2 = {0, 2000000};
    nanosleep(&ms2, NULL);
  }
  if (state != RESOLVE_DONE) {
    snprintf(err, errlen, "%s", shared->err);
    return -1;
  }
  memcpy(found, shared->peers, (size_t)shared->n * sizeof *found);
  return shared->n;
}

/* Resolves the collector's address unless this process (or the one it was forked
 * from) already did; published under descriptor_lock so a fork child sees all or none.
 * Returns 0, or -1 after one line on stderr. */
static int resolve_peers(void) {
  pthread_mutex_lock(&descriptor_lock);
  int known = npeers;
  pthread_mutex_unlock(&descriptor_lock);
  if (known > 0) return 0;
  ct_sockaddr found[4];
  char err[400];
  int n = shared ? shared_resolve(found, err, sizeof err)
                 : ct_netaddr_resolve(&target, 0, found, 4, err, sizeof err);
  if (n <= 0) {
    ctp_warn("cannot use CUTRACE_OUTPUT: %s; not tracing", err);
    return -1;
  }
  pthread_mutex_lock(&descriptor_lock);
  memcpy(peers, found, (size_t)n * sizeof *found);
  npeers = n;
  pthread_mutex_unlock(&descriptor_lock);
  return 0;
}

/* Resolves, connects, sends the preamble and the header (writer thread). Returns 0, or
 * -1 after one line on stderr. */
static int connect_stream(struct ctp_sink *s) {
  if (resolve_peers() < 0) return -1;
  uint64_t limit = ctp_now_ns() + CTP_SINK_CONNECT_TIMEOUT_NS;
  int rc = -1;
  for (int i = 0; i < npeers && rc < 0; i++) rc = connect_one(s, &peers[i], limit);
  if (rc < 0) {
    ctp_warn("cannot connect to %s: %s; not tracing", ctp_cfg.output, strerror(errno));
    return -1;
  }
  uint8_t buf[CT_STREAM_PREAMBLE_MAX + 1024];
  size_t n = ct_stream_preamble((char *)buf, CT_STREAM_PREAMBLE_MAX, s->stream_name);
  n += ct_write_file_header(buf + n, sizeof buf - n);
  if (stream_send(s->fd, buf, n, limit) < 0) {
    ctp_warn("cannot send to %s: %s; not tracing", ctp_cfg.output, strerror(errno));
    socket_drop(s);
    return -1;
  }
  return 0;
}

/* Names the stream <prefix><host>.<pid>.ctr (<prefix>host.<pid>.ctr for a host name the
 * framing does not allow: the collector sanitises that one). */
static void name_stream(struct ctp_sink *s, const char *prefix, const char *host, pid_t pid) {
  char probe[CT_STREAM_PREAMBLE_MAX];
  snprintf(s->stream_name, sizeof s->stream_name, "%s%s.%d.ctr", prefix, host, (int)pid);
  if (!ct_stream_preamble(probe, sizeof probe, s->stream_name))
    snprintf(s->stream_name, sizeof s->stream_name, "%shost.%d.ctr", prefix, (int)pid);
}

void ctp_sink_name(struct ctp_sink *s, const char *prefix, const char *host, pid_t pid) {
  s->fd = -1;
  s->stream = stream_mode;
  s->pid = pid;
  __atomic_store_n(&exit_deadline_ns, 0, __ATOMIC_RELEASE);
  if (stream_mode)
    name_stream(s, prefix, host, pid);
  else
    snprintf(s->file_base, sizeof s->file_base, "%s%s.%d", prefix, host, (int)pid);
}

/* The directory, the file and its header (writer thread). Returns 0 (s->fd published
 * under descriptor_lock), or -1 after one line on stderr. */
static int open_file(struct ctp_sink *s) {
  uint8_t hdr[1024];
  size_t n = ct_write_file_header(hdr, sizeof hdr);
  int fd = make_output_dir(ctp_cfg.output) < 0 ? -1 : create_trace_file(s->file_base, s->pid);
  if (fd >= 0 && ct_write_all(fd, hdr, n) < 0) {
    ctp_warn("cannot write a trace file in %s (%s); not tracing", ctp_cfg.output,
             strerror(errno));
    close(fd);
    fd = -1;
  }
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) < 0) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) return -1;
  pthread_mutex_lock(&descriptor_lock);
  s->fd = fd;
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  pthread_mutex_unlock(&descriptor_lock);
  return 0;
}

int ctp_sink_open(struct ctp_sink *s) { return s->stream ? connect_stream(s) : open_file(s); }

int ctp_sink_write(struct ctp_sink *s, const void *buf, size_t n) {
  if (s->stream) return stream_send(s->fd, buf, n, 0);
  return ct_write_all(s->fd, buf, n);
}

int ctp_sink_intact(const struct ctp_sink *s) {
  struct stat st;
  return s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

void ctp_sink_close(struct ctp_sink *s) {
  if (ctp_sink_intact(s)) close(s->fd);
  s->fd = -1;
}

const char *ctp_sink_failure(const struct ctp_sink *s) {
  return s->stream ? failure_text : "write the trace";
}

const char *ctp_sink_reason(const struct ctp_sink *s, int err) {
  if (s->stream && err == ETIMEDOUT && __atomic_load_n(&exit_deadline_ns, __ATOMIC_ACQUIRE))
    return "it took nothing for 5 s at exit; giving up";
  return strerror(err);
}

void ctp_sink_exit_deadline(void) {
  __atomic_store_n(&exit_deadline_ns, ctp_now_ns() + CTP_SINK_EXIT_TIMEOUT_NS, __ATOMIC_RELEASE);
}

void ctp_sink_lock(void) { pthread_mutex_lock(&descriptor_lock); }

void ctp_sink_unlock(void) { pthread_mutex_unlock(&descriptor_lock); }

