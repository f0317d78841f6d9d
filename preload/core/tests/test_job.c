/*
 * Unit test of the job identity parsing (preload/core/job.c): each case gives a
 * table of environment variables and the exact JOB values, source, warnings and
 * file name prefix expected. Exit status 0 when every case passed.
 * `test_job --bench` instead times the parse against the real environment (what the
 * tracer does once per process image; docs/performance.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job.h"

static int failures;

/* A NULL-terminated list of "NAME=value" strings acting as the environment. */
static const char *table_get(const char *name, void *arg) {
  size_t n = strlen(name);
  for (const char *const *e = arg; *e; e++)
    if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

#define EXPECT(cond, ...)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      failures++;                                                                            \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
      printf(__VA_ARGS__);                                                                   \
      putchar('\n');                                                                         \
    }                                                                                        \
  } while (0)

struct want {
  uint64_t known, rank, world_size, local_rank, local_world_size, node_rank;
  const char *source, *job_id, *visible, *prefix;
  unsigned nwarnings;
  const char *warning; /* the first warning, when nwarnings */
};

static void run(const char *label, const char *const *env, const struct want *w) {
  struct ctp_job j;
  char prefix[32];
  ctp_job_parse(table_get, (void *)env, &j);
  ctp_job_file_prefix(&j, prefix, sizeof prefix);
  EXPECT(j.rec.known == w->known, "%s: known %llu, want %llu", label,
         (unsigned long long)j.rec.known, (unsigned long long)w->known);
  EXPECT(j.rec.rank == w->rank && j.rec.world_size == w->world_size &&
             j.rec.local_rank == w->local_rank && j.rec.local_world_size == w->local_world_size &&
             j.rec.node_rank == w->node_rank,
         "%s: rank %llu/%llu local %llu/%llu node %llu", label, (unsigned long long)j.rec.rank,
         (unsigned long long)j.rec.world_size, (unsigned long long)j.rec.local_rank,
         (unsigned long long)j.rec.local_world_size, (unsigned long long)j.rec.node_rank);
  EXPECT(w->source ? j.source && !strcmp(j.source, w->source) : !j.source, "%s: source %s",
         label, j.source ? j.source : "(none)");
  EXPECT(!strcmp(j.job_id, w->job_id ? w->job_id : ""), "%s: job id '%s'", label, j.job_id);
  EXPECT(!strcmp(j.visible_devices, w->visible ? w->visible : ""), "%s: visible '%s'", label,
         j.visible_devices);
  EXPECT(!strcmp(prefix, w->prefix ? w->prefix : ""), "%s: prefix '%s'", label, prefix);
  EXPECT(j.nwarnings == w->nwarnings, "%s: %u warnings, want %u (%s)", label, j.nwarnings,
         w->nwarnings, j.nwarnings ? j.warnings[0] : "");
  if (w->nwarnings && j.nwarnings)
    EXPECT(!strcmp(j.warnings[0], w->warning), "%s: warning '%s'", label, j.warnings[0]);
  EXPECT(ctp_job_present(&j) == (w->known || w->job_id || w->nwarnings), "%s: present", label);
}

static const char *env_get(const char *name, void *arg) {
  (void)arg;
  return getenv(name);
}

