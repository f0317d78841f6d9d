/* Record codec: see codec.h and docs/format.md. */
#include "codec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* ---- the native schema, from format.h ---- */

#define FIELD_ENC(name, enc) CT_ENC_##enc,
#define FIELD_NAME(name, enc) #name,
#define KIND_TABLES(NAME, id, lname)                                              \
  static const uint8_t enc_##lname[] = {CT_FIELDS_##lname(FIELD_ENC)};          \
  static const char *const names_##lname[] = {CT_FIELDS_##lname(FIELD_NAME)};
CT_RECORD_KINDS(KIND_TABLES)
#undef KIND_TABLES

struct kind_info {
  const char *name;
  const uint8_t *enc;
  const char *const *fields;
  unsigned nfields;
};

static const struct kind_info kinds[CT_MAX_KINDS] = {
#define KIND_INFO(NAME, id, lname) \
  [id] = {#lname, enc_##lname, names_##lname, sizeof enc_##lname},
    CT_RECORD_KINDS(KIND_INFO)
#undef KIND_INFO
};

_Static_assert(sizeof(struct ct_process) / 8 <= CT_MAX_FIELDS, "too many fields");
_Static_assert(sizeof(struct ct_api) / 8 <= CT_MAX_FIELDS, "too many fields");
_Static_assert(sizeof(struct ct_gemm) / 8 <= CT_MAX_FIELDS, "too many fields");

static ct_schema native_schema;
static int native_ready;

const ct_schema *ct_schema_native(void) {
  if (!__atomic_load_n(&native_ready, __ATOMIC_ACQUIRE)) {
    ct_schema s;
    memset(&s, 0, sizeof s);
    for (unsigned k = 0; k < CT_MAX_KINDS; k++) {
      s.nfields[k] = (uint8_t)kinds[k].nfields;
      for (unsigned i = 0; i < kinds[k].nfields; i++) s.enc[k][i] = kinds[k].enc[i];
    }
    native_schema = s; /* identical bytes whichever thread wins */
    __atomic_store_n(&native_ready, 1, __ATOMIC_RELEASE);
  }
  return &native_schema;
}

unsigned ct_kind_nfields(unsigned kind) { return kind < CT_MAX_KINDS ? kinds[kind].nfields : 0; }

const char *ct_kind_name(unsigned kind) { return kind < CT_MAX_KINDS ? kinds[kind].name : NULL; }

const char *ct_field_name(unsigned kind, unsigned i) {
  if (kind >= CT_MAX_KINDS || i >= kinds[kind].nfields) return NULL;
  return kinds[kind].fields[i];
}

/* ---- varints ---- */

static inline size_t put_varint(uint8_t *out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

/* Returns bytes used, 0 when malformed or cut short. */
static inline size_t get_varint(const uint8_t *in, size_t n, uint64_t *v) {
  uint64_t r = 0;
  for (size_t i = 0; i < n && i < 10; i++) {
    r |= (uint64_t)(in[i] & 0x7f) << (7 * i);
    if (!(in[i] & 0x80)) {
      *v = r;
      return i + 1;
    }
  }
  return 0;
}

/* get_varint for a caller that knows 10 bytes are readable at in (one-byte values,
 * the most common, take a single test). */
static inline size_t get_varint_unbounded(const uint8_t *in, uint64_t *v) {
  if (in[0] < 0x80) {
    *v = in[0];
    return 1;
  }
  uint64_t r = in[0] & 0x7f;
  for (size_t i = 1; i < 10; i++) {
    r |= (uint64_t)(in[i] & 0x7f) << (7 * i);
    if (!(in[i] & 0x80)) {
      *v = r;
      return i + 1;
    }
  }
  return 0;
}

static inline uint64_t zigzag(uint64_t delta) {
  return (delta << 1) ^ (uint64_t)((int64_t)delta >> 63);
}
static inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1); }

void ct_delta_reset(ct_delta_state *st) { memset(st, 0, sizeof *st); }

size_t ct_encode_record(ct_delta_state *st, const ct_record *rec, uint8_t *out) {
  const struct kind_info *ki = &kinds[rec->kind];
  uint64_t *prev = st->prev[rec->kind];
  size_t n = 0;
  out[n++] = rec->kind;
  for (unsigned i = 0; i < ki->nfields; i++) {
    uint64_t v = rec->u.v[i];
    uint64_t base = (ki->enc[i] == CT_ENC_P && i > 0) ? rec->u.v[i - 1] : prev[i];
    n += put_varint(out + n, zigzag(v - base));
    prev[i] = v;
  }
  return n;
}

