/* libFuzzer target: bytes decoded into clstream calls on the null stream
 * factory (no OpenCL work: every command completes at once), so what is
 * fuzzed is clstream itself: argument validation, handles, the failure
 * store and skip chains, the in-flight log (F8), both drivers, fault
 * injection, capture and replay (parameters right and wrong).  Built by `make fuzz` (configure finds clang with
 * -fsanitize=fuzzer), with AddressSanitizer and UBSan:
 *
 *   OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd \
 *     ./tests/fuzz/fuzz-ops -runs=1000000 tests/fuzz/corpus
 *
 * The first bytes pick a context (driver x fault spec; contexts are made
 * once and reused, each input starting and ending with no buffer), the
 * rest are ops.  Beyond the sanitizers, each input checks: every return
 * code is 0 or a CLS_E* code; a download refused (CLS_ETAINTED) comes with
 * a report; after the input frees everything, no failure record is left
 * alive (F1). */
#include <clstream.h>
#include <clstream/stream.h>

#include "base/record.h" /* cls__failures_alive() */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB 8     /* buffer slots */
#define NS 4     /* streams used (plus invalid ids) */
#define MAXE 256 /* bytes per buffer at most */

static const char *const drivers[] = {"event", "scheduler:sequential",
                                      "scheduler:interleave,max_tasks=2",
                                      "scheduler:sequential,queues=2,max_tasks=3"};
static const char *const faults[] = {
    "",
    "enqueue:kernel=k_add",
    "complete:kernel=k_inc;enqueue:op=copy",
    "complete:op=fill;enqueue:kernel=k_set,stream=1;alloc:stream=2",
    "complete:kernel=k_add;complete:kernel=k_inc;enqueue:op=upload,stream=3",
};
#define ND (sizeof drivers / sizeof *drivers)
#define NF (sizeof faults / sizeof *faults)

static const char SRC[] =
    "kernel void k_set(global int *o, int v) { o[get_global_id(0)] = v; }\n"
    "kernel void k_add(global const int *a, global const int *b, global int *o) {\n"
    "  size_t i = get_global_id(0); o[i] = a[i] + b[i]; }\n"
    "kernel void k_inc(global int *x) { x[get_global_id(0)] += 1; }\n"
    "kernel void k_loc(global int *o, local int *t) { o[get_global_id(0)] = 0; }\n";

struct env {
  cls_context *ctx;
  cls_kernel *k[4];
};
static struct env envs[ND][NF];
static size_t ncontexts;

static struct env *get_env(unsigned d, unsigned f) {
  struct env *e = &envs[d][f];
  if (e->ctx)
    return e;
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = drivers[d],
                                  .fault = faults[f],
                                  .factory = cls_null_stream_factory(),
                                  .page_size = 1 << 16};
  int rc = cls_context_create(&e->ctx, &o);
  if (rc != 0) {
    fprintf(stderr, "fuzz-ops: context (%s, '%s'): %s: %s\n", drivers[d], faults[f],
            cls_err_name(rc), cls_last_error_detail());
    abort();
  }
  cls_program *p = NULL;
  static const char *const names[] = {"k_set", "k_add", "k_inc", "k_loc"};
  if (cls_program_build(e->ctx, SRC, NULL, &p) != 0)
    abort();
  for (int i = 0; i < 4; i++)
    if (cls_kernel_get(e->ctx, p, names[i], &e->k[i]) != 0)
      abort();
  cls_set_logger(e->ctx, CLS_LOG_OFF, NULL, NULL);
  ncontexts++;
  return e;
}

/* Input reader: zeros once the bytes run out. */
struct in {
  const uint8_t *p;
  size_t n;
};
static unsigned u8(struct in *in) {
  if (!in->n)
    return 0;
  in->n--;
  return *in->p++;
}
static uint64_t u64(struct in *in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | u8(in);
  return v;
}

/* A size or offset: mostly small, sometimes extreme. */
static size_t amount(struct in *in) {
  unsigned b = u8(in);
  switch (b >> 5) {
  case 0:
    return 0;
  case 1:
    return SIZE_MAX - (b & 31);
  case 2:
    return (size_t)1 << (b & 31);
  default:
    return (size_t)(b & 31) * 4 + (u8(in) & 3);
  }
}

static int stream(struct in *in) {
  unsigned b = u8(in);
  if (b >= 250)
    return b == 250 ? -1 : b == 251 ? CLS_MAX_STREAMS : b == 252 ? INT32_MIN : 63;
  return (int)(b % NS);
}

/* A launch's scalar: static, so that a capture may mark it a parameter
 * (op 14). */
static int launch_v;

