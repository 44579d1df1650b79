/* <clstream/wire.h> (issue 19): a buffer region and its failure record
 * across a process boundary, with two contexts of one process standing for
 * two ranks, so every build checks the record's round trip, MPI or not.
 * The MPI suite (tests/mpi/test-mpi.c) checks the same over MPI. */
#include "common.h"

#include "wire/record.h"

#include <clstream/wire.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define N 64

static const char *const src =
    "kernel void blur(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = a[i] + 1;\n"
    "}\n";

static void blur(cls_context *ctx, int stream, cls_kernel *k, cls_buffer in, cls_buffer out,
                 int want) {
  size_t g = N;
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  int rc = cls_launch(ctx, stream, k, 1, &g, NULL, 2, a);
  /* the scheduler driver enqueues later: an enqueue failure is found then */
  ck_assert_msg(rc == want || (want == CLS_ELAUNCH && rc == CLS_OK), "blur: %s: %s",
                cls_err_name(rc), cls_last_error_detail());
}

/* F2 across processes: the record a tainted read gives makes the other
 * side's buffer carry the same root, named with its rank; a launch there
 * is skipped and extends the chain; the report says where each part
 * happened. */
START_TEST(F2_record_round_trip_names_the_rank_and_chain) {
  cls_context *a = ct_context_with("enqueue:kernel=blur,nth=1", NULL, NULL), *b = ct_context();
  CT_OK(cls_wire_set_rank(a, 3));
  CT_OK(cls_wire_set_rank(b, 1));
  cls_kernel *ka = ct_kernel(a, src, "blur"), *kb = ct_kernel(b, src, "blur");
  cls_buffer x = ct_alloc(a, 0, N * sizeof(int)), y = ct_alloc(a, 0, N * sizeof(int));
  int host[N] = {0};
  ct_upload_ints(a, 0, x, host, N);
  blur(a, 0, ka, x, y, CLS_ELAUNCH);
  char bytes[N * sizeof(int)];
  unsigned char record[CLS_WIRE_RECORD_MAX];
  size_t len = 0;
  CT_ERR(cls_wire_read(a, 0, y, 0, bytes, sizeof bytes, record, &len), CLS_ETAINTED);
  ck_assert_uint_gt(len, 0);
  ck_assert_uint_le(len, CLS_WIRE_RECORD_MAX);

  cls_buffer r = ct_alloc(b, 2, N * sizeof(int)), s = ct_alloc(b, 2, N * sizeof(int));
  CT_ERR(cls_wire_taint(b, 2, r, record, len), CLS_ETAINTED);
  ck_assert_msg(strstr(cls_last_error_detail(), "on rank 3: CLS_ELAUNCH") != NULL, "%s",
                cls_last_error_detail());
  blur(b, 1, kb, r, s, CLS_ESKIPPED);
  cls_report *rep = NULL;
  CT_ERR(cls_download(b, 0, s, 0, host, sizeof host, &rep), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  ck_assert_int_eq(fi.status, CLS_ELAUNCH);
  ck_assert_str_eq(fi.kernel, "blur");
  ck_assert_str_eq(fi.operation, "launch");
  ck_assert_int_eq(fi.stream, 0);
  ck_assert_uint_eq(fi.skipped, 1);
  int rank = -2;
  ck_assert_int_eq(cls_report_failure_rank(rep, 0, &rank), 1);
  ck_assert_int_eq(rank, 3);
  const char *text = cls_report_text(rep);
  ck_assert_msg(strstr(text, "failure 1: on rank 3: CLS_ELAUNCH") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "skipped: 'blur' on stream 1") != NULL, "%s", text);
  cls_report_free(rep);

  /* Passed on (to a third "rank"): the root keeps its rank; the chain
   * says where it grew. */
  cls_context *c = ct_context();
  CT_OK(cls_wire_set_rank(c, 0));
  CT_ERR(cls_wire_read(b, 1, s, 0, bytes, sizeof bytes, record, &len), CLS_ETAINTED);
  cls_buffer t = ct_alloc(c, 1, N * sizeof(int));
  CT_ERR(cls_wire_taint(c, 1, t, record, len), CLS_ETAINTED);
  CT_ERR(cls_download(c, 1, t, 0, host, sizeof host, &rep), CLS_ETAINTED);
  text = cls_report_text(rep);
  ck_assert_msg(strstr(text, "on rank 3: CLS_ELAUNCH") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "skipped: 'blur' on rank 1 stream 1") != NULL, "%s", text);
  CT_OK(cls_report_failure_rank(rep, 0, &rank) == 1 ? CLS_OK : CLS_EINVAL);
  ck_assert_int_eq(rank, 3);
  cls_report_free(rep);
  cls_context_destroy(c);

  /* Back where it happened: it is that rank's own failure (one identity),
   * named once with y's, its chain grown by rank 1's skip. */
  t = ct_alloc(a, 1, N * sizeof(int));
  CT_ERR(cls_wire_taint(a, 1, t, record, len), CLS_ETAINTED);
  cls_buffer both[2] = {t, y};
  CT_ERR(cls_check(a, 2, both, &rep), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(rep), 1);
  text = cls_report_text(rep);
  ck_assert_msg(strstr(text, "failure 1: CLS_ELAUNCH") != NULL, "%s", text);
  ck_assert_msg(strstr(text, "skipped: 'blur' on rank 1 stream 1") != NULL, "%s", text);
  ck_assert_int_eq(cls_report_failure_rank(rep, 0, &rank), 0);
  cls_report_free(rep);
  cls_context_destroy(a);
  cls_context_destroy(b);
}
END_TEST

