/*
 * Gaps kept for later (gap_spill.h), about 13 bytes each: a byte for the cause (its
 * enum ct_gap_cause, or CAUSE_NULL, or CAUSE_TEXT followed by the text), the ending
 * call (0 none, 1 text follows, k + 2 the k-th distinct text seen), the call the gap
 * was spent inside (inside_call, coded the same way; when there is one, its time in
 * the gap follows), the device, the stream + 1, the start as a zigzag delta from the
 * previous gap's, and the length, all as LEB128 varints; a text is its length and
 * bytes. Distinct ending and inside calls are few (entry points), so up to NAMES of
 * them are kept once, in memory. The bytes go
 * to a memory buffer that is written to a temporary file as one chunk (its length,
 * then whole gaps) whenever it fills; reading back, each chunk is read into the
 * buffer again.
 */
#include "gap_spill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAUSE_NULL 0xfe
#define CAUSE_TEXT 0xff
#define NAMES 255          /* distinct ending calls kept by index */
#define NAME_SLOTS 512     /* their hash table (a power of two, > 2 * NAMES) */
#define GAP_MAX_BYTES 100  /* the most one gap takes besides its texts' bytes */
#define CAUSE_TEXT_MAX 63  /* longer cause texts are not kept (causes are short words) */

struct ct_gap_spill {
  unsigned char *buf;
  size_t n;                   /* bytes in buf */
  FILE *file;                 /* what did not fit in buf, first (NULL: nothing yet) */
  int failed;
  uint64_t last_start;        /* the previous gap's start (delta base) */
  char *names[NAMES];         /* distinct ending calls by index */
  unsigned nnames;
  short slots[NAME_SLOTS];    /* name index + 1 by hash of the text, 0 empty */
  char *text, *inside_text;   /* texts read back (replay): ending call, inside call */
  size_t text_cap, inside_cap;
};

ct_gap_spill *ct_gap_spill_new(void) {
  ct_gap_spill *s = calloc(1, sizeof *s);
  if (s && !(s->buf = malloc(CT_GAP_SPILL_MEM))) {
    free(s);
    return NULL;
  }
  return s;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Writes the buffer out as one chunk of the temporary file: its length, its bytes
 * (whole gaps only, so that each chunk decodes by itself). 0, or -1 on failure. */
static int write_chunk(ct_gap_spill *s) {
  uint64_t len = s->n;
  if (!s->file) s->file = tmpfile();
  if (!s->file || fwrite(&len, sizeof len, 1, s->file) != 1 ||
      fwrite(s->buf, 1, s->n, s->file) != s->n)
    return -1;
  s->n = 0;
  return 0;
}

/* Makes room for need bytes in the buffer (writing it out); 0, or -1 on failure. */
static int reserve(ct_gap_spill *s, size_t need) {
  if (s->n + need <= CT_GAP_SPILL_MEM) return 0;
  if (need > CT_GAP_SPILL_MEM) return -1;
  return write_chunk(s);
}

/* The code of an ending call's text: 0 none, k + 2 a known one, 1 a text to write. */
static uint64_t name_code(ct_gap_spill *s, const char *text) {
  if (!text) return 0;
  uint32_t h = 2166136261u; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) h = (h ^ *p) * 16777619u;
  for (unsigned i = h & (NAME_SLOTS - 1);; i = (i + 1) & (NAME_SLOTS - 1)) {
    if (!s->slots[i]) {
      if (s->nnames == NAMES || !(s->names[s->nnames] = strdup(text))) return 1;
      s->slots[i] = (short)++s->nnames;
      return 1; /* written in full this once, and known from here on */
    }
    if (!strcmp(s->names[s->slots[i] - 1], text)) return (uint64_t)s->slots[i] + 1;
  }
}

void ct_gap_spill_add(void *spill, const ct_gap_info *gap) {
  ct_gap_spill *s = spill;
  if (s->failed) return;
  unsigned cause = CAUSE_NULL;
  for (unsigned i = 0; gap->cause && cause == CAUSE_NULL && i < CT_GAP_NCAUSES; i++)
    if (gap->cause == ct_gap_cause_name((enum ct_gap_cause)i)) cause = i;
  for (unsigned i = 0; gap->cause && cause == CAUSE_NULL && i < CT_GAP_NCAUSES; i++)
    if (!strcmp(gap->cause, ct_gap_cause_name((enum ct_gap_cause)i))) cause = i;
  if (gap->cause && cause == CAUSE_NULL) cause = CAUSE_TEXT;
  uint64_t ended = name_code(s, gap->ended_by), inside = name_code(s, gap->inside_call);
  size_t cause_len = cause == CAUSE_TEXT ? strlen(gap->cause) : 0;
  size_t ended_len = ended == 1 ? strlen(gap->ended_by) : 0;
  size_t inside_len = inside == 1 ? strlen(gap->inside_call) : 0;
  if (cause_len > CAUSE_TEXT_MAX || reserve(s, GAP_MAX_BYTES + cause_len + ended_len + inside_len) < 0) {
    s->failed = 1;
    return;
  }
  unsigned char *p = s->buf + s->n;
  *p++ = (unsigned char)cause;
  if (cause == CAUSE_TEXT) {
    p = put_varint(p, cause_len);
    memcpy(p, gap->cause, cause_len);
    p += cause_len;
  }
  p = put_varint(p, ended);
  if (ended == 1) {
    p = put_varint(p, ended_len);
    memcpy(p, gap->ended_by, ended_len);
    p += ended_len;
  }
  p = put_varint(p, inside);
  if (inside == 1) {
    p = put_varint(p, inside_len);
    memcpy(p, gap->inside_call, inside_len);
    p += inside_len;
  }
  if (inside) p = put_varint(p, gap->inside_ns);
  p = put_varint(p, gap->device);
  p = put_varint(p, gap->stream + 1); /* UINT64_MAX (a device gap) -> 0 */
  uint64_t delta = gap->start_ns - s->last_start; /* as a signed difference, zigzagged */
  p = put_varint(p, (delta << 1) ^ (uint64_t)-(int64_t)(delta >> 63));
  p = put_varint(p, gap->end_ns - gap->start_ns);
  s->last_start = gap->start_ns;
  s->n = (size_t)(p - s->buf);
}

