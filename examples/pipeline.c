/* pipeline: an image pipeline on three streams.
 *
 *   stream 0   upload the image, blur it          (kernel "blur")
 *   stream 1   edge magnitude of the blurred image (kernel "sobel")
 *   stream 2   256-bin histogram of the edges      (kernel "histogram")
 *
 * There is no synchronisation between the streams in this file: clstream
 * sees that "sobel" reads what "blur" wrote, and "histogram" what "sobel"
 * wrote, and orders the streams itself.
 *
 * Failures flow the same way.  If a launch fails, its outputs carry the
 * failure; the launches downstream that read them are skipped and pass the
 * failure on, and each stage's download reports the root cause and the
 * chain of skipped launches.  Try:
 *
 *   CLS_FAULT=enqueue:kernel=blur      examples/pipeline   (every stage fails)
 *   CLS_FAULT=enqueue:kernel=histogram examples/pipeline   (blur, sobel verify)
 *
 * --devices N places the three streams over N devices of one platform
 * (stream i on device i mod N; CLS_DEVICE=all unless $CLS_DEVICE names
 * them; PoCL offers two CPU devices with POCL_DEVICES="pthread pthread").
 * A stream's queue is a lease (docs/devices.md): with
 *
 *   CLS_FAULT=lost:stream=1,nth=2 CLS_RELOCATE=other examples/pipeline --devices 2
 *
 * stream 1's queue is lost at its second command; the stream moves to the
 * other device, clstream runs the lost command again there (recovery),
 * and all three stages verify without the pipeline seeing the loss.  With
 * CLS_RECOVER=off as well, the pipeline prints what was lost and runs the
 * lost stage again itself (what a program without recovery must do).
 * With CLS_RELOCATE=off the loss is reported like any failure (exit 1).
 *
 * --images runs the same pipeline on image objects (image2d_t, CL_R of
 * CL_FLOAT): blur and sobel read through a clamp-to-edge sampler and
 * write images, the histogram reads the edge image; the kernels keep
 * their names, so the CLS_FAULT lines above work the same, and the
 * results are checked against the same host computation.
 *
 * --trace FILE writes a timeline of the run (docs/trace.md) to open in
 * Perfetto (ui.perfetto.dev) or chrome://tracing: a track per stream, the
 * cross-stream waits as arrows, skips and failures as marks.
 *
 * Every result is checked against a plain C computation on the host.
 * Exit status: 0 when all three stages verify, 1 when a stage failed or
 * gave a wrong result, 2 on any other error.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <clstream.h>
#include <clstream/cl.h> /* CL_DEVICE_NOT_AVAILABLE */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BINS 256

/* ------------------------------------------------------------------ */
/* The kernels                                                         */
/* ------------------------------------------------------------------ */

/* The host reference below computes every value in the same order, so the
 * blur agrees bit for bit and the edge magnitudes within rounding (the
 * device may fuse a multiply-add and its sqrt may differ by an ulp). */
