/*
 * Which processes and GPUs a Chrome/Kineto document covers: the GPUs' process rows,
 * deviceProperties, and
 * distributedInfo from format 1.4 JOB records (HTA reads a trace's rank from it, one
 * file per rank: cutrace dump --chrome --split).
 */
#include <stddef.h>
#include <stdio.h>

#include "chrome_internal.h"
#include "chrome_out.h"

void chr_note_job(ct_chrome *c, const struct ct_job *job) {
  if (!(job->known & CT_JOB_RANK)) return;
  for (unsigned i = 0; i < c->nranks; i++)
    if (c->ranks[i] == job->rank) return;
  if (!c->nranks) c->job = *job;
  if (c->nranks < sizeof c->ranks / sizeof c->ranks[0]) c->ranks[c->nranks++] = job->rank;
}

/* Writes ,"key":v when bit is known. */
static void put_known(ct_chrome *c, const char *key, uint64_t bit, uint64_t v) {
  if (!(c->job.known & bit)) return;
  chr_put_text(c, ",\"");
  chr_put_text(c, key);
  chr_put_text(c, "\":");
  chr_put_u64(c, v);
}

void chr_put_distributed_info(ct_chrome *c) {
  if (!c->nranks) { /* no rank known: a single process */
    chr_put_text(c, "\"distributedInfo\":{\"rank\":0,\"world_size\":1}");
    return;
  }
  if (c->nranks == 1) {
    chr_put_text(c, "\"distributedInfo\":{\"rank\":");
    chr_put_u64(c, c->job.rank);
    put_known(c, "world_size", CT_JOB_WORLD_SIZE, c->job.world_size);
    put_known(c, "local_rank", CT_JOB_LOCAL_RANK, c->job.local_rank);
    put_known(c, "local_world_size", CT_JOB_LOCAL_WORLD_SIZE, c->job.local_world_size);
    put_known(c, "node_rank", CT_JOB_NODE_RANK, c->job.node_rank);
    chr_put_char(c, '}');
    return;
  }
  /* several ranks in one document: no single rank to name (HTA wants --split) */
  chr_put_text(c, "\"distributedInfo\":{\"ranks\":[");
  for (unsigned i = 0; i < c->nranks; i++) {
    if (i) chr_put_char(c, ',');
    chr_put_u64(c, c->ranks[i]);
  }
  chr_put_char(c, ']');
  put_known(c, "world_size", CT_JOB_WORLD_SIZE, c->job.world_size);
  chr_put_char(c, '}');
}

uint64_t chr_gpu_pid(const ct_chrome *c, uint64_t device) {
  if (!chr_multi(c)) return device;
  return GPU_ROW_PID_BASE + c->file_index * GPU_ROW_FILE_STRIDE + device % GPU_ROW_FILE_STRIDE;
}

/* The deviceProperties entry of a device of the current file, or -1. */
static int device_entry(const ct_chrome *c, uint64_t device) {
  uint64_t row = chr_gpu_pid(c, device);
  for (unsigned j = 0; j < c->ndevices; j++)
    if (c->devices[j].device == device && (!chr_multi(c) || c->device_row[j] == row)) return (int)j;
  return -1;
}

void chr_gpu_row_name(const ct_chrome *c, uint64_t device, char *buf, size_t len) {
  if (!chr_multi(c)) {
    snprintf(buf, len, "GPU %llu", (unsigned long long)device);
    return;
  }
  char who[48];
  if (c->proc_job.known & CT_JOB_RANK)
    snprintf(who, sizeof who, "rank %llu", (unsigned long long)c->proc_job.rank);
  else
    snprintf(who, sizeof who, "pid %llu", (unsigned long long)c->pid);
  int k = device_entry(c, device);
  if (k >= 0 && c->device_names[k][0])
    snprintf(buf, len, "%s GPU %llu (%s)", who, (unsigned long long)device, c->device_names[k]);
  else
    snprintf(buf, len, "%s GPU %llu", who, (unsigned long long)device);
}

