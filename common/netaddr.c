/* Collector addresses and the stream preamble (see netaddr.h, docs/format.md). */
#include "netaddr.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

int ct_netaddr_is_stream(const char *s) {
  return s && (!strncmp(s, "tcp:", 4) || !strncmp(s, "unix:", 5));
}

/* Parses PORT (decimal, 0..65535) into a->port. Returns 0 or -1. */
static int parse_port(const char *p, ct_netaddr *a) {
  size_t n = strlen(p);
  if (n == 0 || n > 5 || strspn(p, "0123456789") != n || atoi(p) > 65535) return -1;
  memcpy(a->port, p, n + 1);
  return 0;
}

static int parse_tcp(const char *s, ct_netaddr *a, char *err, size_t errlen) {
  const char *colon;
  if (s[0] == '[') { /* [V6ADDR]:PORT */
    const char *close = strchr(s, ']');
    if (!close || close[1] != ':' || close == s + 1) {
      snprintf(err, errlen, "tcp:%s: expected tcp:[ADDRESS]:PORT", s);
      return -1;
    }
    colon = close + 1;
    memcpy(a->host, s + 1, (size_t)(close - s - 1));
  } else {
    colon = strrchr(s, ':');
    if (colon && memchr(s, ':', (size_t)(colon - s))) {
      snprintf(err, errlen, "tcp:%s: an IPv6 address goes in brackets: tcp:[ADDRESS]:PORT", s);
      return -1;
    }
    if (colon) memcpy(a->host, s, (size_t)(colon - s));
  }
  if (colon && colon - s >= (long)sizeof a->host) {
    snprintf(err, errlen, "tcp:%.40s...: the host name is too long", s);
    return -1;
  }
  if (parse_port(colon ? colon + 1 : s, a) < 0) {
    snprintf(err, errlen, "tcp:%s: expected tcp:[HOST:]PORT with PORT from 0 to 65535", s);
    return -1;
  }
  return 0;
}

int ct_netaddr_parse(const char *s, ct_netaddr *a, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  if (!strncmp(s, "unix:", 5)) {
    a->is_unix = 1;
    size_t n = strlen(s + 5);
    if (n == 0 || n >= sizeof a->path) {
      snprintf(err, errlen, "%.200s: a unix socket path has 1 to %zu bytes", s,
               sizeof a->path - 1);
      return -1;
    }
    memcpy(a->path, s + 5, n + 1);
    return 0;
  }
  if (!strncmp(s, "tcp:", 4)) return parse_tcp(s + 4, a, err, errlen);
  snprintf(err, errlen, "'%.200s' is not tcp:[HOST:]PORT or unix:PATH", s);
  return -1;
}

/* A numeric IPv4 or IPv6 host (no scope id) with port into *out, without getaddrinfo.
 * Returns 1, or 0 when host is not such a literal. */
static int numeric_address(const char *host, const char *port, ct_sockaddr *out) {
  struct sockaddr_in in;
  struct sockaddr_in6 in6;
  memset(out, 0, sizeof *out);
  memset(&in, 0, sizeof in);
  memset(&in6, 0, sizeof in6);
  if (inet_pton(AF_INET, host, &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    in.sin_port = htons((uint16_t)atoi(port));
    memcpy(&out->ss, &in, sizeof in);
    out->len = sizeof in;
    return 1;
  }
  if (inet_pton(AF_INET6, host, &in6.sin6_addr) == 1) {
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons((uint16_t)atoi(port));
    memcpy(&out->ss, &in6, sizeof in6);
    out->len = sizeof in6;
    return 1;
  }
  return 0;
}

int ct_netaddr_is_literal(const ct_netaddr *a) {
  ct_sockaddr unused;
  return a->is_unix || !a->host[0] || numeric_address(a->host, "0", &unused);
}

int ct_netaddr_resolve(const ct_netaddr *a, int passive, ct_sockaddr *out, int max, char *err,
                       size_t errlen) {
  if (max < 1) return 0;
  if (a->is_unix) {
    struct sockaddr_un *un = (struct sockaddr_un *)&out[0].ss;
    memset(&out[0], 0, sizeof out[0]);
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, a->path, strlen(a->path) + 1);
    out[0].len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(a->path) + 1);
    return 1;
  }
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : AI_ADDRCONFIG);
  const char *host = a->host[0] ? a->host : passive ? "0.0.0.0" : "127.0.0.1";
  /* An address needs no resolver: getaddrinfo takes glibc-internal locks (AI_ADDRCONFIG's
   * interface query) that a fork during the call leaves locked in the child forever. */
  if (numeric_address(host, a->port, &out[0])) return 1;
  int rc = getaddrinfo(host, a->port, &hints, &res);
  if (rc != 0) {
    snprintf(err, errlen, "tcp:%s:%s: %s", host, a->port, gai_strerror(rc));
    return -1;
  }
  int n = 0;
  for (struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next) {
    if (ai->ai_addrlen > sizeof out[n].ss) continue;
    memset(&out[n], 0, sizeof out[n]);
    memcpy(&out[n].ss, ai->ai_addr, ai->ai_addrlen);
    out[n++].len = ai->ai_addrlen;
  }
  freeaddrinfo(res);
  if (!n) snprintf(err, errlen, "tcp:%s:%s: no usable address", host, a->port);
  return n ? n : -1;
}

