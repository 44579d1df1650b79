/* Guard mode (CLS_GUARD): an out-of-bounds kernel write is caught at the
 * guards around the buffer it crossed, and a CLS_OUT destination a launch
 * left partly unwritten is caught by its canary on the download.  Each
 * failure is a record like any other: reads of what it reached fail with
 * CLS_ETAINTED, their root CLS_EGUARD. */
#include "common.h"
#include "gate.h"

#include <stdint.h>
#include <unistd.h>

#define GUARD_SRC                                                             \
  "__kernel void poke(__global int *a, int at, int v) { a[at] = v; }\n"       \
  "__kernel void part(__global int *o, int n) {\n"                           \
  "  int i = get_global_id(0); if (i < n / 2) o[i] = i + 1; }\n"              \
  "__kernel void full(__global int *o) { int i = get_global_id(0); o[i] = i; }\n" \
  "__kernel void twice(__global const int *a, __global int *o) {\n"           \
  "  int i = get_global_id(0); o[i] = 2 * a[i]; }\n"                           \
  "__kernel void sneaky(__global int *in, __global int *o) {\n"               \
  "  int i = get_global_id(0); o[i] = in[i] + 1; in[i] = 0; }\n"             \
  "__kernel void honest(__global int *in, __global int *o) {\n"               \
  "  int i = get_global_id(0); o[i] = in[i] + 1; }\n"                         \
  "__kernel void advance(__global int *dst, __global int *src) {\n"             \
  "  int i = get_global_id(0); dst[i] = src[i] + 1; }\n"                        \
  "__kernel void stray(__global int *in, __global int *o, int at) {\n"          \
  "  int i = get_global_id(0); o[i] = in[i] + 1; if (i == 0) in[at] = 7; }\n"

enum { N = 16 };
static cls_context *ctx;
static cls_kernel *poke, *part, *full, *twice;

static cls_context *guarded(int guard) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = guard};
  return ct_context_opts(&o);
}

static void setup(void) {
  ctx = guarded(1);
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  poke = ct_get_kernel(ctx, p, "poke");
  part = ct_get_kernel(ctx, p, "part");
  full = ct_get_kernel(ctx, p, "full");
  twice = ct_get_kernel(ctx, p, "twice");
}
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

/* The root a download of b[0..bytes) reports, copied out. */
struct root {
  int status;
  char message[256];
  char chain[256]; /* the skip chain's kernels, each followed by ';' */
};
static struct root root_of(int stream, cls_buffer b, size_t bytes) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, bytes, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download returned %s: %s", cls_err_name(rc),
                cls_last_error_detail());
  ck_assert_ptr_nonnull(r);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  struct root out = {.status = fi.status};
  snprintf(out.message, sizeof out.message, "%s", fi.message);
  for (size_t i = 0; i < fi.nskips; i++) {
    struct cls_skip_info si;
    CT_OK(cls_report_skip(r, 0, i, &si));
    size_t len = strlen(out.chain);
    snprintf(out.chain + len, sizeof out.chain - len, "%s;", si.kernel);
  }
  cls_report_free(r);
  return out;
}

static void expect_guard_root(int stream, cls_buffer b, const char *what) {
  struct root r = root_of(stream, b, N * sizeof(int));
  ck_assert_msg(r.status == CLS_EGUARD, "root status %s, message '%s'", cls_err_name(r.status),
                r.message);
  ck_assert_msg(strstr(r.message, what), "root '%s' does not say '%s'", r.message, what);
}

/* The fixture's context again, guarded, over a gate (gate.h) that holds
 * gt->gated's launches: its program, with `poke` looked up anew. */
static cls_program *gated(struct gate *gt) {
  cls_context_destroy(ctx);
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = 1,
                                  .factory = &gate_factory, .factory_data = gt};
  ctx = ct_context_opts(&o);
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  poke = ct_get_kernel(ctx, p, "poke");
  return p;
}

