/* Capture and replay (issue 34): a captured sequence replayed gives the
 * bytes the same program gives uncaptured, on any driver; commands are
 * checked at capture (F12 refusals there); the failure rules hold inside
 * a replay (F2 skips and chains, a failed command taints its write set);
 * a replay whose buffer was freed is refused before anything is enqueued
 * (CLS_ESTALE); parameters of the wrong count or size are refused; two
 * threads replaying one capture are ordered, never interleaved. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdlib.h>
#include <CL/cl_ext.h>

#define N 64
#define NB (N * sizeof(int))

static const char SRC[] =
    /* x = x * 3 + k: not commutative across steps, so order shows */
    "kernel void chain_k(global int *x, int k) {\n"
    "  size_t i = get_global_id(0); x[i] = x[i] * 3 + k + (int)i;\n"
    "}\n"
    "kernel void mix_k(global const int *a, global int *b, int k) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] * 5 - k + b[i];\n"
    "}\n"
    "kernel void fk(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 1;\n"
    "}\n"
    "kernel void ka(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 2;\n"
    "}\n"
    "kernel void kb(global int *b, global const int *a) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 2;\n"
    "}\n"
    "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void tally(global const int *x, global int *y, int k) {\n"
    "  size_t i = get_global_id(0); y[i] += x[i] == k;\n"
    "}\n"
    /* ping-pong steps whose result depends on their order */
    "kernel void pp_ab(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = (a[i] * 2 + 1) % 100003;\n"
    "}\n"
    "kernel void pp_ba(global const int *b, global int *a) {\n"
    "  size_t i = get_global_id(0); a[i] = (b[i] + 3 + (int)i) % 100003;\n"
    "}\n"
    "kernel void red4(global const int *p, global const int *q, global const int *r,\n"
    "                 global const int *s, global int *o) {\n"
    "  size_t i = get_global_id(0);\n"
    "  o[i] = (o[i] * 2 + p[i] + 3 * q[i] + 5 * r[i] + 7 * s[i]) % 1000003;\n"
    "}\n"
    /* slow_k (tests/common.h) with outer * inner steps */
    "kernel void slow2_k(global const int *a, global int *b, int outer, int inner) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint acc = (uint)i;\n"
    "  for (int o = 0; o < outer; o++)\n"
    "    for (int k = 0; k < inner; k++)\n"
    "      acc = acc * 1664525u + 1013904223u;\n"
    "  b[i] = (int)(acc + (uint)a[i]);\n"
    "}\n";

static cls_context *ctx;
static cls_program *prog;

static void open_ctx(const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = fault};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
}

/* A context over every device of the platform (two on PoCL: main sets
 * POCL_DEVICES), stream i on device i mod n; `precise`: exact attribution. */
static int open_ctx_with(const char *fault, const char *device, int precise) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = fault,
                                  .device = device,
                                  .placement = device ? "spread" : NULL,
                                  .precise = precise};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
  size_t n = 0;
  CT_OK(cls_context_devices(ctx, NULL, 0, &n));
  struct cls_device_info d = ct_context_info(ctx);
  if (device && ct_icontains(d.platform_name, "Portable Computing Language"))
    ck_assert_msg(n == 2, "PoCL with POCL_DEVICES=\"pthread pthread\" gave %zu devices", n);
  return (int)n;
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static cls_kernel *K(const char *name) { return ct_get_kernel(ctx, prog, name); }

/* Whether a capture of ctx's stream 0 can take command buffers: the
 * device has them and attribution is ranged (exact attribution keeps
 * every capture on the plan, command by command: CLS_PRECISE=1). */
static bool takes_cb(void) {
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  return mode == CLS_ATTRIBUTION_RANGED && ct_has_cb(ctx, 0);
}

/* Whether cap replays (some of) its commands as runs, one command each:
 * command buffers, or the plan's runs (each member its own enqueue). */
static bool has_runs(const cls_capture *cap) {
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  return st.runs > 0;
}

/* How many of its commands are inside runs. */
static size_t in_runs(const cls_capture *cap) {
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  return st.in_runs;
}

/* Whether its runs are command buffers. */
static bool uses_cb(const cls_capture *cap) {
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  return strcmp(st.backend, "command-buffer") == 0;
}

/* The second run of the shared cases: every one again with the
 * command-buffer backend forced (it falls back to the plan where the
 * device has no cl_khr_command_buffer). */
static void force_cb(void) { setenv("CLS_CAPTURE", "command-buffer", 1); }
static void unforce(void) { unsetenv("CLS_CAPTURE"); }

static void seq(int *v, int base) {
  for (int i = 0; i < N; i++)
    v[i] = base + i;
}

static cls_buffer buf_of(int stream, int base) {
  int v[N];
  seq(v, base);
  cls_buffer b = ct_alloc(ctx, stream, NB);
  ct_upload_ints(ctx, stream, b, v, N);
  return b;
}

static void launch(int stream, const char *k, size_t nargs, const cls_arg *args) {
  ct_launch1(ctx, stream, K(k), N, nargs, args);
}

/* A download of b on `stream` fails (CLS_ETAINTED), its first failure
 * that of a launch of `kernel`: that failure's numbers (its strings go
 * with the report). */
static struct cls_failure_info root_of(int stream, cls_buffer b, const char *kernel) {
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, stream, b, 0, v, NB, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.kernel, kernel);
  cls_report_free(r);
  fi.cl_name = fi.operation = fi.kernel = fi.message = fi.build_log = NULL;
  return fi;
}

/* The workloads, each one "iteration" with scalar k: run plain, or
 * recorded inside a capture (k then marked a parameter). */
static void tiny_chain(cls_buffer x, int *k) {
  for (int j = 0; j < 5; j++)
    launch(0, "chain_k", 2, (cls_arg[]){CLS_INOUT(x), CLS_SCALAR(*k)});
}

/* The tiny chain with scalar k run `reps` times uncaptured on a buffer of
 * base `base` (its bytes into want), then captured once on a fresh one,
 * *y: the capture is returned, not replayed yet. */
static cls_capture *tiny_chain_captured(int *k, int base, int reps, int *want, cls_buffer *y) {
  cls_buffer x = buf_of(0, base);
  for (int r = 0; r < reps; r++)
    tiny_chain(x, k);
  ct_download_ints(ctx, 0, x, want, N);
  *y = buf_of(0, base);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  tiny_chain(*y, k);
  CT_OK(cls_capture_end(ctx, &cap));
  return cap;
}

static void ping_pong(cls_buffer a, cls_buffer b, int *k) {
  for (int j = 0; j < 3; j++) {
    launch(0, "mix_k", 3, (cls_arg[]){CLS_IN(a), CLS_INOUT(b), CLS_SCALAR(*k)});
    launch(1, "mix_k", 3, (cls_arg[]){CLS_IN(b), CLS_INOUT(a), CLS_SCALAR(*k)});
  }
}

static void fan(cls_buffer src, cls_buffer *out, int *k) {
  launch(0, "chain_k", 2, (cls_arg[]){CLS_INOUT(src), CLS_SCALAR(*k)});
  for (int s = 1; s <= 3; s++)
    launch(s, "mix_k", 3, (cls_arg[]){CLS_IN(src), CLS_INOUT(out[s - 1]), CLS_SCALAR(*k)});
  CT_OK(cls_copy(ctx, 2, out[0], 0, out[2], 0, NB / 2));
}

#define REPLAYS 7

static void expect_same(cls_buffer a, int stream, const int *want, const char *what) {
  int got[N];
  ct_download_ints(ctx, stream, a, got, N);
  for (int i = 0; i < N; i++)
    ck_assert_msg(got[i] == want[i], "%s: [%d] = %d captured, %d uncaptured", what, i, got[i],
                  want[i]);
}

