/*
 * The capture cost that preload/stacks/ writes (TRACER "stacks" records), checked on
 * the stacks code alone (bench/stkb_shim.c keeps the records) with planted delays
 * (CUTRACE_TEST_STACKS_DELAY_NS: a timed capture sleeps inside, as a preempted one).
 *
 *   preempt  after 64 captures of warm-up (the first stack's misses), 1024 captures
 *            in a tight loop, the 2nd timed one of them sleeping 3 ms: the records' summed duration stays under half of that (a
 *            plain mean of the timed captures would count the sleep 16 times, and the
 *            span of the period alone still holds all of it)
 *   away     4 bursts of 64 captures, every timed one sleeping 1 ms (so the estimate
 *            is large), the thread sleeping 20 ms between bursts outside the tracer:
 *            no record overlaps any of those sleeps, and every record lies inside a
 *            burst
 *   miss     8 captures, each of a new stack (a cache miss: tree work), each miss
 *            sleeping 3 ms inside its tree work (@miss): the records' summed duration
 *            stays under 1.5 ms (a miss counts the thread's CPU time, not the 24 ms of
 *            wall time a preempted or sleeping miss takes; 93 ms once under load)
 * All: the records' amounts add up to the captures made.
 *
 * usage: test_stack_cost            (runs itself once per case, with the case's
 *        test_stack_cost CASE        environment)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t stkb_capture_after(int gpu_work, uint64_t after_ns);
uint64_t stkb_now_ns(void);
void stkb_set_flush_ns(uint64_t ns);
void stkb_final_flush(void);
unsigned stkb_stacks_records(void);
void stkb_stacks_record(unsigned i, uint64_t *begin_ns, uint64_t *end_ns, uint64_t *amount);

#define MS 1000000ull
static int failures;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);          \
      printf(__VA_ARGS__);                                 \
      printf("\n");                                        \
      failures++;                                          \
    }                                                      \
  } while (0)

static volatile uint64_t sink;

/* One intercepted call returning now, then its capture (as the hooks do). */
__attribute__((noinline)) static void call_site(void) { sink += stkb_capture_after(1, stkb_now_ns()); }

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* The summed duration and amount of the records from the from-th on; prints them. */
static void totals(unsigned from, uint64_t *dur, uint64_t *amount) {
  *dur = *amount = 0;
  for (unsigned i = from; i < stkb_stacks_records(); i++) {
    uint64_t b, e, a;
    stkb_stacks_record(i, &b, &e, &a);
    printf("  stacks record %u: [%llu, %llu] %llu ns, %llu captures\n", i, (unsigned long long)b,
           (unsigned long long)e, (unsigned long long)(e - b), (unsigned long long)a);
    *dur += e - b;
    *amount += a;
  }
}

static int run_preempt(void) {
  stkb_set_flush_ns(10000 * MS); /* one period, ended by the final flush */
  for (int i = 0; i < 64; i++) call_site(); /* the first stack's misses, timed 1-4 */
  stkb_final_flush();
  unsigned warm = stkb_stacks_records();
  for (int i = 0; i < 1024; i++) call_site(); /* timed 5, 6 (sleeping), ... */
  stkb_final_flush();
  uint64_t dur, amount;
  totals(warm, &dur, &amount);
  CHECK(amount == 1024, "captures counted %llu, made 1024", (unsigned long long)amount);
  CHECK(dur > 0 && dur < 3 * MS / 2,
        "estimated capture time %llu ns: the planted 3 ms preempted sample inflated it",
        (unsigned long long)dur);
  return failures;
}

/* A capture k frames below here: a stack of its own for each k. */
__attribute__((noinline)) static void nested(int k) {
  if (k > 0) nested(k - 1);
  else call_site();
  sink += (uint64_t)k; /* not a tail call: each level keeps its frame */
}