static void poke_at(int stream, cls_buffer b, int at) {
  int v = 0x5eed;
  cls_arg a[] = {CLS_INOUT(b), CLS_SCALAR(at), CLS_SCALAR(v)};
  size_t g[1] = {1};
  CT_OK(cls_launch(ctx, stream, poke, 1, g, NULL, 3, a));
}

START_TEST(guard_write_past_the_end_taints_the_buffer_and_its_neighbour) {
  cls_buffer a = ct_written(ctx, 0, N, 1), b = ct_written(ctx, 0, N, 2);
  poke_at(0, a, N); /* one int past a's end */
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  expect_guard_root(0, a, "past the end of");
  expect_guard_root(0, a, "the first at offset 64) by 'poke' on stream 0 at position 3");
  expect_guard_root(1, b, "past the end of");
}
END_TEST

START_TEST(guard_write_before_the_start_is_caught) {
  cls_buffer a = ct_written(ctx, 0, N, 1);
  poke_at(0, a, -1);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  expect_guard_root(0, a, "before the start of");
}
END_TEST

START_TEST(guard_writes_in_bounds_leave_every_buffer_good) {
  cls_buffer a = ct_written(ctx, 0, N, 1), b = ct_written(ctx, 0, N, 2);
  poke_at(0, a, 0);
  poke_at(0, a, N - 1);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  int got[N];
  ct_download_ints(ctx, 1, a, got, N);
  ck_assert_int_eq(got[0], 0x5eed);
  ck_assert_int_eq(got[N - 1], 0x5eed);
  ck_assert_int_eq(got[1], 1);
  ct_download_ints(ctx, 1, b, got, N);
  ck_assert_int_eq(got[0], 2);
}
END_TEST

/* F8: a launch on another stream that read the crossed buffer before the
 * guard was found damaged passes the failure on.  The gate holds the
 * crossing launch, so the reader is enqueued before it can have run. */
START_TEST(guard_failure_reaches_what_read_the_buffer_F8) {
  struct gate gt = {.gated = "poke"};
  cls_program *p = gated(&gt);
  twice = ct_get_kernel(ctx, p, "twice");
  cls_buffer a = ct_written(ctx, 0, N, 1), c = ct_alloc(ctx, 1, N * sizeof(int));
  poke_at(0, a, N + 1);
  cls_arg t[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 1, twice, 1, g, NULL, 2, t));
  ck_assert_uint_gt(gt.held, 0); /* the crossing launch was held */
  gate_open(&gt);
  CT_OK(cls_sync(ctx, NULL));
  expect_guard_root(1, c, "past the end of");
  cls_context_destroy(ctx);
  ctx = NULL;
  gate_release(&gt);
}
END_TEST

/* The guard is rewritten once checked: a second crossing is a new record. */
START_TEST(guard_is_restored_after_a_crossing) {
  cls_buffer a = ct_written(ctx, 0, N, 1);
  poke_at(0, a, N);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  expect_guard_root(0, a, "past the end of");
  CT_OK(cls_upload(ctx, 0, a, 0, (int[N]){0}, N * sizeof(int))); /* good again */
  poke_at(0, a, 3);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  ck_assert_int_eq(got[3], 0x5eed);
}
END_TEST

/* A new buffer that 'part' (declared CLS_OUT) wrote the first half of. */
static cls_buffer partly_written(void) {
  cls_buffer o = ct_alloc(ctx, 0, N * sizeof(int));
  int n = N;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(n)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, part, 1, g, NULL, 2, a));
  return o;
}

START_TEST(guard_canary_names_bytes_a_CLS_OUT_launch_never_wrote) {
  cls_buffer o = partly_written();
  /* The half it wrote reads good: the check is on what a read returns. */
  int got[N];
  CT_OK(cls_download(ctx, 1, o, 0, got, N / 2 * sizeof(int), NULL));
  ck_assert_int_eq(got[N / 2 - 1], N / 2);
  struct root r = root_of(1, o, N * sizeof(int));
  ck_assert_int_eq(r.status, CLS_EGUARD);
  char want[64];
  snprintf(want, sizeof want, "the first at offset %d", (int)(N / 2 * sizeof(int)));
  ck_assert_msg(strstr(r.message, "'part'") && strstr(r.message, "CLS_OUT") &&
                    strstr(r.message, want),
                "root '%s'", r.message);
}
END_TEST

