/* Misuse: NULL pointers, bad handles, bad stream ids, bad ranges and bad
 * configuration strings are rejected with the documented code, never a
 * crash, and the context keeps working after each. */
#include "common.h"

#include <stdint.h>

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *copy_k;

static void setup(void) {
  ctx = ct_context();
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
}
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static void assert_context_works(void) { ct_assert_context_works(ctx, fill_k, 0); }

/* Every operation taking a buffer, given `bad`, returns `want` (or, when
 * want2 is nonzero, one of want and want2).  `good` is a live buffer of 16
 * ints. */
static void assert_every_buffer_op_rejects(cls_buffer bad, cls_buffer good, int want,
                                           int want2) {
  int host[16] = {0};
  size_t sz = 12345;
  int rc;
  const int pat = 1;
  size_t g[1] = {16};
#define CHECK(call)                                                             \
  do {                                                                          \
    rc = (call);                                                                \
    ck_assert_msg(rc == want || (want2 && rc == want2),                         \
                  "%s with handle 0x%016llx: expected %s%s%s, got %s (%d): %s", #call, \
                  (unsigned long long)bad.bits, cls_err_name(want), want2 ? " or " : "", \
                  want2 ? cls_err_name(want2) : "", cls_err_name(rc), rc,       \
                  cls_last_error_detail());                                     \
  } while (0)
  CHECK(cls_buffer_size(ctx, bad, &sz));
  CHECK(cls_upload(ctx, 0, bad, 0, host, sizeof host));
  CHECK(cls_upload_async(ctx, 0, bad, 0, host, sizeof host));
  CHECK(cls_download(ctx, 0, bad, 0, host, sizeof host, NULL));
  CHECK(cls_download_async(ctx, 0, bad, 0, host, sizeof host));
  CHECK(cls_copy(ctx, 0, bad, 0, good, 0, sizeof host));
  CHECK(cls_copy(ctx, 0, good, 0, bad, 0, sizeof host));
  CHECK(cls_fill(ctx, 0, bad, 0, sizeof host, &pat, sizeof pat));
  cls_arg out_bad[] = {CLS_OUT(bad), CLS_SCALAR(pat)};
  CHECK(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, out_bad));
  cls_arg in_bad[] = {CLS_IN(bad), CLS_OUT(good)};
  CHECK(cls_launch(ctx, 0, copy_k, 1, g, NULL, 2, in_bad));
  int launch_rc = rc;
  CHECK(cls_free(ctx, bad));
#undef CHECK
  ck_assert_uint_eq(sz, 12345); /* not written on error */
  CT_OK(cls_sync(ctx, NULL));
  /* F12: good was the destination of the refused copy from `bad` and of
   * the refused copy_k launch reading it: it carries the last refusal. */
  ct_expect_refused(ctx, 0, good, launch_rc, "launch", "copy_k");
  assert_context_works();
}

/* ------------------------------------------------------------------ */
/* NULL pointers                                                       */
/* ------------------------------------------------------------------ */

