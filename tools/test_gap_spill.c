/*
 * Gaps kept for later (gap_spill.c), built with a 512-byte memory buffer so that
 * most gaps go through the temporary file: 30,000 gaps with every cause, no cause, a
 * cause outside the list, no ending call, an empty one, 300 distinct ones (more than
 * are kept by index), a 400-byte one, starts going backwards, whole-device gaps,
 * the largest values; the call each was spent inside (none, 280 distinct names, a
 * 300-byte one) and its time. Replayed, every gap must come back in order, equal. Then a
 * cause too long to keep makes the replay refuse (-1) without handing over any gap.
 * usage: test_gap_spill
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gap_spill.h"

#include "test_check.h"

#define NGAPS 30000

typedef struct want {
  uint64_t device, stream, start_ns, end_ns;
  char cause[80], ended[2100], inside[500];
  int cause_null, ended_null, inside_null;
  uint64_t inside_ns;
} want;

static want wants[NGAPS];
static unsigned replayed;

static int same_text(const char *got, int want_null, const char *want) {
  return want_null ? got == NULL : got != NULL && !strcmp(got, want);
}

static void on_gap(void *user, const ct_gap_info *g) {
  (void)user;
  unsigned i = replayed++;
  if (i >= NGAPS) {
    CHECK(0, "more gaps than kept");
    return;
  }
  const want *w = &wants[i];
  CHECK(g->device == w->device && g->stream == w->stream && g->start_ns == w->start_ns &&
            g->end_ns == w->end_ns,
        "gap %u: numbers %llu %llu %llu %llu", i, (unsigned long long)g->device,
        (unsigned long long)g->stream, (unsigned long long)g->start_ns,
        (unsigned long long)g->end_ns);
  CHECK(same_text(g->cause, w->cause_null, w->cause), "gap %u: cause %s", i, g->cause ? g->cause : "(null)");
  CHECK(same_text(g->ended_by, w->ended_null, w->ended), "gap %u: ended_by", i);
  CHECK(same_text(g->inside_call, w->inside_null, w->inside) && g->inside_ns == (w->inside_null ? 0 : w->inside_ns),
        "gap %u: inside_call %s %llu", i, g->inside_call ? g->inside_call : "(null)",
        (unsigned long long)g->inside_ns);
}

static void refused(void *user, const ct_gap_info *g) {
  (void)user;
  (void)g;
  CHECK(0, "a refused replay handed over a gap");
}

int main(void) {
  ct_gap_spill *s = ct_gap_spill_new();
  CHECK(s != NULL, "new");
  if (!s) return 1;
  uint64_t t = 5000000000ull;
  for (unsigned i = 0; i < NGAPS; i++) {
    want *w = &wants[i];
    w->device = i % 5 == 4 ? UINT64_MAX : i % 3;
    w->stream = i % 7 == 0 ? UINT64_MAX : (uint64_t)i * 13;
    t = i % 11 == 5 ? t - 777777 : t + 1000 + i % 97; /* sometimes backwards */
    w->start_ns = i == 100 ? UINT64_MAX - 5 : t;
    w->end_ns = i % 1000 == 3 ? w->start_ns - 1 : w->start_ns + 1 + i % 5000;
    unsigned c = i % (CT_GAP_NCAUSES + 2);
    if (c < CT_GAP_NCAUSES) snprintf(w->cause, sizeof w->cause, "%s", ct_gap_cause_name(c));
    else if (c == CT_GAP_NCAUSES) snprintf(w->cause, sizeof w->cause, "not_a_cause");
    else w->cause_null = 1;
    unsigned e = i % 9;
    if (e == 0) w->ended_null = 1;
    else if (e == 1) w->ended[0] = 0;
    else if (e == 2 && i % 5 == 0) memset(w->ended, 'x', 400), w->ended[400] = 0;
    else snprintf(w->ended, sizeof w->ended, "cudaCall%u", i % 300);
    unsigned in = i % 13; /* the call a gap was spent inside: none mostly, known, new, long */
    if (in < 8) w->inside_null = 1;
    else if (in == 12 && e != 2) memset(w->inside, 'y', 300), w->inside[300] = 0; /* fits beside the rest */
    else snprintf(w->inside, sizeof w->inside, "cudaInside%u", i % 280);
    w->inside_ns = w->inside_null ? 0 : i == 200 * 13 + 9 ? UINT64_MAX : (uint64_t)i * 1001;
    /* the strings handed in live only during the call: copies, overwritten after */
    char cause[80], ended[2100], inside[500];
    strcpy(cause, w->cause);
    strcpy(ended, w->ended);
    strcpy(inside, w->inside);
    ct_gap_info g = {NULL, w->device, w->stream, w->start_ns, w->end_ns,
                     w->cause_null ? NULL
                     : c < CT_GAP_NCAUSES ? ct_gap_cause_name(c) : cause,
                     w->ended_null ? NULL : ended, 0, 0, w->inside_null ? NULL : inside, w->inside_ns, NULL, NULL};
    ct_gap_spill_add(s, &g);
    memset(cause, '?', sizeof cause - 1);
    memset(ended, '?', 50);
    memset(inside, '?', 50);
  }
  int rc = ct_gap_spill_replay(s, NULL, on_gap, NULL);
  CHECK(rc == 0, "replay returned %d", rc);
  CHECK(replayed == NGAPS, "%u gaps replayed of %u", replayed, NGAPS);
  ct_gap_spill_free(s);

  s = ct_gap_spill_new();
  char long_cause[200];
  memset(long_cause, 'c', sizeof long_cause - 1);
  long_cause[sizeof long_cause - 1] = 0;
  ct_gap_info g = {NULL, 0, 1, 10, 20, "sync", "cudaMemcpy", 0, 0, NULL, 0, NULL, NULL};
  ct_gap_spill_add(s, &g);
  g.cause = long_cause;
  ct_gap_spill_add(s, &g);
  CHECK(ct_gap_spill_replay(s, NULL, refused, NULL) == -1, "a gap that could not be kept");
  ct_gap_spill_free(s);
  ct_gap_spill_free(NULL);
  if (failures) printf("%d failures\n", failures);
  else printf("ok: %u gaps through a %u-byte buffer\n", replayed, (unsigned)CT_GAP_SPILL_MEM);
  return failures != 0;
}
