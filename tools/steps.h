/*
 * Per-iteration analysis behind `cutrace steps` (docs/steps.md): the instances of one
 * NVTX range on one thread are the steps of a job; each gets its CPU interval, the GPU
 * work launched inside it (attributed as `report --by range` does: ct_range_each), the
 * device's busy and idle time inside its interval (idle split by the causes of
 * `cutrace gaps`), its CUDA calls, and a summary with outlier steps explained.
 *
 * Streaming: a file is read twice (its NVTX ranges, then the model feeding both the
 * gaps analysis and the step accounting; a third, cheaper read of the RANGE records only when the range is chosen
 * automatically). Memory does not grow with the records, and hardly with the steps:
 * the range instances are sorted and the steps' spans kept past CT_STEPS_SPANS_MEM in
 * temporary files (steps_spans.c); the rows of the steps measured (their GPU work,
 * idle time, calls and kernels) are kept in memory for the newest CT_STEPS_ROWS_MEM
 * steps only, the older ones in an unnamed temporary file (steps_rows.c), read back in
 * order by a cursor; the medians are found in bounded memory (steps_summary.c).
 */
#ifndef CUTRACE_STEPS_H
#define CUTRACE_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "apis.h"
#include "gaps.h"
#include "model.h"

/* What to analyse. */
typedef struct ct_steps_options {
  const char *range;       /* NVTX range name or glob (fnmatch); NULL: chosen per file */
  uint64_t skip;           /* warmup steps left out of the statistics: 0 */
  double outlier_factor;   /* a step slower than this times the median is an outlier: 1.25 */
  int all_threads;         /* GPU work launched by any thread during a step's interval is
                              the step's (PyTorch's autograd thread launches the backward
                              pass): 0, only what the stepping thread launched inside the
                              range, as report --by range attributes it */
} ct_steps_options;

/* Fills *o with the defaults above. */
void ct_steps_default_options(ct_steps_options *o);

#define CT_STEP_KERNELS 16 /* distinct kernels whose time a step keeps by name */
#define CT_STEP_NCATS (CT_CAT_OTHER + 1)

/* A kernel's time inside one step: id indexes ct_steps_file.kernel_names. */
typedef struct ct_step_kernel {
  uint32_t id, count;
  uint64_t ns;
} ct_step_kernel;

/* A step's outermost CUDA calls of one category. */
typedef struct ct_step_calls {
  uint32_t category;      /* enum ct_api_category */
  uint64_t count, ns;
} ct_step_calls;

#define CT_STEP_DEVICES 16 /* devices told apart (ids 0 .. 15) */

/* A step's busy and idle time on a device other than the one its row holds (the first
 * seen), while measured. */
typedef struct ct_step_device {
  uint64_t device;
  uint64_t busy_ns;
  uint64_t idle_ns[CT_GAP_NCAUSES];
} ct_step_device;

/* One step: an instance of the range on the stepping thread. All times host clock. */
typedef struct ct_step {
  uint64_t begin_ns, end_ns;          /* the CPU range */
  uint64_t interval_end_ns;           /* the next step's begin; the last step: the later
                                         of its range end and its GPU span end */
  uint64_t gpu_first_ns, gpu_last_ns; /* first start, last end of its GPU work (0: none) */
  uint64_t work_ns;                   /* busy union of its GPU work */
  uint64_t device_busy_ns;            /* the step device busy inside the interval (any work) */
  uint64_t idle_ns[CT_GAP_NCAUSES];   /* the step device's idle gaps inside the interval */
  uint64_t kernels, copies, sets;     /* its GPU work by kind (GEMMs, graphs count as kernels) */
  uint64_t copy_gpu_ns;               /* GPU time of its copies and sets */
  unsigned ncalls;                    /* the outermost CUDA calls on the thread inside the */
  ct_step_calls *calls;               /* range, by category (those with calls, a few) */
  unsigned nkernels;                  /* kernels by name, the first CT_STEP_KERNELS distinct */
  ct_step_kernel *kernel;
  uint64_t other_kernels_ns;          /* kernels past the first CT_STEP_KERNELS names */
  unsigned ndevices;                  /* its times on the other devices, while measured */
  ct_step_device *devices;            /* (the cursor puts the step device's in
                                         device_busy_ns and idle_ns) */
} ct_step;

/* The step's interval length ("step time"). */
static inline uint64_t ct_step_time(const ct_step *s) {
  return s->interval_end_ns > s->begin_ns ? s->interval_end_ns - s->begin_ns : 0;
}

/* Its idle time, all causes. */
uint64_t ct_step_idle(const ct_step *s);

/* Its outermost CUDA calls of category cat: the count, their time in *ns (when not NULL). */
uint64_t ct_step_calls_of(const ct_step *s, unsigned cat, uint64_t *ns);

/* All its outermost CUDA calls: the count, their time in *ns. */
uint64_t ct_step_api_calls(const ct_step *s, uint64_t *ns);

/* A step's CPU range, interval and GPU span (as ct_step's): what attributes the trace's
 * events to the steps (the first CT_STEPS_SPANS_MEM in memory, with more a temporary
 * file read back a page at a time: steps_spans.c). */
typedef struct ct_step_span {
  uint64_t begin_ns, end_ns, interval_end_ns, gpu_first_ns, gpu_last_ns;
} ct_step_span;

struct ct_step_rows;
struct ct_step_spans;