static const char *source =
    "/* pixel (x, y) with the border repeated outwards */\n"
    "float px(__global const float *im, int w, int h, int x, int y) {\n"
    "  return im[clamp(y, 0, h - 1) * w + clamp(x, 0, w - 1)];\n"
    "}\n"
    "\n"
    "/* 3x3 Gaussian: 1 2 1 / 2 4 2 / 1 2 1, divided by 16 */\n"
    "__kernel void blur(__global const float *src, __global float *dst,\n"
    "                   int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float top = px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x, y - 1)\n"
    "            + px(src, w, h, x + 1, y - 1);\n"
    "  float mid = 2.0f * px(src, w, h, x - 1, y) + 4.0f * px(src, w, h, x, y)\n"
    "            + 2.0f * px(src, w, h, x + 1, y);\n"
    "  float bot = px(src, w, h, x - 1, y + 1) + 2.0f * px(src, w, h, x, y + 1)\n"
    "            + px(src, w, h, x + 1, y + 1);\n"
    "  dst[y * w + x] = (top + mid + bot) * 0.0625f;\n"
    "}\n"
    "\n"
    "/* Sobel gradient magnitude */\n"
    "__kernel void sobel(__global const float *src, __global float *dst,\n"
    "                    int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float gx = (px(src, w, h, x + 1, y - 1) + 2.0f * px(src, w, h, x + 1, y)\n"
    "              + px(src, w, h, x + 1, y + 1))\n"
    "           - (px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x - 1, y)\n"
    "              + px(src, w, h, x - 1, y + 1));\n"
    "  float gy = (px(src, w, h, x - 1, y + 1) + 2.0f * px(src, w, h, x, y + 1)\n"
    "              + px(src, w, h, x + 1, y + 1))\n"
    "           - (px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x, y - 1)\n"
    "              + px(src, w, h, x + 1, y - 1));\n"
    "  dst[y * w + x] = sqrt(gx * gx + gy * gy);\n"
    "}\n"
    "\n"
    "/* bins[v * scale] += 1, clamped to the last bin; bins start at zero */\n"
    "__kernel void histogram(__global const float *v, __global uint *bins,\n"
    "                        uint n, float scale) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  int b = (int)(v[i] * scale);\n"
    "  atomic_inc(&bins[clamp(b, 0, 255)]);\n"
    "}\n";

/* The same kernels on images: the sampler's clamp-to-edge is the border
 * px() repeats, and every value is computed in the same order. */
static const char *image_source =
    "__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE |\n"
    "                            CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "float ipx(__read_only image2d_t im, int x, int y) {\n"
    "  return read_imagef(im, edge, (int2)(x, y)).x;\n"
    "}\n"
    "\n"
    "__kernel void blur(__read_only image2d_t src, __write_only image2d_t dst,\n"
    "                   int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float top = ipx(src, x - 1, y - 1) + 2.0f * ipx(src, x, y - 1) + ipx(src, x + 1, y - 1);\n"
    "  float mid = 2.0f * ipx(src, x - 1, y) + 4.0f * ipx(src, x, y) + 2.0f * ipx(src, x + 1, y);\n"
    "  float bot = ipx(src, x - 1, y + 1) + 2.0f * ipx(src, x, y + 1) + ipx(src, x + 1, y + 1);\n"
    "  write_imagef(dst, (int2)(x, y), (float4)((top + mid + bot) * 0.0625f, 0.0f, 0.0f, 1.0f));\n"
    "}\n"
    "\n"
    "__kernel void sobel(__read_only image2d_t src, __write_only image2d_t dst,\n"
    "                    int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  if (x >= w || y >= h) return;\n"
    "  float gx = (ipx(src, x + 1, y - 1) + 2.0f * ipx(src, x + 1, y) + ipx(src, x + 1, y + 1))\n"
    "           - (ipx(src, x - 1, y - 1) + 2.0f * ipx(src, x - 1, y) + ipx(src, x - 1, y + 1));\n"
    "  float gy = (ipx(src, x - 1, y + 1) + 2.0f * ipx(src, x, y + 1) + ipx(src, x + 1, y + 1))\n"
    "           - (ipx(src, x - 1, y - 1) + 2.0f * ipx(src, x, y - 1) + ipx(src, x + 1, y - 1));\n"
    "  write_imagef(dst, (int2)(x, y), (float4)(sqrt(gx * gx + gy * gy), 0.0f, 0.0f, 1.0f));\n"
    "}\n"
    "\n"
    "__kernel void histogram(__read_only image2d_t v, __global uint *bins,\n"
    "                        uint n, float scale) {\n"
    "  int i = (int)get_global_id(0), w = get_image_width(v);\n"
    "  if (i >= (int)n) return;\n"
    "  int b = (int)(ipx(v, i % w, i / w) * scale);\n"
    "  atomic_inc(&bins[clamp(b, 0, 255)]);\n"
    "}\n";

/* ------------------------------------------------------------------ */
/* The host reference                                                  */
/* ------------------------------------------------------------------ */

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static float px(const float *im, int w, int h, int x, int y) {
  return im[clampi(y, 0, h - 1) * w + clampi(x, 0, w - 1)];
}

static void host_blur(const float *src, float *dst, int w, int h) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float top = px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x, y - 1) +
                  px(src, w, h, x + 1, y - 1);
      float mid = 2.0f * px(src, w, h, x - 1, y) + 4.0f * px(src, w, h, x, y) +
                  2.0f * px(src, w, h, x + 1, y);
      float bot = px(src, w, h, x - 1, y + 1) + 2.0f * px(src, w, h, x, y + 1) +
                  px(src, w, h, x + 1, y + 1);
      dst[y * w + x] = (top + mid + bot) * 0.0625f;
    }
}

