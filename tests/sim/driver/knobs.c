/* SIMCUDA_* settings, the host/device clocks and the truth log. */
#include <pthread.h>
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sim_knobs sim_knobs = {
  .devices = 1,
  .kernel_default_us = 5.0,
  .launch_us = 2.0,
  .pinned_gbps = 25.0,
  .pageable_gbps = 10.0,
  .d2d_gbps = 1500.0,
  .copy_latency_us = 2.0,
  .host_fn_us = 5.0,
  .truth_fd = -1,
};

static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;
static uint64_t clock_base_ns;

/* Parses a non-negative number; returns 0 on success. */
static int parse_number(const char *text, double *out)
{
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end != '\0' || !(v >= 0.0) || v > 1e12)
    return -1;
  *out = v;
  return 0;
}

/* Reads a numeric knob; keeps `*value` and says so on stderr when invalid. */
static void number_knob(const char *name, double *value, int allow_negative)
{
  const char *text = getenv(name);
  if (!text || !*text)
    return;
  double v;
  int ok;
  if (allow_negative && text[0] == '-') {
    ok = parse_number(text + 1, &v) == 0;
    v = -v;
  } else {
    ok = parse_number(text, &v) == 0;
  }
  if (!ok) {
    fprintf(stderr, "simcuda: ignoring %s=%s (not a number); using %g\n", name, text, *value);
    return;
  }
  *value = v;
}

/* Parses SIMCUDA_KERNEL_US ("default=5,vadd=2.5,sgemm=40"); all-or-nothing. */
static void kernel_knob(void)
{
  const char *text = getenv("SIMCUDA_KERNEL_US");
  if (!text || !*text)
    return;
  char *copy = strdup(text);
  if (!copy)
    return;
  size_t capacity = 1;
  for (const char *p = text; *p; p++)
    capacity += *p == ',';
  struct sim_kernel_rule *rules = calloc(capacity, sizeof *rules);
  size_t count = 0;
  double default_us = sim_knobs.kernel_default_us;
  int bad = rules == NULL;
  char *save = NULL;
  for (char *item = strtok_r(copy, ",", &save); item && !bad; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    double us;
    if (!eq || eq == item || parse_number(eq + 1, &us) != 0) {
      bad = 1;
      break;
    }
    *eq = '\0';
    if (strcmp(item, "default") == 0) {
      default_us = us;
    } else {
      rules[count].pattern = strdup(item);
      rules[count].us = us;
      bad = rules[count].pattern == NULL;
      count++;
    }
  }
  free(copy);
  if (bad) {
    fprintf(stderr, "simcuda: ignoring SIMCUDA_KERNEL_US=%s (expected name=us,...); using default=%g\n",
            text, sim_knobs.kernel_default_us);
    for (size_t i = 0; i < count; i++)
      free(rules[i].pattern);
    free(rules);
    return;
  }
  sim_knobs.kernel_default_us = default_us;
  sim_knobs.kernel_rules = rules;
  sim_knobs.kernel_rule_count = count;
}

/* CUDA_VISIBLE_DEVICES, a comma-separated list of indices, names the devices: ordinal
 * i reports the PCI bus id and UUID of the i-th listed index (like a real node's
 * device i seen through the mask). The device count stays SIMCUDA_DEVICES; entries
 * that are not plain indices (UUIDs, MIG names) leave their ordinals as they are. */
static void visible_devices_knob(void)
{
  for (int i = 0; i < SIM_MAX_DEVICES; i++)
    sim_knobs.physical[i] = i;
  const char *text = getenv("CUDA_VISIBLE_DEVICES");
  for (int i = 0; text && *text && i < SIM_MAX_DEVICES; i++) {
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end != text && (*end == ',' || !*end) && v >= 0 && v < 256)
      sim_knobs.physical[i] = (int)v;
    text = strchr(text, ',');
    if (text) text++;
  }
}

