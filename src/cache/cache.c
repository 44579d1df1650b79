/* The persistent program cache (cache.h): configuration, the entry file
 * format, atomic writes, eviction.
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
 *  32  u64          checksum (cls__hash) of key, source and binary
 *  40  key, source, binary
 *
 * The file must be exactly 40 + the three lengths long. */
#include "cache/cache.h"
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
#define CLS__CACHE_FORMAT 1u
#define HEADER 40
#define SUFFIX ".clbin"
#define NAME_LEN (16 + sizeof SUFFIX - 1)
/* A file larger than this is not one of ours. */
#define MAX_FILE ((uint64_t)1 << 32)
/* Temporary files of a writer that died are removed after this long. */
#define STALE_TMP_S 600

static atomic_uint tmp_counter;

/* ---------------------------------------------------------------- configuration */

static const char *env(const char *name) {
  const char *e = getenv(name);
  return e && *e ? e : NULL;
}

/* CLS_CACHE_MAX := N [ K | M | G ]   bytes, binary units, at least 1 */
static int parse_max(const char *text, uint64_t *out) {
  struct cls__parser ps = {"CLS_CACHE_MAX", text, NULL};
  int rc = cls__parse_text(&ps);
  if (rc < 0)
    return rc;
  struct cls__span s = cls__span_of(text);
  unsigned shift = 0;
  if (s.n && (s.p[s.n - 1] == 'K' || s.p[s.n - 1] == 'M' || s.p[s.n - 1] == 'G')) {
    shift = s.p[s.n - 1] == 'K' ? 10 : s.p[s.n - 1] == 'M' ? 20 : 30;
    s.n--;
  }
  uint64_t n;
  if ((rc = cls__parse_uint(&ps, "size", s, 1, ((uint64_t)1 << 62) >> shift, &n)) < 0)
    return rc;
  *out = n << shift;
  return CLS_OK;
}

static char *join(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 2);
  if (s) {
    memcpy(s, a, na);
    s[na] = '/';
    memcpy(s + na + 1, b, nb + 1);
  }
  return s;
}

int cls__cache_init(struct cls__cache *c, const char *opt_dir) {
  memset(c, 0, sizeof *c);
  c->max = CLS__CACHE_DEFAULT_MAX;
  const char *onoff = env("CLS_CACHE");
  if (onoff) {
    struct cls__parser ps = {"CLS_CACHE", onoff, NULL};
    int rc = cls__parse_text(&ps);
    if (rc < 0)
      return rc;
    if (strcmp(onoff, "off") == 0)
      return CLS_OK; /* the rest is not read: off is off */
    if (strcmp(onoff, "on") != 0)
      return cls__parse_fail(&ps, "expected on or off");
  }
  const char *max = env("CLS_CACHE_MAX");
  if (max) {
    int rc = parse_max(max, &c->max);
    if (rc < 0)
      return rc;
  }
  const char *dir = opt_dir && *opt_dir ? opt_dir : env("CLS_CACHE_DIR");
  const char *xdg = env("XDG_CACHE_HOME"), *home = env("HOME");
  if (dir)
    c->dir = strdup(dir);
  else if (xdg && xdg[0] == '/') /* the XDG rule: a relative path is ignored */
    c->dir = join(xdg, "clstream");
  else if (home)
    c->dir = join(home, ".cache/clstream");
  else
    return CLS_OK; /* nowhere to keep it: off */
  if (!c->dir)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  c->enabled = true;
  return CLS_OK;
}

void cls__cache_fini(struct cls__cache *c) {
  free(c->dir);
  c->dir = NULL;
  c->enabled = false;
}

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

