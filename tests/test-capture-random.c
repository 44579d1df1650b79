/* Capture and replay, differential and randomized: a random program of
 * launches, copies and fills over several streams and buffers, run
 * uncaptured K times on one buffer set and captured once and replayed K
 * times on another of the same initial bytes, must leave every buffer
 * byte for byte the same and count the same enqueues and launches per
 * stream.  The replays' plan runs may span several streams (docs/capture.md
 * "Runs over several streams"), ordered among themselves by events planned
 * at capture: a missing wait gives wrong bytes only sometimes, so the
 * kernels do not commute and some work thousands of steps before they
 * read and write.
 *
 * Seeds: a fixed list; CLS_TEST_SEED=N runs seed N alone.  A failure names
 * its seed, variant and driver.  CLS_TEST_QUICK: two seeds a variant, and
 * the slow kernels 50 times shorter. */
#include "common.h"

#include <inttypes.h>

#define N 256
#define NB (N * sizeof(int))
#define MAXBUF 8
#define MAXSTREAMS 6
#define MAXCMDS 200

static const char SRC[] =
    "kernel void k_out2(global const int *a, global const int *b, global int *o, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  o[i] = (int)((uint)a[i] * 3u + (uint)b[i] + (uint)c);\n"
    "}\n"
    "kernel void k_acc(global int *x, global const int *a, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = (int)((uint)x[i] * 2u + (uint)a[i] + (uint)c);\n"
    "}\n"
    "kernel void k_self(global int *x, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = (int)((uint)x[i] * 5u + (uint)c + (uint)i);\n"
    "}\n"
    "kernel void k_two(global const int *a, global int *x, global int *y, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint v = (uint)x[i] * 7u + (uint)a[i] + (uint)c;\n"
    "  x[i] = (int)v;\n"
    "  y[i] = (int)((uint)y[i] * 3u - v);\n"
    "}\n"
    /* The slow ones work `iters` steps before they read and write. */
    "kernel void k_slow(global const int *a, global int *o, int iters, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint acc = (uint)i + (uint)c;\n"
    "  for (int k = 0; k < iters; k++)\n"
    "    acc = acc * 1664525u + 1013904223u;\n"
    "  o[i] = (int)(acc ^ ((uint)a[i] * 9u));\n"
    "}\n"
    "kernel void k_slowx(global int *x, int iters, int c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint acc = (uint)i ^ (uint)c;\n"
    "  for (int k = 0; k < iters; k++)\n"
    "    acc = acc * 22695477u + 1u;\n"
    "  x[i] = (int)((uint)x[i] * 3u + acc);\n"
    "}\n";

enum { A_IN = 1, A_OUT = 2, A_INOUT = 3 };
static const struct {
  const char *name;
  int nb;
  unsigned char acc[3];
  bool slow;
} KS[] = {
    {"k_out2", 3, {A_IN, A_IN, A_OUT}, false}, {"k_acc", 2, {A_INOUT, A_IN}, false},
    {"k_self", 1, {A_INOUT}, false},           {"k_two", 3, {A_IN, A_INOUT, A_INOUT}, false},
    {"k_slow", 2, {A_IN, A_OUT}, true},        {"k_slowx", 1, {A_INOUT}, true},
};
#define NKS (int)(sizeof KS / sizeof *KS)

enum { C_LAUNCH, C_COPY, C_FILL };
struct rcmd {
  int op, stream;
  int k, b[3], c, iters;
  bool param;            /* its scalar c is the capture's parameter */
  int src, dst;          /* copy */
  size_t so, dof, size;  /* copy: offsets and size; fill: dof, size (bytes) */
  int pattern;
};

struct rprog {
  int nstreams, nbuf, ncmd;
  struct rcmd cmd[MAXCMDS];
  int init[MAXBUF][N];
};

/* ------------------------------------------------------------------ */
/* The generator (splitmix64)                                          */
/* ------------------------------------------------------------------ */