void ct_sockaddr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t cap) {
  char ip[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    snprintf(buf, cap, "tcp:%s:%u", ip, (unsigned)ntohs(in->sin_port));
  } else if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    snprintf(buf, cap, "tcp:[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
  } else if (sa->sa_family == AF_UNIX) {
    const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    int n = len > off ? (int)strnlen(un->sun_path, len - off) : 0;
    snprintf(buf, cap, "unix:%.*s", n, un->sun_path);
  } else {
    snprintf(buf, cap, "family %d", (int)sa->sa_family);
  }
}

/* 1 when c may appear in a stream name as it is. */
static int name_char_ok(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-' || c == '+';
}

size_t ct_stream_preamble(char *buf, size_t cap, const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > CT_STREAM_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (!name_char_ok((unsigned char)name[i])) return 0;
  int len = snprintf(buf, cap, "%s %d %s\n", CT_STREAM_MAGIC, CT_STREAM_VERSION, name);
  return len > 0 && (size_t)len < cap ? (size_t)len : 0;
}

int ct_stream_parse_preamble(const char *line, size_t len, char *name, size_t cap, char *err,
                             size_t errlen) {
  static const char magic[] = CT_STREAM_MAGIC " ";
  size_t m = sizeof magic - 1;
  if (len < m || memcmp(line, magic, m)) {
    snprintf(err, errlen, "not a cutrace stream (no %s line)", CT_STREAM_MAGIC);
    return -1;
  }
  const char *p = line + m, *end = line + len;
  const char *sp = memchr(p, ' ', (size_t)(end - p));
  if (!sp || sp == p || strspn(p, "0123456789") != (size_t)(sp - p)) {
    snprintf(err, errlen, "malformed %s line", CT_STREAM_MAGIC);
    return -1;
  }
  long version = strtol(p, NULL, 10);
  if (version != CT_STREAM_VERSION) {
    snprintf(err, errlen, "stream framing version %ld (this cutrace reads %d)", version,
             CT_STREAM_VERSION);
    return -1;
  }
  const char *nm = sp + 1;
  size_t n = (size_t)(end - nm);
  if (n == 0 || n > CT_STREAM_NAME_MAX || cap < CT_STREAM_NAME_MAX + 1) {
    snprintf(err, errlen, "stream name of %zu bytes (1 to %d)", n, CT_STREAM_NAME_MAX);
    return -1;
  }
  for (size_t i = 0; i < n; i++) name[i] = name_char_ok((unsigned char)nm[i]) ? nm[i] : '_';
  name[n] = 0;
  if (name[0] == '.') name[0] = '_'; /* no ".", "..", no hidden file */
  if (n < 4 || strcmp(name + n - 4, ".ctr")) {
    if (n + 4 > CT_STREAM_NAME_MAX) n = CT_STREAM_NAME_MAX - 4;
    memcpy(name + n, ".ctr", 5);
  }
  return 0;
}
