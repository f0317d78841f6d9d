/* Collector addresses and the stream preamble (netaddr.h): parsing, refusals, numeric
 * addresses, names made safe. */
#include <stdio.h>
#include <string.h>

#include "netaddr.h"

static int failures;

#define CHECK(cond, ...)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      failures++;                                                                        \
      printf("FAIL line %d: ", __LINE__);                                                \
      printf(__VA_ARGS__);                                                               \
      printf("\n");                                                                      \
    }                                                                                    \
  } while (0)

/* Parses s; checks success, and host/port/path when it should succeed. */
static void parse(const char *s, int ok, const char *host, const char *port, const char *path) {
  ct_netaddr a;
  char err[300] = "";
  int rc = ct_netaddr_parse(s, &a, err, sizeof err);
  CHECK((rc == 0) == ok, "%s: rc %d (%s)", s, rc, err);
  if (rc < 0) {
    CHECK(err[0] && !strchr(err, '\n'), "%s: one-line reason", s);
    return;
  }
  if (ok && path) CHECK(a.is_unix && !strcmp(a.path, path), "%s: path %s", s, a.path);
  if (ok && port) CHECK(!a.is_unix && !strcmp(a.host, host) && !strcmp(a.port, port),
                        "%s: host '%s' port '%s'", s, a.host, a.port);
}

/* Resolves s (a tcp address); checks that it gives one address of family with text
 * (ct_sockaddr_format) want. */
static void resolve(const char *s, int passive, const char *want) {
  ct_netaddr a;
  ct_sockaddr out[4];
  char err[300] = "", text[300] = "";
  int rc = ct_netaddr_parse(s, &a, err, sizeof err);
  int n = rc == 0 ? ct_netaddr_resolve(&a, passive, out, 4, err, sizeof err) : -1;
  if (n == 1) ct_sockaddr_format((const struct sockaddr *)&out[0].ss, out[0].len, text, sizeof text);
  CHECK(n == 1 && !strcmp(text, want), "resolve %s: %d address(es), '%s' (%s), want '%s'", s, n,
        text, err, want);
}

/* Parses s; checks ct_netaddr_is_literal. */
static void literal(const char *s, int want) {
  ct_netaddr a;
  char err[300] = "";
  int rc = ct_netaddr_parse(s, &a, err, sizeof err);
  CHECK(rc == 0 && ct_netaddr_is_literal(&a) == want, "%s: literal %d, want %d (%s)", s,
        rc == 0 ? ct_netaddr_is_literal(&a) : -1, want, err);
}

/* Parses a preamble line; checks the name it gives (NULL: refused). */
static void preamble(const char *line, const char *want) {
  char name[CT_STREAM_NAME_MAX + 1], err[300] = "";
  int rc = ct_stream_parse_preamble(line, strlen(line), name, sizeof name, err, sizeof err);
  if (!want)
    CHECK(rc < 0 && err[0], "'%s' refused (rc %d)", line, rc);
  else
    CHECK(rc == 0 && !strcmp(name, want), "'%s': name '%s' (%s), want '%s'", line,
          rc == 0 ? name : "", err, want);
}

int main(void) {
  parse("tcp:node0:7878", 1, "node0", "7878", NULL);
  parse("tcp:7878", 1, "", "7878", NULL);
  parse("tcp:10.0.0.2:0", 1, "10.0.0.2", "0", NULL);
  parse("tcp:[::1]:65535", 1, "::1", "65535", NULL);
  parse("unix:/run/ct.sock", 1, NULL, NULL, "/run/ct.sock");
  parse("unix:rel.sock", 1, NULL, NULL, "rel.sock");
  const char *bad[] = {"tcp:", "tcp:65536", "tcp:host:", "tcp:host:x1", "tcp:::1:80", "tcp:[::1]80",
                       "tcp:[]:80", "unix:", "udp:1", "/dir", "tcp:h:123456", NULL};
  for (int i = 0; bad[i]; i++) parse(bad[i], 0, NULL, NULL, NULL);
  /* addresses are converted without a resolver (a fork child may not call one) */
  literal("tcp:10.0.0.2:7878", 1);
  literal("tcp:7878", 1);
  literal("tcp:[::1]:9", 1);
  literal("unix:/run/ct.sock", 1);
  literal("tcp:localhost:7878", 0);
  literal("tcp:node0:7878", 0);
  literal("tcp:10.0.0:7878", 0); /* inet_pton refuses it: a name for getaddrinfo */
  resolve("tcp:10.0.0.2:7878", 0, "tcp:10.0.0.2:7878");
  resolve("tcp:7878", 0, "tcp:127.0.0.1:7878");
  resolve("tcp:0", 1, "tcp:0.0.0.0:0");
  resolve("tcp:[::1]:65535", 0, "tcp:[::1]:65535");
  resolve("tcp:[2001:db8::5]:80", 0, "tcp:[2001:db8::5]:80");
  char longpath[300] = "unix:";
  memset(longpath + 5, 'p', 200);
  parse(longpath, 0, NULL, NULL, NULL);
  CHECK(ct_netaddr_is_stream("tcp:1") && ct_netaddr_is_stream("unix:x") &&
            !ct_netaddr_is_stream("tcpdir") && !ct_netaddr_is_stream("/tmp/tcp:1"),
        "is_stream");

  char buf[CT_STREAM_PREAMBLE_MAX];
  size_t n = ct_stream_preamble(buf, sizeof buf, "vm.1234.ctr");
  CHECK(n == strlen("CUTRACE-STREAM 1 vm.1234.ctr\n") && !memcmp(buf, "CUTRACE-STREAM 1 vm.1234.ctr\n", n),
        "preamble written: %.*s", (int)n, buf);
  CHECK(ct_stream_preamble(buf, sizeof buf, "a/b.ctr") == 0, "a name with / is not sent");
  CHECK(ct_stream_preamble(buf, sizeof buf, "") == 0, "an empty name is not sent");
  preamble("CUTRACE-STREAM 1 vm.1234.ctr", "vm.1234.ctr");
  preamble("CUTRACE-STREAM 1 vm.1234", "vm.1234.ctr");
  preamble("CUTRACE-STREAM 1 ../../etc/passwd", "_._.._etc_passwd.ctr");
  preamble("CUTRACE-STREAM 1 ..", "_..ctr");
  preamble("CUTRACE-STREAM 1 .hidden.ctr", "_hidden.ctr");
  preamble("CUTRACE-STREAM 1 a b\xff.ctr", "a_b_.ctr");
  preamble("CUTRACE-STREAM 2 vm.1.ctr", NULL);
  preamble("CUTRACE-STREAM x vm.1.ctr", NULL);
  preamble("CUTRACE-STREAM 1 ", NULL);
  preamble("CUTRACE-STREAM 1", NULL);
  preamble("GET / HTTP/1.0", NULL);
  char line[400] = "CUTRACE-STREAM 1 ";
  memset(line + 17, 'n', 256);
  preamble(line, NULL); /* 256 bytes: one too many */
  line[17 + 255] = 0;
  n = strlen(line);
  char name[CT_STREAM_NAME_MAX + 1], err[200];
  CHECK(ct_stream_parse_preamble(line, n, name, sizeof name, err, sizeof err) == 0 &&
            strlen(name) == CT_STREAM_NAME_MAX && !strcmp(name + CT_STREAM_NAME_MAX - 4, ".ctr"),
        "a 255-byte name stays 255 bytes with .ctr");
  printf("%d failure(s)\n", failures);
  return failures != 0;
}
