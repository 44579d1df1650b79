/* The persistent program cache (src/cache/cache.h, docs/cache.md): a
 * second context finds the binary the first stored; a corrupt, truncated
 * or foreign file, or a directory that cannot be written, costs a source
 * build and never a wrong program; several processes fill one directory
 * at once; the key takes the build options; CLS_CACHE=off writes nothing;
 * the cap evicts oldest first; a forged entry fails the keyed checksum; a
 * directory that is not the user's own is refused (also by another user's
 * process); a FIFO or a huge file named like an entry neither blocks nor
 * is read whole; a program that includes files is not cached.  Each test
 * has its own directory (mkdtemp in the working directory: the build tree
 * under make check).  The cache sits below the driver, so this program
 * runs once. */
#include "common.h"

#include "cache/cache.h"
#include "util/hash.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The test's own directory, removed at the end of the test. */
static char dir[256];

static void rm_tree(const char *path) {
  DIR *d = opendir(path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char p[512];
      snprintf(p, sizeof p, "%s/%s", path, e->d_name);
      rm_tree(p);
    }
    closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void setup(void) {
  char cwd[200];
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
  snprintf(dir, sizeof dir, "%s/test-cache.XXXXXX", cwd);
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) { rm_tree(dir); }

static cls_context *ctx_in(const char *d) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .cache_dir = d};
  return ct_context_opts(&o);
}

static struct cls_cache_info info(cls_context *ctx) {
  struct cls_cache_info ci = {.version = CLS_CACHE_INFO_VERSION};
  CT_OK(cls_context_cache(ctx, &ci));
  return ci;
}

/* Log lines of one context, counted by what they say. */
struct seen {
  int hit, miss, ignored, unwritable, refusing, unreadable, includes;
};
static void on_log(void *user, int level, const char *msg) {
  struct seen *s = user;
  (void)level;
  if (strstr(msg, "program cache hit"))
    s->hit++;
  if (strstr(msg, "program cache miss"))
    s->miss++;
  if (strstr(msg, "program cache: ignoring"))
    s->ignored++;
  if (strstr(msg, "programs are built from source") && !strstr(msg, "refusing") &&
      !strstr(msg, "key file"))
    s->unwritable++;
  if (strstr(msg, "program cache: refusing"))
    s->refusing++;
  if (strstr(msg, "program cache: cannot read"))
    s->unreadable++;
  if (strstr(msg, "program cache: not used: the program can include files"))
    s->includes++;
}

/* Builds fill_k with `options` in d and checks that the kernel writes
 * what it should and that its arguments are known (a binary keeps them). */
static cls_context *build_and_run(const char *d, const char *options, struct seen *seen) {
  cls_context *ctx = ctx_in(d);
  if (seen)
    CT_OK(cls_set_logger(ctx, CLS_LOG_STREAMS, on_log, seen));
  cls_kernel *k = ct_get_kernel(ctx, ct_build(ctx, CT_FILL_SRC, options), "fill_k");
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_OK(cls_kernel_info(k, &ki));
  ck_assert_int_eq(ki.nargs, 2);
  ck_assert_int_eq(ki.args[0].kind, CLS_ARG_BUFFER);
  ck_assert_int_eq(ki.args[1].kind, CLS_ARG_SCALAR);
  ct_assert_context_works(ctx, k, 0);
  return ctx;
}

/* The directory's key file is no entry. */
static bool is_key(const char *name) { return strcmp(name, "key") == 0; }

/* The one entry in d (its path into out); fails unless there is one. */
static void the_entry(const char *d, char *out, size_t cap) {
  DIR *dd = opendir(d);
  ck_assert_ptr_nonnull(dd);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dd)))
    if (e->d_name[0] != '.' && !is_key(e->d_name)) {
      snprintf(out, cap, "%s/%s", d, e->d_name);
      n++;
    }
  closedir(dd);
  ck_assert_int_eq(n, 1);
}

/* Files in d but the key file, temporary ones (dot files) included. */
static int files_in(const char *d) {
  DIR *dd = opendir(d);
  if (!dd)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dd)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && !is_key(e->d_name))
      n++;
  closedir(dd);
  return n;
}

static off_t size_of(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_size;
}

