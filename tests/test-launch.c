/* Launches: argument and work-size validation, and results in 1, 2 and 3
 * dimensions, with local memory and scalars by value. */
#include "common.h"

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *add_k, *copy_k, *idx2_k, *idx3_k, *rev_k, *inc_k;

static void setup(void) {
  ctx = ct_context();
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  add_k = ct_get_kernel(ctx, prog, "add_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  idx2_k = ct_get_kernel(ctx, prog, "idx2_k");
  idx3_k = ct_get_kernel(ctx, prog, "idx3_k");
  rev_k = ct_get_kernel(ctx, prog, "rev_k");
  inc_k = ct_get_kernel(ctx, prog, "inc_k");
}
static void teardown(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
}

static void assert_context_works(void) { ct_assert_context_works(ctx, fill_k, 0); }

static void assert_values(cls_buffer b, int v, size_t n) { ct_expect_ints(ctx, 0, b, n, v); }

/* F12: a refused launch leaves its record on what it would have written,
 * so a read never returns the bytes from before as if it had run. */
static void assert_refused(cls_buffer b, int code, const char *kernel) {
  ct_expect_refused(ctx, 0, b, code, "launch", kernel);
}

/* ------------------------------------------------------------------ */
/* Validation                                                          */
/* ------------------------------------------------------------------ */

START_TEST(wrong_argument_count_is_eargcount) {
  cls_buffer a = ct_written(ctx, 0, 16, 1), b = ct_written(ctx, 0, 16, 2), c = ct_written(ctx, 0, 16, 3);
  size_t g[1] = {16};
  cls_arg two[] = {CLS_IN(a), CLS_IN(b)};
  CT_ERR(cls_launch(ctx, 0, add_k, 1, g, NULL, 2, two), CLS_EARGCOUNT);
  assert_context_works();
  cls_arg four[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c), CLS_IN(a)};
  CT_ERR(cls_launch(ctx, 0, add_k, 1, g, NULL, 4, four), CLS_EARGCOUNT);
  assert_context_works();
  CT_ERR(cls_launch(ctx, 0, add_k, 1, g, NULL, 0, NULL), CLS_EARGCOUNT);
  assert_context_works();
  assert_refused(c, CLS_EARGCOUNT, "add_k");
}
END_TEST

START_TEST(buffer_where_scalar_expected_is_eargkind) {
  cls_buffer o = ct_written(ctx, 0, 16, 4), x = ct_written(ctx, 0, 16, 5);
  size_t g[1] = {16};
  cls_arg args[] = {CLS_OUT(o), CLS_IN(x)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, args), CLS_EARGKIND);
  assert_context_works();
  assert_refused(o, CLS_EARGKIND, "fill_k");
  assert_values(x, 5, 16); /* only read: untouched */
}
END_TEST

/* fill_k takes an int: an 8-byte scalar is caught before OpenCL (whose
 * code for it differs by vendor), and nothing is touched. */
START_TEST(scalar_of_the_wrong_size_is_eargkind) {
  cls_buffer o = ct_written(ctx, 0, 16, 4);
  size_t g[1] = {16};
  long long wide = 7;
  short narrow = 7;
  cls_arg a1[] = {CLS_OUT(o), CLS_SCALAR(wide)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, a1), CLS_EARGKIND);
  cls_arg a2[] = {CLS_OUT(o), CLS_SCALAR(narrow)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, a2), CLS_EARGKIND);
  assert_context_works();
  assert_refused(o, CLS_EARGKIND, "fill_k");
}
END_TEST

START_TEST(scalar_where_buffer_expected_is_eargkind) {
  cls_buffer o = ct_written(ctx, 0, 16, 6);
  size_t g[1] = {16};
  int v = 1;
  long long big = 2;
  cls_arg args[] = {CLS_SCALAR(big), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, args), CLS_EARGKIND);
  assert_context_works();
  assert_values(o, 6, 16); /* not an argument of the launch */
}
END_TEST

START_TEST(local_where_buffer_expected_is_eargkind) {
  cls_buffer in = ct_written(ctx, 0, 16, 7), out = ct_written(ctx, 0, 16, 8);
  size_t g[1] = {16}, l[1] = {16};
  int v = 1;
  cls_arg a1[] = {CLS_LOCAL(64), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, a1), CLS_EARGKIND);
  assert_context_works();
  /* A buffer where local memory is expected. */
  cls_arg a2[] = {CLS_IN(in), CLS_OUT(out), CLS_IN(in)};
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, a2), CLS_EARGKIND);
  assert_context_works();
  /* A scalar where local memory is expected. */
  cls_arg a3[] = {CLS_IN(in), CLS_OUT(out), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, a3), CLS_EARGKIND);
  assert_context_works();
  assert_refused(out, CLS_EARGKIND, "rev_k");
  assert_values(in, 7, 16);
}
END_TEST

