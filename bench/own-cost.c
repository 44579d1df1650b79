/* own-cost: clstream's own cost per launch and per skipped launch, with no
 * OpenCL work behind it (the null stream factory).  N launches of a
 * 3-argument kernel (two reads, one write) alternate between two streams
 * through the public API, then N launches reading a tainted buffer are
 * skipped while those launches are still logged (F8: a skip then keeps
 * the bookkeeping argument order needs), then, after cls_sync(), N more
 * are skipped with nothing in flight.  Under callgrind (make
 * bench-own-cost) each phase is dumped on
 * its own, so instructions per launch are exact and repeatable; heap
 * allocations in each phase are counted either way.
 *
 *   bench/own-cost [--launches N] [--driver NAME] */
#include "config.h"

#include <clstream.h>
#include <clstream/stream.h>

#include "bench.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_VALGRIND_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s)
#endif

#define CHECK(call)                                                                \
  do {                                                                             \
    int rc_ = (call);                                                              \
    if (rc_ < 0) {                                                                 \
      fprintf(stderr, "own-cost: %s: %s: %s\n", #call, cls_err_name(rc_),          \
              cls_last_error_detail());                                            \
      return 2;                                                                    \
    }                                                                              \
  } while (0)

static const char *SRC =
    "kernel void k3(global const int *a, global const int *b, global int *c) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

/* n launches refused by F2 (each reads `skip`'s tainted buffer), timed
 * and counted, then dumped as callgrind phase `phase`.  0, or 2 when one
 * was not skipped. */
static int skips(cls_context *ctx, cls_kernel *k, const size_t *g, const cls_arg *skip, int n,
                 const char *phase, double *secs, unsigned long *allocs) {
  bench_count_start();
  double t = bench_now();
  for (int i = 0; i < n; i++)
    if (cls_launch(ctx, 0, k, 1, g, NULL, 3, skip) != CLS_ESKIPPED)
      return fprintf(stderr, "own-cost: not skipped\n"), 2;
  *secs = bench_now() - t;
  *allocs = bench_count_stop();
  CALLGRIND_DUMP_STATS_AT(phase);
  return 0;
}

int main(int argc, char **argv) {
  int n = 100000;
  const char *driver = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
      n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--driver") == 0 && i + 1 < argc)
      driver = argv[++i];
    else {
      fprintf(stderr, "usage: own-cost [--launches N] [--driver NAME]\n");
      return 2;
    }
  }
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = driver,
                                  .factory = cls_null_stream_factory()};
  cls_context *ctx;
  cls_program *p;
  cls_kernel *k;
  CHECK(cls_context_create(&ctx, &o));
  CHECK(cls_program_build(ctx, SRC, NULL, &p));
  CHECK(cls_kernel_get(ctx, p, "k3", &k));
  cls_buffer a[2], c[2], b, tainted;
  int zero = 0;
  const size_t bytes = 64 * sizeof(int);
  for (int s = 0; s < 2; s++) {
    CHECK(cls_alloc(ctx, s, bytes, &a[s]));
    CHECK(cls_alloc(ctx, s, bytes, &c[s]));
    CHECK(cls_fill(ctx, s, a[s], 0, bytes, &zero, sizeof zero));
  }
  CHECK(cls_alloc(ctx, 0, bytes, &b));
  CHECK(cls_fill(ctx, 0, b, 0, bytes, &zero, sizeof zero));
  CHECK(cls_alloc(ctx, 0, bytes, &tainted)); /* never written: tainted */
  size_t g = 64;
  cls_arg args[2][3] = {{CLS_IN(a[0]), CLS_IN(b), CLS_OUT(c[0])},
                        {CLS_IN(a[1]), CLS_IN(b), CLS_OUT(c[1])}};
  cls_arg skip[3] = {CLS_IN(tainted), CLS_IN(b), CLS_OUT(c[0])};

  /* Warm-up: pools and logs reach their steady size. */
  for (int i = 0; i < 4096; i++) {
    CHECK(cls_launch(ctx, i & 1, k, 1, &g, NULL, 3, args[i & 1]));
    if (cls_launch(ctx, 0, k, 1, &g, NULL, 3, skip) != CLS_ESKIPPED)
      return fprintf(stderr, "own-cost: not skipped\n"), 2;
  }

  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
  bench_count_start();
  double t = bench_now();
  for (int i = 0; i < n; i++)
    CHECK(cls_launch(ctx, i & 1, k, 1, &g, NULL, 3, args[i & 1]));
  double tl = bench_now() - t;
  unsigned long al = bench_count_stop();
  CALLGRIND_DUMP_STATS_AT("launches");

  double ts, ti;
  unsigned long as, ai;
  if (skips(ctx, k, &g, skip, n, "skips", &ts, &as))
    return 2;
  CHECK(cls_sync(ctx, NULL)); /* the log empties: nothing in flight */
  CALLGRIND_ZERO_STATS;
  if (skips(ctx, k, &g, skip, n, "idle-skips", &ti, &ai))
    return 2;
  /* Capture and replay: the same launches captured once (100 of them),
   * replayed n / 100 times; instructions per replayed launch. */
  CALLGRIND_STOP_INSTRUMENTATION;
  CHECK(cls_sync(ctx, NULL));
  cls_capture *cap;
  CHECK(cls_capture_begin(ctx));
  for (int i = 0; i < 100; i++)
    CHECK(cls_launch(ctx, i & 1, k, 1, &g, NULL, 3, args[i & 1]));
  CHECK(cls_capture_end(ctx, &cap));
  for (int i = 0; i < 41; i++)
    CHECK(cls_replay(ctx, cap, 0, NULL));
  int nr = n / 100;
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
  bench_count_start();
  t = bench_now();
  for (int i = 0; i < nr; i++)
    CHECK(cls_replay(ctx, cap, 0, NULL));
  double tr = bench_now() - t;
  unsigned long ar = bench_count_stop();
  CALLGRIND_DUMP_STATS_AT("replays");
  CALLGRIND_STOP_INSTRUMENTATION;
  cls_capture_destroy(cap);

  printf("driver %s, null stream factory, %d launches and %d skipped launches\n",
         cls_context_driver(ctx), n, n);
  printf("launch: %8.1f ns  %.3f heap allocations per launch\n", tl / n * 1e9, (double)al / n);
  printf("skip:   %8.1f ns  %.3f heap allocations per skipped launch\n", ts / n * 1e9,
         (double)as / n);
  printf("idle:   %8.1f ns  %.3f heap allocations per skipped launch, nothing in flight\n",
         ti / n * 1e9, (double)ai / n);
  printf("replay: %8.1f ns  %.3f heap allocations per replayed launch\n", tr / (nr * 100.0) * 1e9,
         (double)ar / (nr * 100.0));
  cls_context_destroy(ctx);
  return 0;
}