static void load_knobs(void)
{
  clock_base_ns = sim_now_ns();
  double devices = sim_knobs.devices;
  number_knob("SIMCUDA_DEVICES", &devices, 0);
  if (devices < 1 || devices > SIM_MAX_DEVICES || devices != (int)devices) {
    fprintf(stderr, "simcuda: ignoring SIMCUDA_DEVICES=%g (1..%d); using 1\n", devices, SIM_MAX_DEVICES);
    devices = 1;
  }
  sim_knobs.devices = (int)devices;
  visible_devices_knob();
  kernel_knob();
  number_knob("SIMCUDA_LAUNCH_US", &sim_knobs.launch_us, 0);
  number_knob("SIMCUDA_ALLOC_US", &sim_knobs.alloc_us, 0);
  number_knob("SIMCUDA_PINNED_GBPS", &sim_knobs.pinned_gbps, 0);
  number_knob("SIMCUDA_PAGEABLE_GBPS", &sim_knobs.pageable_gbps, 0);
  number_knob("SIMCUDA_D2D_GBPS", &sim_knobs.d2d_gbps, 0);
  number_knob("SIMCUDA_COPY_LATENCY_US", &sim_knobs.copy_latency_us, 0);
  number_knob("SIMCUDA_HOST_FN_US", &sim_knobs.host_fn_us, 0);
  number_knob("SIMCUDA_EXTSEM_US", &sim_knobs.extsem_us, 0);
  number_knob("SIMCUDA_CLOCK_DRIFT_PPM", &sim_knobs.clock_drift_ppm, 1);
  number_knob("SIMCUDA_CLOCK_OFFSET_US", &sim_knobs.clock_offset_us, 1);
  double reuse = 0;
  number_knob("SIMCUDA_CTX_REUSE", &reuse, 0);
  sim_knobs.ctx_reuse = reuse != 0;
  if (sim_knobs.pinned_gbps <= 0) sim_knobs.pinned_gbps = 25.0;
  if (sim_knobs.pageable_gbps <= 0) sim_knobs.pageable_gbps = 10.0;
  if (sim_knobs.d2d_gbps <= 0) sim_knobs.d2d_gbps = 1500.0;
  const char *truth = getenv("SIMCUDA_TRUTH_FILE");
  if (truth && *truth) {
    sim_knobs.truth_fd = open(truth, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (sim_knobs.truth_fd < 0)
      fprintf(stderr, "simcuda: cannot open SIMCUDA_TRUTH_FILE=%s: %s\n", truth, strerror(errno));
  }
}

void sim_knobs_load(void)
{
  pthread_once(&knobs_once, load_knobs);
}

typedef char *(*demangle_fn)(const char *mangled, char *buffer, size_t *length, int *status);

/* The C++ demangler of libstdc++ (an nvcc-built program has it loaded), or NULL. */
static demangle_fn find_demangler(void)
{
  static demangle_fn fn;
  static int looked;
  if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
      void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
      sym = lib ? dlsym(lib, "__cxa_demangle") : NULL;
    }
    fn = (demangle_fn)sym;
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
  }
  return fn;
}

int sim_kernel_name_matches(const char *name, const char *pattern, struct sim_demangled *d)
{
  if (!name || !pattern)
    return 0;
  if (strstr(name, pattern))
    return 1;
  if (!d->tried) {
    d->tried = 1;
    demangle_fn demangle = name[0] == '_' && name[1] == 'Z' ? find_demangler() : NULL;
    int status = -1;
    d->text = demangle ? demangle(name, NULL, NULL, &status) : NULL;
    if (status != 0) {
      free(d->text);
      d->text = NULL;
    }
  }
  return d->text && strstr(d->text, pattern);
}

uint64_t sim_kernel_duration_ns(const char *name)
{
  double us = sim_knobs.kernel_default_us;
  struct sim_demangled d = {0, NULL};
  for (size_t i = 0; name && i < sim_knobs.kernel_rule_count; i++) {
    if (sim_kernel_name_matches(name, sim_knobs.kernel_rules[i].pattern, &d)) {
      us = sim_knobs.kernel_rules[i].us;
      break;
    }
  }
  free(d.text);
  return (uint64_t)(us * 1000.0 + 0.5);
}