START_TEST(guard_canary_is_silent_when_the_launch_wrote_everything) {
  cls_buffer o = ct_alloc(ctx, 0, N * sizeof(int));
  cls_arg a[] = {CLS_OUT(o)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, full, 1, g, NULL, 1, a));
  int got[N];
  ct_download_ints(ctx, 1, o, got, N);
  ck_assert_int_eq(got[N - 1], N - 1);
  /* The canary fill is clstream's own: the user's count is one command. */
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, 0, &st));
  ck_assert_uint_eq(st.launches, 1);
  ck_assert_uint_eq(st.enqueues, 1);
}
END_TEST

/* Tiles at global offsets: the first launch writing the buffer binds it
 * CLS_OUT, the later ones CLS_INOUT (each keeps what the others wrote),
 * and the canary stays silent.  Bound CLS_OUT each, the second tile's
 * canary fill erases the first tile (CLS_OUT says the launch writes the
 * whole buffer): the read names the bytes and says to bind CLS_INOUT. */
START_TEST(guard_tiles_at_global_offsets_bound_CLS_INOUT_after_the_first_pass) {
  size_t g[1] = {N / 2}, o0[1] = {0}, o1[1] = {N / 2};
  for (int wrong = 0; wrong < 2; wrong++) {
    cls_buffer b = ct_alloc(ctx, 0, N * sizeof(int));
    CT_OK(cls_launch_offset(ctx, 0, full, 1, o0, g, NULL, 1, (cls_arg[]){CLS_OUT(b)}));
    CT_OK(cls_launch_offset(ctx, 1, full, 1, o1, g, NULL, 1,
                            (cls_arg[]){wrong ? CLS_OUT(b) : CLS_INOUT(b)}));
    if (!wrong) {
      int got[N];
      ct_download_ints(ctx, 0, b, got, N);
      CT_EXPECT_INTS(got, (size_t)N, i, (int)i);
      continue;
    }
    struct root r = root_of(0, b, N * sizeof(int));
    ck_assert_int_eq(r.status, CLS_EGUARD);
    ck_assert_msg(strstr(r.message, "the first at offset 0") && strstr(r.message, "CLS_INOUT"),
                  "root '%s'", r.message);
  }
}
END_TEST

/* An upload after the partial launch is the last write: no canary check. */
START_TEST(guard_canary_check_ends_with_the_next_write) {
  cls_buffer o = partly_written();
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = 0xcbcbcbcb; /* the canary's own bytes, written by the user */
  CT_OK(cls_upload(ctx, 0, o, 0, v, sizeof v));
  int got[N];
  ct_download_ints(ctx, 0, o, got, N);
  ck_assert_int_eq(got[0], (int)0xcbcbcbcb);
}
END_TEST

START_TEST(guard_setting_is_parsed_strictly) {
  setenv("CLS_GUARD", "2", 1);
  cls_context *c = NULL;
  CT_ERR(cls_context_create(&c, NULL), CLS_ECONFIG);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(cls_last_error_detail(), "CLS_GUARD"), "%s", cls_last_error_detail());
  setenv("CLS_GUARD", "1", 1);
  CT_OK(cls_context_create(&c, NULL));
  cls_context_destroy(c);
  unsetenv("CLS_GUARD");
}
END_TEST

/* Without guard mode the same crossing is not seen: this is what the mode
 * is for (documented in docs/guard.md). */
START_TEST(guard_off_leaves_out_of_bounds_writes_unseen) {
  cls_context_destroy(ctx);
  ctx = guarded(-1);
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  poke = ct_get_kernel(ctx, p, "poke");
  cls_buffer a = ct_written(ctx, 0, N, 1), b = ct_written(ctx, 0, N, 2);
  poke_at(0, a, N); /* lands in the page: b, or the padding after a */
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  ct_download_ints(ctx, 0, b, got, N);
}
END_TEST

