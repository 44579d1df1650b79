/* Images: memory objects with the buffer's handle, generation and failure
 * record (src/memory/image.c, src/api/image.c), moved by region, bound to
 * launches by their access qualifiers, under F1-F12 (docs/design.md,
 * "Images").  Every case runs under every driver setting.  A vendor
 * without image support (CL_DEVICE_IMAGE_SUPPORT false) is checked for the
 * refusal alone, and says so; no case is skipped otherwise. */
#include "common.h"
#include "base/context.h" /* white-box: the cl_context a sampler is made in */

#include <CL/cl.h>
#include <math.h>

#define W 16
#define H 8

static const char SRC[] =
    "__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |\n"
    "                           CLK_FILTER_NEAREST;\n"
    "kernel void produce(__write_only image2d_t out, float v) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imagef(out, p, (float4)(v + p.x, v + p.y, 0.0f, 1.0f));\n"
    "}\n"
    "kernel void add1(__read_only image2d_t in, __write_only image2d_t out) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imagef(out, p, read_imagef(in, smp, p) + (float4)(1.0f));\n"
    "}\n"
    "kernel void to_buf(__read_only image2d_t in, global float *out, int w) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  out[p.y * w + p.x] = read_imagef(in, smp, p).x;\n"
    "}\n"
    "kernel void slow_add1(__read_only image2d_t in, __write_only image2d_t out, int iters) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  uint acc = (uint)p.x;\n"
    "  for (int k = 0; k < iters; k++)\n"
    "    acc = acc * 1664525u + 1013904223u;\n"
    "  float4 v = read_imagef(in, smp, p) + (float4)(1.0f);\n"
    "  write_imagef(out, p, acc == 7u ? (float4)(0.0f) : v);\n"
    "}\n"
    "kernel void fail_produce(__write_only image2d_t out) {\n"
    "  write_imagef(out, (int2)(get_global_id(0), get_global_id(1)), (float4)(0.0f));\n"
    "}\n";

/* A program of its own: rusticl 22.3's SPIR-V translator aborts the
 * process on a program holding both a constant sampler and a sampler
 * argument (an assertion in SPIRVStore::validate). */
static const char SAMPLER_SRC[] =
    "kernel void sampled(__read_only image2d_t in, sampler_t s, global float *out, int w) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  out[p.y * w + p.x] = read_imagef(in, s, p).x;\n"
    "}\n"
;

static const char RW_SRC[] =
    "kernel void twice(__read_write image2d_t img) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imagef(img, p, read_imagef(img, p) * 2.0f);\n"
    "}\n";

static cls_context *ctx;
static cls_program *prog;
static bool have_images;

static const struct cls_image_desc RGBA_F = {
    .type = CLS_IMAGE_2D, .order = CL_RGBA, .data_type = CL_FLOAT, .width = W, .height = H};

/* Whether the context's device has images; the cases that need them
 * return after saying so where it does not. */
static bool images_or_say(const char *test) {
  if (!have_images)
    fprintf(stderr, "%s: device has no image support (CL_DEVICE_IMAGE_SUPPORT false): only the "
                    "refusal is checked\n",
            test);
  return have_images;
}

static void open_ctx(const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = fault};
  ctx = ct_context_opts(&o);
  size_t n = 0;
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, NULL, 0, &n));
  have_images = n > 0;
  prog = have_images ? ct_build(ctx, SRC, NULL) : NULL;
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
  prog = NULL;
}

static cls_image image(int stream, const struct cls_image_desc *d) {
  cls_image img = CLS_BUFFER_NULL;
  int rc = cls_image_alloc(ctx, stream, d, &img);
  ck_assert_msg(rc == 0, "cls_image_alloc: %s: %s", cls_err_name(rc), cls_last_error_detail());
  return img;
}

static int launch2d(int stream, const char *kernel, size_t nargs, const cls_arg *args) {
  size_t g[2] = {W, H};
  return cls_launch(ctx, stream, ct_get_kernel(ctx, prog, kernel), 2, g, NULL, nargs, args);
}

static int produce(int stream, cls_image out, float v) {
  cls_arg a[] = {CLS_ARG(out), CLS_SCALAR(v)};
  return launch2d(stream, "produce", 2, a);
}

/* What produce(v) then `adds` add1 launches leave in pixel (x, y). */
static void expect_rgba(const float *px, float v, float add) {
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const float *p = px + 4 * (y * W + x);
      ck_assert_msg(p[0] == v + x + add && p[1] == v + y + add && p[2] == add &&
                        p[3] == 1.0f + add,
                    "pixel (%d, %d) = (%g, %g, %g, %g)", x, y, p[0], p[1], p[2], p[3]);
    }
}

