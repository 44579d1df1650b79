/* The persistent program cache (src/cache/cache.h, docs/cache.md): a
 * second context finds the binary the first stored; a corrupt, truncated
 * or foreign file, or a directory that cannot be written, costs a source
 * build and never a wrong program; several processes fill one directory
 * at once; the key takes the build options; CLS_CACHE=off writes nothing;
 * the cap evicts oldest first.  Each test has its own directory (mkdtemp
 * in the working directory: the build tree under make check).  The cache
 * sits below the driver, so this program runs once. */
#include "common.h"

#include "util/hash.h"

#include <dirent.h>
#include <fcntl.h>
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
  int hit, miss, ignored, unwritable;
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
  if (strstr(msg, "programs are built from source"))
    s->unwritable++;
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

/* The one entry in d (its path into out); fails unless there is one. */
static void the_entry(const char *d, char *out, size_t cap) {
  DIR *dd = opendir(d);
  ck_assert_ptr_nonnull(dd);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dd)))
    if (e->d_name[0] != '.') {
      snprintf(out, cap, "%s/%s", d, e->d_name);
      n++;
    }
  closedir(dd);
  ck_assert_int_eq(n, 1);
}

/* Files in d, temporary ones (dot files) included. */
static int files_in(const char *d) {
  DIR *dd = opendir(d);
  if (!dd)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dd)))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
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
    if (e->d_name[0] != '.' && !strstr(inc, e->d_name))
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

/* A well-formed entry whose binary the vendor refuses (its bytes replaced,
 * the checksum made to match): built from source, the entry removed, and
 * this context does not try the cache again. */
START_TEST(binary_the_vendor_refuses_is_dropped_and_rebuilt) {
  cls_context_destroy(build_and_run(dir, NULL, NULL));
  char path[512];
  the_entry(dir, path, sizeof path);
  FILE *f = fopen(path, "r+b");
  ck_assert_ptr_nonnull(f);
  unsigned char h[40];
  ck_assert_uint_eq(fread(h, 1, sizeof h, f), sizeof h);
  uint64_t kl = 0, sl = 0, bl = 0;
  for (int i = 7; i >= 0; i--) {
    kl = kl << 8 | (i < 4 ? h[12 + i] : 0);
    sl = sl << 8 | h[16 + i];
    bl = bl << 8 | h[24 + i];
  }
  size_t body = (size_t)(kl + sl + bl);
  unsigned char *b = malloc(body);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(fread(b, 1, body, f), body);
  for (size_t i = (size_t)(kl + sl); i < body; i++)
    b[i] = (unsigned char)(i * 7 + 1);
  uint64_t sum = cls__hash(CLS__HASH_INIT, b, body);
  for (int i = 0; i < 8; i++)
    h[32 + i] = (unsigned char)(sum >> 8 * i);
  rewind(f);
  ck_assert_uint_eq(fwrite(h, 1, sizeof h, f), sizeof h);
  ck_assert_uint_eq(fwrite(b, 1, body, f), body);
  fclose(f);
  free(b);
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
  return ct_run(s);
}
