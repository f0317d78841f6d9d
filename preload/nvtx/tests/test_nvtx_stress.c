/*
 * Runs nvtx_stress (THREADS threads x ROUNDS rounds, twice; start/end ranges ended
 * by the neighbour thread) under libtrace.so with buffers large enough for no
 * drop, and checks every range exactly: counts per name and per thread, depths,
 * flags, each s_inner inside its s_outer, each s_cross begun inside its starter's
 * s_inner and recorded with the starter's tid though another thread ended it.
 *
 * Usage: test_nvtx_stress LIBTRACE_SO NVTX_STRESS. Exit 0 pass, 1 fail.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvtx_check.h"
#include "scratch.h"

#define THREADS 4
#define ROUNDS 2000
#define BATCHES 2
#define MAX_TIDS (THREADS * BATCHES)

enum { OUTER, INNER, CROSS, NAMES };
static const char *const names[NAMES] = {"s_outer", "s_inner", "s_cross"};

struct span {
  uint64_t begin_ns, end_ns;
};

/* Per thread id: its ranges of each name, in file order. */
struct per_tid {
  uint64_t tid;
  int count[NAMES];
  struct span *spans[NAMES];
};

static struct per_tid tids[MAX_TIDS];
static int ntids;

static struct per_tid *per_tid(uint64_t tid) {
  for (int i = 0; i < ntids; i++)
    if (tids[i].tid == tid) return &tids[i];
  if (ntids == MAX_TIDS) return NULL;
  struct per_tid *p = &tids[ntids++];
  p->tid = tid;
  for (int k = 0; k < NAMES; k++) p->spans[k] = calloc(ROUNDS, sizeof(struct span));
  return p;
}

static int name_index(const ct_reader *r, uint64_t id) {
  char name[64];
  check_copy_string(r, id, name, sizeof name);
  for (int k = 0; k < NAMES; k++)
    if (strcmp(name, names[k]) == 0) return k;
  return -1;
}

static void read_trace(const char *path) {
  char err[256];
  ct_reader *r = ct_reader_open(path, err, sizeof err);
  CHECK(r, "cannot read %s: %s", path, err);
  if (!r) return;
  ct_record rec;
  uint64_t drops = 0, bad = 0, too_many = 0;
  while (ct_reader_next(r, &rec) == 1) {
    if (rec.kind == CT_KIND_DROP) drops += rec.u.drop.count;
    if (rec.kind != CT_KIND_RANGE) continue;
    const struct ct_range *g = &rec.u.range;
    int k = name_index(r, g->name);
    uint64_t want_flags = k == CROSS ? CT_RANGE_STARTEND : 0;
    uint64_t want_depth = k == INNER ? 1 : 0;
    if (k < 0 || g->flags != want_flags || g->depth != want_depth || g->domain != 0 ||
        g->end_ns < g->begin_ns) {
      if (bad++ < 5)
        fprintf(stderr, "unexpected range: name %d depth %llu flags %#llx\n", k,
                (unsigned long long)g->depth, (unsigned long long)g->flags);
      continue;
    }
    struct per_tid *p = per_tid(g->tid);
    if (!p || p->count[k] == ROUNDS) {
      too_many++;
      continue;
    }
    p->spans[k][p->count[k]++] = (struct span){g->begin_ns, g->end_ns};
  }
  const ct_read_status *st = ct_reader_status(r);
  CHECK(!st->damaged && st->clean_end, "trace damaged or without END: %s", st->message);
  CHECK(drops == 0, "%llu records dropped (buffers should hold them all)",
        (unsigned long long)drops);
  CHECK(bad == 0, "%llu ranges with a wrong name, depth, flags, domain or times",
        (unsigned long long)bad);
  CHECK(too_many == 0, "%llu ranges beyond %d threads x %d rounds", (unsigned long long)too_many,
        MAX_TIDS, ROUNDS);
  ct_reader_close(r);
}

static void check_threads(void) {
  CHECK(ntids == MAX_TIDS, "ranges from %d threads, expected %d", ntids, MAX_TIDS);
  for (int i = 0; i < ntids; i++) {
    struct per_tid *p = &tids[i];
    for (int k = 0; k < NAMES; k++)
      CHECK(p->count[k] == ROUNDS, "tid %llu: %d %s, expected %d", (unsigned long long)p->tid,
            p->count[k], names[k], ROUNDS);
    if (p->count[OUTER] != ROUNDS || p->count[INNER] != ROUNDS || p->count[CROSS] != ROUNDS)
      continue;
    int nested = 0, crossed = 0;
    for (int j = 0; j < ROUNDS; j++) {
      const struct span *o = &p->spans[OUTER][j], *in = &p->spans[INNER][j];
      const struct span *x = &p->spans[CROSS][j];
      nested += in->begin_ns >= o->begin_ns && in->end_ns <= o->end_ns &&
                (j == 0 || o->begin_ns >= p->spans[OUTER][j - 1].end_ns);
      crossed += x->begin_ns >= in->begin_ns && x->begin_ns <= in->end_ns;
    }
    CHECK(nested == ROUNDS, "tid %llu: %d of %d s_inner inside their s_outer, in order",
          (unsigned long long)p->tid, nested, ROUNDS);
    CHECK(crossed == ROUNDS, "tid %llu: %d of %d s_cross begun inside their s_inner",
          (unsigned long long)p->tid, crossed, ROUNDS);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_nvtx_stress LIBTRACE_SO NVTX_STRESS\n");
    return 1;
  }
  char scratch[4096];
  char *dir = ct_scratch_dir("cutrace-nvtxs-", scratch, sizeof scratch);
  if (!dir) return 1;
  char output[4200], preload[4200], threads[16], rounds[16];
  snprintf(output, sizeof output, "CUTRACE_OUTPUT=%s", dir);
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[1]);
  snprintf(threads, sizeof threads, "%d", THREADS);
  snprintf(rounds, sizeof rounds, "%d", ROUNDS);
  const char *env[] = {output, preload, "CUTRACE_BUFFER_KB=16384", "NVTX_INJECTION64_PATH",
                       "CUTRACE_NVTX", NULL};
  char *run_argv[] = {argv[2], threads, rounds, NULL};
  int status = check_run(env, run_argv, NULL);
  CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "nvtx_stress exit status %d", status);

  char paths[2][4096];
  int n = check_list_traces(dir, paths, 2);
  CHECK(n == 1, "%d trace files in %s, expected 1", n, dir);
  if (n == 1) {
    read_trace(paths[0]);
    check_threads();
  }
  if (check_failures == 0)
    printf("ok: %d threads x %d rounds x 3 ranges, start/end ended across threads\n", MAX_TIDS,
           ROUNDS);
  ct_scratch_done(dir, check_failures == 0);
  return check_failures ? 1 : 0;
}