/* A download that must fail with a report of one failure. */
static cls_report *tainted(int stream, cls_image img) {
  static float px[W * H * 4];
  cls_report *r = NULL;
  CT_ERR(cls_image_download(ctx, stream, img, NULL, NULL, px, 0, 0, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  return r;
}

/* Whether the device lists the format for 2D images. */
static bool listed(unsigned order, unsigned type) {
  size_t n = 0;
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, NULL, 0, &n));
  struct cls_image_format *f = calloc(n, sizeof *f);
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, f, n, &n));
  bool found = false;
  for (size_t i = 0; i < n; i++)
    found |= f[i].order == order && f[i].data_type == type;
  free(f);
  return found;
}

/* ------------------------------------------------------------------ */

/* The three orders the issue names, of the three types, round trip. */
START_TEST(images_of_each_named_format_round_trip) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    cls_image img;
    CT_ERR(cls_image_alloc(ctx, 0, &RGBA_F, &img), CLS_ENOSYS);
    close_ctx();
    return;
  }
  const unsigned orders[] = {CL_R, CL_RG, CL_RGBA};
  const unsigned types[] = {CL_UNORM_INT8, CL_FLOAT, CL_UNSIGNED_INT32};
  for (int o = 0; o < 3; o++)
    for (int t = 0; t < 3; t++) {
      struct cls_image_desc d = {.order = orders[o], .data_type = types[t], .width = W,
                                 .height = H};
      if (!listed(orders[o], types[t])) {
        /* Not every vendor has every pair (PoCL lacks CL_RG/CL_UNORM_INT8):
         * then the refusal names it. */
        cls_image img;
        CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_ENOSYS);
        char name[64];
        snprintf(name, sizeof name, "%s/%s", o == 0 ? "CL_R" : o == 1 ? "CL_RG" : "CL_RGBA",
                 t == 0 ? "CL_UNORM_INT8" : t == 1 ? "CL_FLOAT" : "CL_UNSIGNED_INT32");
        ck_assert_msg(strstr(cls_last_error_detail(), name), "%s", cls_last_error_detail());
        fprintf(stderr, "%s: the device lacks %s: refused, naming it\n", __func__, name);
        continue;
      }
      cls_image img = image(o % 2, &d);
      size_t pixel = 0;
      struct cls_image_desc got;
      CT_OK(cls_image_info(ctx, img, &got, &pixel));
      ck_assert_uint_eq(pixel, (size_t)(o == 2 ? 4 : o + 1) * (t == 0 ? 1 : 4));
      ck_assert_uint_eq(got.depth, 1);
      unsigned char in[W * H * 16], out[W * H * 16];
      for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 7 + o + t);
      if (types[t] == CL_FLOAT) /* bytes that are floats, no NaN to compare */
        for (size_t i = 0; i < W * H * pixel / 4; i++)
          ((float *)in)[i] = (float)i * 0.5f;
      CT_OK(cls_image_upload(ctx, o % 2, img, NULL, NULL, in, 0, 0));
      memset(out, 0, sizeof out);
      CT_OK(cls_image_download(ctx, 1 - o % 2, img, NULL, NULL, out, 0, 0, NULL));
      ck_assert_msg(memcmp(in, out, W * H * pixel) == 0, "order %d type %d differs", o, t);
      CT_OK(cls_free(ctx, img));
    }
  close_ctx();
}
END_TEST