START_TEST(dims_outside_1_to_3_are_eworksize) {
  cls_buffer o = ct_written(ctx, 0, 16, 9);
  size_t g[4] = {16, 1, 1, 1};
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 0, g, NULL, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  CT_ERR(cls_launch(ctx, 0, fill_k, 4, g, NULL, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  assert_refused(o, CLS_EWORKSIZE, "fill_k");
}
END_TEST

START_TEST(zero_global_size_is_eworksize) {
  cls_buffer o = ct_written(ctx, 0, 16, 10);
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  size_t g1[1] = {0};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g1, NULL, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  size_t g2[2] = {16, 0};
  CT_ERR(cls_launch(ctx, 0, fill_k, 2, g2, NULL, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  assert_refused(o, CLS_EWORKSIZE, "fill_k");
}
END_TEST

START_TEST(local_not_dividing_global_is_eworksize) {
  cls_buffer o = ct_written(ctx, 0, 64, 11);
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  size_t g[1] = {60}, l[1] = {8};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, l, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  size_t g2[2] = {8, 6}, l2[2] = {8, 4};
  CT_ERR(cls_launch(ctx, 0, fill_k, 2, g2, l2, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  size_t l0[1] = {0};
  size_t g3[1] = {64};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g3, l0, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  assert_refused(o, CLS_EWORKSIZE, "fill_k");
}
END_TEST

START_TEST(local_above_device_limit_is_eworksize) {
  struct cls_device_info info = ct_context_info(ctx);
  size_t wg = info.max_work_group_size;
  ck_assert_uint_gt(wg, 0);
  cls_buffer o = ct_written(ctx, 0, 64, 12);
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  /* The global size is a multiple: only the group size is wrong.  The
   * kernel would write past the buffer were it run, so it must not be. */
  size_t g[1] = {wg * 2}, l[1] = {wg * 2};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, l, 2, a), CLS_EWORKSIZE);
  assert_context_works();
  /* Within each dimension's limit but over the total. */
  size_t g2[2] = {wg, 2}, l2[2] = {wg, 2};
  if (info.max_work_item_sizes[1] >= 2) {
    CT_ERR(cls_launch(ctx, 0, fill_k, 2, g2, l2, 2, a), CLS_EWORKSIZE);
    assert_context_works();
  }
  assert_refused(o, CLS_EWORKSIZE, "fill_k");
}
END_TEST

/* Local memory arguments past the device's whole local memory: OpenCL
 * fails the enqueue, PoCL 3.1 aborts the process on an assertion, rusticl
 * runs it.  clstream refuses it (the device's own limit, as for
 * allocations and work-groups), and runs arguments that fill it exactly:
 * the kernel's own __local variables are not counted, as vendors report
 * them differently. */
START_TEST(local_memory_beyond_the_device_s_is_etoobig) {
  struct cls_device_info info = ct_context_info(ctx);
  ck_assert_uint_gt(info.local_mem_size, 0);
  size_t room = (size_t)info.local_mem_size;
  enum { N = 16 };
  int in[N], got[N];
  for (int i = 0; i < N; i++)
    in[i] = 3 * i + 2;
  cls_buffer I = ct_alloc(ctx, 0, sizeof in), O = ct_written(ctx, 0, sizeof got, 13);
  ct_upload_ints(ctx, 0, I, in, N);
  size_t g[1] = {N}, l[1] = {N};
  cls_arg over[] = {CLS_IN(I), CLS_OUT(O), CLS_LOCAL(room + 1)};
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, over), CLS_ETOOBIG);
  ck_assert_msg(strstr(cls_last_error_detail(), "CL_DEVICE_LOCAL_MEM_SIZE"), "%s",
                cls_last_error_detail());
  assert_context_works();
  cls_arg wrap[] = {CLS_IN(I), CLS_OUT(O), CLS_LOCAL(SIZE_MAX)};
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, wrap), CLS_ETOOBIG);
  assert_refused(O, CLS_ETOOBIG, "rev_k");
  /* The whole of it: not stricter than the device. */
  cls_arg fits[] = {CLS_IN(I), CLS_OUT(O), CLS_LOCAL(room)};
  CT_OK(cls_launch(ctx, 0, rev_k, 1, g, l, 3, fits));
  ct_download_ints(ctx, 0, O, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, in[N - 1 - i]);
  /* Two arguments count together, also where their sum wraps. */
  cls_program *p = ct_build(ctx,
                            "kernel void two_k(global int *o, local int *a, local int *b) {\n"
                            "  size_t l = get_local_id(0);\n"
                            "  a[l] = 1; b[l] = 2;\n"
                            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
                            "  o[get_global_id(0)] = a[0] + b[0];\n"
                            "}\n",
                            NULL);
  cls_kernel *two = ct_get_kernel(ctx, p, "two_k");
  cls_buffer T = ct_written(ctx, 0, sizeof got, 14);
  cls_arg both[] = {CLS_OUT(T), CLS_LOCAL(room / 2 + 1), CLS_LOCAL(room - room / 2)};
  CT_ERR(cls_launch(ctx, 0, two, 1, g, l, 3, both), CLS_ETOOBIG);
  cls_arg wraps[] = {CLS_OUT(T), CLS_LOCAL(SIZE_MAX), CLS_LOCAL(2)};
  CT_ERR(cls_launch(ctx, 0, two, 1, g, l, 3, wraps), CLS_ETOOBIG);
  assert_refused(T, CLS_ETOOBIG, "two_k");
  cls_arg halves[] = {CLS_OUT(T), CLS_LOCAL(room / 2), CLS_LOCAL(room - room / 2)};
  CT_OK(cls_launch(ctx, 0, two, 1, g, l, 3, halves));
  ct_expect_ints(ctx, 0, T, N, 3);
  CT_OK(cls_program_release(ctx, p));
}
END_TEST