static uint64_t rng;
static uint64_t next64(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int rnd(int lo, int hi) { /* lo..hi inclusive */
  return lo + (int)(next64() % (uint64_t)(hi - lo + 1));
}

static void pick_distinct(int nbuf, int n, int *out) {
  for (int j = 0; j < n; j++) {
    bool dup;
    do {
      out[j] = rnd(0, nbuf - 1);
      dup = false;
      for (int q = 0; q < j; q++)
        dup |= out[q] == out[j];
    } while (dup);
  }
}

static void gen_cmd(struct rprog *p, struct rcmd *c, int prev_stream, bool params) {
  memset(c, 0, sizeof *c);
  /* runs of one stream now and then, else anywhere */
  c->stream = prev_stream >= 0 && rnd(0, 2) == 0 ? prev_stream : rnd(0, p->nstreams - 1);
  int r = rnd(0, 99);
  if (r < 70) {
    c->op = C_LAUNCH;
    c->k = rnd(0, NKS - 1);
    pick_distinct(p->nbuf, KS[c->k].nb, c->b);
    c->c = rnd(-1000, 1000);
    c->iters = rnd(1000, 6000) / ct_scale(1, 50); /* oclgrind: every step simulated */
    c->param = params && rnd(0, 3) == 0;
  } else if (r < 87) {
    c->op = C_COPY;
    int bb[2];
    pick_distinct(p->nbuf, 2, bb);
    c->src = bb[0];
    c->dst = bb[1];
    size_t n = (size_t)rnd(1, N);
    c->size = n * sizeof(int);
    c->so = (size_t)rnd(0, N - (int)n) * sizeof(int);
    c->dof = (size_t)rnd(0, N - (int)n) * sizeof(int);
  } else {
    c->op = C_FILL;
    c->dst = rnd(0, p->nbuf - 1);
    size_t n = (size_t)rnd(1, N);
    c->size = n * sizeof(int);
    c->dof = (size_t)rnd(0, N - (int)n) * sizeof(int);
    c->pattern = (int)next64();
  }
}

static void gen_prog(struct rprog *p, uint64_t seed, bool params) {
  rng = seed * 0x2545f4914f6cdd1dull + 17;
  p->nstreams = rnd(2, MAXSTREAMS);
  p->nbuf = rnd(4, MAXBUF);
  p->ncmd = rnd(20, MAXCMDS);
  for (int b = 0; b < p->nbuf; b++)
    for (int i = 0; i < N; i++)
      p->init[b][i] = (int)next64();
  int prev = -1;
  for (int j = 0; j < p->ncmd; j++) {
    gen_cmd(p, &p->cmd[j], prev, params);
    prev = p->cmd[j].stream;
  }
}

/* Commands in runs of one stream (two or more in a row): what the plan's
 * runs would hold were they never to span streams. */
static size_t single_stream_in_runs(const struct rprog *p, size_t *groups) {
  size_t total = 0;
  *groups = 0;
  int j = 0;
  while (j < p->ncmd) {
    int e = j;
    while (e < p->ncmd && p->cmd[e].stream == p->cmd[j].stream)
      e++;
    if (e - j >= 2) {
      total += (size_t)(e - j);
      ++*groups;
    }
    j = e;
  }
  return total;
}

/* ------------------------------------------------------------------ */
/* Running it                                                          */
/* ------------------------------------------------------------------ */

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *kern[NKS];
static int ndev;
static uint64_t cur_seed;
static const char *cur_variant = "";
static int param_value; /* the captured launches' parameter, by address */

#define RQ(cond, ...)                                                                     \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      char rq_msg_[512];                                                                  \
      snprintf(rq_msg_, sizeof rq_msg_, __VA_ARGS__);                                     \
      fprintf(stderr, "FAIL seed %" PRIu64 " (%s, %s, %d device(s)): %s\n", cur_seed,    \
              cur_variant, cls_context_driver(ctx), ndev, rq_msg_);                       \
      ck_abort_msg("seed %" PRIu64 " (%s, %s, %d device(s)): %s", cur_seed, cur_variant, \
                   cls_context_driver(ctx), ndev, rq_msg_);                               \
    }                                                                                     \
  } while (0)