/* The steps of one trace file. */
typedef struct ct_steps_file {
  char *path;
  struct ct_process proc;    /* the PROCESS record */
  char *range;               /* the range name or glob the steps are instances of */
  int chosen;                /* 1: picked automatically (see how) */
  int all_threads;           /* the steps' GPU work is every thread's (options) */
  const char *how;           /* "ProfilerStep#* range", "most frequent outermost range",
                                "--range" */
  uint64_t tid;              /* the stepping thread (most instances) */
  uint64_t ignored;          /* matching ranges left out: other threads, nested, overlapping */
  int has_device;
  uint64_t device;           /* the device whose busy and idle time the steps show */
  uint64_t first_ns;         /* first event of the file (begins are shown relative to it) */
  struct ct_step_spans *spans; /* every step's, in order (steps_internal.h: ct_step_span_at) */
  size_t nsteps;
  struct ct_step_rows *rows; /* the measured steps (read them with a ct_steps_cursor) */
  uint64_t row_device;       /* the device whose times the rows hold in device_busy_ns and
                                idle_ns (the first seen; the others' in their devices) */
  char **kernel_names;       /* mangled */
  size_t nkernel_names;
  ct_model_stats st;
  int rc;                    /* 0 clean, 1 partial, -1 unreadable, 2 no steps (st.message) */
} ct_steps_file;

/*
 * Finds and measures the steps of one trace file into *out (freed with
 * ct_steps_file_free, whatever the result). Returns out->rc: 0 clean, 1 partial
 * (damaged input: the steps read before the damage), -1 unreadable, 2 when the file
 * holds no steps (no range matched, or none to choose); out->st.message says why.
 */
int ct_steps_read(const char *path, const ct_steps_options *o, ct_steps_file *out);

/* Frees what ct_steps_read allocated. */
void ct_steps_file_free(ct_steps_file *f);

/* Reads the measured steps of a file in order, step 0 first. */
typedef struct ct_steps_cursor {
  const ct_steps_file *f;
  size_t next;                        /* the index of the step next returns */
  uint64_t offset;                    /* in the temporary file */
  char *buf;                          /* read-ahead from the file */
  size_t buf_pos, buf_len;
  void *patch;                        /* the patched steps, sorted (steps_rows.c) */
  size_t npatch, next_patch;
  ct_step row;                        /* the step returned last */
  ct_step_calls calls[CT_STEP_NCATS];
  ct_step_kernel kernel[CT_STEP_KERNELS];
  ct_step_device devices[CT_STEP_DEVICES];
  int failed;                         /* reading the temporary file failed */
} ct_steps_cursor;

/* Starts reading f's steps. Returns 0, -1 when out of memory (c needs no close then). */
int ct_steps_cursor_open(const ct_steps_file *f, ct_steps_cursor *c);

/* The next step (valid until the next call), or NULL after the last one or when the
 * temporary file could not be read (c->failed). */
const ct_step *ct_steps_cursor_next(ct_steps_cursor *c);

/* Frees what the cursor holds. */
void ct_steps_cursor_close(ct_steps_cursor *c);

/* ---- statistics and outliers (steps_summary.c) ----------------------------------- */

/* What made a step slower than the median step, one candidate. */
enum ct_step_reason_kind {
  CT_REASON_IDLE,      /* idle of one cause (which: enum ct_gap_cause) */
  CT_REASON_KERNEL,    /* one kernel's time (which: kernel id) */
  CT_REASON_CALLS,     /* CPU time in one category of CUDA calls (which: ct_api_category) */
  CT_REASON_COPIES     /* GPU time of copies and sets */
};

typedef struct ct_step_reason {
  enum ct_step_reason_kind kind;
  unsigned which;
  uint64_t ns, median_ns;       /* the step's and the median step's */
  uint64_t count, median_count; /* calls, kernels or copies, when counted */
} ct_step_reason;

#define CT_STEP_REASONS 3

/* A step slower than outlier_factor times the median, with its reasons ranked. */
typedef struct ct_step_outlier {
  size_t step;
  uint64_t time_ns;                       /* its ct_step_time */
  unsigned nreasons;
  ct_step_reason reason[CT_STEP_REASONS]; /* largest excess over the median first */
} ct_step_outlier;

typedef struct ct_steps_summary {
  size_t counted;               /* steps in the statistics (after --skip) */
  uint64_t median_ns, mean_ns, p90_ns, min_ns, max_ns;
  uint64_t median_work_ns, median_cpu_ns;
  double median_busy_pct;
  uint64_t setup_time_ns;       /* step 0's time */
  int64_t setup_ns;             /* step 0's time less the median */
  unsigned nsetup;              /* what made step 0 longer, ranked */
  ct_step_reason setup[CT_STEP_REASONS];
  ct_step_outlier *outliers;    /* slowest first */
  size_t noutliers;
} ct_steps_summary;

/*
 * Computes the statistics of f's steps (the first o->skip left out; p90 is the
 * nearest rank) and its outliers. Returns 0, or -1 when out of memory or the steps'
 * temporary file could not be read.
 */
int ct_steps_summarize(const ct_steps_file *f, const ct_steps_options *o, ct_steps_summary *s);

/* 1 when step i (s) is one of the summary's outliers: counted (not skipped) and slower
 * than outlier_factor times the median (what ct_steps_summarize lists). */
int ct_step_is_outlier(const ct_steps_summary *sum, const ct_steps_options *o, size_t i,
                       const ct_step *s);

/* Frees the summary's outliers. */
void ct_steps_summary_free(ct_steps_summary *s);

/* The step's GPU busy share of its interval, in percent. */
double ct_step_busy_pct(const ct_step *s);

#endif