START_TEST(null_context_is_einval) {
  cls_buffer b = CLS_BUFFER_NULL, good = ct_written(ctx, 0, 16, 1);
  int host[16];
  size_t sz, g[1] = {16};
  const int pat = 0;
  struct cls_stream_stats st;
  struct cls_device_info info;
  cls_program *p = NULL;
  cls_kernel *k = NULL;
  cls_arg a[] = {CLS_OUT(good), CLS_SCALAR(pat)};
  CT_ERR(cls_alloc(NULL, 0, 16, &b), CLS_EINVAL);
  CT_ERR(cls_free(NULL, good), CLS_EINVAL);
  CT_ERR(cls_buffer_size(NULL, good, &sz), CLS_EINVAL);
  CT_ERR(cls_upload(NULL, 0, good, 0, host, sizeof host), CLS_EINVAL);
  CT_ERR(cls_upload_async(NULL, 0, good, 0, host, sizeof host), CLS_EINVAL);
  CT_ERR(cls_download(NULL, 0, good, 0, host, sizeof host, NULL), CLS_EINVAL);
  CT_ERR(cls_download_async(NULL, 0, good, 0, host, sizeof host), CLS_EINVAL);
  CT_ERR(cls_copy(NULL, 0, good, 0, good, 0, 4), CLS_EINVAL);
  CT_ERR(cls_fill(NULL, 0, good, 0, 4, &pat, 4), CLS_EINVAL);
  CT_ERR(cls_check(NULL, 1, &good, NULL), CLS_EINVAL);
  CT_ERR(cls_program_build(NULL, CT_FILL_SRC, NULL, &p), CLS_EINVAL);
  CT_ERR(cls_program_release(NULL, prog), CLS_EINVAL);
  CT_ERR(cls_kernel_get(NULL, prog, "fill_k", &k), CLS_EINVAL);
  CT_ERR(cls_launch(NULL, 0, fill_k, 1, g, NULL, 2, a), CLS_EINVAL);
  CT_ERR(cls_stream_sync(NULL, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_sync(NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_stream_stats(NULL, 0, &st), CLS_EINVAL);
  CT_ERR(cls_stats_reset(NULL), CLS_EINVAL);
  CT_ERR(cls_context_device(NULL, &info), CLS_EINVAL);
  CT_ERR(cls_set_logger(NULL, CLS_LOG_OFF, NULL, NULL), CLS_EINVAL);
  assert_context_works();
  /* good was not freed by cls_free(NULL, good). */
  CT_OK(cls_buffer_size(ctx, good, &sz));
  ck_assert_uint_eq(sz, 16 * sizeof(int));
}
END_TEST

START_TEST(null_out_pointers_are_einval) {
  cls_buffer good = ct_written(ctx, 0, 16, 1);
  const int pat = 0;
  CT_ERR(cls_alloc(ctx, 0, 16, NULL), CLS_EINVAL);
  CT_ERR(cls_buffer_size(ctx, good, NULL), CLS_EINVAL);
  CT_ERR(cls_upload(ctx, 0, good, 0, NULL, 16), CLS_EINVAL);
  CT_ERR(cls_upload_async(ctx, 0, good, 0, NULL, 16), CLS_EINVAL);
  CT_ERR(cls_download(ctx, 0, good, 0, NULL, 16, NULL), CLS_EINVAL);
  CT_ERR(cls_download_async(ctx, 0, good, 0, NULL, 16), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, good, 0, 16, NULL, 4), CLS_EINVAL);
  CT_ERR(cls_check(ctx, 1, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_stream_stats(ctx, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_context_device(ctx, NULL), CLS_EINVAL);
  CT_ERR(cls_context_create(NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_device_list(NULL, 0, NULL), CLS_EINVAL);
  size_t n;
  CT_ERR(cls_device_list(NULL, 4, &n), CLS_EINVAL);
  CT_ERR(cls_device_select(NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_device_select("0:0", NULL), CLS_EINVAL);
  (void)pat;
  assert_context_works();
}
END_TEST

START_TEST(null_program_and_kernel_arguments_are_einval) {
  cls_program *p = (cls_program *)&p;
  cls_kernel *k = NULL;
  CT_ERR(cls_program_build(ctx, NULL, NULL, &p), CLS_EINVAL);
  CT_ERR(cls_program_build(ctx, CT_FILL_SRC, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_program_release(ctx, NULL), CLS_EINVAL);
  CT_ERR(cls_kernel_get(ctx, NULL, "fill_k", &k), CLS_EINVAL);
  CT_ERR(cls_kernel_get(ctx, prog, NULL, &k), CLS_EINVAL);
  CT_ERR(cls_kernel_get(ctx, prog, "fill_k", NULL), CLS_EINVAL);
  CT_ERR(cls_kernel_num_args(NULL), CLS_EINVAL);
  cls_buffer o = ct_written(ctx, 0, 16, 0);
  int v = 1;
  size_t g[1] = {16};
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, NULL, 1, g, NULL, 2, a), CLS_EINVAL);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, NULL, NULL, 2, a), CLS_EINVAL);
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, NULL), CLS_EINVAL);
  assert_context_works();
}
END_TEST

START_TEST(destroy_null_and_report_free_null_are_fine) {
  cls_context_destroy(NULL);
  cls_report_free(NULL);
  assert_context_works();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad handles                                                         */
/* ------------------------------------------------------------------ */

START_TEST(null_handle_is_enull) {
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  assert_every_buffer_op_rejects(CLS_BUFFER_NULL, good, CLS_ENULL, 0);
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &CLS_BUFFER_NULL, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_bad_handles(r), 1);
  cls_buffer h;
  int why = 0;
  CT_OK(cls_report_bad_handle(r, 0, &h, &why));
  ck_assert_int_eq(why, CLS_ENULL);
  cls_report_free(r);
}
END_TEST

