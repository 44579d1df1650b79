/* Buffers: allocation, transfers, copies, fills, the memory pool, and the
 * checks on sizes and ranges. */
#include "common.h"

#include <stdint.h>

static cls_context *ctx;

static void setup(void) { ctx = ct_context(); }
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static void pattern_bytes(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)((i * 131u + seed * 17u + (i >> 8)) & 0xff);
}

static void download_ok(int stream, cls_buffer b, size_t off, void *dst, size_t n) {
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, off, dst, n, &r);
  if (rc != 0) {
    char text[2048];
    snprintf(text, sizeof text, "%s", r ? cls_report_text(r) : cls_last_error_detail());
    cls_report_free(r);
    ck_abort_msg("cls_download(off %zu, %zu bytes) returned %s: %s", off, n,
                 cls_err_name(rc), text);
  }
  cls_report_free(r);
}

static void assert_bytes(const unsigned char *got, const unsigned char *want, size_t n,
                         const char *what) {
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i])
      ck_abort_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, got[i], want[i]);
}

/* ------------------------------------------------------------------ */

START_TEST(alloc_and_free) {
  cls_buffer a = ct_alloc(ctx, 0, 64), b = ct_alloc(ctx, 0, 64), c = ct_alloc(ctx, 3, 100);
  ck_assert(a.bits != b.bits);
  ck_assert(a.bits != c.bits);
  size_t sz = 0;
  CT_OK(cls_buffer_size(ctx, a, &sz));
  ck_assert_uint_eq(sz, 64);
  CT_OK(cls_buffer_size(ctx, c, &sz));
  ck_assert_uint_eq(sz, 100);
  CT_OK(cls_free(ctx, a));
  CT_OK(cls_free(ctx, b));
  CT_OK(cls_free(ctx, c));
}
END_TEST

START_TEST(buffer_size_is_the_requested_size) {
  const size_t sizes[] = {1, 3, 4, 1000, 4097, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    cls_buffer b = ct_alloc(ctx, 0, sizes[i]);
    size_t sz = 0;
    CT_OK(cls_buffer_size(ctx, b, &sz));
    ck_assert_uint_eq(sz, sizes[i]);
    CT_OK(cls_free(ctx, b));
  }
}
END_TEST

START_TEST(upload_download_round_trip_sizes) {
  const size_t sizes[] = {1, 4, 1000, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    unsigned char *src = malloc(n), *dst = malloc(n);
    ck_assert_ptr_nonnull(src);
    ck_assert_ptr_nonnull(dst);
    pattern_bytes(src, n, (unsigned)i);
    memset(dst, 0xee, n);
    cls_buffer b = ct_alloc(ctx, 0, n);
    CT_OK(cls_upload(ctx, 0, b, 0, src, n));
    download_ok(0, b, 0, dst, n);
    assert_bytes(dst, src, n, "round trip");
    CT_OK(cls_free(ctx, b));
    free(src);
    free(dst);
  }
}
END_TEST

START_TEST(upload_source_is_reusable_when_upload_returns) {
  enum { N = 4096 };
  unsigned char src[N], want[N], dst[N];
  pattern_bytes(src, N, 5);
  memcpy(want, src, N);
  cls_buffer b = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, src, N));
  memset(src, 0, N); /* the library must not read it any more */
  download_ok(0, b, 0, dst, N);
  assert_bytes(dst, want, N, "upload copied at the call");
}
END_TEST

START_TEST(upload_and_download_at_odd_offsets) {
  enum { N = 1001 };
  unsigned char base[N], part[123], got[N];
  pattern_bytes(base, N, 1);
  pattern_bytes(part, sizeof part, 2);
  cls_buffer b = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, base, N));
  CT_OK(cls_upload(ctx, 0, b, 7, part, sizeof part));
  memcpy(base + 7, part, sizeof part);
  CT_OK(cls_upload(ctx, 0, b, N - 3, part, 3)); /* the last bytes */
  memcpy(base + N - 3, part, 3);
  download_ok(0, b, 0, got, N);
  assert_bytes(got, base, N, "whole buffer");
  /* Downloads at offsets. */
  memset(got, 0, sizeof got);
  download_ok(0, b, 13, got, 501);
  assert_bytes(got, base + 13, 501, "download at offset 13");
  download_ok(0, b, N - 1, got, 1);
  assert_bytes(got, base + N - 1, 1, "last byte");
  download_ok(0, b, 3, got, 1);
  assert_bytes(got, base + 3, 1, "byte 3");
}
END_TEST