START_TEST(null_kernel_and_bad_access_are_einval) {
  cls_buffer o = ct_written(ctx, 0, 16, 13);
  size_t g[1] = {16};
  int v = 1;
  cls_arg a[] = {CLS_OUT(o), CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, NULL, 1, g, NULL, 2, a), CLS_EINVAL);
  assert_context_works();
  cls_arg bad0[] = {{.kind = CLS_ARG_BUFFER, .access = 0, .buffer = o}, CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, bad0), CLS_EINVAL);
  assert_context_works();
  cls_arg bad7[] = {{.kind = CLS_ARG_BUFFER, .access = 7, .buffer = o}, CLS_SCALAR(v)};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, bad7), CLS_EINVAL);
  assert_context_works();
  cls_arg nullval[] = {CLS_OUT(o), {.kind = CLS_ARG_SCALAR, .value = NULL, .size = sizeof v}};
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, nullval), CLS_EINVAL);
  assert_context_works();
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, NULL, NULL, 2, a), CLS_EINVAL);
  assert_context_works();
  CT_ERR(cls_launch(ctx, 0, fill_k, 1, g, NULL, 2, NULL), CLS_EINVAL);
  assert_context_works();
  /* The last refusal named no arguments: the record is the one before. */
  assert_refused(o, CLS_EINVAL, "fill_k");
}
END_TEST

START_TEST(F12_refused_launch_taints_outputs_until_rewritten) {
  /* A refused launch's would-be outputs carry its record (its inputs keep
   * their bytes); a later launch that writes them clears it (F4). */
  cls_buffer a = ct_written(ctx, 0, 16, 1), b = ct_written(ctx, 0, 16, 2), c = ct_written(ctx, 0, 16, 30);
  size_t g[1] = {16}, l[1] = {5};
  cls_arg args[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c)};
  CT_ERR(cls_launch(ctx, 0, add_k, 1, g, l, 3, args), CLS_EWORKSIZE);
  assert_refused(c, CLS_EWORKSIZE, "add_k");
  assert_values(a, 1, 16);
  /* F2 carries it on: a launch reading c is skipped on the same record. */
  cls_buffer d = ct_written(ctx, 1, 16, 0);
  cls_arg after[] = {CLS_IN(c), CLS_IN(a), CLS_OUT(d)};
  CT_ERR(cls_launch(ctx, 1, add_k, 1, g, NULL, 3, after), CLS_ESKIPPED);
  assert_refused(d, CLS_EWORKSIZE, "add_k");
  ct_launch1(ctx, 0, add_k, 16, 3, args);
  assert_values(c, 3, 16); /* 1 + 2 */
  CT_OK(cls_fill(ctx, 0, a, 0, 16 * sizeof(int), &(int){10}, sizeof(int)));
  ct_launch1(ctx, 0, add_k, 16, 3, args);
  assert_values(c, 12, 16); /* 10 + 2 */
}
END_TEST

/* ------------------------------------------------------------------ */
/* Results                                                             */
/* ------------------------------------------------------------------ */

START_TEST(launch_1d_adds) {
  enum { N = 1000 };
  static int a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 3 * i - 7;
  }
  cls_buffer A = ct_alloc(ctx, 0, sizeof a), B = ct_alloc(ctx, 0, sizeof b),
             C = ct_alloc(ctx, 0, sizeof c);
  ct_upload_ints(ctx, 0, A, a, N);
  ct_upload_ints(ctx, 0, B, b, N);
  cls_arg args[] = {CLS_IN(A), CLS_IN(B), CLS_OUT(C)};
  ct_launch1(ctx, 0, add_k, N, 3, args);
  ct_download_ints(ctx, 0, C, c, N);
  CT_EXPECT_INTS(c, (size_t)N, i, 4 * (int)i - 7);
  /* In place, read-write, several times. */
  cls_arg inc[] = {CLS_INOUT(C)};
  for (int k = 0; k < 5; k++)
    ct_launch1(ctx, 0, inc_k, N, 1, inc);
  ct_download_ints(ctx, 0, C, c, N);
  CT_EXPECT_INTS(c, (size_t)N, i, 4 * (int)i - 2);
}
END_TEST

START_TEST(launch_1d_with_local_size) {
  enum { N = 256 };
  int a[N], c[N];
  for (int i = 0; i < N; i++)
    a[i] = i * i;
  cls_buffer A = ct_alloc(ctx, 0, sizeof a), C = ct_alloc(ctx, 0, sizeof c);
  ct_upload_ints(ctx, 0, A, a, N);
  size_t g[1] = {N}, l[1] = {32};
  cls_arg args[] = {CLS_IN(A), CLS_OUT(C)};
  CT_OK(cls_launch(ctx, 0, copy_k, 1, g, l, 2, args));
  ct_download_ints(ctx, 0, C, c, N);
  CT_EXPECT_INTS(c, (size_t)N, i, (int)(i * i));
}
END_TEST