#define RQ_OK(expr)                                                                       \
  do {                                                                                    \
    int rq_rc_ = (expr);                                                                  \
    RQ(rq_rc_ == 0, "%s returned %s (%d): %s", #expr, cls_err_name(rq_rc_), rq_rc_,       \
       cls_last_error_detail());                                                          \
  } while (0)

/* device: NULL for the default (one device), "all" spread over every one. */
static void open_ctx(const char *device) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = device,
                                  .placement = device ? "spread" : NULL};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
  for (int k = 0; k < NKS; k++)
    kern[k] = ct_get_kernel(ctx, prog, KS[k].name);
  size_t n = 0;
  CT_OK(cls_context_devices(ctx, NULL, 0, &n));
  ndev = (int)n;
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

/* Issues c on bufs; `pv`: the parameter's value now (uncaptured), or the
 * capture marked param_value (captured, pv unused). */
static void issue(const struct rcmd *c, const cls_buffer *bufs, int pv) {
  if (c->op == C_LAUNCH) {
    cls_arg a[6];
    int na = 0;
    for (int j = 0; j < KS[c->k].nb; j++) {
      cls_buffer b = bufs[c->b[j]];
      a[na++] = KS[c->k].acc[j] == A_IN    ? CLS_IN(b)
                : KS[c->k].acc[j] == A_OUT ? CLS_OUT(b)
                                           : CLS_INOUT(b);
    }
    if (KS[c->k].slow)
      a[na++] = CLS_SCALAR(c->iters);
    int cv = c->c;
    if (c->param) {
      param_value = pv;
      a[na++] = CLS_SCALAR(param_value);
    } else {
      a[na++] = CLS_SCALAR(cv);
    }
    size_t g[1] = {N};
    RQ_OK(cls_launch(ctx, c->stream, kern[c->k], 1, g, NULL, (size_t)na, a));
  } else if (c->op == C_COPY) {
    RQ_OK(cls_copy(ctx, c->stream, bufs[c->src], c->so, bufs[c->dst], c->dof, c->size));
  } else {
    RQ_OK(cls_fill(ctx, c->stream, bufs[c->dst], c->dof, c->size, &c->pattern,
                   sizeof c->pattern));
  }
}

static void alloc_set(const struct rprog *p, cls_buffer *bufs) {
  for (int b = 0; b < p->nbuf; b++) {
    bufs[b] = ct_alloc(ctx, b % p->nstreams, NB);
    ct_upload_ints(ctx, b % p->nstreams, bufs[b], p->init[b], N);
  }
  RQ_OK(cls_sync(ctx, NULL));
}

static void free_set(const struct rprog *p, cls_buffer *bufs) {
  for (int b = 0; b < p->nbuf; b++)
    CT_OK(cls_free(ctx, bufs[b]));
}

static void stats_of(struct cls_stream_stats *st) {
  for (int s = 0; s < MAXSTREAMS + 1; s++)
    st[s] = ct_stats(ctx, s);
}

/* Totals over the captures of a case. */
static struct {
  size_t captures, commands, runs, in_runs, single, groups, cb;
} tot;

static int param_of(int r) { return 7 * r - 11; }

/* One seed of one variant.  sync: cls_sync after each iteration and each
 * replay; else no sync, and `between` random uncaptured commands after
 * each (the same on both sets); params: some launches take their scalar
 * from a capture parameter that changes at each replay. */