START_TEST(miss_builds_from_source_and_stores_one_entry) {
  char sub[300];
  snprintf(sub, sizeof sub, "%s/a/b", dir); /* made on the first store */
  struct seen seen = {0};
  cls_context *ctx = build_and_run(sub, NULL, &seen);
  struct cls_cache_info ci = info(ctx);
  ck_assert_int_eq(ci.enabled, 1);
  ck_assert_str_eq(ci.dir, sub);
  ck_assert_uint_eq(ci.misses, 1);
  ck_assert_uint_eq(ci.hits, 0);
  ck_assert_uint_eq(ci.stores, 1);
  ck_assert_uint_eq(ci.entries, 1);
  ck_assert_uint_gt(ci.bytes, 0);
  ck_assert_uint_eq(ci.max_bytes, 64u << 20);
  ck_assert_int_eq(seen.miss, 1);
  ck_assert_int_eq(seen.hit, 0);
  /* The same program again in this context: its in-memory cache. */
  ct_build(ctx, CT_FILL_SRC, NULL);
  ck_assert_uint_eq(info(ctx).misses, 1);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(hit_loads_the_stored_binary_in_a_new_context) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  struct seen seen = {0};
  cls_context *ctx = build_and_run(dir, NULL, &seen);
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.hits, 1);
  ck_assert_uint_eq(ci.misses, 0);
  ck_assert_uint_eq(ci.stores, 0);
  ck_assert_uint_eq(ci.entries, 1);
  ck_assert_int_eq(seen.hit, 1);
  ck_assert_int_eq(seen.miss, 0);
  cls_context_destroy(ctx);
}
END_TEST

/* After a bad file: built from source, said once, and the entry is good
 * again (the next context hits). */
static void rebuilt_from(const char *what) {
  struct seen seen = {0};
  cls_context *ctx = build_and_run(dir, NULL, &seen);
  struct cls_cache_info ci = info(ctx);
  ck_assert_msg(ci.hits == 0 && ci.misses == 1 && ci.stores == 1, "%s: %llu hits %llu misses",
                what, ci.hits, ci.misses);
  ck_assert_msg(seen.ignored == 1, "%s: said %d times", what, seen.ignored);
  cls_context_destroy(ctx);
  ctx = build_and_run(dir, NULL, NULL);
  ck_assert_msg(info(ctx).hits == 1, "%s: not stored again", what);
  cls_context_destroy(ctx);
}

START_TEST(corrupt_file_is_ignored_and_rebuilt) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  off_t n = size_of(path);
  /* One flipped byte at each end of the binary and in the header's key. */
  off_t at[] = {n - 1, n / 2, 44};
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    unsigned char c;
    ck_assert_int_eq(pread(fd, &c, 1, at[i]), 1);
    c ^= 0x5a;
    ck_assert_int_eq(pwrite(fd, &c, 1, at[i]), 1);
    close(fd);
    char what[64];
    snprintf(what, sizeof what, "byte %lld flipped", (long long)at[i]);
    rebuilt_from(what);
  }
}
END_TEST

START_TEST(truncated_file_is_ignored_and_rebuilt) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  off_t n = size_of(path);
  off_t to[] = {n - 1, n / 2, 39, 8, 3, 0};
  for (size_t i = 0; i < sizeof to / sizeof *to; i++) {
    ck_assert_int_eq(truncate(path, to[i]), 0);
    char what[64];
    snprintf(what, sizeof what, "cut to %lld bytes", (long long)to[i]);
    rebuilt_from(what);
  }
}
END_TEST

/* Another program's valid entry under this program's name: its binary is
 * not loaded (the key and source are compared, not only the hash). */
START_TEST(foreign_file_is_ignored_and_rebuilt) {
  cls_context *ctx = ctx_in(dir);
  ct_build(ctx, CT_INC_SRC, NULL);
  cls_context_destroy(ctx);
  char inc[512], path[600];
  the_entry(dir, inc, sizeof inc);
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  DIR *dd = opendir(dir);
  struct dirent *e;
  path[0] = '\0';
  while ((e = readdir(dd)))
    if (e->d_name[0] != '.' && !is_key(e->d_name) && !strstr(inc, e->d_name))
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
  closedir(dd);
  ck_assert_msg(path[0], "no entry for fill_k");
  ck_assert_int_eq(rename(inc, path), 0);
  rebuilt_from("inc_k's entry under fill_k's name");
  /* Not a cache file at all. */
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("#!/bin/sh\necho this is not a program binary at all\n", f);
  fclose(f);
  rebuilt_from("a text file");
}
END_TEST

/* An entry file in memory: the header and the key, source and binary. */
struct entry_file {
  unsigned char h[40];
  uint64_t kl, sl, bl;
  unsigned char *body;
};

static struct entry_file read_entry(const char *path) {
  struct entry_file e;
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fread(e.h, 1, sizeof e.h, f), sizeof e.h);
  e.kl = e.sl = e.bl = 0;
  for (int i = 7; i >= 0; i--) {
    e.kl = e.kl << 8 | (i < 4 ? e.h[12 + i] : 0);
    e.sl = e.sl << 8 | e.h[16 + i];
    e.bl = e.bl << 8 | e.h[24 + i];
  }
  size_t n = (size_t)(e.kl + e.sl + e.bl);
  ck_assert_ptr_nonnull(e.body = malloc(n));
  ck_assert_uint_eq(fread(e.body, 1, n, f), n);
  fclose(f);
  return e;
}