/* F11: a kernel that really writes an argument declared CLS_IN (its
 * signature allows it: not const).  Without guard mode the declaration is
 * trusted, as raw OpenCL would run it: the launch and the reads succeed,
 * and the buffer holds what the kernel wrote.  Guard mode proves it: the
 * CLS_IN buffer, the launch's output and what read the buffer after it
 * fail with a CLS_EGUARD root naming the kernel and the argument. */
static void sneaky_launch(cls_kernel *k, int stream, cls_buffer in, cls_buffer o) {
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, stream, k, 1, g, NULL, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(o)}));
}

START_TEST(F11_guard_catches_a_write_through_CLS_IN) {
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  cls_kernel *sneaky = ct_get_kernel(ctx, p, "sneaky");
  twice = ct_get_kernel(ctx, p, "twice");
  cls_buffer in = ct_written(ctx, 0, N, 5), o = ct_alloc(ctx, 1, N * sizeof(int)),
             later = ct_alloc(ctx, 2, N * sizeof(int));
  sneaky_launch(sneaky, 1, in, o);
  size_t g[1] = {N};
  /* A reader of `in` on another stream, after it: it ran on what the
   * kernel wrote.  Whether the guard's finding is known by the time it is
   * enqueued depends on timing (a driver may have polled sneaky finished):
   * known, the launch is skipped at once and says so; not yet, it is
   * accepted and tainted later.  What its output reads does not depend on
   * it. */
  int rc = cls_launch(ctx, 2, twice, 1, g, NULL, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(later)});
  ck_assert_msg(rc == CLS_OK || rc == CLS_ESKIPPED, "reader: %s", cls_err_name(rc));
  CT_OK(cls_sync(ctx, NULL));
  struct root r = root_of(0, in, N * sizeof(int));
  ck_assert_int_eq(r.status, CLS_EGUARD);
  ck_assert_msg(strstr(r.message, "kernel 'sneaky' wrote argument 0 ('in'), declared CLS_IN") &&
                    strstr(r.message, "CLS_INOUT"),
                "root: %s", r.message);
  ck_assert_int_eq(root_of(1, o, N * sizeof(int)).status, CLS_EGUARD);
  r = root_of(2, later, N * sizeof(int));
  ck_assert_int_eq(r.status, CLS_EGUARD);
  /* The chain names the reader, not guard mode's own copy of `in`, which
   * also read it (found porting Rodinia's backprop). */
  ck_assert_msg(strcmp(r.chain, "twice;") == 0, "chain: %s", r.chain);
  /* Written again by a declared writer, the buffer is good (F4). */
  CT_OK(cls_fill(ctx, 0, in, 0, N * sizeof(int), &(int){3}, sizeof(int)));
  ct_expect_ints(ctx, 0, in, N, 3);
}
END_TEST

START_TEST(F11_guard_is_silent_for_a_kernel_that_only_reads) {
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  cls_kernel *honest = ct_get_kernel(ctx, p, "honest");
  cls_buffer in = ct_written(ctx, 0, N, 5), o = ct_alloc(ctx, 1, N * sizeof(int));
  for (int i = 0; i < 3; i++)
    sneaky_launch(honest, 1, in, o);
  ct_expect_ints(ctx, 1, o, N, 6);
  ct_expect_ints(ctx, 0, in, N, 5);
}
END_TEST

START_TEST(F11_without_guard_the_declaration_is_trusted) {
  cls_context_destroy(ctx);
  ctx = guarded(-1);
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  cls_kernel *sneaky = ct_get_kernel(ctx, p, "sneaky");
  cls_buffer in = ct_written(ctx, 0, N, 5), o = ct_alloc(ctx, 1, N * sizeof(int));
  sneaky_launch(sneaky, 1, in, o);
  CT_OK(cls_sync(ctx, NULL));
  ct_expect_ints(ctx, 1, o, N, 6);
  ct_expect_ints(ctx, 0, in, N, 0); /* what the kernel wrote: documented, unchecked */
}
END_TEST

