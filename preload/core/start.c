/*
 * Start-up (ctp_start), naming the sink (sink.c: the output file or the collector's
 * stream), the PROCESS record, the final flush at exit, and fork: the child drops the
 * parent's pending records.
 *
 * The writer thread opens the file (or stream) itself: the program's thread does no
 * I/O for it. It is started only once the process uses CUDA (docs/preload.md,
 * "Processes without CUDA"): at start-up when libcuda or libcudart is already loaded
 * (or CUTRACE_ALL_PROCESSES asks for every process), else at the first record
 * (ctp_emit) or when the hooks see CUDA coming (ctp_ring_pool_want), or at exit or
 * exec when libcuda or libcudart was loaded meanwhile. A process image that ends
 * without any of these leaves no file, only its line in DIR/.nocuda (nocuda.c). A
 * fork child's file waits for its first record or ctp_ring_pool_want only: the
 * libraries it inherited are its parent's, so a child that only execs (or records
 * nothing) leaves no file.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "job.h"

int ctp_enabled;
int ctp_file_pending;

static int start_state; /* 0 not started, 1 starting, 2 done */
static __thread __attribute__((tls_model("initial-exec"))) int tls_starting;
static uint64_t host_id, cmdline_id, exe_id;
static char host_name[256];
static uint64_t pending_ppid, pending_start_ns, pending_realtime_ns;
static struct ctp_job job;              /* the rank, from the environment at start-up */
static struct ct_job job_rec;           /* its JOB record, strings interned */
static uint64_t job_warning_ids[CTP_JOB_MAX_WARNINGS];
static char file_prefix[32];            /* "rank-N." or "" */
static pid_t owner_pid; /* the process whose file and writer thread these are */
static pid_t image_pid; /* this process (start-up, fork child): a vfork child is not it */
static int pending_is_fork_child; /* its file waits for a record or CUDA coming, not libraries */
static char exe_path[256];        /* for its line in DIR/.nocuda when it leaves no file */
static pthread_mutex_t restart_lock = PTHREAD_MUTEX_INITIALIZER;

static void (*final_fns[8])(void);
static unsigned final_count;
static void (*new_file_fns[4])(void);
static unsigned new_file_count;

void ctp_at_final_flush(void (*fn)(void)) {
  unsigned i = __atomic_fetch_add(&final_count, 1, __ATOMIC_ACQ_REL);
  if (i < 8)
    __atomic_store_n(&final_fns[i], fn, __ATOMIC_RELEASE);
  else
    ctp_warn("more than 8 final-flush callbacks; one is ignored");
}

void ctp_at_new_file(void (*fn)(void)) {
  unsigned i = __atomic_fetch_add(&new_file_count, 1, __ATOMIC_ACQ_REL);
  if (i < 4)
    __atomic_store_n(&new_file_fns[i], fn, __ATOMIC_RELEASE);
  else
    ctp_warn("more than 4 new-file callbacks; one is ignored");
}

