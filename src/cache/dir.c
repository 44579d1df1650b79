/* The program cache's directory (cache.h): its configuration (CLS_CACHE,
 * CLS_CACHE_DIR, CLS_CACHE_MAX), and the trust it must earn before use:
 * this user's own, writable by nobody else, its key file this user's
 * alone; every file of it reached through one checked descriptor, read
 * and written whole.  The entry format, reads and writes: cache.c. */
#include "cache/cache.h"
#include "cache/dir.h"
#include "util/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

atomic_uint cls__cache_tmp_counter;

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

/* ---------------------------------------------------------------- the directory */

/* mkdir -p, mode 0700 for what it makes. */
int cls__cache_make_dirs(const char *dir) {
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

/* The directory, opened, when it is this user's own: owned by the
 * effective user and writable by nobody else (what ssh asks of ~/.ssh and
 * ccache of its directory).  Another user who can write into it can plant
 * entries or read the key.  -1 with errno ENOENT when it does not exist;
 * -1 with *refused set (said once per context) when it is not to be
 * trusted. */
int cls__cache_open_dir(struct cls__cache *c, const struct cls__logger *lg, bool *refused) {
  *refused = false;
  int fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  const char *why = NULL;
  char detail[96] = "";
  if (fstat(fd, &st) != 0) {
    why = "cannot stat it";
  } else if (st.st_uid != geteuid()) {
    why = "it is owned by another user";
    snprintf(detail, sizeof detail, " (uid %lu, this process runs as uid %lu)",
             (unsigned long)st.st_uid, (unsigned long)geteuid());
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    why = "others can write to it";
    snprintf(detail, sizeof detail, " (mode %04o; chmod go-w makes it usable)",
             (unsigned)(st.st_mode & 07777));
  }
  if (!why)
    return fd;
  close(fd);
  *refused = true;
  if (!c->said_trust)
    cls__log(lg, CLS_LOG_ERRORS,
             "program cache: refusing %s: %s%s; programs are built from source", c->dir, why,
             detail);
  c->said_trust = true;
  errno = EPERM;
  return -1;
}

/* Opens a file of the directory for reading without blocking (a FIFO) and
 * without following a link; -1 (errno EFTYPE-like EINVAL) unless it is a
 * regular file. */
int cls__cache_open_regular(int dfd, const char *name, struct stat *st) {
  int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

bool cls__cache_read_all(int fd, void *p, size_t n, off_t off) {
  unsigned char *b = p;
  while (n) {
    ssize_t r = pread(fd, b, n, off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    b += r;
    n -= (size_t)r;
    off += r;
  }
  return true;
}

bool cls__cache_write_all(int fd, const void *p, size_t n) {
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

/* Reads the directory's key file into c->key: 0 on success, -1 when there
 * is none (and `make` is false) or it cannot be made, 1 when the file is
 * there but is not a key this user alone can read (said once). */
int cls__cache_read_key(struct cls__cache *c, const struct cls__logger *lg, int dfd, bool make) {
  if (c->have_key)
    return 0;
  struct stat st;
  int fd = cls__cache_open_regular(dfd, KEY_FILE, &st);
  if (fd < 0 && errno == ENOENT && make) {
    /* Made whole under a temporary name, then linked: a reader sees no
     * key or the whole key, and of two makers the first link wins. */
    unsigned char k[KEY_LEN];
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".key.%ld.%u.tmp", (long)getpid(),
             atomic_fetch_add(&cls__cache_tmp_counter, 1));
    int r = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    bool ok = r >= 0 && cls__cache_read_all(r, k, sizeof k, 0);
    if (r >= 0)
      close(r);
    int w = ok ? openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (w >= 0) {
      ok = cls__cache_write_all(w, k, sizeof k);
      ok = close(w) == 0 && ok;
      if (ok && linkat(dfd, tmp, dfd, KEY_FILE, 0) != 0 && errno != EEXIST)
        ok = false;
      unlinkat(dfd, tmp, 0);
    }
    if (!ok || w < 0)
      return -1;
    fd = cls__cache_open_regular(dfd, KEY_FILE, &st);
  }
  if (fd < 0 && errno == ENOENT)
    return -1;
  bool good = fd >= 0 && st.st_uid == geteuid() && !(st.st_mode & 077) &&
              st.st_size == KEY_LEN && cls__cache_read_all(fd, c->key, KEY_LEN, 0);
  if (fd >= 0)
    close(fd);
  if (good) {
    c->have_key = true;
    return 0;
  }
  if (!c->said_trust)
    cls__log(lg, CLS_LOG_ERRORS,
             "program cache: %s/" KEY_FILE " is not a key file of this user's alone (a regular "
             "file of %d bytes, mode 0600); programs are built from source until it is removed",
             c->dir, KEY_LEN);
  c->said_trust = true;
  return 1;
}
