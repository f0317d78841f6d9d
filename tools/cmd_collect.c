/*
 * cutrace collect: receives the traces that processes stream to it
 * (CUTRACE_OUTPUT=tcp:HOST:PORT or unix:PATH) and writes each into DIR, one
 * <host>.<pid>.ctr file per process, as the preload would have (tools/collect.c).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "collect.h"
#include "commands.h"

#define DEFAULT_LISTEN "tcp:0.0.0.0:7878"

static const char usage[] =
    "usage: cutrace collect [-o DIR] [--listen ADDR] [--once] [-q]\n"
    "  Receives the traces of processes run with CUTRACE_OUTPUT=ADDR (or cutrace record\n"
    "  --collector ADDR), from any number of hosts at once, and writes each process's\n"
    "  trace into DIR/<host>.<pid>.ctr as it arrives. Prints one line per finished\n"
    "  stream. SIGINT or SIGTERM: writes what was received, closes every file, exits.\n"
    "  -o DIR         where the traces go (default cutrace.data; created if missing)\n"
    "  --listen ADDR  tcp:[HOST:]PORT or unix:PATH (default " DEFAULT_LISTEN ");\n"
    "                 port 0 picks a free port (printed on the first line)\n"
    "  --once         exit once a stream was received and none was open for 0.5 s\n"
    "  -q             print nothing but errors\n"
    "  Exit status: 0 every stream ended normally, 1 some stream was cut off,\n"
    "  2 usage error or the address cannot be listened on.\n";

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* "3.1 MiB", "512 B". */
static void format_bytes(uint64_t n, char *buf, size_t cap) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) {
    snprintf(buf, cap, "%llu B", (unsigned long long)n);
    return;
  }
  double x = (double)n / 1024;
  int u = 0;
  while (x >= 1024 && u < 3) {
    x /= 1024;
    u++;
  }
  snprintf(buf, cap, "%.1f %s", x, units[u]);
}

/* One line per finished stream (stdout), unless -q. */
static void on_stream_end(void *arg, const ct_stream_end *e) {
  if (*(const int *)arg) return;
  char size[32];
  format_bytes(e->bytes, size, sizeof size);
  if (e->name[0])
    printf("collect: %s from %s: %s, %s%s\n", e->name, e->peer, size,
           e->closed ? "closed" : "cut off: ", e->closed ? "" : e->problem);
  else
    printf("collect: connection from %s dropped: %s\n", e->peer, e->problem);
  fflush(stdout);
}

int cmd_collect(int argc, char **argv) {
  const char *dir = "cutrace.data", *listen = DEFAULT_LISTEN;
  int once = 0, quiet = 0;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(argv[i], "--once")) {
      once = 1;
    } else if (!strcmp(argv[i], "-q")) {
      quiet = 1;
    } else if (!strcmp(argv[i], "-o") && i + 1 < argc && argv[i + 1][0]) {
      dir = argv[++i];
    } else if (!strcmp(argv[i], "--listen") && i + 1 < argc && argv[i + 1][0]) {
      listen = argv[++i];
    } else if (!strcmp(argv[i], "--listen=")) {
      return cli_missing_value("collect", "--listen");
    } else if (!strncmp(argv[i], "--listen=", 9)) {
      listen = argv[i] + 9;
    } else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--listen")) {
      return cli_missing_value("collect", argv[i]);
    } else if (cli_attached_short_value("collect", argv[i], "-o")) {
      return 2;
    } else {
      fprintf(stderr, "cutrace collect: %s '%s' (try: cutrace collect --help)\n",
              argv[i][0] == '-' ? "unknown option" : "unexpected argument", argv[i]);
      return 2;
    }
  }
  char err[600];
  ct_collector *c = ct_collector_open(listen, dir, err, sizeof err);
  if (!c) {
    fprintf(stderr, "cutrace collect: %s\n", err);
    return 2;
  }
  /* SIGINT/SIGTERM are blocked except inside the poll, so none is missed. */
  sigset_t stops, old;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  sigprocmask(SIG_BLOCK, &stops, &old);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t poll_mask = old;
  sigdelset(&poll_mask, SIGINT);
  sigdelset(&poll_mask, SIGTERM);
  if (!quiet) {
    printf("collect: listening on %s, writing into %s\n", ct_collector_address(c), dir);
    fflush(stdout);
  }
  int rc = ct_collector_run(c, &stop_requested, once, &poll_mask, on_stream_end, &quiet, err,
                            sizeof err);
  if (rc < 0) fprintf(stderr, "cutrace collect: %s\n", err);
  if (!quiet)
    printf("collect: %llu stream(s) received%s\n", (unsigned long long)ct_collector_streams(c),
           stop_requested ? "; stopped by a signal" : "");
  ct_collector_close(c);
  return rc < 0 ? 2 : rc;
}
