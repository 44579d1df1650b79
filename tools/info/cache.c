/* clstream-info --cache: the persistent program cache as a context sees
 * it, and a small program built cold, with the vendor's own cache only,
 * and warm (docs/cache.md). */
#include "info.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define CACHE_PROBE_SRC                                                     \
  "kernel void saxpy(global const float *x, global float *y, float a) {\n"  \
  "  size_t i = get_global_id(0);\n"                                        \
  "  y[i] = a * x[i] + y[i];\n"                                             \
  "}\n"

/* One build of the probe program in a new context on `dir` (NULL: the
 * configured one); its time in ms, or a negative code. */
static double timed_build(const char *dir, const char *options, struct cls_cache_info *ci) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .cache_dir = dir};
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, &o);
  if (rc != CLS_OK) {
    info_text_error(stdout, "context:", rc, cls_last_error_detail());
    return rc;
  }
  cls_program *p = NULL;
  double t0 = now_ms();
  rc = cls_program_build(ctx, CACHE_PROBE_SRC, options, &p);
  double ms = now_ms() - t0;
  ci->version = CLS_CACHE_INFO_VERSION;
  if (rc == CLS_OK)
    rc = cls_context_cache(ctx, ci);
  if (rc != CLS_OK)
    info_text_error(stdout, "build:", rc, cls_last_error_detail());
  cls_context_destroy(ctx);
  return rc == CLS_OK ? ms : rc;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char path[4096 + 256 + 2];
    while ((e = readdir(d)))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
      }
    closedir(d);
  }
  rmdir(dir);
}

/* --cache: the cache as a context sees it, and the probe program built
 * cold (a new directory, and a build option no vendor cache has seen),
 * with the vendor's own cache warm but clstream's off, and warm. */
int info_cache_main(void) {
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK) {
    info_text_error(stdout, "context:", rc, cls_last_error_detail());
    return 1;
  }
  struct cls_cache_info ci = {.version = CLS_CACHE_INFO_VERSION};
  struct cls_device_info dev;
  rc = cls_context_cache(ctx, &ci);
  cls_context_device(ctx, &dev);
  char b[64];
  printf("persistent program cache (docs/cache.md):\n");
  printf("  device             %s (%s)\n", dev.device_name, dev.platform_name);
  printf("  enabled            %s\n", ci.enabled ? "yes" : "no (CLS_CACHE=off, or no directory)");
  if (ci.enabled) {
    printf("  directory          %s\n", ci.dir);
    printf("  entries            %llu\n", ci.entries);
    printf("  total size         %s\n", info_human_bytes(ci.bytes, b, sizeof b));
    printf("  cap                %s (CLS_CACHE_MAX)\n",
           info_human_bytes(ci.max_bytes, b, sizeof b));
  }
  cls_context_destroy(ctx);

  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/clstream-info-cache.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("clstream-info: mkdtemp");
    return 1;
  }
  char options[64];
  snprintf(options, sizeof options, "-DCLS_INFO_PROBE=%ld%ld", (long)getpid(), (long)time(NULL));
  struct cls_cache_info cold = {0}, vendor = {0}, warm = {0};
  double t_cold = timed_build(dir, options, &cold);
  const char *was = getenv("CLS_CACHE");
  char *saved = was ? strdup(was) : NULL;
  setenv("CLS_CACHE", "off", 1);
  double t_vendor = t_cold >= 0 ? timed_build(dir, options, &vendor) : -1;
  if (saved)
    setenv("CLS_CACHE", saved, 1);
  else
    unsetenv("CLS_CACHE");
  free(saved);
  double t_warm = t_vendor >= 0 ? timed_build(dir, options, &warm) : -1;
  remove_dir(dir);
  if (t_warm < 0)
    return 1;
  if (!cold.enabled) {
    printf("\n  cold build         %.1f ms (the cache is off: nothing to compare)\n", t_cold);
    return 0;
  }
  printf("\ncold and warm build of a small program (new contexts, in %s, removed after):\n",
         dir);
  printf("  cold               %8.1f ms  compiled from source%s\n", t_cold,
         cold.stores ? ", stored" : ", not stored (the vendor gives no binary)");
  printf("  vendor cache only  %8.1f ms  CLS_CACHE=off: what the vendor keeps itself\n",
         t_vendor);
  printf("  warm               %8.1f ms  %s\n", t_warm,
         warm.hits ? "loaded from the cache"
                   : "compiled from source (the vendor does not load stored binaries)");
  if (warm.hits && t_warm > 0)
    printf("  cold / warm        %8.1fx\n", t_cold / t_warm);
  return 0;
}