static void run_seed(uint64_t seed, int K, bool sync, bool params) {
  static struct rprog p;
  gen_prog(&p, seed, params);
  /* The uncaptured commands between iterations: K groups. */
  enum { BETWEEN = 6 };
  static struct rcmd between[16][BETWEEN];
  ck_assert_int_le(K, 16);
  for (int r = 0; r < K; r++)
    for (int j = 0; j < BETWEEN; j++) {
      gen_cmd(&p, &between[r][j], -1, false);
      between[r][j].stream = rnd(0, MAXSTREAMS); /* streams the program may not use too */
    }
  cls_buffer A[MAXBUF], B[MAXBUF];
  struct cls_stream_stats a0[MAXSTREAMS + 1], a1[MAXSTREAMS + 1], b0[MAXSTREAMS + 1],
      b1[MAXSTREAMS + 1];

  /* (a) uncaptured on A */
  alloc_set(&p, A);
  stats_of(a0);
  for (int r = 0; r < K; r++) {
    for (int j = 0; j < p.ncmd; j++)
      issue(&p.cmd[j], A, param_of(r));
    if (sync)
      RQ_OK(cls_sync(ctx, NULL));
    else
      for (int j = 0; j < BETWEEN; j++)
        issue(&between[r][j], A, 0);
  }
  RQ_OK(cls_sync(ctx, NULL));
  stats_of(a1);

  /* (b) captured on B, replayed */
  alloc_set(&p, B);
  cls_capture *cap = NULL;
  RQ_OK(cls_capture_begin(ctx));
  int idx = -1;
  bool any_param = false;
  for (int j = 0; j < p.ncmd; j++)
    any_param |= p.cmd[j].param;
  if (any_param)
    RQ_OK(cls_capture_param(ctx, &param_value, sizeof param_value, &idx));
  for (int j = 0; j < p.ncmd; j++)
    issue(&p.cmd[j], B, 0);
  RQ_OK(cls_capture_end(ctx, &cap));
  stats_of(b0);
  for (int r = 0; r < K; r++) {
    int v = param_of(r);
    cls_param pp = {&v, sizeof v};
    RQ_OK(cls_replay(ctx, cap, any_param ? 1 : 0, any_param ? &pp : NULL));
    if (sync)
      RQ_OK(cls_sync(ctx, NULL));
    else
      for (int j = 0; j < BETWEEN; j++)
        issue(&between[r][j], B, 0);
  }
  RQ_OK(cls_sync(ctx, NULL));
  stats_of(b1);

  struct cls_capture_stats cs;
  RQ_OK(cls_capture_info(cap, &cs));
  tot.captures++;
  tot.commands += cs.commands;
  tot.runs += cs.runs;
  tot.in_runs += cs.in_runs;
  size_t groups = 0;
  tot.single += single_stream_in_runs(&p, &groups);
  tot.groups += groups;
  bool cb = strcmp(cs.backend, "command-buffer") == 0;
  tot.cb += cb;
  RQ(cs.commands == (size_t)p.ncmd, "capture holds %zu commands, %d issued", cs.commands,
     p.ncmd);

  /* The bytes */
  for (int b = 0; b < p.nbuf; b++) {
    int va[N], vb[N];
    ct_download_ints(ctx, 0, A[b], va, N);
    ct_download_ints(ctx, 0, B[b], vb, N);
    if (memcmp(va, vb, sizeof va) != 0) {
      int first = -1, ndiff = 0;
      for (int i = 0; i < N; i++)
        if (va[i] != vb[i]) {
          ndiff++;
          if (first < 0)
            first = i;
        }
      RQ(false,
         "buffer %d of %d: %d of %d ints differ, first [%d] = %d replayed, %d uncaptured "
         "(%d commands, %d streams, K %d, %s backend, %zu runs, %zu in runs)",
         b, p.nbuf, ndiff, N, first, vb[first], va[first], p.ncmd, p.nstreams, K, cs.backend,
         cs.runs, cs.in_runs);
    }
  }
  /* The counts per stream: the plan's runs count each member on its own
   * stream, as uncaptured (docs/capture.md); a command buffer counts as
   * one command, so under "auto" (whose probe may choose them, by timing)
   * the counts are compared on the plan only. */
  if (cb) {
    cls_capture_destroy(cap);
    free_set(&p, A);
    free_set(&p, B);
    return;
  }
  bool same = true;
  for (int s = 0; s < MAXSTREAMS + 1; s++)
    same &= b1[s].enqueues - b0[s].enqueues == a1[s].enqueues - a0[s].enqueues &&
            b1[s].launches - b0[s].launches == a1[s].launches - a0[s].launches;
  if (!same) /* the whole table, for the report */
    for (int s = 0; s < MAXSTREAMS + 1; s++)
      fprintf(stderr,
              "seed %" PRIu64 " stream %d: uncaptured / replayed: enqueues %" PRIu64 " / %" PRIu64
              ", launches %" PRIu64 " / %" PRIu64 ", skips %" PRIu64 " / %" PRIu64
              ", failures %" PRIu64 " / %" PRIu64 ", submissions %" PRIu64 " / %" PRIu64 "\n",
              cur_seed, s, a1[s].enqueues - a0[s].enqueues, b1[s].enqueues - b0[s].enqueues,
              a1[s].launches - a0[s].launches, b1[s].launches - b0[s].launches,
              a1[s].skips - a0[s].skips, b1[s].skips - b0[s].skips,
              a1[s].failures - a0[s].failures, b1[s].failures - b0[s].failures,
              a1[s].submissions - a0[s].submissions, b1[s].submissions - b0[s].submissions);
  for (int s = 0; s < MAXSTREAMS + 1; s++) {
    RQ(b1[s].enqueues - b0[s].enqueues == a1[s].enqueues - a0[s].enqueues,
       "stream %d: %" PRIu64 " enqueues replayed (%s), %" PRIu64 " uncaptured", s,
       b1[s].enqueues - b0[s].enqueues, cs.backend, a1[s].enqueues - a0[s].enqueues);
    RQ(b1[s].launches - b0[s].launches == a1[s].launches - a0[s].launches,
       "stream %d: %" PRIu64 " launches replayed, %" PRIu64 " uncaptured", s,
       b1[s].launches - b0[s].launches, a1[s].launches - a0[s].launches);
  }
  cls_capture_destroy(cap);
  free_set(&p, A);
  free_set(&p, B);
}