START_TEST(freed_handle_is_estale) {
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  cls_buffer b = ct_written(ctx, 0, 16, 5);
  CT_OK(cls_free(ctx, b));
  assert_every_buffer_op_rejects(b, good, CLS_ESTALE, 0);
  /* Double free, explicitly. */
  CT_ERR(cls_free(ctx, b), CLS_ESTALE);
}
END_TEST

START_TEST(freed_handle_stays_stale_after_its_slot_is_reused) {
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  cls_buffer b = ct_written(ctx, 0, 16, 5);
  CT_OK(cls_free(ctx, b));
  /* New buffers, likely in b's slot. */
  cls_buffer n[8];
  for (int i = 0; i < 8; i++) {
    n[i] = ct_written(ctx, 0, 16, 100 + i);
    ck_assert_msg(n[i].bits != b.bits, "a new buffer got the freed handle's bits");
  }
  assert_every_buffer_op_rejects(b, good, CLS_ESTALE, 0);
  /* The new buffers are untouched. */
  for (int i = 0; i < 8; i++) {
    int got[16];
    ct_download_ints(ctx, 0, n[i], got, 16);
    CT_EXPECT_INTS(got, (size_t)16, k, 100 + i);
  }
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &b, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_bad_handles(r), 1);
  cls_buffer h;
  int why = 0;
  CT_OK(cls_report_bad_handle(r, 0, &h, &why));
  ck_assert_int_eq(why, CLS_ESTALE);
  ck_assert(h.bits == b.bits);
  cls_report_free(r);
}
END_TEST

START_TEST(handle_of_another_context_is_eforeign) {
  cls_context *other = ct_context();
  cls_buffer theirs = ct_alloc(other, 0, 16 * sizeof(int));
  const int v = 9;
  CT_OK(cls_fill(other, 0, theirs, 0, 16 * sizeof(int), &v, sizeof v));
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  assert_every_buffer_op_rejects(theirs, good, CLS_EFOREIGN, 0);
  /* The other context's buffer is untouched, and ours is foreign there. */
  int got[16];
  ct_download_ints(other, 0, theirs, got, 16);
  CT_EXPECT_INTS(got, (size_t)16, i, 9);
  size_t sz;
  CT_ERR(cls_buffer_size(other, good, &sz), CLS_EFOREIGN);
  CT_ERR(cls_free(other, good), CLS_EFOREIGN);
  cls_context_destroy(other);
  assert_context_works();
  CT_OK(cls_buffer_size(ctx, good, &sz));
}
END_TEST

START_TEST(handle_of_a_destroyed_context_is_rejected) {
  cls_context *other = ct_context();
  cls_buffer theirs = ct_alloc(other, 0, 64);
  cls_context_destroy(other);
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  assert_every_buffer_op_rejects(theirs, good, CLS_EFOREIGN, CLS_ESTALE);
}
END_TEST

START_TEST(garbage_handle_bits_are_rejected) {
  cls_buffer good = ct_written(ctx, 0, 16, 77);
  cls_buffer g1 = {0xdeadbeefcafef00dull};
  assert_every_buffer_op_rejects(g1, good, CLS_ESTALE, CLS_EFOREIGN);
  cls_arg in_g1[] = {CLS_IN(g1), CLS_OUT(good)};
  size_t g[1] = {16};
  int rc1 = cls_launch(ctx, 0, copy_k, 1, g, NULL, 2, in_g1);
  /* More patterns, some built from a live handle: any rejection, no crash. */
  const uint64_t patterns[] = {~0ull,
                               1,
                               0x8000000000000000ull,
                               good.bits ^ 1,
                               good.bits ^ (1ull << 20),
                               good.bits ^ (1ull << 40),
                               good.bits ^ (1ull << 63),
                               good.bits + 0x100000000ull,
                               good.bits | 0xffffffffull};
  for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
    cls_buffer h = {patterns[i]};
    if (h.bits == good.bits)
      continue;
    size_t sz = 0;
    int rc = cls_buffer_size(ctx, h, &sz);
    ck_assert_msg(rc == CLS_ESTALE || rc == CLS_EFOREIGN || rc == CLS_ENULL,
                  "cls_buffer_size(0x%016llx) returned %s", (unsigned long long)h.bits,
                  cls_err_name(rc));
    int host[4];
    rc = cls_download(ctx, 0, h, 0, host, sizeof host, NULL);
    ck_assert_msg(rc == CLS_ESTALE || rc == CLS_EFOREIGN || rc == CLS_ENULL,
                  "cls_download(0x%016llx) returned %s", (unsigned long long)h.bits,
                  cls_err_name(rc));
    rc = cls_free(ctx, h);
    ck_assert_msg(rc == CLS_ESTALE || rc == CLS_EFOREIGN || rc == CLS_ENULL,
                  "cls_free(0x%016llx) returned %s", (unsigned long long)h.bits,
                  cls_err_name(rc));
  }
  assert_context_works();
  /* The rejections of the loop only named h; good keeps the record the
   * first part left (F12). */
  ct_expect_refused(ctx, 0, good, rc1, "launch", "copy_k");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Stream ids, ranges, sizes                                           */
