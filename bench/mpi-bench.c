/* make bench-mpi: one halo exchange per iteration through clstream-mpi,
 * against the same written in raw MPI + OpenCL, measured side by side in
 * one run (docs/scale-out.md).
 *
 *   mpirun -np 4 ./bench/mpi-bench [ITERATIONS [ROW_BYTES [ROUNDS]]]
 *
 * Each rank holds a band of rows on the device and two ghost rows.  One
 * iteration: read the two edge rows from the device into pinned staging
 * memory, send them to the neighbours (ring), receive theirs, write them
 * into the ghost rows.  Raw: clEnqueueReadBuffer into mapped
 * CL_MEM_ALLOC_HOST_PTR memory, MPI_Isend/MPI_Irecv, MPI_Waitall,
 * clEnqueueWriteBuffer.  clstream: cls_mpi_irecv, cls_mpi_isend,
 * cls_mpi_waitall, with the buffers' failure records checked and carried.
 * The two alternate in ROUNDS blocks of ITERATIONS; a block's time is the
 * slowest rank's; the median block of each is compared. */
#include <clstream.h>
#include <clstream/cl.h>
#include <clstream/mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank_, size_;

static void die(const char *what, int rc) {
  fprintf(stderr, "rank %d: %s failed: %d %s\n", rank_, what, rc, cls_last_error_detail());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The raw side: its own OpenCL context on the same device. */
struct raw {
  cl_context ctx;
  cl_command_queue q;
  cl_mem band, top, bot, pin[4];
  void *stage[4]; /* 0, 1: rows out; 2, 3: rows in */
};

static void raw_setup(struct raw *r, size_t band, size_t row) {
  cl_platform_id plat;
  cl_device_id dev;
  cl_int rc = clGetPlatformIDs(1, &plat, NULL);
  if (rc == CL_SUCCESS)
    rc = clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
  if (rc != CL_SUCCESS)
    die("raw OpenCL device", rc);
  r->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
  if (!r->ctx)
    die("clCreateContext", rc);
  r->q = clCreateCommandQueue(r->ctx, dev, 0, &rc);
  if (!r->q)
    die("clCreateCommandQueue", rc);
  r->band = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, band, NULL, &rc);
  r->top = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, row, NULL, &rc);
  r->bot = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, row, NULL, &rc);
  if (!r->band || !r->top || !r->bot)
    die("clCreateBuffer", rc);
  char *init = calloc(1, band);
  if (!init || clEnqueueWriteBuffer(r->q, r->band, CL_TRUE, 0, band, init, 0, NULL, NULL))
    die("raw initial values", -1);
  free(init);
  for (int i = 0; i < 4; i++) {
    r->pin[i] = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, row, NULL, &rc);
    if (!r->pin[i])
      die("pinned staging", rc);
    r->stage[i] = clEnqueueMapBuffer(r->q, r->pin[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     row, 0, NULL, NULL, &rc);
    if (!r->stage[i])
      die("clEnqueueMapBuffer", rc);
  }
}

static void raw_teardown(struct raw *r) {
  for (int i = 0; i < 4; i++) {
    clEnqueueUnmapMemObject(r->q, r->pin[i], r->stage[i], 0, NULL, NULL);
    clFinish(r->q);
    clReleaseMemObject(r->pin[i]);
  }
  clReleaseMemObject(r->bot);
  clReleaseMemObject(r->top);
  clReleaseMemObject(r->band);
  clReleaseCommandQueue(r->q);
  clReleaseContext(r->ctx);
}