START_TEST(F1_replay_tiny_chain_equals_uncaptured_with_a_changing_scalar) {
  open_ctx(NULL);
  int want[N], k;
  cls_buffer x = buf_of(0, 1);
  for (int r = 0; r < REPLAYS; r++) {
    k = 10 * r + 3;
    tiny_chain(x, &k);
  }
  ct_download_ints(ctx, 0, x, want, N);
  cls_buffer y = buf_of(0, 1);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  int idx = -1;
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  ck_assert_int_eq(idx, 0);
  tiny_chain(y, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  /* Recorded, not run: y is as uploaded. */
  int v[N];
  seq(v, 1);
  expect_same(y, 0, v, "after the capture");
  for (int r = 0; r < REPLAYS; r++) {
    int kr = 10 * r + 3;
    cls_param p = {&kr, sizeof kr};
    CT_OK(cls_replay(ctx, cap, 1, &p));
  }
  expect_same(y, 0, want, "tiny chain");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

START_TEST(F7_replay_ping_pong_over_two_streams_equals_uncaptured) {
  open_ctx(NULL);
  int wa[N], wb[N], k;
  cls_buffer a = buf_of(0, 2), b = buf_of(1, 5);
  for (int r = 0; r < REPLAYS; r++) {
    k = r - 4;
    ping_pong(a, b, &k);
  }
  ct_download_ints(ctx, 0, a, wa, N);
  ct_download_ints(ctx, 0, b, wb, N);
  cls_buffer c = buf_of(0, 2), d = buf_of(1, 5);
  cls_capture *cap = NULL;
  int idx;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  ping_pong(c, d, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < REPLAYS; r++) {
    int kr = r - 4;
    cls_param p = {&kr, sizeof kr};
    CT_OK(cls_replay(ctx, cap, 1, &p));
  }
  expect_same(c, 1, wa, "ping-pong a");
  expect_same(d, 0, wb, "ping-pong b");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* The fan run REPLAYS times uncaptured, then captured once and replayed
 * REPLAYS times on fresh buffers: the bytes must agree.  relocate_at >= 0:
 * stream 1 moves to the next device before that replay (the replay
 * follows it to its fresh queue), and its statistics say so. */
static void fan_replayed(int relocate_at, int ndev) {
  int want[4][N], k;
  cls_buffer src = buf_of(0, 1), out[3] = {buf_of(1, 10), buf_of(2, 20), buf_of(3, 30)};
  for (int r = 0; r < REPLAYS; r++) {
    k = 2 * r + 1;
    fan(src, out, &k);
  }
  ct_download_ints(ctx, 0, src, want[0], N);
  for (int s = 0; s < 3; s++)
    ct_download_ints(ctx, 0, out[s], want[s + 1], N);
  cls_buffer src2 = buf_of(0, 1), out2[3] = {buf_of(1, 10), buf_of(2, 20), buf_of(3, 30)};
  cls_capture *cap = NULL;
  int idx;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  fan(src2, out2, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  int dev1 = -1;
  CT_OK(cls_stream_device(ctx, 1, &dev1));
  ck_assert_int_eq(dev1, 1 % ndev);
  struct cls_stream_stats st0, st1;
  CT_OK(cls_stream_stats(ctx, 1, &st0));
  for (int r = 0; r < REPLAYS; r++) {
    if (r == relocate_at) {
      uint64_t g = 0;
      CT_OK(cls_stream_generation(ctx, 1, &g));
      CT_OK(cls_stream_relocate(ctx, 1, (dev1 + 1) % ndev, g));
      CT_OK(cls_stream_generation(ctx, 1, &g));
      ck_assert_uint_eq(g, 1);
    }
    int kr = 2 * r + 1;
    cls_param p = {&kr, sizeof kr};
    CT_OK(cls_replay(ctx, cap, 1, &p));
  }
  expect_same(src2, 3, want[0], "fan source");
  for (int s = 0; s < 3; s++)
    expect_same(out2[s], s % 2 ? 0 : s + 1, want[s + 1], "fan output");
  CT_OK(cls_stream_stats(ctx, 1, &st1));
  ck_assert_uint_eq(st1.launches - st0.launches, REPLAYS);
  ck_assert_uint_eq(st1.relocations, relocate_at >= 0);
  if (ndev == 2 && relocate_at >= 0) /* before it, the source moves to device 1 each replay */
    ck_assert_uint_ge(st1.migrations - st0.migrations, (unsigned)relocate_at);
  cls_capture_destroy(cap);
}

START_TEST(F7_replay_fan_over_four_streams_equals_uncaptured) {
  open_ctx(NULL);
  fan_replayed(-1, 1);
  close_ctx();
}
END_TEST

/* Scalars not marked are copied at the call: changing the variable after
 * the capture changes nothing. */
START_TEST(replay_unmarked_scalars_keep_their_captured_value) {
  open_ctx(NULL);
  int want[N], k = 4;
  cls_buffer x = buf_of(0, 0);
  tiny_chain(x, &k);
  tiny_chain(x, &k);
  ct_download_ints(ctx, 0, x, want, N);
  cls_buffer y = buf_of(0, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  tiny_chain(y, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  k = 99;
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  expect_same(y, 0, want, "unmarked scalar");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* Uploads, fills and downloads (non-blocking) are captured too: the host
 * memory is read and written at each replay. */
START_TEST(replay_runs_captured_transfers_on_host_memory_of_the_replay) {
  open_ctx(NULL);
  int in[N], out[N], z = 7;
  cls_buffer a = ct_alloc(ctx, 0, NB), b = ct_alloc(ctx, 1, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, b, 0, NB, &z, sizeof z));
  CT_OK(cls_upload_async(ctx, 0, a, 0, in, NB / 2));
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_INOUT(b)});
  CT_OK(cls_download_async(ctx, 1, b, 0, out, NB));
  z = 1000; /* the pattern was copied at the call */
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < 3; r++) {
    seq(in, 100 * r);
    memset(out, 0, sizeof out);
    CT_OK(cls_replay(ctx, cap, 0, NULL));
    CT_OK(cls_sync(ctx, NULL));
    for (int i = 0; i < N / 2; i++)
      ck_assert_int_eq(out[i], 100 * r + i + 2);
  }
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

START_TEST(F12_capture_checks_arguments_at_capture) {
  open_ctx(NULL);
  cls_buffer x = buf_of(0, 0);
  cls_capture *cap = (cls_capture *)&cap;
  CT_OK(cls_capture_begin(ctx));
  size_t g[1] = {N};
  /* Wrong count, wrong kind: refused now, not recorded. */
  CT_ERR(cls_launch(ctx, 0, K("chain_k"), 1, g, NULL, 1, (cls_arg[]){CLS_INOUT(x)}),
         CLS_EARGCOUNT);
  CT_ERR(cls_launch(ctx, 0, K("chain_k"), 1, g, NULL, 2, (cls_arg[]){CLS_INOUT(x), CLS_INOUT(x)}),
         CLS_EARGKIND);
  CT_ERR(cls_fill(ctx, 0, x, 0, NB + 4, &g, 4), CLS_ERANGE);
  /* Nothing was recorded: a capture of zero commands is refused. */
  CT_ERR(cls_capture_end(ctx, &cap), CLS_EINVAL);
  ck_assert_ptr_null(cap);
  ck_assert_msg(strstr(cls_last_error_detail(), "no command"), "%s", cls_last_error_detail());
  close_ctx();
}
END_TEST

START_TEST(capture_refuses_blocking_transfers_at_capture) {
  open_ctx(NULL);
  cls_buffer x = buf_of(0, 0);
  int v[N];
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_ERR(cls_download(ctx, 0, x, 0, v, NB, NULL), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "capture"), "%s", cls_last_error_detail());
  CT_ERR(cls_upload(ctx, 0, x, 0, v, NB), CLS_EINVAL);
  launch(0, "inc", 1, (cls_arg[]){CLS_INOUT(x)});
  CT_ERR(cls_capture_begin(ctx), CLS_EINVAL); /* one at a time */
  CT_OK(cls_capture_end(ctx, &cap));
  ck_assert_ptr_nonnull(cap);
  cls_capture *again = cap;
  CT_ERR(cls_capture_end(ctx, &again), CLS_EINVAL); /* none in progress */
  ck_assert_ptr_null(again);
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

START_TEST(replay_refuses_wrong_parameters_and_enqueues_nothing) {
  open_ctx(NULL);
  int k = 1;
  cls_buffer x = buf_of(0, 0);
  cls_capture *cap = NULL;
  int idx;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  tiny_chain(x, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  long long wide = 5;
  cls_param good = {&k, sizeof k}, bad = {&wide, sizeof wide};
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_replay(ctx, cap, 1, &bad), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "8 bytes given"), "%s", cls_last_error_detail());
  cls_param two[2] = {good, good};
  CT_ERR(cls_replay(ctx, cap, 2, two), CLS_EINVAL);
  CT_ERR(cls_replay(ctx, NULL, 0, NULL), CLS_EINVAL);
  int v[N];
  seq(v, 0);
  expect_same(x, 0, v, "after refused replays");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

START_TEST(ESTALE_replay_after_a_buffer_was_freed_enqueues_nothing) {
  open_ctx(NULL);
  cls_buffer x = buf_of(0, 0), y = buf_of(1, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "inc", 1, (cls_arg[]){CLS_INOUT(x)}); /* before the freed one */
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(y)});
  CT_OK(cls_capture_end(ctx, &cap));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_free(ctx, y));
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_ESTALE);
  ck_assert_msg(strstr(cls_last_error_detail(), "freed"), "%s", cls_last_error_detail());
  int v[N];
  seq(v, 1); /* one replay's inc, not two */
  expect_same(x, 0, v, "after the refused replay");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* Buffers allocated and freed between replays move the slot tables (and
 * reuse freed slots): the next replay still finds its own buffers. */
START_TEST(replay_after_the_slot_tables_moved_finds_its_buffers) {
  open_ctx(NULL);
  int want[N], k = 2;
  cls_buffer y;
  cls_capture *cap = tiny_chain_captured(&k, 3, 3, want, &y);
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  cls_buffer many[300];
  for (int i = 0; i < 300; i++)
    many[i] = ct_alloc(ctx, 0, 64);
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  for (int i = 0; i < 300; i++)
    CT_OK(cls_free(ctx, many[i]));
  for (int i = 0; i < 300; i++)
    many[i] = ct_alloc(ctx, 0, 64);
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  expect_same(y, 0, want, "after the tables moved");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* Ping-pong by buffer parameters: one captured step, replayed with its
 * two buffers swapped each time, equals the uncaptured alternation. */
START_TEST(replay_swaps_buffer_parameters_for_ping_pong) {
  open_ctx(NULL);
  int want[N], k = 3;
  cls_buffer a = buf_of(0, 1), b = buf_of(0, 9);
  for (int r = 0; r < REPLAYS; r++)
    launch(0, "mix_k", 3, (cls_arg[]){CLS_IN(r % 2 ? b : a), CLS_INOUT(r % 2 ? a : b),
                                      CLS_SCALAR(k)});
  ct_download_ints(ctx, 0, REPLAYS % 2 ? b : a, want, N);
  cls_buffer c = buf_of(0, 1), d = buf_of(0, 9), big = ct_alloc(ctx, 0, 2 * NB);
  cls_capture *cap = NULL;
  int pi, po;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_buffer_param(ctx, c, &pi));
  CT_OK(cls_capture_buffer_param(ctx, d, &po));
  launch(0, "mix_k", 3, (cls_arg[]){CLS_IN(c), CLS_INOUT(d), CLS_SCALAR(k)});
  CT_OK(cls_capture_end(ctx, &cap));
  cls_param wrong[2] = {{&c, sizeof c}, {&big, sizeof big}};
  CT_ERR(cls_replay(ctx, cap, 2, wrong), CLS_EINVAL);
  for (int r = 0; r < REPLAYS; r++) {
    cls_param p[2] = {{r % 2 ? &d : &c, sizeof c}, {r % 2 ? &c : &d, sizeof c}};
    CT_OK(cls_replay(ctx, cap, 2, p));
  }
  expect_same(REPLAYS % 2 ? d : c, 0, want, "swapped ping-pong");
  /* A freed buffer given as parameter: refused, nothing enqueued. */
  cls_buffer e = buf_of(0, 0);
  CT_OK(cls_free(ctx, e));
  cls_param stale[2] = {{&c, sizeof c}, {&e, sizeof e}};
  CT_ERR(cls_replay(ctx, cap, 2, stale), CLS_ESTALE);
  expect_same(REPLAYS % 2 ? d : c, 0, want, "after the refused replay");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* The driver may defer an enqueue failure (scheduler): the replay then
 * returns success, or the skip of a later command that found it. */
static void replay_fails(cls_capture *cap) {
  int rc = cls_replay(ctx, cap, 0, NULL);
  bool event = strcmp(cls_context_driver(ctx), "event") == 0;
  ck_assert_msg(rc == CLS_ELAUNCH || (!event && (rc == 0 || rc == CLS_ESKIPPED)),
                "replay: %s: %s", cls_err_name(rc), cls_last_error_detail());
  cls_sync(ctx, NULL);
}

/* F2/F3 inside a replay: the failed launch taints its write set, the later
 * command of the same replay reading it is skipped on its chain. */
START_TEST(F2_replay_failed_command_taints_its_writes_and_skips_readers) {
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 0), b = buf_of(0, 0), c = buf_of(1, 0), d = buf_of(1, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "fk", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(d)}); /* independent: runs */
  CT_OK(cls_capture_end(ctx, &cap));
  replay_fails(cap);
  /* Runs (command buffers, or the plan's): stream 1's two launches are
   * one run.  A driver that defers hands it over before fk's failure is
   * known, so the run, one command, is skipped whole (the independent
   * launch with it); the event driver knows at once and replays the run
   * command by command, exactly. */
  bool whole = has_runs(cap) && strcmp(cls_context_driver(ctx), "event") != 0;
  /* A plan run over both streams (the event driver): the three launches
   * are one command, which fk's fault fails whole, c and d with it. */
  bool over = in_runs(cap) == 3;
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, c, 0, v, NB, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  if (over) {
    ck_assert_str_eq(fi.kernel, "capture #1 commands 0-2 (fk...)");
    CT_ERR(cls_download(ctx, 1, d, 0, v, NB, NULL), CLS_ETAINTED);
    cls_report_free(r);
    cls_capture_destroy(cap);
    close_ctx();
    unforce();
    return;
  }
  ck_assert_str_eq(fi.kernel, "fk");
  ck_assert_uint_ge(fi.nskips, 1);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  if (whole)
    ck_assert_str_eq(si.kernel, "capture #1 commands 1-2 (ka...)");
  else
    ck_assert_str_eq(si.kernel, "ka");
  ck_assert_int_eq(si.stream, 1);
  cls_report_free(r);
  for (int i = 0; i < N; i++)
    v[i] = i + 2;
  if (whole)
    CT_ERR(cls_download(ctx, 0, d, 0, v, NB, NULL), CLS_ETAINTED);
  else
    expect_same(d, 0, v, "the independent command");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* F2: inputs tainted before the replay: each command reading them is
 * skipped (each its own skip on the chain, as uncaptured), the others
 * run. */
/* fk (failing at its enqueue: the context's fault) writes b from a, the
 * failure known by a sync; then the capture, which reads b, is replayed:
 * skipped, in whole or in part. */
static void taint_b_then_replay(cls_buffer a, cls_buffer b, cls_capture *cap) {
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 0, K("fk"), 1, g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  ck_assert(rc == CLS_ELAUNCH || rc == 0);
  cls_sync(ctx, NULL);
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_ESKIPPED);
}

/* Found by tests/model (a fresh seed, 0x1faee74c18f21099, under the
 * scheduler): a fill of `dst` whose enqueue fails (the scheduler reports
 * it after the call), then a replay skipped as a whole on a never-written
 * source, which overwrites `dst` with that record, then a launch on
 * another stream reading `dst`.  When the fill's failure was found, the
 * F8 replay did not know the whole skip had overwritten `dst` (it was not
 * logged), and moved the reader, and its output, to the fill's failure.
 * The reader counts on the never-written source, as under the event
 * driver, where the fill's failure is known at the call. */
START_TEST(whole_skip_over_a_write_whose_failure_is_found_later) {
  open_ctx("enqueue:op=fill,status=CL_OUT_OF_RESOURCES");
  cls_buffer never = ct_alloc(ctx, 1, NB), dst = ct_alloc(ctx, 1, NB);
  cls_buffer out = ct_alloc(ctx, 0, NB); /* never written either: the reader's second input */
  int pattern = 7, v[N];
  int rc = cls_fill(ctx, 0, dst, 0, NB, &pattern, sizeof pattern);
  ck_assert_msg(rc == CLS_ECL || rc == CLS_OK, "fill: %s", cls_err_name(rc));
  CT_ERR(cls_download(ctx, 1, never, 0, v, NB, NULL), CLS_ETAINTED);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_copy(ctx, 0, never, 0, dst, 0, NB));
  CT_OK(cls_capture_end(ctx, &cap));
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_ETAINTED); /* as a whole: never is not written */
  CT_ERR(cls_launch(ctx, 2, K("tally"), 1, (size_t[]){N}, NULL, 3,
                    (cls_arg[]){CLS_IN(dst), CLS_INOUT(out), CLS_SCALAR(pattern)}),
         CLS_ESKIPPED);
  cls_sync(ctx, NULL);
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &out, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, "never written") && strstr(fi.message, "stream 1"),
                "out carries: %s", fi.message);
  ck_assert_uint_eq(fi.skipped, 2); /* the replay, then tally */
  cls_report_free(r);
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

