/* Streaming trace reader with damage recovery: see reader.h and docs/format.md. */
#include "reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "codec.h"

#define READ_STEP (1u << 20)
#define MAX_STRING_IDS (64u << 20)

static const uint8_t zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

struct ct_reader {
  int fd;
  int eof;
  char *path;
  ct_schema schema;
  ct_read_status st;
  /* compressed input window: buf[pos..len) is unread; buf[0] is at file offset base */
  uint8_t *buf;
  size_t pos, len, cap;
  uint64_t base;
  /* the current decompressed chunk */
  ZSTD_DCtx *dctx;
  uint8_t *chunk;
  size_t chunk_pos, chunk_len, chunk_cap;
  uint64_t chunk_offset;
  ct_delta_state delta;
  /* interned strings by id */
  char **strings;
  uint32_t *string_lens;
  uint64_t nstrings;
  char **retired;       /* strings replaced by a later STRING record with the same id
                           (damaged input): kept, since their pointers stay valid until close */
  size_t nretired, retired_cap;
  int in_damage; /* currently skipping a damaged run */
  uint64_t skip;  /* kinds stepped over undecoded (ct_reader_skip_kinds) */
};

static void note_problem(ct_reader *r, uint64_t offset, const char *fmt, const char *what) {
  r->st.damaged = 1;
  if (!r->st.message[0]) {
    r->st.stop_offset = offset;
    snprintf(r->st.message, sizeof r->st.message, fmt, what, (unsigned long long)offset);
  }
}

/* Reads more bytes into the window. Returns bytes added (0 at EOF or error). */
static size_t fill(ct_reader *r, size_t want) {
  if (r->eof) return 0;
  if (r->pos > 0 && r->pos == r->len) {
    r->base += r->pos;
    r->pos = r->len = 0;
  }
  if (r->cap - r->len < want) {
    if (r->pos > 0) { /* compact */
      memmove(r->buf, r->buf + r->pos, r->len - r->pos);
      r->base += r->pos;
      r->len -= r->pos;
      r->pos = 0;
    }
    if (r->cap - r->len < want) {
      size_t ncap = r->len + want;
      uint8_t *nb = realloc(r->buf, ncap);
      if (!nb) return 0;
      r->buf = nb;
      r->cap = ncap;
    }
  }
  size_t added = 0;
  while (added < want) {
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r->eof = 1;
      break;
    }
    r->len += (size_t)n;
    added += (size_t)n;
  }
  return added;
}

static int store_string(ct_reader *r, uint64_t id, const char *s, size_t len) {
  if (id == 0 || id >= MAX_STRING_IDS) return 0;
  if (id >= r->nstrings) {
    uint64_t n = r->nstrings ? r->nstrings : 256;
    while (n <= id) n *= 2;
    char **ns = realloc(r->strings, n * sizeof *ns);
    if (!ns) return -1;
    r->strings = ns;
    uint32_t *nl = realloc(r->string_lens, n * sizeof *nl);
    if (!nl) return -1;
    r->string_lens = nl;
    memset(ns + r->nstrings, 0, (n - r->nstrings) * sizeof *ns);
    memset(nl + r->nstrings, 0, (n - r->nstrings) * sizeof *nl);
    r->nstrings = n;
  }
  if (r->strings[id] && r->nretired == r->retired_cap) {
    size_t cap = r->retired_cap ? r->retired_cap * 2 : 16;
    char **nr = realloc(r->retired, cap * sizeof *nr);
    if (!nr) return -1;
    r->retired = nr;
    r->retired_cap = cap;
  }
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, s, len);
  copy[len] = 0;
  if (r->strings[id]) r->retired[r->nretired++] = r->strings[id];
  r->strings[id] = copy;
  r->string_lens[id] = (uint32_t)len;
  return 0;
}

/* Skips forward to the next zstd frame magic after the current position. */
static void resync(ct_reader *r) {
  uint64_t start = r->base + r->pos;
  r->pos++;
  for (;;) {
    while (r->len - r->pos >= 4) {
      uint8_t *hit = memmem(r->buf + r->pos, r->len - r->pos, zstd_magic, 4);
      if (hit) {
        r->pos = (size_t)(hit - r->buf);
        r->st.skipped_bytes += r->base + r->pos - start;
        return;
      }
      r->pos = r->len - 3; /* keep a possible partial magic */
    }
    if (!fill(r, READ_STEP)) {
      r->pos = r->len;
      r->st.skipped_bytes += r->base + r->pos - start;
      return;
    }
  }
}