size_t ct_encode_string(ct_delta_state *st, uint64_t id, const char *s, size_t len,
                        uint8_t *out) {
  uint64_t *prev = st->prev[CT_KIND_STRING];
  size_t n = 0;
  out[n++] = CT_KIND_STRING;
  n += put_varint(out + n, zigzag(id - prev[0]));
  n += put_varint(out + n, zigzag(len));
  prev[0] = id;
  memcpy(out + n, s, len);
  return n + len;
}

size_t ct_decode_record(const ct_schema *sc, ct_delta_state *st, const uint8_t *in,
                        size_t n, ct_record *rec) {
  if (n < 1) return 0;
  unsigned kind = in[0];
  if (kind == 0 || kind >= CT_MAX_KINDS || sc->nfields[kind] == 0) return 0;
  size_t pos = 1;
  uint64_t *prev = st->prev[kind];
  unsigned nf = sc->nfields[kind];
  rec->kind = (uint8_t)kind;
  rec->str = NULL;
  rec->str_len = 0;
  memset(rec->u.v + nf, 0, (CT_MAX_FIELDS - nf) * sizeof rec->u.v[0]); /* v[0 .. nf) set below */
  if (kind == CT_KIND_STRING) {
    uint64_t zid, len;
    size_t a = get_varint(in + pos, n - pos, &zid);
    if (!a) return 0;
    pos += a;
    size_t b = get_varint(in + pos, n - pos, &len);
    if (!b) return 0;
    pos += b;
    len = unzigzag(len);
    if (len > CT_MAX_STRING_BYTES || len > n - pos) return 0;
    prev[0] += unzigzag(zid);
    rec->u.v[0] = prev[0];
    rec->u.v[1] = len;
    rec->nfields = 2;
    rec->str = (const char *)in + pos;
    rec->str_len = (uint32_t)len;
    return pos + len;
  }
  const uint8_t *enc = sc->enc[kind];
  if (n - pos >= (size_t)nf * 10) { /* room for the longest varints: no bounds checks */
    for (unsigned i = 0; i < nf; i++) {
      uint64_t z;
      size_t a = get_varint_unbounded(in + pos, &z);
      if (!a) return 0;
      pos += a;
      uint64_t base = (enc[i] == CT_ENC_P && i > 0) ? rec->u.v[i - 1] : prev[i];
      uint64_t v = base + unzigzag(z);
      prev[i] = v;
      rec->u.v[i] = v;
    }
    rec->nfields = (uint8_t)nf;
    return pos;
  }
  for (unsigned i = 0; i < nf; i++) {
    uint64_t z;
    size_t a = get_varint(in + pos, n - pos, &z);
    if (!a) return 0;
    pos += a;
    uint64_t base = (enc[i] == CT_ENC_P && i > 0) ? rec->u.v[i - 1] : prev[i];
    uint64_t v = base + unzigzag(z);
    prev[i] = v;
    rec->u.v[i] = v;
  }
  rec->nfields = (uint8_t)nf;
  return pos;
}

/* The 8 bytes read into w in file order as a little-endian number. */
static inline uint64_t le64(uint64_t w) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return __builtin_bswap64(w);
#else
  return w;
#endif
}

size_t ct_skip_record(const ct_schema *sc, const uint8_t *in, size_t n) {
  if (n < 1) return 0;
  unsigned kind = in[0];
  if (kind == 0 || kind >= CT_MAX_KINDS || kind == CT_KIND_STRING || sc->nfields[kind] == 0)
    return 0;
  size_t pos = 1;
  unsigned nf = sc->nfields[kind];
  if (n - pos >= (size_t)nf * 10 + 8) { /* room to read each varint's first 8 bytes as a word */
    for (unsigned i = 0; i < nf; i++) {
      uint64_t w;
      memcpy(&w, in + pos, 8);
      uint64_t ends = ~le64(w) & 0x8080808080808080ull; /* the bytes without a continuation bit */
      if (ends) {
        pos += (size_t)__builtin_ctzll(ends) / 8 + 1;
      } else if (!(in[pos + 8] & 0x80)) {
        pos += 9;
      } else if (!(in[pos + 9] & 0x80)) {
        pos += 10;
      } else {
        return 0;
      }
    }
    return pos;
  }
  for (unsigned i = 0; i < nf; i++) { /* each varint: at most 10 bytes */
    size_t first = pos;
    while (pos < n && pos - first < 10 && (in[pos] & 0x80)) pos++;
    if (pos >= n || pos - first >= 10) return 0;
    pos++;
  }
  return pos;
}