/* Reads a small file whole (at most cap bytes). Returns its length, or 0. */
static size_t read_small_file(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t len = 0;
  while (len < cap) {
    ssize_t r = read(fd, buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  return len;
}

/* Interns host, command line and executable (once per process image). */
static void intern_process_strings(void) {
  if (gethostname(host_name, sizeof host_name - 1) < 0 || !host_name[0])
    snprintf(host_name, sizeof host_name, "localhost");
  for (char *p = host_name; *p; p++)
    if (*p == '/') *p = '_';
  host_id = ctp_intern_always(host_name, strlen(host_name));
  size_t cap = 1 << 16;
  char *buf = malloc(cap);
  if (buf) {
    size_t len = read_small_file("/proc/self/cmdline", buf, cap);
    while (len && buf[len - 1] == 0) len--; /* NUL separates, it does not end */
    cmdline_id = ctp_intern_always(buf, len);
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0) {
      exe_id = ctp_intern_always(buf, (size_t)n);
      const char *base = memrchr(buf, '/', (size_t)n);
      base = base ? base + 1 : buf;
      size_t blen = (size_t)n - (size_t)(base - buf);
      if (blen >= sizeof exe_path) blen = sizeof exe_path - 1;
      memcpy(exe_path, base, blen);
      exe_path[blen] = 0;
    }
    free(buf);
  }
}

static const char *env_value(const char *name, void *arg) {
  (void)arg;
  return getenv(name);
}

/* Reads the job identity (once per process image: a fork child keeps its parent's
 * rank) and interns its strings; each malformed value gets one line on stderr. */
static void load_job(void) {
  ctp_job_parse(env_value, NULL, &job);
  job_rec = job.rec;
  if (job.source) job_rec.source = ctp_intern_always(job.source, strlen(job.source));
  if (job.job_id[0]) job_rec.job_id = ctp_intern_always(job.job_id, strlen(job.job_id));
  if (job.rec.known & CT_JOB_VISIBLE_DEVICES)
    job_rec.visible_devices = ctp_intern_always(job.visible_devices, strlen(job.visible_devices));
  for (unsigned i = 0; i < job.nwarnings; i++) {
    ctp_warn("%s", job.warnings[i]);
    job_warning_ids[i] = ctp_intern_always(job.warnings[i], strlen(job.warnings[i]));
  }
  ctp_job_file_prefix(&job, file_prefix, sizeof file_prefix);
}

/* Notes that the file is to be opened with the next record, and the process's times. */
static void set_file_pending(uint64_t ppid) {
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  pending_ppid = ppid;
  pending_start_ns = ctp_now_ns();
  pending_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
  __atomic_store_n(&ctp_file_pending, 1, __ATOMIC_RELEASE);
}

/* Names pid's trace and starts the writer (which opens it) with its first records: PROCESS, then
 * JOB and the warnings about the job's variables (TRACER records) when there are any. */
static int open_and_start(pid_t pid) {
  struct ctp_sink sink;
  ctp_writer_join_left(); /* before ctp_sink_name resets the exit deadline it may need */
  ctp_sink_name(&sink, file_prefix, host_name, pid); /* the writer thread opens it */
  ct_record first[2 + CTP_JOB_MAX_WARNINGS];
  unsigned n = 0;
  memset(first, 0, sizeof first);
  first[n].kind = CT_KIND_PROCESS;
  first[n++].u.process = (struct ct_process){
      .pid = (uint64_t)pid, .ppid = pending_ppid, .start_ns = pending_start_ns,
      .realtime_ns = pending_realtime_ns, .host = host_id, .cmdline = cmdline_id,
      .exe = exe_id, .tracer_version = CTP_TRACER_VERSION};
  if (ctp_job_present(&job)) {
    first[n].kind = CT_KIND_JOB;
    first[n++].u.job = job_rec;
  }
  for (unsigned i = 0; i < job.nwarnings; i++) {
    first[n].kind = CT_KIND_TRACER;
    first[n++].u.tracer = (struct ct_tracer){.tid = ctp_tid(), .what = job_warning_ids[i],
                                             .begin_ns = pending_start_ns,
                                             .end_ns = pending_start_ns};
  }
  if (ctp_writer_start(&sink, first, n) < 0) {
    ctp_warn("cannot start the writer thread; not tracing");
    return -1;
  }
  owner_pid = pid;
  return 0;
}

static void fork_prepare(void) {
  pthread_mutex_lock(&restart_lock);
  ctp_strings_lock();
  ctp_buffers_lock();
  ctp_sink_lock();
}

static void fork_parent(void) {
  ctp_sink_unlock();
  ctp_buffers_unlock();
  ctp_strings_unlock();
  pthread_mutex_unlock(&restart_lock);
}

/* The locks fork_prepare took are this thread's here too: released as in the parent
 * (not re-initialised while held, which ThreadSanitizer reports as a double lock in a
 * child of a process with no other thread, now common: no writer thread before CUDA). */
static void fork_child(void) {
  fork_parent();
  ctp_window_reinit_lock();
  if (!__atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE)) return;
  ctp_writer_after_fork();
  ctp_buffers_after_fork();
  ctp_strings_requeue_all();
  ctp_window_requeue();
  set_file_pending((uint64_t)getppid());
  image_pid = getpid();
  pending_is_fork_child = 1;
}

void ctp_file_open(void) {
  int saved = errno;
  pthread_mutex_lock(&restart_lock);
  if (__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE)) {
    if (open_and_start(getpid()) < 0) __atomic_store_n(&ctp_enabled, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ctp_file_pending, 0, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&restart_lock);
  errno = saved;
}

/* dl_iterate_phdr's callback: 1 (stop) at libcuda.so* or libcudart.so*. */
static int is_cuda_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
  const char *base = slash ? slash + 1 : name;
  return base && (!strncmp(base, "libcuda.so", 10) || !strncmp(base, "libcudart.so", 12));
}