/* Writes e to path (mode 0600) with `sum` as its checksum. */
static void write_entry(const char *path, struct entry_file *e, uint64_t sum) {
  for (int i = 0; i < 8; i++)
    e->h[32 + i] = (unsigned char)(sum >> 8 * i);
  for (int i = 0; i < 8; i++)
    e->h[24 + i] = (unsigned char)(e->bl >> 8 * i);
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  ck_assert_int_ge(fd, 0);
  size_t n = (size_t)(e->kl + e->sl + e->bl);
  ck_assert_int_eq(write(fd, e->h, sizeof e->h), (ssize_t)sizeof e->h);
  ck_assert_int_eq(write(fd, e->body, n), (ssize_t)n);
  close(fd);
}

/* The checksum the cache computes: SipHash-2-4 keyed with d/key. */
static uint64_t keyed_sum(const char *d, const struct entry_file *e) {
  char kp[400];
  unsigned char key[16];
  snprintf(kp, sizeof kp, "%s/key", d);
  FILE *f = fopen(kp, "rb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fread(key, 1, sizeof key, f), sizeof key);
  fclose(f);
  struct cls__siphash h;
  cls__siphash_init(&h, key);
  cls__siphash_update(&h, e->body, (size_t)(e->kl + e->sl + e->bl));
  return cls__siphash_final(&h);
}

/* A well-formed entry whose binary the vendor refuses (its bytes replaced,
 * the checksum made to match with the directory's key, as only its owner
 * can): built from source, the entry removed, and this context does not
 * try the cache again. */
START_TEST(binary_the_vendor_refuses_is_dropped_and_rebuilt) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  struct entry_file e = read_entry(path);
  size_t body = (size_t)(e.kl + e.sl + e.bl);
  for (size_t i = (size_t)(e.kl + e.sl); i < body; i++)
    e.body[i] = (unsigned char)(i * 7 + 1);
  write_entry(path, &e, keyed_sum(dir, &e));
  free(e.body);
  cls_context *ctx = build_and_run(dir, NULL, NULL);
  ct_build(ctx, CT_INC_SRC, NULL);
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.hits, 0);
  ck_assert_uint_eq(ci.misses, 2);
  ck_assert_uint_eq(ci.stores, 0);
  ck_assert_int_eq(files_in(dir), 0);
  cls_context_destroy(ctx);
}
END_TEST

/* A directory that cannot be made (its parent is a regular file: this
 * holds for root too) costs the cache, not the build. */
START_TEST(unwritable_directory_builds_from_source) {
  char file[300], sub[400];
  snprintf(file, sizeof file, "%s/file", dir);
  FILE *f = fopen(file, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  snprintf(sub, sizeof sub, "%s/cache", file);
  struct seen seen = {0};
  cls_context *ctx = build_and_run(sub, NULL, &seen);
  ct_build(ctx, CT_INC_SRC, NULL);
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.stores, 0);
  ck_assert_uint_eq(ci.entries, 0);
  ck_assert_uint_eq(ci.misses, 2);
  ck_assert_int_eq(seen.unwritable, 1); /* said once */
  cls_context_destroy(ctx);
  ck_assert_int_eq(size_of(file), 0);
  ck_assert_int_eq(files_in(dir), 1);
}
END_TEST

START_TEST(concurrent_writers_leave_one_valid_entry) {
  enum { N = 4 };
  pid_t pid[N];
  for (int i = 0; i < N; i++) {
    pid[i] = fork();
    ck_assert_int_ge(pid[i], 0);
    if (pid[i] == 0) {
      cls_context *ctx = NULL;
      struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .cache_dir = dir};
      int v = 40 + i, got[64];
      if (cls_context_create(&ctx, &o) != 0)
        _exit(2);
      cls_program *p = NULL;
      cls_kernel *k = NULL;
      cls_buffer b = CLS_BUFFER_NULL;
      if (cls_program_build(ctx, CT_FILL_SRC, NULL, &p) != 0 ||
          cls_kernel_get(ctx, p, "fill_k", &k) != 0 || cls_alloc(ctx, 0, sizeof got, &b) != 0)
        _exit(3);
      cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
      size_t g[1] = {64};
      if (cls_launch(ctx, 0, k, 1, g, NULL, 2, a) != 0 ||
          cls_download(ctx, 0, b, 0, got, sizeof got, NULL) != 0)
        _exit(4);
      for (int j = 0; j < 64; j++)
        if (got[j] != v)
          _exit(5);
      cls_context_destroy(ctx);
      _exit(0);
    }
  }
  for (int i = 0; i < N; i++) {
    int st = 0;
    ck_assert_int_eq(waitpid(pid[i], &st, 0), pid[i]);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d: status %d", i, st);
  }
  ck_assert_int_eq(files_in(dir), 1); /* no temporary file left */
  cls_context *ctx = build_and_run(dir, NULL, NULL);
  ck_assert_uint_eq(info(ctx).hits, 1);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(build_options_change_the_key) {
  cls_context *ctx = build_and_run(dir, NULL, NULL);
  ct_build(ctx, CT_FILL_SRC, "-DX=1");
  ct_build(ctx, CT_FILL_SRC, "-DX=2");
  ck_assert_uint_eq(info(ctx).stores, 3);
  ck_assert_uint_eq(info(ctx).entries, 3);
  cls_context_destroy(ctx);
  ctx = build_and_run(dir, "-DX=2", NULL);
  ct_build(ctx, CT_FILL_SRC, "-DX=3");
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.hits, 1);
  ck_assert_uint_eq(ci.misses, 1);
  ck_assert_uint_eq(ci.entries, 4);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(cache_off_writes_nothing) {
  char sub[300];
  snprintf(sub, sizeof sub, "%s/never", dir);
  setenv("CLS_CACHE", "off", 1);
  setenv("CLS_CACHE_DIR", sub, 1);
  cls_context *ctx = build_and_run(sub, NULL, NULL);
  struct cls_cache_info ci = info(ctx);
  ck_assert_int_eq(ci.enabled, 0);
  ck_assert_str_eq(ci.dir, "");
  ck_assert_uint_eq(ci.stores + ci.hits + ci.misses, 0);
  cls_context_destroy(ctx);
  ck_assert_int_eq(files_in(dir), 0);
  setenv("CLS_CACHE", "on", 1);
  ctx = build_and_run(NULL, NULL, NULL); /* from $CLS_CACHE_DIR */
  ck_assert_uint_eq(info(ctx).stores, 1);
  cls_context_destroy(ctx);
  ck_assert_int_eq(files_in(sub), 1);
}
END_TEST