static void host_sobel(const float *src, float *dst, int w, int h) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float gx = (px(src, w, h, x + 1, y - 1) + 2.0f * px(src, w, h, x + 1, y) +
                  px(src, w, h, x + 1, y + 1)) -
                 (px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x - 1, y) +
                  px(src, w, h, x - 1, y + 1));
      float gy = (px(src, w, h, x - 1, y + 1) + 2.0f * px(src, w, h, x, y + 1) +
                  px(src, w, h, x + 1, y + 1)) -
                 (px(src, w, h, x - 1, y - 1) + 2.0f * px(src, w, h, x, y - 1) +
                  px(src, w, h, x + 1, y - 1));
      dst[y * w + x] = sqrtf(gx * gx + gy * gy);
    }
}

static void host_histogram(const float *v, size_t n, float scale, uint32_t *bins) {
  memset(bins, 0, BINS * sizeof *bins);
  for (size_t i = 0; i < n; i++) {
    float s = v[i] * scale; /* one rounding, as on the device */
    bins[clampi((int)s, 0, BINS - 1)]++;
  }
}

/* A synthetic grayscale image in [0, 1]: smooth gradients, with rectangles
 * and discs on top so that there are edges to find. */
static void make_image(float *im, int n) {
  for (int y = 0; y < n; y++)
    for (int x = 0; x < n; x++) {
      float u = (float)x / (float)n, v = (float)y / (float)n;
      float p = 0.15f + 0.35f * u + 0.2f * v * v;
      if (u > 0.1f && u < 0.45f && v > 0.15f && v < 0.4f)
        p += 0.4f; /* a bright rectangle */
      if (u > 0.6f && u < 0.9f && v > 0.55f && v < 0.7f)
        p -= 0.12f; /* a dim one */
      float dx = u - 0.3f, dy = v - 0.7f;
      if (dx * dx + dy * dy < 0.02f)
        p = 0.95f; /* a white disc */
      dx = u - 0.72f, dy = v - 0.28f;
      if (dx * dx + dy * dy < 0.01f)
        p *= 0.3f; /* a dark one */
      im[(size_t)y * n + x] = p < 0.0f ? 0.0f : p > 1.0f ? 1.0f : p;
    }
}

/* Index of the first value outside |got - want| <= tol * (1 + |want|), or
 * n when all agree. */
static size_t compare(const float *got, const float *want, size_t n, float tol) {
  for (size_t i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i]))))
      return i;
  return n;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ */
/* Stages and their failures                                           */
/* ------------------------------------------------------------------ */

static int quiet;
static int images; /* --images: the stages' data are image objects */