/* A region with a row pitch: the rest of the image keeps its pixels. */
START_TEST(regions_with_a_row_pitch_move_only_their_pixels) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  struct cls_image_desc d = {.order = CL_R, .data_type = CL_UNSIGNED_INT32, .width = W,
                             .height = H};
  cls_image img = image(0, &d);
  uint32_t zero[W * H] = {0}, host[W * H];
  /* A partial write clears a never-written image, as for buffers (F4). */
  size_t one[3] = {1, 1, 1};
  CT_OK(cls_image_upload(ctx, 0, img, NULL, one, zero, 0, 0));
  CT_OK(cls_check(ctx, 1, &img, NULL));
  CT_OK(cls_image_upload(ctx, 0, img, NULL, NULL, zero, 0, 0));
  /* A 3 x 2 block at (5, 4) from a host array whose rows hold 10 values. */
  uint32_t block[2][10];
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 10; x++)
      block[y][x] = (uint32_t)(100 + 10 * y + x);
  size_t origin[3] = {5, 4, 0}, region[3] = {3, 2, 1};
  CT_OK(cls_image_upload_async(ctx, 0, img, origin, region, block, sizeof block[0], 0));
  CT_OK(cls_image_download(ctx, 0, img, NULL, NULL, host, 0, 0, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool in = x >= 5 && x < 8 && y >= 4 && y < 6;
      uint32_t want = in ? (uint32_t)(100 + 10 * (y - 4) + (x - 5)) : 0;
      ck_assert_msg(host[y * W + x] == want, "(%d, %d) = %u, want %u", x, y, host[y * W + x],
                    want);
    }
  /* The block back, non-blocking, into rows of 10. */
  uint32_t back[2][10];
  memset(back, 0xff, sizeof back);
  CT_OK(cls_image_download_async(ctx, 1, img, origin, region, back, sizeof back[0], 0));
  CT_OK(cls_stream_sync(ctx, 1, NULL));
  for (int y = 0; y < 2; y++)
    for (int x = 0; x < 3; x++)
      ck_assert_uint_eq(back[y][x], block[y][x]);
  ck_assert_uint_eq(back[0][3], 0xffffffffu);
  close_ctx();
}
END_TEST

START_TEST(F1_image_never_written_reads_as_never_written) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image img = image(1, &RGBA_F);
  cls_report *r = tainted(0, img);
  ck_assert_str_eq(ct_failure(r, 0).operation, "alloc");
  ck_assert_msg(strstr(ct_failure(r, 0).message, "image of 16 x 8 x 1 pixels") &&
                    strstr(ct_failure(r, 0).message, "never written"),
                "%s", ct_failure(r, 0).message);
  cls_report_free(r);
  CT_ERR(cls_check(ctx, 1, &img, NULL), CLS_ETAINTED);
  /* A launch reading it is skipped (F2); a writing one clears it (F4). */
  cls_image out = image(0, &RGBA_F);
  cls_arg a[] = {CLS_ARG(img), CLS_ARG(out)};
  CT_ERR(launch2d(0, "add1", 2, a), CLS_ESKIPPED);
  cls_report_free(tainted(0, out));
  CT_OK(produce(1, img, 2.0f));
  CT_OK(cls_check(ctx, 1, &img, NULL));
  close_ctx();
}
END_TEST

/* The producer's launch fails (CLS_FAULT): the read names it. */
START_TEST(F5_download_of_tainted_image_names_root) {
  open_ctx("enqueue:kernel=fail_produce");
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image img = image(0, &RGBA_F);
  CT_OK(produce(0, img, 1.0f)); /* written once: the failure replaces a clean state */
  cls_arg a[] = {CLS_ARG(img)};
  int rc = launch2d(0, "fail_produce", 1, a);
  ck_assert_msg(rc == CLS_ELAUNCH || (rc == 0 && strcmp(cls_context_driver(ctx), "event")),
                "%s", cls_err_name(rc));
  cls_report *r = tainted(1, img);
  ck_assert_str_eq(ct_failure(r, 0).kernel, "fail_produce");
  ck_assert_int_eq(ct_failure(r, 0).stream, 0);
  cls_report_free(r);
  close_ctx();
}
END_TEST

/* A consumer of a failed producer, on another stream, is skipped; its
 * output carries the producer's failure and the skip is on the chain. */
START_TEST(F4_launch_reading_tainted_image_is_skipped) {
  open_ctx("complete:kernel=fail_produce");
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image in = image(0, &RGBA_F), out = image(1, &RGBA_F);
  cls_arg p[] = {CLS_OUT(in)};
  CT_OK(launch2d(0, "fail_produce", 1, p));
  CT_OK(cls_stream_sync(ctx, 0, NULL) == CLS_ETAINTED ? 0 : 0);
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  CT_ERR(launch2d(1, "add1", 2, a), CLS_ESKIPPED);
  cls_report *r = tainted(1, out);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.kernel, "fail_produce");
  ck_assert_uint_ge(f.nskips, 1);
  struct cls_skip_info sk;
  CT_OK(cls_report_skip(r, 0, 0, &sk));
  ck_assert_str_eq(sk.kernel, "add1");
  ck_assert_int_eq(sk.stream, 1);
  cls_report_free(r);
  /* A clean producer clears it again, and the consumer runs (F4). */
  CT_OK(produce(0, in, 3.0f));
  CT_OK(launch2d(1, "add1", 2, a));
  float px[W * H * 4];
  CT_OK(cls_image_download(ctx, 1, out, NULL, NULL, px, 0, 0, NULL));
  expect_rgba(px, 3.0f, 1.0f);
  close_ctx();
}
END_TEST

