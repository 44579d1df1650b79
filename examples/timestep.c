/* timestep: a launch-bound loop, captured once and replayed.
 *
 * A 1-D heat equation in integers (exact on every device), two buffers in
 * ping-pong: each time step is one launch, and one iteration of the loop
 * is two steps (u -> v, then v -> u) plus a heat source whose strength
 * changes with the iteration.  The loop body is recorded once between
 * cls_capture_begin() and cls_capture_end(), the changing scalar marked
 * with cls_capture_param(), and each iteration is then one cls_replay().
 * The result is checked against the same loop on the host.
 *
 * The failure rules hold inside a replay: run with
 *   CLS_FAULT=enqueue:kernel=heat_step,nth=7 ./examples/timestep
 * and the 7th launch fails; every later replay reads its output and is
 * skipped as a whole, and the final read reports the root cause with one
 * skip entry per skipped replay ("replay of capture #1 (2 commands)").
 * The two launches of an iteration, consecutive on one stream, are one
 * run of the prepared plan (docs/capture.md), so the root cause names the
 * run ("capture #1 commands 0-1 (heat_step...)") rather than the launch
 * (CLS_PRECISE=1 or CLS_CAPTURE=commands name the launch).
 *
 * Usage: timestep [--steps N] (iterations, default 100). */
#include <clstream.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static const char *source =
    "__kernel void heat_step(__global const int *in, __global int *out, int heat, int n) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  int l = i > 0 ? in[i - 1] : in[i], r = i < n - 1 ? in[i + 1] : in[i];\n"
    "  out[i] = in[i] + (l + r - 2 * in[i]) / 4 + (i == n / 2 ? heat : 0);\n"
    "}\n";

/* The same step on the host. */
static void host_step(const int *in, int *out, int heat) {
  for (int i = 0; i < N; i++) {
    int l = i > 0 ? in[i - 1] : in[i], r = i < N - 1 ? in[i + 1] : in[i];
    out[i] = in[i] + (l + r - 2 * in[i]) / 4 + (i == N / 2 ? heat : 0);
  }
}

/* The heat source of iteration `it`: changes every iteration. */
static int heat_of(int it) { return 1000 + 37 * (it % 11); }

#define CHECK(call)                                                              \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != CLS_OK) {                                                         \
      fprintf(stderr, "timestep: %s failed: %s: %s\n%s\n", #call, cls_err_name(rc_), \
              cls_strerror(rc_), cls_last_error_detail());                       \
      goto done;                                                                 \
    }                                                                            \
  } while (0)

int main(int argc, char **argv) {
  int steps = 100;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: timestep [--steps N]\n");
      return 2;
    }
  }
  if (steps < 1 || steps > 1000000) {
    fprintf(stderr, "timestep: --steps takes 1 .. 1000000\n");
    return 2;
  }
  static int host_u[N], host_v[N], got[N];
  int status = 1;
  cls_context *ctx = NULL;
  cls_program *prog = NULL;
  cls_kernel *step = NULL;
  cls_capture *loop = NULL;
  cls_report *report = NULL;
  cls_buffer u = CLS_BUFFER_NULL, v = CLS_BUFFER_NULL;

  CHECK(cls_context_create(&ctx, NULL));
  CHECK(cls_program_build(ctx, source, NULL, &prog));
  CHECK(cls_kernel_get(ctx, prog, "heat_step", &step));
  CHECK(cls_alloc(ctx, 0, sizeof host_u, &u));
  CHECK(cls_alloc(ctx, 0, sizeof host_v, &v));
  CHECK(cls_upload(ctx, 0, u, 0, host_u, sizeof host_u)); /* all zeros */

  /* The loop body, recorded once.  `heat` is passed by address: the
   * launches inside the capture that pass this same variable take the
   * replay's value instead of the one it has now. */
  int heat = 0, n = N, index;
  size_t global = N;
  CHECK(cls_capture_begin(ctx));
  CHECK(cls_capture_param(ctx, &heat, sizeof heat, &index));
  CHECK(cls_launch(ctx, 0, step, 1, &global, NULL, 4,
                   (cls_arg[]){CLS_IN(u), CLS_OUT(v), CLS_TYPED(heat), CLS_TYPED(n)}));
  CHECK(cls_launch(ctx, 0, step, 1, &global, NULL, 4,
                   (cls_arg[]){CLS_IN(v), CLS_OUT(u), CLS_TYPED(heat), CLS_TYPED(n)}));
  CHECK(cls_capture_end(ctx, &loop));

  /* The loop: one call per iteration.  A replay that was skipped (its
   * input carries a failure) returns CLS_ESKIPPED and costs nothing; the
   * read at the end says why. */
  int skipped = 0;
  for (int it = 0; it < steps; it++) {
    int h = heat_of(it);
    cls_param p = {&h, sizeof h};
    int rc = cls_replay(ctx, loop, 1, &p);
    if (rc == CLS_ESKIPPED || rc == CLS_ELAUNCH)
      skipped++;
    else
      CHECK(rc);
  }
  int rc = cls_download(ctx, 0, u, 0, got, sizeof got, &report);
  if (rc == CLS_ETAINTED) {
    fprintf(stderr, "timestep: the result is tainted (%d of %d iterations did not run):\n%s\n",
            skipped, steps, cls_report_text(report));
    goto done;
  }
  CHECK(rc);

  for (int it = 0; it < steps; it++) {
    host_step(host_u, host_v, heat_of(it));
    host_step(host_v, host_u, heat_of(it));
  }
  for (int i = 0; i < N; i++)
    if (got[i] != host_u[i]) {
      fprintf(stderr, "timestep: u[%d] = %d, expected %d\n", i, got[i], host_u[i]);
      goto done;
    }
  struct cls_capture_stats st;
  CHECK(cls_capture_info(loop, &st));
  printf("timestep: %d iterations (%d launches) replayed from one capture (%s), verified\n",
         steps, 2 * steps, st.backend);
  status = 0;
done:
  cls_report_free(report);
  cls_capture_destroy(loop);
  cls_context_destroy(ctx);
  return status;
}
