/* The persistent program cache (cache.h): the entry file format, reads
 * that check an entry whole, atomic writes, eviction.  The directory,
 * its configuration and trust: dir.c.
 *
 * An entry is one file, DIR/<16 hex digits>.clbin, the digits a hash of
 * the key and source.  Its bytes, integers little-endian:
 *
 *   0  "CLSCACHE"   magic, 8 bytes
 *   8  u32          format version (CLS__CACHE_FORMAT)
 *  12  u32          key length: platform, platform version, device,
 *                   driver version, clstream version, options, each
 *                   NUL-terminated
 *  16  u64          source length
 *  24  u64          binary length
 *  32  u64          checksum: SipHash-2-4 (util/hash.h) of key, source
 *                   and binary, keyed with the directory's key file
 *  40  key, source, binary
 *
 * The file must be exactly 40 + the three lengths long.  DIR/key holds
 * the 16 random bytes of the checksum's key, mode 0600, made on the first
 * store.  A directory is used only when it is this user's and nobody
 * else can write to it; everything in it is reached through one
 * descriptor of it, opened and checked before each use. */
#include "cache/cache.h"
#include "cache/dir.h"
#include "util/hash.h"
#include "util/parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "CLSCACHE"
#define CLS__CACHE_FORMAT 2u /* 2: the keyed checksum */
#define HEADER 40
#define SUFFIX ".clbin"
#define NAME_LEN (16 + sizeof SUFFIX - 1)
/* A file larger than this is not one of ours. */
#define MAX_FILE ((uint64_t)1 << 32)
/* Temporary files of a writer that died are removed after this long. */
#define STALE_TMP_S 600

/* ---------------------------------------------------------------- the key */

/* The key text (without the source) into a malloc'ed buffer. */
static char *key_text(const struct cls__cache_key *k, size_t *len) {
  const char *parts[] = {k->platform, k->platform_version, k->device, k->driver_version,
                         PACKAGE_VERSION, k->options};
  size_t n = 0;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
    n += strlen(parts[i]) + 1;
  char *t = malloc(n);
  if (!t)
    return NULL;
  char *at = t;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
    size_t m = strlen(parts[i]) + 1;
    memcpy(at, parts[i], m);
    at += m;
  }
  *len = n;
  return t;
}

/* <hash>.clbin for the key, into name. */
static void entry_name(char name[NAME_LEN + 1], const char *key, size_t keylen,
                       const struct cls__cache_key *k) {
  uint64_t h = cls__hash(CLS__HASH_INIT, key, keylen);
  h = cls__hash(h, k->source, k->srclen);
  snprintf(name, NAME_LEN + 1, "%016llx" SUFFIX, (unsigned long long)h);
}

/* Whether `text` holds `word` once line splices ("\" newline, and the
 * trigraph "??/" newline) are taken out. */
static bool has_word(const char *text, size_t n, const char *word) {
  size_t wl = strlen(word);
  for (size_t i = 0; i < n; i++) {
    size_t at = i, w = 0;
    while (w < wl && at < n) {
      if (text[at] == '\\' && at + 1 < n && text[at + 1] == '\n')
        at += 2;
      else if (text[at] == '\\' && at + 2 < n && text[at + 1] == '\r' && text[at + 2] == '\n')
        at += 3;
      else if (text[at] == '?' && at + 3 < n && text[at + 1] == '?' && text[at + 2] == '/' &&
               text[at + 3] == '\n')
        at += 4;
      else if (text[at] == word[w])
        at++, w++;
      else
        break;
    }
    if (w == wl)
      return true;
  }
  return false;
}

