/*
 * The collector (see collect.h): a listening socket, one poll() loop, one connection
 * per traced process. Each connection first sends a preamble line naming its file
 * (common/netaddr.h); everything after it is written, as it arrives, into that file,
 * created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600 (a name already taken gets .1,
 * .2, ... before .ctr, as the preload itself does). Nothing received is held back: a
 * stream cut off is a file truncated where the bytes stopped, which the readers read
 * up to the damage.
 */
#include "collect.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "netaddr.h"

#define PREAMBLE_TIMEOUT_S 30 /* a connection that names no file by then is dropped */
#define READ_BYTES (256 * 1024)
/* --once: how long no stream may be open before the collector ends (a process whose
 * exec failed, a fork child that records late: each reconnects within this). */
#define ONCE_LINGER_MS 500

struct conn {
  int fd, file;                       /* file: -1 until the preamble is read */
  char name[CT_STREAM_NAME_MAX + 16]; /* the file's name in the directory */
  char peer[160];
  char pre[CT_STREAM_PREAMBLE_MAX];   /* the preamble, while it is incomplete */
  size_t pre_len;
  uint64_t bytes;
  time_t accepted;
};

struct ct_collector {
  int lfd, dfd;               /* listening socket, output directory */
  char bound[200];            /* the bound address, formatted */
  char unix_path[108];        /* removed at close when it is still our socket */
  dev_t unix_dev;
  ino_t unix_ino;
  struct conn *conns;
  size_t nconns, cap;
  uint64_t streams, broken;
  uint8_t *buf;
  time_t accept_paused; /* out of descriptors: accept nothing until this second passed */
};

/* Binds a unix socket, replacing a stale one (a socket nobody listens on). */
static int bind_unix(int fd, const ct_sockaddr *sa, const char *path) {
  if (bind(fd, (const struct sockaddr *)&sa->ss, sa->len) == 0) return 0;
  if (errno != EADDRINUSE) return -1;
  struct stat st;
  if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
    errno = EADDRINUSE;
    return -1;
  }
  int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int live = probe >= 0 && connect(probe, (const struct sockaddr *)&sa->ss, sa->len) == 0;
  if (probe >= 0) close(probe);
  if (live) {
    errno = EADDRINUSE;
    return -1;
  }
  unlink(path);
  return bind(fd, (const struct sockaddr *)&sa->ss, sa->len);
}