START_TEST(F2_replay_whose_inputs_are_tainted_is_skipped) {
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 0), b = buf_of(0, 0), c = buf_of(1, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(c), CLS_OUT(c)});
  CT_OK(cls_capture_end(ctx, &cap));
  taint_b_then_replay(a, b, cap);
  ck_assert_ptr_nonnull(strstr(cls_last_error_detail(), "capture #1 skipped as a whole (2 commands)"));
  ck_assert_ptr_nonnull(strstr(cls_last_error_detail(), "'fk'"));
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 1, &st));
  ck_assert_uint_eq(st.skips, 2);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, c, 0, v, NB, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.kernel, "fk");
  ck_assert_uint_eq(fi.skipped, 2);
  /* One entry for the whole replay, naming the capture and its count. */
  ck_assert_uint_eq(fi.nskips, 1);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_int_eq(si.kind, CLS_SKIP_REPLAY);
  ck_assert_str_eq(si.kernel, "capture #1");
  ck_assert_uint_eq(si.count, 2);
  ck_assert_int_eq(si.stream, 1);
  ck_assert_ptr_nonnull(strstr(cls_report_text(r), "replay of capture #1 (2 commands)"));
  cls_report_free(r);
  /* Again: a second entry, the chain counts four. */
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_ESKIPPED);
  CT_ERR(cls_download(ctx, 1, c, 0, v, NB, &r), CLS_ETAINTED);
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_uint_eq(fi.skipped, 4);
  ck_assert_uint_eq(fi.nskips, 2);
  cls_report_free(r);
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* A tainted input that reaches only part of a replay: what it reaches is
 * skipped (a skip entry per command, as uncaptured), what it does not
 * reach runs and gives its bytes (never stricter than the program). */
START_TEST(F2_replay_skips_only_what_the_tainted_input_reaches) {
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 0), b = buf_of(0, 0), c = buf_of(1, 0);
  cls_buffer d = buf_of(2, 10), e = buf_of(2, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  launch(2, "ka", 2, (cls_arg[]){CLS_IN(d), CLS_OUT(e)});
  CT_OK(cls_capture_end(ctx, &cap));
  taint_b_then_replay(a, b, cap);
  ck_assert_ptr_null(strstr(cls_last_error_detail(), "as a whole"));
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, c, 0, v, NB, &r), CLS_ETAINTED);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_int_eq(si.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(si.kernel, "ka");
  cls_report_free(r);
  ct_download_ints(ctx, 2, e, v, N);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(v[i], 12 + i);
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* Streams on two devices: the fan's four streams spread over them
 * (buffers migrate between devices inside the replay), then stream 1
 * relocated to the other device between replays: the replay follows the
 * stream to its fresh queue and the bytes equal the program uncaptured. */
START_TEST(F7_replay_over_two_devices_and_after_a_relocation_equals_uncaptured) {
  int ndev = open_ctx_with(NULL, "all", 0);
  fan_replayed(3, ndev);
  close_ctx();
}
END_TEST

/* F4 inside a run: a member that writes part of a buffer keeps its
 * ranged failure, and a later member reading it is skipped, as
 * uncaptured.  x carries a ranged failure (fk fails at completion); the
 * capture fills half of x, then reads it into y: uncaptured, y2 is
 * tainted; replayed, y must be too (the run reads x from outside it:
 * no member wrote it whole before the read). */
START_TEST(F4_a_partial_write_inside_a_replay_keeps_a_ranged_failure) {
  open_ctx_with("complete:kernel=fk", NULL, 0);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  cls_buffer a = buf_of(0, 5), x = buf_of(0, 1), y = ct_alloc(ctx, 0, NB),
             y2 = ct_alloc(ctx, 0, NB);
  int zero = 0;
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, x, 0, NB / 2, &zero, sizeof zero));
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(y)});
  CT_OK(cls_capture_end(ctx, &cap));
  CT_OK(cls_sync(ctx, NULL));
  /* fk in a range of three launches (ranged: none of them has its own
   * event), so that x's failure is a range's. */
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(y)});
  launch(0, "fk", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x)});
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(y2)});
  cls_sync(ctx, NULL);
  int v[N];
  CT_ERR(cls_download(ctx, 0, x, 0, v, NB, NULL), CLS_ETAINTED);
  /* Uncaptured: the reference. */
  size_t g = N;
  cls_fill(ctx, 0, x, 0, NB / 2, &zero, sizeof zero);
  cls_launch(ctx, 0, K("ka"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(x), CLS_OUT(y2)});
  cls_sync(ctx, NULL);
  bool kept = cls_download(ctx, 0, y2, 0, v, NB, NULL) == CLS_ETAINTED;
  ck_assert_msg(kept == (mode == CLS_ATTRIBUTION_RANGED),
                "uncaptured: a partial fill %s the failure under %s attribution",
                kept ? "kept" : "cleared", mode == CLS_ATTRIBUTION_RANGED ? "ranged" : "exact");
  cls_replay(ctx, cap, 0, NULL);
  cls_sync(ctx, NULL);
  int rc = cls_download(ctx, 0, y, 0, v, NB, NULL);
  ck_assert_msg((rc == CLS_ETAINTED) == kept, "replayed: y %s, uncaptured y2 %s",
                cls_err_name(rc), kept ? "CLS_ETAINTED" : "CLS_OK");
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* A member that writes a buffer and reads it in the same launch (two
 * bindings of one buffer, the write first) reads it from outside its run:
 * where an earlier command of the replay (fk, which fails at its enqueue,
 * then an upload, which no run holds) left it tainted, the run's members
 * are skipped and y carries fk's failure, as uncaptured. */
static int up_src[N];
START_TEST(F2_a_member_reading_and_writing_one_buffer_reads_it) {
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 5), x = buf_of(0, 1), y = ct_alloc(ctx, 0, NB),
             z = ct_alloc(ctx, 0, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "fk", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x)});
  CT_OK(cls_upload_async(ctx, 0, z, 0, up_src, NB));
  launch(0, "kb", 2, (cls_arg[]){CLS_OUT(x), CLS_IN(x)});
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(y)});
  CT_OK(cls_capture_end(ctx, &cap));
  cls_replay(ctx, cap, 0, NULL);
  cls_sync(ctx, NULL);
  ck_assert_uint_ge(root_of(0, y, "fk").nskips, 1);
  cls_capture_destroy(cap);
  close_ctx();
}
END_TEST

/* Ranged attribution inside a replay (F8a): four launches captured, the
 * third failing when it completes.  Ranged (the default where the device
 * poisons its queue): the record names a range of the replay (on the
 * command-buffer backend: the run, one command buffer) and every output
 * of it carries that one record; exact (precise, which keeps the plan):
 * only the third's output, named, and the others keep their bytes. */
static void ranged_in_replay(int precise) {
  open_ctx_with("complete:kernel=fk", NULL, precise);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  bool ranged = mode == CLS_ATTRIBUTION_RANGED;
  if (precise)
    ck_assert(!ranged);
  cls_buffer a = buf_of(0, 5), b[4];
  for (int i = 0; i < 4; i++)
    b[i] = ct_alloc(ctx, 0, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b[0])});
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b[1])});
  launch(0, "fk", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b[2])});
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b[3])});
  CT_OK(cls_capture_end(ctx, &cap));
  CT_OK(cls_sync(ctx, NULL)); /* the upload is proven: not in the range */
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  cls_sync(ctx, NULL);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, b[2], 0, v, NB, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f;
  CT_OK(cls_report_failure(r, 0, &f));
  ck_assert_int_eq(f.async, 1);
  if (has_runs(cap)) {
    /* One run (a command buffer, or the plan's run): the run is the
     * range, named by the capture. */
    ck_assert(ranged);
    ck_assert_msg(strstr(f.message, uses_cb(cap) ? "command buffer of capture #1 commands 0-3 (ka...)"
                                                 : "run of capture #1 commands 0-3 (ka...)"),
                  "the run's record: %s", f.message);
  } else if (ranged) {
    ck_assert_msg(strstr(f.message, "one of 4 launches") && strstr(f.message, "ka x3") &&
                      strstr(f.message, "fk x1") && strstr(f.message, "CLS_PRECISE=1"),
                  "the range's record: %s", f.message);
  }
  if (ranged) {
    cls_report *all = NULL;
    CT_ERR(cls_check(ctx, 4, b, &all), CLS_ETAINTED);
    ck_assert_uint_eq(cls_report_failures(all), 1);
    cls_report_free(all);
  } else {
    ck_assert_str_eq(f.kernel, "fk");
    for (int i = 0; i < 4; i++)
      if (i != 2) {
        ct_download_ints(ctx, 0, b[i], v, N);
        for (int j = 0; j < N; j++)
          ck_assert_int_eq(v[j], 5 + j + 2);
      }
  }
  cls_report_free(r);
  ct_expect_ints(ctx, 0, a, 1, 5); /* the input is untouched */
  cls_capture_destroy(cap);
  close_ctx();
}

START_TEST(F8a_ranged_attribution_names_a_range_of_the_replay) {
  ranged_in_replay(0);
}
END_TEST

START_TEST(F8a_exact_attribution_pins_the_command_of_the_replay) {
  ranged_in_replay(1);
}
END_TEST

/* Two threads replaying one capture: each replay's fill, incs and tally
 * run as one block (the context's lock), so every tally sees exactly
 * INCS increments. */
#define INCS 6
#define THREAD_REPLAYS 40
static cls_capture *shared_cap;
static void *replayer(void *arg) {
  (void)arg;
  for (int r = 0; r < THREAD_REPLAYS; r++)
    if (cls_replay(ctx, shared_cap, 0, NULL) != 0)
      return (void *)1;
  return NULL;
}

START_TEST(F7_two_threads_replaying_one_capture_never_interleave) {
  open_ctx(NULL);
  cls_buffer x = ct_alloc(ctx, 0, NB), y = ct_written(ctx, 0, N, 0);
  int zero = 0, k = INCS;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, x, 0, NB, &zero, sizeof zero));
  for (int j = 0; j < INCS; j++)
    launch(0, "inc", 1, (cls_arg[]){CLS_INOUT(x)});
  launch(0, "tally", 3, (cls_arg[]){CLS_IN(x), CLS_INOUT(y), CLS_SCALAR(k)});
  CT_OK(cls_capture_end(ctx, &shared_cap));
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, replayer, NULL), 0);
  for (int i = 0; i < 2; i++) {
    void *res;
    pthread_join(t[i], &res);
    ck_assert_ptr_null(res);
  }
  ct_expect_ints(ctx, 0, y, N, 2 * THREAD_REPLAYS);
  cls_capture_destroy(shared_cap);
  close_ctx();
}
END_TEST

/* The command-buffer backend (CLS_CAPTURE=command-buffer): a run of
 * consecutive commands on one stream is one command buffer, recorded once
 * and enqueued once per replay; without the extension, the plan. */