bool cls__cache_reads_files(const struct cls__cache_key *k) {
  /* Every way to read a file into a translation unit names one of these
   * words as a token: #include, #include_next, #import, #embed (also
   * spelled %:include or ??=include: the "#" does not matter), and the
   * options -include, -imacros.  A directive cannot come from a macro.
   * A word in a comment or an identifier costs the cache, never a wrong
   * binary.  '@' (a response file of options) counts too. */
  static const char *words[] = {"include", "import", "embed"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (has_word(k->source, k->srclen, words[i]) ||
        has_word(k->options, strlen(k->options), words[i]))
      return true;
  return strstr(k->options, "imacros") || strchr(k->options, '@');
}

static void put64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> 8 * i);
}
static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << 8 * i;
  return v;
}
static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> 8 * i);
}
static uint32_t get32(const unsigned char *p) {
  return (uint32_t)get64((const unsigned char[8]){p[0], p[1], p[2], p[3], 0, 0, 0, 0});
}

/* The checksum of an entry's key, source and binary. */
static uint64_t checksum(const unsigned char key16[KEY_LEN], const void *key, size_t keylen,
                         const void *src, size_t srclen, const void *bin, size_t binlen) {
  struct cls__siphash h;
  cls__siphash_init(&h, key16);
  cls__siphash_update(&h, key, keylen);
  cls__siphash_update(&h, src, srclen);
  cls__siphash_update(&h, bin, binlen);
  return cls__siphash_final(&h);
}


/* ---------------------------------------------------------------- reading */

static bool is_entry_name(const char *n) {
  if (strlen(n) != NAME_LEN || strcmp(n + 16, SUFFIX) != 0)
    return false;
  for (int i = 0; i < 16; i++)
    if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
      return false;
  return true;
}

/* Why the file at fd (of st_size bytes) is not a valid entry for this
 * key, or NULL when it is: then *body (malloc'ed: key, source, binary)
 * and *binlen.  The header is read and checked first, and the body is
 * read only when its lengths are this key's and the file is exactly as
 * long as they say: a huge file costs 40 bytes of reading. */
static const char *check(const struct cls__cache *c, int fd, uint64_t size, const char *key,
                         size_t keylen, const struct cls__cache_key *k, unsigned char **body,
                         size_t *binlen) {
  unsigned char h[HEADER];
  *body = NULL;
  if (size < 8 || !cls__cache_read_all(fd, h, 8, 0) || memcmp(h, MAGIC, 8) != 0)
    return "not a clstream cache file";
  if (size < HEADER || !cls__cache_read_all(fd, h, HEADER, 0))
    return "truncated";
  if (get32(h + 8) != CLS__CACHE_FORMAT)
    return "another format version";
  uint64_t kl = get32(h + 12), sl = get64(h + 16), bl = get64(h + 24);
  if (kl > MAX_FILE || sl > MAX_FILE || bl > MAX_FILE || HEADER + kl + sl + bl > size)
    return "truncated";
  if (HEADER + kl + sl + bl < size)
    return "longer than its header says";
  if (kl != keylen || sl != k->srclen || !bl)
    return "built for another key";
  if (HEADER + kl + sl + bl > c->max)
    return "larger than CLS_CACHE_MAX";
  size_t n = (size_t)(kl + sl + bl);
  unsigned char *b = malloc(n);
  if (!b)
    return "out of host memory";
  if (!cls__cache_read_all(fd, b, n, HEADER)) {
    free(b);
    return "truncated";
  }
  if (checksum(c->key, b, (size_t)kl, b + kl, (size_t)sl, b + kl + sl, (size_t)bl) !=
      get64(h + 32)) {
    free(b);
    return "checksum mismatch (corrupt, or not written by this user)";
  }
  if (memcmp(b, key, keylen) != 0 || memcmp(b + kl, k->source, k->srclen) != 0) {
    free(b);
    return "built for another key";
  }
  *body = b;
  *binlen = (size_t)bl;
  return NULL;
}