static int listen_on(ct_collector *c, const char *addr, char *err, size_t errlen) {
  ct_netaddr a;
  ct_sockaddr sa;
  if (ct_netaddr_parse(addr, &a, err, errlen) < 0) return -1;
  if (ct_netaddr_resolve(&a, 1, &sa, 1, err, errlen) < 0) return -1;
  c->lfd = socket(sa.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (c->lfd >= 0 && !a.is_unix) setsockopt(c->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (c->lfd < 0 || (a.is_unix ? bind_unix(c->lfd, &sa, a.path)
                               : bind(c->lfd, (struct sockaddr *)&sa.ss, sa.len)) < 0 ||
      listen(c->lfd, 512) < 0) {
    snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(errno));
    return -1;
  }
  struct stat st;
  if (a.is_unix && stat(a.path, &st) == 0) {
    snprintf(c->unix_path, sizeof c->unix_path, "%s", a.path);
    c->unix_dev = st.st_dev;
    c->unix_ino = st.st_ino;
  }
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  if (getsockname(c->lfd, (struct sockaddr *)&ss, &len) == 0 && !a.is_unix)
    ct_sockaddr_format((struct sockaddr *)&ss, len, c->bound, sizeof c->bound);
  else
    snprintf(c->bound, sizeof c->bound, "%s", addr);
  return 0;
}

ct_collector *ct_collector_open(const char *addr, const char *dir, char *err, size_t errlen) {
  ct_collector *c = calloc(1, sizeof *c);
  if (!c || !(c->buf = malloc(READ_BYTES))) {
    snprintf(err, errlen, "out of memory");
    free(c);
    return NULL;
  }
  c->lfd = c->dfd = -1;
  if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
    snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
  } else if ((c->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
    snprintf(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
  } else if (listen_on(c, addr, err, errlen) == 0) {
    struct rlimit rl; /* two descriptors per stream: allow as many as the system does */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
    return c;
  }
  ct_collector_close(c);
  return NULL;
}

const char *ct_collector_address(const ct_collector *c) { return c->bound; }

uint64_t ct_collector_streams(const ct_collector *c) { return c->streams; }

/* Creates the stream's file: its own name, else NAME-without-.ctr.N.ctr. */
static int create_file(ct_collector *c, struct conn *k, const char *name) {
  size_t stem = strlen(name) - 4; /* names end in .ctr (ct_stream_parse_preamble) */
  for (int n = 0; n < 10000; n++) {
    if (n == 0)
      snprintf(k->name, sizeof k->name, "%s", name);
    else
      snprintf(k->name, sizeof k->name, "%.*s.%d.ctr", (int)stem, name, n);
    k->file = openat(c->dfd, k->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (k->file >= 0 || errno != EEXIST) break;
  }
  return k->file;
}

/* Ends connection i: closes it and its file, reports it, removes it from the list. */
static void end_conn(ct_collector *c, size_t i, int closed, const char *problem,
                     void (*done)(void *, const ct_stream_end *), void *arg) {
  struct conn *k = &c->conns[i];
  if (k->file < 0 && closed && !k->pre_len) problem = "closed before naming a file";
  else if (k->file < 0 && closed) problem = "closed inside its preamble";
  if (problem) closed = 0;
  if (k->file >= 0 && !closed) c->broken++;
  ct_stream_end e = {k->file >= 0 ? k->name : "", k->peer, k->bytes, closed, problem};
  close(k->fd);
  if (k->file >= 0) close(k->file);
  if (done) done(arg, &e);
  c->conns[i] = c->conns[--c->nconns];
}

/* Takes n received bytes of connection k: the preamble first, then the file. Returns
 * NULL, or why the stream must end (the reason lives in k->pre). */
static const char *take(ct_collector *c, struct conn *k, const uint8_t *p, size_t n) {
  if (k->file < 0) {
    size_t room = sizeof k->pre - k->pre_len, m = n < room ? n : room;
    memcpy(k->pre + k->pre_len, p, m);
    k->pre_len += m;
    p += m;
    n -= m;
    char *nl = memchr(k->pre, '\n', k->pre_len);
    if (!nl) return k->pre_len == sizeof k->pre ? "not a cutrace stream (no preamble line)" : NULL;
    size_t line = (size_t)(nl - k->pre), extra = k->pre_len - line - 1;
    char name[CT_STREAM_NAME_MAX + 1], why[200];
    if (ct_stream_parse_preamble(k->pre, line, name, sizeof name, why, sizeof why) < 0) {
      snprintf(k->pre, sizeof k->pre, "%s", why);
      return k->pre;
    }
    if (create_file(c, k, name) < 0) {
      snprintf(k->pre, sizeof k->pre, "%s: cannot create: %s", name, strerror(errno));
      return k->pre;
    }
    c->streams++;
    if (extra && ct_write_all(k->file, (const uint8_t *)nl + 1, extra) < 0) goto fail;
    k->bytes += extra;
  }
  if (n && ct_write_all(k->file, p, n) < 0) goto fail;
  k->bytes += n;
  return NULL;
fail:
  snprintf(k->pre, sizeof k->pre, "%s: cannot write: %s", k->name, strerror(errno));
  return k->pre;
}

/* Accepts every pending connection. */
static void accept_all(ct_collector *c) {
  for (;;) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(c->lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && errno == EINTR) continue;
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) c->accept_paused = time(NULL);
      return;
    }
    if (c->nconns == c->cap) {
      size_t cap = c->cap ? c->cap * 2 : 16;
      struct conn *g = realloc(c->conns, cap * sizeof *g);
      if (!g) {
        close(fd);
        return;
      }
      c->conns = g;
      c->cap = cap;
    }
    struct conn *k = &c->conns[c->nconns++];
    memset(k, 0, sizeof *k);
    k->fd = fd;
    k->file = -1;
    k->accepted = time(NULL);
    struct ucred cr;
    socklen_t cl = sizeof cr;
    if (ss.ss_family != AF_UNIX) {
      /* A sender whose host died never closes: keepalive ends such a stream in ~2 min. */
      int on = 1, idle = 60, intvl = 10, cnt = 6;
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
      ct_sockaddr_format((struct sockaddr *)&ss, len, k->peer, sizeof k->peer);
    }
    else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0)
      snprintf(k->peer, sizeof k->peer, "unix pid %d", (int)cr.pid);
    else
      snprintf(k->peer, sizeof k->peer, "unix socket");
  }
}