/* One buffer given as destination and source, as the vendor samples'
 * in-place calls do (CLS_OUT(b) and CLS_IN(b) in one launch): guard mode
 * fills no canary into what the launch reads, and does not take the
 * write through the source for one through a CLS_IN the launch did not
 * declare.  The canary and F11's check still hold for the other
 * arguments: a launch with two buffers keeps both. */
START_TEST(guard_one_buffer_as_destination_and_source_is_the_launch_s_own_write) {
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  cls_kernel *advance = ct_get_kernel(ctx, p, "advance");
  cls_buffer b = ct_written(ctx, 0, N, 5), o = ct_alloc(ctx, 1, N * sizeof(int));
  size_t g[1] = {N};
  for (int rep = 0; rep < 3; rep++)
    CT_OK(cls_launch(ctx, 0, advance, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_IN(b)}));
  ct_expect_ints(ctx, 0, b, N, 8);
  /* Two buffers: the source stays unwritten, the destination written. */
  CT_OK(cls_launch(ctx, 1, advance, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(o), CLS_IN(b)}));
  ct_expect_ints(ctx, 1, o, N, 9);
  ct_expect_ints(ctx, 0, b, N, 8);
  /* And a write through a source bound alone is still caught. */
  CT_OK(cls_launch(ctx, 1, advance, 1, g, NULL, 2, (cls_arg[]){CLS_IN(b), CLS_IN(o)}));
  CT_OK(cls_sync(ctx, NULL));
  struct root r = root_of(0, b, N * sizeof(int));
  ck_assert_msg(r.status == CLS_EGUARD && strstr(r.message, "'advance' wrote argument 0 ('dst')"),
                "root %s: %s", cls_err_name(r.status), r.message);
}
END_TEST

/* A kernel that writes past the end of a buffer it was given CLS_IN (its
 * argument is not const, so it can): the buffer's guards are checked
 * after this launch too, and the record names it, not the buffer's last
 * or next declared writer.  The launch's output and the neighbour the
 * write reached take it; the buffer's own bytes, unchanged (F11 compares
 * them), read good, and so does a later in-bounds write of it. */
START_TEST(guard_write_past_a_CLS_IN_buffer_names_the_launch_that_made_it) {
  cls_program *p = ct_build(ctx, GUARD_SRC, NULL);
  cls_kernel *stray = ct_get_kernel(ctx, p, "stray");
  cls_buffer in = ct_written(ctx, 0, N, 5), next = ct_written(ctx, 0, N, 9),
             o = ct_alloc(ctx, 1, N * sizeof(int));
  size_t g[1] = {N};
  int at = N;
  CT_OK(cls_launch(ctx, 1, stray, 1, g, NULL, 3,
                   (cls_arg[]){CLS_IN(in), CLS_OUT(o), CLS_SCALAR(at)}));
  CT_OK(cls_sync(ctx, NULL));
  poke_at(0, in, 0); /* a declared writer after the crossing */
  CT_OK(cls_sync(ctx, NULL));
  struct root r = root_of(1, o, N * sizeof(int));
  ck_assert_msg(r.status == CLS_EGUARD && strstr(r.message, "past the end of") &&
                    strstr(r.message, "by 'stray' on stream 1"),
                "root %s: %s", cls_err_name(r.status), r.message);
  r = root_of(0, next, N * sizeof(int));
  ck_assert_msg(r.status == CLS_EGUARD && strstr(r.message, "by 'stray'"), "root %s: %s",
                cls_err_name(r.status), r.message);
  int got[N];
  ct_download_ints(ctx, 0, in, got, N);
  ck_assert_int_eq(got[0], 0x5eed);
  for (int i = 1; i < N; i++)
    ck_assert_int_eq(got[i], 5);
}
END_TEST

/* A damaged guard is read once its first candidate is seen complete; a
 * launch enqueued after it that may write the same buffer may have run by
 * then, so the record names it too ("or a later launch up to").  The gate
 * holds that later launch, on the same stream (ordering it after stray on
 * another stream would poll stray's, which may see stray complete and
 * read its guards before the later launch is enqueued): enqueued, it
 * cannot complete before stray's guards are read, however fast the
 * device, where the vendor runs stray ahead of it (PoCL; below). */
