/* Internal: the hashes of clstream.
 *
 * cls__hash (FNV-1a, 64 bits): the in-memory program cache's key and the
 * disk cache's file names.  Not cryptographic: every use that must not be
 * fooled compares the bytes themselves after the hash matched.
 *
 * cls__siphash (SipHash-2-4, Aumasson and Bernstein, 2012: a keyed hash,
 * 64 bits out, a 128-bit key): the disk cache's entry checksum.  Without
 * the key, which is secret to the user (docs/cache.md), a checksum for
 * changed bytes cannot be computed; guessing one takes 2^64 tries. */
#ifndef CLS_HASH_H
#define CLS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CLS__HASH_INIT 0xcbf29ce484222325ull

/* Folds n bytes at p into h (start from CLS__HASH_INIT). */
static inline uint64_t cls__hash(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) {
    h ^= c[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* SipHash-2-4 over bytes given in pieces: init, update as often as
 * needed, final. */
struct cls__siphash {
  uint64_t v[4];
  uint64_t m;   /* the bytes of the word being filled, little-endian */
  uint64_t len; /* bytes so far */
};

static inline uint64_t cls__sip_le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

static inline void cls__sip_rounds(uint64_t *v, int n) {
#define CLS__ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
  while (n--) {
    v[0] += v[1], v[1] = CLS__ROTL(v[1], 13), v[1] ^= v[0], v[0] = CLS__ROTL(v[0], 32);
    v[2] += v[3], v[3] = CLS__ROTL(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = CLS__ROTL(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = CLS__ROTL(v[1], 17), v[1] ^= v[2], v[2] = CLS__ROTL(v[2], 32);
  }
#undef CLS__ROTL
}

static inline void cls__siphash_init(struct cls__siphash *s, const unsigned char key[16]) {
  uint64_t k0 = cls__sip_le64(key), k1 = cls__sip_le64(key + 8);
  s->v[0] = k0 ^ 0x736f6d6570736575ull;
  s->v[1] = k1 ^ 0x646f72616e646f6dull;
  s->v[2] = k0 ^ 0x6c7967656e657261ull;
  s->v[3] = k1 ^ 0x7465646279746573ull;
  s->m = 0;
  s->len = 0;
}

static inline void cls__sip_word(struct cls__siphash *s, uint64_t m) {
  s->v[3] ^= m;
  cls__sip_rounds(s->v, 2);
  s->v[0] ^= m;
}

static inline void cls__siphash_update(struct cls__siphash *s, const void *p, size_t n) {
  const unsigned char *c = p;
  while (n && s->len % 8) { /* the word left partly filled */
    s->m |= (uint64_t)*c++ << 8 * (s->len++ % 8);
    n--;
    if (s->len % 8 == 0) {
      cls__sip_word(s, s->m);
      s->m = 0;
    }
  }
  for (; n >= 8; n -= 8, c += 8, s->len += 8)
    cls__sip_word(s, cls__sip_le64(c));
  for (; n; n--)
    s->m |= (uint64_t)*c++ << 8 * (s->len++ % 8);
}

static inline uint64_t cls__siphash_final(struct cls__siphash *s) {
  cls__sip_word(s, s->m | s->len << 56);
  s->v[2] ^= 0xff;
  cls__sip_rounds(s->v, 4);
  return s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
}

#endif /* CLS_HASH_H */