/* A chain across three streams, each waiting on the last (F7): the
 * values prove the order. */
START_TEST(F7_image_chain_across_streams_is_ordered) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image a = image(0, &RGBA_F), b = image(1, &RGBA_F), c = image(2, &RGBA_F);
  for (int round = 0; round < 3; round++) {
    CT_OK(produce(0, a, (float)round));
    cls_arg ab[] = {CLS_ARG(a), CLS_ARG(b)}, bc[] = {CLS_ARG(b), CLS_ARG(c)};
    CT_OK(launch2d(1, "add1", 2, ab));
    CT_OK(launch2d(2, "add1", 2, bc));
    float px[W * H * 4];
    CT_OK(cls_image_download(ctx, 0, c, NULL, NULL, px, 0, 0, NULL));
    expect_rgba(px, (float)round, 2.0f);
  }
  close_ctx();
}
END_TEST

START_TEST(F12_image_format_the_device_lacks_is_refused_naming_it) {
  open_ctx(NULL);
  cls_image img = CLS_BUFFER_NULL;
  /* CL_RGB takes packed types only: CL_RGB/CL_FLOAT exists nowhere. */
  struct cls_image_desc d = RGBA_F;
  d.order = CL_RGB;
  CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_ENOSYS);
  ck_assert_uint_eq(img.bits, 0);
  if (!images_or_say(__func__)) {
    ck_assert_msg(strstr(cls_last_error_detail(), "CL_DEVICE_IMAGE_SUPPORT"), "%s",
                  cls_last_error_detail());
    close_ctx();
    return;
  }
  ck_assert_msg(strstr(cls_last_error_detail(), "CL_RGB/CL_FLOAT") &&
                    strstr(cls_last_error_detail(), "not supported"),
                "%s", cls_last_error_detail());
  /* The device's width limit, named. */
  d = RGBA_F;
  d.width = (size_t)1 << 40;
  CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_ETOOBIG);
  ck_assert_msg(strstr(cls_last_error_detail(), "CL_DEVICE_IMAGE2D_MAX_WIDTH") &&
                    strstr(cls_last_error_detail(), "CL_RGBA/CL_FLOAT"),
                "%s", cls_last_error_detail());
  d = RGBA_F;
  d.height = (size_t)1 << 40;
  CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_ETOOBIG);
  ck_assert_msg(strstr(cls_last_error_detail(), "CL_DEVICE_IMAGE2D_MAX_HEIGHT"), "%s",
                cls_last_error_detail());
  d = RGBA_F;
  d.width = 0;
  CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_EINVAL);
  d = RGBA_F;
  d.type = 9;
  CT_ERR(cls_image_alloc(ctx, 0, &d, &img), CLS_EINVAL);
  /* The list it names is there to ask for, each with a pixel size. */
  size_t n = 0;
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, NULL, 0, &n));
  struct cls_image_format *f = calloc(n, sizeof *f);
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, f, n, &n));
  bool rgba_float = false;
  for (size_t i = 0; i < n; i++)
    rgba_float |= f[i].order == CL_RGBA && f[i].data_type == CL_FLOAT &&
                  strcmp(f[i].order_name, "CL_RGBA") == 0 && f[i].pixel_size == 16;
  ck_assert(rgba_float);
  free(f);
  close_ctx();
}
END_TEST

/* A region past the edge is refused, naming it, and leaves its record on
 * the image (F12): a later read does not get the old pixels. */
START_TEST(F12_region_out_of_bounds_is_refused_and_leaves_a_record) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image img = image(0, &RGBA_F);
  CT_OK(produce(0, img, 0.0f));
  float px[W * H * 4];
  size_t origin[3] = {W - 2, 0, 0}, region[3] = {3, 1, 1};
  CT_ERR(cls_image_upload(ctx, 0, img, origin, region, px, 0, 0), CLS_ERANGE);
  ck_assert_msg(strstr(cls_last_error_detail(), "passes the edge of the 16 x 8 x 1 image"), "%s",
                cls_last_error_detail());
  cls_report *r = tainted(0, img);
  ck_assert_int_eq(ct_failure(r, 0).status, CLS_ERANGE);
  ck_assert_msg(strstr(ct_failure(r, 0).message, "refused"), "%s", ct_failure(r, 0).message);
  cls_report_free(r);
  /* A read past the edge is refused and leaves nothing. */
  cls_image clean = image(0, &RGBA_F);
  CT_OK(produce(0, clean, 0.0f));
  size_t o2[3] = {0, H, 0};
  CT_ERR(cls_image_download(ctx, 0, clean, o2, region, px, 0, 0, NULL), CLS_ERANGE);
  size_t r1[3] = {W, 1, 1};
  CT_ERR(cls_image_download(ctx, 0, clean, NULL, r1, px, 4, 0, NULL), CLS_EINVAL); /* pitch */
  CT_OK(cls_check(ctx, 1, &clean, NULL));
  close_ctx();
}
END_TEST

