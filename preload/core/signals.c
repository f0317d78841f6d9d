/*
 * Fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT): the
 * handler asks the writer thread to write every record so far and waits up to
 * 1 s, using only async-signal-safe calls (sem_post, nanosleep, atomics), then
 * hands the signal to the program's own disposition: its handler, or the default
 * action (restored and re-raised). The trace then ends at its last whole frame,
 * without an END record.
 *
 * So that a handler the program installs later does not silently replace the
 * tracer's, sigaction, signal and bsd_signal are intercepted for these signals:
 * the program's handler, mask and flags are remembered as "the program's
 * disposition" (and returned as the old action, so the program sees exactly what
 * it set), while the kernel keeps the tracer's handler with the program's mask and
 * SA_ONSTACK / SA_RESTART / SA_NODEFER flags; SA_RESETHAND is emulated. SIG_IGN is
 * passed to the kernel for real (an ignored signal stays ignored across exec) and
 * the tracer lets go of that signal. Other signals are forwarded untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "core.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
static struct sigaction program_action[NSIG]; /* what the program believes is installed */
static int owned[NSIG];                       /* the kernel has the tracer's handler */
static int in_flush;
static sigaction_fn real_sigaction_fn;

/* The next sigaction after this library's (resolved once, outside signal handlers).
 * CTP_NO_SANITIZE, like the exported entry points below: ThreadSanitizer's runtime takes
 * our sigaction and signal as its "real" ones (dlsym(RTLD_NEXT) from libtsan) and
 * calls them while it initialises, before instrumented code may run. */
CTP_NO_SANITIZE static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  sigaction_fn fn = __atomic_load_n(&real_sigaction_fn, __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    if (!fn) {
      errno = ENOSYS;
      return -1;
    }
    __atomic_store_n(&real_sigaction_fn, fn, __ATOMIC_RELEASE);
  }
  return fn(sig, act, old);
}

static void on_fatal_signal(int sig, siginfo_t *info, void *ucontext);

/* The kernel-level action: the tracer's handler with the program's mask and flags. */
static void kernel_action_for(const struct sigaction *program, struct sigaction *out) {
  memset(out, 0, sizeof *out);
  out->sa_sigaction = on_fatal_signal;
  out->sa_mask = program->sa_mask;
  out->sa_flags = SA_SIGINFO | SA_ONSTACK |
                  (program->sa_flags & (SA_RESTART | SA_NODEFER));
  if (program->sa_handler == SIG_DFL && !(program->sa_flags & SA_SIGINFO))
    out->sa_flags |= SA_RESTART;
}

static void on_fatal_signal(int sig, siginfo_t *info, void *ucontext) {
  int saved = errno;
  if (!__atomic_exchange_n(&in_flush, 1, __ATOMIC_ACQ_REL)) {
    ctp_writer_urgent_flush(1000);
    __atomic_store_n(&in_flush, 0, __ATOMIC_RELEASE);
  }
  struct sigaction prog = program_action[sig];
  if (prog.sa_flags & SA_RESETHAND) { /* emulated: the program's handler runs once */
    memset(&program_action[sig], 0, sizeof program_action[sig]);
    program_action[sig].sa_handler = SIG_DFL;
  }
  if (prog.sa_flags & SA_SIGINFO) {
    prog.sa_sigaction(sig, info, ucontext);
  } else if (prog.sa_handler == SIG_IGN) {
    /* ignored (cannot normally happen: SIG_IGN goes to the kernel) */
  } else if (prog.sa_handler == SIG_DFL) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __atomic_store_n(&owned[sig], 0, __ATOMIC_RELAXED);
    real_sigaction(sig, &dfl, NULL); /* resolved at install: async-signal-safe here */
    raise(sig); /* pending until this handler returns, then the default action */
  } else {
    prog.sa_handler(sig);
  }
  errno = saved;
}

void ctp_signals_install(void) {
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
    int sig = fatal_signals[i];
    struct sigaction old, act;
    if (real_sigaction(sig, NULL, &old) < 0) continue;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    program_action[sig] = old;
    kernel_action_for(&old, &act);
    if (real_sigaction(sig, &act, NULL) == 0) __atomic_store_n(&owned[sig], 1, __ATOMIC_RELAXED);
  }
}

/* sigaction for a signal the tracer's handler holds: the program's disposition. */
static int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  struct sigaction previous = program_action[sig];
  if (act) {
    int ignore = !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN;
    if (ignore) {
      int rc = real_sigaction(sig, act, NULL);
      if (rc < 0) return rc;
      __atomic_store_n(&owned[sig], 0, __ATOMIC_RELAXED);
    } else {
      struct sigaction k;
      kernel_action_for(act, &k);
      int rc = real_sigaction(sig, &k, NULL); /* validates the mask like the real call */
      if (rc < 0) return rc;
    }
    program_action[sig] = *act;
  }
  if (old) *old = previous;
  return 0;
}

/* 1 when the tracer's handler holds sig (never before start-up). */
CTP_NO_SANITIZE static int owns(int sig) {
  return sig > 0 && sig < NSIG && __atomic_load_n(&owned[sig], __ATOMIC_RELAXED);
}

CTP_NO_SANITIZE CTP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!owns(sig)) return real_sigaction(sig, act, old);
  return program_sigaction(sig, act, old);
}

/* signal() with glibc's BSD semantics (SA_RESTART, the signal blocked in its handler). */
static __sighandler_t bsd_signal_impl(int sig, __sighandler_t handler) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

CTP_NO_SANITIZE CTP_EXPORT __sighandler_t signal(int sig, __sighandler_t handler) {
  if (!owns(sig)) {
    static __sighandler_t (*real_signal)(int, __sighandler_t);
    __sighandler_t (*fn)(int, __sighandler_t) = __atomic_load_n(&real_signal, __ATOMIC_ACQUIRE);
    if (!fn) {
      fn = (__sighandler_t(*)(int, __sighandler_t))dlsym(RTLD_NEXT, "signal");
      if (!fn) return SIG_ERR;
      __atomic_store_n(&real_signal, fn, __ATOMIC_RELEASE);
    }
    return fn(sig, handler);
  }
  return bsd_signal_impl(sig, handler);
}

CTP_NO_SANITIZE CTP_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t handler) {
  return signal(sig, handler);
}