/* ---- reading back ------------------------------------------------------------------- */

/* Bytes being read back (one chunk). */
typedef struct source {
  const unsigned char *p, *end;
  int bad;
} source;

static inline int get_byte(source *src) {
  if (src->p == src->end) {
    src->bad = 1;
    return 0;
  }
  return *src->p++;
}

static uint64_t get_varint(source *src) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    int c = get_byte(src);
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  src->bad = 1;
  return v;
}

/* A text (length, bytes) into *buf (*cap bytes, grown); NULL when it cannot be read. */
static const char *get_text(source *src, char **buf, size_t *cap) {
  uint64_t len = get_varint(src);
  if (src->bad || len > CT_GAP_SPILL_MEM) return NULL;
  if (len + 1 > *cap) {
    char *t = realloc(*buf, len + 1);
    if (!t) return NULL;
    *buf = t;
    *cap = len + 1;
  }
  for (uint64_t i = 0; i < len; i++) (*buf)[i] = (char)get_byte(src);
  (*buf)[len] = 0;
  return src->bad ? NULL : *buf;
}

/* A call's name coded by name_code into *name (NULL for none); -1 when bad. */
static int get_name(ct_gap_spill *s, source *src, const char **name, char **buf, size_t *cap) {
  uint64_t code = get_varint(src);
  *name = NULL;
  if (code == 1) return (*name = get_text(src, buf, cap)) ? 0 : -1;
  if (code >= 2 && code - 2 < s->nnames) *name = s->names[code - 2];
  else if (code) return -1;
  return 0;
}

/* Decodes one gap and hands it to fn; -1 when the bytes are short or bad. */
static int replay_one(ct_gap_spill *s, source *src, uint64_t *last_start, const ct_proc *proc,
                      void (*fn)(void *user, const ct_gap_info *gap), void *user) {
  ct_gap_info g = {.proc = proc};
  unsigned cause = (unsigned)get_byte(src);
  char cause_text[CAUSE_TEXT_MAX + 1]; /* the ending call's text reuses s->text */
  if (cause < CT_GAP_NCAUSES) {
    g.cause = ct_gap_cause_name((enum ct_gap_cause)cause);
  } else if (cause == CAUSE_TEXT) {
    const char *t = get_text(src, &s->text, &s->text_cap);
    if (!t || strlen(t) >= sizeof cause_text) return -1; /* causes are short words */
    g.cause = strcpy(cause_text, t);
  } else if (cause != CAUSE_NULL) {
    return -1;
  }
  if (get_name(s, src, &g.ended_by, &s->text, &s->text_cap) < 0 ||
      get_name(s, src, &g.inside_call, &s->inside_text, &s->inside_cap) < 0)
    return -1;
  if (g.inside_call) g.inside_ns = get_varint(src);
  g.device = get_varint(src);
  g.stream = get_varint(src) - 1;
  uint64_t zz = get_varint(src);
  g.start_ns = *last_start + ((zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1));
  g.end_ns = g.start_ns + get_varint(src);
  if (src->bad) return -1;
  *last_start = g.start_ns;
  fn(user, &g);
  return 0;
}

/* Hands over the gaps of the chunk in buf[0, n); 0, or -1 when it does not decode. */
static int replay_chunk(ct_gap_spill *s, size_t n, uint64_t *last_start, const ct_proc *proc,
                        void (*fn)(void *user, const ct_gap_info *gap), void *user) {
  source src = {.p = s->buf, .end = s->buf + n};
  while (src.p < src.end)
    if (replay_one(s, &src, last_start, proc, fn, user) < 0) return -1;
  return 0;
}

int ct_gap_spill_replay(ct_gap_spill *s, const ct_proc *proc,
                        void (*fn)(void *user, const ct_gap_info *gap), void *user) {
  if (s->failed) return -1;
  uint64_t last_start = 0;
  if (!s->file) return replay_chunk(s, s->n, &last_start, proc, fn, user) < 0 ? 1 : 0;
  /* the buffer becomes the last chunk, and then holds each chunk read back in turn */
  if ((s->n && write_chunk(s) < 0) || fflush(s->file) != 0 || fseek(s->file, 0, SEEK_SET) != 0)
    return -1;
  uint64_t len;
  while (fread(&len, sizeof len, 1, s->file) == 1) {
    if (len > CT_GAP_SPILL_MEM || fread(s->buf, 1, len, s->file) != len ||
        replay_chunk(s, len, &last_start, proc, fn, user) < 0)
      return 1;
  }
  return ferror(s->file) ? 1 : 0;
}

void ct_gap_spill_free(ct_gap_spill *s) {
  if (!s) return;
  if (s->file) fclose(s->file);
  for (unsigned i = 0; i < s->nnames; i++) free(s->names[i]);
  free(s->buf);
  free(s->text);
  free(s->inside_text);
  free(s);
}
