/* A trace file's process and rank, read from the head of the file (identity.h). */
#include <stdio.h>
#include <string.h>

#include "identity.h"
#include "reader.h"

/* Copies string id of r into buf ("" when unknown). */
static void copy_string(ct_reader *r, uint64_t sid, char *buf, size_t cap) {
  size_t len = 0;
  const char *s = sid ? ct_reader_string(r, sid, &len) : NULL;
  if (!s) len = 0;
  if (len >= cap) len = cap - 1;
  if (len) memcpy(buf, s, len);
  buf[len] = 0;
}

int ct_identity_read(const char *path, ct_identity *id, char *err, size_t errlen) {
  memset(id, 0, sizeof *id);
  ct_reader *r = ct_reader_open(path, err, errlen);
  if (!r) return -1;
  ct_record rec;
  while (ct_reader_next(r, &rec)) {
    if (rec.kind == CT_KIND_STRING) continue;
    if (rec.kind == CT_KIND_PROCESS) {
      id->proc = rec.u.process;
      id->has_process = 1;
      copy_string(r, rec.u.process.host, id->host, sizeof id->host);
      continue;
    }
    if (rec.kind == CT_KIND_JOB) {
      id->job = rec.u.job;
      copy_string(r, rec.u.job.source, id->source, sizeof id->source);
      copy_string(r, rec.u.job.job_id, id->job_id, sizeof id->job_id);
      copy_string(r, rec.u.job.visible_devices, id->visible_devices, sizeof id->visible_devices);
    }
    break; /* JOB follows PROCESS directly: anything else ends the head */
  }
  ct_reader_close(r);
  return 0;
}

const char *ct_proc_label(const struct ct_job *job, uint64_t pid, const char *host, char *buf,
                          size_t len) {
  const char *h = host && *host ? host : "?";
  if (job && (job->known & CT_JOB_RANK))
    snprintf(buf, len, "rank %llu (pid %llu on %s)", (unsigned long long)job->rank,
             (unsigned long long)pid, h);
  else
    snprintf(buf, len, "pid %llu on %s", (unsigned long long)pid, h);
  return buf;
}

void ct_json_job(ct_json *j, const struct ct_job *job) {
  static const struct {
    const char *key;
    uint64_t bit;
    size_t offset;
  } members[] = {
      {"rank", CT_JOB_RANK, offsetof(struct ct_job, rank)},
      {"world_size", CT_JOB_WORLD_SIZE, offsetof(struct ct_job, world_size)},
      {"local_rank", CT_JOB_LOCAL_RANK, offsetof(struct ct_job, local_rank)},
      {"local_world_size", CT_JOB_LOCAL_WORLD_SIZE, offsetof(struct ct_job, local_world_size)},
      {"node_rank", CT_JOB_NODE_RANK, offsetof(struct ct_job, node_rank)},
  };
  for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
    ct_json_key(j, members[i].key);
    if (job && (job->known & members[i].bit)) {
      uint64_t v;
      memcpy(&v, (const char *)job + members[i].offset, sizeof v);
      ct_json_uint(j, v);
    } else {
      ct_json_null(j);
    }
  }
}
