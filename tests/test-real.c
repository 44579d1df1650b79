/* The corpus of real-idiom programs (tests/real/, issue 29): each program
 * runs in raw OpenCL and through clstream, from the one kernel source
 * string, on the device clstream picks, and the two results must be the
 * same bytes.  The raw result is checked against a host reference first,
 * so that two equally wrong sides cannot pass.  The clstream side runs
 * twice in one context (the second time on pooled memory), binds the
 * programs' read-only non-const __global pointers CLS_IN as published code
 * would (F11: accepted, ordered as reads), and must end with no failure
 * on any stream, also in guard mode.  Under make check-vendors the same runs on rusticl and
 * oclgrind (smaller inputs under CLS_TEST_QUICK). */
#include "common.h"

#include "real/real.h"

/* The first byte where a and b differ, or -1. */
static long first_difference(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i])
      return (long)i;
  return -1;
}

/* guard: the context's guard option (0: $CLS_GUARD, then off). */
static void run_corpus_program(const struct real_program *p, int guard) {
  void *host = p->prepare(ct_quick());
  ck_assert_msg(host != NULL, "%s: out of memory for the inputs", p->name);
  size_t size = p->out_size(host);
  unsigned char *raw_out = malloc(size), *cls_out = malloc(size);
  ck_assert_msg(raw_out && cls_out, "%s: out of memory for the outputs", p->name);
  /* Different fillers: a byte either side leaves unwritten differs. */
  memset(raw_out, 0xa5, size);
  memset(cls_out, 0x5a, size);

  real_error[0] = '\0';
  struct real_raw r;
  cl_program prog = NULL;
  cl_kernel rk[REAL_MAX_KERNELS];
  ck_assert_msg(real_raw_open(&r) == 0, "%s: %s", p->name, real_error);
  ck_assert_msg(real_raw_build(&r, p, &prog, rk) == 0,
                "%s: the raw build failed on this vendor: %s", p->name, real_error);
  ck_assert_msg(p->raw(&r, rk, host, raw_out) == 0, "%s: %s", p->name, real_error);
  const char *why = p->check(host, raw_out);
  ck_assert_msg(why == NULL, "%s, raw OpenCL: %s", p->name, why);
  real_raw_unbuild(prog, rk);
  real_raw_close(&r);

  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = guard};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *k[REAL_MAX_KERNELS] = {NULL};
  real_audit = 1;
  real_in_writable = real_in_unknown = real_launches = 0;
  ck_assert_msg(real_cls_build(ctx, p, k) == 0, "%s: %s", p->name, real_error);
  for (int round = 0; round < 2; round++) {
    int rc = p->cls(ctx, k, host, cls_out);
    ck_assert_msg(rc == 0, "%s, clstream run %d%s: %s", p->name, round + 1,
                  strstr(real_error, "CLS_EACCESS") ? " (refused a kernel raw OpenCL runs)" : "",
                  real_error);
    long at = first_difference(raw_out, cls_out, size);
    ck_assert_msg(at < 0, "%s, clstream run %d: byte %ld of %zu differs from raw OpenCL's "
                  "(raw 0x%02x, clstream 0x%02x)", p->name, round + 1, at, size,
                  at < 0 ? 0 : raw_out[at], at < 0 ? 0 : cls_out[at]);
    memset(cls_out, 0x5a, size);
  }
  /* No change to the kernels: both sides built the program's one string,
   * with the same options. */
  ck_assert_msg(real_raw_built_src == p->src && real_cls_built_src == p->src,
                "%s: the two sides did not build the same source", p->name);
  ck_assert_str_eq(real_raw_built_opts, real_cls_built_opts);
  /* The idiom is there: read-only inputs are non-const pointers bound CLS_IN. */
  ck_assert_msg(real_in_writable + real_in_unknown > 0,
                "%s: no CLS_IN binding of a non-const __global pointer in %u launches", p->name,
                real_launches);
  for (int s = 0; s < CLS_MAX_STREAMS; s++) {
    struct cls_stream_stats st;
    CT_OK(cls_stream_stats(ctx, s, &st));
    ck_assert_msg(st.failures == 0 && st.skips == 0,
                  "%s: stream %d minted %llu failures and skipped %llu launches", p->name, s,
                  (unsigned long long)st.failures, (unsigned long long)st.skips);
  }
  cls_report *rep = NULL;
  int rc = cls_sync(ctx, &rep);
  ck_assert_msg(rc == 0, "%s: cls_sync: %s: %s", p->name, cls_err_name(rc),
                rep ? cls_report_text(rep) : cls_last_error_detail());
  cls_context_destroy(ctx);
  free(raw_out);
  free(cls_out);
  p->release(host);
}

#define REAL_CASE(prog)                                                       \
  START_TEST(real_##prog##_matches_raw_byte_for_byte) {                       \
    run_corpus_program(&real_##prog, 0);                                         \
  }                                                                           \
  END_TEST

REAL_CASE(histogram)
REAL_CASE(reduce)
REAL_CASE(scan)
REAL_CASE(stencil)
REAL_CASE(spmv)
REAL_CASE(bfs)
REAL_CASE(transpose)
REAL_CASE(matmul)
REAL_CASE(nbody)
REAL_CASE(sort)
REAL_CASE(tiles)

/* Guard mode checks what each launch wrote (bounds, the CLS_OUT canary,
 * and, where it checks them, that F11's CLS_IN bindings stayed unwritten):
 * the corpus's declarations are true, so it runs clean, with raw's bytes. */
START_TEST(real_corpus_matches_raw_under_guard_mode) {
  for (int i = 0; i < REAL_COUNT; i++)
    run_corpus_program(real_corpus[i], 1);
}
END_TEST

/* The list the benchmark times is the list tested here. */
START_TEST(real_corpus_lists_every_program_once) {
  const struct real_program *tested[] = {&real_histogram, &real_reduce, &real_scan,
                                         &real_stencil,   &real_spmv,   &real_bfs,
                                         &real_transpose, &real_matmul,  &real_nbody, &real_sort,
                                         &real_tiles};
  ck_assert_int_eq(REAL_COUNT, sizeof tested / sizeof *tested);
  for (int i = 0; i < REAL_COUNT; i++) {
    int found = 0;
    for (int j = 0; j < REAL_COUNT; j++)
      found += real_corpus[j] == tested[i];
    ck_assert_msg(found == 1, "%s is listed %d times in real_corpus", tested[i]->name, found);
  }
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("real");
  CT_ADD(s, real_histogram_matches_raw_byte_for_byte);
  CT_ADD(s, real_reduce_matches_raw_byte_for_byte);
  CT_ADD(s, real_scan_matches_raw_byte_for_byte);
  CT_ADD(s, real_stencil_matches_raw_byte_for_byte);
  CT_ADD(s, real_spmv_matches_raw_byte_for_byte);
  CT_ADD(s, real_bfs_matches_raw_byte_for_byte);
  CT_ADD(s, real_transpose_matches_raw_byte_for_byte);
  CT_ADD(s, real_matmul_matches_raw_byte_for_byte);
  CT_ADD(s, real_nbody_matches_raw_byte_for_byte);
  CT_ADD(s, real_sort_matches_raw_byte_for_byte);
  CT_ADD(s, real_tiles_matches_raw_byte_for_byte);
  CT_ADD(s, real_corpus_matches_raw_under_guard_mode);
  CT_ADD(s, real_corpus_lists_every_program_once);
  return ct_run(s);
}