START_TEST(malformed_settings_are_refused) {
  static const struct {
    const char *var, *text;
  } bad[] = {{"CLS_CACHE", "yes"},      {"CLS_CACHE", "OFF"},      {"CLS_CACHE", "off "},
             {"CLS_CACHE", "0"},        {"CLS_CACHE_MAX", "0"},    {"CLS_CACHE_MAX", "-1"},
             {"CLS_CACHE_MAX", "+5"},   {"CLS_CACHE_MAX", "64m"},  {"CLS_CACHE_MAX", "64MiB"},
             {"CLS_CACHE_MAX", "M"},    {"CLS_CACHE_MAX", " 64M"},
             {"CLS_CACHE_MAX", "99999999999999999999"}, {"CLS_CACHE_MAX", "8589934592G"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv(bad[i].var, bad[i].text, 1);
    cls_context *ctx = (cls_context *)1;
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .cache_dir = dir};
    CT_ERR(cls_context_create(&ctx, &o), CLS_ECONFIG);
    ck_assert_ptr_null(ctx);
    ck_assert_msg(strstr(cls_last_error_detail(), bad[i].var), "%s=%s: %s", bad[i].var,
                  bad[i].text, cls_last_error_detail());
    unsetenv(bad[i].var);
  }
  static const struct {
    const char *text;
    unsigned long long bytes;
  } good[] = {{"1", 1}, {"4096", 4096}, {"2K", 2048}, {"64M", 64ull << 20}, {"1G", 1ull << 30}};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    setenv("CLS_CACHE_MAX", good[i].text, 1);
    cls_context *ctx = ctx_in(dir);
    ck_assert_uint_eq(info(ctx).max_bytes, good[i].bytes);
    cls_context_destroy(ctx);
  }
  setenv("CLS_CACHE", "", 1); /* empty: unset */
  setenv("CLS_CACHE_MAX", "", 1);
  cls_context *ctx = ctx_in(dir);
  ck_assert_int_eq(info(ctx).enabled, 1);
  ck_assert_uint_eq(info(ctx).max_bytes, 64u << 20);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(eviction_keeps_the_cap_oldest_first) {
  cls_context *ctx = ctx_in(dir);
  ct_build(ctx, CT_FILL_SRC, "-DV=1");
  uint64_t one = info(ctx).bytes;
  cls_context_destroy(ctx);
  char first[512];
  the_entry(dir, first, sizeof first);
  /* Older than anything written next. */
  struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  ck_assert_int_eq(utimensat(AT_FDCWD, first, old, 0), 0);
  char cap[32];
  snprintf(cap, sizeof cap, "%llu", (unsigned long long)(one * 5 / 2));
  setenv("CLS_CACHE_MAX", cap, 1);
  ctx = ctx_in(dir);
  ct_build(ctx, CT_FILL_SRC, "-DV=2");
  ck_assert_uint_eq(info(ctx).entries, 2);
  ct_build(ctx, CT_FILL_SRC, "-DV=3");
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.stores, 2);
  ck_assert_uint_eq(ci.entries, 2);
  ck_assert_uint_le(ci.bytes, one * 5 / 2);
  struct stat st;
  ck_assert_msg(stat(first, &st) != 0, "the oldest entry was kept");
  cls_context_destroy(ctx);
  /* An entry larger than the cap is not stored, and evicts nothing. */
  setenv("CLS_CACHE_MAX", "1K", 1);
  ctx = ctx_in(dir);
  ct_build(ctx, CT_FILL_SRC, "-DV=4");
  ck_assert_uint_eq(info(ctx).stores, 0);
  ck_assert_uint_eq(info(ctx).entries, 2);
  cls_context_destroy(ctx);
}
END_TEST

