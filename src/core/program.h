/* Internal: programs (program.c): the build cache, in memory and on disk;
 * a failed build remembered for the kernels taken from it.  Kernels are
 * core/kernel.h's. */
#ifndef CLS_PROGRAM_H
#define CLS_PROGRAM_H

#include "util/util.h"

struct cls__failure;

struct cls_program {
  cl_program program;
  uint64_t hash;           /* of source and options */
  char *options;
  size_t srclen;
  char *source;
  int refs;                /* user references; freed with the context */
  cls_context *ctx;
  struct cls_kernel *kernels;
  struct cls_program *next;
  /* A failed build: kernels taken from it launch as failed with this root
   * cause (the build log in its report); NULL when the build succeeded. */
  struct cls__failure *build_failure;
  char *build_detail;      /* the error detail of the build, replayed on a
                              cache hit */
};

void cls__programs_fini(cls_context *ctx);
/* Whether prog is one of ctx's programs (a foreign or freed one is not);
 * under the context's lock. */
bool cls__program_of(cls_context *ctx, const struct cls_program *prog);
/* A NUL-terminated copy of s[0..n), NULL when out of memory. */
char *cls__dupstr(const char *s, size_t n);

#endif /* CLS_PROGRAM_H */
