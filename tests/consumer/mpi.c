/* An outside MPI program using an installed clstream and clstream-mpi:
 * built by make check-install with plain cc and pkg-config clstream-mpi
 * (MPI's flags come from the .pc, not from mpicc) and with CMake
 * (clstream::clstream-mpi), and run on one rank.  The rank sends 256 ints
 * of one buffer to itself into another and checks every one.  Exit 0 on
 * success, 1 on any failure. */
#include <clstream/mpi.h>

#include <stdio.h>

#define N 256

static int fail(const char *what, int rc) {
  fprintf(stderr, "mpi-consumer: %s: %s (%s) %s\n", what, cls_err_name(rc), cls_strerror(rc),
          cls_last_error_detail());
  return 1;
}

static int run(void) {
  static int in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = 3 * i + 1;
  cls_context *ctx = NULL;
  cls_mpi *m = NULL;
  cls_mpi_request *req = NULL;
  cls_buffer a, b;
  int rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK)
    return fail("cls_context_create", rc);
  if ((rc = cls_mpi_create(ctx, MPI_COMM_WORLD, &m)) != CLS_OK)
    return fail("cls_mpi_create", rc);
  if ((rc = cls_alloc(ctx, 0, sizeof in, &a)) != CLS_OK ||
      (rc = cls_alloc(ctx, 0, sizeof out, &b)) != CLS_OK)
    return fail("cls_alloc", rc);
  if ((rc = cls_upload(ctx, 0, a, 0, in, sizeof in)) != CLS_OK)
    return fail("cls_upload", rc);
  int self = cls_mpi_rank(m);
  if ((rc = cls_mpi_irecv(m, 0, b, 0, sizeof out, self, 7, &req)) != CLS_OK)
    return fail("cls_mpi_irecv", rc);
  if ((rc = cls_mpi_send(m, 0, a, 0, sizeof in, self, 7)) != CLS_OK)
    return fail("cls_mpi_send", rc);
  if ((rc = cls_mpi_wait(m, req)) != CLS_OK)
    return fail("cls_mpi_wait", rc);
  if ((rc = cls_download(ctx, 0, b, 0, out, sizeof out, NULL)) != CLS_OK)
    return fail("cls_download", rc);
  for (int i = 0; i < N; i++)
    if (out[i] != in[i]) {
      fprintf(stderr, "mpi-consumer: element %d is %d, not %d\n", i, out[i], in[i]);
      return 1;
    }
  cls_free(ctx, a);
  cls_free(ctx, b);
  cls_mpi_destroy(m);
  cls_context_destroy(ctx);
  printf("mpi-consumer: rank %d sent %d ints to itself intact\n", self, N);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rc = run();
  MPI_Finalize();
  return rc;
}