START_TEST(CB_run_is_recorded_once_and_enqueued_once_per_replay) {
  force_cb();
  open_ctx(NULL);
  bool has = takes_cb();
  int zero = 0, k = 7, want[N];
  cls_buffer x = buf_of(0, 1), w = ct_alloc(ctx, 0, NB);
  for (int r = 0; r < REPLAYS; r++) {
    CT_OK(cls_fill(ctx, 0, w, 0, NB, &zero, sizeof zero));
    tiny_chain(x, &k);
    CT_OK(cls_copy(ctx, 0, x, 0, w, 0, NB));
  }
  ct_download_ints(ctx, 0, w, want, N);
  cls_buffer y = buf_of(0, 1);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, w, 0, NB, &zero, sizeof zero));
  tiny_chain(y, &k);
  CT_OK(cls_copy(ctx, 0, y, 0, w, 0, NB));
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < REPLAYS; r++)
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_sync(ctx, NULL));
  expect_same(w, 0, want, "fill, chain, copy");
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  ck_assert_uint_eq(st.commands, 7);
  if (has) {
    ck_assert_str_eq(st.backend, "command-buffer");
    ck_assert_uint_eq(st.runs, 1);
    ck_assert_uint_eq(st.in_runs, 7);
    ck_assert_uint_eq(st.recordings, 1);
    ck_assert_uint_eq(st.enqueues, REPLAYS);
  } else {
    ck_assert_str_eq(st.backend, "plan");
    ck_assert_uint_eq(st.enqueues, 0);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* The plan's runs (CLS_CAPTURE=plan, ranged attribution): a run of
 * consecutive commands on one stream that take no parameter is one
 * command of the command path, its members enqueued one by one with
 * their arguments set once; the bytes, the stream's counts and the
 * positions are the uncaptured program's. */
START_TEST(plan_run_is_one_command_and_equals_uncaptured) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  int zero = 0, k = 7, want[N];
  cls_buffer x = buf_of(0, 1), w = ct_alloc(ctx, 0, NB);
  struct cls_stream_stats s0, s1, s2;
  CT_OK(cls_stream_stats(ctx, 0, &s0));
  for (int r = 0; r < REPLAYS; r++) {
    CT_OK(cls_fill(ctx, 0, w, 0, NB, &zero, sizeof zero));
    tiny_chain(x, &k);
    CT_OK(cls_copy(ctx, 0, x, 0, w, 0, NB));
  }
  CT_OK(cls_stream_stats(ctx, 0, &s1));
  ct_download_ints(ctx, 0, w, want, N);
  cls_buffer y = buf_of(0, 1);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, w, 0, NB, &zero, sizeof zero));
  tiny_chain(y, &k);
  CT_OK(cls_copy(ctx, 0, y, 0, w, 0, NB));
  CT_OK(cls_capture_end(ctx, &cap));
  struct cls_stream_stats sc;
  CT_OK(cls_stream_stats(ctx, 0, &sc));
  for (int r = 0; r < REPLAYS; r++)
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stream_stats(ctx, 0, &s2));
  expect_same(w, 0, want, "fill, chain, copy replayed as one run");
  /* The replays count as the uncaptured loop did: 7 enqueues and 5
   * launches each. */
  ck_assert_uint_eq(s2.launches - sc.launches, s1.launches - s0.launches);
  ck_assert_uint_eq(s2.enqueues - sc.enqueues, s1.enqueues - s0.enqueues);
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  ck_assert_str_eq(st.backend, "plan");
  ck_assert_uint_eq(st.commands, 7);
  if (mode == CLS_ATTRIBUTION_RANGED) {
    ck_assert_uint_eq(st.runs, 1);
    ck_assert_uint_eq(st.in_runs, 7);
    ck_assert_uint_eq(st.recordings, 1);
    ck_assert_uint_eq(st.enqueues, REPLAYS);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* A plan run's parameters: a changed value is set on the run's own
 * kernels (under a driver that defers, on another recording of the run
 * while one is held: at most eight), never a new recording per replay;
 * buffers swapped by parameters too.  The bytes are the uncaptured
 * program's. */
START_TEST(plan_run_takes_new_parameter_values_in_place) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  enum { R = 24 };
  int want[N], k = 0;
  cls_buffer x = buf_of(0, 1);
  for (int r = 0; r < R; r++) {
    k = 1 + r % 5;
    tiny_chain(x, &k);
  }
  ct_download_ints(ctx, 0, x, want, N);
  cls_buffer y = buf_of(0, 1);
  cls_capture *cap = NULL;
  int idx;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  tiny_chain(y, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < R; r++) {
    int kr = 1 + r % 5;
    CT_OK(cls_replay(ctx, cap, 1, &(cls_param){&kr, sizeof kr}));
  }
  expect_same(y, 0, want, "tiny chain with k changing at every replay");
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  if (mode == CLS_ATTRIBUTION_RANGED) {
    ck_assert_uint_eq(st.runs, 1);
    ck_assert_uint_eq(st.enqueues, R);
    bool now = strcmp(cls_context_driver(ctx), "event") == 0;
    ck_assert_msg(now ? st.recordings == 1 : st.recordings >= 1 && st.recordings <= 8,
                  "%llu recordings under %s", st.recordings, cls_context_driver(ctx));
  }
  cls_capture_destroy(cap);
  close_ctx();
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* The positions after a plan run: each member takes its own, so a
 * failure after the replays names the position of the uncaptured run. */
START_TEST(plan_run_members_take_their_positions) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 0), b = ct_alloc(ctx, 0, NB), c = ct_alloc(ctx, 0, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  for (int j = 0; j < 3; j++)
    launch(0, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < 2; r++)
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  /* The upload is position 1, the replays 2-7: fk is 8. */
  size_t g = N;
  cls_launch(ctx, 0, K("fk"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(c)});
  cls_sync(ctx, NULL);
  ck_assert_uint_eq(root_of(0, c, "fk").position, 8);
  cls_capture_destroy(cap);
  close_ctx();
  unsetenv("CLS_CAPTURE");
}
END_TEST

/* No mutable dispatch: a parameter whose value differs from the one a
 * command buffer was recorded with records it again; the same value
 * does not.  The bytes are the uncaptured program's either way. */
START_TEST(CB_parameter_change_records_again_and_same_value_does_not) {
  force_cb();
  open_ctx(NULL);
  bool has = takes_cb();
  static const int ks[] = {3, 3, 5, 5, 3};
  int nk = (int)(sizeof ks / sizeof *ks), want[N], k = 0;
  cls_buffer x = buf_of(0, 1);
  for (int r = 0; r < nk; r++) {
    k = ks[r];
    tiny_chain(x, &k);
  }
  ct_download_ints(ctx, 0, x, want, N);
  cls_buffer y = buf_of(0, 1);
  cls_capture *cap = NULL;
  int idx;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_capture_param(ctx, &k, sizeof k, &idx));
  tiny_chain(y, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < nk; r++) {
    int kr = ks[r];
    CT_OK(cls_replay(ctx, cap, 1, &(cls_param){&kr, sizeof kr}));
  }
  expect_same(y, 0, want, "tiny chain with k 3 3 5 5 3");
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  ck_assert_uint_eq(st.recordings, has ? 3 : 0);
  ck_assert_uint_eq(st.enqueues, has ? (unsigned)nk : 0);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* Fault injection reaches the commands inside a command buffer: the
 * second inc, inside the run, fails the run at its enqueue; the run's
 * whole write set is tainted (w, written before the failing inc, too:
 * the run is the unit attribution can name) and a reader on another
 * stream is skipped.  On the plan w would be intact. */
static void fault_in_run_of(const char *spec, bool at_enqueue, bool plan) {
  setenv("CLS_CAPTURE", plan ? "plan" : "command-buffer", 1);
  open_ctx(spec);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  /* A run: a command buffer where the device has them, a plan run under
   * ranged attribution. */
  bool has = plan ? mode == CLS_ATTRIBUTION_RANGED : takes_cb();
  int zero = 0;
  cls_buffer x = ct_alloc(ctx, 0, NB), w = ct_alloc(ctx, 0, NB), z = ct_alloc(ctx, 1, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_fill(ctx, 0, w, 0, NB, &zero, sizeof zero));
  CT_OK(cls_fill(ctx, 0, x, 0, NB, &zero, sizeof zero));
  for (int j = 0; j < 3; j++)
    launch(0, "inc", 1, (cls_arg[]){CLS_INOUT(x)});
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(z)});
  CT_OK(cls_capture_end(ctx, &cap));
  ck_assert(has_runs(cap) == has);
  ck_assert(uses_cb(cap) == (has && !plan));
  /* A plan run over both streams (the event driver): the reader is
   * inside the run, whose failure it shares. */
  bool over = in_runs(cap) == 6;
  int rc = cls_replay(ctx, cap, 0, NULL);
  ck_assert_msg(rc < 0 || !at_enqueue || strcmp(cls_context_driver(ctx), "event") != 0,
                "replay: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, z, 0, v, NB, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  if (over)
    ck_assert_str_eq(fi.kernel, "capture #1 commands 0-5 (fill...)");
  else if (has)
    ck_assert_str_eq(fi.kernel, "capture #1 commands 0-4 (fill...)");
  else
    ck_assert_str_eq(fi.kernel, "inc");
  if (!over) {
    ck_assert_uint_ge(fi.nskips, 1);
    struct cls_skip_info si;
    CT_OK(cls_report_skip(r, 0, fi.nskips - 1, &si));
    ck_assert_str_eq(si.kernel, "ka");
    ck_assert_int_eq(si.stream, 1);
  }
  cls_report_free(r);
  if (has) {
    CT_ERR(cls_download(ctx, 0, w, 0, v, NB, NULL), CLS_ETAINTED);
  } else {
    ct_expect_ints(ctx, 0, w, N, 0);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}

static void fault_in_run(const char *spec, bool at_enqueue) {
  fault_in_run_of(spec, at_enqueue, false);
}

START_TEST(CB_fault_inside_a_run_taints_its_whole_write_set_and_skips_readers) {
  fault_in_run("enqueue:kernel=inc,nth=2", true);
}
END_TEST

/* The same on a plan run: the run is one command, so a fault of a member
 * fails it whole, at its enqueue or at its completion. */
START_TEST(plan_run_fault_inside_taints_its_whole_write_set_and_skips_readers) {
  fault_in_run_of("enqueue:kernel=inc,nth=2", true, true);
  fault_in_run_of("complete:kernel=inc,nth=2", false, true);
}
END_TEST

/* The same when the run's event fails (a completion fault on a command
 * inside it): found after the replay returned, the same attribution. */
START_TEST(CB_run_whose_event_fails_taints_its_whole_write_set) {
  fault_in_run("complete:kernel=inc,nth=2", false);
}
END_TEST

/* A relocated stream has a new queue: the run is recorded again against
 * it, never enqueued onto the retired one; the bytes stay right. */
START_TEST(CB_relocated_stream_records_against_its_new_queue) {
  force_cb();
  open_ctx(NULL);
  bool has = takes_cb();
  int k = 4, want[N];
  cls_buffer y;
  cls_capture *cap = tiny_chain_captured(&k, 1, 3, want, &y);
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  cl_command_queue before, after;
  CT_OK(cls_stream_queue(ctx, 0, &before));
  uint64_t gen;
  CT_OK(cls_stream_generation(ctx, 0, &gen));
  CT_OK(cls_stream_relocate(ctx, 0, 0, gen));
  CT_OK(cls_stream_queue(ctx, 0, &after));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  expect_same(y, 0, want, "tiny chain across a relocation");
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  ck_assert_uint_eq(st.enqueues, has ? 3 : 0);
  /* The recording holds the retired queue, so the new one cannot take
   * its address. */
  ck_assert_ptr_ne(after, before);
  ck_assert_uint_eq(st.recordings, has ? 2 : 0);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* Automatic relocation with recovery (docs/devices.md): a queue lost
 * inside a replay, the lost command runs again on the fresh queue and
 * the replay gives the bytes of a run without the loss.  Command buffers
 * forced: the capture replays on the plan (a command buffer is recorded
 * for one queue), and says so. */
START_TEST(recovery_replays_a_command_lost_inside_a_replay) {
  force_cb();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .relocate = "same",
                                  .fault = "lost:stream=0,op=launch,nth=18"};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
  int k = 6, want[N];
  cls_buffer y; /* launches 1-15 uncaptured */
  cls_capture *cap = tiny_chain_captured(&k, 1, 3, want, &y);
  struct cls_capture_stats cs;
  CT_OK(cls_capture_info(cap, &cs));
  ck_assert_str_eq(cs.backend, "plan");
  for (int r = 0; r < 3; r++) /* launch 18 meets the lost queue */
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  expect_same(y, 0, want, "tiny chain with a lost queue inside a replay");
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 0, &st));
  ck_assert_uint_eq(st.relocations, 1);
  ck_assert_uint_ge(st.replays, 1);
  uint64_t g = 0;
  CT_OK(cls_stream_generation(ctx, 0, &g));
  ck_assert_uint_eq(g, 1);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* CLS_CAPTURE takes auto, plan or command-buffer; anything else is a
 * configuration error at context creation, as the other CLS_* are. */
