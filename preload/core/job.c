/*
 * The process's identity in a distributed job, read from the environment the
 * launcher gave it (torchrun, Open MPI, MVAPICH2, PMIx, MPICH/Intel MPI's PMI,
 * Slurm), and CUDA_VISIBLE_DEVICES as given. Pure parsing: the caller supplies the
 * variables (getenv in the preload, a table in tests) and gets a JOB record's
 * numbers, the texts of its strings and the warnings about malformed values.
 *
 * Precedence (docs/preload.md, "Distributed jobs"): the first launcher family,
 * in the order of `families` below, whose rank variable holds a valid number gives
 * the rank and, from its own variables only, the world size, local rank, local world
 * size and node rank. The specific launchers come before Slurm, whose SLURM_PROCID
 * is that of the job step (under `srun torchrun` or `mpirun` inside an allocation it
 * names the node's launcher, not the rank).
 */
#include <stdio.h>
#include <string.h>

#include "job.h"

/* One launcher's variables (NULL: it has none for that value). */
struct family {
  const char *rank, *world_size, *local_rank, *local_world_size, *node_rank;
};

static const struct family families[] = {
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"}, /* torchrun */
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", NULL},                                  /* Open MPI */
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
     "MV2_COMM_WORLD_LOCAL_SIZE", NULL},                                   /* MVAPICH2 */
    {"PMIX_RANK", NULL, NULL, NULL, NULL},                                 /* PMIx */
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", NULL},  /* MPICH, Intel MPI */
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL, "SLURM_NODEID"}, /* Slurm */
};

/* The variables naming the job, in order of preference. */
static const char *const job_id_vars[] = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"};

#define MAX_VALUE 2147483647ull

static void warn(struct ctp_job *job, const char *fmt, const char *name, const char *value,
                 const char *what) {
  if (job->nwarnings >= CTP_JOB_MAX_WARNINGS) return;
  snprintf(job->warnings[job->nwarnings++], sizeof job->warnings[0], fmt, name, value, what);
}

/* Parses name's value as a decimal number in [min, MAX_VALUE]. Returns 1 with *out set,
 * 0 when the variable is unset or empty, -1 (and a warning) when it is malformed. */
static int number(struct ctp_job *job, ctp_job_getenv get, void *arg, const char *name,
                  uint64_t min, uint64_t *out) {
  if (!name) return 0;
  const char *v = get(name, arg);
  if (!v || !*v) return 0;
  uint64_t x = 0;
  const char *p = v;
  for (; *p >= '0' && *p <= '9' && x <= MAX_VALUE; p++) x = x * 10 + (uint64_t)(*p - '0');
  if (*p || x > MAX_VALUE || x < min) {
    warn(job, "job identity: %s='%.40s' is not %s; ignored", name, v,
         min ? "a positive whole number" : "a whole number");
    return -1;
  }
  *out = x;
  return 1;
}

/* Copies name's value (truncated to cap - 1 bytes) into buf. Returns 1 when set. */
static int text(ctp_job_getenv get, void *arg, const char *name, char *buf, size_t cap) {
  const char *v = get(name, arg);
  if (!v) return 0;
  snprintf(buf, cap, "%s", v);
  return 1;
}

/* Reads one family's values into job (its rank is valid). */
static void read_family(struct ctp_job *job, const struct family *f, ctp_job_getenv get,
                        void *arg, uint64_t rank) {
  struct ct_job *r = &job->rec;
  r->rank = rank;
  r->known |= CT_JOB_RANK;
  job->source = f->rank;
  if (number(job, get, arg, f->world_size, 1, &r->world_size) > 0) {
    if (rank < r->world_size) r->known |= CT_JOB_WORLD_SIZE;
    else warn(job, "job identity: %s is not below %s='%.40s'; the world size is ignored",
              f->rank, f->world_size, get(f->world_size, arg));
  }
  if (number(job, get, arg, f->local_rank, 0, &r->local_rank) > 0) r->known |= CT_JOB_LOCAL_RANK;
  if (number(job, get, arg, f->local_world_size, 1, &r->local_world_size) > 0) {
    if (!(r->known & CT_JOB_LOCAL_RANK) || r->local_rank < r->local_world_size)
      r->known |= CT_JOB_LOCAL_WORLD_SIZE;
    else warn(job, "job identity: %s is not below %s='%.40s'; the local world size is ignored",
              f->local_rank, f->local_world_size, get(f->local_world_size, arg));
  }
  if (number(job, get, arg, f->node_rank, 0, &r->node_rank) > 0) r->known |= CT_JOB_NODE_RANK;
  if (!(r->known & CT_JOB_WORLD_SIZE)) r->world_size = 0;
  if (!(r->known & CT_JOB_LOCAL_RANK)) r->local_rank = 0;
  if (!(r->known & CT_JOB_LOCAL_WORLD_SIZE)) r->local_world_size = 0;
  if (!(r->known & CT_JOB_NODE_RANK)) r->node_rank = 0;
}

void ctp_job_parse(ctp_job_getenv get, void *arg, struct ctp_job *job) {
  memset(job, 0, sizeof *job);
  for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
    uint64_t rank;
    if (number(job, get, arg, families[i].rank, 0, &rank) > 0) {
      read_family(job, &families[i], get, arg, rank);
      break;
    }
  }
  for (size_t i = 0; i < sizeof job_id_vars / sizeof job_id_vars[0] && !job->job_id[0]; i++)
    text(get, arg, job_id_vars[i], job->job_id, sizeof job->job_id);
  if (text(get, arg, "CUDA_VISIBLE_DEVICES", job->visible_devices, sizeof job->visible_devices))
    job->rec.known |= CT_JOB_VISIBLE_DEVICES;
}

int ctp_job_present(const struct ctp_job *job) {
  return job->rec.known || job->job_id[0] || job->nwarnings;
}

size_t ctp_job_file_prefix(const struct ctp_job *job, char *buf, size_t cap) {
  if (!cap) return 0;
  buf[0] = 0;
  if (!(job->rec.known & CT_JOB_RANK)) return 0;
  int width = 1; /* digits of the largest rank: names sort by rank */
  if (job->rec.known & CT_JOB_WORLD_SIZE)
    for (uint64_t top = job->rec.world_size - 1; top >= 10; top /= 10) width++;
  int n = snprintf(buf, cap, "rank-%0*llu.", width, (unsigned long long)job->rec.rank);
  if (n < 0 || (size_t)n >= cap) {
    buf[0] = 0;
    return 0;
  }
  return (size_t)n;
}