/* Captures of the input (op 14), destroyed at its end. */
#define NCAP 3
static cls_capture *caps[NCAP];

static void check_rc(int rc) {
  if (rc > 0 || rc <= CLS__ERR_LAST) {
    fprintf(stderr, "fuzz-ops: return code %d is not a CLS_E* code\n", rc);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct in in = {data, size};
  unsigned d = u8(&in) % ND, f = u8(&in) % NF;
  struct env *e = get_env(d, f);
  cls_context *ctx = e->ctx;
  cls_buffer h[NB];
  memset(h, 0, sizeof h);
  static unsigned char host[MAXE * 2];
  int ops = 0;
  while (in.n && ops++ < 64) {
    unsigned op = u8(&in) % 15;
    int rc = 0;
    cls_buffer *bp = &h[u8(&in) % NB];
    cls_buffer b = *bp, c = h[u8(&in) % NB];
    switch (op) {
    case 0: { /* alloc (over a live handle: the old one is freed first) */
      if (bp->bits)
        cls_free(ctx, *bp);
      size_t n = amount(&in);
      rc = cls_alloc(ctx, stream(&in), n > MAXE && n < SIZE_MAX - 64 ? MAXE : n, bp);
      break;
    }
    case 1:
      rc = cls_free(ctx, b);
      break;
    case 2:
    case 3: {
      size_t off = amount(&in), n = amount(&in);
      if (n > MAXE && n < SIZE_MAX - 64)
        n = MAXE;
      rc = (op == 2 ? cls_upload : cls_upload_async)(ctx, stream(&in), b, off, host, n);
      break;
    }
    case 4: { /* download */
      size_t off = amount(&in), n = amount(&in);
      if (n > MAXE && n < SIZE_MAX - 64)
        n = MAXE;
      cls_report *r = NULL;
      rc = cls_download(ctx, stream(&in), b, off, host, n, &r);
      if (rc == CLS_ETAINTED && !r) {
        fprintf(stderr, "fuzz-ops: CLS_ETAINTED without a report\n");
        abort();
      }
      if (r)
        (void)cls_report_text(r);
      cls_report_free(r);
      break;
    }
    case 5: {
      size_t off = amount(&in), n = amount(&in);
      if (n > MAXE && n < SIZE_MAX - 64)
        n = MAXE;
      rc = cls_download_async(ctx, stream(&in), b, off, host + MAXE, n);
      break;
    }
    case 6: {
      size_t so = amount(&in), dof = amount(&in), n = amount(&in);
      rc = cls_copy(ctx, stream(&in), b, so, c, dof, n);
      break;
    }
    case 7: {
      static const size_t ps[] = {1, 2, 4, 8, 16, 3, 0, 256};
      size_t off = amount(&in), n = amount(&in);
      rc = cls_fill(ctx, stream(&in), b, off, n, host, ps[u8(&in) % 8]);
      break;
    }
    case 8:
    case 9: { /* launch, with arguments possibly mangled */
      unsigned k = u8(&in) % 4;
      cls_arg a[5];
      launch_v = (int)u8(&in);
      size_t nargs;
      switch (k) {
      case 0:
        a[0] = CLS_OUT(b), a[1] = CLS_SCALAR(launch_v), nargs = 2;
        break;
      case 1:
        a[0] = CLS_IN(b), a[1] = CLS_IN(c), a[2] = CLS_OUT(h[u8(&in) % NB]), nargs = 3;
        break;
      case 2:
        a[0] = CLS_INOUT(b), nargs = 1;
        break;
      default:
        a[0] = CLS_OUT(b), a[1] = CLS_LOCAL(4 * (size_t)(u8(&in) % 65)), nargs = 2;
      }
      if (op == 9) { /* one mistake */
        unsigned m = u8(&in), i = m % 5;
        switch ((m >> 3) % 6) {
        case 0:
          nargs = (nargs + 1 + (m >> 5)) % 6;
          break;
        case 1:
          if (i < nargs)
            a[i].kind = (int)(m >> 5) - 1;
          break;
        case 2:
          if (i < nargs)
            a[i].access = (int)(m >> 5);
          break;
        case 3:
          if (i < nargs)
            a[i].buffer.bits = u64(&in);
          break;
        case 4:
          if (i < nargs)
            a[i] = CLS_SCALAR(launch_v), a[i].size = m >> 5;
          break;
        default:
          if (i < nargs)
            a[i] = CLS_LOCAL(m >> 4);
        }
      }
      size_t g[3] = {1 + u8(&in) % 64, 1, 1}, l[3] = {1 + u8(&in) % 16, 1, 1};
      unsigned dims = 1 + u8(&in) % 4;
      /* Bits 1-2 of the byte that picks the local size: no offset, all
       * zero, or one past what the device's size_t holds (refused; a
       * small one would be a write past the kernels' buffers). */
      unsigned lo = u8(&in);
      size_t o[3] = {0, 0, 0};
      if ((lo >> 1) % 4 == 2)
        o[(lo >> 3) % 3] = SIZE_MAX - (lo >> 5);
      rc = (lo >> 1) % 4 ? cls_launch_offset(ctx, stream(&in), e->k[k], dims % 4, o, g,
                                             lo & 1 ? l : NULL, nargs, a)
                         : cls_launch(ctx, stream(&in), e->k[k], dims % 4, g, lo & 1 ? l : NULL,
                                      nargs, a);
      break;
    }
    case 10: {
      cls_report *r = NULL;
      rc = cls_stream_sync(ctx, stream(&in), &r);
      cls_report_free(r);
      break;
    }
    case 11: {
      cls_report *r = NULL;
      rc = cls_sync(ctx, &r);
      cls_report_free(r);
      break;
    }
    case 12: {
      cls_report *r = NULL;
      size_t n = u8(&in) % (NB + 1);
      rc = cls_check(ctx, n, h, &r);
      if (r) {
        struct cls_failure_info fi;
        for (size_t i = 0; i < cls_report_failures(r); i++)
          if (cls_report_failure(r, i, &fi) == 0)
            for (size_t k = 0; k < fi.nskips; k++) {
              struct cls_skip_info si;
              cls_report_skip(r, i, k, &si);
            }
        (void)cls_report_text(r);
      }
      cls_report_free(r);
      break;
    }
    case 14: { /* capture and replay */
      unsigned sub = u8(&in) % 6, ci = u8(&in) % NCAP;
      int idx;
      switch (sub) {
      case 0:
        rc = cls_capture_begin(ctx);
        break;
      case 1:
        cls_capture_destroy(caps[ci]);
        caps[ci] = NULL;
        rc = cls_capture_end(ctx, &caps[ci]);
        break;
      case 2: { /* parameters: right or wrong in count, kind and size */
        cls_param p[CLS_MAX_ARGS + 1];
        cls_buffer pb[CLS_MAX_ARGS + 1];
        size_t np = u8(&in) % (CLS_MAX_ARGS + 2);
        for (size_t i = 0; i < np; i++) {
          unsigned m = u8(&in);
          pb[i] = h[m % NB];
          p[i] = m & 8 ? (cls_param){&pb[i], m & 16 ? 3 : sizeof(cls_buffer)}
                       : (cls_param){m & 16 ? NULL : host, m & 32 ? m >> 6 : sizeof(int)};
        }
        rc = cls_replay(ctx, caps[ci], np, u8(&in) & 1 ? NULL : p);
        break;
      }
      case 3: {
        static int v2;
        void *pv = u8(&in) & 1 ? (void *)&v2 : (void *)&launch_v;
        rc = cls_capture_param(ctx, pv, sizeof(int), &idx);
        break;
      }
      case 4:
        rc = cls_capture_buffer_param(ctx, b, &idx);
        break;
      default:
        cls_capture_destroy(caps[ci]);
        caps[ci] = NULL;
      }
      break;
    }
    default: { /* a handle from the bytes: stale, foreign or garbage */
      cls_buffer g = {u64(&in)};
      size_t sz;
      rc = cls_buffer_size(ctx, g, &sz);
      check_rc(rc);
      rc = cls_free(ctx, g);
      if (rc == 0) /* it named a live buffer: forget it */
        for (int i = 0; i < NB; i++)
          if (h[i].bits == g.bits)
            h[i].bits = 0;
    }
    }
    check_rc(rc);
  }
  /* The end: a capture in progress ended, captures destroyed, everything
   * done, everything freed, no record left. */
  cls_capture *open = NULL;
  if (cls_capture_end(ctx, &open) == 0)
    cls_capture_destroy(open);
  for (int i = 0; i < NCAP; i++) {
    cls_capture_destroy(caps[i]);
    caps[i] = NULL;
  }
  cls_report *r = NULL;
  check_rc(cls_sync(ctx, &r));
  cls_report_free(r);
  for (int i = 0; i < NB; i++)
    if (h[i].bits)
      cls_free(ctx, h[i]);
  /* Each context keeps at most its spare write-scope record. */
  size_t alive = cls__failures_alive();
  if (alive > ncontexts) {
    fprintf(stderr, "fuzz-ops: %zu failure records alive after the input (%zu contexts)\n",
            alive, ncontexts);
    abort();
  }
  return 0;
}