/* ------------------------------------------------------------------ */

START_TEST(bad_stream_ids_are_estream) {
  cls_buffer good = ct_written(ctx, 0, 16, 77), other = ct_written(ctx, 0, 16, 1);
  int host[16] = {0};
  const int pat = 2;
  size_t g[1] = {16};
  struct cls_stream_stats st;
  const int bad[] = {-1, CLS_MAX_STREAMS, CLS_MAX_STREAMS + 1, -1000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int s = bad[i];
    cls_buffer b = CLS_BUFFER_NULL;
    CT_ERR(cls_alloc(ctx, s, 16, &b), CLS_ESTREAM);
    ck_assert(b.bits == 0);
    CT_ERR(cls_upload(ctx, s, other, 0, host, sizeof host), CLS_ESTREAM);
    CT_ERR(cls_upload_async(ctx, s, other, 0, host, sizeof host), CLS_ESTREAM);
    CT_ERR(cls_download(ctx, s, good, 0, host, sizeof host, NULL), CLS_ESTREAM);
    CT_ERR(cls_download_async(ctx, s, good, 0, host, sizeof host), CLS_ESTREAM);
    CT_ERR(cls_copy(ctx, s, good, 0, other, 0, sizeof host), CLS_ESTREAM);
    CT_ERR(cls_fill(ctx, s, other, 0, sizeof host, &pat, sizeof pat), CLS_ESTREAM);
    cls_arg a[] = {CLS_OUT(other), CLS_SCALAR(pat)};
    CT_ERR(cls_launch(ctx, s, fill_k, 1, g, NULL, 2, a), CLS_ESTREAM);
    CT_ERR(cls_stream_sync(ctx, s, NULL), CLS_ESTREAM);
    CT_ERR(cls_stream_stats(ctx, s, &st), CLS_ESTREAM);
    assert_context_works();
  }
  /* F12: the destination of a call refused for its stream carries the
   * record (no position: the stream does not exist); the source does not. */
  ct_expect_refused(ctx, 0, other, CLS_ESTREAM, "launch", "fill_k");
  int got[16];
  ct_download_ints(ctx, 0, good, got, 16);
  CT_EXPECT_INTS(got, (size_t)16, i, 77);
}
END_TEST

START_TEST(bad_ranges_and_sizes_are_rejected) {
  cls_buffer b = ct_written(ctx, 0, 16, 4), c = ct_written(ctx, 0, 16, 5);
  int host[32] = {0};
  const int pat = 6;
  cls_buffer x = CLS_BUFFER_NULL;
  CT_ERR(cls_alloc(ctx, 0, SIZE_MAX, &x), CLS_ETOOBIG);
  assert_context_works();
  CT_ERR(cls_upload(ctx, 0, b, SIZE_MAX, host, 4), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_upload(ctx, 0, b, 0, host, SIZE_MAX), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_download(ctx, 0, b, 60, host, 8, NULL), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_download(ctx, 0, b, 4, host, SIZE_MAX, NULL), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_copy(ctx, 0, b, 0, c, SIZE_MAX - 1, 4), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 0, SIZE_MAX), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_fill(ctx, 0, b, 64, 4, &pat, sizeof pat), CLS_ERANGE);
  assert_context_works();
  CT_ERR(cls_fill(ctx, 0, b, SIZE_MAX - 3, 4, &pat, sizeof pat), CLS_ERANGE);
  assert_context_works();
  /* F12: the refused writes left their records; b was only read by the
   * refused copies. */
  ct_expect_refused(ctx, 0, b, CLS_ERANGE, "fill", "");
  ct_expect_refused(ctx, 0, c, CLS_ERANGE, "copy", "");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Configuration strings at context creation                           */
/* ------------------------------------------------------------------ */