uint64_t sim_transfer_ns(size_t bytes, double gbps)
{
  /* 1 GB/s moves one byte per ns. */
  return (uint64_t)(sim_knobs.copy_latency_us * 1000.0 + (double)bytes / gbps + 0.5);
}

uint64_t sim_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t sim_device_clock_ns(uint64_t host_ns)
{
  /* Drift is applied relative to the moment the driver was loaded, so that the
   * device clock stays close to the host clock for a realistic run length. */
  double since = (double)(int64_t)(host_ns - clock_base_ns);
  return (int64_t)host_ns + (int64_t)(since * sim_knobs.clock_drift_ppm * 1e-6)
         + (int64_t)(sim_knobs.clock_offset_us * 1000.0);
}

/* The truth log's buffer: whole lines, written by truth_flush. */
static char truth_buf[1 << 16];
static size_t truth_len;
static void truth_flush(void);

void sim_wait_until(uint64_t when_ns)
{
  /* Called without the lock, when the host waits for the GPU: a good moment to
   * write the buffered truth lines (a program that aborts after a sync keeps them). */
  if (truth_len) {
    sim_lock();
    truth_flush();
    sim_unlock();
  }
  for (;;) {
    uint64_t now = sim_now_ns();
    if (now >= when_ns)
      return;
    if (when_ns - now < 20000)
      continue; /* short waits spin, as a driver polling the GPU would */
    struct timespec ts = {(time_t)((when_ns - 10000) / 1000000000ull),
                          (long)((when_ns - 10000) % 1000000000ull)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  }
}

void sim_spin_us(double us)
{
  if (us <= 0)
    return;
  uint64_t until = sim_now_ns() + (uint64_t)(us * 1000.0);
  while (sim_now_ns() < until) {
  }
}


/* Writes the buffered truth lines (one write() on an O_APPEND descriptor, so the
 * lines of several processes sharing the file never interleave). */
static void truth_flush(void)
{
  if (truth_len && sim_knobs.truth_fd >= 0) {
    ssize_t w = write(sim_knobs.truth_fd, truth_buf, truth_len);
    (void)w;
  }
  truth_len = 0;
}

/* At exit: what is still buffered goes to the file. */
__attribute__((destructor)) static void truth_at_exit(void)
{
  truth_flush();
}

/* A fork child starts with an empty buffer: the parent's lines are the parent's. */
static void truth_forget(void)
{
  truth_len = 0;
}

__attribute__((constructor)) static void truth_setup(void)
{
  pthread_atfork(NULL, NULL, truth_forget);
}

void sim_truth_log(const char *kind, const char *name, uintptr_t stream_handle, int device,
                   uint64_t enqueue_ns, uint64_t start_ns, uint64_t end_ns)
{
  if (sim_knobs.truth_fd < 0)
    return;
  /* One field per value: a very long kernel name is cut, spaces become '_'. */
  char field[320];
  snprintf(field, sizeof field, "%s", name && *name ? name : "?");
  for (char *p = field; *p; p++)
    if (*p == ' ' || *p == '\t' || *p == '\n')
      *p = '_';
  char line[512];
  int n = snprintf(line, sizeof line, "%s %s 0x%lx %d %llu %llu %llu\n", kind, field,
                   (unsigned long)stream_handle, device, (unsigned long long)enqueue_ns,
                   (unsigned long long)start_ns, (unsigned long long)end_ns);
  if (n <= 0 || (size_t)n >= sizeof line)
    return;
  /* Lines are buffered (the caller holds the simulator's lock) and written in whole
   * lines when the buffer fills and at exit, so the log costs the launch path no
   * system call: a write() there would stretch every simulated launch call. */
  if (truth_len + (size_t)n > sizeof truth_buf)
    truth_flush();
  memcpy(truth_buf + truth_len, line, (size_t)n);
  truth_len += (size_t)n;
}
