/* Capture and replay (issue 34): a captured sequence replayed gives the
 * bytes the same program gives uncaptured, on any driver; commands are
 * checked at capture (F12 refusals there); the failure rules hold inside
 * a replay (F2 skips and chains, a failed command taints its write set);
 * a replay whose buffer was freed is refused before anything is enqueued
 * (CLS_ESTALE); parameters of the wrong count or size are refused; two
 * threads replaying one capture are ordered, never interleaved. */
#include "common.h"

#include <pthread.h>
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
    "kernel void inc(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void tally(global const int *x, global int *y, int k) {\n"
    "  size_t i = get_global_id(0); y[i] += x[i] == k;\n"
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

/* Whether stream 0's device offers cl_khr_command_buffer (raw OpenCL:
 * what the command-buffer backend must find on its own). */
static bool device_has_cb(void) {
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, 0, &q));
  cl_device_id d;
  ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL), CL_SUCCESS);
  char ext[8192] = "";
  clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  for (char *p = strstr(ext, "cl_khr_command_buffer"); p; p = strstr(p + 1, "cl_khr_command_buffer")) {
    char after = p[sizeof "cl_khr_command_buffer" - 1];
    if (after == ' ' || after == 0)
      return true;
  }
  return false;
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
  bool has = device_has_cb();
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
  int v[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, c, 0, v, NB, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.kernel, "fk");
  ck_assert_uint_eq(fi.position, 8);
  cls_report_free(r);
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
  bool has = device_has_cb();
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
  bool has = plan ? mode == CLS_ATTRIBUTION_RANGED : device_has_cb();
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
  bool has = device_has_cb();
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
  return ct_run(s);
}
