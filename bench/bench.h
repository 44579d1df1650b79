/* Shared by the benchmarks: time, medians, allocation counting. */
#ifndef CLS_BENCH_H
#define CLS_BENCH_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v in place. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of v[0..n) and a 95 % confidence interval for it that assumes
 * nothing of the distribution: order statistics k and n+1-k, with k the
 * largest rank such that Binomial(n, 1/2) <= k-1 has probability <= 2.5 %.
 * Below 6 samples no such k exists and the interval is the whole range.
 * Sorts v in place. */
static inline double bench_median_ci(double *v, int n, double *lo, double *hi) {
  double m = bench_median(v, n);
  double p = 1.0, cdf = 0.0; /* p: C(n,i) / 2^n, built up step by step */
  for (int i = 0; i < n; i++)
    p *= 0.5;
  int k = 0;
  for (int i = 0; i < n; i++) {
    cdf += p;
    if (cdf > 0.025)
      break;
    k = i + 1;
    p = p * (n - i) / (i + 1);
  }
  if (k < 1)
    k = 1;
  *lo = v[k - 1];
  *hi = v[n - k];
  return m;
}

/* alloc-count.c */
void bench_count_start(void);
unsigned long bench_count_stop(void);

#endif
