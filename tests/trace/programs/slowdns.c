/*
 * A slow name resolver for test_collect_connect.py: preloaded before libtrace.so, it
 * delays every getaddrinfo() by SLOWDNS_MS milliseconds (default 2000), then forwards
 * to the next definition, as a resolver waiting on an unanswering DNS server would.
 */
#include <dlfcn.h>
#include <netdb.h>
#include <stdlib.h>
#include <time.h>

typedef int (*getaddrinfo_fn)(const char *, const char *, const struct addrinfo *,
                              struct addrinfo **);

/** getaddrinfo, SLOWDNS_MS milliseconds late. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res) {
  getaddrinfo_fn real = (getaddrinfo_fn)dlsym(RTLD_NEXT, "getaddrinfo");
  const char *ms_text = getenv("SLOWDNS_MS");
  long ms = ms_text ? atol(ms_text) : 2000;
  struct timespec delay = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&delay, NULL);
  return real ? real(node, service, hints, res) : EAI_FAIL;
}
