/*
 * Collector addresses and the stream preamble, shared by the preload (which connects
 * and sends) and `cutrace collect` (which listens and receives). docs/format.md,
 * "Stream framing", is the specification.
 *
 *   tcp:HOST:PORT   tcp:[V6ADDR]:PORT   tcp:PORT (host omitted)   unix:PATH
 */
#ifndef CUTRACE_NETADDR_H
#define CUTRACE_NETADDR_H

#include <stddef.h>
#include <sys/socket.h>

/* The preamble's first word and the version of the framing. */
#define CT_STREAM_MAGIC "CUTRACE-STREAM"
#define CT_STREAM_VERSION 1
/* Longest preamble line, '\n' included; a longer one is refused. */
#define CT_STREAM_PREAMBLE_MAX 512
/* Longest stream name (the file name the collector writes). */
#define CT_STREAM_NAME_MAX 255

/* A parsed collector address. */
typedef struct ct_netaddr {
  int is_unix;    /* 1: unix:PATH, 0: tcp */
  char host[256]; /* tcp: name or numeric address, without brackets; "" when omitted */
  char port[8];   /* tcp: decimal port, 0..65535 */
  char path[108]; /* unix: the socket's path (what sun_path holds) */
} ct_netaddr;

/* One resolved socket address. */
typedef struct ct_sockaddr {
  struct sockaddr_storage ss;
  socklen_t len;
} ct_sockaddr;

/* 1 when s names a collector ("tcp:..." or "unix:..."), 0 when it is a directory. */
int ct_netaddr_is_stream(const char *s);

/* Parses s. Returns 0, or -1 with a one-line reason in err. */
int ct_netaddr_parse(const char *s, ct_netaddr *a, char *err, size_t errlen);

/*
 * Resolves a into at most max socket addresses (an omitted host is 0.0.0.0 when
 * passive, else 127.0.0.1; a numeric IPv4 or IPv6 address is converted directly, one
 * address; a name goes through getaddrinfo). Returns how many, or -1 with a one-line
 * reason in err.
 */
int ct_netaddr_resolve(const ct_netaddr *a, int passive, ct_sockaddr *out, int max, char *err,
                       size_t errlen);

/* 1 when ct_netaddr_resolve(a, ...) needs no getaddrinfo (a unix path, an omitted
 * host, a numeric IPv4 or IPv6 address): it is then a pure conversion, no I/O. */
int ct_netaddr_is_literal(const ct_netaddr *a);

/* "tcp:HOST:PORT" / "unix:PATH" of a socket address (a peer's or a bound one). */
void ct_sockaddr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t cap);

/*
 * Writes the preamble "CUTRACE-STREAM 1 NAME\n" into buf. Returns its length, or 0
 * when NAME is empty, too long, or holds a byte outside [A-Za-z0-9._+-].
 */
size_t ct_stream_preamble(char *buf, size_t cap, const char *name);

/*
 * Parses a preamble line (len bytes, without its '\n') and writes the stream's file
 * name into name (cap >= CT_STREAM_NAME_MAX + 1), made safe: bytes outside
 * [A-Za-z0-9._+-] become '_', a leading '.' becomes '_', ".ctr" is appended when
 * missing. Returns 0, or -1 with a one-line reason in err.
 */
int ct_stream_parse_preamble(const char *line, size_t len, char *name, size_t cap, char *err,
                             size_t errlen);

#endif