static void say(const char *fmt, ...) {
  if (quiet)
    return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

enum verdict { OK, FAILED, WRONG };

struct stage {
  const char *name; /* the kernel's name */
  int stream;
  int verdict;
  char why[256];    /* FAILED or WRONG: one line */
};

/* The root causes seen so far, each reported once however many stages
 * carry it.  A failure is identified by where it happened. */
#define MAX_CAUSES 8
static struct cause {
  int status, cl_status, stream;
  uint64_t position;
  char operation[32], kernel[64];
} causes[MAX_CAUSES];
static size_t ncauses;

static const char *str(const char *s) { return s ? s : ""; }

static int same_cause(const struct cause *c, const struct cls_failure_info *f) {
  return c->status == f->status && c->cl_status == f->cl_status &&
         c->stream == f->stream && c->position == f->position &&
         strcmp(c->operation, str(f->operation)) == 0 &&
         strcmp(c->kernel, str(f->kernel)) == 0;
}

/* "CLS_ELAUNCH in launch of 'blur' on stream 0" */
static void describe_cause(const struct cause *c, char *buf, size_t cap) {
  if (c->kernel[0])
    snprintf(buf, cap, "%s in %s of '%s' on stream %d", cls_err_name(c->status),
             c->operation, c->kernel, c->stream);
  else
    snprintf(buf, cap, "%s in %s on stream %d", cls_err_name(c->status),
             c->operation, c->stream);
}

/* What the report says about this stage: its own launch is the root cause,
 * or the skip chain lists it. */
static const char *stage_role(const struct stage *st, cls_report *report) {
  for (size_t i = 0; i < cls_report_failures(report); i++) {
    struct cls_failure_info f;
    if (cls_report_failure(report, i, &f) != CLS_OK)
      continue;
    if (f.stream == st->stream && strcmp(str(f.kernel), st->name) == 0)
      return f.async ? "failed after launch" : "launch failed";
    for (size_t j = 0; j < f.nskips; j++) {
      struct cls_skip_info sk;
      if (cls_report_skip(report, i, j, &sk) == CLS_OK && sk.stream == st->stream &&
          strcmp(str(sk.kernel), st->name) == 0)
        return sk.kind == CLS_SKIP_UNTRUSTED ? "ran on untrusted input" : "skipped";
    }
  }
  return "tainted";
}

/* A stage whose download answered CLS_ETAINTED: print the report unless
 * every failure in it was printed already, note the root cause, free it. */
static void stage_failed(struct stage *st, cls_report *report) {
  st->verdict = FAILED;
  if (!report) { /* the library always gives one; be safe anyway */
    snprintf(st->why, sizeof st->why, "tainted; no report");
    return;
  }
  int news = cls_report_failures(report) == 0; /* only bad handles: print */
  const struct cause *first = NULL;
  for (size_t i = 0; i < cls_report_failures(report); i++) {
    struct cls_failure_info f;
    if (cls_report_failure(report, i, &f) != CLS_OK)
      continue;
    size_t k = 0;
    while (k < ncauses && !same_cause(&causes[k], &f))
      k++;
    if (k == ncauses && ncauses < MAX_CAUSES) {
      struct cause *c = &causes[ncauses++];
      c->status = f.status;
      c->cl_status = f.cl_status;
      c->stream = f.stream;
      c->position = f.position;
      snprintf(c->operation, sizeof c->operation, "%s", str(f.operation));
      snprintf(c->kernel, sizeof c->kernel, "%s", str(f.kernel));
      news = 1;
    }
    if (!first && k < ncauses)
      first = &causes[k];
  }

  char cause[160] = "none named";
  if (first)
    describe_cause(first, cause, sizeof cause);
  snprintf(st->why, sizeof st->why, "%s; root cause: %s", stage_role(st, report), cause);

  if (news) {
    const char *text = cls_report_text(report);
    size_t len = strlen(text);
    say("\n%s on stream %d: download failed:\n%s%s", st->name, st->stream, text,
        len && text[len - 1] == '\n' ? "" : "\n");
  } else
    say("\n%s on stream %d: download failed with the failure reported above\n",
        st->name, st->stream);
  cls_report_free(report);
}

/* Any error other than a failure flowing through the pipeline ends it. */
static int fatal(const char *what, int rc) {
  const char *detail = cls_last_error_detail();
  fflush(stdout);
  fprintf(stderr, "pipeline: %s: %s: %s\n", what, cls_err_name(rc), cls_strerror(rc));
  if (detail[0])
    fprintf(stderr, "%s\n", detail);
  return 2;
}

/* A skipped or failed launch is not an error here: its outputs carry the
 * failure on, and the downloads report it. */
static int launch(cls_context *ctx, struct stage *st, cls_kernel *k, unsigned dims,
                  const size_t *global, size_t nargs, const cls_arg *args) {
  int rc = cls_launch(ctx, st->stream, k, dims, global, NULL, nargs, args);
  if (rc == CLS_ESKIPPED || rc == CLS_ELAUNCH) {
    say("%-9s on stream %d: %s (%s), going on\n", st->name, st->stream,
        cls_err_name(rc), cls_strerror(rc));
    return CLS_OK;
  }
  return rc;
}

/* Downloads a stage's result on its own stream.  CLS_OK when it came back
 * (or the stage is marked failed); another code is an error.  A download
 * the stream's lost queue refused (CL_DEVICE_NOT_AVAILABLE: the lease
 * expired) fails the stage; what the stage wrote is checked and reported:
 * written before the loss, it is kept. */
static int download(cls_context *ctx, struct stage *st, cls_buffer buf, void *dst,
                    size_t size) {
  cls_report *report = NULL;
  int rc = images && size > BINS * sizeof(uint32_t)
               ? cls_image_download(ctx, st->stream, buf, NULL, NULL, dst, 0, 0, &report)
               : cls_download(ctx, st->stream, buf, 0, dst, size, &report);
  if (rc == CLS_ETAINTED) {
    stage_failed(st, report);
    return CLS_OK;
  }
  if (rc == CLS_ECL && cls_last_cl_status() == CL_DEVICE_NOT_AVAILABLE) {
    st->verdict = FAILED;
    snprintf(st->why, sizeof st->why, "queue lost at its download: %s", cls_last_error_detail());
    if (ncauses < MAX_CAUSES) { /* the download itself is the root cause */
      struct cause *c = &causes[ncauses++];
      memset(c, 0, sizeof *c);
      c->status = rc;
      c->cl_status = CL_DEVICE_NOT_AVAILABLE;
      c->stream = st->stream;
      snprintf(c->operation, sizeof c->operation, "download");
    }
    say("\n%s on stream %d: download failed, the stream's queue is lost: %s\n", st->name,
        st->stream, cls_last_error_detail());
    rc = cls_check(ctx, 1, &buf, &report);
    if (rc == CLS_OK)
      say("  its output was written before the loss: kept\n");
    else if (rc == CLS_ETAINTED)
      say("  its output:\n%s\n", cls_report_text(report));
    cls_report_free(report);
    return rc == CLS_ETAINTED ? CLS_OK : rc;
  }
  return rc;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *to) {
  fprintf(to, "Usage: pipeline [--size N] [--devices N] [--images] [--quiet] [--trace FILE]\n"
              "  --size N       image of N x N pixels (default 2048)\n"
              "  --images       the stages on image objects (image2d_t), not buffers\n"
              "  --devices N    the streams spread over N devices of one platform\n"
              "  --quiet        print only the verdict lines and the summary\n"
              "  --trace FILE   write a timeline (Chrome trace-event JSON) to FILE\n");
}

int main(int argc, char **argv) {
  int n = 2048, ndevices = 0;
  struct cls_context_options opts = {.version = CLS_CONTEXT_OPTIONS_VERSION};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > 16384) {
        fprintf(stderr, "pipeline: --size wants 1 .. 16384\n");
        return 2;
      }
      n = (int)v;
    } else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      char *end;
      long v = strtol(argv[++i], &end, 10);
      if (*end || v < 1 || v > CLS_MAX_DEVICES) {
        fprintf(stderr, "pipeline: --devices wants 1 .. %d\n", CLS_MAX_DEVICES);
        return 2;
      }
      ndevices = (int)v;
    } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
      opts.trace = argv[++i];
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(argv[i], "--images") == 0) {
      images = 1;
    } else if (strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }

  const size_t pixels = (size_t)n * n, bytes = pixels * sizeof(float);
  const float scale = BINS / (4.0f * sqrtf(2.0f)); /* largest magnitude: 4 sqrt 2 */
  struct stage blur = {"blur", 0, OK, ""};
  struct stage sobel = {"sobel", 1, OK, ""};
  struct stage hist = {"histogram", 2, OK, ""};
  struct stage *stages[] = {&blur, &sobel, &hist};

  int status = 2, rc;
  cls_context *ctx = NULL;
  cls_program *prog = NULL;
  cls_kernel *k_blur, *k_sobel, *k_hist;
  cls_buffer d_image, d_blurred, d_edges, d_bins;
  float *image = malloc(bytes), *ref_blur = malloc(bytes), *ref_edges = malloc(bytes);
  float *out_blur = malloc(bytes), *out_edges = malloc(bytes);
  uint32_t ref_bins[BINS], out_bins[BINS];
  if (!image || !ref_blur || !ref_edges || !out_blur || !out_edges) {
    fprintf(stderr, "pipeline: out of host memory\n");
    goto done;
  }
  make_image(image, n);