static const uint64_t SEEDS[] = {1,   2,   3,   5,   8,    13,   21,   34,
                                  55,  89,  144, 233, 377, 610,  987,  1597,
                                  2584, 4181, 6765, 10946, 17711, 28657, 46368, 75025};
#define NSEEDS (sizeof SEEDS / sizeof *SEEDS)

/* A foreign command that enqueues nothing: once the context made one,
 * a replay's members keep their events until complete (docs/capture.md). */
static bool foreign_first;
static cl_int no_op(const struct cls_foreign_call *call, cl_event *ev) {
  (void)call;
  (void)ev;
  return CL_SUCCESS;
}

/* Runs the variant over the seeds: CLS_TEST_SEED, else the first `n` of
 * the list (offset so the variants see different programs). */
static void run_seeds(const char *variant, const char *device, size_t n, size_t off, int K,
                      bool sync, bool params) {
  open_ctx(device);
  if (foreign_first)
    CT_OK(cls_foreign(ctx, 0, "no-op", no_op, NULL, 0, NULL));
  cur_variant = variant;
  memset(&tot, 0, sizeof tot);
  const char *env = getenv("CLS_TEST_SEED");
  bool one = env && *env; /* one seed promises no coverage: the totals below are the list's */
  if (one) {
    cur_seed = strtoull(env, NULL, 0);
    run_seed(cur_seed, K, sync, params);
  } else {
    n = (size_t)ct_scale((int)n, 2);
    for (size_t i = 0; i < n; i++) {
      cur_seed = SEEDS[(i + off) % NSEEDS];
      run_seed(cur_seed, K, sync, params);
    }
  }
  const char *drv = getenv("CLS_SCHEDULER");
  printf("%s (%s, %d device(s)): %zu captures (%zu on command buffers), %zu commands, "
         "%zu runs, %zu in runs (were runs never to span streams: %zu runs, %zu in runs)\n",
         variant, drv && *drv ? drv : cls_context_driver(ctx), ndev, tot.captures, tot.cb,
         tot.commands, tot.runs, tot.in_runs, tot.groups, tot.single);
  fflush(stdout);
  /* One device, the event driver, every capture on the plan (auto may
   * choose command buffers, runs of one stream): its runs span streams. */
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  const char *cm = getenv("CLS_CAPTURE");
  bool plan = tot.cb == 0 && !(cm && (strcmp(cm, "commands") == 0 ||
                                      strcmp(cm, "command-buffer") == 0));
  if (!one && ndev == 1 && strcmp(cls_context_driver(ctx), "event") == 0 &&
      mode == CLS_ATTRIBUTION_RANGED && plan) {
    RQ(tot.runs > 0 && tot.in_runs > 0, "no runs: %zu runs, %zu in runs", tot.runs,
       tot.in_runs);
    /* Runs of one stream only would be exactly the program's stretches
     * of one stream. */
    RQ(tot.runs != tot.groups || tot.in_runs != tot.single,
       "runs never spanned streams: %zu runs, %zu in runs, as the stretches of one stream",
       tot.runs, tot.in_runs);
  }
  /* Command buffers forced on a device that has them: the stretches that
   * alternate streams are runs of the plan beside them. */
  if (ndev == 1 && strcmp(cls_context_driver(ctx), "event") == 0 &&
      mode == CLS_ATTRIBUTION_RANGED && cm && strcmp(cm, "command-buffer") == 0 &&
      ct_has_cb(ctx, 0)) {
    RQ(tot.cb == tot.captures, "%zu of %zu captures on command buffers", tot.cb, tot.captures);
    RQ(one || tot.runs != tot.groups || tot.in_runs != tot.single,
       "beside command buffers, runs never spanned streams: %zu runs, %zu in runs, as the "
       "stretches of one stream",
       tot.runs, tot.in_runs);
  }
  close_ctx();
}