/* Prints the time of one parse (and file prefix) against this process's environment. */
static int bench(void) {
  struct ctp_job j;
  char prefix[32];
  enum { N = 200000 };
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < N; i++) {
    ctp_job_parse(env_get, NULL, &j);
    ctp_job_file_prefix(&j, prefix, sizeof prefix);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / N;
  printf("job identity: %.0f ns per parse (source %s, prefix '%s')\n", ns,
         j.source ? j.source : "none", prefix);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--bench")) return bench();
  const uint64_t R = CT_JOB_RANK, W = CT_JOB_WORLD_SIZE, LR = CT_JOB_LOCAL_RANK,
                 LW = CT_JOB_LOCAL_WORLD_SIZE, N = CT_JOB_NODE_RANK, V = CT_JOB_VISIBLE_DEVICES;
  run("nothing", (const char *const[]){"PATH=/bin", NULL}, &(struct want){0});
  run("torchrun",
      (const char *const[]){"RANK=5", "WORLD_SIZE=16", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4",
                            "GROUP_RANK=1", "TORCHELASTIC_RUN_ID=abc", NULL},
      &(struct want){R | W | LR | LW | N, 5, 16, 1, 4, 1, "RANK", "abc", NULL, "rank-05.", 0, NULL});
  run("torch over slurm: RANK wins, the job id is Slurm's",
      (const char *const[]){"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=991",
                            "RANK=3", "WORLD_SIZE=4", "TORCHELASTIC_RUN_ID=x", NULL},
      &(struct want){R | W, 3, 4, 0, 0, 0, "RANK", "991", NULL, "rank-3.", 0, NULL});
  run("open mpi before pmix",
      (const char *const[]){"PMIX_RANK=7", "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=3",
                            "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=1", NULL},
      &(struct want){R | W | LR | LW, 2, 3, 0, 1, 0, "OMPI_COMM_WORLD_RANK", NULL, NULL,
                     "rank-2.", 0, NULL});
  run("pmix alone", (const char *const[]){"PMIX_RANK=7", NULL},
      &(struct want){R, 7, 0, 0, 0, 0, "PMIX_RANK", NULL, NULL, "rank-7.", 0, NULL});
  run("mpich", (const char *const[]){"PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", NULL},
      &(struct want){R | W | LR, 1, 2, 1, 0, 0, "PMI_RANK", NULL, NULL, "rank-1.", 0, NULL});
  run("mvapich",
      (const char *const[]){"MV2_COMM_WORLD_RANK=0", "MV2_COMM_WORLD_SIZE=1000", "PMI_RANK=9",
                            NULL},
      &(struct want){R | W, 0, 1000, 0, 0, 0, "MV2_COMM_WORLD_RANK", NULL, NULL, "rank-000.", 0, NULL});
  run("slurm",
      (const char *const[]){"SLURM_PROCID=3", "SLURM_NTASKS=4", "SLURM_LOCALID=1",
                            "SLURM_NODEID=1", "SLURM_JOB_ID=12345", "CUDA_VISIBLE_DEVICES=1",
                            NULL},
      &(struct want){R | W | LR | N | V, 3, 4, 1, 0, 1, "SLURM_PROCID", "12345", "1", "rank-3.",
                     0, NULL});
  run("malformed rank falls through to the next launcher",
      (const char *const[]){"RANK=1x", "SLURM_PROCID=2", NULL},
      &(struct want){R, 2, 0, 0, 0, 0, "SLURM_PROCID", NULL, NULL, "rank-2.", 1,
                     "job identity: RANK='1x' is not a whole number; ignored"});
  run("negative and empty values",
      (const char *const[]){"RANK=-1", "OMPI_COMM_WORLD_RANK=", NULL},
      &(struct want){0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 1,
                     "job identity: RANK='-1' is not a whole number; ignored"});
  run("too large", (const char *const[]){"RANK=99999999999999999999", NULL},
      &(struct want){0, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, 1,
                     "job identity: RANK='99999999999999999999' is not a whole number; ignored"});
  run("world size zero",
      (const char *const[]){"RANK=0", "WORLD_SIZE=0", NULL},
      &(struct want){R, 0, 0, 0, 0, 0, "RANK", NULL, NULL, "rank-0.", 1,
                     "job identity: WORLD_SIZE='0' is not a positive whole number; ignored"});
  run("rank beyond the world",
      (const char *const[]){"RANK=4", "WORLD_SIZE=4", "LOCAL_RANK=2", "LOCAL_WORLD_SIZE=2", NULL},
      &(struct want){R | LR, 4, 0, 2, 0, 0, "RANK", NULL, NULL, "rank-4.", 2,
                     "job identity: RANK is not below WORLD_SIZE='4'; the world size is ignored"});
  run("only CUDA_VISIBLE_DEVICES, empty", (const char *const[]){"CUDA_VISIBLE_DEVICES=", NULL},
      &(struct want){V, 0, 0, 0, 0, 0, NULL, NULL, "", NULL, 0, NULL});
  run("only a job id", (const char *const[]){"SLURM_JOB_ID=5", NULL},
      &(struct want){0, 0, 0, 0, 0, 0, NULL, "5", NULL, NULL, 0, NULL});
  run("two-digit world: padded", (const char *const[]){"RANK=7", "WORLD_SIZE=11", NULL},
      &(struct want){R | W, 7, 11, 0, 0, 0, "RANK", NULL, NULL, "rank-07.", 0, NULL});
  run("world of ten: one digit", (const char *const[]){"RANK=9", "WORLD_SIZE=10", NULL},
      &(struct want){R | W, 9, 10, 0, 0, 0, "RANK", NULL, NULL, "rank-9.", 0, NULL});
  printf("%s (%d failures)\n", failures ? "FAILED" : "ok", failures);
  return failures != 0;
}