/* F11: an image's access is its access qualifier.  CLS_ARG infers it, and
 * CLS_IN on a __write_only image is what strict mode refuses. */
START_TEST(F11_image_access_is_the_access_qualifier) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_kernel *k = ct_get_kernel(ctx, prog, "add1");
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_OK(cls_kernel_info(k, &ki));
  ck_assert_int_eq(ki.args[0].access, CLS_READ);
  ck_assert_int_eq(ki.args[1].access, CLS_WRITE);
  ck_assert_int_eq(ki.args[0].kind, CLS_ARG_BUFFER);
  /* Inferred as a write only: a never-written output is no input. */
  cls_image in = image(0, &RGBA_F), out = image(0, &RGBA_F);
  CT_OK(produce(0, in, 5.0f));
  cls_arg a[] = {CLS_ARG(in), CLS_ARG(out)};
  CT_OK(launch2d(0, "add1", 2, a));
  float px[W * H * 4];
  CT_OK(cls_image_download(ctx, 0, out, NULL, NULL, px, 0, 0, NULL));
  expect_rgba(px, 5.0f, 1.0f);
  close_ctx();

  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .strict = 1};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
  in = image(0, &RGBA_F);
  out = image(0, &RGBA_F);
  CT_OK(produce(0, in, 5.0f));
  cls_arg wrong[] = {CLS_IN(in), CLS_IN(out)};
  CT_ERR(launch2d(0, "add1", 2, wrong), CLS_EACCESS);
  ck_assert_msg(strstr(cls_last_error_detail(), "__write_only") &&
                    strstr(cls_last_error_detail(), "'out'"),
                "%s", cls_last_error_detail());
  close_ctx();
}
END_TEST

/* An image where the kernel takes a pointer, a buffer where it takes an
 * image, an image given to the byte calls: each refused, named. */
START_TEST(images_and_buffers_are_not_interchangeable) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image img = image(0, &RGBA_F);
  CT_OK(produce(0, img, 0.0f));
  cls_buffer buf = ct_alloc(ctx, 0, W * H * sizeof(float));
  int w = W;
  cls_arg a[] = {CLS_ARG(img), CLS_ARG(img), CLS_SCALAR(w)};
  CT_ERR(launch2d(0, "to_buf", 3, a), CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "an image given, a buffer expected"), "%s",
                cls_last_error_detail());
  cls_arg b[] = {CLS_ARG(buf), CLS_ARG(buf), CLS_SCALAR(w)};
  CT_ERR(launch2d(0, "to_buf", 3, b), CLS_EARGKIND);
  ck_assert_msg(strstr(cls_last_error_detail(), "a buffer given, an image expected"), "%s",
                cls_last_error_detail());
  char bytes[16];
  CT_ERR(cls_download(ctx, 0, img, 0, bytes, sizeof bytes, NULL), CLS_EINVAL);
  CT_ERR(cls_upload(ctx, 0, img, 0, bytes, sizeof bytes), CLS_EINVAL);
  size_t size;
  CT_ERR(cls_buffer_size(ctx, img, &size), CLS_EINVAL);
  struct cls_image_desc d;
  CT_ERR(cls_image_info(ctx, buf, &d, NULL), CLS_EINVAL);
  CT_ERR(cls_image_download(ctx, 0, buf, NULL, NULL, bytes, 0, 0, NULL), CLS_EINVAL);
  /* The refused launches leave their record on what they would have
   * written (F12); the byte calls touched nothing. */
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &img, &r), CLS_ETAINTED);
  ck_assert_int_eq(ct_failure(r, 0).status, CLS_EARGKIND);
  cls_report_free(r);
  CT_OK(produce(0, img, 0.0f));
  /* The right way round works. */
  cls_arg c[] = {CLS_IN(img), CLS_OUT(buf), CLS_SCALAR(w)};
  CT_OK(launch2d(0, "to_buf", 3, c));
  float v[W * H];
  CT_OK(cls_download(ctx, 0, buf, 0, v, sizeof v, NULL));
  ck_assert(v[3 * W + 5] == 5.0f);
  close_ctx();
}
END_TEST