void chr_note_devices(ct_chrome *c, const ct_proc *p) {
  for (unsigned i = c->proc_devices; i < p->ndevices && i < 16; i++) {
    if (device_entry(c, p->devices[i].device) >= 0 || c->ndevices >= 64) continue;
    unsigned k = c->ndevices++;
    c->devices[k] = p->devices[i];
    c->device_row[k] = chr_gpu_pid(c, p->devices[i].device);
    c->device_owner[k] = c->pid;
    c->device_job[k] = c->proc_job;
    snprintf(c->device_names[k], sizeof c->device_names[0], "%s", p->device_names[i]);
    snprintf(c->device_pci[k], sizeof c->device_pci[0], "%s", p->device_pci[i] ? p->device_pci[i] : "");
    snprintf(c->device_uuid[k], sizeof c->device_uuid[0], "%s", p->device_uuid[i] ? p->device_uuid[i] : "");
    if (chr_multi(c)) chr_rename_gpu_row(c, p->devices[i].device);
  }
  c->proc_devices = p->ndevices;
}

void chr_put_cuda_versions(ct_chrome *c) {
  uint64_t driver = 0, runtime = 0;
  for (unsigned i = 0; i < c->ndevices; i++) {
    if (!driver) driver = c->devices[i].driver_version;
    if (!runtime) runtime = c->devices[i].runtime_version;
  }
  if (driver) {
    chr_put_text(c, ",\n\"cuda_driver_version\":");
    chr_put_u64(c, driver);
  }
  if (runtime) {
    chr_put_text(c, ",\n\"cuda_runtime_version\":");
    chr_put_u64(c, runtime);
  }
}

void chr_put_device_properties(ct_chrome *c) {
  chr_put_text(c, "\"deviceProperties\":[");
  for (unsigned i = 0; i < c->ndevices; i++) {
    const struct ct_device *d = &c->devices[i];
    chr_put_text(c, i ? ",\n{\"id\":" : "\n{\"id\":");
    chr_put_u64(c, d->device);
    chr_put_text(c, ",\"name\":");
    chr_put_string(c, c->device_names[i]);
    chr_put_text(c, ",\"totalGlobalMem\":");
    chr_put_u64(c, d->mem_bytes);
    chr_put_text(c, ",\"computeMajor\":");
    chr_put_u64(c, d->cc_major);
    chr_put_text(c, ",\"computeMinor\":");
    chr_put_u64(c, d->cc_minor);
    chr_put_text(c, ",\"numSms\":");
    chr_put_u64(c, d->sm_count);
    /* format 1.6: the SM limits, with Kineto's names (libkineto/src/DeviceProperties.cpp) */
    const struct { const char *key; uint64_t v; } limits[] = {
        {",\"maxThreadsPerMultiprocessor\":", d->max_threads_per_sm},
        {",\"warpSize\":", d->warp_size},
        {",\"regsPerMultiprocessor\":", d->regs_per_sm},
        {",\"sharedMemPerMultiprocessor\":", d->smem_per_sm}};
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
      if (!limits[l].v) continue; /* unknown (a trace before 1.6) */
      chr_put_text(c, limits[l].key);
      chr_put_u64(c, limits[l].v);
    }
    if (c->device_pci[i][0]) {
      chr_put_text(c, ",\"pciBusId\":");
      chr_put_string(c, c->device_pci[i]);
    }
    if (c->device_uuid[i][0]) {
      chr_put_text(c, ",\"uuid\":");
      chr_put_string(c, c->device_uuid[i]);
    }
    if (chr_multi(c)) { /* several files: which process row and which process */
      chr_put_text(c, ",\"pid\":");
      chr_put_u64(c, c->device_row[i]);
      chr_put_text(c, ",\"process\":");
      chr_put_u64(c, c->device_owner[i]);
      if (c->device_job[i].known & CT_JOB_RANK) {
        chr_put_text(c, ",\"rank\":");
        chr_put_u64(c, c->device_job[i].rank);
      }
    }
    chr_put_char(c, '}');
  }
  chr_put_char(c, ']');
}