/* Loads the next whole frame into the chunk buffer. Returns 1, or 0 at the end. */
static int next_frame(ct_reader *r) {
  for (;;) {
    if (r->len - r->pos < 18 && !r->eof) fill(r, READ_STEP);
    size_t avail = r->len - r->pos;
    if (avail == 0) return 0;
    const uint8_t *p = r->buf + r->pos;
    uint64_t off = r->base + r->pos;
    if (avail < 4 || memcmp(p, zstd_magic, 4) != 0) {
      if (avail < 4 && r->eof) {
        note_problem(r, off, "%s at offset %llu", "truncated (partial frame)");
        r->st.skipped_bytes += avail;
        r->pos = r->len;
        return 0;
      }
      note_problem(r, off, "%s at offset %llu", "corrupt data (no frame start)");
      r->st.bad_frames++;
      resync(r);
      continue;
    }
    size_t fsize = ZSTD_findFrameCompressedSize(p, avail);
    if (ZSTD_isError(fsize)) {
      if (!r->eof && avail < ZSTD_compressBound(CT_MAX_CHUNK_BYTES) + 64) {
        fill(r, READ_STEP);
        continue;
      }
      note_problem(r, off, "%s at offset %llu",
                   r->eof ? "truncated (last frame incomplete)" : "corrupt frame");
      r->st.bad_frames++;
      if (r->eof && !memmem(p + 1, avail - 1, zstd_magic, 4)) {
        r->st.skipped_bytes += avail;
        r->pos = r->len;
        return 0;
      }
      resync(r);
      continue;
    }
    unsigned long long csize = ZSTD_getFrameContentSize(p, fsize);
    if (csize == ZSTD_CONTENTSIZE_ERROR || csize == ZSTD_CONTENTSIZE_UNKNOWN ||
        csize > CT_MAX_CHUNK_BYTES) {
      note_problem(r, off, "%s at offset %llu", "corrupt frame header");
      r->st.bad_frames++;
      resync(r);
      continue;
    }
    if (csize > r->chunk_cap) {
      uint8_t *nc = realloc(r->chunk, csize);
      if (!nc) {
        note_problem(r, off, "%s at offset %llu", "out of memory");
        return 0;
      }
      r->chunk = nc;
      r->chunk_cap = csize;
    }
    size_t got = ZSTD_decompressDCtx(r->dctx, r->chunk, r->chunk_cap, p, fsize);
    if (ZSTD_isError(got) || got != csize) {
      note_problem(r, off, "%s at offset %llu", "corrupt frame (checksum mismatch)");
      r->st.bad_frames++;
      resync(r);
      continue;
    }
    r->pos += fsize;
    r->chunk_pos = 0;
    r->chunk_len = got;
    r->chunk_offset = off;
    ct_delta_reset(&r->delta);
    r->st.frames++;
    return 1;
  }
}

ct_reader *ct_reader_open(const char *path, char *err, size_t errlen) {
  ct_reader *r = calloc(1, sizeof *r);
  if (!r) {
    snprintf(err, errlen, "%s: out of memory", path);
    return NULL;
  }
  r->fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
  r->path = strdup(path);
  r->dctx = ZSTD_createDCtx();
  if (r->fd < 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    goto fail;
  }
  if (!r->path || !r->dctx) {
    snprintf(err, errlen, "%s: out of memory", path);
    goto fail;
  }
  char msg[200] = "";
  for (;;) {
    long used = ct_parse_file_header(r->buf ? r->buf : (const uint8_t *)"", r->len, &r->schema,
                                     &r->st.major, &r->st.minor, msg, sizeof msg);
    if (used > 0) {
      r->pos = (size_t)used;
      break;
    }
    if (used < 0) {
      snprintf(err, errlen, "%s: %s", path, msg);
      goto fail;
    }
    if (!fill(r, 4096)) {
      snprintf(err, errlen, "%s: %s", path,
               r->len == 0 ? "empty file" : "truncated header (not a complete cutrace trace)");
      goto fail;
    }
  }
  return r;
fail:
  ct_reader_close(r);
  return NULL;
}

int ct_reader_next(ct_reader *r, ct_record *rec) {
  for (;;) {
    if (r->chunk_pos >= r->chunk_len) {
      if (!next_frame(r)) return 0;
    }
    const uint8_t *at = r->chunk + r->chunk_pos;
    size_t left = r->chunk_len - r->chunk_pos;
    int skip = at[0] < 64 && at[0] != CT_KIND_STRING && (r->skip >> at[0] & 1);
    size_t used = skip ? ct_skip_record(&r->schema, at, left)
                       : ct_decode_record(&r->schema, &r->delta, at, left, rec);
    if (used && skip) {
      r->chunk_pos += used;
      r->st.records++;
      continue;
    }
    if (!used) {
      note_problem(r, r->chunk_offset, "%s in the frame at offset %llu", "corrupt record");
      r->st.bad_frames++;
      r->chunk_pos = r->chunk_len;
      continue;
    }
    r->chunk_pos += used;
    unsigned native = ct_kind_nfields(rec->kind);
    if (!native) continue; /* a kind from a newer minor version */
    if (rec->nfields > native) rec->nfields = (uint8_t)native;
    /* Fields an older writer did not have read as 0 (never a stale value). */
    for (unsigned i = rec->nfields; i < native; i++) rec->u.v[i] = 0;
    if (rec->kind == CT_KIND_STRING) {
      if (store_string(r, rec->u.string.id, rec->str, rec->str_len) < 0) {
        note_problem(r, r->chunk_offset, "%s at offset %llu", "out of memory");
        return 0;
      }
    } else if (rec->kind == CT_KIND_END) {
      r->st.clean_end = !r->st.damaged;
    }
    r->st.records++;
    return 1;
  }
}

