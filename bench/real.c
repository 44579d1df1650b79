/* clstream-bench's workload real: the corpus of real-idiom programs
 * (tests/real/) on both sides, inputs made once, each program's results
 * compared before it is timed. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

bool real_quick;                    /* --quick: the corpus's small inputs */
static void *real_host[REAL_COUNT]; /* each program's inputs, made once */
static unsigned char *real_out[2];  /* raw's and clstream's results */
static size_t real_out_max;
int real_only = -1; /* the program timed; -1: all of them */

void real_raw_setup(struct raw *r) {
  r->real = (struct real_raw){.ctx = r->c, .dev = r->d, .q = {r->q[0], r->q[1]}};
  for (int i = 0; i < REAL_COUNT; i++) {
    const struct real_program *p = real_corpus[i];
    if (!(real_host[i] = p->prepare(real_quick)))
      die("%s: out of memory", p->name);
    if (p->out_size(real_host[i]) > real_out_max)
      real_out_max = p->out_size(real_host[i]);
    if (real_raw_build(&r->real, p, &r->real_prog[i], r->real_k[i]) != 0)
      die("%s", real_error);
  }
  if (!(real_out[0] = malloc(real_out_max)) || !(real_out[1] = malloc(real_out_max)))
    die("out of memory");
}

void real_lib_setup(struct lib *l) {
  for (int i = 0; i < REAL_COUNT; i++)
    if (real_cls_build(l->ctx, real_corpus[i], l->real_k[i]) != 0)
      die("%s", real_error);
}

double raw_real(struct raw *r) {
  double t = bench_now();
  for (int i = 0; i < REAL_COUNT; i++)
    if ((real_only < 0 || real_only == i) &&
        real_corpus[i]->raw(&r->real, r->real_k[i], real_host[i], real_out[0]) != 0)
      die("%s", real_error);
  return bench_now() - t;
}

double lib_real(struct lib *l) {
  double t = bench_now();
  for (int i = 0; i < REAL_COUNT; i++)
    if ((real_only < 0 || real_only == i) &&
        real_corpus[i]->cls(l->ctx, l->real_k[i], real_host[i], real_out[1]) != 0)
      die("%s", real_error);
  return bench_now() - t;
}

/* Both sides once, each program's results compared: a port that differs
 * is not timed. */
void real_verify(struct raw *r, struct lib *l) {
  for (int i = 0; i < REAL_COUNT; i++) {
    const struct real_program *p = real_corpus[i];
    size_t n = p->out_size(real_host[i]);
    if (p->raw(&r->real, r->real_k[i], real_host[i], real_out[0]) != 0 ||
        p->cls(l->ctx, l->real_k[i], real_host[i], real_out[1]) != 0)
      die("%s", real_error);
    if (memcmp(real_out[0], real_out[1], n) != 0)
      die("real: %s: clstream's result differs from raw OpenCL's", p->name);
  }
}