/* A caller compiled against version 1 of the options has no cache_dir:
 * $CLS_CACHE_DIR decides. */
START_TEST(version_1_options_take_the_directory_from_the_environment) {
  setenv("CLS_CACHE_DIR", dir, 1);
  struct cls_context_options o = {.version = 1};
  cls_context *ctx = ct_context_opts(&o);
  ct_build(ctx, CT_FILL_SRC, NULL);
  struct cls_cache_info ci = info(ctx);
  ck_assert_str_eq(ci.dir, dir);
  ck_assert_uint_eq(ci.entries, 1);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(cache_info_checks_its_arguments) {
  cls_context *ctx = ctx_in(dir);
  struct cls_cache_info ci = {.version = 0};
  CT_ERR(cls_context_cache(NULL, &ci), CLS_EINVAL);
  CT_ERR(cls_context_cache(ctx, NULL), CLS_EINVAL);
  CT_ERR(cls_context_cache(ctx, &ci), CLS_EVERSION);
  ci.version = CLS_CACHE_INFO_VERSION + 1;
  CT_ERR(cls_context_cache(ctx, &ci), CLS_EVERSION);
  cls_context_destroy(ctx);
}
END_TEST

/* ---------------------------------------------------------------- issue 30 */

/* fill_k with another body (it writes v + 1): a binary that loads and
 * runs, with the wrong results. */
#define WRONG_FILL_SRC                                                 \
  "kernel void fill_k(global int *out, int v) {\n"                     \
  "  out[get_global_id(0)] = v + 1;\n"                                 \
  "}\n"

/* Another program's binary planted under fill_k's entry, its checksum
 * fixed up the way anyone can without the directory's key (FNV-1a, the
 * checksum before the key, and SipHash with a guessed key): refused as
 * corrupt, built from source, and the results are right. */
START_TEST(a_forged_entry_with_its_checksum_fixed_up_is_refused) {
  cls_context *ctx = ctx_in(dir);
  ct_build(ctx, WRONG_FILL_SRC, NULL);
  cls_context_destroy(ctx);
  char wrong[512], path[600];
  the_entry(dir, wrong, sizeof wrong);
  struct entry_file w = read_entry(wrong);
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  DIR *dd = opendir(dir);
  struct dirent *de;
  path[0] = '\0';
  while ((de = readdir(dd)))
    if (de->d_name[0] != '.' && !is_key(de->d_name) && !strstr(wrong, de->d_name))
      snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
  closedir(dd);
  ck_assert_msg(path[0], "no entry for fill_k");
  ck_assert_int_eq(unlink(wrong), 0);
  for (int forge = 0; forge < 2; forge++) {
    struct entry_file e = read_entry(path);
    size_t head = (size_t)(e.kl + e.sl);
    unsigned char *b = malloc(head + (size_t)w.bl);
    ck_assert_ptr_nonnull(b);
    memcpy(b, e.body, head);
    memcpy(b + head, w.body + w.kl + w.sl, (size_t)w.bl);
    free(e.body);
    e.body = b;
    e.bl = w.bl;
    uint64_t sum = cls__hash(CLS__HASH_INIT, b, head + (size_t)w.bl);
    if (forge == 1) {
      static const unsigned char guess[16] = {0};
      struct cls__siphash h;
      cls__siphash_init(&h, guess);
      cls__siphash_update(&h, b, head + (size_t)w.bl);
      sum = cls__siphash_final(&h);
    }
    write_entry(path, &e, sum);
    free(e.body);
    struct seen seen = {0};
    ctx = build_and_run(dir, NULL, &seen); /* checks fill_k writes v */
    struct cls_cache_info ci = info(ctx);
    ck_assert_uint_eq(ci.hits, 0);
    ck_assert_uint_eq(ci.stores, 1);
    ck_assert_int_eq(seen.ignored, 1);
    cls_context_destroy(ctx);
  }
  free(w.body);
  ctx = build_and_run(dir, NULL, NULL);
  ck_assert_uint_eq(info(ctx).hits, 1);
  cls_context_destroy(ctx);
}
END_TEST

static void chown_tree(const char *d, uid_t uid) {
  ck_assert_int_eq(chown(d, uid, (gid_t)-1), 0);
  DIR *dd = opendir(d);
  ck_assert_ptr_nonnull(dd);
  struct dirent *e;
  while ((e = readdir(dd)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      char p[600];
      snprintf(p, sizeof p, "%s/%s", d, e->d_name);
      ck_assert_int_eq(chown(p, uid, (gid_t)-1), 0);
    }
  closedir(dd);
}

/* Builds fill_k in d and checks that the directory was refused: said,
 * built from source, nothing read or written there. */
static void refused_dir(const char *d, const char *what) {
  int before = files_in(d);
  struct seen seen = {0};
  cls_context *ctx = build_and_run(d, NULL, &seen);
  ct_build(ctx, CT_INC_SRC, NULL);
  struct cls_cache_info ci = info(ctx);
  ck_assert_msg(seen.refusing == 1, "%s: refusal said %d times", what, seen.refusing);
  ck_assert_msg(ci.hits == 0 && ci.stores == 0 && ci.misses == 2,
                "%s: %llu hits, %llu stores, %llu misses", what, ci.hits, ci.stores, ci.misses);
  ck_assert_msg(seen.unwritable == 0, "%s: said as unwritable too", what);
  cls_context_destroy(ctx);
  ck_assert_msg(files_in(d) == before, "%s: written into", what);
}

/* 65534: nobody. */
#define OTHER_UID 65534

/* The cache directory must be the user's own: owned by the effective user
 * and writable by nobody else.  Another user's directory, one others can
 * write to (a 1777 directory as /tmp is), or one group-writable, is
 * refused with a logged reason, and programs are built from source.  Run
 * by a user other than root, who cannot give a directory away, "/" is
 * the other user's directory. */
START_TEST(a_directory_not_the_users_own_is_refused) {
  bool root = geteuid() == 0;
  char d[300];
  static const struct {
    const char *name;
    mode_t mode;
    bool other;
  } bad[] = {{"sticky-other", 01777, true}, {"private-other", 0700, true},
             {"world-writable", 0777, false}, {"sticky-mine", 01777, false},
             {"group-writable", 0770, false}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    if (bad[i].other && !root) {
      refused_dir("/", bad[i].name);
      continue;
    }
    snprintf(d, sizeof d, "%s/%s", dir, bad[i].name);
    ck_assert_int_eq(mkdir(d, 0700), 0);
    ck_assert_int_eq(chmod(d, bad[i].mode), 0);
    if (bad[i].other)
      ck_assert_int_eq(chown(d, OTHER_UID, OTHER_UID), 0);
    refused_dir(d, bad[i].name);
  }
  /* Readable by others is fine: 0755. */
  snprintf(d, sizeof d, "%s/readable", dir);
  ck_assert_int_eq(mkdir(d, 0755), 0);
  ck_assert_int_eq(chmod(d, 0755), 0);
  cls_context *ctx = build_and_run(d, NULL, NULL);
  ck_assert_uint_eq(info(ctx).stores, 1);
  cls_context_destroy(ctx);
  /* Entries planted by another user: the directory, its key and its
   * entry handed to them.  Before, this was a hit. */
  snprintf(d, sizeof d, "%s/planted", dir);
  cls_context_destroy(build_and_run(d, NULL, NULL));
  if (root) {
    chown_tree(d, OTHER_UID);
    refused_dir(d, "another user's entries");
  }
}
END_TEST

/* The other side: a process of another user (nobody) given root's 1777
 * directory, which holds a valid entry of root's (readable to all), does
 * not load it and writes nothing there.  The child asks the cache itself
 * (src/cache/cache.h) for the entry under the key program.c gives it:
 * the vendor may not build for a user without a home. */
START_TEST(another_user_refuses_a_directory_it_does_not_own) {
  /* Run by a user other than root, this process is the other user, and
   * root's "/" the directory. */
  bool root = geteuid() == 0;
  if (!root) {
    refused_dir("/", "root's directory");
    return;
  }
  char d[300];
  snprintf(d, sizeof d, "%s/shared", dir);
  cls_context *ctx = build_and_run(d, NULL, NULL);
  struct cls_device_info di = ct_context_info(ctx);
  cls_context_destroy(ctx);
  struct cls__cache_key k = {di.platform_name, di.platform_version, di.device_name,
                             di.driver_version, " -cl-kernel-arg-info", CT_FILL_SRC,
                             strlen(CT_FILL_SRC)};
  struct cls__logger lg;
  cls__logger_init(&lg);
  struct cls__cache c;
  unsigned char *bin = NULL;
  size_t len = 0;
  CT_OK(cls__cache_init(&c, d));
  ck_assert_int_eq(cls__cache_load(&c, &lg, &k, &bin, &len), 1); /* the key is program.c's */
  free(bin);
  cls__cache_fini(&c);
  ck_assert_int_eq(chmod(d, 01777), 0);
  ck_assert_int_eq(chmod(dir, 0711), 0); /* the way there */
  char entry[512], key[400];
  the_entry(d, entry, sizeof entry);
  ck_assert_int_eq(chmod(entry, 0644), 0);
  snprintf(key, sizeof key, "%s/key", d);
  ck_assert_int_eq(access(key, F_OK) != 0 || chmod(key, 0644) == 0, 1);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (setgroups(0, NULL) != 0 || setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0)
      _exit(10);
    struct seen seen = {0};
    lg = (struct cls__logger){CLS_LOG_STREAMS, on_log, &seen};
    if (cls__cache_init(&c, d) != CLS_OK)
      _exit(11);
    if (cls__cache_load(&c, &lg, &k, &bin, &len) != 0)
      _exit(12); /* root's binary, loaded by nobody */
    static const unsigned char mine[] = "nobody's binary";
    cls__cache_store(&c, &lg, &k, mine, sizeof mine);
    if (c.stores != 0)
      _exit(13);
    if (seen.refusing != 1)
      _exit(14);
    cls__cache_fini(&c);
    _exit(0);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other user's process: exit %d",
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  ck_assert_int_eq(files_in(d), 1);
}
END_TEST

/* A FIFO named like the program's entry: the build neither blocks in
 * open() nor fails; the entry is written again over it. */
START_TEST(a_fifo_named_like_an_entry_does_not_block_the_build) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  ck_assert_int_eq(unlink(path), 0);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  struct seen seen = {0};
  alarm(30); /* a blocked open() fails the test here, not at the timeout */
  cls_context *ctx = build_and_run(dir, NULL, &seen);
  alarm(0);
  struct cls_cache_info ci = info(ctx);
  ck_assert_uint_eq(ci.hits, 0);
  ck_assert_uint_eq(ci.stores, 1);
  ck_assert_int_eq(seen.unreadable, 1);
  cls_context_destroy(ctx);
  struct stat st;
  ck_assert_int_eq(lstat(path, &st), 0);
  ck_assert(S_ISREG(st.st_mode));
  ctx = build_and_run(dir, NULL, NULL);
  ck_assert_uint_eq(info(ctx).hits, 1);
  cls_context_destroy(ctx);
}
END_TEST

static long max_rss_kib(void) {
  struct rusage ru;
  ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
  return ru.ru_maxrss;
}

/* A 4 GiB file (sparse: no disk) named like the entry, once all zeros and
 * once with a valid header that claims a 4 GiB binary: only its header is
 * read (the process's peak memory does not grow by the file's size), and
 * the build goes on from source. */
START_TEST(a_huge_file_named_like_an_entry_is_not_read_whole) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  struct entry_file e = read_entry(path);
  free(e.body);
  const off_t huge = (off_t)1 << 32;
  for (int withheader = 0; withheader < 2; withheader++) {
    ck_assert_int_eq(unlink(path), 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    if (withheader) {
      uint64_t bl = (uint64_t)huge - 40 - e.kl - e.sl;
      for (int i = 0; i < 8; i++)
        e.h[24 + i] = (unsigned char)(bl >> 8 * i);
      ck_assert_int_eq(write(fd, e.h, sizeof e.h), (ssize_t)sizeof e.h);
    }
    ck_assert_int_eq(ftruncate(fd, huge), 0);
    close(fd);
    long before = max_rss_kib();
    struct seen seen = {0};
    cls_context *ctx = build_and_run(dir, NULL, &seen);
    long grew = max_rss_kib() - before;
    ck_assert_msg(grew < 512 * 1024, "peak memory grew by %ld KiB", grew);
    ck_assert_uint_eq(info(ctx).hits, 0);
    ck_assert_int_eq(seen.ignored + seen.unreadable, 1);
    cls_context_destroy(ctx);
    ck_assert_int_lt(size_of(path), huge); /* written again */
  }
}
END_TEST

/* A program that includes a header is never cached: the key would hold
 * its source, not the header, and a changed header would load the old
 * binary.  The header's value changes between two contexts, and the
 * second builds the new one.  Every spelling the preprocessor reads as an
 * include counts (a spliced line, a digraph), and -include in the
 * options. */
START_TEST(a_changed_included_header_gives_the_new_value) {
  char inc[300], hdr[400], opts[400];
  snprintf(inc, sizeof inc, "%s/inc", dir);
  ck_assert_int_eq(mkdir(inc, 0700), 0);
  snprintf(hdr, sizeof hdr, "%s/val.h", inc);
  snprintf(opts, sizeof opts, "-I %s", inc);
  static const char *srcs[] = {
      "#include \"val.h\"\n"
      "kernel void val_k(global int *o) { o[get_global_id(0)] = VAL; }\n",
      "#inc\\\nlude <val.h>\n"
      "kernel void val_k(global int *o) { o[get_global_id(0)] = VAL; }\n",
      "%:include \"val.h\"\n"
      "kernel void val_k(global int *o) { o[get_global_id(0)] = VAL; }\n"};
  char cache[300];
  uint64_t used = 0;
  int said = 0;
  for (size_t s = 0; s < sizeof srcs / sizeof *srcs; s++) {
    snprintf(cache, sizeof cache, "%s/cache%zu", dir, s);
    for (int val = 1; val <= 2; val++) {
      FILE *f = fopen(hdr, "w");
      ck_assert_ptr_nonnull(f);
      fprintf(f, "#define VAL %d\n", 10 * (int)s + val);
      fclose(f);
      struct seen seen = {0};
      cls_context *ctx = ctx_in(cache);
      CT_OK(cls_set_logger(ctx, CLS_LOG_STREAMS, on_log, &seen));
      cls_kernel *k = ct_get_kernel(ctx, ct_build(ctx, srcs[s], opts), "val_k");
      cls_buffer o = ct_alloc(ctx, 0, 16 * sizeof(int));
      cls_arg a[] = {CLS_OUT(o)};
      ct_launch1(ctx, 0, k, 16, 1, a);
      int got[16];
      ct_download_ints(ctx, 0, o, got, 16);
      CT_EXPECT_INTS(got, (size_t)16, i, 10 * (int)s + val);
      struct cls_cache_info ci = info(ctx);
      used += ci.hits + ci.stores + ci.misses;
      said += seen.includes;
      cls_context_destroy(ctx);
    }
    ck_assert_int_le(files_in(cache), 0); /* nothing stored (or no directory) */
  }
  /* The cache was not asked, and each build said why. */
  ck_assert_uint_eq(used, 0);
  ck_assert_int_eq(said, 6);
  /* What counts as reading files, asked of the cache itself (-include
   * is refused by PoCL as a build option, so it is not built here). */
  static const struct {
    const char *src, *opts;
    bool reads;
  } cases[] = {{CT_FILL_SRC, "-I /x -DVAL=1 -cl-kernel-arg-info", false},
               {"#include <a.h>\n", "", true},
               {"  #  include \"a.h\"\n", "", true},
               {"# /* c */ inc\\\r\nlude \"a.h\"\n", "", true},
               {"?\?=inc?\?/\nlude \"a.h\"\n", "", true}, /* trigraphs */
               {"#include_next <a.h>\n", "", true},
               {"#import \"a.h\"\n", "", true},
               {"#embed \"a.bin\"\n", "", true},
               {CT_FILL_SRC, "-include a.h", true},
               {CT_FILL_SRC, "-imacros a.h", true},
               {CT_FILL_SRC, "@opts.txt", true}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    struct cls__cache_key k = {"p", "pv", "d", "dv", cases[i].opts, cases[i].src,
                               strlen(cases[i].src)};
    ck_assert_msg(cls__cache_reads_files(&k) == cases[i].reads, "case %zu: %s / %s", i,
                  cases[i].src, cases[i].opts);
  }
  cls_context *ctx;
  /* A program with no include is cached as before. */
  ctx = build_and_run(cache, "-I /nonexistent", NULL);
  ck_assert_uint_eq(info(ctx).stores, 1);
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  unsetenv("CLS_CACHE");
  unsetenv("CLS_CACHE_DIR");
  unsetenv("CLS_CACHE_MAX");
  Suite *s = suite_create("cache");
  CT_ADD_FIXTURE(s, miss_builds_from_source_and_stores_one_entry, setup, teardown);
  CT_ADD_FIXTURE(s, hit_loads_the_stored_binary_in_a_new_context, setup, teardown);
  CT_ADD_FIXTURE(s, corrupt_file_is_ignored_and_rebuilt, setup, teardown);
  CT_ADD_FIXTURE(s, truncated_file_is_ignored_and_rebuilt, setup, teardown);
  CT_ADD_FIXTURE(s, foreign_file_is_ignored_and_rebuilt, setup, teardown);
  CT_ADD_FIXTURE(s, binary_the_vendor_refuses_is_dropped_and_rebuilt, setup, teardown);
  CT_ADD_FIXTURE(s, unwritable_directory_builds_from_source, setup, teardown);
  CT_ADD_FIXTURE(s, concurrent_writers_leave_one_valid_entry, setup, teardown);
  CT_ADD_FIXTURE(s, build_options_change_the_key, setup, teardown);
  CT_ADD_FIXTURE(s, cache_off_writes_nothing, setup, teardown);
  CT_ADD_FIXTURE(s, malformed_settings_are_refused, setup, teardown);
  CT_ADD_FIXTURE(s, eviction_keeps_the_cap_oldest_first, setup, teardown);
  CT_ADD_FIXTURE(s, version_1_options_take_the_directory_from_the_environment, setup, teardown);
  CT_ADD_FIXTURE(s, cache_info_checks_its_arguments, setup, teardown);
  CT_ADD_FIXTURE(s, a_forged_entry_with_its_checksum_fixed_up_is_refused, setup, teardown);
  CT_ADD_FIXTURE(s, a_directory_not_the_users_own_is_refused, setup, teardown);
  CT_ADD_FIXTURE(s, another_user_refuses_a_directory_it_does_not_own, setup, teardown);
  CT_ADD_FIXTURE(s, a_fifo_named_like_an_entry_does_not_block_the_build, setup, teardown);
  CT_ADD_FIXTURE(s, a_huge_file_named_like_an_entry_is_not_read_whole, setup, teardown);
  CT_ADD_FIXTURE(s, a_changed_included_header_gives_the_new_value, setup, teardown);
  return ct_run(s);
}