START_TEST(CLS_CAPTURE_malformed_is_ECONFIG_and_plan_never_records) {
  setenv("CLS_CAPTURE", "graph", 1);
  cls_context *c = NULL;
  CT_ERR(cls_context_create(&c, NULL), CLS_ECONFIG);
  ck_assert_ptr_null(c);
  ck_assert_ptr_nonnull(strstr(cls_last_error_detail(), "CLS_CAPTURE"));
  struct cls_capture_stats st;
  CT_ERR(cls_capture_info(NULL, &st), CLS_EINVAL);
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  cls_buffer x = buf_of(0, 1);
  int k = 1;
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  tiny_chain(x, &k);
  CT_OK(cls_capture_end(ctx, &cap));
  ck_assert(!uses_cb(cap)); /* plan: never command buffers */
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  struct cls_capture_stats ps;
  CT_OK(cls_capture_info(cap, &ps));
  ck_assert_str_eq(ps.backend, "plan");
  if (mode == CLS_ATTRIBUTION_RANGED) { /* the chain is one run of the plan */
    ck_assert_uint_eq(ps.runs, 1);
    ck_assert_uint_eq(ps.in_runs, ps.commands);
  }
  CT_ERR(cls_capture_info(cap, NULL), CLS_EINVAL);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Plan runs over several streams (the event driver, ranged            */
/* attribution, no relocation, deadline, guard or "lost" fault): one   */
/* run, one command on its first member's stream, its members on their */
/* own streams' queues ordered by events planned at capture.  Under    */
/* any other setting the same programs give the uncaptured behaviour.  */
/* ------------------------------------------------------------------ */

/* Whether this context plans runs over several streams: the event
 * driver or the scheduler, with ranged attribution (the cases below set no relocation,
 * deadline, guard mode or "lost" fault). */
static bool plans_multi(void) {
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  return (strcmp(cls_context_driver(ctx), "event") == 0 ||
          strcmp(cls_context_driver(ctx), "scheduler") == 0) &&
         mode == CLS_ATTRIBUTION_RANGED;
}

/* Whether streams 0..n-1 are all on one device. */
static bool one_device(int n) {
  int d0 = -1, d = -1;
  CT_OK(cls_stream_device(ctx, 0, &d0));
  for (int s = 1; s < n; s++) {
    CT_OK(cls_stream_device(ctx, s, &d));
    if (d != d0)
      return false;
  }
  return true;
}

/* Whether a run over streams 0..n-1, planned at capture, is enqueued as
 * one at replay: their queues are one (scheduler:interleave) or one each
 * (scheduler:sequential,queues=M with M below n shares them in part: the
 * run then goes command by command), on one device. */
static bool replays_multi(int n) {
  if (!plans_multi() || !one_device(n))
    return false;
  cl_command_queue q[CLS_MAX_STREAMS];
  size_t same = 0, pairs = 0;
  for (int s = 0; s < n; s++)
    CT_OK(cls_stream_queue(ctx, s, &q[s]));
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++, pairs++)
      same += q[a] == q[b];
  return same == 0 || same == pairs;
}

static struct cls_capture_stats cap_stats(const cls_capture *cap) {
  struct cls_capture_stats st;
  CT_OK(cls_capture_info(cap, &st));
  return st;
}

#define PP_PAIRS 20
#define MS_COMMANDS (2 * PP_PAIRS + 6)

/* The buffers of the multi-stream program: a ping-pong pair, then a fan's
 * source, its four consumers' outputs and the reducer's output. */
struct ms_bufs {
  cls_buffer a, b, src, out[4], res;
};

static struct ms_bufs ms_alloc(void) {
  struct ms_bufs m = {.a = buf_of(0, 2), .b = buf_of(1, 7), .src = buf_of(0, 1), .res = buf_of(5, 3)};
  for (int s = 0; s < 4; s++)
    m.out[s] = buf_of(s + 1, 10 * (s + 1));
  return m;
}

/* A ping-pong over streams 0 and 1 (each step reads what the other
 * stream's step wrote and overwrites what it read), then a fan: the
 * producer on stream 0, four consumers on streams 1-4, the reducer on
 * stream 5.  MS_COMMANDS launches; stream 1 has PP_PAIRS + 1. */
static void ms_program(const struct ms_bufs *m, int k) {
  for (int j = 0; j < PP_PAIRS; j++) {
    launch(0, "pp_ab", 2, (cls_arg[]){CLS_IN(m->a), CLS_OUT(m->b)});
    launch(1, "pp_ba", 2, (cls_arg[]){CLS_IN(m->b), CLS_OUT(m->a)});
  }
  launch(0, "chain_k", 2, (cls_arg[]){CLS_INOUT(m->src), CLS_SCALAR(k)});
  for (int s = 1; s <= 4; s++)
    launch(s, "mix_k", 3, (cls_arg[]){CLS_IN(m->src), CLS_INOUT(m->out[s - 1]), CLS_SCALAR(k)});
  launch(5, "red4", 5,
         (cls_arg[]){CLS_IN(m->out[0]), CLS_IN(m->out[1]), CLS_IN(m->out[2]), CLS_IN(m->out[3]),
                     CLS_INOUT(m->res)});
}

static void ms_expect_same(const struct ms_bufs *got, const struct ms_bufs *want) {
  int w[N];
  ct_download_ints(ctx, 2, want->a, w, N);
  expect_same(got->a, 3, w, "ping-pong a");
  ct_download_ints(ctx, 3, want->b, w, N);
  expect_same(got->b, 2, w, "ping-pong b");
  ct_download_ints(ctx, 1, want->src, w, N);
  expect_same(got->src, 4, w, "fan source");
  for (int s = 0; s < 4; s++) {
    ct_download_ints(ctx, 0, want->out[s], w, N);
    expect_same(got->out[s], 5 - s, w, "fan consumer");
  }
  ct_download_ints(ctx, 0, want->res, w, N);
  expect_same(got->res, 1, w, "fan reducer");
}

/* The program REPS times uncaptured on one set of buffers, captured once
 * on a second and replayed REPS times: the bytes agree.  Where runs over
 * several streams are planned the capture is one run of every command,
 * enqueued as one (multi_enqueue) at each replay where its six streams
 * are on one device, else command by command. */
#define MS_REPS 3
static void ms_replayed_equals_uncaptured(void) {
  struct ms_bufs u = ms_alloc(), c = ms_alloc();
  bool one = one_device(6);
  for (int r = 0; r < MS_REPS; r++)
    ms_program(&u, 5);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  ms_program(&c, 5);
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < MS_REPS; r++)
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  ms_expect_same(&c, &u);
  struct cls_capture_stats st = cap_stats(cap);
  ck_assert_uint_eq(st.commands, MS_COMMANDS);
  if (plans_multi() && one) {
    ck_assert_uint_eq(st.runs, 1);
    ck_assert_uint_eq(st.in_runs, st.commands);
    ck_assert_uint_eq(st.enqueues, replays_multi(6) ? MS_REPS : 0);
  } else { /* per stream, or per device (the streams alternate devices):
            * no two consecutive commands on one */
    ck_assert_uint_eq(st.runs, 0);
  }
  cls_capture_destroy(cap);
}

/* The run's members ordered among themselves as the program orders them
 * (a ping-pong: read after write and write after read across two
 * streams; a fan out and in over six): replayed three times, the bytes
 * equal the program's uncaptured.  Streams spread over two devices, the
 * run replays command by command: the same bytes. */
START_TEST(plan_run_over_streams_equals_uncaptured) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  ms_replayed_equals_uncaptured();
  close_ctx();
  int ndev = open_ctx_with(NULL, "all", 0);
  if (ndev > 1) {
    ck_assert(!one_device(6));
    ms_replayed_equals_uncaptured();
  }
  close_ctx();
  unforce();
}
END_TEST

/* A run spans at most 8 streams and 1024 commands: a fan over ten
 * streams is two runs, a ping-pong of 1200 launches two; the bytes equal
 * the program's uncaptured either way. */
#define LIM_FAN 10
#define LIM_PAIRS 600
static void lim_program(cls_buffer src, const cls_buffer *out, cls_buffer a, cls_buffer b,
                        bool fan) {
  if (fan) {
    int two = 2;
    launch(0, "chain_k", 2, (cls_arg[]){CLS_INOUT(src), CLS_SCALAR(two)});
    for (int s = 1; s < LIM_FAN; s++)
      launch(s, "mix_k", 3, (cls_arg[]){CLS_IN(src), CLS_INOUT(out[s - 1]), CLS_SCALAR(s)});
    return;
  }
  for (int j = 0; j < LIM_PAIRS; j++) {
    launch(0, "pp_ab", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
    launch(1, "pp_ba", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(a)});
  }
}

START_TEST(plan_run_over_streams_at_most_8_streams_and_1024_commands) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  for (int fan = 1; fan >= 0; fan--) {
    cls_buffer su = buf_of(0, 1), sc = buf_of(0, 1), ou[LIM_FAN - 1], oc[LIM_FAN - 1];
    for (int s = 0; s < LIM_FAN - 1; s++) {
      ou[s] = buf_of(s + 1, 10 * s);
      oc[s] = buf_of(s + 1, 10 * s);
    }
    cls_buffer au = buf_of(0, 3), bu = buf_of(1, 4), ac = buf_of(0, 3), bc = buf_of(1, 4);
    for (int r = 0; r < 2; r++)
      lim_program(su, ou, au, bu, fan);
    cls_capture *cap = NULL;
    CT_OK(cls_capture_begin(ctx));
    lim_program(sc, oc, ac, bc, fan);
    CT_OK(cls_capture_end(ctx, &cap));
    for (int r = 0; r < 2; r++)
      CT_OK(cls_replay(ctx, cap, 0, NULL));
    int w[N];
    if (fan) {
      ct_download_ints(ctx, 0, su, w, N);
      expect_same(sc, 1, w, "fan source");
      for (int s = 0; s < LIM_FAN - 1; s++) {
        ct_download_ints(ctx, 0, ou[s], w, N);
        expect_same(oc[s], 0, w, "fan output");
      }
    } else {
      ct_download_ints(ctx, 0, au, w, N);
      expect_same(ac, 1, w, "ping-pong a");
      ct_download_ints(ctx, 0, bu, w, N);
      expect_same(bc, 1, w, "ping-pong b");
    }
    struct cls_capture_stats st = cap_stats(cap);
    if (plans_multi()) {
      ck_assert_uint_eq(st.runs, 2);
      ck_assert_uint_eq(st.in_runs, st.commands);
    } else {
      ck_assert_uint_eq(st.runs, 0);
    }
    cls_capture_destroy(cap);
  }
  close_ctx();
  unforce();
}
END_TEST

/* fk (failing at its enqueue: the context's fault) on stream 1 into its
 * own fresh output: the failure's position, the stream's command count. */
static uint64_t fk_position(void) {
  cls_buffer in = buf_of(2, 0), out = ct_alloc(ctx, 2, NB);
  size_t g = N;
  cls_launch(ctx, 1, K("fk"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)});
  cls_sync(ctx, NULL);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 2, out, 0, v, NB, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.kernel, "fk");
  ck_assert_int_eq(fi.stream, 1);
  uint64_t pos = fi.position;
  cls_report_free(r);
  return pos;
}

/* Each member takes its position on its own stream and counts there as
 * an enqueue and a launch: per stream, the replay's counts equal the
 * uncaptured program's, and a failure after it on stream 1 has the
 * position it has after the program uncaptured. */
START_TEST(plan_run_over_streams_members_take_their_positions_and_counts) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx("enqueue:kernel=fk");
  struct ms_bufs u = ms_alloc(), c = ms_alloc();
  struct cls_stream_stats s0[6], s1[6], s2[6], s3[6];
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  ms_program(&c, 4);
  CT_OK(cls_capture_end(ctx, &cap));
  CT_OK(cls_sync(ctx, NULL));
  uint64_t p0 = fk_position();
  for (int s = 0; s < 6; s++)
    CT_OK(cls_stream_stats(ctx, s, &s0[s]));
  ms_program(&u, 4);
  for (int s = 0; s < 6; s++)
    CT_OK(cls_stream_stats(ctx, s, &s1[s]));
  uint64_t p1 = fk_position();
  for (int s = 0; s < 6; s++)
    CT_OK(cls_stream_stats(ctx, s, &s2[s]));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  for (int s = 0; s < 6; s++)
    CT_OK(cls_stream_stats(ctx, s, &s3[s]));
  uint64_t p2 = fk_position();
  if (plans_multi())
    ck_assert_uint_eq(in_runs(cap), MS_COMMANDS);
  for (int s = 0; s < 6; s++) {
    ck_assert_msg(s3[s].enqueues - s2[s].enqueues == s1[s].enqueues - s0[s].enqueues,
                  "stream %d: %llu enqueues replayed, %llu uncaptured", s,
                  (unsigned long long)(s3[s].enqueues - s2[s].enqueues),
                  (unsigned long long)(s1[s].enqueues - s0[s].enqueues));
    ck_assert_msg(s3[s].launches - s2[s].launches == s1[s].launches - s0[s].launches,
                  "stream %d: %llu launches replayed, %llu uncaptured", s,
                  (unsigned long long)(s3[s].launches - s2[s].launches),
                  (unsigned long long)(s1[s].launches - s0[s].launches));
  }
  ck_assert_uint_eq(s1[1].launches - s0[1].launches, PP_PAIRS + 1);
  ck_assert_uint_eq(s1[5].launches - s0[5].launches, 1);
  /* fk, then stream 1's PP_PAIRS + 1 launches, then fk. */
  ck_assert_uint_eq(p1 - p0, PP_PAIRS + 2);
  ck_assert_msg(p2 - p1 == p1 - p0, "fk at %llu after the replay, %llu after the program",
                (unsigned long long)(p2 - p1), (unsigned long long)(p1 - p0));
  ms_expect_same(&c, &u);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* slow2_k's steps per item, SLOW_OUTER * SLOW_INNER: enough on PoCL that
 * a missing wait shows (milliseconds); elsewhere under 65536, where
 * llvmpipe (rusticl) stops counting loops, nested ones included; few
 * under CLS_TEST_QUICK (oclgrind).  The bytes are checked everywhere. */
