/* Internal: the one 64-bit hash of clstream (FNV-1a): the in-memory
 * program cache's key, the disk cache's file names and checksums.  Not
 * cryptographic: every use that must not be fooled compares the bytes
 * themselves after the hash matched. */
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

#endif /* CLS_HASH_H */
