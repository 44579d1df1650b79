/* clstream-bench: each workload written twice, once as plain hand-written
 * OpenCL doing the same commands and once through clstream, run in pairs
 * after a warm-up (raw then clstream, then clstream then raw, so that
 * neither side is always second), and compared by their medians in the
 * same run.  Times drift on a shared machine, and both sides of a pair see
 * the same drift: each pair's ratio, their median, and a 95 % interval for
 * that median (order statistics, no assumption on the distribution) say
 * whether a target is met, missed, or not told apart from it by this run.
 *
 * Each workload runs through two clstream contexts against the same raw
 * runs, one per attribution mode (F8a): ranged (precise = -1: ranged where
 * the device allows it) and exact (precise = 1), a row each; a round times
 * all three, raw first or last, the two contexts swapping places every
 * other round.  Their
 * "attribution" column is the mode the context reports in force, and
 * "ev/launch" the OpenCL events its factory asked for in the measured runs
 * (cls_stream_events deltas) per launch.  Streams that share a backend
 * queue each report the queue's count: under scheduler:interleave (one
 * queue for all) the bench takes the largest stream's delta instead of the
 * sum; a sequential scheduler with queues=M would be counted more than
 * once.
 *
 *   bench/clstream-bench [--reps N] [--drivers LIST] [--workloads LIST]
 *                        [--json FILE] [--quick] [--callgrind]
 *
 * --callgrind (under valgrind --tool=callgrind, bench/host-cost.sh): one
 * warm-up and one measured run of each side, each measured run dumped on
 * its own ("host <workload> <driver> raw|ranged|exact <launches>"), so that the
 * instructions the host thread spends per launch can be compared: a count
 * that this noisy machine cannot blur.
 *
 * Workloads:
 *   tiny-chain  10,000 launches of a tiny kernel (global 64) on one stream
 *   saxpy       20 launches of saxpy over 2^24 floats (memory bound, GB/s)
 *   ping-pong   2,000 pairs of launches alternating between two streams,
 *               each reading the other's last output
 *   fan         one producer, four consumer streams, one reducer reading
 *               all four; 500 times
 *   tiny-chain-replay, ping-pong-replay, fan-replay
 *               tiny-chain, ping-pong and fan captured once (100, 100 and
 *               50 iterations) and replayed with cls_replay (issue 34),
 *               against raw OpenCL's one enqueue per command, and (a "raw
 *               cb" row of the same rounds) raw cl_khr_command_buffer code
 *               where the device has it
 *   stencil-100 one step of a 3-point stencil over 64 Ki floats (there and
 *               back: two launches) captured once and replayed 100 times,
 *               against raw's 200 enqueues and raw command buffers
 *   tiny-chain-args, ping-pong-args, fan-args
 *               the same three with kernels taking what real kernels take:
 *               two buffers (the reducer five), an int size and a float
 *               time step that changes every launch.  Raw OpenCL sets the
 *               time step before every launch (buffers and size once);
 *               clstream gives every argument at every launch.  Each peer
 *               built in (peer.h: Boost.Compute, peer-boost.cpp) runs them
 *               too in the same rounds, a row each ("peer boost"), and each
 *               clstream row notes its ratio to the best peer.
 *   skip-chain  a failed launch, then 10,000 launches depending on it: cost
 *               per skipped launch and OpenCL calls made for them (no raw
 *               counterpart)
 *   guard       tiny-chain and fan again in guard mode (CLS_GUARD): what
 *               the checker costs, rows without a target
 *   image-blur  50 launches of a 3x3 blur on two 512 x 512 image2d_t
 *               objects (CL_R, CL_FLOAT), ping-ponging on one stream
 *   real        the corpus of real-idiom programs (tests/real/, the same
 *               code tests/test-real runs): each program's raw OpenCL
 *               against its clstream port, inputs, outputs and frees
 *               included; a row for the whole corpus, then one per program
 *               (--workloads real/bfs: that program's row only)
 * Then a calibration, raw OpenCL only: tiny-chain against itself with one
 * thing a layer adds (an argument set per launch, an event per launch,
 * events kept until polled), to say what those cost on the device, and the
 * fan against itself on one queue (what the interleave strategy does).
 *
 * At the end, the launch-bound targets: each clstream row of tiny-chain,
 * ping-pong, fan and the *-args workloads against its target, and the
 * *-args rows against the best peer too.
 *
 * This file: the options and the run loop.  The raw side is raw.c, the
 * clstream side workloads.c, the corpus real.c, the counting factory
 * counting.c, the rows and their statistics stats.c, the peers peer-*.cpp; what they
 * share is common.h (the kernels, the sizes, die() in common.c). */