static int slow_outer(void) {
  return !ct_quick() &&
                 ct_icontains(ct_context_info(ctx).platform_name, "Portable Computing Language")
             ? 32
             : 1;
}
#define SLOW_OUTER slow_outer()
#define SLOW_INNER ct_scale(60000, 200)

/* After a replay, no sync: an uncaptured launch on a third stream reads
 * what the run's member on stream 1 wrote, and one on a fourth overwrites
 * what that member reads (slowly: slow2_k works before it reads).  Both
 * are ordered after the run's members on every stream: the reader gets
 * the member's bytes, and the member read the old bytes. */
START_TEST(plan_run_over_streams_later_commands_on_any_stream_are_ordered_after_it) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  int outer = SLOW_OUTER, inner = SLOW_INNER, iters = outer * inner;
  cls_buffer x = buf_of(0, 1), p = ct_alloc(ctx, 0, NB), q = ct_alloc(ctx, 1, NB);
  cls_buffer r = ct_written(ctx, 2, N, -1), z = buf_of(3, 5000);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "slow2_k", 4, (cls_arg[]){CLS_IN(x), CLS_OUT(p), CLS_SCALAR(outer), CLS_SCALAR(inner)});
  launch(1, "slow2_k", 4, (cls_arg[]){CLS_IN(p), CLS_OUT(q), CLS_SCALAR(outer), CLS_SCALAR(inner)});
  CT_OK(cls_capture_end(ctx, &cap));
  if (plans_multi())
    ck_assert_uint_eq(in_runs(cap), 2);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  launch(2, "ka", 2, (cls_arg[]){CLS_IN(q), CLS_OUT(r)});  /* reads q */
  launch(3, "fk", 2, (cls_arg[]){CLS_IN(z), CLS_OUT(p)});  /* overwrites p */
  int vp[N], vq[N], vr[N];
  ct_download_ints(ctx, 3, p, vp, N);
  ct_download_ints(ctx, 2, r, vr, N);
  ct_download_ints(ctx, 2, q, vq, N);
  for (int i = 0; i < N; i++) {
    int old_p = ct_slow_expect((uint32_t)i, iters, 1 + i);
    int want_q = ct_slow_expect((uint32_t)i, iters, old_p);
    ck_assert_msg(vp[i] == 5000 + i + 1, "p[%d] = %d after the overwrite", i, vp[i]);
    ck_assert_msg(vq[i] == want_q, "q[%d] = %d, %d expected (the member read p overwritten?)", i,
                  vq[i], want_q);
    ck_assert_msg(vr[i] == want_q + 2, "r[%d] = %d, %d expected (read q before its member?)", i,
                  vr[i], want_q + 2);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* Before a replay, no sync: an uncaptured slow launch on stream 3 writes
 * what the run's member on stream 1 reads, and one on stream 4 reads
 * (late: slow2_k works before it reads) what the run's member on stream 2
 * overwrites.  The run's members on every stream are ordered after
 * them, not only its first member: the reader member gets the new
 * bytes, the slow reader the old ones. */
START_TEST(plan_run_over_streams_members_are_ordered_after_earlier_commands_on_any_stream) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  int outer = SLOW_OUTER, inner = SLOW_INNER, iters = outer * inner;
  cls_buffer x = buf_of(0, 1), p = ct_alloc(ctx, 0, NB), y = buf_of(1, 300), q = ct_alloc(ctx, 1, NB);
  cls_buffer w = buf_of(2, 700), z = buf_of(3, 5000), v = ct_alloc(ctx, 4, NB);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(p)});
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(y), CLS_OUT(q)});
  launch(2, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(w)});
  CT_OK(cls_capture_end(ctx, &cap));
  if (plans_multi())
    ck_assert_uint_eq(in_runs(cap), 3);
  CT_OK(cls_sync(ctx, NULL));
  launch(3, "slow2_k", 4, (cls_arg[]){CLS_IN(z), CLS_OUT(y), CLS_SCALAR(outer), CLS_SCALAR(inner)}); /* writes y */
  launch(4, "slow2_k", 4, (cls_arg[]){CLS_IN(w), CLS_OUT(v), CLS_SCALAR(outer), CLS_SCALAR(inner)}); /* reads w */
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  int vq[N], vv[N], vw[N];
  ct_download_ints(ctx, 5, q, vq, N);
  ct_download_ints(ctx, 5, v, vv, N);
  ct_download_ints(ctx, 5, w, vw, N);
  for (int i = 0; i < N; i++) {
    int new_y = ct_slow_expect((uint32_t)i, iters, 5000 + i);
    ck_assert_msg(vq[i] == new_y + 2, "q[%d] = %d, %d expected (read y before its writer?)", i,
                  vq[i], new_y + 2);
    int want_v = ct_slow_expect((uint32_t)i, iters, 700 + i);
    ck_assert_msg(vv[i] == want_v, "v[%d] = %d, %d expected (w overwritten before read?)", i,
                  vv[i], want_v);
    ck_assert_int_eq(vw[i], 1 + i + 2);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* An input of the run tainted before the replay (fk failed at its
 * enqueue: the context's fault, outside the capture): the run replays
 * command by command, exactly, as uncaptured: its readers on stream 1
 * are skipped on fk's chain, the independent member on stream 2 runs. */
START_TEST(plan_run_over_streams_tainted_input_replays_command_by_command) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx("enqueue:kernel=fk");
  cls_buffer a = buf_of(0, 0), b = buf_of(0, 0), c = buf_of(1, 0), f = buf_of(1, 0);
  cls_buffer d = buf_of(2, 10), e = buf_of(2, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(1, "ka", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  launch(2, "ka", 2, (cls_arg[]){CLS_IN(d), CLS_OUT(e)});
  launch(1, "fk", 2, (cls_arg[]){CLS_IN(c), CLS_OUT(f)});
  CT_OK(cls_capture_end(ctx, &cap));
  bool multi = plans_multi();
  if (multi) {
    ck_assert_uint_eq(cap_stats(cap).runs, 1);
    ck_assert_uint_eq(in_runs(cap), 3);
  }
  /* fk's fault would fail the run's third member: the run as one command
   * would fail whole (e tainted); command by command, fk is skipped. */
  struct cls_stream_stats st0, st1;
  CT_OK(cls_stream_stats(ctx, 1, &st0));
  taint_b_then_replay(a, b, cap);
  ck_assert_ptr_null(strstr(cls_last_error_detail(), "as a whole"));
  CT_OK(cls_stream_stats(ctx, 1, &st1));
  ck_assert_uint_eq(st1.skips - st0.skips, 2);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, f, 0, v, NB, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.kernel, "fk");
  ck_assert_int_eq(fi.stream, 0);
  ck_assert_uint_eq(fi.skipped, 2);
  ck_assert_uint_eq(fi.nskips, 2);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_int_eq(si.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(si.kernel, "ka");
  ck_assert_int_eq(si.stream, 1);
  CT_OK(cls_report_skip(r, 0, 1, &si));
  ck_assert_int_eq(si.kind, CLS_SKIP_SKIPPED);
  ck_assert_str_eq(si.kernel, "fk");
  ck_assert_int_eq(si.stream, 1);
  cls_report_free(r);
  CT_ERR(cls_download(ctx, 1, c, 0, v, NB, NULL), CLS_ETAINTED);
  ct_download_ints(ctx, 0, e, v, N);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(v[i], 12 + i);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* The program of the fault cases over streams 0-3: ka on streams 0, 1
 * and 2, then ka on stream 1 again and fk on stream 3 (both reading
 * stream 1's first output): one run over four streams where they are
 * planned.  Captured and replayed once, or run once uncaptured, in a
 * context with fault `spec`; then each output's state: its failure's
 * kernel name ("" where it keeps its bytes, checked), into got[5], and
 * into *multi whether the replay enqueued the run as one (replays_multi). */
#define FS_OUTS 5
static void fault_on_stream_program(const char *spec, bool captured, bool at_enqueue,
                                    bool *multi, char got[FS_OUTS][96]) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(spec);
  bool planned = captured && plans_multi();
  *multi = planned && replays_multi(4);
  cls_buffer a = buf_of(0, 100), x0 = buf_of(0, 0), x1 = buf_of(1, 0), x2 = buf_of(2, 0);
  cls_buffer y1 = buf_of(1, 0), y3 = buf_of(3, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_sync(ctx, NULL));
  if (captured)
    CT_OK(cls_capture_begin(ctx));
  size_t g = N;
  int rc = 0;
  rc |= cls_launch(ctx, 0, K("ka"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x0)});
  rc |= cls_launch(ctx, 1, K("ka"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x1)});
  rc |= cls_launch(ctx, 2, K("ka"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x2)});
  rc |= cls_launch(ctx, 1, K("ka"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(x1), CLS_OUT(y1)});
  rc |= cls_launch(ctx, 3, K("fk"), 1, &g, NULL, 2, (cls_arg[]){CLS_IN(x1), CLS_OUT(y3)});
  if (captured) {
    ck_assert_int_eq(rc, 0);
    CT_OK(cls_capture_end(ctx, &cap));
    if (planned) {
      ck_assert_uint_eq(cap_stats(cap).runs, 1);
      ck_assert_uint_eq(in_runs(cap), 5);
    }
    rc = cls_replay(ctx, cap, 0, NULL);
    /* A scheduler hands the run over after the call's checks: its
     * enqueue failure is found as a failure after the call (F8). */
    if (*multi && at_enqueue && strcmp(cls_context_driver(ctx), "event") == 0)
      ck_assert_msg(rc == CLS_ELAUNCH || !strstr(spec, "stream=1"), "replay: %s: %s",
                    cls_err_name(rc), cls_last_error_detail());
  }
  if (!strstr(spec, "stream=1")) /* fires on nothing */
    ck_assert_msg(rc == 0, "%s: %s", cls_err_name(rc), cls_last_error_detail());
  cls_sync(ctx, NULL);
  cls_buffer outs[FS_OUTS] = {x0, x1, x2, y1, y3};
  const int want[FS_OUTS] = {102, 102, 102, 104, 103};
  for (int o = 0; o < FS_OUTS; o++) {
    int v[N];
    cls_report *r = NULL;
    rc = cls_download(ctx, 4, outs[o], 0, v, NB, &r);
    got[o][0] = 0;
    if (rc == 0) {
      CT_EXPECT_INTS(v, N, i, want[o] + (int)i);
      cls_report_free(r);
      continue;
    }
    ck_assert_msg(rc == CLS_ETAINTED, "output %d: %s", o, cls_err_name(rc));
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    if (strcmp(cls_context_driver(ctx), "event") == 0) /* a scheduler defers the enqueue */
      ck_assert_int_eq(fi.async, !at_enqueue);
    snprintf(got[o], sizeof got[o], "%s@%d", fi.kernel[0] ? fi.kernel : "(range)", fi.stream);
    cls_report_free(r);
  }
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}

/* The captured program's outputs against the uncaptured's, the fault
 * `spec` firing (or not) on ka's second launch on stream 1.  A run over
 * several streams is one command: its whole write set, on every stream,
 * carries its one failure, named by the run; elsewhere the outputs are
 * as uncaptured. */
static void fault_on_stream_of(const char *spec, bool at_enqueue, bool fires) {
  char unc[FS_OUTS][96], cap[FS_OUTS][96];
  bool multi, none;
  fault_on_stream_program(spec, false, at_enqueue, &none, unc);
  fault_on_stream_program(spec, true, at_enqueue, &multi, cap);
  /* Uncaptured, a fault that fires taints y1 (ka on stream 1, exactly
   * at the enqueue; in a range at completion); x0 keeps its bytes at
   * the enqueue. */
  ck_assert_msg(fires == (unc[3][0] != 0), "%s: y1 uncaptured: '%s'", spec, unc[3]);
  if (fires && at_enqueue) {
    ck_assert_str_eq(unc[3], "ka@1");
    ck_assert_str_eq(unc[0], "");
  }
  for (int o = 0; o < FS_OUTS; o++) {
    if (multi && fires)
      ck_assert_msg(strcmp(cap[o], "capture #1 commands 0-4 (ka...)@0") == 0,
                    "%s: output %d of the run: '%s'", spec, o, cap[o]);
    else
      ck_assert_msg(strcmp(cap[o], unc[o]) == 0, "%s: output %d: '%s' replayed, '%s' uncaptured",
                    spec, o, cap[o], unc[o]);
  }
}

/* Fault injection matches each member with its own stream and kernel: a
 * fault on a member of stream 1 (not the run's first stream) fails the
 * run as a whole, at its enqueue or found at its completion; one naming
 * stream 3 with a kernel no member of stream 3 runs does not fire. */
START_TEST(plan_run_over_streams_fault_on_a_member_of_another_stream_fails_the_run) {
  fault_on_stream_of("enqueue:kernel=ka,stream=1,nth=2", true, true);
  fault_on_stream_of("enqueue:kernel=ka,stream=3,nth=1", true, false);
  fault_on_stream_of("complete:kernel=ka,stream=1,nth=2", false, true);
  fault_on_stream_of("complete:kernel=ka,stream=3,nth=1", false, false);
}
END_TEST

/* Three launches on stream 0, three on stream 1 reading stream 0's
 * output, two on stream 2: one run over three streams, or three runs of
 * one stream each. */
static struct cls_capture_stats lost_fault_capture(const char *spec) {
  open_ctx(spec);
  int k = 3;
  cls_buffer x = buf_of(0, 1), y = buf_of(1, 2), z = buf_of(2, 3);
  cls_buffer x2 = buf_of(0, 1), y2 = buf_of(1, 2), z2 = buf_of(2, 3);
  cls_capture *cap = NULL;
  for (int pass = 0; pass < 2; pass++) {
    cls_buffer bx = pass ? x2 : x, by = pass ? y2 : y, bz = pass ? z2 : z;
    if (pass)
      CT_OK(cls_capture_begin(ctx));
    for (int reps = 0; reps < (pass ? 1 : 2); reps++) {
      for (int j = 0; j < 3; j++)
        launch(0, "chain_k", 2, (cls_arg[]){CLS_INOUT(bx), CLS_SCALAR(k)});
      for (int j = 0; j < 3; j++)
        launch(1, "mix_k", 3, (cls_arg[]){CLS_IN(bx), CLS_INOUT(by), CLS_SCALAR(k)});
      for (int j = 0; j < 2; j++)
        launch(2, "mix_k", 3, (cls_arg[]){CLS_IN(by), CLS_INOUT(bz), CLS_SCALAR(k)});
    }
    if (pass)
      CT_OK(cls_capture_end(ctx, &cap));
  }
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  int w[N];
  ct_download_ints(ctx, 0, x, w, N);
  expect_same(x2, 1, w, "stream 0's chain");
  ct_download_ints(ctx, 0, y, w, N);
  expect_same(y2, 2, w, "stream 1's mix");
  ct_download_ints(ctx, 0, z, w, N);
  expect_same(z2, 0, w, "stream 2's mix");
  struct cls_capture_stats st = cap_stats(cap);
  cls_capture_destroy(cap);
  close_ctx();
  return st;
}

/* A "lost" fault in CLS_FAULT (here one that never fires) acts on a
 * stream's queue as a whole, which a run over several streams would
 * bypass: the capture's runs are per stream, the bytes right. */
START_TEST(plan_run_over_streams_not_with_a_lost_fault) {
  setenv("CLS_CAPTURE", "plan", 1);
  struct cls_capture_stats with = lost_fault_capture("lost:stream=0,kernel=chain_k,nth=1000000");
  struct cls_capture_stats without = lost_fault_capture(NULL);
  open_ctx(NULL);
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  bool multi = plans_multi();
  close_ctx();
  ck_assert_uint_eq(with.commands, 8);
  if (mode == CLS_ATTRIBUTION_RANGED) {
    ck_assert_uint_eq(with.runs, 3);
    ck_assert_uint_eq(with.in_runs, 8);
    ck_assert_uint_eq(without.runs, multi ? 1 : 3);
    ck_assert_uint_eq(without.in_runs, 8);
  } else {
    ck_assert_uint_eq(with.runs, 0);
    ck_assert_uint_eq(without.runs, 0);
  }
  unforce();
}
END_TEST

/* A foreign command on stream 2 whose event (a user event) fails, set by
 * another thread, while a replayed run over streams 0 and 1 waits behind
 * it: the run's members of stream 1 wait explicitly on events of stream
 * 0 (its members, and its start marker where the run has one), which
 * fail in turn.  Nothing aborts
 * or hangs (PoCL fails them on the thread that sets the status); the
 * run's outputs carry the failure.  The thread sets it once the replay
 * returned and the callback ran (a driver that defers runs it when the
 * sync below hands the stream over), so the outcome does not depend on
 * timing. */
static _Atomic(cl_event) late_user;
static atomic_int late_replayed;
static cl_int late_user_cb(const struct cls_foreign_call *c, cl_event *ev) {
  cl_context mine;
  cl_int rc = clGetCommandQueueInfo(c->queue, CL_QUEUE_CONTEXT, sizeof mine, &mine, NULL);
  if (rc != CL_SUCCESS)
    return rc;
  cl_event u = clCreateUserEvent(mine, &rc);
  if (rc != CL_SUCCESS)
    return rc;
  clRetainEvent(u); /* one for clstream, one for the setter */
  *ev = u;
  atomic_store(&late_user, u);
  return CL_SUCCESS;
}
static void *late_setter(void *arg) {
  (void)arg;
  while (!atomic_load(&late_replayed) || !atomic_load(&late_user))
    usleep(1000);
  usleep(20000); /* let the run's members queue up behind it */
  clSetUserEventStatus(atomic_load(&late_user), -5);
  return NULL;
}

/* The replay of a capture over `streams` streams (1: every launch on
 * stream 0) behind a foreign command on stream 2 whose user event fails
 * later, set by another thread: the outputs carry the failure.  `lead`:
 * stream 1 first runs a launch of its own (reading nothing the run
 * writes), so that a run over the two streams has a start marker, kept
 * like every member's event (a ping-pong alone needs none). */
static void behind_late_failure(int streams, bool lead) {
  open_ctx(NULL);
  int t1 = streams > 1 ? 1 : 0;
  cls_buffer x = buf_of(2, 1), a = buf_of(0, 0), b = buf_of(t1, 0), c = buf_of(0, 0);
  cls_buffer y = buf_of(t1, 5), z = buf_of(t1, 0);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(x), CLS_OUT(a)});
  if (lead)
    launch(t1, "ka", 2, (cls_arg[]){CLS_IN(y), CLS_OUT(z)});
  launch(t1, "ka", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  launch(0, "ka", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  launch(t1, "ka", 2, (cls_arg[]){CLS_IN(c), CLS_OUT(b)});
  CT_OK(cls_capture_end(ctx, &cap));
  atomic_store(&late_user, NULL);
  atomic_store(&late_replayed, 0);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, late_setter, NULL), 0);
  CT_OK(cls_foreign(ctx, 2, "late", late_user_cb, NULL, 1, (cls_arg[]){CLS_OUT(x)}));
  int rc = cls_replay(ctx, cap, 0, NULL);
  atomic_store(&late_replayed, 1);
  ck_assert_msg(rc == 0, "replay: %s: %s", cls_err_name(rc), cls_last_error_detail());
  cls_sync(ctx, NULL);
  pthread_join(t, NULL);
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, c, 0, v, NB, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(fi.stream == 2 && strstr(fi.message, "late"),
                "root cause on stream %d, '%s': not the foreign command", fi.stream, fi.message);
  cls_report_free(r);
  CT_ERR(cls_download(ctx, t1, b, 0, v, NB, NULL), CLS_ETAINTED);
  /* The lead launch reads nothing tainted: its output is the run's, and
   * carries the run's failure, where the run is one command; command by
   * command it ran on clean input, unless its queue is the foreign
   * command's (interleave) on a device that fails what is queued behind
   * a failed command (PoCL; rusticl runs it). */
  if (lead) {
    cl_command_queue q1, q2;
    CT_OK(cls_stream_queue(ctx, t1, &q1));
    CT_OK(cls_stream_queue(ctx, 2, &q2));
    struct cls_quirks qk = {.version = CLS_QUIRKS_VERSION};
    CT_OK(cls_context_quirks(ctx, &qk));
    bool behind = q1 == q2 && qk.queue_poisoned == 1;
    ck_assert_int_eq(cls_download(ctx, t1, z, 0, v, NB, NULL),
                     replays_multi(2) || behind ? CLS_ETAINTED : CLS_OK);
  }
  /* Replayed again once the failure is known: skipped whole (F2). */
  CT_ERR(cls_replay(ctx, cap, 0, NULL), CLS_ESKIPPED);
  CT_ERR(cls_download(ctx, 0, a, 0, v, NB, NULL), CLS_ETAINTED);
  if (lead) /* on the plan, command by command (F2 stays exact): it ran */
    ct_download_ints(ctx, t1, z, v, N);
  clReleaseEvent(atomic_load(&late_user));
  cls_capture_destroy(cap);
  close_ctx();
}