static void raw_exchange(struct raw *r, size_t band, size_t row, int prev, int next) {
  MPI_Request rq[4];
  MPI_Irecv(r->stage[2], (int)row, MPI_BYTE, prev, 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(r->stage[3], (int)row, MPI_BYTE, next, 2, MPI_COMM_WORLD, &rq[1]);
  if (clEnqueueReadBuffer(r->q, r->band, CL_TRUE, band - row, row, r->stage[0], 0, NULL, NULL) ||
      clEnqueueReadBuffer(r->q, r->band, CL_TRUE, 0, row, r->stage[1], 0, NULL, NULL))
    die("clEnqueueReadBuffer", -1);
  MPI_Isend(r->stage[0], (int)row, MPI_BYTE, next, 1, MPI_COMM_WORLD, &rq[2]);
  MPI_Isend(r->stage[1], (int)row, MPI_BYTE, prev, 2, MPI_COMM_WORLD, &rq[3]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
  if (clEnqueueWriteBuffer(r->q, r->top, CL_TRUE, 0, row, r->stage[2], 0, NULL, NULL) ||
      clEnqueueWriteBuffer(r->q, r->bot, CL_TRUE, 0, row, r->stage[3], 0, NULL, NULL))
    die("clEnqueueWriteBuffer", -1);
}

struct cls {
  cls_context *ctx;
  cls_mpi *m;
  cls_buffer band, top, bot;
};

static void cls_exchange(struct cls *c, size_t band, size_t row, int prev, int next) {
  cls_mpi_request *rq[4];
  int rc;
  if ((rc = cls_mpi_irecv(c->m, 1, c->top, 0, row, prev, 1, &rq[0])) < 0 ||
      (rc = cls_mpi_irecv(c->m, 1, c->bot, 0, row, next, 2, &rq[1])) < 0 ||
      (rc = cls_mpi_isend(c->m, 1, c->band, band - row, row, next, 1, &rq[2])) < 0 ||
      (rc = cls_mpi_isend(c->m, 1, c->band, 0, row, prev, 2, &rq[3])) < 0 ||
      (rc = cls_mpi_waitall(c->m, 4, rq)) < 0)
    die("clstream exchange", rc);
}

/* One block of `n` iterations; the slowest rank's time per iteration. */
static double block(int raw_side, struct raw *r, struct cls *c, int n, size_t band, size_t row,
                    int prev, int next) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    if (raw_side)
      raw_exchange(r, band, row, prev, next);
    else
      cls_exchange(c, band, row, prev, next);
  }
  double t = (MPI_Wtime() - t0) / n, worst;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int iterations = argc > 1 ? atoi(argv[1]) : 200;
  size_t row = argc > 2 ? (size_t)atol(argv[2]) : 16384;
  int rounds = argc > 3 ? atoi(argv[3]) : 9;
  if (iterations < 1 || row < 4 || rounds < 1 || rounds > 99) {
    if (rank_ == 0)
      fprintf(stderr, "usage: mpi-bench [ITERATIONS [ROW_BYTES [ROUNDS<100]]]\n");
    MPI_Finalize();
    return 2;
  }
  size_t band = 64 * row;
  int prev = (rank_ + size_ - 1) % size_, next = (rank_ + 1) % size_;
  struct raw r;
  struct cls c;
  raw_setup(&r, band, row);
  int rc;
  if ((rc = cls_context_create(&c.ctx, NULL)) < 0 || (rc = cls_mpi_create(c.ctx, MPI_COMM_WORLD, &c.m)) < 0 ||
      (rc = cls_alloc(c.ctx, 0, band, &c.band)) < 0 ||
      (rc = cls_alloc(c.ctx, 1, row, &c.top)) < 0 || (rc = cls_alloc(c.ctx, 1, row, &c.bot)) < 0)
    die("clstream setup", rc);
  unsigned char zero = 0;
  if ((rc = cls_fill(c.ctx, 0, c.band, 0, band, &zero, 1)) < 0)
    die("cls_fill", rc);
  /* warm up both (staging, requests, MPI's connections) */
  block(1, &r, &c, 20, band, row, prev, next);
  block(0, &r, &c, 20, band, row, prev, next);
  double traw[100], tcls[100];
  for (int k = 0; k < rounds; k++) {
    /* alternate which goes first, so drift hits both alike */
    int first = k & 1;
    double a = block(first, &r, &c, iterations, band, row, prev, next);
    double b = block(!first, &r, &c, iterations, band, row, prev, next);
    traw[k] = first ? a : b;
    tcls[k] = first ? b : a;
  }
  qsort(traw, (size_t)rounds, sizeof *traw, cmp);
  qsort(tcls, (size_t)rounds, sizeof *tcls, cmp);
  if (rank_ == 0) {
    double mr = traw[rounds / 2], mc = tcls[rounds / 2];
    printf("halo exchange per iteration, %d ranks, 2 rows of %zu bytes out and in per rank, "
           "median of %d blocks of %d:\n", size_, row, rounds, iterations);
    printf("  raw MPI + OpenCL   %8.2f us  (blocks %.2f .. %.2f)\n", mr * 1e6, traw[0] * 1e6,
           traw[rounds - 1] * 1e6);
    printf("  clstream-mpi       %8.2f us  (blocks %.2f .. %.2f)\n", mc * 1e6, tcls[0] * 1e6,
           tcls[rounds - 1] * 1e6);
    printf("  ratio clstream / raw: %.3f\n", mc / mr);
  }
  cls_mpi_destroy(c.m);
  cls_context_destroy(c.ctx);
  raw_teardown(&r);
  MPI_Finalize();
  return 0;
}
