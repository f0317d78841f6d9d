/*
 * Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT): the
 * handler asks the writer thread to write every record so far (it waits up to
 * 1 s, using only async-signal-safe calls: sem_post, nanosleep, atomics), then
 * hands the signal to what the program had installed before the tracer: its
 * handler, or the default action (re-raised). The trace then ends at its last
 * whole frame, without an END record.
 *
 * A handler the program installs after the tracer started replaces this one
 * (sigaction/signal are not intercepted); the trace then loses at most the last
 * CUTRACE_FLUSH_MS of records on a crash.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "core.h"

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
static struct sigaction previous[NSIG];
static int in_handler;

static void on_fatal_signal(int sig, siginfo_t *info, void *ucontext) {
  int saved = errno;
  if (!__atomic_exchange_n(&in_handler, 1, __ATOMIC_ACQ_REL)) {
    ctp_writer_urgent_flush(1000);
    __atomic_store_n(&in_handler, 0, __ATOMIC_RELEASE);
  }
  const struct sigaction *prev = &previous[sig];
  if (prev->sa_flags & SA_SIGINFO) {
    prev->sa_sigaction(sig, info, ucontext);
  } else if (prev->sa_handler == SIG_IGN) {
    /* the program ignored it before the tracer came: keep ignoring */
  } else if (prev->sa_handler == SIG_DFL) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    raise(sig); /* pending until this handler returns, then the default action */
  } else {
    prev->sa_handler(sig);
  }
  errno = saved;
}

void ctp_signals_install(void) {
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
    int sig = fatal_signals[i];
    struct sigaction old;
    if (sigaction(sig, NULL, &old) < 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    previous[sig] = old;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_fatal_signal;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaction(sig, &act, NULL);
  }
}