START_TEST(plan_run_over_streams_behind_a_foreign_event_that_fails_later) {
  setenv("CLS_CAPTURE", "plan", 1);
  behind_late_failure(2, false);
  behind_late_failure(2, true);
  unforce();
}
END_TEST

START_TEST(F2_replay_behind_a_foreign_event_that_fails_later) { behind_late_failure(1, false); }
END_TEST

/* The ICD loader's clEnqueueNDRangeKernel, interposed: this program's
 * definition is the one libclstream's calls reach (the core is linked
 * into the program or loaded after it; a fully static program, which no
 * ICD loader allows, would find no next definition and abort).  While
 * fail_nth_launch is positive, the call that brings it to 0 fails with
 * CL_OUT_OF_RESOURCES and enqueues nothing, as a runtime out of
 * resources does; every other call goes to the loader's. */
static atomic_int fail_nth_launch;

/* Whether this call is the one to fail: counts fail_nth_launch down to
 * 0, once per call, however many threads call. */
static bool launch_fails_now(void) {
  int n = atomic_load(&fail_nth_launch);
  while (n > 0 && !atomic_compare_exchange_weak(&fail_nth_launch, &n, n - 1))
    ;
  return n == 1;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                       cl_uint dims, const size_t *offset,
                                                       const size_t *global,
                                                       const size_t *local, cl_uint nwait,
                                                       const cl_event *wait, cl_event *ev) {
  typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                               const size_t *, const size_t *, cl_uint, const cl_event *,
                               cl_event *);
  static _Atomic(enqueue_fn) real;
  enqueue_fn f = atomic_load(&real);
  if (!f) {
    *(void **)&f = dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel");
    if (!f) {
      fprintf(stderr, "test-capture: no clEnqueueNDRangeKernel after this program's\n");
      abort();
    }
    atomic_store(&real, f);
  }
  if (launch_fails_now())
    return CL_OUT_OF_RESOURCES;
  return f(q, k, dims, offset, global, local, nwait, wait, ev);
}

/* The program of the enqueue-failure cases, on a, b (ping-pong between
 * streams 0 and 1) and c, d: four ping-pong pairs; or, `lone`, first a
 * launch on stream 1 that touches only c and d, so that stream 1's first
 * member waits for no other member and the run has its start marker. */