/* cls_sync after each iteration and replay. */
START_TEST(random_programs_replayed_equal_uncaptured) {
  run_seeds("sync", NULL, 10, 0, 4, true, false);
}
END_TEST

/* The same with the plan forced (auto may choose command buffers). */
START_TEST(random_programs_replayed_on_the_plan_equal_uncaptured) {
  setenv("CLS_CAPTURE", "plan", 1);
  run_seeds("sync, plan", NULL, 10, 10, 4, true, false);
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* No sync between replays; uncaptured commands on random streams between
 * them (the same in both runs); a parameter changing at each replay. */
START_TEST(random_programs_replayed_without_sync_with_commands_between) {
  run_seeds("no sync, between, param", NULL, 10, 5, 4, false, true);
}
END_TEST

/* Command buffers forced: runs of one stream are command buffers where
 * the device has them (PoCL), the stretches that alternate streams runs
 * of the plan over several streams beside them; with and without a sync,
 * a parameter changing at each replay (each change records again). */
START_TEST(random_programs_replayed_on_command_buffers_equal_uncaptured) {
  setenv("CLS_CAPTURE", "command-buffer", 1);
  run_seeds("sync, command buffers", NULL, 8, 30, 4, true, false);
  run_seeds("no sync, between, param, command buffers", NULL, 6, 40, 3, false, true);
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* The same after a foreign call, on the plan: every member of a replay
 * keeps its event until complete (the path PoCL needs behind a user
 * event that may fail later), with the same bytes. */
START_TEST(random_programs_replayed_after_a_foreign_call_equal_uncaptured) {
  setenv("CLS_CAPTURE", "plan", 1);
  foreign_first = true;
  run_seeds("after a foreign call, no sync, between, param", NULL, 6, 12, 3, false, true);
  foreign_first = false;
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* Streams spread over every device (two on PoCL: main sets
 * POCL_DEVICES): runs stay on one device. */
START_TEST(random_programs_over_every_device) {
  run_seeds("all devices, sync", "all", 5, 15, 3, true, false);
  run_seeds("all devices, no sync, between, param", "all", 5, 20, 3, false, true);
}
END_TEST

int main(void) {
  /* Two PoCL devices of one platform for the last case (the others use
   * the first); the other vendors ignore it. */
  setenv("POCL_DEVICES", "pthread pthread", 0);
  ct_require_device();
  Suite *s = suite_create("capture-random");
  CT_ADD(s, random_programs_replayed_equal_uncaptured);
  CT_ADD(s, random_programs_replayed_on_the_plan_equal_uncaptured);
  CT_ADD(s, random_programs_replayed_on_command_buffers_equal_uncaptured);
  CT_ADD(s, random_programs_replayed_without_sync_with_commands_between);
  CT_ADD(s, random_programs_replayed_after_a_foreign_call_equal_uncaptured);
  CT_ADD(s, random_programs_over_every_device);
  return ct_run(s);
}