START_TEST(launch_2d_indexes) {
  enum { W = 24, H = 10 };
  static int out[W * H];
  cls_buffer O = ct_alloc(ctx, 0, sizeof out);
  size_t g[2] = {W, H};
  cls_arg args[] = {CLS_OUT(O)};
  CT_OK(cls_launch(ctx, 0, idx2_k, 2, g, NULL, 1, args));
  ct_download_ints(ctx, 0, O, out, W * H);
  CT_EXPECT_INTS(out, (size_t)(W * H), i, (int)(i % W) + 1000 * (int)(i / W));
  /* With a local size too: 4 x 5 items, within the kernel work-group size
   * of every device measured (rusticl gives 32 for any kernel). */
  memset(out, 0, sizeof out);
  CT_OK(cls_upload(ctx, 0, O, 0, out, sizeof out));
  size_t l[2] = {4, 5};
  CT_OK(cls_launch(ctx, 0, idx2_k, 2, g, l, 1, args));
  ct_download_ints(ctx, 0, O, out, W * H);
  CT_EXPECT_INTS(out, (size_t)(W * H), i, (int)(i % W) + 1000 * (int)(i / W));
}
END_TEST

START_TEST(launch_3d_indexes) {
  enum { W = 6, H = 5, D = 4 };
  int out[W * H * D];
  cls_buffer O = ct_alloc(ctx, 0, sizeof out);
  size_t g[3] = {W, H, D};
  cls_arg args[] = {CLS_OUT(O)};
  CT_OK(cls_launch(ctx, 0, idx3_k, 3, g, NULL, 1, args));
  ct_download_ints(ctx, 0, O, out, W * H * D);
  CT_EXPECT_INTS(out, (size_t)(W * H * D), i,
                 (int)(i % W) + 100 * (int)((i / W) % H) + 10000 * (int)(i / (W * H)));
  size_t l[3] = {3, 5, 2};
  memset(out, 0, sizeof out);
  CT_OK(cls_upload(ctx, 0, O, 0, out, sizeof out));
  CT_OK(cls_launch(ctx, 0, idx3_k, 3, g, l, 1, args));
  ct_download_ints(ctx, 0, O, out, W * H * D);
  CT_EXPECT_INTS(out, (size_t)(W * H * D), i,
                 (int)(i % W) + 100 * (int)((i / W) % H) + 10000 * (int)(i / (W * H)));
}
END_TEST

/* rev_k over N items in work-groups of each size in ls[] in turn, on one
 * stream, with local memory of one int per item: each group comes out
 * reversed. */
static void reverse_in_groups(const size_t *ls, size_t nls) {
  enum { N = 128 };
  int in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = 5 * i + 1;
  cls_buffer I = ct_alloc(ctx, 0, sizeof in), O = ct_alloc(ctx, 0, sizeof out);
  ct_upload_ints(ctx, 0, I, in, N);
  for (size_t k = 0; k < nls; k++) {
    size_t L = ls[k], g[1] = {N}, l[1] = {L};
    cls_arg args[] = {CLS_IN(I), CLS_OUT(O), CLS_LOCAL(L * sizeof(int))};
    CT_OK(cls_launch(ctx, 0, rev_k, 1, g, l, 3, args));
    ct_download_ints(ctx, 0, O, out, N);
    /* Each group of L is reversed. */
    CT_EXPECT_INTS(out, (size_t)N, i, in[(i / L) * L + (L - 1 - i % L)]);
  }
}

START_TEST(local_memory_argument_works) {
  reverse_in_groups((const size_t[]){16}, 1);
}
END_TEST

START_TEST(scalars_are_captured_at_the_call) {
  enum { N = 64 };
  cls_buffer A = ct_alloc(ctx, 1, N * sizeof(int)), B = ct_alloc(ctx, 1, N * sizeof(int));
  int v = 5;
  cls_arg a[] = {CLS_OUT(A), CLS_SCALAR(v)};
  ct_launch1(ctx, 1, fill_k, N, 2, a);
  v = 9; /* after the call: the launch keeps 5 */
  cls_arg b[] = {CLS_OUT(B), CLS_SCALAR(v)};
  ct_launch1(ctx, 1, fill_k, N, 2, b);
  v = -1;
  int got[N];
  ct_download_ints(ctx, 1, A, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 5);
  ct_download_ints(ctx, 1, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 9);
}
END_TEST

/* The argument memo (the OpenCL factory skips clSetKernelArg for a value
 * the kernel holds) on one stream, one kernel: a launch that changes only
 * a scalar sets it, and one that changes nothing still runs.  The local
 * sizes (4 and 8 bytes, values the memo keeps) check the results only: a
 * local buffer set too small may still work on a device. */
START_TEST(argument_memo_sets_what_changed_on_the_same_stream) {
  enum { N = 64 };
  cls_buffer A = ct_alloc(ctx, 0, N * sizeof(int));
  int got[N];
  for (int v = 1; v <= 3; v++) {
    int w = v == 3 ? 2 : v; /* the third launch repeats the second */
    cls_arg a[] = {CLS_OUT(A), CLS_SCALAR(w)};
    ct_launch1(ctx, 0, fill_k, N, 2, a);
    ct_download_ints(ctx, 0, A, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, w);
  }
  reverse_in_groups((const size_t[]){1, 2}, 2); /* local memory of 4, then 8 bytes */
}
END_TEST