START_TEST(copy_between_buffers_with_offsets) {
  enum { N = 777 };
  unsigned char a[N], b0[N], got[N];
  pattern_bytes(a, N, 3);
  pattern_bytes(b0, N, 4);
  cls_buffer A = ct_alloc(ctx, 0, N), B = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, A, 0, a, N));
  CT_OK(cls_upload(ctx, 0, B, 0, b0, N));
  CT_OK(cls_copy(ctx, 0, A, 0, B, 0, N));
  download_ok(0, B, 0, got, N);
  assert_bytes(got, a, N, "whole copy");
  /* A part of A into the middle of B. */
  CT_OK(cls_upload(ctx, 0, B, 0, b0, N));
  CT_OK(cls_copy(ctx, 0, A, 5, B, 101, 333));
  memcpy(b0 + 101, a + 5, 333);
  download_ok(0, B, 0, got, N);
  assert_bytes(got, b0, N, "copy with offsets");
  /* The last byte onto the first. */
  CT_OK(cls_copy(ctx, 0, A, N - 1, B, 0, 1));
  b0[0] = a[N - 1];
  download_ok(0, B, 0, got, N);
  assert_bytes(got, b0, N, "one byte copy");
}
END_TEST

START_TEST(copy_across_buffers_of_different_streams) {
  enum { N = 4096 };
  unsigned char a[N], got[N];
  pattern_bytes(a, N, 9);
  cls_buffer A = ct_alloc(ctx, 0, N), B = ct_alloc(ctx, 1, N), C = ct_alloc(ctx, 2, N);
  CT_OK(cls_upload(ctx, 0, A, 0, a, N));
  CT_OK(cls_copy(ctx, 1, A, 0, B, 0, N)); /* on B's stream */
  CT_OK(cls_copy(ctx, 0, B, 0, C, 0, N)); /* on neither B's nor C's stream */
  download_ok(2, C, 0, got, N);
  assert_bytes(got, a, N, "A -> B -> C across streams");
  memset(got, 0, N);
  download_ok(0, B, 0, got, N);
  assert_bytes(got, a, N, "B read on stream 0");
}
END_TEST

START_TEST(fill_with_every_pattern_size) {
  enum { N = 256 };
  const size_t psizes[] = {1, 2, 4, 8, 16, 32, 64, 128};
  for (size_t k = 0; k < sizeof psizes / sizeof psizes[0]; k++) {
    size_t ps = psizes[k];
    unsigned char pat[128], want[N], got[N];
    pattern_bytes(pat, ps, (unsigned)(k + 20));
    for (size_t i = 0; i < N; i++)
      want[i] = pat[i % ps];
    cls_buffer b = ct_alloc(ctx, 0, N);
    int rc = cls_fill(ctx, 0, b, 0, N, pat, ps);
    ck_assert_msg(rc == 0, "fill with a %zu-byte pattern: %s: %s", ps, cls_err_name(rc),
                  cls_last_error_detail());
    download_ok(0, b, 0, got, N);
    char what[64];
    snprintf(what, sizeof what, "fill with %zu-byte pattern", ps);
    assert_bytes(got, want, N, what);
    CT_OK(cls_free(ctx, b));
  }
}
END_TEST

START_TEST(fill_partial_range) {
  enum { N = 128 };
  unsigned char base[N], got[N];
  pattern_bytes(base, N, 30);
  cls_buffer b = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, base, N));
  const uint32_t pat = 0xa1b2c3d4u;
  CT_OK(cls_fill(ctx, 0, b, 16, 32, &pat, sizeof pat));
  for (size_t i = 16; i < 48; i += 4)
    memcpy(base + i, &pat, 4);
  download_ok(0, b, 0, got, N);
  assert_bytes(got, base, N, "partial fill");
  const uint64_t pat8 = 0x0102030405060708ull;
  CT_OK(cls_fill(ctx, 0, b, N - 8, 8, &pat8, sizeof pat8));
  memcpy(base + N - 8, &pat8, 8);
  download_ok(0, b, 0, got, N);
  assert_bytes(got, base, N, "fill of the last 8 bytes");
}
END_TEST

