/* halo: a 2-D heat stencil over N MPI ranks with clstream-mpi.
 *
 *   mpirun -np 4 ./examples/halo [ITERATIONS [NX [ROWS]]]
 *
 * The grid (NX columns, ROWS rows per rank, default 256 and 64) is cut into
 * bands of rows, one per rank.  Each iteration exchanges the band's edge
 * rows with the neighbours (the halo, on stream 1) and updates the band
 * (the stencil, on stream 0): clstream orders the two streams from the
 * buffers, no sync in the loop.  At the end every rank sends its band to
 * rank 0, which checks each against the same computation on the host.
 *
 * A failure travels with the data.  With
 *
 *   CLS_FAULT=enqueue:kernel=stencil,nth=5,rank=3 mpirun -np 4 ./examples/halo
 *
 * rank 3's fifth stencil fails; its halo rows carry the failure to rank 2
 * in the next iteration, and so on, one rank per iteration: every rank
 * that came to depend on it reports that root ("on rank 3: CLS_ELAUNCH in
 * launch of 'stencil' ..."), bands that do not depend on it still verify,
 * and the program exits non-zero.  One report line per rank. */
#include <clstream.h>
#include <clstream/mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const source =
    "kernel void stencil(global const float *u, global const float *top,\n"
    "                    global const float *bot, global float *v, int nx, int rows,\n"
    "                    float alpha) {\n"
    "  int x = (int)get_global_id(0), y = (int)get_global_id(1);\n"
    "  float c = u[y * nx + x];\n"
    "  float up = y > 0 ? u[(y - 1) * nx + x] : top[x];\n"
    "  float down = y < rows - 1 ? u[(y + 1) * nx + x] : bot[x];\n"
    "  float left = x > 0 ? u[y * nx + x - 1] : 0.0f;\n"
    "  float right = x < nx - 1 ? u[y * nx + x + 1] : 0.0f;\n"
    "  v[y * nx + x] = c + alpha * (up + down + left + right - 4.0f * c);\n"
    "}\n";

#define ALPHA 0.2f
#define HOT 1.0f /* the top edge of the whole grid */

/* The initial temperature at global row gy, column x. */
static float initial(int gy, int x, int nx, int ny) {
  float fx = (float)x / (float)nx, fy = (float)gy / (float)ny;
  return 0.5f * fx * (1.0f - fx) + 0.25f * fy;
}

/* The same stencil on the host, over the whole grid, in the same float
 * operations. */
static void host_reference(float *g, int nx, int ny, int iterations) {
  float *h = malloc((size_t)nx * (size_t)ny * sizeof *h);
  if (!h)
    exit(2);
  for (int t = 0; t < iterations; t++) {
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++) {
        float c = g[y * nx + x];
        float up = y > 0 ? g[(y - 1) * nx + x] : HOT;
        float down = y < ny - 1 ? g[(y + 1) * nx + x] : 0.0f;
        float left = x > 0 ? g[y * nx + x - 1] : 0.0f;
        float right = x < nx - 1 ? g[y * nx + x + 1] : 0.0f;
        h[y * nx + x] = c + ALPHA * (up + down + left + right - 4.0f * c);
      }
    memcpy(g, h, (size_t)nx * (size_t)ny * sizeof *g);
  }
  free(h);
}

/* "on rank 3: CLS_ELAUNCH in launch of 'stencil' on stream 0 at position
 * 5" for a report's first failure. */
static void describe(cls_report *r, char *out, size_t cap) {
  struct cls_failure_info fi;
  int rank = -1;
  if (cls_report_failure(r, 0, &fi) != CLS_OK) {
    snprintf(out, cap, "(no failure in the report)");
    return;
  }
  int n = cls_report_failure_rank(r, 0, &rank) == 1 ? snprintf(out, cap, "on rank %d: ", rank)
                                                    : snprintf(out, cap, "here: ");
  snprintf(out + n, cap - (size_t)n, "%s in %s%s%s%s on stream %d at position %llu: %s",
           cls_err_name(fi.status), fi.operation, fi.kernel[0] ? " of '" : "", fi.kernel,
           fi.kernel[0] ? "'" : "", fi.stream, (unsigned long long)fi.position, fi.message);
}