START_TEST(argument_array_is_reusable_after_the_call) {
  enum { N = 32 };
  cls_buffer A = ct_alloc(ctx, 0, N * sizeof(int)), B = ct_alloc(ctx, 0, N * sizeof(int));
  int v = 21;
  cls_arg a[2] = {CLS_OUT(A), CLS_SCALAR(v)};
  ct_launch1(ctx, 0, fill_k, N, 2, a);
  a[0] = CLS_OUT(B); /* reusing the array changes nothing queued */
  int w = 22;
  a[1] = (cls_arg)CLS_SCALAR(w);
  ct_launch1(ctx, 0, fill_k, N, 2, a);
  int got[N];
  ct_download_ints(ctx, 0, A, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 21);
  ct_download_ints(ctx, 0, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 22);
}
END_TEST

/* Each stream launches a kernel through a copy of its own (the first
 * stream, the kernel itself), which keeps the arguments that stream last
 * set; the argument memo then skips setting them again.  Streams taking
 * turns with one kernel and their own buffers must each get their own
 * results, also after a buffer is freed and another takes its place (it
 * may get the same cl_mem: every copy forgets what it held). */
START_TEST(one_kernel_on_several_streams_keeps_each_streams_arguments) {
  enum { N = 256, S = 3 };
  cls_buffer A[S], B[S], C[S];
  int got[N];
  for (int s = 0; s < S; s++) {
    A[s] = ct_alloc(ctx, s, N * sizeof(int));
    B[s] = ct_alloc(ctx, s, N * sizeof(int));
    C[s] = ct_alloc(ctx, s, N * sizeof(int));
    int va = s + 1, vb = 10 * (s + 1);
    cls_arg fa[] = {CLS_OUT(A[s]), CLS_SCALAR(va)}, fb[] = {CLS_OUT(B[s]), CLS_SCALAR(vb)};
    ct_launch1(ctx, s, fill_k, N, 2, fa);
    ct_launch1(ctx, s, fill_k, N, 2, fb);
  }
  for (int r = 0; r < 8; r++)
    for (int s = 0; s < S; s++) {
      cls_arg args[] = {CLS_IN(A[s]), CLS_IN(B[s]), CLS_OUT(C[s])};
      ct_launch1(ctx, s, add_k, N, 3, args);
    }
  for (int s = 0; s < S; s++) {
    ct_download_ints(ctx, s, C[s], got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, 11 * (s + 1));
  }
  /* The same arguments from every stream in turn: each copy still needs
   * them set once (a memo shared between copies would skip that). */
  for (int s = 0; s < S; s++) {
    for (int i = 0; i < N; i++)
      got[i] = -1;
    ct_upload_ints(ctx, s, C[0], got, N); /* not a launch: no memo */
    cls_arg args[] = {CLS_IN(A[0]), CLS_IN(A[0]), CLS_OUT(C[0])};
    ct_launch1(ctx, s, add_k, N, 3, args);
    ct_download_ints(ctx, s, C[0], got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, 2);
  }
  /* Every output freed and allocated again, on another stream (a new
   * buffer may take a freed one's cl_mem). */
  for (int s = 0; s < S; s++) {
    ck_assert_int_eq(cls_free(ctx, C[s]), CLS_OK);
    C[s] = ct_alloc(ctx, (s + 1) % S, N * sizeof(int));
  }
  for (int s = S - 1; s >= 0; s--) {
    cls_arg args[] = {CLS_IN(B[s]), CLS_IN(B[s]), CLS_OUT(C[s])};
    ct_launch1(ctx, s, add_k, N, 3, args);
  }
  for (int s = 0; s < S; s++) {
    ct_download_ints(ctx, s, C[s], got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, 20 * (s + 1));
  }
}
END_TEST

START_TEST(launch_reading_a_fresh_buffer_is_skipped) {
  /* A read of a buffer nothing wrote: the launch does not run and its
   * output carries the failure. */
  enum { N = 16 };
  cls_buffer fresh = ct_alloc(ctx, 0, N * sizeof(int)), out = ct_written(ctx, 0, N, 1);
  cls_arg args[] = {CLS_IN(fresh), CLS_OUT(out)};
  size_t g[1] = {N};
  CT_ERR(cls_launch(ctx, 0, copy_k, 1, g, NULL, 2, args), CLS_ESKIPPED);
  int got[N];
  CT_ERR(cls_download(ctx, 0, out, 0, got, sizeof got, NULL), CLS_ETAINTED);
  assert_context_works();
}
END_TEST

/* A NULL pointer argument (CLS_NULL_PTR), as raw OpenCL's NULL cl_mem: an
 * optional input the kernel tests before it reads.  It binds no buffer
 * (nothing is ordered or tainted by it), runs on every driver, in a
 * capture's replay, after a launch that gave a buffer in its place (the
 * argument memo), and only where the kernel takes a pointer. */