START_TEST(download_async_completed_by_stream_sync) {
  enum { N = 10000 };
  static int src[N], dst[N];
  for (int i = 0; i < N; i++)
    src[i] = i * 7 - 3;
  memset(dst, 0, sizeof dst);
  cls_buffer b = ct_alloc(ctx, 1, sizeof src);
  CT_OK(cls_upload(ctx, 1, b, 0, src, sizeof src));
  CT_OK(cls_download_async(ctx, 1, b, 0, dst, sizeof dst));
  cls_report *r = NULL;
  CT_OK(cls_stream_sync(ctx, 1, &r));
  ck_assert_ptr_null(r);
  CT_EXPECT_INTS(dst, (size_t)N, i, (int)i * 7 - 3);
}
END_TEST

START_TEST(download_async_completed_by_sync) {
  enum { N = 10000 };
  static int src[N], dst1[N], dst2[N];
  for (int i = 0; i < N; i++)
    src[i] = i ^ 0x55;
  cls_buffer b = ct_alloc(ctx, 0, sizeof src);
  CT_OK(cls_upload(ctx, 0, b, 0, src, sizeof src));
  CT_OK(cls_download_async(ctx, 0, b, 0, dst1, sizeof dst1));
  CT_OK(cls_download_async(ctx, 2, b, 4, dst2, sizeof dst2 - 4));
  CT_OK(cls_sync(ctx, NULL));
  CT_EXPECT_INTS(dst1, (size_t)N, i, (int)i ^ 0x55);
  CT_EXPECT_INTS(dst2, (size_t)N - 1, i, (int)(i + 1) ^ 0x55);
}
END_TEST

START_TEST(upload_async_then_sync) {
  enum { N = 5000 };
  static int src[N], dst[N];
  for (int i = 0; i < N; i++)
    src[i] = 3 * i + 1;
  cls_buffer b = ct_alloc(ctx, 0, sizeof src);
  CT_OK(cls_upload_async(ctx, 0, b, 0, src, sizeof src));
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  ct_download_ints(ctx, 0, b, dst, N);
  CT_EXPECT_INTS(dst, (size_t)N, i, 3 * (int)i + 1);
  /* And read on another stream without a sync between. */
  for (int i = 0; i < N; i++)
    src[i] = -i;
  CT_OK(cls_upload_async(ctx, 0, b, 0, src, sizeof src));
  ct_download_ints(ctx, 1, b, dst, N);
  CT_OK(cls_sync(ctx, NULL));
  CT_EXPECT_INTS(dst, (size_t)N, i, -(int)i);
}
END_TEST

START_TEST(pool_reuse_keeps_data_right) {
  enum { N = 4096 };
  unsigned char src[N], got[N];
  for (unsigned cycle = 0; cycle < 1000; cycle++) {
    cls_buffer b = ct_alloc(ctx, 0, N);
    if (cycle % 50 == 0) {
      /* Reused memory is never written: it reads as tainted. */
      CT_ERR(cls_download(ctx, 0, b, 0, got, N, NULL), CLS_ETAINTED);
    }
    pattern_bytes(src, N, cycle);
    CT_OK(cls_upload(ctx, 0, b, 0, src, N));
    if (cycle % 10 == 0) {
      download_ok(0, b, 0, got, N);
      assert_bytes(got, src, N, "after reuse");
    }
    CT_OK(cls_free(ctx, b));
  }
  /* Two live buffers never share memory. */
  cls_buffer x = ct_alloc(ctx, 0, N), y = ct_alloc(ctx, 0, N);
  pattern_bytes(src, N, 1);
  CT_OK(cls_upload(ctx, 0, x, 0, src, N));
  pattern_bytes(got, N, 2);
  CT_OK(cls_upload(ctx, 0, y, 0, got, N));
  download_ok(0, x, 0, got, N);
  assert_bytes(got, src, N, "x after writing y");
}
END_TEST

START_TEST(pool_reuse_does_not_grow_memory) {
  /* 1 MiB blocks written in full: 400 of them never reused would touch
   * 400 MiB; reused, the resident size stays within about one page. */
  const size_t n = 1 << 20;
  unsigned char *src = malloc(n);
  ck_assert_ptr_nonnull(src);
  pattern_bytes(src, n, 7);
  for (int i = 0; i < 20; i++) { /* warm up the pool and the runtime */
    cls_buffer b = ct_alloc(ctx, 0, n);
    CT_OK(cls_upload(ctx, 0, b, 0, src, n));
    CT_OK(cls_free(ctx, b));
  }
  CT_OK(cls_sync(ctx, NULL));
  size_t before = ct_rss_bytes();
  if (before == 0) {
    free(src);
    ck_abort_msg("cannot read /proc/self/statm");
  }
  for (int i = 0; i < 400; i++) {
    cls_buffer b = ct_alloc(ctx, 0, n);
    CT_OK(cls_upload(ctx, 0, b, 0, src, n));
    CT_OK(cls_free(ctx, b));
  }
  CT_OK(cls_sync(ctx, NULL));
  size_t after = ct_rss_bytes();
  free(src);
  ck_assert_msg(after < before + ((size_t)160 << 20),
                "resident size grew from %zu MiB to %zu MiB over 400 alloc/free cycles",
                before >> 20, after >> 20);
}
END_TEST