/* A replay skipped as a whole (CLS_SKIP_REPLAY) crosses to another rank
 * with its kind, the capture's name and its count of commands. */
START_TEST(F2_a_whole_replay_skip_travels_with_its_capture_and_count) {
  cls_context *a = ct_context_with("enqueue:kernel=blur,nth=1", NULL, NULL), *b = ct_context();
  CT_OK(cls_wire_set_rank(a, 2));
  CT_OK(cls_wire_set_rank(b, 0));
  cls_kernel *ka = ct_kernel(a, src, "blur");
  cls_buffer x = ct_alloc(a, 0, N * sizeof(int)), y = ct_alloc(a, 0, N * sizeof(int));
  cls_buffer z = ct_alloc(a, 1, N * sizeof(int)), z2 = ct_alloc(a, 1, N * sizeof(int));
  int host[N] = {0};
  ct_upload_ints(a, 0, x, host, N);
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(a));
  blur(a, 1, ka, y, z, CLS_OK);
  blur(a, 1, ka, z, z2, CLS_OK);
  CT_OK(cls_capture_end(a, &cap));
  blur(a, 0, ka, x, y, CLS_ELAUNCH);
  cls_sync(a, NULL);
  CT_ERR(cls_replay(a, cap, 0, NULL), CLS_ESKIPPED);
  char bytes[N * sizeof(int)];
  unsigned char record[CLS_WIRE_RECORD_MAX];
  size_t len = 0;
  CT_ERR(cls_wire_read(a, 1, z2, 0, bytes, sizeof bytes, record, &len), CLS_ETAINTED);
  cls_buffer r = ct_alloc(b, 0, N * sizeof(int));
  CT_ERR(cls_wire_taint(b, 0, r, record, len), CLS_ETAINTED);
  cls_report *rep = NULL;
  CT_ERR(cls_download(b, 0, r, 0, host, sizeof host, &rep), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  ck_assert_uint_eq(fi.skipped, 2);
  ck_assert_uint_eq(fi.nskips, 1);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(rep, 0, 0, &si));
  ck_assert_int_eq(si.kind, CLS_SKIP_REPLAY);
  ck_assert_str_eq(si.kernel, "capture #1");
  ck_assert_uint_eq(si.count, 2);
  ck_assert_int_eq(si.stream, 1);
  const char *text = cls_report_text(rep);
  ck_assert_msg(strstr(text, "replay of capture #1 (2 commands) from rank 2 stream 1") != NULL,
                "%s", text);
  cls_report_free(rep);
  cls_capture_destroy(cap);
  cls_context_destroy(a);
  cls_context_destroy(b);
}
END_TEST

