/*
 * The collector behind `cutrace collect`: one listening socket and one poll() loop
 * that receives many traced processes' streams at once (docs/format.md, "Stream
 * framing") and writes each into its own file in a directory. Library code: it
 * returns errors and reports finished streams through a callback; tools/cmd_collect.c
 * prints.
 */
#ifndef CUTRACE_COLLECT_H
#define CUTRACE_COLLECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ct_collector ct_collector;

/* One stream that has ended. */
typedef struct ct_stream_end {
  const char *name;    /* the file written in the directory; "" when none was */
  const char *peer;    /* "tcp:10.0.0.2:51544", "unix pid 1234" */
  uint64_t bytes;      /* bytes written into the file */
  int closed;          /* 1 when the peer closed the connection normally */
  const char *problem; /* when not closed: why the stream was cut off; else NULL */
} ct_stream_end;

/*
 * Listens on addr ("tcp:[HOST:]PORT" or "unix:PATH"; a stale unix socket left by a
 * dead collector is replaced) and writes into dir (created, mode 0700, if missing).
 * Returns the collector, or NULL with a one-line reason in err.
 */
ct_collector *ct_collector_open(const char *addr, const char *dir, char *err, size_t errlen);

/* The address actually bound ("tcp:0.0.0.0:7878"; the port chosen when 0 was asked). */
const char *ct_collector_address(const ct_collector *c);

/*
 * Receives until *stop becomes non-zero (then it stops accepting, writes what the
 * open connections already delivered, and ends them: "collector stopped"), or, with
 * once, until at least one stream was received and none has been open for 0.5 s. poll runs with
 * sigmask (ppoll; NULL: the thread's mask), so a caller that blocks its stop signals
 * and passes the mask without them never misses one. done(arg, end) is called for
 * every stream that ends. Returns 0 when every stream was closed normally, 1 when some
 * was cut off, -1 with a reason in err when the loop itself failed.
 */
int ct_collector_run(ct_collector *c, const volatile sig_atomic_t *stop, int once,
                     const sigset_t *sigmask, void (*done)(void *arg, const ct_stream_end *end),
                     void *arg, char *err, size_t errlen);

/* Streams received so far (those that sent a valid preamble). */
uint64_t ct_collector_streams(const ct_collector *c);

/* Closes everything (a unix socket's path is removed) and frees c. */
void ct_collector_close(ct_collector *c);

#endif