int cls__cache_load(struct cls__cache *c, const struct cls__logger *lg,
                    const struct cls__cache_key *k, unsigned char **bin, size_t *len) {
  *bin = NULL;
  *len = 0;
  if (!c->enabled || c->refused)
    return 0;
  size_t keylen = 0;
  char name[NAME_LEN + 1];
  char *key = key_text(k, &keylen);
  unsigned char *body = NULL;
  int dfd = -1, fd = -1, hit = 0;
  bool refused;
  if (!key || (dfd = cls__cache_open_dir(c, lg, &refused)) < 0 ||
      cls__cache_read_key(c, lg, dfd, false) != 0)
    goto cleanup; /* no directory or no key yet: nothing stored */
  entry_name(name, key, keylen, k);
  struct stat st;
  if ((fd = cls__cache_open_regular(dfd, name, &st)) < 0) {
    if (errno != ENOENT && errno != ENOTDIR && !c->said_bad) {
      cls__log(lg, CLS_LOG_ERRORS, "program cache: cannot read %s/%s (%s); building from source",
               c->dir, name, errno == EINVAL ? "not a regular file" : strerror(errno));
      c->said_bad = true;
    }
    goto cleanup;
  }
  size_t bl = 0;
  const char *why = check(c, fd, (uint64_t)st.st_size, key, keylen, k, &body, &bl);
  if (why) {
    if (!c->said_bad)
      cls__log(lg, CLS_LOG_ERRORS, "program cache: ignoring %s/%s: %s; building from source",
               c->dir, name, why);
    c->said_bad = true;
    goto cleanup;
  }
  if (!(*bin = malloc(bl)))
    goto cleanup;
  memcpy(*bin, body + keylen + k->srclen, bl);
  *len = bl;
  hit = 1;
  utimensat(dfd, name, NULL, 0); /* recently used: evicted last */
cleanup:
  if (fd >= 0)
    close(fd);
  if (dfd >= 0)
    close(dfd);
  free(body);
  free(key);
  return hit;
}

/* ---------------------------------------------------------------- writing */

struct entry {
  char name[NAME_LEN + 1];
  struct timespec mtime;
  uint64_t size;
};

static int older(const void *a, const void *b) {
  const struct entry *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec)
    return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec)
    return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The entries of the directory open at dfd (and, when `sweep`, removes
 * temporary files a dead writer left).  NULL with *count 0 when there are
 * none. */
static struct entry *list(int dfd, size_t *count, uint64_t *bytes, bool sweep) {
  *count = 0;
  *bytes = 0;
  int fd = dfd >= 0 ? dup(dfd) : -1;
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  rewinddir(d);
  struct entry *v = NULL;
  size_t cap = 0;
  struct dirent *e;
  time_t now = time(NULL);
  while ((e = readdir(d))) {
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (!is_entry_name(e->d_name)) {
      size_t l = strlen(e->d_name);
      if (sweep && e->d_name[0] == '.' && l > 4 && strcmp(e->d_name + l - 4, ".tmp") == 0 &&
          now - st.st_mtim.tv_sec > STALE_TMP_S)
        unlinkat(dirfd(d), e->d_name, 0);
      continue;
    }
    if (*count == cap) {
      size_t ncap = cap ? 2 * cap : 64;
      struct entry *nv = realloc(v, ncap * sizeof *nv);
      if (!nv)
        break;
      v = nv;
      cap = ncap;
    }
    struct entry *x = &v[(*count)++];
    memcpy(x->name, e->d_name, NAME_LEN + 1);
    x->mtime = st.st_mtim;
    x->size = (uint64_t)st.st_size;
    *bytes += x->size;
  }
  closedir(d);
  return v;
}

void cls__cache_usage(const struct cls__cache *c, uint64_t *entries, uint64_t *bytes) {
  size_t n = 0;
  *entries = *bytes = 0;
  if (!c->dir)
    return;
  int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  free(list(dfd, &n, bytes, false));
  if (dfd >= 0)
    close(dfd);
  *entries = n;
}

/* Removes entries oldest first until `need` more bytes fit under the cap;
 * `self` (the entry about to be replaced) does not count. */