START_TEST(guard_names_a_later_enqueued_launch_that_could_have_crossed) {
  struct gate gt = {.gated = "poke"};
  cls_program *p = gated(&gt);
  cls_kernel *stray = ct_get_kernel(ctx, p, "stray");
  cls_buffer in = ct_written(ctx, 0, N, 5), out = ct_alloc(ctx, 0, N * sizeof(int));
  size_t g[1] = {N};
  int at = N;
  CT_OK(cls_launch(ctx, 0, stray, 1, g, NULL, 3,
                   (cls_arg[]){CLS_IN(in), CLS_OUT(out), CLS_SCALAR(at)}));
  poke_at(0, in, 0); /* a declared writer of `in`, after stray */
  if (!strcmp(cls_context_driver(ctx), "event"))
    ck_assert_uint_gt(gt.held, 0);
  if (gt.held) {
    /* Both on the queue, poke behind the gate: polls (cls_check does not
     * wait) until stray is seen complete and its guards are read.  PoCL
     * runs what an in-order queue holds ahead of a command waiting on a
     * user event; rusticl and oclgrind hold the whole queue (and run
     * nothing unflushed), so there stray runs once the gate opens and
     * the polls end after about 2 s with nothing seen. */
    int rc = CLS_OK;
    for (int i = 0; i < 2000 && rc == CLS_OK; i++) {
      rc = cls_check(ctx, 1, &out, NULL);
      if (rc == CLS_OK)
        usleep(1000);
    }
    ck_assert_msg(rc == CLS_OK || rc == CLS_ETAINTED, "cls_check: %s", cls_err_name(rc));
  }
  /* Where the driver kept both until a sync (the scheduler's), they run
   * at the sync, and the record names poke whether its poll sees it
   * complete or not. */
  gate_open(&gt);
  CT_OK(cls_sync(ctx, NULL));
  struct root r = root_of(0, out, N * sizeof(int));
  ck_assert_msg(r.status == CLS_EGUARD && strstr(r.message, "past the end of") &&
                    strstr(r.message, "by 'stray' on stream 0 at position 2") &&
                    strstr(r.message, "or a later launch up to 'poke' on stream 0 at position 3"),
                "root %s: %s", cls_err_name(r.status), r.message);
  /* poke's own check, once it ran in bounds, found the guards rewritten
   * and whole: `in` holds its write and stray's input bytes. */
  int got[N];
  ct_download_ints(ctx, 0, in, got, N);
  ck_assert_int_eq(got[0], 0x5eed);
  for (int i = 1; i < N; i++)
    ck_assert_int_eq(got[i], 5);
  cls_context_destroy(ctx);
  ctx = NULL;
  gate_release(&gt);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("guard");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(guard_write_past_the_end_taints_the_buffer_and_its_neighbour);
  ADD(guard_write_before_the_start_is_caught);
  ADD(guard_writes_in_bounds_leave_every_buffer_good);
  ADD(guard_failure_reaches_what_read_the_buffer_F8);
  ADD(guard_is_restored_after_a_crossing);
  ADD(guard_canary_names_bytes_a_CLS_OUT_launch_never_wrote);
  ADD(guard_canary_is_silent_when_the_launch_wrote_everything);
  ADD(guard_tiles_at_global_offsets_bound_CLS_INOUT_after_the_first_pass);
  ADD(guard_canary_check_ends_with_the_next_write);
  ADD(guard_setting_is_parsed_strictly);
  ADD(guard_off_leaves_out_of_bounds_writes_unseen);
  ADD(F11_guard_catches_a_write_through_CLS_IN);
  ADD(F11_guard_is_silent_for_a_kernel_that_only_reads);
  ADD(F11_without_guard_the_declaration_is_trusted);
  ADD(guard_one_buffer_as_destination_and_source_is_the_launch_s_own_write);
  ADD(guard_write_past_a_CLS_IN_buffer_names_the_launch_that_made_it);
  ADD(guard_names_a_later_enqueued_launch_that_could_have_crossed);
#undef ADD
  return ct_run(s);
}