#define OPT_SRC                                                               \
  "kernel void axpb(global int *y, global const int *x, global const int *b,\n" \
  "                 int a) {\n"                                                \
  "  size_t i = get_global_id(0);\n"                                          \
  "  y[i] = a * x[i] + (b ? b[i] : 0);\n"                                     \
  "}\n"

START_TEST(a_null_pointer_argument_runs_as_raw_opencl_s_null_cl_mem) {
  cls_program *p = ct_build(ctx, OPT_SRC, NULL);
  cls_kernel *axpb = ct_get_kernel(ctx, p, "axpb");
  cls_buffer y = ct_alloc(ctx, 0, 16 * sizeof(int)), x = ct_written(ctx, 0, 16, 3),
             b = ct_written(ctx, 1, 16, 100);
  size_t g[1] = {16};
  int a = 2;
  CT_OK(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                   (cls_arg[]){CLS_OUT(y), CLS_IN(x), CLS_NULL_PTR, CLS_SCALAR(a)}));
  assert_values(y, 6, 16);
  /* A buffer in its place, then NULL again: the memo sets both. */
  CT_OK(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                   (cls_arg[]){CLS_OUT(y), CLS_IN(x), CLS_IN(b), CLS_SCALAR(a)}));
  assert_values(y, 106, 16);
  CT_OK(cls_launch(ctx, 1, axpb, 1, g, NULL, 4,
                   (cls_arg[]){CLS_OUT(b), CLS_IN(x), CLS_NULL_PTR, CLS_SCALAR(a)}));
  ct_expect_ints(ctx, 1, b, 16, 6);
  CT_OK(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                   (cls_arg[]){CLS_OUT(y), CLS_IN(x), CLS_NULL_PTR, CLS_SCALAR(a)}));
  assert_values(y, 6, 16);
  /* Captured and replayed. */
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                   (cls_arg[]){CLS_OUT(y), CLS_IN(y), CLS_NULL_PTR, CLS_SCALAR(a)}));
  CT_OK(cls_capture_end(ctx, &cap));
  for (int r = 0; r < 3; r++)
    CT_OK(cls_replay(ctx, cap, 0, NULL));
  assert_values(y, 48, 16);
  cls_capture_destroy(cap);
  /* Where the kernel takes no pointer: refused, its outputs tainted (F12). */
  CT_ERR(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                    (cls_arg[]){CLS_OUT(y), CLS_IN(x), CLS_IN(b), CLS_NULL_PTR}),
         CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "a NULL pointer given, a scalar expected"),
                "detail: %s", cls_last_error_detail());
  assert_refused(y, CLS_EARGKIND, "axpb");
  cls_arg local_null[] = {CLS_IN(x), CLS_OUT(y), CLS_NULL_PTR};
  size_t l[1] = {16};
  CT_ERR(cls_launch(ctx, 0, rev_k, 1, g, l, 3, local_null), CLS_EARGKIND);
  /* A handle never allocated is still a bug, not a NULL pointer. */
  CT_ERR(cls_launch(ctx, 0, axpb, 1, g, NULL, 4,
                    (cls_arg[]){CLS_OUT(x), CLS_IN(b), CLS_IN(CLS_BUFFER_NULL), CLS_SCALAR(a)}),
         CLS_ENULL);
  assert_context_works();
}
END_TEST

/* A kernel as published code with offsets writes it: the grid is the
 * buffer's (w x h x d, scalars), the ids include the offset, and
 * get_global_offset() says where the launch starts. */
#define OFF_SRC                                                                \
  "kernel void at_id(global int *out, int w, int h) {\n"                      \
  "  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);\n" \
  "  out[(z * h + y) * w + x] = (int)(x + 100 * y + 10000 * z) + 1\n"         \
  "      + 1000000 * (int)(get_global_offset(0) + get_global_offset(1)\n"     \
  "                        + get_global_offset(2) > 0);\n"                     \
  "}\n"

/* What at_id leaves in a w x h x d grid of zeros after a launch at o of
 * g (dims of each; the rest 0 and 1; one dimension: a line of w*h*d). */
static int at_id_expect(size_t i, int w, int h, unsigned dims, const size_t *o,
                        const size_t *g) {
  size_t c[3] = {i % (size_t)w, (i / (size_t)w) % (size_t)h, i / ((size_t)w * (size_t)h)};
  if (dims == 1) /* y and z are 0: out[x] */
    c[0] = i, c[1] = c[2] = 0;
  int any = 0;
  for (unsigned k = 0; k < 3; k++) {
    size_t lo = k < dims ? o[k] : 0, n = k < dims ? g[k] : 1;
    if (c[k] < lo || c[k] >= lo + n)
      return 0;
    any |= k < dims && o[k];
  }
  return (int)(c[0] + 100 * c[1] + 10000 * c[2]) + 1 + 1000000 * any;
}