static void evict(const struct cls__cache *c, int dfd, const char *self, uint64_t need) {
  size_t n = 0;
  uint64_t total = 0;
  struct entry *v = list(dfd, &n, &total, true);
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i].name, self) == 0) {
      total -= v[i].size;
      v[i].size = 0;
    }
  if (total + need > c->max) {
    qsort(v, n, sizeof *v, older);
    for (size_t i = 0; i < n && total + need > c->max; i++) {
      if (!v[i].size)
        continue;
      if (unlinkat(dfd, v[i].name, 0) == 0 || errno == ENOENT) /* another writer was first */
        total -= v[i].size;
    }
  }
  free(v);
}

void cls__cache_store(struct cls__cache *c, const struct cls__logger *lg,
                      const struct cls__cache_key *k, const unsigned char *bin, size_t len) {
  if (!c->enabled || c->refused || !len)
    return;
  size_t keylen = 0;
  char name[NAME_LEN + 1], tmp[NAME_LEN + 64] = "";
  char *key = key_text(k, &keylen);
  int dfd = -1, fd = -1;
  bool refused = false;
  const char *what = "out of host memory";
  if (!key)
    goto cleanup;
  entry_name(name, key, keylen, k);
  uint64_t size = HEADER + keylen + k->srclen + len;
  if (size > c->max) {
    cls__log(lg, CLS_LOG_STREAMS,
             "program cache: a %llu-byte entry is over CLS_CACHE_MAX (%llu): not stored",
             (unsigned long long)size, (unsigned long long)c->max);
    what = NULL;
    goto cleanup;
  }
  what = "cannot create the directory";
  if (cls__cache_make_dirs(c->dir) != 0)
    goto cleanup;
  what = "cannot open the directory";
  if ((dfd = cls__cache_open_dir(c, lg, &refused)) < 0)
    goto cleanup;
  what = "cannot make the key file in";
  int kr = cls__cache_read_key(c, lg, dfd, true);
  if (kr != 0) {
    refused = kr > 0;
    goto cleanup;
  }
  evict(c, dfd, name, size);
  snprintf(tmp, sizeof tmp, ".%.16s.%ld.%u.tmp", name, (long)getpid(),
           atomic_fetch_add(&cls__cache_tmp_counter, 1));
  what = "cannot write";
  if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
    goto cleanup;
  unsigned char h[HEADER];
  memcpy(h, MAGIC, 8);
  put32(h + 8, CLS__CACHE_FORMAT);
  put32(h + 12, (uint32_t)keylen);
  put64(h + 16, k->srclen);
  put64(h + 24, len);
  put64(h + 32, checksum(c->key, key, keylen, k->source, k->srclen, bin, len));
  bool ok = cls__cache_write_all(fd, h, sizeof h) && cls__cache_write_all(fd, key, keylen) &&
            cls__cache_write_all(fd, k->source, k->srclen) && cls__cache_write_all(fd, bin, len);
  ok = close(fd) == 0 && ok;
  fd = -1;
  if (!ok || renameat(dfd, tmp, dfd, name) != 0)
    goto cleanup;
  tmp[0] = '\0';
  c->stores++;
  what = NULL;
cleanup:
  if (what && !refused && !c->said_dir) {
    cls__log(lg, CLS_LOG_ERRORS, "program cache: %s %s%s%s (%s); programs are built from source",
             what, c->dir, tmp[0] ? "/" : "", tmp, strerror(errno));
    c->said_dir = true;
  }
  if (fd >= 0)
    close(fd);
  if (dfd >= 0 && tmp[0])
    unlinkat(dfd, tmp, 0);
  if (dfd >= 0)
    close(dfd);
  free(key);
}

void cls__cache_drop(struct cls__cache *c, const struct cls__cache_key *k) {
  if (!c->dir)
    return;
  size_t keylen = 0;
  char name[NAME_LEN + 1];
  char *key = key_text(k, &keylen);
  int dfd = key ? open(c->dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    entry_name(name, key, keylen, k);
    unlinkat(dfd, name, 0);
    close(dfd);
  }
  free(key);
}