/* Free while another stream reads: the image is kept until that read
 * completes; the next image of its description takes it back, written
 * by nothing (F1) and ordered after the last use. */
START_TEST(free_waits_for_readers_and_spares_are_reused_fresh) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  float px[W * H * 4];
  for (int round = 0; round < 6; round++) {
    cls_image a = image(0, &RGBA_F), b = image(1, &RGBA_F);
    CT_ERR(cls_check(ctx, 1, &a, NULL), CLS_ETAINTED); /* fresh, even if reused */
    CT_OK(produce(0, a, (float)round));
    cls_arg ab[] = {CLS_ARG(a), CLS_ARG(b)};
    CT_OK(launch2d(1, "add1", 2, ab));
    CT_OK(cls_free(ctx, a)); /* stream 1 may still read it */
    CT_ERR(cls_check(ctx, 1, &a, NULL), CLS_ETAINTED); /* stale handle */
    CT_OK(cls_image_download(ctx, 1, b, NULL, NULL, px, 0, 0, NULL));
    expect_rgba(px, (float)round, 1.0f);
    CT_OK(cls_free(ctx, b));
  }
  CT_OK(cls_sync(ctx, NULL));
  close_ctx();
}
END_TEST

/* The kernel's own constant sampler is used above; a sampler argument is
 * a scalar cl_sampler the program makes with OpenCL (it outlives the
 * launches that use it). */
START_TEST(a_sampler_argument_is_a_scalar_cl_sampler) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cl_context clctx = ctx->clctx;
  cl_int crc;
  cl_sampler smp = clCreateSampler(clctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST,
                                   &crc);
  ck_assert_int_eq(crc, CL_SUCCESS);
  cls_image img = image(0, &RGBA_F);
  CT_OK(produce(0, img, 7.0f));
  cls_buffer buf = ct_alloc(ctx, 1, W * H * sizeof(float));
  int w = W;
  cls_arg a[] = {CLS_IN(img), CLS_SCALAR(smp), CLS_OUT(buf), CLS_SCALAR(w)};
  size_t g[2] = {W, H};
  CT_OK(cls_launch(ctx, 1, ct_kernel(ctx, SAMPLER_SRC, "sampled"), 2, g, NULL, 4, a));
  float v[W * H];
  CT_OK(cls_download(ctx, 1, buf, 0, v, sizeof v, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      ck_assert(v[y * W + x] == 7.0f + x);
  close_ctx(); /* the launches are over: the sampler may go */
  clReleaseSampler(smp);
}
END_TEST

/* OpenCL 2.0 read_write images: where the device has them, a
 * __read_write image binds CLS_INOUT (CLS_ARG infers it); where it does
 * not, the program fails to build or the launch is refused by name. */
START_TEST(read_write_images_run_where_the_device_has_them_else_are_refused) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_program *p = NULL;
  int rc = cls_program_build(ctx, RW_SRC, "-cl-std=CL2.0", &p);
  if (rc == CLS_EBUILD) {
    fprintf(stderr, "%s: the device's compiler refuses __read_write images\n", __func__);
    close_ctx();
    return;
  }
  CT_OK(rc);
  cls_kernel *k = ct_get_kernel(ctx, p, "twice");
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_OK(cls_kernel_info(k, &ki));
  ck_assert_int_eq(ki.args[0].access, CLS_READ_WRITE);
  cls_image img = image(0, &RGBA_F);
  CT_OK(produce(0, img, 1.0f));
  size_t g[2] = {W, H};
  cls_arg a[] = {CLS_ARG(img)};
  struct cls_device_info info = ct_context_info(ctx);
  rc = cls_launch(ctx, 0, k, 2, g, NULL, 1, a);
  if (rc == CLS_ENOSYS) {
    ck_assert_msg(strstr(cls_last_error_detail(), "__read_write image") &&
                      strstr(cls_last_error_detail(), info.device_name),
                  "%s", cls_last_error_detail());
    fprintf(stderr, "%s: device '%s' has no read_write images: refused\n", __func__,
            info.device_name);
    close_ctx();
    return;
  }
  CT_OK(rc);
  ck_assert_int_ge(info.cl_version, 200);
  float px[W * H * 4];
  CT_OK(cls_image_download(ctx, 0, img, NULL, NULL, px, 0, 0, NULL));
  ck_assert(px[4 * (2 * W + 3)] == 2.0f * (1.0f + 3));
  close_ctx();
}
END_TEST