START_TEST(a_global_offset_runs_as_raw_opencl_s_global_work_offset) {
  enum { W = 12, H = 6, D = 4, NN = W * H * D };
  static int out[NN];
  cls_program *p = ct_build(ctx, OFF_SRC, NULL);
  cls_kernel *k = ct_get_kernel(ctx, p, "at_id");
  cls_buffer O = ct_alloc(ctx, 0, sizeof out);
  int w = W, h = H;
  cls_arg args[] = {CLS_OUT(O), CLS_SCALAR(w), CLS_SCALAR(h)};
  static const struct {
    unsigned dims;
    size_t o[3], g[3], l[3];
  } cases[] = {
      {1, {8}, {16}, {4}},                        /* 1D, a local size */
      {1, {0}, {W * H}, {0}},                     /* all zero: cls_launch's */
      {2, {5, 2}, {6, 3}, {3, 3}},
      {3, {2, 3, 1}, {3, 2, 2}, {0}},             /* no local size */
      {3, {W - 1, H - 1, D - 1}, {1, 1, 1}, {0}}, /* the last item */
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    memset(out, 0, sizeof out);
    CT_OK(cls_upload(ctx, 0, O, 0, out, sizeof out));
    const size_t *l = cases[c].l[0] ? cases[c].l : NULL;
    size_t o[3];
    memcpy(o, cases[c].o, sizeof o);
    CT_OK(cls_launch_offset(ctx, c % 2, k, cases[c].dims, o, cases[c].g, l, 3, args));
    memset(o, 0, sizeof o); /* read during the call only (a driver that defers copies it) */
    ct_download_ints(ctx, 0, O, out, NN);
    CT_EXPECT_INTS(out, (size_t)NN, i, at_id_expect(i, W, H, cases[c].dims, cases[c].o,
                                                     cases[c].g));
  }
  /* NULL is no offset; and a stream reading what an offset launch wrote is
   * ordered after it, whole buffer, as for any launch. */
  size_t g1[1] = {NN};
  CT_OK(cls_launch_offset(ctx, 1, k, 1, NULL, g1, NULL, 3, args));
  cls_buffer copy = ct_alloc(ctx, 0, sizeof out);
  size_t o1[1] = {NN / 2}, h1[1] = {NN / 2};
  CT_OK(cls_launch_offset(ctx, 0, copy_k, 1, o1, h1, NULL, 2,
                          (cls_arg[]){CLS_IN(O), CLS_OUT(copy)}));
  ct_download_ints(ctx, 0, copy, out, NN); /* the first half: nothing wrote it */
  CT_EXPECT_INTS(out + NN / 2, (size_t)NN / 2, i, (int)(NN / 2 + i) + 1);
  /* Past what the device's size_t holds: refused, its outputs tainted. */
  size_t huge[1] = {SIZE_MAX - 4}, g4[1] = {8};
  CT_ERR(cls_launch_offset(ctx, 0, k, 1, huge, g4, NULL, 3, args), CLS_EWORKSIZE);
  ck_assert_msg(strstr(cls_last_error_detail(), "offset"), "detail: %s",
                cls_last_error_detail());
  assert_refused(O, CLS_EWORKSIZE, "at_id");
  /* The usual checks still come first. */
  CT_ERR(cls_launch_offset(ctx, 0, k, 4, o1, h1, NULL, 3, args), CLS_EWORKSIZE);
  CT_ERR(cls_launch_offset(ctx, 0, k, 1, o1, NULL, NULL, 3, args), CLS_EINVAL);
  assert_context_works();
}
END_TEST

/* Every capture backend keeps the offsets: two launches at other offsets
 * in one run on stream 0 (a plan run, or a command buffer where the
 * device has them and attribution is ranged), and one on stream 1 that
 * reads their output, replayed twice with the caller's arrays changed. */
START_TEST(a_global_offset_is_kept_by_every_capture_backend) {
  enum { W = 16, H = 8, NN = W * H };
  static const char *const modes[] = {"plan", "command-buffer", "commands"};
  for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
    setenv("CLS_CAPTURE", modes[m], 1);
    cls_context *c = ct_context();
    unsetenv("CLS_CAPTURE");
    cls_program *p = ct_build(c, OFF_SRC CT_COPY_SRC, NULL);
    cls_kernel *k = ct_get_kernel(c, p, "at_id"), *cp = ct_get_kernel(c, p, "copy_k");
    static int out[NN];
    memset(out, 0, sizeof out);
    cls_buffer O = ct_alloc(c, 0, sizeof out), C = ct_alloc(c, 1, sizeof out);
    CT_OK(cls_upload(c, 0, O, 0, out, sizeof out));
    int w = W, h = H;
    cls_arg args[] = {CLS_OUT(O), CLS_SCALAR(w), CLS_SCALAR(h)};
    size_t oa[2] = {0, 1}, ga[2] = {4, 2}, ob[2] = {8, 4}, gb[2] = {8, 4};
    size_t oc[1] = {W}, gc[1] = {NN - W};
    cls_capture *cap = NULL;
    CT_OK(cls_capture_begin(c));
    CT_OK(cls_launch_offset(c, 0, k, 2, oa, ga, NULL, 3, args));
    CT_OK(cls_launch_offset(c, 0, k, 2, ob, gb, NULL, 3, args));
    CT_OK(cls_launch_offset(c, 1, cp, 1, oc, gc, NULL, 2, (cls_arg[]){CLS_IN(O), CLS_OUT(C)}));
    oa[1] = ob[0] = oc[0] = 0; /* read during the calls only */
    CT_OK(cls_capture_end(c, &cap));
    oa[1] = 1, ob[0] = 8, oc[0] = W;
    for (int r = 0; r < 2; r++)
      CT_OK(cls_replay(c, cap, 0, NULL));
    struct cls_capture_stats st;
    CT_OK(cls_capture_info(cap, &st));
    int mode = -1;
    CT_OK(cls_context_attribution(c, &mode, NULL, NULL));
    if (m == 1 && mode == CLS_ATTRIBUTION_RANGED && ct_has_cb(c, 0))
      ck_assert_str_eq(st.backend, "command-buffer");
    if (m == 0 && mode == CLS_ATTRIBUTION_RANGED)
      ck_assert_uint_eq(st.runs, 1); /* the two launches of stream 0 */
    cls_capture_destroy(cap);
    ct_download_ints(c, 1, C, out, NN);
    /* Row 0 was never copied; below it, what the two launches wrote. */
    CT_EXPECT_INTS(out + W, (size_t)(NN - W), i,
                   at_id_expect(W + i, W, H, 2, oa, ga) + at_id_expect(W + i, W, H, 2, ob, gb));
    cls_context_destroy(c);
  }
}
END_TEST