/* DIR/<hash>.clbin for the key; malloc'ed. */
static char *entry_path(const struct cls__cache *c, const char *key, size_t keylen,
                        const struct cls__cache_key *k) {
  uint64_t h = cls__hash(CLS__HASH_INIT, key, keylen);
  h = cls__hash(h, k->source, k->srclen);
  char name[NAME_LEN + 1];
  snprintf(name, sizeof name, "%016llx" SUFFIX, (unsigned long long)h);
  return join(c->dir, name);
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

/* ---------------------------------------------------------------- reading */

static bool is_entry_name(const char *n) {
  if (strlen(n) != NAME_LEN || strcmp(n + 16, SUFFIX) != 0)
    return false;
  for (int i = 0; i < 16; i++)
    if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
      return false;
  return true;
}

/* The whole file, or NULL (errno set; EFBIG for a size no entry has). */
static unsigned char *read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  unsigned char *buf = NULL;
  struct stat st;
  if (fstat(fd, &st) != 0)
    goto cleanup;
  if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > MAX_FILE) {
    errno = EFBIG;
    goto cleanup;
  }
  size_t n = (size_t)st.st_size, got = 0;
  if (!(buf = malloc(n ? n : 1)))
    goto cleanup;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break; /* shorter than it was: checked as truncated */
    got += (size_t)r;
  }
  *len = got;
cleanup:
  close(fd);
  return buf;
}

/* Why the bytes are not a valid entry for this key, or NULL when they are
 * (then *bin and *binlen point into them). */
static const char *check(const unsigned char *f, size_t n, const char *key, size_t keylen,
                         const struct cls__cache_key *k, const unsigned char **bin,
                         size_t *binlen) {
  if (n < 8 || memcmp(f, MAGIC, 8) != 0)
    return "not a clstream cache file";
  if (n < HEADER)
    return "truncated";
  if (get32(f + 8) != CLS__CACHE_FORMAT)
    return "another format version";
  uint64_t kl = get32(f + 12), sl = get64(f + 16), bl = get64(f + 24);
  if (kl > MAX_FILE || sl > MAX_FILE || bl > MAX_FILE || HEADER + kl + sl + bl > n)
    return "truncated";
  if (HEADER + kl + sl + bl < n)
    return "longer than its header says";
  uint64_t sum = cls__hash(CLS__HASH_INIT, f + HEADER, (size_t)(kl + sl + bl));
  if (sum != get64(f + 32))
    return "checksum mismatch (corrupt)";
  if (kl != keylen || memcmp(f + HEADER, key, keylen) != 0 || sl != k->srclen ||
      memcmp(f + HEADER + kl, k->source, k->srclen) != 0)
    return "built for another key";
  *bin = f + HEADER + kl + sl;
  *binlen = (size_t)bl;
  return NULL;
}

int cls__cache_load(struct cls__cache *c, const struct cls__logger *lg,
                    const struct cls__cache_key *k, unsigned char **bin, size_t *len) {
  *bin = NULL;
  *len = 0;
  if (!c->enabled || c->refused)
    return 0;
  size_t keylen = 0, n = 0;
  char *key = key_text(k, &keylen);
  char *path = key ? entry_path(c, key, keylen, k) : NULL;
  unsigned char *f = path ? read_file(path, &n) : NULL;
  int hit = 0;
  if (!f) {
    if (path && errno != ENOENT && errno != ENOTDIR && !c->said_bad) {
      cls__log(lg, CLS_LOG_ERRORS, "program cache: cannot read %s (%s); building from source",
               path, errno == EFBIG ? "not a clstream cache file" : strerror(errno));
      c->said_bad = true;
    }
    goto cleanup;
  }
  const unsigned char *b = NULL;
  size_t bl = 0;
  const char *why = check(f, n, key, keylen, k, &b, &bl);
  if (why) {
    if (!c->said_bad)
      cls__log(lg, CLS_LOG_ERRORS, "program cache: ignoring %s: %s; building from source",
               path, why);
    c->said_bad = true;
    goto cleanup;
  }
  if (!(*bin = malloc(bl ? bl : 1)))
    goto cleanup;
  memcpy(*bin, b, bl);
  *len = bl;
  hit = 1;
  utimensat(AT_FDCWD, path, NULL, 0); /* recently used: evicted last */
cleanup:
  free(f);
  free(path);
  free(key);
  return hit;
}

/* ---------------------------------------------------------------- writing */

/* mkdir -p, mode 0700 for what it makes. */
static int make_dirs(const char *dir) {
  char *p = strdup(dir);
  if (!p)
    return -1;
  int rc = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s)
      continue;
    char was = *s;
    *s = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) {
      rc = -1;
      break;
    }
    *s = was;
    if (!was)
      break;
  }
  int saved = errno;
  free(p);
  struct stat st;
  if (rc == 0 && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
    saved = ENOTDIR;
    rc = -1;
  }
  errno = saved;
  return rc;
}

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