START_TEST(many_small_allocations_cycle_without_growth) {
  /* 1000 cycles of 4 KiB alloc/upload/free, done five times: the same
   * blocks serve every round. */
  unsigned char src[4096];
  pattern_bytes(src, sizeof src, 11);
  size_t rss[5];
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 1000; i++) {
      cls_buffer b = ct_alloc(ctx, 0, sizeof src);
      CT_OK(cls_upload(ctx, 0, b, 0, src, sizeof src));
      CT_OK(cls_free(ctx, b));
    }
    CT_OK(cls_sync(ctx, NULL));
    rss[round] = ct_rss_bytes();
  }
  /* 4000 more blocks never reused would be 16 MiB. */
  ck_assert_msg(rss[4] < rss[0] + ((size_t)12 << 20), "resident size grew from %zu to %zu KiB",
                rss[0] >> 10, rss[4] >> 10);
}
END_TEST

START_TEST(zero_size_is_einval) {
  cls_buffer b = CLS_BUFFER_NULL;
  CT_ERR(cls_alloc(ctx, 0, 0, &b), CLS_EINVAL);
  ck_assert(b.bits == 0);
}
END_TEST

START_TEST(huge_sizes_are_etoobig) {
  struct cls_device_info info = ct_context_info(ctx);
  cls_buffer b = CLS_BUFFER_NULL;
  CT_ERR(cls_alloc(ctx, 0, SIZE_MAX, &b), CLS_ETOOBIG);
  ck_assert(b.bits == 0);
  if (info.max_alloc_size < SIZE_MAX) {
    CT_ERR(cls_alloc(ctx, 0, (size_t)info.max_alloc_size + 1, &b), CLS_ETOOBIG);
    ck_assert(b.bits == 0);
  }
  CT_ERR(cls_alloc(ctx, 0, SIZE_MAX / 2 + 1, &b), CLS_ETOOBIG);
  /* The context still works. */
  cls_buffer ok = ct_alloc(ctx, 0, 16);
  CT_OK(cls_fill(ctx, 0, ok, 0, 16, &(int){5}, sizeof(int)));
  int got[4];
  ct_download_ints(ctx, 0, ok, got, 4);
  CT_EXPECT_INTS(got, (size_t)4, i, 5);
}
END_TEST

START_TEST(ranges_beyond_the_buffer_are_erange) {
  enum { N = 100 };
  unsigned char host[2 * N];
  memset(host, 1, sizeof host);
  cls_buffer b = ct_alloc(ctx, 0, N), c = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, host, N));
  CT_OK(cls_upload(ctx, 0, c, 0, host, N));
  CT_ERR(cls_upload(ctx, 0, b, 0, host, N + 1), CLS_ERANGE);
  CT_ERR(cls_upload(ctx, 0, b, 1, host, N), CLS_ERANGE);
  CT_ERR(cls_upload(ctx, 0, b, N, host, 1), CLS_ERANGE);
  CT_ERR(cls_upload_async(ctx, 0, b, 50, host, 51), CLS_ERANGE);
  CT_ERR(cls_download(ctx, 0, b, 0, host, N + 1, NULL), CLS_ERANGE);
  CT_ERR(cls_download(ctx, 0, b, 99, host, 2, NULL), CLS_ERANGE);
  CT_ERR(cls_download_async(ctx, 0, b, 1, host, N), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 1, N), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 1, c, 0, N), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 0, N + 1), CLS_ERANGE);
  const int pat = 7;
  CT_ERR(cls_fill(ctx, 0, b, 0, N + 4, &pat, sizeof pat), CLS_ERANGE);
  CT_ERR(cls_fill(ctx, 0, b, 96, 8, &pat, sizeof pat), CLS_ERANGE);
  /* F12: each refused write left its record on its destination; the
   * refused reads left nothing. */
  ct_expect_refused(ctx, 0, b, CLS_ERANGE, "fill", "");
  ct_expect_refused(ctx, 0, c, CLS_ERANGE, "copy", "");
}
END_TEST