static int run_miss(void) {
  stkb_set_flush_ns(10000 * MS); /* one period, ended by the final flush */
  for (int k = 1; k <= 8; k++) nested(k); /* 8 new stacks: 8 misses, each sleeping 3 ms */
  stkb_final_flush();
  uint64_t dur, amount;
  totals(0, &dur, &amount);
  CHECK(amount == 8, "captures counted %llu, made 8", (unsigned long long)amount);
  CHECK(dur > 0 && dur < 3 * MS / 2,
        "estimated capture time %llu ns: the 8 planted 3 ms sleeps in misses counted",
        (unsigned long long)dur);
  return failures;
}

static int run_away(void) {
  stkb_set_flush_ns(30 * MS); /* periods ending after the sleeps, as the deadline passes */
  uint64_t burst[4][2], sleeps[3][2];
  for (int b = 0; b < 4; b++) {
    burst[b][0] = stkb_now_ns();
    for (int i = 0; i < 64; i++) call_site();
    burst[b][1] = stkb_now_ns();
    if (b < 3) {
      sleeps[b][0] = stkb_now_ns();
      sleep_ns(20 * MS);
      sleeps[b][1] = stkb_now_ns();
    }
  }
  stkb_final_flush();
  uint64_t dur, amount;
  totals(0, &dur, &amount);
  CHECK(amount == 256, "captures counted %llu, made 256", (unsigned long long)amount);
  CHECK(dur > 0, "no capture time written");
  for (unsigned i = 0; i < stkb_stacks_records(); i++) {
    uint64_t b, e, a;
    stkb_stacks_record(i, &b, &e, &a);
    for (int s = 0; s < 3; s++)
      CHECK(e <= sleeps[s][0] || b >= sleeps[s][1],
            "record %u [%llu, %llu] covers %llu ns of the program's sleep %d [%llu, %llu]", i,
            (unsigned long long)b, (unsigned long long)e,
            (unsigned long long)((e < sleeps[s][1] ? e : sleeps[s][1]) -
                                 (b > sleeps[s][0] ? b : sleeps[s][0])),
            s, (unsigned long long)sleeps[s][0], (unsigned long long)sleeps[s][1]);
    int inside = 0;
    for (int k = 0; k < 4; k++) inside |= b >= burst[k][0] && e <= burst[k][1];
    CHECK(inside, "record %u [%llu, %llu] lies in no burst", i, (unsigned long long)b,
          (unsigned long long)e);
  }
  return failures;
}

/* Runs this program once on one case with its planted delay; 1 when it failed. */
static int run_case_once(const char *self, const char *name, const char *delay) {
  printf("case %s (CUTRACE_TEST_STACKS_DELAY_NS=%s)\n", name, delay);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CUTRACE_TEST_STACKS_DELAY_NS", delay, 1);
    setenv("CUTRACE_STACKS", "launches", 1);
    unsetenv("CUTRACE_STACK_DEPTH");
    execl(self, self, name, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
    printf("FAIL case %s: status 0x%x\n", name, status);
    return 1;
  }
  return 0;
}

/*
 * Runs one case up to three times; 1 when every run failed. A loaded machine can
 * preempt the unplanted captures too, or the bursts themselves, and fail one run; a
 * broken estimate or placement fails every run (the planted delay is the same each time).
 */
static int run_case(const char *self, const char *name, const char *delay) {
  for (int attempt = 1; attempt <= 3; attempt++) {
    if (!run_case_once(self, name, delay)) return 0;
    printf("case %s: run %d of 3 failed%s\n", name, attempt, attempt < 3 ? ", again" : "");
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "preempt")) return run_preempt() ? 1 : 0;
  if (argc == 2 && !strcmp(argv[1], "away")) return run_away() ? 1 : 0;
  if (argc == 2 && !strcmp(argv[1], "miss")) return run_miss() ? 1 : 0;
  if (argc != 1) {
    fprintf(stderr, "usage: test_stack_cost [preempt|away|miss]\n");
    return 2;
  }
  int failed = run_case(argv[0], "preempt", "3000000@6") + run_case(argv[0], "away", "1000000") +
               run_case(argv[0], "miss", "3000000@miss");
  printf("%s\n", failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