static void assert_create_fails(const struct cls_context_options *o, int want, int want2,
                                const char *what) {
  cls_context *c = (cls_context *)&c; /* must be set to NULL */
  int rc = cls_context_create(&c, o);
  ck_assert_msg(rc == want || (want2 && rc == want2), "%s: expected %s, got %s (%d): %s",
                what, cls_err_name(want), cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_msg(c == NULL, "%s: *out not NULL after a failed create", what);
}

START_TEST(malformed_cls_device_env_fails_creation) {
  ck_assert_int_eq(setenv("CLS_DEVICE", "1:", 1), 0);
  assert_create_fails(NULL, CLS_ECONFIG, CLS_ENODEV, "CLS_DEVICE=1:");
  ck_assert_int_eq(setenv("CLS_DEVICE", "-1:0", 1), 0);
  assert_create_fails(NULL, CLS_ECONFIG, CLS_ENODEV, "CLS_DEVICE=-1:0");
  unsetenv("CLS_DEVICE");
  assert_context_works();
  cls_context *c = ct_context();
  cls_context_destroy(c);
}
END_TEST

START_TEST(unknown_scheduler_is_edriver) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .scheduler = "nope"};
  assert_create_fails(&o, CLS_EDRIVER, 0, "scheduler=nope");
  ck_assert_int_eq(setenv("CLS_SCHEDULER", "nope", 1), 0);
  assert_create_fails(NULL, CLS_EDRIVER, 0, "CLS_SCHEDULER=nope");
  unsetenv("CLS_SCHEDULER");
  assert_context_works();
  cls_context *c = ct_context();
  cls_context_destroy(c);
}
END_TEST

START_TEST(malformed_fault_spec_is_econfig) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = "enqueue:"};
  assert_create_fails(&o, CLS_ECONFIG, 0, "fault=enqueue:");
  ck_assert_int_eq(setenv("CLS_FAULT", "enqueue:", 1), 0);
  assert_create_fails(NULL, CLS_ECONFIG, 0, "CLS_FAULT=enqueue:");
  unsetenv("CLS_FAULT");
  assert_context_works();
  cls_context *c = ct_context();
  cls_context_destroy(c);
}
END_TEST

START_TEST(malformed_cls_log_env_is_econfig) {
  const char *old = getenv("CLS_LOG");
  char saved[64] = "";
  if (old)
    snprintf(saved, sizeof saved, "%s", old);
  ck_assert_int_eq(setenv("CLS_LOG", "loud", 1), 0);
  assert_create_fails(NULL, CLS_ECONFIG, 0, "CLS_LOG=loud");
  if (old)
    setenv("CLS_LOG", saved, 1);
  else
    unsetenv("CLS_LOG");
  assert_context_works();
  cls_context *c = ct_context();
  cls_context_destroy(c);
}
END_TEST

START_TEST(bad_logger_level_is_einval) {
  CT_ERR(cls_set_logger(ctx, -1, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_set_logger(ctx, CLS_LOG_FULL + 1, NULL, NULL), CLS_EINVAL);
  CT_OK(cls_set_logger(ctx, CLS_LOG_OFF, NULL, NULL));
  assert_context_works();
}
END_TEST

int main(void) {
  ct_require_device();
  /* The configuration tests set these themselves. */
  unsetenv("CLS_DEVICE");
  unsetenv("CLS_SCHEDULER");
  unsetenv("CLS_FAULT");
  Suite *s = suite_create("misuse-by-kind");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(null_context_is_einval);
  ADD(null_out_pointers_are_einval);
  ADD(null_program_and_kernel_arguments_are_einval);
  ADD(destroy_null_and_report_free_null_are_fine);
  ADD(null_handle_is_enull);
  ADD(freed_handle_is_estale);
  ADD(freed_handle_stays_stale_after_its_slot_is_reused);
  ADD(handle_of_another_context_is_eforeign);
  ADD(handle_of_a_destroyed_context_is_rejected);
  ADD(garbage_handle_bits_are_rejected);
  ADD(bad_stream_ids_are_estream);
  ADD(bad_ranges_and_sizes_are_rejected);
  ADD(malformed_cls_device_env_fails_creation);
  ADD(unknown_scheduler_is_edriver);
  ADD(malformed_fault_spec_is_econfig);
  ADD(malformed_cls_log_env_is_econfig);
  ADD(bad_logger_level_is_einval);
#undef ADD
  return ct_run(s);
}
