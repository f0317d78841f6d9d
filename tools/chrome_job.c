/*
 * distributedInfo of the Chrome/Kineto export (format 1.4 JOB records): HTA reads a
 * trace's rank from it, one file per rank (cutrace dump --chrome --split).
 */
#include <stdio.h>

#include "chrome_internal.h"

void chr_note_job(ct_chrome *c, const struct ct_job *job) {
  if (!(job->known & CT_JOB_RANK)) return;
  for (unsigned i = 0; i < c->nranks; i++)
    if (c->ranks[i] == job->rank) return;
  if (!c->nranks) c->job = *job;
  if (c->nranks < sizeof c->ranks / sizeof c->ranks[0]) c->ranks[c->nranks++] = job->rank;
}

/* Writes ,"key":v when bit is known. */
static void put_known(ct_chrome *c, const char *key, uint64_t bit, uint64_t v) {
  if (c->job.known & bit) fprintf(c->f, ",\"%s\":%llu", key, (unsigned long long)v);
}

void chr_put_distributed_info(ct_chrome *c) {
  FILE *f = c->f;
  if (!c->nranks) { /* no rank known: a single process */
    fputs("\"distributedInfo\":{\"rank\":0,\"world_size\":1}", f);
    return;
  }
  if (c->nranks == 1) {
    fprintf(f, "\"distributedInfo\":{\"rank\":%llu", (unsigned long long)c->job.rank);
    put_known(c, "world_size", CT_JOB_WORLD_SIZE, c->job.world_size);
    put_known(c, "local_rank", CT_JOB_LOCAL_RANK, c->job.local_rank);
    put_known(c, "local_world_size", CT_JOB_LOCAL_WORLD_SIZE, c->job.local_world_size);
    put_known(c, "node_rank", CT_JOB_NODE_RANK, c->job.node_rank);
    fputc('}', f);
    return;
  }
  /* several ranks in one document: no single rank to name (HTA wants --split) */
  fputs("\"distributedInfo\":{\"ranks\":[", f);
  for (unsigned i = 0; i < c->nranks; i++)
    fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)c->ranks[i]);
  fputc(']', f);
  put_known(c, "world_size", CT_JOB_WORLD_SIZE, c->job.world_size);
  fputc('}', f);
}