#define TRY(what, call)                \
  do {                                 \
    if ((rc = (call)) != CLS_OK) {     \
      status = fatal((what), rc);      \
      goto done;                       \
    }                                  \
  } while (0)

  /* Set up: a context on $CLS_DEVICE (default: first GPU, else first
   * device), the three kernels, and each stage's buffers on its stream. */
  const char *env_device = getenv("CLS_DEVICE");
  if (ndevices > 1 && !(env_device && *env_device))
    opts.device = "all";
  TRY("creating the context", cls_context_create(&ctx, &opts));
  struct cls_device_info dev;
  TRY("querying the device", cls_context_device(ctx, &dev));
  say("pipeline: %dx%d image on %s (%s driver)%s\n", n, n, dev.device_name,
      cls_context_driver(ctx), images ? ", on image objects" : "");
  if (ndevices) {
    size_t have = 0;
    TRY("listing the context's devices", cls_context_devices(ctx, NULL, 0, &have));
    if ((int)have < ndevices) {
      fprintf(stderr, "pipeline: --devices %d, but the context has %zu device%s (%s)\n",
              ndevices, have, have == 1 ? "" : "s",
              "PoCL offers two with POCL_DEVICES=\"pthread pthread\"");
      status = 2;
      goto done;
    }
    for (int s = 0; s < 3; s++) { /* spread: stream s on device s mod N */
      TRY("placing a stream", cls_stream_place(ctx, s, s % ndevices));
      say("stream %d on device %d\n", s, s % ndevices);
    }
  }

  double t = now();
  TRY("building the kernels",
      cls_program_build(ctx, images ? image_source : source, NULL, &prog));
  TRY("looking up 'blur'", cls_kernel_get(ctx, prog, "blur", &k_blur));
  TRY("looking up 'sobel'", cls_kernel_get(ctx, prog, "sobel", &k_sobel));
  TRY("looking up 'histogram'", cls_kernel_get(ctx, prog, "histogram", &k_hist));
  TRY("releasing the program", cls_program_release(ctx, prog)); /* kernels stay */
  say("build:     %8.1f ms\n", (now() - t) * 1e3);

  if (images) { /* one float channel, n x n: the buffers' layout */
    const struct cls_image_desc desc = {.type = CLS_IMAGE_2D, .order = CL_R,
                                        .data_type = CL_FLOAT, .width = (size_t)n,
                                        .height = (size_t)n};
    TRY("allocating the image", cls_image_alloc(ctx, 0, &desc, &d_image));
    TRY("allocating the blurred image", cls_image_alloc(ctx, 0, &desc, &d_blurred));
    TRY("allocating the edges", cls_image_alloc(ctx, 1, &desc, &d_edges));
  } else {
    TRY("allocating the image", cls_alloc(ctx, 0, bytes, &d_image));
    TRY("allocating the blurred image", cls_alloc(ctx, 0, bytes, &d_blurred));
    TRY("allocating the edges", cls_alloc(ctx, 1, bytes, &d_edges));
  }
  TRY("allocating the bins", cls_alloc(ctx, 2, sizeof out_bins, &d_bins));

  /* The pipeline.  Each stage names what it reads (CLS_IN) and writes
   * (CLS_OUT, CLS_INOUT); that is all clstream needs to order the streams. */
  int32_t w = n, h = n;
  uint32_t count = (uint32_t)pixels;
  const uint32_t zero = 0;
  const size_t grid[2] = {(size_t)n, (size_t)n}, line = pixels;
  t = now();

  cls_arg blur_args[] = {CLS_IN(d_image), CLS_OUT(d_blurred), CLS_SCALAR(w), CLS_SCALAR(h)};
  cls_arg sobel_args[] = {CLS_IN(d_blurred), CLS_OUT(d_edges), CLS_SCALAR(w), CLS_SCALAR(h)};
  cls_arg hist_args[] = {CLS_IN(d_edges), CLS_INOUT(d_bins), CLS_SCALAR(count),
                         CLS_SCALAR(scale)};
  /* Pass 0 runs every stage.  Pass 1 runs again, on their relocated
   * streams, the stages that failed because a stream's queue was lost
   * (CLS_RELOCATE moved the stream): a stage runs again when it failed,
   * or when it reads what a stage run again wrote. */
  int redo[3] = {1, 1, 1};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) {
      int moved = 0;
      for (int s = 0; s < 3; s++) {
        uint64_t g = 0;
        int d = 0;
        TRY("reading a stream's generation", cls_stream_generation(ctx, s, &g));
        TRY("reading a stream's device", cls_stream_device(ctx, s, &d));
        if (g) {
          say("\nstream %d was relocated: now generation %llu on device %d\n", s,
              (unsigned long long)g, d);
          moved = 1;
        }
      }
      if (!moved)
        break;
      int again = 0;
      for (int i = 0; i < 3; i++) {
        redo[i] = stages[i]->verdict == FAILED || (i && redo[i - 1]);
        if (redo[i]) {
          say("running %s again on stream %d\n", stages[i]->name, stages[i]->stream);
          stages[i]->verdict = OK;
          stages[i]->why[0] = '\0';
          again = 1;
        }
      }
      if (!again)
        break;
      ncauses = 0;
    }
    if (redo[0]) {
      TRY("uploading the image",
          images ? cls_image_upload(ctx, 0, d_image, NULL, NULL, image, 0, 0)
                 : cls_upload(ctx, 0, d_image, 0, image, bytes));
      TRY("launching 'blur'", launch(ctx, &blur, k_blur, 2, grid, 4, blur_args));
    }
    if (redo[1])
      TRY("launching 'sobel'", launch(ctx, &sobel, k_sobel, 2, grid, 4, sobel_args));
    if (redo[2]) {
      TRY("zeroing the bins", cls_fill(ctx, 2, d_bins, 0, sizeof out_bins, &zero, sizeof zero));
      TRY("launching 'histogram'", launch(ctx, &hist, k_hist, 1, &line, 4, hist_args));
    }
    /* Each stream brings its own result back. */
    if (redo[0])
      TRY("downloading the blurred image", download(ctx, &blur, d_blurred, out_blur, bytes));
    if (redo[1])
      TRY("downloading the edges", download(ctx, &sobel, d_edges, out_edges, bytes));
    if (redo[2])
      TRY("downloading the bins", download(ctx, &hist, d_bins, out_bins, sizeof out_bins));
  }
  double t_device = now() - t;

  /* The same work in plain C. */
  t = now();
  host_blur(image, ref_blur, n, n);
  host_sobel(ref_blur, ref_edges, n, n);
  double t_host = now() - t;

  /* Verify what came back.  The histogram is counted on the host from the
   * device's own edge magnitudes: those agree with the host's only within
   * rounding, and a value a rounding away from a bin boundary would land in
   * the neighbouring bin.  Binning the same floats with the same single
   * multiply makes the comparison exact; the edges themselves are checked
   * against the host's separately. */
  const float tol = 1e-4f;
  size_t bad;
  if (blur.verdict == OK && (bad = compare(out_blur, ref_blur, pixels, tol)) < pixels) {
    blur.verdict = WRONG;
    snprintf(blur.why, sizeof blur.why, "pixel (%zu, %zu) is %.7g, expected %.7g",
             bad % n, bad / n, out_blur[bad], ref_blur[bad]);
  }
  if (sobel.verdict == OK && (bad = compare(out_edges, ref_edges, pixels, tol)) < pixels) {
    sobel.verdict = WRONG;
    snprintf(sobel.why, sizeof sobel.why, "pixel (%zu, %zu) is %.7g, expected %.7g",
             bad % n, bad / n, out_edges[bad], ref_edges[bad]);
  }
  if (hist.verdict == OK) {
    host_histogram(sobel.verdict == FAILED ? ref_edges : out_edges, pixels, scale, ref_bins);
    for (int b = 0; b < BINS; b++)
      if (out_bins[b] != ref_bins[b]) {
        hist.verdict = WRONG;
        snprintf(hist.why, sizeof hist.why, "bin %d holds %u, expected %u", b,
                 (unsigned)out_bins[b], (unsigned)ref_bins[b]);
        break;
      }
  }

  say("\ndevice:    %8.1f ms  (upload, 3 kernels, 3 downloads)\n", t_device * 1e3);
  say("host:      %8.1f ms  (the same work in plain C)\n\n", t_host * 1e3);
  say("stream  enqueues  launches  skips  waits  flushes  markers  failures%s\n",
      ndevices ? "  device  migrations  relocations  replays" : "");
  for (int s = 0; s < 3; s++) {
    struct cls_stream_stats ss;
    int d = 0;
    TRY("reading stream statistics", cls_stream_stats(ctx, s, &ss));
    TRY("reading a stream's device", cls_stream_device(ctx, s, &d));
    say("%6d  %8llu  %8llu  %5llu  %5llu  %7llu  %7llu  %8llu", s,
        (unsigned long long)ss.enqueues, (unsigned long long)ss.launches,
        (unsigned long long)ss.skips, (unsigned long long)ss.waits,
        (unsigned long long)ss.flushes, (unsigned long long)ss.markers,
        (unsigned long long)ss.failures);
    if (ndevices)
      say("  %6d  %10llu  %11llu  %7llu", d, (unsigned long long)ss.migrations,
          (unsigned long long)ss.relocations, (unsigned long long)ss.replays);
    say("\n");
  }
  say("\n");

  int failed = 0, wrong = 0;
  for (int i = 0; i < 3; i++) {
    const struct stage *st = stages[i];
    if (st->verdict == OK)
      printf("%s: OK\n", st->name);
    else
      printf("%s: %s (%s)\n", st->name, st->verdict == FAILED ? "FAILED" : "WRONG", st->why);
    failed += st->verdict == FAILED;
    wrong += st->verdict == WRONG;
  }

  if (failed) {
    printf("pipeline: %d of 3 stages failed (root cause%s: ", failed,
           ncauses > 1 ? "s" : "");
    for (size_t c = 0; c < ncauses; c++) {
      char buf[160];
      describe_cause(&causes[c], buf, sizeof buf);
      printf("%s%s", c ? "; " : "", buf);
    }
    printf("%s)\n", ncauses ? "" : "none named");
  }
  if (wrong)
    printf("pipeline: %d of 3 stages gave wrong results\n", wrong);
  if (!failed && !wrong)
    printf("pipeline: all 3 stages verified\n");
  status = failed || wrong ? 1 : 0;

done:
  cls_context_destroy(ctx); /* waits, then frees buffers, program, kernels */
  free(image);
  free(ref_blur);
  free(ref_edges);
  free(out_blur);
  free(out_edges);
  return status;
}