/* Good bytes give no record; a refused read gives one naming the refusal;
 * a transport's error and a malformed record taint the buffer (F12). */
START_TEST(clean_refused_and_malformed_transfers) {
  cls_context *ctx = ct_context();
  cls_buffer x = ct_alloc(ctx, 0, N * sizeof(int)), y = ct_alloc(ctx, 0, N * sizeof(int));
  int host[N], got[N];
  for (int i = 0; i < N; i++)
    host[i] = 7 * i;
  ct_upload_ints(ctx, 0, x, host, N);
  unsigned char record[CLS_WIRE_RECORD_MAX];
  size_t len = 99;
  CT_OK(cls_wire_read(ctx, 0, x, 4, got, 8, record, &len));
  ck_assert_uint_eq(len, 0);
  ck_assert_int_eq(got[0], 7);
  ck_assert_int_eq(got[1], 14);
  CT_ERR(cls_wire_read(ctx, 0, x, 0, got, 8, NULL, &len), CLS_EINVAL);
  CT_ERR(cls_wire_read(ctx, 0, x, N * sizeof(int), got, 8, record, &len), CLS_ERANGE);
  ck_assert_uint_gt(len, 0);
  CT_ERR(cls_wire_taint(ctx, 0, y, record, len), CLS_ETAINTED);
  ck_assert_msg(strstr(cls_last_error_detail(), "in another process: CLS_ERANGE in send"), "%s",
                cls_last_error_detail());

  ct_upload_ints(ctx, 0, y, host, N);
  CT_ERR(cls_wire_taint(ctx, 0, y, "not a record", 12), CLS_EINVAL);
  CT_ERR(cls_download(ctx, 0, y, 0, got, sizeof got, NULL), CLS_ETAINTED);
  record[0] ^= 0xff; /* the magic: another byte order, or no record */
  ct_upload_ints(ctx, 0, y, host, N);
  CT_ERR(cls_wire_taint(ctx, 0, y, record, len), CLS_EINVAL);
  CT_ERR(cls_download(ctx, 0, y, 0, got, sizeof got, NULL), CLS_ETAINTED);

  ct_upload_ints(ctx, 0, y, host, N);
  CT_ERR(cls_wire_fail(ctx, 0, y, CLS_EMPI, "receive", "MPI_Recv: MPI_ERR_TRUNCATE"), CLS_EMPI);
  cls_report *rep = NULL;
  CT_ERR(cls_download(ctx, 0, y, 0, got, sizeof got, &rep), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  ck_assert_int_eq(fi.status, CLS_EMPI);
  ck_assert_str_eq(fi.operation, "receive");
  ck_assert_str_eq(fi.message, "MPI_Recv: MPI_ERR_TRUNCATE");
  int rank = 5;
  ck_assert_int_eq(cls_report_failure_rank(rep, 0, &rank), 0);
  ck_assert_int_eq(rank, -1);
  cls_report_free(rep);
  /* a write clears it, as any failure */
  ct_upload_ints(ctx, 0, y, host, N);
  CT_OK(cls_download(ctx, 0, y, 0, got, sizeof got, NULL));

  CT_ERR(cls_wire_fail(ctx, 0, y, 3, "receive", "x"), CLS_EINVAL);
  CT_ERR(cls_wire_fail(NULL, 0, y, CLS_EMPI, "receive", "x"), CLS_EINVAL);
  CT_ERR(cls_wire_taint(ctx, 0, CLS_BUFFER_NULL, record, len), CLS_ENULL);
  CT_ERR(cls_wire_set_rank(ctx, -1), CLS_EINVAL);
  CT_ERR(cls_wire_set_rank(NULL, 0), CLS_EINVAL);
  ck_assert_int_eq(cls_wire_error(CLS_EMPI, "x %d", 5), CLS_EMPI);
  ck_assert_str_eq(cls_last_error_detail(), "x 5");
  cls_context_destroy(ctx);
}
END_TEST

/* A record from the wire is checked field by field: a record made by a
 * tainted read with a skip chain, then forged one field at a time. */
static size_t good_record(cls_context *a, struct cls__wire_record *w) {
  cls_kernel *k = ct_kernel(a, src, "blur");
  cls_buffer x = ct_alloc(a, 0, N * sizeof(int)), y = ct_alloc(a, 0, N * sizeof(int)),
             z = ct_alloc(a, 0, N * sizeof(int));
  int host[N] = {0};
  ct_upload_ints(a, 0, x, host, N);
  blur(a, 0, k, x, y, CLS_ELAUNCH);
  size_t g = N;
  cls_arg args[] = {CLS_IN(y), CLS_OUT(z)};
  int rc = cls_launch(a, 0, k, 1, &g, NULL, 2, args); /* OK: a driver that enqueues later */
  ck_assert_msg(rc == CLS_ESKIPPED || rc == CLS_OK, "%s", cls_err_name(rc));
  size_t len = 0;
  CT_ERR(cls_wire_read(a, 0, z, 0, host, sizeof host, w, &len), CLS_ETAINTED);
  ck_assert_uint_eq(w->nskips, 1);
  ck_assert_uint_eq(len, CLS__WIRE_RECORD_SIZE(1));
  return len;
}

/* One forged field: how to forge it and a word of the refusal's detail. */
struct forgery {
  const char *what;
  void (*forge)(struct cls__wire_record *w);
  const char *says;
};
#define FORGE(name, stmt, says)                                     \
  static void forge_##name(struct cls__wire_record *w) { stmt; }
#define FORGERIES(X)                                                                     \
  X(root_stream_max, w->stream = INT32_MAX, "root stream 2147483647")                    \
  X(root_stream_64, w->stream = CLS_MAX_STREAMS, "root stream 64")                       \
  X(root_stream_minus_2, w->stream = -2, "root stream -2")                               \
  X(status_zero, w->status = 0, "status 0")                                              \
  X(status_positive, w->status = 7, "status 7")                                          \
  X(status_past_the_table, w->status = CLS__ERR_LAST - 5, "is no CLS_E* code")          \
  X(cl_status_positive, w->cl_status = 3, "OpenCL status 3")                             \
  X(cl_status_huge, w->cl_status = INT32_MIN, "OpenCL status")                           \
  X(origin_negative, w->origin = -4, "origin -4")                                        \
  X(async_two, w->async = 2, "async 2")                                                  \
  X(pad_set, w->pad = 1, "padding 1")                                                    \
  X(position_past_int64, w->position = (uint64_t)INT64_MAX + 1, "root position")         \
  X(skipped_more_than_entries, w->skipped += 1, "launches skipped")                      \
  X(skipped_less_than_entries, w->skipped = 0, "launches skipped")                       \
  X(dropped_huge, w->dropped = UINT64_MAX, "dropped")                                    \
  X(dropped_uncounted, w->dropped = 5, "launches skipped")                               \
  X(operation_unterminated, memset(w->operation, 'a', sizeof w->operation), "no text")  \
  X(operation_control, w->operation[1] = '\n', "no text")                                \
  X(kernel_unterminated, memset(w->kernel, 'k', sizeof w->kernel), "no text")            \
  X(message_unterminated, memset(w->message, 'm', sizeof w->message), "no text")         \
  X(skip_kind_zero, w->skips[0].kind = 0, "skip entry 0 (kind 0")                        \
  X(skip_kind_four, w->skips[0].kind = 4, "kind 4")                                      \
  X(skip_stream_negative, w->skips[0].stream = -1, "stream -1")                          \
  X(skip_stream_64, w->skips[0].stream = CLS_MAX_STREAMS, "stream 64")                   \
  X(skip_stream_max, w->skips[0].stream = INT32_MAX, "stream 2147483647")                \
  X(skip_origin_negative, w->skips[0].origin = -1, "origin -1")                          \
  X(skip_pad_set, w->skips[0].pad = 9, "skip entry 0")                                   \
  X(skip_position_zero, w->skips[0].position = 0, "position 0")                          \
  X(skip_position_huge, w->skips[0].position = UINT64_MAX, "position 18446744073709551615") \
  X(skip_count_zero, w->skips[0].count = 0, "count 0")                                   \
  X(skip_count_huge, (w->skips[0].count = UINT64_MAX, w->skipped = UINT64_MAX),          \
    "count 18446744073709551615")                                                        \
  X(skip_kernel_empty, w->skips[0].kernel[0] = '\0', "skip entry 0")                     \
  X(skip_kernel_unterminated, memset(w->skips[0].kernel, 'q', sizeof w->skips[0].kernel), \
    "skip entry 0")                                                                      \
  X(skip_kernel_control, w->skips[0].kernel[0] = 0x7f, "skip entry 0")                   \
  X(nskips_past_the_bound, w->nskips = CLS__MAX_SKIP_ENTRIES + 1, "skip entries in")
FORGERIES(FORGE)
#define FORGERY_ROW(name, stmt, says) {#name, forge_##name, says},
static const struct forgery forgeries[] = {FORGERIES(FORGERY_ROW)};

/* Every forged field is refused with CLS_EINVAL naming what is wrong, and
 * the receiving buffer carries a failure that says so (it kept none of
 * its old bytes); the record as made is taken. */
START_TEST(F12_forged_wire_record_fields_are_refused) {
  setenv("CLS_LOG", "off", 1);
  cls_context *a = ct_context_with("enqueue:kernel=blur,nth=1", NULL, NULL), *b = ct_context();
  CT_OK(cls_wire_set_rank(a, 2));
  struct cls__wire_record good, w;
  size_t len = good_record(a, &good);
  cls_buffer y = ct_alloc(b, 0, N * sizeof(int));
  int host[N] = {0};
  for (size_t i = 0; i < sizeof forgeries / sizeof *forgeries; i++) {
    const struct forgery *f = &forgeries[i];
    memcpy(&w, &good, len);
    f->forge(&w);
    ct_upload_ints(b, 0, y, host, N);
    int rc = cls_wire_taint(b, 0, y, &w, len);
    ck_assert_msg(rc == CLS_EINVAL, "%s: accepted (%s): %s", f->what, cls_err_name(rc),
                  cls_last_error_detail());
    ck_assert_msg(strstr(cls_last_error_detail(), f->says) != NULL, "%s: no \"%s\" in: %s",
                  f->what, f->says, cls_last_error_detail());
    cls_report *r = NULL;
    CT_ERR(cls_download(b, 0, y, 0, host, sizeof host, &r), CLS_ETAINTED);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    ck_assert_int_eq(fi.status, CLS_EINVAL);
    ck_assert_str_eq(fi.operation, "receive");
    ck_assert_msg(strstr(fi.message, "record") != NULL, "%s: %s", f->what, fi.message);
    cls_report_free(r);
  }
  ct_upload_ints(b, 0, y, host, N);
  CT_ERR(cls_wire_taint(b, 0, y, &good, len), CLS_ETAINTED);
  cls_context_destroy(a);
  cls_context_destroy(b);
}
END_TEST

/* Randomly forged records (fields set to random and edge values, bytes
 * flipped): each is refused, or taken with every field of the report in
 * range -- never a crash, never a record out of range. */
START_TEST(F12_randomly_forged_wire_records_are_refused_or_in_range) {
  setenv("CLS_LOG", "off", 1);
  cls_context *a = ct_context_with("enqueue:kernel=blur,nth=1", NULL, NULL), *b = ct_context();
  CT_OK(cls_wire_set_rank(a, 2));
  struct cls__wire_record good, w;
  size_t len = good_record(a, &good);
  cls_buffer y = ct_alloc(b, 0, N * sizeof(int));
  unsigned seed = (unsigned)time(NULL);
  if (getenv("CT_SEED"))
    seed = (unsigned)strtoul(getenv("CT_SEED"), NULL, 10);
  srand(seed);
  static const int64_t edges[] = {0, 1, -1, 2, 63, 64, 65, INT32_MAX, INT32_MIN, INT64_MAX,
                                  INT64_MIN, CLS__ERR_LAST, CLS_ELAUNCH};
  int host[N] = {0}, refused = 0, taken = 0;
  for (int it = 0; it < 3000; it++) {
    memcpy(&w, &good, len);
    unsigned char *bytes = (unsigned char *)&w;
    int n = 1 + rand() % 3;
    for (int j = 0; j < n; j++) {
      /* a word at an aligned offset takes an edge value, or a byte flips */
      size_t off = (size_t)rand() % (len / 4) * 4;
      if (rand() % 2) {
        int64_t v = edges[rand() % (sizeof edges / sizeof *edges)];
        size_t width = off % 8 == 0 && off + 8 <= len && rand() % 2 ? 8 : 4;
        if (width == 8)
          memcpy(bytes + off, &v, 8);
        else {
          int32_t v32 = (int32_t)v;
          memcpy(bytes + off, &v32, 4);
        }
      } else {
        bytes[off + (size_t)rand() % 4] ^= (unsigned char)(1u << (rand() % 8));
      }
    }
    ct_upload_ints(b, 0, y, host, N);
    int rc = cls_wire_taint(b, 0, y, &w, len);
    ck_assert_msg(rc == CLS_EINVAL || rc == CLS_ETAINTED, "seed %u, iteration %d: %s: %s", seed,
                  it, cls_err_name(rc), cls_last_error_detail());
    cls_report *r = NULL;
    CT_ERR(cls_download(b, 0, y, 0, host, sizeof host, &r), CLS_ETAINTED);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    if (rc == CLS_EINVAL) {
      refused++;
      ck_assert_int_eq(fi.status, CLS_EINVAL);
    } else {
      taken++;
      ck_assert_msg(fi.status < 0 && fi.status > CLS__ERR_LAST, "seed %u: status %d", seed,
                    fi.status);
      ck_assert_msg(fi.stream >= -1 && fi.stream < CLS_MAX_STREAMS, "seed %u: stream %d", seed,
                    fi.stream);
      ck_assert_msg(fi.position <= (uint64_t)INT64_MAX, "seed %u", seed);
      uint64_t sum = 0;
      for (size_t i = 0; i < fi.nskips; i++) {
        struct cls_skip_info si;
        CT_OK(cls_report_skip(r, 0, i, &si));
        ck_assert_msg(si.stream >= 0 && si.stream < CLS_MAX_STREAMS && si.count >= 1 &&
                          si.position >= 1 && si.kernel[0] &&
                          (si.kind == CLS_SKIP_SKIPPED || si.kind == CLS_SKIP_UNTRUSTED ||
                           si.kind == CLS_SKIP_REPLAY),
                      "seed %u: skip %zu: stream %d count %llu", seed, i, si.stream,
                      (unsigned long long)si.count);
        sum += si.count;
      }
      ck_assert_msg(sum <= fi.skipped, "seed %u: entries count %llu of %llu", seed,
                    (unsigned long long)sum, (unsigned long long)fi.skipped);
      ck_assert_ptr_nonnull(cls_report_text(r));
    }
    cls_report_free(r);
  }
  ck_assert_int_gt(refused, 0);
  ck_assert_int_gt(taken, 0); /* the message's bytes are free text */
  cls_context_destroy(a);
  cls_context_destroy(b);
}
END_TEST

static void count_lines(void *user, int level, const char *message) {
  (void)level;
  if (strstr(message, "on rank 3: CLS_ELAUNCH"))
    ++*(int *)user;
}

/* One failure, however many copies of its record arrive: two buffers that
 * took a copy each are checked together and name it once; it is logged
 * once, also when a copy arrives after every earlier one was overwritten;
 * a copy whose chain grew adds the new entries to the record. */
START_TEST(F9_copies_of_one_failure_are_one_failure_logged_once) {
  cls_context *a = ct_context_with("enqueue:kernel=blur,nth=1", NULL, NULL), *b = ct_context();
  CT_OK(cls_wire_set_rank(a, 3));
  CT_OK(cls_wire_set_rank(b, 1));
  int lines = 0;
  CT_OK(cls_set_logger(b, CLS_LOG_ERRORS, count_lines, &lines));
  struct cls__wire_record first, grown;
  size_t len1 = 0, len2 = 0;
  cls_kernel *k = ct_kernel(a, src, "blur");
  cls_buffer x = ct_alloc(a, 0, N * sizeof(int)), y = ct_alloc(a, 0, N * sizeof(int)),
             z = ct_alloc(a, 0, N * sizeof(int));
  int host[N] = {0};
  ct_upload_ints(a, 0, x, host, N);
  blur(a, 0, k, x, y, CLS_ELAUNCH);
  CT_ERR(cls_wire_read(a, 0, y, 0, host, sizeof host, &first, &len1), CLS_ETAINTED);
  size_t g = N;
  cls_arg args[] = {CLS_IN(y), CLS_OUT(z)};
  int rc = cls_launch(a, 0, k, 1, &g, NULL, 2, args);
  ck_assert_msg(rc == CLS_ESKIPPED || rc == CLS_OK, "%s", cls_err_name(rc));
  CT_ERR(cls_wire_read(a, 0, z, 0, host, sizeof host, &grown, &len2), CLS_ETAINTED);
  ck_assert_uint_eq(grown.nskips, 1);

  cls_buffer p = ct_alloc(b, 0, N * sizeof(int)), q = ct_alloc(b, 1, N * sizeof(int));
  CT_ERR(cls_wire_taint(b, 0, p, &first, len1), CLS_ETAINTED);
  CT_ERR(cls_wire_taint(b, 1, q, &first, len1), CLS_ETAINTED);
  cls_buffer both[2] = {p, q};
  cls_report *rep = NULL;
  CT_ERR(cls_check(b, 2, both, &rep), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(rep), 1);
  cls_report_free(rep);
  ck_assert_int_eq(lines, 1);

  /* the grown copy: its chain joins the record both buffers hold */
  CT_ERR(cls_wire_taint(b, 1, q, &grown, len2), CLS_ETAINTED);
  CT_ERR(cls_check(b, 2, both, &rep), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(rep), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  ck_assert_uint_eq(fi.skipped, 1);
  ck_assert_uint_eq(fi.nskips, 1);
  cls_report_free(rep);
  ck_assert_int_eq(lines, 1);

  /* overwritten everywhere, then another copy: the same failure, not
   * logged again */
  ct_upload_ints(b, 0, p, host, N);
  ct_upload_ints(b, 1, q, host, N);
  CT_OK(cls_check(b, 2, both, NULL));
  CT_ERR(cls_wire_taint(b, 0, p, &first, len1), CLS_ETAINTED);
  ck_assert_int_eq(lines, 1);
  cls_context_destroy(a);
  cls_context_destroy(b);
}
END_TEST

/* The fault grammar's rank=R: a fault fires only in the process of that
 * rank, and never where no rank is known. */
START_TEST(fault_rank_key_fires_on_that_rank_only) {
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMI_RANK");
  unsetenv("PMIX_RANK");
  const char *spec = "enqueue:kernel=blur,rank=2";
  for (int rank = -1; rank <= 2; rank++) {
    cls_context *ctx = ct_context_with(spec, NULL, NULL);
    if (rank >= 0)
      CT_OK(cls_wire_set_rank(ctx, rank));
    cls_kernel *k = ct_kernel(ctx, src, "blur");
    cls_buffer x = ct_alloc(ctx, 0, N * sizeof(int)), y = ct_alloc(ctx, 0, N * sizeof(int));
    int host[N] = {0};
    ct_upload_ints(ctx, 0, x, host, N);
    blur(ctx, 0, k, x, y, rank == 2 ? CLS_ELAUNCH : CLS_OK);
    int got[N];
    CT_ERR(cls_download(ctx, 0, y, 0, got, sizeof got, NULL), rank == 2 ? CLS_ETAINTED : CLS_OK);
    cls_context_destroy(ctx);
  }
  setenv("OMPI_COMM_WORLD_RANK", "2", 1); /* the launcher's, when none was set */
  cls_context *ctx = ct_context_with(spec, NULL, NULL);
  cls_kernel *k = ct_kernel(ctx, src, "blur");
  cls_buffer x = ct_alloc(ctx, 0, N * sizeof(int)), y = ct_alloc(ctx, 0, N * sizeof(int));
  int host[N] = {0};
  ct_upload_ints(ctx, 0, x, host, N);
  blur(ctx, 0, k, x, y, CLS_ELAUNCH);
  cls_context_destroy(ctx);
  unsetenv("OMPI_COMM_WORLD_RANK");
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = "enqueue:kernel=blur,rank=-1"};
  cls_context *bad = NULL;
  CT_ERR(cls_context_create(&bad, &o), CLS_ECONFIG);
  o.fault = "enqueue:rank=1,rank=2";
  CT_ERR(cls_context_create(&bad, &o), CLS_ECONFIG);
}
END_TEST

/* Pinned staging memory: written and read by the host, freed. */
START_TEST(staging_memory_is_host_memory) {
  cls_context *ctx = ct_context();
  cls_wire_host *h = NULL;
  void *p = NULL;
  CT_OK(cls_wire_host_alloc(ctx, 4096, &h, &p));
  ck_assert_ptr_nonnull(h);
  ck_assert_ptr_nonnull(p);
  memset(p, 0xab, 4096);
  ck_assert_int_eq(((unsigned char *)p)[4095], 0xab);
  cls_buffer x = ct_alloc(ctx, 0, 4096);
  CT_OK(cls_upload(ctx, 0, x, 0, p, 4096));
  memset(p, 0, 4096);
  CT_OK(cls_download(ctx, 0, x, 0, p, 4096, NULL));
  ck_assert_int_eq(((unsigned char *)p)[17], 0xab);
  cls_wire_host_free(h);
  cls_wire_host_free(NULL);
  CT_ERR(cls_wire_host_alloc(ctx, 0, &h, &p), CLS_EINVAL);
  ck_assert_ptr_null(h);
  CT_ERR(cls_wire_host_alloc(NULL, 16, &h, &p), CLS_EINVAL);
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("wire");
  CT_ADD(s, F2_record_round_trip_names_the_rank_and_chain);
  CT_ADD(s, F2_a_whole_replay_skip_travels_with_its_capture_and_count);
  CT_ADD(s, clean_refused_and_malformed_transfers);
  CT_ADD(s, F9_copies_of_one_failure_are_one_failure_logged_once);
  CT_ADD(s, F12_forged_wire_record_fields_are_refused);
  CT_ADD(s, F12_randomly_forged_wire_records_are_refused_or_in_range);
  CT_ADD(s, fault_rank_key_fires_on_that_rank_only);
  CT_ADD(s, staging_memory_is_host_memory);
  return ct_run(s);
}