void ct_reader_skip_kinds(ct_reader *r, uint64_t kinds) { r->skip |= kinds; }

const char *ct_reader_string(const ct_reader *r, uint64_t id, size_t *len) {
  if (id >= r->nstrings || !r->strings[id]) return NULL;
  if (len) *len = r->string_lens[id];
  return r->strings[id];
}

const ct_read_status *ct_reader_status(const ct_reader *r) {
  ct_reader *m = (ct_reader *)r;
  if (m->st.damaged) m->st.clean_end = 0;
  return &r->st;
}

const char *ct_reader_path(const ct_reader *r) { return r->path; }

void ct_reader_close(ct_reader *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  for (uint64_t i = 0; i < r->nstrings; i++) free(r->strings[i]);
  for (size_t i = 0; i < r->nretired; i++) free(r->retired[i]);
  free(r->retired);
  free(r->strings);
  free(r->string_lens);
  free(r->buf);
  free(r->chunk);
  ZSTD_freeDCtx(r->dctx);
  free(r->path);
  free(r);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int expand_dir(const char *dir, int (*fn)(const char *, void *), void *arg, char *err,
                      size_t errlen) {
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(err, errlen, "%s: %s", dir, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".ctr") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) break;
      names = nn;
    }
    if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0) break;
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str); /* names is NULL in an empty directory */
  int count = 0, rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && fn(names[i], arg) < 0) rc = -1;
    free(names[i]);
    count++;
  }
  free(names);
  if (rc < 0) {
    snprintf(err, errlen, "stopped while reading %s", dir);
    return -1;
  }
  if (count == 0) {
    snprintf(err, errlen, "%s: no trace files (*.ctr) in this directory", dir);
    return -1;
  }
  return count;
}

static ct_inputs_filter inputs_filter;

void ct_set_inputs_filter(ct_inputs_filter filter) { inputs_filter = filter; }

/* The files found so far (ct_expand_inputs with a filter). */
typedef struct found_list {
  char **paths;
  size_t n, cap;
} found_list;

/* Adds a file to a found_list (an expand_all callback). */
static int add_found(const char *path, void *arg) {
  found_list *f = arg;
  if (f->n == f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 16;
    char **np = realloc(f->paths, cap * sizeof *np);
    if (!np) return -1;
    f->paths = np;
    f->cap = cap;
  }
  if (!(f->paths[f->n] = strdup(path))) return -1;
  f->n++;
  return 0;
}

static int expand_all(int argc, char *const argv[], int (*fn)(const char *path, void *arg),
                      void *arg, char *err, size_t errlen);

int ct_expand_inputs(int argc, char *const argv[], int (*fn)(const char *path, void *arg),
                     void *arg, char *err, size_t errlen) {
  if (!inputs_filter) return expand_all(argc, argv, fn, arg, err, errlen);
  found_list f = {0};
  int total = expand_all(argc, argv, add_found, &f, err, errlen);
  unsigned char *keep = total >= 0 ? malloc(f.n + 1) : NULL;
  if (total >= 0 && !keep) {
    snprintf(err, errlen, "out of memory");
    total = -1;
  }
  if (total >= 0) {
    memset(keep, 1, f.n);
    if (inputs_filter(f.paths, f.n, keep, err, errlen) < 0) total = -1;
  }
  if (total >= 0) {
    total = 0;
    for (size_t i = 0; i < f.n; i++) {
      if (!keep[i]) continue;
      if (fn(f.paths[i], arg) < 0) {
        snprintf(err, errlen, "stopped while reading %s", f.paths[i]);
        total = -1;
        break;
      }
      total++;
    }
  }
  for (size_t i = 0; i < f.n; i++) free(f.paths[i]);
  free(f.paths);
  free(keep);
  return total;
}

/* ct_expand_inputs without the filter. */
static int expand_all(int argc, char *const argv[], int (*fn)(const char *path, void *arg),
                      void *arg, char *err, size_t errlen) {
  static char *const default_input[] = {"cutrace.data"};
  if (argc == 0) {
    argc = 1;
    argv = default_input;
  }
  int total = 0;
  for (int i = 0; i < argc; i++) {
    struct stat sb;
    if (strcmp(argv[i], "-") != 0 && stat(argv[i], &sb) < 0) {
      int missing_default = argv == default_input && errno == ENOENT;
      snprintf(err, errlen, "%s: %s%s", argv[i], strerror(errno),
               missing_default ? " (the default trace directory: name a trace DIR or FILE, or "
                                 "record one with cutrace record -- CMD)"
                               : "");
      return -1;
    }
    if (strcmp(argv[i], "-") != 0 && S_ISDIR(sb.st_mode)) {
      int n = expand_dir(argv[i], fn, arg, err, errlen);
      if (n < 0) return -1;
      total += n;
    } else {
      if (fn(argv[i], arg) < 0) {
        snprintf(err, errlen, "stopped while reading %s", argv[i]);
        return -1;
      }
      total++;
    }
  }
  return total;
}