/* A stream factory older than version 6 would drop the offset: refused,
 * with a record; without an offset it launches as before. */
START_TEST(a_global_offset_on_a_factory_before_version_6_is_eversion) {
  struct cls_stream_factory old = *cls_opencl_stream_factory();
  old.version = 5;
  cls_context *c = ct_context_with(NULL, &old, NULL);
  cls_kernel *fill = ct_kernel(c, CT_FILL_SRC, "fill_k");
  cls_buffer b = ct_alloc(c, 0, 16 * sizeof(int));
  size_t o[1] = {8}, g[1] = {8}, zero[1] = {0}, all[1] = {16};
  cls_arg a[] = {CLS_OUT(b), CLS_SCALAR((int){7})};
  CT_ERR(cls_launch_offset(c, 0, fill, 1, o, g, NULL, 2, a), CLS_EVERSION);
  ck_assert_msg(strstr(cls_last_error_detail(), "version 5"), "detail: %s",
                cls_last_error_detail());
  ct_expect_refused(c, 0, b, CLS_EVERSION, "launch", "fill_k");
  CT_OK(cls_launch_offset(c, 0, fill, 1, zero, all, NULL, 2, a));
  ct_expect_ints(c, 0, b, 16, 7);
  cls_context_destroy(c);
  /* Fault injection wraps the factory: the one wrapped decides. */
  c = ct_context_with("enqueue:kernel=none_such", &old, NULL);
  fill = ct_kernel(c, CT_FILL_SRC, "fill_k");
  b = ct_alloc(c, 0, 16 * sizeof(int));
  a[0] = CLS_OUT(b);
  CT_ERR(cls_launch_offset(c, 0, fill, 1, o, g, NULL, 2, a), CLS_EVERSION);
  cls_context_destroy(c);
  old.version = CLS_STREAM_FACTORY_VERSION;
  c = ct_context_with("enqueue:kernel=none_such", &old, NULL);
  fill = ct_kernel(c, CT_FILL_SRC, "fill_k");
  b = ct_alloc(c, 0, 16 * sizeof(int));
  a[0] = CLS_OUT(b);
  CT_OK(cls_launch_offset(c, 0, fill, 1, zero, all, NULL, 2, a));
  CT_OK(cls_launch_offset(c, 0, fill, 1, o, g, NULL, 2, (cls_arg[]){CLS_INOUT(b), a[1]}));
  ct_expect_ints(c, 0, b, 16, 7);
  cls_context_destroy(c);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("launch");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(wrong_argument_count_is_eargcount);
  ADD(buffer_where_scalar_expected_is_eargkind);
  ADD(scalar_where_buffer_expected_is_eargkind);
  ADD(scalar_of_the_wrong_size_is_eargkind);
  ADD(local_where_buffer_expected_is_eargkind);
  ADD(dims_outside_1_to_3_are_eworksize);
  ADD(zero_global_size_is_eworksize);
  ADD(local_not_dividing_global_is_eworksize);
  ADD(local_above_device_limit_is_eworksize);
  ADD(local_memory_beyond_the_device_s_is_etoobig);
  ADD(null_kernel_and_bad_access_are_einval);
  ADD(F12_refused_launch_taints_outputs_until_rewritten);
  ADD(launch_1d_adds);
  ADD(launch_1d_with_local_size);
  ADD(launch_2d_indexes);
  ADD(launch_3d_indexes);
  ADD(local_memory_argument_works);
  ADD(argument_memo_sets_what_changed_on_the_same_stream);
  ADD(scalars_are_captured_at_the_call);
  ADD(argument_array_is_reusable_after_the_call);
  ADD(one_kernel_on_several_streams_keeps_each_streams_arguments);
  ADD(launch_reading_a_fresh_buffer_is_skipped);
  ADD(a_null_pointer_argument_runs_as_raw_opencl_s_null_cl_mem);
  ADD(a_global_offset_runs_as_raw_opencl_s_global_work_offset);
  ADD(a_global_offset_is_kept_by_every_capture_backend);
  ADD(a_global_offset_on_a_factory_before_version_6_is_eversion);
#undef ADD
  return ct_run(s);
}