static void fail_program(cls_buffer a, cls_buffer b, cls_buffer c, cls_buffer d, bool lone) {
  if (lone)
    launch(1, "fk", 2, (cls_arg[]){CLS_IN(c), CLS_OUT(d)});
  for (int j = 0; j < 4; j++) {
    launch(0, "pp_ab", 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
    launch(1, "pp_ba", 2, (cls_arg[]){CLS_IN(b), CLS_OUT(a)});
  }
}

/* A foreign command that enqueues nothing. */
static cl_int no_op(const struct cls_foreign_call *call, cl_event *ev) {
  (void)call;
  (void)ev;
  return CL_SUCCESS;
}

/* The launch numbered nth of the program's replay fails to enqueue: see
 * plan_run_over_streams_a_member_failing_to_enqueue_fails_the_run.
 * `keep`: a foreign call first (a no-op on stream 2), after which the
 * run's members keep their events until complete (docs/capture.md). */
static void member_fails(bool lone, int nth, bool keep) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  if (keep)
    CT_OK(cls_foreign(ctx, 2, "no-op", no_op, NULL, 0, NULL));
  cls_buffer a = buf_of(0, 1), b = buf_of(1, 2), c = buf_of(1, 3), d = buf_of(1, 4);
  cls_buffer a2 = buf_of(0, 1), b2 = buf_of(1, 2), c2 = buf_of(1, 3), d2 = buf_of(1, 4);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  fail_program(a, b, c, d, lone);
  CT_OK(cls_capture_end(ctx, &cap));
  if (plans_multi())
    ck_assert_uint_eq(in_runs(cap), lone ? 9 : 8);
  CT_OK(cls_sync(ctx, NULL));
  atomic_store(&fail_nth_launch, nth);
  int rc = cls_replay(ctx, cap, 0, NULL);
  if (strcmp(cls_context_driver(ctx), "event") == 0)
    ck_assert_msg(rc == CLS_ELAUNCH, "replay: %s: %s", cls_err_name(rc),
                  cls_last_error_detail());
  else /* found at a hand-over: after the call, or by a later command's */
    ck_assert_msg(rc == CLS_OK || rc == CLS_ELAUNCH || rc == CLS_ESKIPPED, "replay: %s",
                  cls_err_name(rc));
  cls_sync(ctx, NULL);
  ck_assert_int_eq(atomic_load(&fail_nth_launch), 0);
  /* A planned run is one command: its whole write set carries the
   * failure, and d keeps its bytes where the run has no lone launch.
   * Command by command (exact attribution), the failed launch's output
   * does, and what read it; which launch is the nth to reach the queue
   * is the driver's (a scheduler hands a stream's list over at once), so
   * there each output is either clean or carries this failure, and one
   * does. */
  bool one = plans_multi();
  cls_buffer outs[3] = {a, b, d};
  bool want[3] = {true, true, lone};
  int found = 0;
  for (int o = 0; o < 3; o++) {
    int v[N];
    cls_report *r = NULL;
    rc = cls_download(ctx, o == 0 ? 1 : 0, outs[o], 0, v, NB, &r);
    if (one)
      ck_assert_msg(rc == (want[o] ? CLS_ETAINTED : CLS_OK), "output %d: %s", o,
                    cls_err_name(rc));
    else
      ck_assert_msg(rc == CLS_OK || rc == CLS_ETAINTED, "output %d: %s", o, cls_err_name(rc));
    if (rc == CLS_OK) {
      cls_report_free(r);
      continue;
    }
    found++;
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    ck_assert_int_eq(fi.cl_status, CL_OUT_OF_RESOURCES);
    cls_report_free(r);
  }
  ck_assert_int_gt(found, 0);
  /* Fresh inputs: the next replay runs whole. */
  int v[N];
  seq(v, 1);
  ct_upload_ints(ctx, 0, a, v, N);
  seq(v, 2);
  ct_upload_ints(ctx, 1, b, v, N);
  seq(v, 3);
  ct_upload_ints(ctx, 1, c, v, N);
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  fail_program(a2, b2, c2, d2, lone);
  int w[N];
  ct_download_ints(ctx, 0, a2, w, N);
  expect_same(a, 1, w, "ping-pong a");
  ct_download_ints(ctx, 1, b2, w, N);
  expect_same(b, 0, w, "ping-pong b");
  ct_download_ints(ctx, 1, d2, w, N);
  expect_same(d, 0, w, "lone d");
  atomic_store(&fail_nth_launch, 0);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}

/* A member whose enqueue fails in the middle of a run (the runtime out
 * of resources) fails the run as a whole: no crash, the replay's error at
 * the call under the event driver (a scheduler finds it at a later
 * hand-over, F8), the run's write set on both streams tainted with
 * CL_OUT_OF_RESOURCES.  What was enqueued is waited for and the run's
 * events released -- the start marker's too, where the run has one and
 * the failure comes before its last waiter -- so the next replay, on
 * fresh inputs, runs whole and gives the uncaptured bytes.  Where runs
 * are not planned (exact attribution) the replay goes command by command
 * and the same holds of the launch that failed and those that read its
 * output.  The same after a foreign call, where every member's event and
 * the start marker's are kept until complete. */
START_TEST(plan_run_over_streams_a_member_failing_to_enqueue_fails_the_run) {
  for (int keep = 0; keep < 2; keep++) {
    member_fails(false, 5, keep); /* pp_ab of the third pair */
    member_fails(true, 1, keep);  /* the lone launch: the start marker is live */
    member_fails(true, 4, keep);  /* pp_ba of the second pair */
  }
  member_fails(true, 2, true);  /* right after the lone launch */
  member_fails(false, 8, true); /* the run's last member */
}
END_TEST

/* cls_stream_sync of a stream that is not the run's first waits for its
 * members: right after it, the member's output read through a queue of
 * our own that waits for nothing has the member's bytes (the member is
 * slow and waits for a slow member of stream 0 first). */
START_TEST(plan_run_over_streams_stream_sync_waits_for_its_members) {
  setenv("CLS_CAPTURE", "plan", 1);
  open_ctx(NULL);
  int outer = SLOW_OUTER, inner = SLOW_INNER, iters = outer * inner;
  cls_buffer x = buf_of(0, 1), p = ct_alloc(ctx, 0, NB), q = ct_written(ctx, 2, N, -7);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  launch(0, "slow2_k", 4, (cls_arg[]){CLS_IN(x), CLS_OUT(p), CLS_SCALAR(outer), CLS_SCALAR(inner)});
  launch(2, "slow2_k", 4, (cls_arg[]){CLS_IN(p), CLS_OUT(q), CLS_SCALAR(outer), CLS_SCALAR(inner)});
  CT_OK(cls_capture_end(ctx, &cap));
  if (plans_multi())
    ck_assert_uint_eq(in_runs(cap), 2);
  CT_OK(cls_sync(ctx, NULL));
  cl_command_queue sq;
  CT_OK(cls_stream_queue(ctx, 2, &sq));
  cl_context clctx;
  cl_device_id dev;
  ck_assert_int_eq(clGetCommandQueueInfo(sq, CL_QUEUE_CONTEXT, sizeof clctx, &clctx, NULL),
                   CL_SUCCESS);
  ck_assert_int_eq(clGetCommandQueueInfo(sq, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL),
                   CL_SUCCESS);
  cl_int err;
  cl_command_queue own = clCreateCommandQueue(clctx, dev, 0, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  cl_mem mem;
  size_t off, size;
  CT_OK(cls_buffer_mem(ctx, q, &mem, &off, &size));
  /* PoCL orders a read of a buffer after the commands that use it on
   * any queue: the bytes are looked at through a mapping instead, taken
   * before the replay (a CPU device: the mapping is the buffer's
   * memory), read right after the sync with no OpenCL call. */
  cl_device_type type = 0;
  clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  bool direct = (type & CL_DEVICE_TYPE_CPU) &&
                ct_icontains(ct_context_info(ctx).platform_name, "Portable Computing Language");
  const int *mapped = NULL;
  if (direct) {
    mapped = clEnqueueMapBuffer(own, mem, CL_TRUE, CL_MAP_READ, off, NB, 0, NULL, NULL, &err);
    ck_assert_int_eq(err, CL_SUCCESS);
    ck_assert_int_eq(mapped[0], -7);
  }
  CT_OK(cls_replay(ctx, cap, 0, NULL));
  CT_OK(cls_stream_sync(ctx, 2, NULL));
  int v[N];
  if (direct)
    memcpy(v, mapped, NB);
  else
    ck_assert_int_eq(clEnqueueReadBuffer(own, mem, CL_TRUE, off, NB, v, 0, NULL, NULL),
                     CL_SUCCESS);
  for (int i = 0; i < N; i++) {
    int want = ct_slow_expect((uint32_t)i, iters, ct_slow_expect((uint32_t)i, iters, 1 + i));
    ck_assert_msg(v[i] == want, "q[%d] = %d right after stream 2's sync, %d expected", i, v[i],
                  want);
  }
  if (mapped) {
    clEnqueueUnmapMemObject(own, mem, (void *)mapped, 0, NULL, NULL);
    clFinish(own);
  }
  clReleaseCommandQueue(own);
  cls_capture_destroy(cap);
  close_ctx();
  unforce();
}
END_TEST

/* The shared cases once per backend: as CLS_CAPTURE says (auto by
 * default), and forced onto command buffers. */
#define CT_ADD_BOTH(suite, fn)                                                \
  do {                                                                        \
    CT_ADD(suite, fn);                                                        \
    TCase *ct_tc_ = ct_tcase(#fn "_cb");                                      \
    tcase_add_checked_fixture(ct_tc_, force_cb, unforce);                     \
    tcase_add_test(ct_tc_, fn);                                               \
    suite_add_tcase((suite), ct_tc_);                                         \
  } while (0)

int main(void) {
  /* Two PoCL devices of one platform for the two-device case (the other
   * cases use the first); the other vendors ignore it. */
  setenv("POCL_DEVICES", "pthread pthread", 0);
  ct_require_device();
  Suite *s = suite_create("capture");
  CT_ADD_BOTH(s, F1_replay_tiny_chain_equals_uncaptured_with_a_changing_scalar);
  CT_ADD_BOTH(s, F7_replay_ping_pong_over_two_streams_equals_uncaptured);
  CT_ADD_BOTH(s, F7_replay_fan_over_four_streams_equals_uncaptured);
  CT_ADD_BOTH(s, replay_unmarked_scalars_keep_their_captured_value);
  CT_ADD_BOTH(s, replay_runs_captured_transfers_on_host_memory_of_the_replay);
  CT_ADD_BOTH(s, F12_capture_checks_arguments_at_capture);
  CT_ADD_BOTH(s, capture_refuses_blocking_transfers_at_capture);
  CT_ADD_BOTH(s, replay_refuses_wrong_parameters_and_enqueues_nothing);
  CT_ADD_BOTH(s, ESTALE_replay_after_a_buffer_was_freed_enqueues_nothing);
  CT_ADD_BOTH(s, replay_after_the_slot_tables_moved_finds_its_buffers);
  CT_ADD_BOTH(s, replay_swaps_buffer_parameters_for_ping_pong);
  CT_ADD_BOTH(s, F2_replay_failed_command_taints_its_writes_and_skips_readers);
  CT_ADD_BOTH(s, F2_replay_whose_inputs_are_tainted_is_skipped);
  CT_ADD_BOTH(s, F2_replay_skips_only_what_the_tainted_input_reaches);
  CT_ADD_BOTH(s, F7_replay_over_two_devices_and_after_a_relocation_equals_uncaptured);
  CT_ADD(s, plan_run_is_one_command_and_equals_uncaptured);
  CT_ADD(s, plan_run_members_take_their_positions);
  CT_ADD(s, plan_run_takes_new_parameter_values_in_place);
  CT_ADD(s, plan_run_fault_inside_taints_its_whole_write_set_and_skips_readers);
  CT_ADD(s, plan_run_over_streams_equals_uncaptured);
  CT_ADD(s, plan_run_over_streams_at_most_8_streams_and_1024_commands);
  CT_ADD(s, plan_run_over_streams_members_take_their_positions_and_counts);
  CT_ADD(s, plan_run_over_streams_later_commands_on_any_stream_are_ordered_after_it);
  CT_ADD(s, plan_run_over_streams_members_are_ordered_after_earlier_commands_on_any_stream);
  CT_ADD(s, plan_run_over_streams_tainted_input_replays_command_by_command);
  CT_ADD(s, plan_run_over_streams_fault_on_a_member_of_another_stream_fails_the_run);
  CT_ADD(s, plan_run_over_streams_not_with_a_lost_fault);
  CT_ADD(s, plan_run_over_streams_stream_sync_waits_for_its_members);
  CT_ADD(s, plan_run_over_streams_a_member_failing_to_enqueue_fails_the_run);
  CT_ADD(s, plan_run_over_streams_behind_a_foreign_event_that_fails_later);
  CT_ADD_BOTH(s, F2_replay_behind_a_foreign_event_that_fails_later);
  CT_ADD_BOTH(s, F4_a_partial_write_inside_a_replay_keeps_a_ranged_failure);
  CT_ADD_BOTH(s, F2_a_member_reading_and_writing_one_buffer_reads_it);
  CT_ADD_BOTH(s, F8a_ranged_attribution_names_a_range_of_the_replay);
  CT_ADD_BOTH(s, F8a_exact_attribution_pins_the_command_of_the_replay);
  CT_ADD_BOTH(s, F7_two_threads_replaying_one_capture_never_interleave);
  CT_ADD(s, CB_run_is_recorded_once_and_enqueued_once_per_replay);
  CT_ADD(s, CB_parameter_change_records_again_and_same_value_does_not);
  CT_ADD(s, CB_fault_inside_a_run_taints_its_whole_write_set_and_skips_readers);
  CT_ADD(s, CB_run_whose_event_fails_taints_its_whole_write_set);
  CT_ADD(s, CB_relocated_stream_records_against_its_new_queue);
  CT_ADD(s, CLS_CAPTURE_malformed_is_ECONFIG_and_plan_never_records);
  CT_ADD(s, recovery_replays_a_command_lost_inside_a_replay);
  CT_ADD(s, whole_skip_over_a_write_whose_failure_is_found_later);
  return ct_run(s);
}
