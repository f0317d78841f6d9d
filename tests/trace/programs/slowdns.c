/*
 * A slow name resolver for test_collect_connect.py: preloaded before libtrace.so, it
 * delays every getaddrinfo() by SLOWDNS_MS milliseconds (default 2000), then forwards
 * to the next definition, as a resolver waiting on an unanswering DNS server would.
 * With SLOWDNS_CALLS=FILE, each call first appends "getaddrinfo NODE\n" to FILE.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *,
                              struct addrinfo **);

/** getaddrinfo, SLOWDNS_MS milliseconds late. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res) {
  getaddrinfo_fn real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
  const char *calls = getenv("SLOWDNS_CALLS");
  if (calls) {
    int fd = open(calls, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      char line[300];
      int n = snprintf(line, sizeof line, "getaddrinfo %.200s\n", node ? node : "(null)");
      (void)!write(fd, line, n > 0 && n < (int)sizeof line ? (size_t)n : 0);
      close(fd);
    }
  }
  const char *ms_text = getenv("SLOWDNS_MS");
  long ms = ms_text ? atol(ms_text) : 2000;
  struct timespec delay = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&delay, NULL);
  return real ? real(node, service, hints, res) : EAI_FAIL;
}
