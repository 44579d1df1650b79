/* Programs and kernels: builds, the build cache, build failures, lookups. */
#include "common.h"

static cls_context *ctx;

static void setup(void) { ctx = ct_context(); }
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

#define VAL_SRC                                                        \
  "kernel void val_k(global int *o) { o[get_global_id(0)] = VAL; }\n"

#define BAD_SRC                                                        \
  "kernel void bad_k(global int *o) {\n"                               \
  "  o[get_global_id(0)] = ;\n"                                        \
  "}\n"

/* Runs val_k from p over 16 items and returns o[5]. */
static int run_val(cls_program *p) {
  cls_kernel *k = ct_get_kernel(ctx, p, "val_k");
  cls_buffer o = ct_alloc(ctx, 0, 16 * sizeof(int));
  cls_arg a[] = {CLS_OUT(o)};
  ct_launch1(ctx, 0, k, 16, 1, a);
  int got[16];
  ct_download_ints(ctx, 0, o, got, 16);
  CT_OK(cls_free(ctx, o));
  return got[5];
}

START_TEST(build_succeeds_and_gives_kernels) {
  cls_program *p = ct_build(ctx, CT_ALL_SRC, NULL);
  const char *names[] = {"fill_k", "add_k", "inc_k", "copy_k", "slow_k", "idx2_k", "idx3_k",
                         "rev_k"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    cls_kernel *k = ct_get_kernel(ctx, p, names[i]);
    ck_assert_str_eq(cls_kernel_name(k), names[i]);
  }
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

START_TEST(kernel_name_and_arg_count) {
  cls_program *p = ct_build(ctx, CT_ALL_SRC, NULL);
  struct {
    const char *name;
    int nargs;
  } want[] = {{"fill_k", 2}, {"add_k", 3}, {"inc_k", 1}, {"copy_k", 2},
              {"slow_k", 3}, {"idx2_k", 1}, {"rev_k", 3}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cls_kernel *k = ct_get_kernel(ctx, p, want[i].name);
    ck_assert_str_eq(cls_kernel_name(k), want[i].name);
    ck_assert_int_eq(cls_kernel_num_args(k), want[i].nargs);
  }
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

START_TEST(same_source_and_options_hit_the_cache) {
  cls_program *a = ct_build(ctx, CT_FILL_SRC CT_ADD_SRC, NULL);
  cls_program *b = ct_build(ctx, CT_FILL_SRC CT_ADD_SRC, NULL);
  ck_assert_ptr_eq(a, b);
  cls_program *c = ct_build(ctx, CT_FILL_SRC CT_ADD_SRC, "-DUNUSED=1");
  cls_program *d = ct_build(ctx, CT_FILL_SRC CT_ADD_SRC, "-DUNUSED=1");
  ck_assert_ptr_eq(c, d);
  ck_assert_ptr_ne(a, c);
  /* The source is compared by content, not by pointer. */
  char copy[] = CT_FILL_SRC CT_ADD_SRC;
  cls_program *e = ct_build(ctx, copy, NULL);
  ck_assert_ptr_eq(a, e);
  /* Every build gave a reference. */
  CT_OK(cls_program_release(ctx, a));
  CT_OK(cls_program_release(ctx, b));
  CT_OK(cls_program_release(ctx, e));
  CT_OK(cls_program_release(ctx, c));
  CT_OK(cls_program_release(ctx, d));
}
END_TEST

START_TEST(different_options_build_different_programs) {
  cls_program *one = ct_build(ctx, VAL_SRC, "-DVAL=1");
  cls_program *two = ct_build(ctx, VAL_SRC, "-DVAL=2");
  ck_assert_ptr_ne(one, two);
  ck_assert_int_eq(run_val(one), 1);
  ck_assert_int_eq(run_val(two), 2);
  cls_program *again = ct_build(ctx, VAL_SRC, "-DVAL=1");
  ck_assert_ptr_eq(again, one);
  ck_assert_int_eq(run_val(again), 1);
  CT_OK(cls_program_release(ctx, one));
  CT_OK(cls_program_release(ctx, two));
  CT_OK(cls_program_release(ctx, again));
}
END_TEST

START_TEST(different_source_builds_a_different_program) {
  cls_program *a = ct_build(ctx, CT_FILL_SRC, NULL);
  cls_program *b = ct_build(ctx, CT_COPY_SRC, NULL);
  ck_assert_ptr_ne(a, b);
  cls_kernel *k = NULL;
  CT_ERR(cls_kernel_get(ctx, a, "copy_k", &k), CLS_ENOKERNEL);
  CT_ERR(cls_kernel_get(ctx, b, "fill_k", &k), CLS_ENOKERNEL);
  CT_OK(cls_program_release(ctx, a));
  CT_OK(cls_program_release(ctx, b));
}
END_TEST

START_TEST(syntax_error_is_ebuild_with_the_build_log) {
  cls_program *p = NULL;
  CT_ERR(cls_program_build(ctx, BAD_SRC, NULL, &p), CLS_EBUILD);
  const char *log = cls_last_error_detail();
  ck_assert_ptr_nonnull(log);
  ck_assert_msg(ct_icontains(log, "error"), "detail has no build log: '%s'", log);
  /* A failed build is not cached as a success. */
  p = NULL;
  CT_ERR(cls_program_build(ctx, BAD_SRC, NULL, &p), CLS_EBUILD);
  ck_assert_msg(ct_icontains(cls_last_error_detail(), "error"),
                "second failed build has no log: '%s'", cls_last_error_detail());
  /* The context still builds and runs good programs. */
  cls_program *good = ct_build(ctx, VAL_SRC, "-DVAL=7");
  ck_assert_int_eq(run_val(good), 7);
  CT_OK(cls_program_release(ctx, good));
}
END_TEST

START_TEST(bogus_build_option_is_ebuild) {
  cls_program *p = NULL;
  CT_ERR(cls_program_build(ctx, CT_FILL_SRC, "-bogus-option", &p), CLS_EBUILD);
  /* The same source without the option builds. */
  cls_program *good = ct_build(ctx, CT_FILL_SRC, NULL);
  ct_get_kernel(ctx, good, "fill_k");
  CT_OK(cls_program_release(ctx, good));
}
END_TEST

START_TEST(unknown_kernel_name_is_enokernel) {
  cls_program *p = ct_build(ctx, CT_ALL_SRC, NULL);
  cls_kernel *k = NULL;
  CT_ERR(cls_kernel_get(ctx, p, "no_such_kernel", &k), CLS_ENOKERNEL);
  CT_ERR(cls_kernel_get(ctx, p, "", &k), CLS_ENOKERNEL);
  CT_ERR(cls_kernel_get(ctx, p, "fill", &k), CLS_ENOKERNEL);     /* a prefix */
  CT_ERR(cls_kernel_get(ctx, p, "fill_k_x", &k), CLS_ENOKERNEL); /* longer */
  /* The real one is still found. */
  ct_get_kernel(ctx, p, "fill_k");
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

/* The detail says what to ask for instead: the kernels the program has. */
START_TEST(unknown_kernel_lists_the_kernels_the_program_has) {
  cls_program *p = ct_build(ctx, CT_FILL_SRC CT_ADD_SRC CT_COPY_SRC, NULL);
  cls_kernel *k = NULL;
  CT_ERR(cls_kernel_get(ctx, p, "fil_k", &k), CLS_ENOKERNEL);
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, "'fil_k'") != NULL, "the detail names the kernel asked for: %s", d);
  const char *has = strstr(d, "the program has:");
  ck_assert_msg(has != NULL, "no list of kernels: %s", d);
  ck_assert_msg(strstr(has, "fill_k") && strstr(has, "add_k") && strstr(has, "copy_k"), "%s", d);
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

START_TEST(kernel_outlives_released_program) {
  cls_program *p = ct_build(ctx, VAL_SRC, "-DVAL=42");
  cls_kernel *k = ct_get_kernel(ctx, p, "val_k");
  CT_OK(cls_program_release(ctx, p));
  /* A released program gives no new kernels (CLS_ESTALE); those taken
   * before run on. */
  cls_kernel *late = (cls_kernel *)&late;
  CT_ERR(cls_kernel_get(ctx, p, "val_k", &late), CLS_ESTALE);
  ck_assert_ptr_null(late);
  ck_assert_msg(strstr(cls_last_error_detail(), "released"), "%s", cls_last_error_detail());
  cls_buffer o = ct_alloc(ctx, 0, 8 * sizeof(int));
  cls_arg a[] = {CLS_OUT(o)};
  ct_launch1(ctx, 0, k, 8, 1, a);
  int got[8];
  ct_download_ints(ctx, 0, o, got, 8);
  CT_EXPECT_INTS(got, (size_t)8, i, 42);
  ck_assert_str_eq(cls_kernel_name(k), "val_k");
  ck_assert_int_eq(cls_kernel_num_args(k), 1);
}
END_TEST

START_TEST(build_again_after_release) {
  cls_program *p = ct_build(ctx, VAL_SRC, "-DVAL=3");
  CT_OK(cls_program_release(ctx, p));
  cls_program *q = ct_build(ctx, VAL_SRC, "-DVAL=3");
  ck_assert_ptr_eq(q, p); /* the context's own, held again: kernels from it anew */
  ck_assert_int_eq(run_val(q), 3);
  CT_OK(cls_program_release(ctx, q));
}
END_TEST

START_TEST(release_then_destroy_is_clean) {
  /* Its own context: destroyed here, with programs released and not. */
  cls_context *c = ct_context();
  cls_program *p = ct_build(c, CT_ALL_SRC, NULL);
  cls_program *q = ct_build(c, VAL_SRC, "-DVAL=9");
  cls_kernel *k = NULL;
  CT_OK(cls_kernel_get(c, p, "fill_k", &k));
  CT_OK(cls_program_release(c, p));
  (void)q; /* never released: the context frees it */
  cls_context_destroy(c);
}
END_TEST

START_TEST(programs_are_per_context) {
  cls_context *other = ct_context();
  cls_program *a = ct_build(ctx, CT_FILL_SRC, NULL);
  cls_program *b = ct_build(other, CT_FILL_SRC, NULL);
  ck_assert_ptr_ne(a, b);
  cls_kernel *k = ct_get_kernel(other, b, "fill_k");
  cls_buffer o = ct_alloc(other, 0, 4 * sizeof(int));
  int v = 11;
  cls_arg args[] = {CLS_OUT(o), CLS_SCALAR(v)};
  ct_launch1(other, 0, k, 4, 2, args);
  int got[4];
  ct_download_ints(other, 0, o, got, 4);
  CT_EXPECT_INTS(got, (size_t)4, i, 11);
  cls_context_destroy(other);
  /* ctx is untouched by the other's destruction. */
  cls_kernel *ka = ct_get_kernel(ctx, a, "fill_k");
  cls_buffer oa = ct_alloc(ctx, 0, 4 * sizeof(int));
  cls_arg aa[] = {CLS_OUT(oa), CLS_SCALAR(v)};
  ct_launch1(ctx, 0, ka, 4, 2, aa);
  ct_download_ints(ctx, 0, oa, got, 4);
  CT_EXPECT_INTS(got, (size_t)4, i, 11);
  CT_OK(cls_program_release(ctx, a));
}
END_TEST

/* A failed build is remembered: its kernels launch as failed and their
 * outputs carry the build failure, with the log, to the read. */
START_TEST(failed_build_reaches_the_read_with_its_log) {
  cls_program *p = NULL;
  CT_ERR(cls_program_build(ctx, BAD_SRC, NULL, &p), CLS_EBUILD);
  ck_assert_ptr_nonnull(p);
  cls_kernel *k = NULL;
  CT_OK(cls_kernel_get(ctx, p, "bad_k", &k));
  cls_buffer out = ct_alloc(ctx, 1, 4 * sizeof(int));
  int zero = 0;
  CT_OK(cls_fill(ctx, 1, out, 0, 4 * sizeof(int), &zero, sizeof zero));
  size_t g = 4;
  CT_ERR(cls_launch(ctx, 1, k, 1, &g, NULL, 1, (cls_arg[]){CLS_OUT(out)}), CLS_EBUILD);
  int got[4];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, out, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_int_eq(fi.status, CLS_EBUILD);
  ck_assert_str_eq(fi.operation, "build");
  ck_assert_msg(ct_icontains(fi.build_log, "error"), "build log excerpt: '%s'", fi.build_log);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_str_eq(si.kernel, "bad_k");
  ck_assert_int_eq(si.stream, 1);
  ck_assert(strstr(cls_report_text(r), "build log"));
  cls_report_free(r);
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

/* ------------------------------------------------------------------ */
/* cls_kernel_info: ask before you are refused                         */
/* ------------------------------------------------------------------ */

#define LONG_NAME "an_argument_name_longer_than_sixty_three_bytes_which_is_cut_to_fit_it"
#define SIG_SRC                                                        \
  "kernel void sig_k(global const float *in, global float *out,\n"    \
  "                  constant int *table, local int *scratch, int n,\n" \
  "                  global int *" LONG_NAME ") {\n"                   \
  "  local int own[64];\n"                                             \
  "  size_t i = get_global_id(0), l = get_local_id(0);\n"              \
  "  own[l % 64] = table[0];\n"                                        \
  "  scratch[l] = n;\n"                                                \
  "  barrier(CLK_LOCAL_MEM_FENCE);\n"                                  \
  "  out[i] = in[i] + (float)(own[0] + scratch[0]);\n"                 \
  "  " LONG_NAME "[i] = 1;\n"                                          \
  "}\n"

static struct cls_kernel_info kernel_info(cls_kernel *k) {
  struct cls_kernel_info ki;
  memset(&ki, 0x7f, sizeof ki);
  ki.version = CLS_KERNEL_INFO_VERSION;
  int rc = cls_kernel_info(k, &ki);
  ck_assert_msg(rc == 0, "cls_kernel_info(%s): %s: %s", cls_kernel_name(k), cls_err_name(rc),
                cls_last_error_detail());
  ck_assert_uint_eq(ki.version, CLS_KERNEL_INFO_VERSION);
  return ki;
}

/* Names, kinds and the access clstream infers (F11), on every vendor:
 * all three give argument info, oclgrind at OpenCL 1.2 too. */
START_TEST(kernel_info_names_each_argument_its_kind_and_access) {
  struct cls_device_info d = ct_context_info(ctx);
  cls_kernel *k = ct_kernel(ctx, SIG_SRC, "sig_k");
  struct cls_kernel_info ki = kernel_info(k);
  ck_assert_int_eq(ki.nargs, 6);
  ck_assert_int_eq(ki.nargs, cls_kernel_num_args(k));
  static const struct {
    const char *name;
    int kind, access;
  } want[] = {{"in", CLS_ARG_BUFFER, CLS_READ},
              {"out", CLS_ARG_BUFFER, CLS_READ_WRITE},
              {"table", CLS_ARG_BUFFER, CLS_READ},
              {"scratch", CLS_ARG_LOCAL, 0},
              {"n", CLS_ARG_SCALAR, 0},
              {LONG_NAME, CLS_ARG_BUFFER, CLS_READ_WRITE}};
  for (int i = 0; i < 5; i++) {
    ck_assert_str_eq(ki.args[i].name, want[i].name);
    ck_assert_msg(ki.args[i].kind == want[i].kind && ki.args[i].access == want[i].access,
                  "argument %d (%s): kind %d access %d, expected %d %d", i, want[i].name,
                  ki.args[i].kind, ki.args[i].access, want[i].kind, want[i].access);
  }
  /* A long name is cut to the field, not dropped. */
  ck_assert_uint_eq(strlen(ki.args[5].name), sizeof ki.args[5].name - 1);
  ck_assert(strncmp(ki.args[5].name, LONG_NAME, sizeof ki.args[5].name - 1) == 0);
  ck_assert_int_eq(ki.args[5].kind, CLS_ARG_BUFFER);
  /* Past nargs: zeros. */
  ck_assert_str_eq(ki.args[6].name, "");
  ck_assert_int_eq(ki.args[6].kind, 0);
  /* Limits: within the device's, as reported. */
  ck_assert_uint_gt(ki.max_work_group_size, 0);
  ck_assert_uint_le(ki.max_work_group_size, d.max_work_group_size);
  ck_assert_uint_gt(ki.kernel_work_group_size, 0);
  ck_assert_uint_ge(ki.preferred_work_group_size_multiple, 1);
  /* 256 bytes of its own local memory (rusticl counts 512); no vendor
   * counts fewer.  Private memory: whatever the vendor says (PoCL 1024
   * for any kernel, the others 0 here). */
  ck_assert_uint_ge(ki.local_mem_size, 64 * sizeof(int));
  ck_assert_uint_le(ki.local_mem_size, d.local_mem_size);
}
END_TEST

/* The access the query tells is the one CLS_ARG takes (F11); CLS_IN on
 * an argument it calls read-write is trusted (raw OpenCL runs it). */
START_TEST(kernel_info_access_is_what_the_launch_checks) {
  cls_kernel *k = ct_kernel(ctx, CT_ADD_SRC, "add_k");
  struct cls_kernel_info ki = kernel_info(k);
  ck_assert_int_eq(ki.nargs, 3);
  ck_assert_int_eq(ki.args[0].access, CLS_READ);
  ck_assert_int_eq(ki.args[1].access, CLS_READ);
  ck_assert_int_eq(ki.args[2].access, CLS_READ_WRITE);
  cls_buffer a = ct_written(ctx, 0, 16, 2), b = ct_written(ctx, 0, 16, 3),
             c = ct_written(ctx, 0, 16, 0); /* CLS_ARG: read-write, so written first */
  size_t g = 16;
  CT_OK(cls_launch(ctx, 0, k, 1, &g, NULL, 3, (cls_arg[]){CLS_ARG(a), CLS_ARG(b), CLS_ARG(c)}));
  ct_expect_ints(ctx, 0, c, 16, 5);
  CT_OK(cls_launch(ctx, 0, k, 1, &g, NULL, 3, (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_IN(c)}));
}
END_TEST

/* The maximum the query tells is the one the launch enforces: a launch
 * at it runs, one above it is refused (rusticl: above the 32 it reports,
 * where the quirk probe found more runs; see test-quirks). */
START_TEST(kernel_info_maximum_is_what_the_launch_enforces) {
  struct cls_device_info d = ct_context_info(ctx);
  cls_kernel *k = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  struct cls_kernel_info ki = kernel_info(k);
  size_t most = ki.max_work_group_size < d.max_work_item_sizes[0] ? ki.max_work_group_size
                                                                  : d.max_work_item_sizes[0];
  size_t n = 2 * most, g[1] = {n}, l[1] = {most};
  cls_buffer o = ct_alloc(ctx, 0, n * sizeof(int));
  int v = 9;
  int rc = cls_launch(ctx, 0, k, 1, g, l, 2, (cls_arg[]){CLS_OUT(o), CLS_SCALAR(v)});
  ck_assert_msg(rc == 0, "local size %zu: %s: %s", most, cls_err_name(rc),
                cls_last_error_detail());
  int *got = malloc(n * sizeof *got);
  ck_assert_ptr_nonnull(got);
  ct_download_ints(ctx, 0, o, got, n);
  CT_EXPECT_INTS(got, n, i, 9);
  free(got);
  /* One more item per group than the maximum, in two dimensions so that
   * no dimension's own limit decides. */
  if (d.max_work_item_sizes[1] >= 2 && most >= 2 && most == ki.max_work_group_size) {
    size_t g2[2] = {most / 2 + 1, 2}, l2[2] = {most / 2 + 1, 2};
    if ((most / 2 + 1) * 2 > ki.max_work_group_size) {
      CT_ERR(cls_launch(ctx, 0, k, 2, g2, l2, 2, (cls_arg[]){CLS_OUT(o), CLS_SCALAR(v)}),
             CLS_EWORKSIZE);
      ck_assert_msg(strstr(cls_last_error_detail(), "exceeds the maximum"), "%s",
                    cls_last_error_detail());
    }
  }
}
END_TEST

START_TEST(kernel_info_arguments_and_version_are_checked) {
  cls_kernel *k = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_ERR(cls_kernel_info(NULL, &ki), CLS_EINVAL);
  CT_ERR(cls_kernel_info(k, NULL), CLS_EINVAL);
  unsigned fake[16] = {0};
  CT_ERR(cls_kernel_info((const cls_kernel *)fake, &ki), CLS_EINVAL);
  ki.version = 0;
  CT_ERR(cls_kernel_info(k, &ki), CLS_EVERSION);
  ki.version = CLS_KERNEL_INFO_VERSION + 1;
  CT_ERR(cls_kernel_info(k, &ki), CLS_EVERSION);
  /* A kernel of a failed build: nothing is known of it. */
  cls_program *p = NULL;
  CT_ERR(cls_program_build(ctx, BAD_SRC, NULL, &p), CLS_EBUILD);
  cls_kernel *bad = NULL;
  CT_OK(cls_kernel_get(ctx, p, "bad_k", &bad));
  ki.version = CLS_KERNEL_INFO_VERSION;
  CT_ERR(cls_kernel_info(bad, &ki), CLS_EBUILD);
  ck_assert_int_eq(ki.nargs, -1);
  ck_assert_uint_eq(ki.max_work_group_size, 0);
  ck_assert(strstr(cls_last_error_detail(), "bad_k"));
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("program");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(build_succeeds_and_gives_kernels);
  ADD(kernel_name_and_arg_count);
  ADD(same_source_and_options_hit_the_cache);
  ADD(different_options_build_different_programs);
  ADD(different_source_builds_a_different_program);
  ADD(syntax_error_is_ebuild_with_the_build_log);
  ADD(bogus_build_option_is_ebuild);
  ADD(failed_build_reaches_the_read_with_its_log);
  ADD(unknown_kernel_name_is_enokernel);
  ADD(unknown_kernel_lists_the_kernels_the_program_has);
  ADD(kernel_outlives_released_program);
  ADD(build_again_after_release);
  ADD(release_then_destroy_is_clean);
  ADD(programs_are_per_context);
  ADD(kernel_info_names_each_argument_its_kind_and_access);
  ADD(kernel_info_access_is_what_the_launch_checks);
  ADD(kernel_info_maximum_is_what_the_launch_enforces);
  ADD(kernel_info_arguments_and_version_are_checked);
#undef ADD
  return ct_run(s);
}