static void start_once(void) {
  ctp_config_load(&ctp_cfg);
  if (ctp_cfg.disabled) return;
  if (ctp_sink_prepare() < 0) return;
  intern_process_strings();
  load_job();
  set_file_pending((uint64_t)getppid());
  image_pid = getpid();
  pending_is_fork_child = 0;
  /* Linked with libcuda or the shared runtime: the file now, and the writer makes its
   * ready rings at once (tracing is not on yet: ctp_ring_pool_want only notes it).
   * Others open it when the hooks see CUDA coming, at their first record, or at exit
   * with CUDA loaded meanwhile; CUTRACE_ALL_PROCESSES: every process now, as before. */
  int cuda = dl_iterate_phdr(is_cuda_object, NULL);
  if (cuda) ctp_ring_pool_want();
  if (cuda || ctp_cfg.all_processes) {
    int opened = open_and_start(image_pid);
    __atomic_store_n(&ctp_file_pending, 0, __ATOMIC_RELEASE);
    if (opened < 0) return;
  }
  ctp_window_init(pending_start_ns);
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  if (ctp_cfg.signals) ctp_signals_install();
  __atomic_store_n(&ctp_enabled, 1, __ATOMIC_SEQ_CST);
  if (ctp_writer_gave_up()) /* the sink failed to open before tracing was even on */
    __atomic_store_n(&ctp_enabled, 0, __ATOMIC_SEQ_CST);
}

int ctp_start(void) {
  if (CTP_LIKELY(__atomic_load_n(&start_state, __ATOMIC_ACQUIRE) == 2)) return ctp_is_enabled();
  int saved = errno;
  int expected = 0;
  if (__atomic_compare_exchange_n(&start_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    tls_starting = 1;
    start_once();
    tls_starting = 0;
    __atomic_store_n(&start_state, 2, __ATOMIC_RELEASE);
  } else if (!tls_starting) { /* another thread is starting: wait for it (rare) */
    while (__atomic_load_n(&start_state, __ATOMIC_ACQUIRE) != 2) sched_yield();
  }
  errno = saved;
  return ctp_is_enabled();
}

/*
 * At exit or exec of a process whose file still waits: an image that loaded libcuda or
 * libcudart (a dlopen with no call yet) keeps its trace, so its file is opened now.
 * Otherwise it used no CUDA: no file, and at exit its line in DIR/.nocuda. Not in a
 * process that shares this one's memory without being it (a vfork child). Returns 1
 * when the file is now open.
 */
static int open_if_cuda_loaded(int at_exit) {
  if (getpid() != image_pid) return 0;
  int saved = errno;
  if (!pending_is_fork_child && dl_iterate_phdr(is_cuda_object, NULL)) {
    ctp_file_open();
    errno = saved;
    return !__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE);
  }
  if (at_exit) ctp_nocuda_note(image_pid, (pid_t)pending_ppid, exe_path);
  errno = saved;
  return 0;
}

/*
 * Runs the hooks' callbacks, stops recording, writes the rest and the END record.
 * Not in a process that shares the owner's memory without being it (a vfork
 * child, a raw clone): it must not touch the owner's writer or file.
 */
static int final_flush(int at_exit) {
  if (!__atomic_load_n(&ctp_enabled, __ATOMIC_ACQUIRE)) return 0;
  if (__atomic_load_n(&ctp_file_pending, __ATOMIC_ACQUIRE) && !open_if_cuda_loaded(at_exit))
    return 0;
  if (getpid() != owner_pid) return 0;
  int saved = errno;
  unsigned n = __atomic_load_n(&final_count, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n && i < 8; i++) {
    void (*fn)(void) = __atomic_load_n(&final_fns[i], __ATOMIC_ACQUIRE);
    if (fn) fn();
  }
  __atomic_store_n(&ctp_enabled, 0, __ATOMIC_RELEASE);
  ctp_writer_finish();
  errno = saved;
  return 1;
}

int ctp_exec_finish(void) { return final_flush(0); }

void ctp_exec_resume(void) {
  int saved = errno;
  ctp_strings_requeue_all();
  ctp_window_requeue();
  unsigned n = __atomic_load_n(&new_file_count, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n && i < 4; i++) {
    void (*fn)(void) = __atomic_load_n(&new_file_fns[i], __ATOMIC_ACQUIRE);
    if (fn) fn();
  }
  set_file_pending((uint64_t)getppid());
  __atomic_store_n(&ctp_enabled, 1, __ATOMIC_RELEASE);
  ctp_file_open(); /* now: the threads' buffers exist, no first record would open it */
  errno = saved;
}

__attribute__((constructor)) static void ctp_constructor(void) { ctp_start(); }

__attribute__((destructor)) static void ctp_destructor(void) { (void)final_flush(1); }
