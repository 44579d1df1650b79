/* clstream-bench's image workload: a 3x3 blur on image2d_t objects
 * (CL_R of CL_FLOAT), IMAGE_REPS launches ping-ponging between two images
 * on one stream, then a sync; raw OpenCL with two kernel objects whose
 * arguments are set once, against clstream binding the images as any
 * launch does.  Skipped (with a line saying so) on a device without
 * images. */
#include "common.h"

#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

/* PoCL reads an image through a sampler at about 150 ns a pixel on this
 * machine's CPU: 50 launches over 512 x 512 take about 2 s a run. */
int IMAGE_REPS = 50;
size_t IMAGE_SIDE = 512;

static const char *IMAGE_SRC =
    "__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE |\n"
    "                            CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;\n"
    "kernel void blur_img(__read_only image2d_t src, __write_only image2d_t dst) {\n"
    "  int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  float s = 0.0f;\n"
    "  for (int dy = -1; dy <= 1; dy++)\n"
    "    for (int dx = -1; dx <= 1; dx++)\n"
    "      s += read_imagef(src, edge, p + (int2)(dx, dy)).x * (float)((2 - dx * dx) * (2 - dy * dy));\n"
    "  write_imagef(dst, p, (float4)(s * 0.0625f, 0.0f, 0.0f, 1.0f));\n"
    "}\n";

bool image_ok(struct raw *r) {
  cl_bool img = CL_FALSE;
  clGetDeviceInfo(r->d, CL_DEVICE_IMAGE_SUPPORT, sizeof img, &img, NULL);
  if (!img)
    printf("# image-blur: the device has no image support: not run\n");
  return img;
}

void raw_image_setup(struct raw *r) {
  cl_int rc;
  cl_program p = clCreateProgramWithSource(r->c, 1, &IMAGE_SRC, NULL, &rc);
  CL(rc);
  CL(clBuildProgram(p, 1, &r->d, "", NULL, NULL));
  r->blur_ab = clCreateKernel(p, "blur_img", &rc);
  CL(rc);
  r->blur_ba = clCreateKernel(p, "blur_img", &rc);
  CL(rc);
  CL(clReleaseProgram(p)); /* the kernels keep it */
  cl_image_format f = {CL_R, CL_FLOAT};
  cl_image_desc d = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = IMAGE_SIDE,
                     .image_height = IMAGE_SIDE};
  r->ia = clCreateImage(r->c, CL_MEM_READ_WRITE, &f, &d, NULL, &rc);
  CL(rc);
  r->ib = clCreateImage(r->c, CL_MEM_READ_WRITE, &f, &d, NULL, &rc);
  CL(rc);
  float one[4] = {1.0f, 0.0f, 0.0f, 1.0f};
  size_t o[3] = {0, 0, 0}, reg[3] = {IMAGE_SIDE, IMAGE_SIDE, 1};
  CL(clEnqueueFillImage(r->q[0], r->ia, one, o, reg, 0, NULL, NULL));
  CL(clEnqueueFillImage(r->q[0], r->ib, one, o, reg, 0, NULL, NULL));
  CL(clFinish(r->q[0]));
  CL(clSetKernelArg(r->blur_ab, 0, sizeof(cl_mem), &r->ia));
  CL(clSetKernelArg(r->blur_ab, 1, sizeof(cl_mem), &r->ib));
  CL(clSetKernelArg(r->blur_ba, 0, sizeof(cl_mem), &r->ib));
  CL(clSetKernelArg(r->blur_ba, 1, sizeof(cl_mem), &r->ia));
}

void lib_image_setup(struct lib *l) {
  cls_program *p;
  CLS(cls_program_build(l->ctx, IMAGE_SRC, NULL, &p));
  CLS(cls_kernel_get(l->ctx, p, "blur_img", &l->blur_img));
  const struct cls_image_desc d = {.type = CLS_IMAGE_2D, .order = CL_R, .data_type = CL_FLOAT,
                                   .width = IMAGE_SIDE, .height = IMAGE_SIDE};
  CLS(cls_image_alloc(l->ctx, 0, &d, &l->ia));
  CLS(cls_image_alloc(l->ctx, 0, &d, &l->ib));
  const float one[4] = {1.0f, 0.0f, 0.0f, 1.0f};
  CLS(cls_image_fill(l->ctx, 0, l->ia, one, NULL, NULL));
  CLS(cls_image_fill(l->ctx, 0, l->ib, one, NULL, NULL));
  CLS(cls_sync(l->ctx, NULL));
}

double raw_image_blur(struct raw *r) {
  size_t g[2] = {IMAGE_SIDE, IMAGE_SIDE};
  double t = bench_now();
  for (int i = 0; i < IMAGE_REPS; i++)
    CL(clEnqueueNDRangeKernel(r->q[0], i & 1 ? r->blur_ba : r->blur_ab, 2, NULL, g, NULL, 0,
                              NULL, NULL));
  CL(clFinish(r->q[0]));
  return bench_now() - t;
}

double lib_image_blur(struct lib *l) {
  size_t g[2] = {IMAGE_SIDE, IMAGE_SIDE};
  cls_arg ab[] = {CLS_IN(l->ia), CLS_OUT(l->ib)}, ba[] = {CLS_IN(l->ib), CLS_OUT(l->ia)};
  double t = bench_now();
  for (int i = 0; i < IMAGE_REPS; i++)
    CLS(cls_launch(l->ctx, 0, l->blur_img, 2, g, NULL, 2, i & 1 ? ba : ab));
  CLS(cls_stream_sync(l->ctx, 0, NULL));
  return bench_now() - t;
}