START_TEST(offset_overflow_is_erange) {
  enum { N = 64 };
  unsigned char host[N];
  memset(host, 2, sizeof host);
  cls_buffer b = ct_alloc(ctx, 0, N), c = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, host, N));
  CT_OK(cls_upload(ctx, 0, c, 0, host, N));
  CT_ERR(cls_upload(ctx, 0, b, SIZE_MAX, host, 1), CLS_ERANGE);
  CT_ERR(cls_upload(ctx, 0, b, SIZE_MAX - 3, host, 8), CLS_ERANGE);
  CT_ERR(cls_download(ctx, 0, b, SIZE_MAX, host, 1, NULL), CLS_ERANGE);
  CT_ERR(cls_download(ctx, 0, b, 8, host, SIZE_MAX - 4, NULL), CLS_ERANGE);
  CT_ERR(cls_download_async(ctx, 0, b, SIZE_MAX, host, 2), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, SIZE_MAX, c, 0, 1), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 0, c, SIZE_MAX, 1), CLS_ERANGE);
  CT_ERR(cls_copy(ctx, 0, b, 4, c, 4, SIZE_MAX - 2), CLS_ERANGE);
  const unsigned char pat = 9;
  CT_ERR(cls_fill(ctx, 0, b, SIZE_MAX, 1, &pat, 1), CLS_ERANGE);
  CT_ERR(cls_fill(ctx, 0, b, 1, SIZE_MAX, &pat, 1), CLS_ERANGE);
  ct_expect_refused(ctx, 0, b, CLS_ERANGE, "fill", "");
  ct_expect_refused(ctx, 0, c, CLS_ERANGE, "copy", "");
}
END_TEST

START_TEST(bad_fill_patterns_are_einval) {
  enum { N = 64 };
  unsigned char host[N], pat[256];
  memset(host, 3, sizeof host);
  memset(pat, 4, sizeof pat);
  cls_buffer b = ct_alloc(ctx, 0, N);
  CT_OK(cls_upload(ctx, 0, b, 0, host, N));
  CT_ERR(cls_fill(ctx, 0, b, 0, 60, pat, 3), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, b, 0, N, pat, 0), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, b, 0, N, pat, 256), CLS_EINVAL);
  CT_ERR(cls_fill(ctx, 0, b, 2, 8, pat, 4), CLS_EINVAL);   /* offset not a multiple */
  CT_ERR(cls_fill(ctx, 0, b, 0, 6, pat, 4), CLS_EINVAL);   /* size not a multiple */
  CT_ERR(cls_fill(ctx, 0, b, 8, 16, pat, 16), CLS_EINVAL); /* offset 8, pattern 16 */
  ct_expect_refused(ctx, 0, b, CLS_EINVAL, "fill", "");
  /* A fill that is not refused writes it again (F4). */
  CT_OK(cls_upload(ctx, 0, b, 0, host, N));
  unsigned char got[N];
  download_ok(0, b, 0, got, N);
  assert_bytes(got, host, N, "b rewritten after rejected fills");
}
END_TEST

START_TEST(fresh_buffer_download_is_tainted) {
  enum { N = 256 };
  unsigned char got[N];
  cls_buffer b = ct_alloc(ctx, 0, N);
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, b, 0, got, N, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_ge(cls_report_failures(r), 1);
  ck_assert_ptr_nonnull(cls_report_text(r));
  cls_report_free(r);
  /* Without a report pointer too, and asynchronously. */
  CT_ERR(cls_download(ctx, 0, b, 0, got, N, NULL), CLS_ETAINTED);
  CT_ERR(cls_download_async(ctx, 0, b, 0, got, N), CLS_ETAINTED);
  /* Copying out of it is refused and passes the failure on. */
  cls_buffer c = ct_alloc(ctx, 0, N);
  unsigned char z[N];
  memset(z, 0, N);
  CT_OK(cls_upload(ctx, 0, c, 0, z, N));
  CT_ERR(cls_copy(ctx, 0, b, 0, c, 0, N), CLS_ETAINTED);
  CT_ERR(cls_download(ctx, 0, c, 0, got, N, NULL), CLS_ETAINTED);
  /* An upload clears it. */
  unsigned char src[N];
  pattern_bytes(src, N, 40);
  CT_OK(cls_upload(ctx, 0, b, 0, src, N));
  download_ok(0, b, 0, got, N);
  assert_bytes(got, src, N, "after upload");
}
END_TEST