/* Reads what connection i has (drain: until there is nothing more). Returns 1 when
 * the connection ended (it is then removed). */
static int serve(ct_collector *c, size_t i, int drain, void (*done)(void *, const ct_stream_end *),
                 void *arg) {
  for (unsigned reads = 0;; reads++) { /* a stop drains at most 64 MiB per connection */
    ssize_t r = drain && reads >= 256 ? (errno = EAGAIN, -1)
                                      : read(c->conns[i].fd, c->buf, READ_BYTES);
    const char *why = NULL;
    if (r > 0 && !(why = take(c, &c->conns[i], c->buf, (size_t)r))) {
      if (drain) continue;
      return 0;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !drain) return 0;
    if (r < 0 && !why) why = errno == EAGAIN || errno == EWOULDBLOCK ? "collector stopped"
                                                                      : strerror(errno);
    end_conn(c, i, r == 0, why, done, arg);
    return 1;
  }
}

int ct_collector_run(ct_collector *c, const volatile sig_atomic_t *stop, int once,
                     const sigset_t *sigmask, void (*done)(void *arg, const ct_stream_end *end),
                     void *arg, char *err, size_t errlen) {
  struct pollfd *pfds = NULL;
  size_t pcap = 0;
  int rc = 0;
  uint64_t idle_since = 0; /* --once: when the last open stream ended */
  while (!*stop) {
    struct timespec tick = {1, 0};
    if (once && c->streams && !c->nconns) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      uint64_t now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
      if (!idle_since) idle_since = now_ms;
      if (now_ms - idle_since >= ONCE_LINGER_MS) break;
      tick = (struct timespec){0, (long)(ONCE_LINGER_MS - (now_ms - idle_since)) * 1000000};
    } else {
      idle_since = 0;
    }
    size_t n = c->nconns + 1;
    if (n > pcap) {
      struct pollfd *g = realloc(pfds, n * 2 * sizeof *g);
      if (!g) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
        break;
      }
      pfds = g;
      pcap = n * 2;
    }
    time_t now = time(NULL);
    pfds[0] = (struct pollfd){.fd = now > c->accept_paused ? c->lfd : -1, .events = POLLIN};
    for (size_t i = 1; i < n; i++) pfds[i] = (struct pollfd){.fd = c->conns[i - 1].fd, .events = POLLIN};
    if (ppoll(pfds, n, &tick, sigmask) < 0) {
      if (errno == EINTR) continue;
      snprintf(err, errlen, "poll: %s", strerror(errno));
      rc = -1;
      break;
    }
    now = time(NULL);
    /* From the end: ending connection i moves the last one, already served, into i. */
    for (size_t i = n - 1; i-- > 0;) {
      if (pfds[i + 1].revents)
        serve(c, i, 0, done, arg);
      else if (c->conns[i].file < 0 && now - c->conns[i].accepted > PREAMBLE_TIMEOUT_S)
        end_conn(c, i, 0, "named no file within 30 s", done, arg);
    }
    if (pfds[0].revents) accept_all(c);
  }
  for (size_t i = c->nconns; i-- > 0;) serve(c, i, 1, done, arg);
  free(pfds);
  return rc < 0 ? -1 : c->broken ? 1 : 0;
}

void ct_collector_close(ct_collector *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nconns; i++) {
    close(c->conns[i].fd);
    if (c->conns[i].file >= 0) close(c->conns[i].file);
  }
  struct stat st;
  if (c->unix_path[0] && stat(c->unix_path, &st) == 0 && st.st_dev == c->unix_dev &&
      st.st_ino == c->unix_ino)
    unlink(c->unix_path);
  if (c->lfd >= 0) close(c->lfd);
  if (c->dfd >= 0) close(c->dfd);
  free(c->conns);
  free(c->buf);
  free(c);
}