/* The entries of the directory (and, when `sweep`, removes temporary files
 * a dead writer left).  NULL with *count 0 when there are none. */
static struct entry *list(const char *dir, size_t *count, uint64_t *bytes, bool sweep) {
  *count = 0;
  *bytes = 0;
  DIR *d = opendir(dir);
  if (!d)
    return NULL;
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
  free(list(c->dir, &n, bytes, false));
  *entries = n;
}

/* Removes entries oldest first until `need` more bytes fit under the cap;
 * `self` (the entry about to be replaced) does not count. */
static void evict(const struct cls__cache *c, const char *self, uint64_t need) {
  size_t n = 0;
  uint64_t total = 0;
  struct entry *v = list(c->dir, &n, &total, true);
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
      char *p = join(c->dir, v[i].name);
      if (p && (unlink(p) == 0 || errno == ENOENT)) /* another writer may have been first */
        total -= v[i].size;
      free(p);
    }
  }
  free(v);
}

static bool write_all(int fd, const void *p, size_t n) {
  const unsigned char *b = p;
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    b += w;
    n -= (size_t)w;
  }
  return true;
}

void cls__cache_store(struct cls__cache *c, const struct cls__logger *lg,
                      const struct cls__cache_key *k, const unsigned char *bin, size_t len) {
  if (!c->enabled || c->refused || !len)
    return;
  size_t keylen = 0;
  char *key = key_text(k, &keylen);
  char *path = key ? entry_path(c, key, keylen, k) : NULL;
  char *tmp = NULL;
  int fd = -1;
  const char *what = "out of host memory";
  if (!path)
    goto cleanup;
  uint64_t size = HEADER + keylen + k->srclen + len;
  if (size > c->max) {
    cls__log(lg, CLS_LOG_STREAMS,
             "program cache: a %llu-byte entry is over CLS_CACHE_MAX (%llu): not stored",
             (unsigned long long)size, (unsigned long long)c->max);
    what = NULL;
    goto cleanup;
  }
  what = "cannot create the directory";
  if (make_dirs(c->dir) != 0)
    goto cleanup;
  evict(c, path + strlen(c->dir) + 1, size);
  size_t tl = strlen(c->dir) + NAME_LEN + 64;
  what = "out of host memory";
  if (!(tmp = malloc(tl)))
    goto cleanup;
  snprintf(tmp, tl, "%s/.%.16s.%ld.%u.tmp", c->dir, path + strlen(c->dir) + 1, (long)getpid(),
           atomic_fetch_add(&tmp_counter, 1));
  what = "cannot write";
  if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
    goto cleanup;
  unsigned char h[HEADER];
  memcpy(h, MAGIC, 8);
  put32(h + 8, CLS__CACHE_FORMAT);
  put32(h + 12, (uint32_t)keylen);
  put64(h + 16, k->srclen);
  put64(h + 24, len);
  uint64_t sum = cls__hash(CLS__HASH_INIT, key, keylen);
  sum = cls__hash(sum, k->source, k->srclen);
  put64(h + 32, cls__hash(sum, bin, len));
  bool ok = write_all(fd, h, sizeof h) && write_all(fd, key, keylen) &&
            write_all(fd, k->source, k->srclen) && write_all(fd, bin, len);
  ok = close(fd) == 0 && ok;
  fd = -1;
  if (!ok || rename(tmp, path) != 0)
    goto cleanup;
  c->stores++;
  what = NULL;
cleanup:
  if (what && !c->said_dir) {
    cls__log(lg, CLS_LOG_ERRORS, "program cache: %s %s (%s); programs are built from source",
             what, tmp ? tmp : c->dir, strerror(errno));
    c->said_dir = true;
  }
  if (fd >= 0)
    close(fd);
  if (tmp && what)
    unlink(tmp);
  free(tmp);
  free(path);
  free(key);
}

void cls__cache_drop(struct cls__cache *c, const struct cls__cache_key *k) {
  if (!c->dir)
    return;
  size_t keylen = 0;
  char *key = key_text(k, &keylen);
  char *path = key ? entry_path(c, key, keylen, k) : NULL;
  if (path)
    unlink(path);
  free(path);
  free(key);
}