START_TEST(fresh_buffer_cleared_by_fill_and_copy) {
  enum { N = 64 };
  unsigned char got[N], want[N];
  cls_buffer b = ct_alloc(ctx, 1, N), c = ct_alloc(ctx, 1, N), d = ct_alloc(ctx, 1, N);
  const unsigned short pat = 0xbeef;
  CT_OK(cls_fill(ctx, 1, b, 0, N, &pat, sizeof pat));
  download_ok(1, b, 0, got, N);
  for (size_t i = 0; i < N; i += 2)
    memcpy(want + i, &pat, 2);
  assert_bytes(got, want, N, "after fill");
  CT_OK(cls_copy(ctx, 1, b, 0, c, 0, N));
  download_ok(0, c, 0, got, N);
  assert_bytes(got, want, N, "after copy");
  /* A fill of part of a buffer is a write: it clears the buffer. */
  CT_OK(cls_fill(ctx, 1, d, 0, 8, &pat, sizeof pat));
  CT_OK(cls_download(ctx, 1, d, 0, got, 8, NULL));
  assert_bytes(got, want, 8, "partial fill");
}
END_TEST

START_TEST(allocation_larger_than_one_page) {
  struct cls_device_info info = ct_context_info(ctx);
  const size_t n = (size_t)80 << 20;
  if (info.max_alloc_size < n) {
    cls_buffer b;
    CT_ERR(cls_alloc(ctx, 0, n, &b), CLS_ETOOBIG);
    return;
  }
  cls_buffer b = ct_alloc(ctx, 0, n);
  size_t sz = 0;
  CT_OK(cls_buffer_size(ctx, b, &sz));
  ck_assert_uint_eq(sz, n);
  const uint32_t pat = 0x11223344u;
  CT_OK(cls_fill(ctx, 0, b, 0, n, &pat, sizeof pat));
  unsigned char tail[4096], want[4096];
  pattern_bytes(want, sizeof want, 50);
  CT_OK(cls_upload(ctx, 0, b, n - sizeof want, want, sizeof want));
  download_ok(0, b, n - sizeof want, tail, sizeof tail);
  assert_bytes(tail, want, sizeof want, "tail of 80 MiB buffer");
  uint32_t mid[256];
  download_ok(0, b, n / 2, mid, sizeof mid);
  for (size_t i = 0; i < 256; i++)
    ck_assert_uint_eq(mid[i], pat);
  /* A small buffer next to it is independent. */
  cls_buffer s = ct_alloc(ctx, 0, 64);
  CT_OK(cls_fill(ctx, 0, s, 0, 64, &(uint32_t){7}, 4));
  download_ok(0, b, 0, mid, sizeof mid);
  for (size_t i = 0; i < 256; i++)
    ck_assert_uint_eq(mid[i], pat);
  CT_OK(cls_free(ctx, b));
  CT_OK(cls_free(ctx, s));
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("buffer");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(alloc_and_free);
  ADD(buffer_size_is_the_requested_size);
  ADD(upload_download_round_trip_sizes);
  ADD(upload_source_is_reusable_when_upload_returns);
  ADD(upload_and_download_at_odd_offsets);
  ADD(copy_between_buffers_with_offsets);
  ADD(copy_across_buffers_of_different_streams);
  ADD(fill_with_every_pattern_size);
  ADD(fill_partial_range);
  ADD(download_async_completed_by_stream_sync);
  ADD(download_async_completed_by_sync);
  ADD(upload_async_then_sync);
  ADD(pool_reuse_keeps_data_right);
  ADD(pool_reuse_does_not_grow_memory);
  ADD(many_small_allocations_cycle_without_growth);
  ADD(zero_size_is_einval);
  ADD(huge_sizes_are_etoobig);
  ADD(ranges_beyond_the_buffer_are_erange);
  ADD(offset_overflow_is_erange);
  ADD(bad_fill_patterns_are_einval);
  ADD(fresh_buffer_download_is_tainted);
  ADD(fresh_buffer_cleared_by_fill_and_copy);
  ADD(allocation_larger_than_one_page);
#undef ADD
  return ct_run(s);
}