/* Copies image to image, image to buffer and back, and fills, by region. */
START_TEST(copies_and_fills_move_regions) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image a = image(0, &RGBA_F), b = image(1, &RGBA_F);
  const float red[4] = {1.0f, 0.0f, 0.0f, 1.0f}, blue[4] = {0.0f, 0.0f, 1.0f, 1.0f};
  CT_OK(cls_image_fill(ctx, 0, a, red, NULL, NULL));
  size_t o[3] = {4, 2, 0}, r[3] = {3, 3, 1};
  CT_OK(cls_image_fill(ctx, 0, a, blue, o, r)); /* a blue block in red */
  CT_OK(cls_image_copy(ctx, 1, a, NULL, b, NULL, NULL));
  size_t o2[3] = {10, 4, 0};
  CT_OK(cls_image_copy(ctx, 1, a, o, b, o2, r)); /* the block again, elsewhere */
  cls_buffer buf = ct_alloc(ctx, 0, W * H * 16);
  CT_OK(cls_image_to_buffer(ctx, 0, b, NULL, NULL, buf, 0));
  cls_image c = image(1, &RGBA_F);
  CT_OK(cls_buffer_to_image(ctx, 1, buf, 0, c, NULL, NULL));
  float px[W * H * 4];
  CT_OK(cls_image_download(ctx, 0, c, NULL, NULL, px, 0, 0, NULL));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool blk = (x >= 4 && x < 7 && y >= 2 && y < 5) || (x >= 10 && x < 13 && y >= 4 && y < 7);
      const float *p = px + 4 * (y * W + x), *want = blk ? blue : red;
      ck_assert_msg(memcmp(p, want, 16) == 0, "(%d, %d) = (%g, %g, %g, %g)", x, y, p[0], p[1],
                    p[2], p[3]);
    }
  /* Bad regions and formats are refused, naming them. */
  struct cls_image_desc r8 = {.order = CL_R, .data_type = CL_FLOAT, .width = W, .height = H};
  cls_image other = image(0, &r8);
  CT_ERR(cls_image_copy(ctx, 0, a, NULL, other, NULL, NULL), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "formats differ"), "%s", cls_last_error_detail());
  size_t big[3] = {W, H, 1};
  CT_ERR(cls_image_copy(ctx, 0, a, o, b, NULL, big), CLS_ERANGE);
  CT_ERR(cls_image_to_buffer(ctx, 0, a, NULL, NULL, buf, 16), CLS_ERANGE);
  CT_OK(cls_image_copy(ctx, 0, a, NULL, a, o, r)); /* beside it */
  size_t near[3] = {1, 1, 0};
  CT_ERR(cls_image_copy(ctx, 0, a, NULL, a, near, r), CLS_EINVAL); /* overlap: F12 on a */
  cls_report *rep = tainted(0, a);
  ck_assert_int_eq(ct_failure(rep, 0).status, CLS_EINVAL);
  cls_report_free(rep);
  CT_ERR(cls_image_fill(ctx, 0, a, NULL, NULL, NULL), CLS_EINVAL);
  close_ctx();
}
END_TEST

/* F2 for copies: a tainted source is not copied, its failure goes on to
 * the destination, image or buffer. */
START_TEST(F2_copy_of_tainted_image_passes_its_failure_on) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  cls_image never = image(0, &RGBA_F), dst = image(0, &RGBA_F);
  CT_OK(produce(0, dst, 1.0f));
  CT_ERR(cls_image_copy(ctx, 0, never, NULL, dst, NULL, NULL), CLS_ETAINTED);
  cls_report *r = tainted(0, dst);
  ck_assert_str_eq(ct_failure(r, 0).operation, "alloc");
  cls_report_free(r);
  cls_buffer buf = ct_alloc(ctx, 1, W * H * 16);
  float zero[W * H * 4] = {0};
  CT_OK(cls_upload(ctx, 1, buf, 0, zero, sizeof zero));
  CT_ERR(cls_image_to_buffer(ctx, 1, never, NULL, NULL, buf, 0), CLS_ETAINTED);
  CT_ERR(cls_check(ctx, 1, &buf, NULL), CLS_ETAINTED);
  close_ctx();
}
END_TEST