/* ---- file header and schema block ---- */

size_t ct_write_file_header(uint8_t *out, size_t cap) {
  struct ct_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, CT_FILE_MAGIC, 8);
  h.major = CT_FORMAT_MAJOR;
  h.minor = CT_FORMAT_MINOR;
  uint8_t schema[CT_MAX_KINDS * (2 + CT_MAX_FIELDS) + 1];
  size_t s = 0;
  schema[s++] = 0; /* count, patched below */
  for (unsigned k = 1; k < CT_MAX_KINDS; k++) {
    if (!kinds[k].nfields) continue;
    schema[s++] = (uint8_t)k;
    schema[s++] = (uint8_t)kinds[k].nfields;
    for (unsigned i = 0; i < kinds[k].nfields; i++) schema[s++] = kinds[k].enc[i];
    schema[0]++;
  }
  h.schema_bytes = (uint32_t)s;
  if (cap < sizeof h + s) return 0;
  memcpy(out, &h, sizeof h);
  memcpy(out + sizeof h, schema, s);
  return sizeof h + s;
}

long ct_parse_file_header(const uint8_t *in, size_t n, ct_schema *sc, uint16_t *major,
                          uint16_t *minor, char *err, size_t errlen) {
  struct ct_file_header h;
  if (n < 8) {
    if (memcmp(in, CT_FILE_MAGIC, n) != 0) goto bad_magic;
    return 0;
  }
  if (memcmp(in, CT_FILE_MAGIC, 8) != 0) goto bad_magic;
  if (n < sizeof h) return 0;
  memcpy(&h, in, sizeof h);
  *major = h.major;
  *minor = h.minor;
  if (h.major > CT_FORMAT_MAJOR) {
    snprintf(err, errlen, "format version %u.%u is newer than this cutrace reads (%u.x)",
             h.major, h.minor, CT_FORMAT_MAJOR);
    return -1;
  }
  if (h.schema_bytes < 1 || h.schema_bytes > 65536) {
    snprintf(err, errlen, "malformed header (schema of %u bytes)", h.schema_bytes);
    return -1;
  }
  if (n < sizeof h + h.schema_bytes) return 0;
  const uint8_t *p = in + sizeof h, *end = p + h.schema_bytes;
  memset(sc, 0, sizeof *sc);
  unsigned count = *p++;
  for (unsigned c = 0; c < count; c++) {
    if (end - p < 2) goto bad_schema;
    unsigned kind = p[0], nf = p[1];
    p += 2;
    if (kind == 0 || kind >= CT_MAX_KINDS || nf == 0 || nf > CT_MAX_FIELDS ||
        end - p < (long)nf)
      goto bad_schema;
    sc->nfields[kind] = (uint8_t)nf;
    for (unsigned i = 0; i < nf; i++) {
      if (p[i] != CT_ENC_D && p[i] != CT_ENC_P) goto bad_schema;
      sc->enc[kind][i] = p[i];
    }
    p += nf;
  }
  if (sc->nfields[CT_KIND_STRING] != 2) goto bad_schema;
  return (long)(sizeof h + h.schema_bytes);
bad_magic:
  snprintf(err, errlen, "not a cutrace trace (bad magic)");
  return -1;
bad_schema:
  snprintf(err, errlen, "malformed schema block in header");
  return -1;
}

/* ---- chunks ---- */

int ct_chunk_init(ct_chunk *c, size_t cap) {
  memset(c, 0, sizeof *c);
  c->buf = malloc(cap);
  if (!c->buf) return -1;
  c->cap = cap;
  return 0;
}

void ct_chunk_free(ct_chunk *c) {
  free(c->buf);
  c->buf = NULL;
  c->cap = c->len = 0;
}