static int fail(int rank, const char *what, int rc) {
  fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, cls_err_name(rc), cls_last_error_detail());
  return 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iterations = argc > 1 ? atoi(argv[1]) : 6;
  int nx = argc > 2 ? atoi(argv[2]) : 256;
  int rows = argc > 3 ? atoi(argv[3]) : 64;
  if (iterations < 0 || nx < 2 || rows < 2) {
    if (rank == 0)
      fprintf(stderr, "usage: halo [ITERATIONS [NX>=2 [ROWS>=2]]]\n");
    MPI_Finalize();
    return 2;
  }
  int ny = rows * size, status = 0, rc;
  size_t band = (size_t)nx * (size_t)rows * sizeof(float), row = (size_t)nx * sizeof(float);
  cls_context *ctx = NULL;
  cls_mpi *m = NULL;
  cls_program *prog = NULL;
  cls_kernel *stencil;
  cls_buffer u, v, top, bot;
  float *host = malloc(band), *grid = NULL;
  if (!host)
    return 2;
  if ((rc = cls_context_create(&ctx, NULL)) < 0) {
    status = fail(rank, "context", rc);
    goto out;
  }
  if ((rc = cls_mpi_create(ctx, MPI_COMM_WORLD, &m)) < 0 ||
      (rc = cls_program_build(ctx, source, NULL, &prog)) < 0 ||
      (rc = cls_kernel_get(ctx, prog, "stencil", &stencil)) < 0 ||
      (rc = cls_alloc(ctx, 0, band, &u)) < 0 || (rc = cls_alloc(ctx, 0, band, &v)) < 0 ||
      (rc = cls_alloc(ctx, 1, row, &top)) < 0 || (rc = cls_alloc(ctx, 1, row, &bot)) < 0) {
    status = fail(rank, "setup", rc);
    goto out;
  }
  /* The band's initial values; the grid's own edges are fixed. */
  for (int y = 0; y < rows; y++)
    for (int x = 0; x < nx; x++)
      host[y * nx + x] = initial(rank * rows + y, x, nx, ny);
  float edge[2] = {HOT, 0.0f};
  if ((rc = cls_upload(ctx, 0, u, 0, host, band)) < 0 ||
      (rank == 0 && (rc = cls_fill(ctx, 1, top, 0, row, &edge[0], sizeof(float))) < 0) ||
      (rank == size - 1 && (rc = cls_fill(ctx, 1, bot, 0, row, &edge[1], sizeof(float))) < 0)) {
    status = fail(rank, "initial values", rc);
    goto out;
  }

  for (int t = 0; t < iterations; t++) {
    /* The halo, on stream 1: edge rows out, the neighbours' into top and
     * bot.  A send waits for the stencil that wrote u (stream 0); the
     * stencil below waits for the receives.  A failure that arrives is
     * not an error here: the data carries it on. */
    cls_mpi_request *rq[4] = {NULL, NULL, NULL, NULL};
    if (rank > 0) {
      cls_mpi_irecv(m, 1, top, 0, row, rank - 1, 1, &rq[0]);
      cls_mpi_isend(m, 1, u, 0, row, rank - 1, 2, &rq[1]);
    }
    if (rank < size - 1) {
      cls_mpi_irecv(m, 1, bot, 0, row, rank + 1, 2, &rq[2]);
      cls_mpi_isend(m, 1, u, band - row, row, rank + 1, 1, &rq[3]);
    }
    if ((rc = cls_mpi_waitall(m, 4, rq)) == CLS_EMPI) {
      status = fail(rank, "halo exchange", rc);
      goto out;
    }
    /* The update, on stream 0. */
    size_t global[2] = {(size_t)nx, (size_t)rows};
    float alpha = ALPHA;
    cls_arg args[] = {CLS_IN(u),        CLS_IN(top),        CLS_IN(bot),       CLS_OUT(v),
                      CLS_SCALAR(nx), CLS_SCALAR(rows), CLS_SCALAR(alpha)};
    cls_launch(ctx, 0, stencil, 2, global, NULL, 7, args);
    cls_buffer w = u;
    u = v;
    v = w;
  }

  /* Each rank's own report: its band, read. */
  cls_report *r = NULL;
  char why[512];
  rc = cls_download(ctx, 0, u, 0, host, band, &r);
  if (rc == CLS_ETAINTED) {
    describe(r, why, sizeof why);
    printf("rank %d: FAILED: band rows %d..%d carries a failure: %s\n", rank, rank * rows,
           rank * rows + rows - 1, why);
    status = 1;
  } else if (rc < 0) {
    status = fail(rank, "download", rc);
  } else {
    printf("rank %d: band rows %d..%d computed\n", rank, rank * rows, rank * rows + rows - 1);
  }
  cls_report_free(r);
  fflush(stdout);

  /* Rank 0 checks every band against the host: the bands travel as data,
   * a tainted one as its failure. */
  if (rank != 0) {
    cls_mpi_send(m, 0, u, 0, band, 0, 3);
  } else {
    grid = malloc(band * (size_t)size);
    if (!grid) {
      status = 2;
      goto out;
    }
    for (int y = 0; y < ny; y++)
      for (int x = 0; x < nx; x++)
        grid[y * nx + x] = initial(y, x, nx, ny);
    host_reference(grid, nx, ny, iterations);
    int verified = 0;
    for (int src = 0; src < size; src++) {
      r = NULL;
      rc = src == 0 ? CLS_OK : cls_mpi_recv(m, 0, v, 0, band, src, 3);
      if (rc == CLS_OK || rc == CLS_ETAINTED)
        rc = cls_download(ctx, 0, src == 0 ? u : v, 0, host, band, &r);
      if (rc == CLS_ETAINTED) {
        describe(r, why, sizeof why);
        printf("rank 0: band of rank %d not verified: it carries a failure: %s\n", src, why);
        status = 1;
      } else if (rc < 0) {
        status = fail(rank, "receive", rc);
      } else {
        double worst = 0;
        const float *want = grid + (size_t)src * (size_t)rows * (size_t)nx;
        for (size_t i = 0; i < (size_t)rows * (size_t)nx; i++)
          worst = fmax(worst, fabs((double)host[i] - (double)want[i]));
        if (worst <= 1e-5) {
          printf("rank 0: band of rank %d verified against the host (max error %.2g)\n", src,
                 worst);
          verified++;
        } else {
          printf("rank 0: band of rank %d WRONG: max error %g\n", src, worst);
          status = 1;
        }
      }
      cls_report_free(r);
    }
    printf("rank 0: %d of %d bands verified after %d iterations (%d x %d grid)\n", verified,
           size, iterations, nx, ny);
  }

out:
  free(grid);
  free(host);
  cls_mpi_destroy(m);
  if (prog)
    cls_program_release(ctx, prog);
  cls_context_destroy(ctx);
  MPI_Finalize();
  return status;
}