/* 3D images and 2D arrays: regions by slice or layer, with pitches. */
START_TEST(images_3d_and_2d_arrays_move_slices_and_layers) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  for (int type = CLS_IMAGE_3D; type <= CLS_IMAGE_2D_ARRAY; type++) {
    struct cls_image_desc d = {.type = type, .order = CL_R, .data_type = CL_UNSIGNED_INT32,
                               .width = 8, .height = 4};
    if (type == CLS_IMAGE_3D)
      d.depth = 3;
    else
      d.array_size = 3;
    cls_image img = image(0, &d);
    struct cls_image_desc got;
    CT_OK(cls_image_info(ctx, img, &got, NULL));
    ck_assert_uint_eq(type == CLS_IMAGE_3D ? got.depth : got.array_size, 3);
    uint32_t all[3][4][8];
    for (int z = 0; z < 3; z++)
      for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++)
          all[z][y][x] = (uint32_t)(1000 * z + 10 * y + x + type);
    CT_OK(cls_image_upload(ctx, 0, img, NULL, NULL, all, 0, 0));
    /* Slice (layer) 2, rows 1-2, columns 3-6, into a host box whose rows
     * hold 5 values and slices 3 rows. */
    uint32_t box[3][5];
    size_t o[3] = {3, 1, 2}, r[3] = {4, 2, 1};
    CT_OK(cls_image_download(ctx, 1, img, o, r, box, sizeof box[0], sizeof box, NULL));
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 4; x++)
        ck_assert_uint_eq(box[y][x], all[2][1 + y][3 + x]);
    /* Past the last slice: refused. */
    size_t o4[3] = {0, 0, 3};
    CT_ERR(cls_image_download(ctx, 1, img, o4, NULL, box, 0, 0, NULL), CLS_EINVAL); /* zero */
    size_t r4[3] = {1, 1, 4};
    CT_ERR(cls_image_download(ctx, 1, img, NULL, r4, box, 0, 0, NULL), CLS_ERANGE);
    CT_OK(cls_free(ctx, img));
  }
  /* A 2D image has one slice; depth on a 2D image is refused. */
  struct cls_image_desc bad = RGBA_F;
  bad.depth = 2;
  cls_image img;
  CT_ERR(cls_image_alloc(ctx, 0, &bad, &img), CLS_EINVAL);
  close_ctx();
}
END_TEST

/* A freed image is kept until a slow reader on another stream is done
 * with it: the next image of its description (its spare) is written at
 * once on the owning stream, and the reader still sees the old pixels. */
START_TEST(free_waits_for_a_slow_reader_before_the_image_is_reused) {
  open_ctx(NULL);
  if (!images_or_say(__func__)) {
    close_ctx();
    return;
  }
  float px[W * H * 4];
  int iters = ct_scale(200000, 50000);
  for (int round = 0; round < 3; round++) {
    cls_image a = image(0, &RGBA_F), out = image(1, &RGBA_F);
    CT_OK(produce(0, a, 10.0f));
    CT_OK(cls_sync(ctx, NULL));
    cls_arg s1[] = {CLS_IN(a), CLS_OUT(out), CLS_SCALAR(iters)};
    CT_OK(launch2d(1, "slow_add1", 3, s1));
    CT_OK(cls_free(ctx, a));
    cls_image again = image(0, &RGBA_F); /* the spare, once the reader is done */
    CT_OK(produce(0, again, 50.0f));
    CT_OK(cls_image_download(ctx, 1, out, NULL, NULL, px, 0, 0, NULL));
    expect_rgba(px, 10.0f, 1.0f);
    CT_OK(cls_free(ctx, again));
    CT_OK(cls_free(ctx, out));
  }
  close_ctx();
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("image");
  CT_ADD(s, images_of_each_named_format_round_trip);
  CT_ADD(s, regions_with_a_row_pitch_move_only_their_pixels);
  CT_ADD(s, F1_image_never_written_reads_as_never_written);
  CT_ADD(s, F5_download_of_tainted_image_names_root);
  CT_ADD(s, F4_launch_reading_tainted_image_is_skipped);
  CT_ADD(s, F7_image_chain_across_streams_is_ordered);
  CT_ADD(s, F12_image_format_the_device_lacks_is_refused_naming_it);
  CT_ADD(s, F12_region_out_of_bounds_is_refused_and_leaves_a_record);
  CT_ADD(s, F11_image_access_is_the_access_qualifier);
  CT_ADD(s, images_and_buffers_are_not_interchangeable);
  CT_ADD(s, free_waits_for_readers_and_spares_are_reused_fresh);
  CT_ADD(s, free_waits_for_a_slow_reader_before_the_image_is_reused);
  CT_ADD(s, a_sampler_argument_is_a_scalar_cl_sampler);
  CT_ADD(s, read_write_images_run_where_the_device_has_them_else_are_refused);
  CT_ADD(s, copies_and_fills_move_regions);
  CT_ADD(s, F2_copy_of_tainted_image_passes_its_failure_on);
  CT_ADD(s, images_3d_and_2d_arrays_move_slices_and_layers);
  return ct_run(s);
}