#include "config.h"

#include "common.h"

#ifdef HAVE_VALGRIND_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool callgrind; /* --callgrind */

static char workloads[256] =
    "tiny-chain,saxpy,ping-pong,fan,tiny-chain-args,ping-pong-args,fan-args,tiny-chain-replay,"
    "ping-pong-replay,fan-replay,stencil-100,image-blur,allocs,skip-chain,guard,real,calibration";

/* Whether --workloads names w (a whole item of the comma list). */
static bool wanted(const char *w) {
  size_t n = strlen(w);
  for (const char *p = workloads; (p = strstr(p, w)) != NULL; p += n)
    if ((p == workloads || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

/* "real" times the whole corpus and each program; "real/NAME" one
 * program (the rows' names, set by main).  i < 0: whether any is wanted. */
static char real_names[REAL_COUNT][32];
static bool real_wanted(int i) {
  if (wanted("real"))
    return true;
  for (int k = i < 0 ? 0 : i; k < (i < 0 ? REAL_COUNT : i + 1); k++)
    if (wanted(real_names[k]))
      return true;
  return false;
}

typedef double (*raw_fn)(struct raw *);
typedef double (*lib_fn)(struct lib *);

/* One measured run of fn, dumped as "host <name> <driver> <side> <launches>". */
#define DUMPED(side, call)                                                          \
  do {                                                                              \
    char label_[160];                                                               \
    snprintf(label_, sizeof label_, "host %s %s %s %d", name, driver, side, launches); \
    CALLGRIND_ZERO_STATS;                                                           \
    (void)(call);                                                                   \
    CALLGRIND_DUMP_STATS_AT(label_);                                                \
  } while (0)

/* A peer's side of one workload (peer.h): its run function and state. */
struct side {
  const char *name, *label, *version; /* "boost", "peer boost", ... */
  double (*fn)(void *);
  void *state;
};

#define MAX_SIDES 4 /* two clstream contexts, two peers */

/* The raw side against each of ls[0..nl) (one context per attribution
 * mode) and each peer ps[0..np), a row each, every round timing every
 * side once.  Each clstream row also gets the rounds' clstream / peer
 * ratios against the best peer (the lowest paired ratio to raw). */
static void compare_with(const char *name, const char *driver, struct raw *r, raw_fn rf,
                         struct lib *const *ls, int nl, lib_fn lf, const struct side *ps, int np,
                         double bytes, int launches) {
  double tr[MAX_REPS], tl[MAX_SIDES][MAX_REPS];
  uint64_t ev0[2];
  if (nl + np > MAX_SIDES)
    die("compare: %d sides", nl + np);
  rf(r); /* warm-up, every side */
  for (int k = 0; k < nl; k++)
    lf(ls[k]);
  for (int k = 0; k < np; k++)
    ps[k].fn(ps[k].state);
  if (callgrind) {
    DUMPED("raw", rf(r));
    for (int k = 0; k < nl; k++)
      DUMPED(ls[k]->attribution, lf(ls[k]));
    for (int k = 0; k < np; k++)
      DUMPED(ps[k].name, ps[k].fn(ps[k].state));
    printf("%-15s %-22s dumped for callgrind (%d launches a run)\n", name, driver, launches);
    return;
  }
  for (int k = 0; k < nl; k++)
    ev0[k] = lib_events(ls[k]);
  for (int i = 0; i < reps; i++) {
    /* Raw first in even rounds, last in odd ones; the other sides
     * (clstream's, then the peers) reverse their order every other round
     * too, so that none is always next to raw. */
    bool forward = i % 4 == 0 || i % 4 == 3;
    if (i % 2 == 0)
      tr[i] = rf(r);
    for (int j = 0; j < nl + np; j++) {
      int k = forward ? j : nl + np - 1 - j;
      tl[k][i] = k < nl ? lf(ls[k]) : ps[k - nl].fn(ps[k - nl].state);
    }
    if (i % 2 == 1)
      tr[i] = rf(r);
  }
  /* The peers' figures first (their rows are printed after clstream's):
   * the clstream rows compare with the best. */
  struct row peer_rows[MAX_SIDES];
  int best = -1;
  for (int k = 0; k < np; k++) {
    double trk[MAX_REPS], tp[MAX_REPS]; /* pair_stats sorts what it is given */
    memcpy(trk, tr, sizeof trk);
    memcpy(tp, tl[nl + k], sizeof tp);
    pair_stats(&peer_rows[k], trk, tp);
    if (best < 0 || peer_rows[k].paired < peer_rows[best].paired)
      best = k;
  }
  for (int k = 0; k < nl; k++) {
    double trk[MAX_REPS]; /* add_row sorts what it is given */
    memcpy(trk, tr, sizeof trk);
    double vs[MAX_REPS];
    if (best >= 0)
      for (int i = 0; i < reps; i++)
        vs[i] = tl[k][i] / tl[nl + best][i];
    struct row *row = add_row(name, driver, "workload", trk, tl[k]);
    row->target = target_of(name);
    row->attribution = ls[k]->attribution;
    row->events = (double)(lib_events(ls[k]) - ev0[k]) / ((double)reps * launches);
    if (best >= 0) {
      row->peer = ps[best].name;
      row->vs_peer = bench_median_ci(vs, reps, &row->vs_lo, &row->vs_hi);
      snprintf(row->note, sizeof row->note, "vs %s %.3f [%.3f,%.3f]", row->peer, row->vs_peer,
               row->vs_lo, row->vs_hi);
    }
    if (bytes > 0)
      snprintf(row->note, sizeof row->note,
               "raw %.1f GB/s, clstream %.1f GB/s (throughput %.3fx)", bytes / row->raw / 1e9,
               bytes / row->lib / 1e9, row->raw / row->lib);
    print_row(row);
  }
  for (int k = 0; k < np; k++) {
    /* The driver column names the peer; the note, the rounds it shared. */
    struct row *row = new_row(name, ps[k].label, "peer");
    row->rounds = driver;
    row->raw = peer_rows[k].raw, row->lib = peer_rows[k].lib, row->ratio = peer_rows[k].ratio;
    row->paired = peer_rows[k].paired, row->lo = peer_rows[k].lo, row->hi = peer_rows[k].hi;
    snprintf(row->note, sizeof row->note, "%s, in the %s rounds", ps[k].version, driver);
    print_row(row);
  }
}

/* The peers built in (peer.h), and their rows' driver column. */
#define MAX_PEERS 2
static struct peer peers[MAX_PEERS];
static int npeers;
static char peer_labels[MAX_PEERS][32];

enum args_workload { TINY_ARGS, PP_ARGS, FAN_ARGS };

/* The peers' sides of one *-args workload: those peers that have it. */
static int peer_sides(enum args_workload w, struct side *out) {
  int n = 0;
  for (int k = 0; k < npeers; k++) {
    const struct peer *p = &peers[k];
    double (*fn)(void *) = w == TINY_ARGS ? p->tiny_args
                           : w == PP_ARGS ? p->pingpong_args
                                          : p->fan_args;
    if (fn)
      out[n++] = (struct side){p->name, peer_labels[k], p->version, fn, p->state};
  }
  return n;
}

static void compare(const char *name, const char *driver, struct raw *r, raw_fn rf,
                    struct lib *const *ls, int nl, lib_fn lf, double bytes, int launches) {
  compare_with(name, driver, r, rf, ls, nl, lf, NULL, 0, bytes, launches);
}

/* A raw workload against a raw variant of it, in pairs as compare() does
 * (the "clstream" column holds the variant). */
static void calibrate(const char *name, struct raw *r, raw_fn base, raw_fn variant,
                      const char *what) {
  double tr[MAX_REPS], tv[MAX_REPS];
  base(r);
  variant(r);
  for (int i = 0; i < reps; i++) {
    if (i % 2 == 0) {
      tr[i] = base(r);
      tv[i] = variant(r);
    } else {
      tv[i] = variant(r);
      tr[i] = base(r);
    }
  }
  struct row *row = add_row(name, "raw only", "calibration", tr, tv);
  snprintf(row->note, sizeof row->note, "%s", what);
  print_row(row);
}

static void skip_chain(const char *driver) {
  struct lib l;
  lib_init(&l, driver, "enqueue:kernel=failk", -1);
  cls_buffer X, Y;
  CLS(cls_alloc(l.ctx, 0, SMALL * sizeof(int), &X));
  CLS(cls_alloc(l.ctx, 0, SMALL * sizeof(int), &Y));
  cls_arg f[] = {CLS_IN(l.A), CLS_OUT(X)};
  int rc = cls_launch(l.ctx, 0, l.failk, 1, &small_g, NULL, 2, f);
  if (rc != CLS_ELAUNCH && rc != CLS_OK)
    die("failk: %s", cls_err_name(rc));
  CLS(cls_sync(l.ctx, NULL)); /* the scheduler finds it at submission */
  cls_arg s[] = {CLS_IN(X), CLS_OUT(Y)};
  double times[MAX_REPS];
  unsigned long calls = 0, allocs = 0;
  uint64_t ev0 = 0;
  for (int i = 0; i <= reps; i++) {
    if (i == 1)
      ev0 = lib_events(&l);
    unsigned long before = factory_calls;
    bench_count_start();
    double t = bench_now();
    for (int k = 0; k < SKIP_N; k++)
      if (cls_launch(l.ctx, 0, l.step, 1, &small_g, NULL, 2, s) != CLS_ESKIPPED)
        die("a launch on tainted input was not skipped");
    double dt = bench_now() - t;
    unsigned long a = bench_count_stop();
    if (i > 0) { /* the first round warms up */
      times[i - 1] = dt;
      calls += factory_calls - before;
      allocs += a;
    }
  }
  struct row *row = new_row("skip-chain", driver, "skip");
  row->lib = bench_median(times, reps);
  row->attribution = l.attribution;
  row->events = (double)(lib_events(&l) - ev0) / ((double)reps * SKIP_N);
  snprintf(row->note, sizeof row->note,
           "%.3f us per skipped launch, %lu OpenCL calls, %lu allocations for %d skips",
           row->lib / SKIP_N * 1e6, calls, allocs, reps * SKIP_N);
  char ev[32];
  printf("%-15s %-22s %-6s %9s %9.2f %6s %6s %-13s %-13s %9s %s\n", "skip-chain", driver,
         attrib_col(row), "-", row->lib * 1e3, "-", "-", "-", "-", events_col(row, ev, sizeof ev),
         row->note);
  cls_context_destroy(l.ctx);
}

/* Allocations per launch in steady state, tiny-chain on each side. */
static void allocations(const char *driver, struct raw *r, struct lib *l) {
  bench_count_start();
  raw_tiny(r);
  unsigned long ar = bench_count_stop();
  bench_count_start();
  lib_tiny(l);
  unsigned long al = bench_count_stop();
  struct row *row = new_row("allocs", driver, "allocs");
  row->attribution = l->attribution;
  row->raw = (double)ar / TINY_N;
  row->lib = (double)al / TINY_N;
  snprintf(row->note, sizeof row->note,
           "heap allocations per tiny launch: raw %.2f, clstream %.2f (the OpenCL runtime's "
           "included)",
           row->raw, row->lib);
  printf("%-15s %-22s %-6s %9.2f %9.2f %6s %6s %-13s %-13s %9s %s\n", "allocs", driver,
         attrib_col(row), row->raw, row->lib, "-", "-", "-", "-", "-",
         "per launch, all heap allocations in the process");
}

int main(int argc, char **argv) {
  const char *json = NULL;
  char drivers_buf[256] = "event,scheduler:sequential,scheduler:interleave";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
    else if (strcmp(argv[i], "--drivers") == 0 && i + 1 < argc)
      snprintf(drivers_buf, sizeof drivers_buf, "%s", argv[++i]);
    else if (strcmp(argv[i], "--callgrind") == 0)
      callgrind = true;
    else if (strcmp(argv[i], "--workloads") == 0 && i + 1 < argc)
      snprintf(workloads, sizeof workloads, "%s", argv[++i]);
    else if (strcmp(argv[i], "--quick") == 0) {
      real_quick = true;
      TINY_N = 1000, SAXPY_REPS = 4, PP_N = 200, FAN_N = 50, SKIP_N = 1000;
      SAXPY_LEN = (size_t)1 << 20;
      IMAGE_REPS = 20, IMAGE_SIDE = 256;
    } else {
      fprintf(stderr,
              "usage: clstream-bench [--reps N] [--drivers event,scheduler:interleave,...]\n"
              "                      [--workloads tiny-chain,saxpy,ping-pong,fan,"
              "tiny-chain-args,\n"
              "                       ping-pong-args,fan-args,tiny-chain-replay,ping-pong-replay,\n"
              "                       fan-replay,stencil-100,image-blur,allocs,skip-chain,guard,"
              "real,calibration]\n"
              "                      [--json FILE] [--quick] [--callgrind]\n");
      return 2;
    }
  }
  if (reps < 5 || reps > MAX_REPS)
    die("--reps must be 5..%d", MAX_REPS);
  inner = cls_opencl_stream_factory();
  struct cls_device_info dev;
  CLS(cls_device_select(getenv("CLS_DEVICE"), &dev));
  printf("clstream %s on %s (%s); %d pairs of runs after a warm-up\n"
         "ratio: median clstream / median raw; paired: median of the pairs' ratios, with its 95%% "
         "interval;\ntarget: met when the interval is under it, missed when above, else unclear\n\n",
         cls_version_string(), dev.device_name, dev.platform_name, reps);
  struct raw r;
  raw_init(&r);
  for (int i = 0; i < REAL_COUNT; i++) /* the rows' names */
    snprintf(real_names[i], sizeof real_names[i], "real/%s", real_corpus[i]->name);
  if (real_wanted(-1))
    real_raw_setup(&r);
  /* The peers, on raw's device and context (peer.h). */
  bool args = wanted("tiny-chain-args") || wanted("ping-pong-args") || wanted("fan-args");
  struct peer_setup setup = {.context = r.c, .device = r.d, .source = SRC, .global = small_g,
                             .tiny_n = TINY_N, .pp_n = PP_N, .fan_n = FAN_N};
#ifdef HAVE_BOOST_COMPUTE
  if (args) {
    peer_boost_init(&setup, &peers[npeers]);
    printf("# peer boost: %s, on the raw side's device and context\n", peers[npeers].version);
    npeers++;
  }
#else
  (void)setup;
  if (args)
    printf("# peer boost: not built (configure found no C++ compiler or no boost/compute/core.hpp;"
           " Debian: libboost-dev)\n");
#endif
  for (int k = 0; k < npeers; k++)
    snprintf(peer_labels[k], sizeof peer_labels[k], "peer %s", peers[k].name);
  static struct side tiny_sides[MAX_PEERS], pp_sides[MAX_PEERS], fan_sides[MAX_PEERS];
  int ntiny_sides = peer_sides(TINY_ARGS, tiny_sides), npp_sides = peer_sides(PP_ARGS, pp_sides),
      nfan_sides = peer_sides(FAN_ARGS, fan_sides);
  bool have_cb = raw_cb_init(&r);
  printf("# raw cb: %s\n", have_cb ? "cl_khr_command_buffer rows on the *-replay workloads"
                                    : "the device has no cl_khr_command_buffer (with "
                                      "simultaneous use): no raw cb rows");
  print_header();
  bool images = wanted("image-blur") && image_ok(&r);
  if (images)
    raw_image_setup(&r);
  double saxpy_bytes = (double)SAXPY_REPS * 3.0 * sizeof(float) * (double)SAXPY_LEN;
  char *save = NULL;
  for (char *d = strtok_r(drivers_buf, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
    /* strtok_r's pieces live in drivers_buf for the whole run. */
    /* One context per attribution mode, measured against the same raw runs. */
    struct lib lr, le, *ls[2] = {&lr, &le};
    lib_init(&lr, d, NULL, -1);
    lib_init(&le, d, NULL, 1);
    for (int k = 0; k < 2; k++) {
      const char *why = NULL;
      unsigned every = 0;
      int mode;
      CLS(cls_context_attribution(ls[k]->ctx, &mode, &why, &every));
      printf("# %s, precise=%d: %s (every %u)\n", d, k ? 1 : -1, why, every);
    }
    if (wanted("tiny-chain"))
      compare("tiny-chain", d, &r, raw_tiny, ls, 2, lib_tiny, 0, TINY_N);
    if (wanted("saxpy"))
      compare("saxpy", d, &r, raw_saxpy, ls, 2, lib_saxpy, saxpy_bytes, SAXPY_REPS);
    if (wanted("ping-pong"))
      compare("ping-pong", d, &r, raw_pingpong, ls, 2, lib_pingpong, 0, 2 * PP_N);
    if (wanted("fan"))
      compare("fan", d, &r, raw_fan, ls, 2, lib_fan, 0, 6 * FAN_N);
    if (wanted("tiny-chain-args"))
      compare_with("tiny-chain-args", d, &r, raw_tiny_args, ls, 2, lib_tiny_args, tiny_sides,
                   ntiny_sides, 0, TINY_N);
    if (wanted("ping-pong-args"))
      compare_with("ping-pong-args", d, &r, raw_pingpong_args, ls, 2, lib_pingpong_args,
                   pp_sides, npp_sides, 0, 2 * PP_N);
    if (wanted("fan-args"))
      compare_with("fan-args", d, &r, raw_fan_args, ls, 2, lib_fan_args, fan_sides,
                   nfan_sides, 0, 6 * FAN_N);
    /* Captured once, replayed: against raw's one enqueue per command. */
    /* Where the device has cl_khr_command_buffer, raw command buffers
     * are a side of the same rounds (a "peer" row, label "raw cb"). */
    struct side cbs[4] = {{"raw-cb", "raw cb", "cl_khr_command_buffer", raw_cb_tiny, &r},
                          {"raw-cb", "raw cb", "cl_khr_command_buffer", raw_cb_pingpong, &r},
                          {"raw-cb", "raw cb", "cl_khr_command_buffer", raw_cb_fan, &r},
                          {"raw-cb", "raw cb", "cl_khr_command_buffer", raw_cb_stencil, &r}};
    int ncb = have_cb ? 1 : 0;
    if (wanted("tiny-chain-replay"))
      compare_with("tiny-chain-replay", d, &r, raw_tiny, ls, 2, lib_tiny_replay, &cbs[0], ncb, 0,
                   TINY_N);
    if (wanted("ping-pong-replay"))
      compare_with("ping-pong-replay", d, &r, raw_pingpong, ls, 2, lib_pingpong_replay, &cbs[1],
                   ncb, 0, 2 * PP_N);
    if (wanted("fan-replay"))
      compare_with("fan-replay", d, &r, raw_fan, ls, 2, lib_fan_replay, &cbs[2], ncb, 0,
                   6 * FAN_N);
    if (wanted("stencil-100"))
      compare_with("stencil-100", d, &r, raw_stencil, ls, 2, lib_stencil_replay, &cbs[3], ncb, 0,
                   2 * STENCIL_N);
    static const char *const replayed[] = {"tiny-chain-replay", "ping-pong-replay", "fan-replay",
                                           "stencil-100"};
    for (size_t w = 0; w < 4; w++)
      if (wanted(replayed[w]))
        printf("# %s, %s: captures replay on %s / %s (ranged / exact; CLS_CAPTURE=%s)\n",
               replayed[w], d, lib_capture_backend(&lr, replayed[w]),
               lib_capture_backend(&le, replayed[w]),
               getenv("CLS_CAPTURE") ? getenv("CLS_CAPTURE") : "auto");
    if (images) {
      lib_image_setup(&lr);
      lib_image_setup(&le);
      compare("image-blur", d, &r, raw_image_blur, ls, 2, lib_image_blur, 0, IMAGE_REPS);
    }
    if (real_wanted(-1)) {
      for (int k = 0; k < 2; k++) {
        real_lib_setup(ls[k]);
        real_verify(&r, ls[k]);
      }
      for (int i = -1; i < REAL_COUNT; i++) {
        if (i >= 0 ? !real_wanted(i) : !wanted("real"))
          continue;
        real_only = i;
        unsigned before = real_launches;
        lib_real(ls[0]);
        int launches = (int)(real_launches - before);
        compare(i < 0 ? "real" : real_names[i], d, &r, raw_real, ls, 2, lib_real, 0, launches);
      }
      real_only = -1;
    }
    if (wanted("allocs"))
      for (int k = 0; k < 2; k++)
        allocations(d, &r, ls[k]);
    cls_capture_destroy(lr.cap_tiny), cls_capture_destroy(lr.cap_pp);
    cls_capture_destroy(lr.cap_fan), cls_capture_destroy(le.cap_tiny);
    cls_capture_destroy(le.cap_pp), cls_capture_destroy(le.cap_fan);
    cls_context_destroy(lr.ctx);
    cls_context_destroy(le.ctx);
    if (wanted("skip-chain"))
      skip_chain(d);
    if (wanted("guard")) {
      /* What guard mode costs: rows without a target. */
      struct lib gl, *gls[1] = {&gl};
      lib_guard = 1;
      lib_init(&gl, d, NULL, -1); /* guard mode is exact whatever precise says */
      lib_guard = -1;
      compare("tiny+guard", d, &r, raw_tiny, gls, 1, lib_tiny, 0, TINY_N);
      compare("fan+guard", d, &r, raw_fan, gls, 1, lib_fan, 0, 6 * FAN_N);
      cls_context_destroy(gl.ctx);
    }
  }
  if (wanted("calibration")) {
    printf("\ncalibration: raw OpenCL against raw variants of it (second column: the "
           "variant)\n");
    calibrate("tiny+arg", &r, raw_tiny, raw_tiny_setarg, "clSetKernelArg before every launch");
    calibrate("tiny+event", &r, raw_tiny, raw_tiny_event, "an event per launch, released at once");
    calibrate("tiny+ring", &r, raw_tiny, raw_tiny_ring,
              "an event per launch, kept until its status is read (the opencl factory's way)");
    calibrate("fan/1queue", &r, raw_fan, raw_fan_one_queue,
              "the fan on one in-order queue (what scheduler:interleave does)");
    calibrate("fan+status", &r, raw_fan, raw_fan_status,
              "the status of each event read before a command waits on it");
    calibrate("fan+poll", &r, raw_fan, raw_fan_poll,
              "each queue read from its oldest unfinished event before a wait on it");
  }
  if (!callgrind)
    print_targets();
  if (json)
    write_json(json, &dev);
  return 0;
}