void ct_chunk_reset(ct_chunk *c) {
  ct_delta_reset(&c->delta);
  c->len = 0;
  c->records = 0;
}

int ct_chunk_add(ct_chunk *c, const ct_record *rec) {
  if (c->cap - c->len < CT_MAX_RECORD_BYTES) return -1;
  c->len += ct_encode_record(&c->delta, rec, c->buf + c->len);
  c->records++;
  return 0;
}

int ct_chunk_add_string(ct_chunk *c, uint64_t id, const char *s, size_t len) {
  if (len > CT_MAX_STRING_BYTES) len = CT_MAX_STRING_BYTES;
  if (c->cap - c->len < len + CT_MAX_RECORD_BYTES) return -1;
  c->len += ct_encode_string(&c->delta, id, s, len, c->buf + c->len);
  c->records++;
  return 0;
}

size_t ct_chunk_bound(size_t len) { return ZSTD_compressBound(len); }

size_t ct_chunk_compress(const ct_chunk *c, void *cctx, int level, void *dst, size_t cap) {
  ZSTD_CCtx *z = cctx;
  ZSTD_CCtx_reset(z, ZSTD_reset_session_only);
  if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level))) return 0;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1))) return 0;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 1))) return 0;
  size_t r = ZSTD_compress2(z, dst, cap, c->buf, c->len);
  return ZSTD_isError(r) ? 0 : r;
}

/* ---- synchronous file writer ---- */

struct ct_file_writer {
  int fd;
  ct_chunk chunk;
  ZSTD_CCtx *cctx;
  uint8_t *out;
  size_t out_cap;
};

int ct_write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

ct_file_writer *ct_file_writer_open(const char *path, size_t chunk_bytes) {
  if (chunk_bytes < 4096) chunk_bytes = 4096;
  if (chunk_bytes > CT_MAX_CHUNK_BYTES) chunk_bytes = CT_MAX_CHUNK_BYTES;
  ct_file_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (w->fd < 0) goto fail;
  if (ct_chunk_init(&w->chunk, chunk_bytes) < 0) goto fail;
  w->cctx = ZSTD_createCCtx();
  w->out_cap = ct_chunk_bound(chunk_bytes);
  w->out = malloc(w->out_cap);
  if (!w->cctx || !w->out) {
    errno = ENOMEM;
    goto fail;
  }
  uint8_t hdr[1024];
  size_t hn = ct_write_file_header(hdr, sizeof hdr);
  if (ct_write_all(w->fd, hdr, hn) < 0) goto fail;
  return w;
fail: {
  int e = errno;
  if (w->fd >= 0) close(w->fd);
  ct_chunk_free(&w->chunk);
  ZSTD_freeCCtx(w->cctx);
  free(w->out);
  free(w);
  errno = e;
  return NULL;
}
}

int ct_file_writer_flush(ct_file_writer *w) {
  if (w->chunk.len == 0) return 0;
  size_t n = ct_chunk_compress(&w->chunk, w->cctx, 1, w->out, w->out_cap);
  if (!n) {
    errno = EIO;
    return -1;
  }
  ct_chunk_reset(&w->chunk);
  return ct_write_all(w->fd, w->out, n);
}

int ct_file_writer_add(ct_file_writer *w, const ct_record *rec) {
  if (ct_chunk_add(&w->chunk, rec) == 0) return 0;
  if (ct_file_writer_flush(w) < 0) return -1;
  return ct_chunk_add(&w->chunk, rec);
}

int ct_file_writer_add_string(ct_file_writer *w, uint64_t id, const char *s, size_t len) {
  if (ct_chunk_add_string(&w->chunk, id, s, len) == 0) return 0;
  if (ct_file_writer_flush(w) < 0) return -1;
  if (ct_chunk_add_string(&w->chunk, id, s, len) == 0) return 0;
  errno = E2BIG;
  return -1;
}

int ct_file_writer_close(ct_file_writer *w) {
  int r = ct_file_writer_flush(w);
  int e = errno;
  if (close(w->fd) < 0 && r == 0) {
    r = -1;
    e = errno;
  }
  ct_chunk_free(&w->chunk);
  ZSTD_freeCCtx(w->cctx);
  free(w->out);
  free(w);
  errno = e;
  return r;
}
