/* Reports (F5): the answer to a read of tainted data.  A report holds a
 * reference to each distinct failure, so it stays valid after the buffers
 * are rewritten, freed, or the context is destroyed. */
#include "failure/report.h"
#include "failure/failure.h"
#include "failure/poll.h"
#include "base/handle.h"

#include <clstream/wire.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bad_handle {
  cls_buffer handle;
  int why;
};

struct cls_report {
  size_t nfailures;
  struct cls__failure **failures; /* references: keep the records alive */
  /* What the report shows, copied when it was made (under the context
   * lock): the context's thread may append to a record's skip chain while
   * another thread reads the report. */
  struct cls__failure *snap;
  size_t nbad;
  struct bad_handle *bad;
  char *text;
};

static cls_report *report_new(size_t nf, size_t nbad) {
  cls_report *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->failures = calloc(nf ? nf : 1, sizeof *r->failures);
  r->snap = calloc(nf ? nf : 1, sizeof *r->snap);
  r->bad = calloc(nbad ? nbad : 1, sizeof *r->bad);
  if (!r->failures || !r->snap || !r->bad) {
    free(r->snap);
    free(r->failures);
    free(r->bad);
    free(r);
    return NULL;
  }
  return r;
}

static void report_add(cls_report *r, struct cls__failure *f) {
  for (size_t i = 0; i < r->nfailures; i++)
    if (r->failures[i] == f || cls__failure_same(r->failures[i], f)) /* one identity */
      return;
  _Static_assert(offsetof(struct cls__failure, refs) == 0, "refs comes first");
  const size_t from = offsetof(struct cls__failure, status);
  cls__failure_ref(f);
  memcpy((char *)&r->snap[r->nfailures] + from, (const char *)f + from, sizeof *f - from);
  r->failures[r->nfailures++] = f;
}

/* The counts and the first root: the tail of every CLS_ETAINTED detail. */
static void append_summary(size_t nf, size_t nbad, const struct cls__failure *first) {
  cls__error_append(": %zu failure%s", nf, nf == 1 ? "" : "s");
  if (nbad)
    cls__error_append(", %zu bad handle%s", nbad, nbad == 1 ? "" : "s");
  if (first) {
    cls__error_append("; %s: ", nf > 1 ? "first root" : "root");
    cls__error_append_root(first);
  }
}

/* The detail of a read that returns CLS_ETAINTED: the read, then the
 * summary, so a program that prints only cls_last_error_detail() learns
 * the cause (the report has the chains). */
static int tainted(const char *op, int stream, const cls_buffer *handles, size_t n,
                   const cls_report *r) {
  if (n == 1)
    cls__error(CLS_ETAINTED, 0, "%s of buffer %#llx", op, (unsigned long long)handles[0].bits);
  else
    cls__error(CLS_ETAINTED, 0, "%s of %zu buffers", op, n);
  if (stream >= 0)
    cls__error_append(" on stream %d", stream);
  append_summary(r->nfailures, r->nbad, r->nfailures ? &r->snap[0] : NULL);
  if (!r->nfailures && r->nbad)
    cls__error_append("; buffer %#llx: %s", (unsigned long long)r->bad[0].handle.bits,
                      cls_strerror(r->bad[0].why));
  return CLS_ETAINTED;
}

int cls__copy_tainted(const char *op, int stream, cls_buffer src, const struct cls__failure *f) {
  cls__error(CLS_ETAINTED, 0, "%s on stream %d from buffer %#llx", op, stream,
             (unsigned long long)src.bits);
  append_summary(1, 0, f);
  return CLS_ETAINTED;
}

int cls__report_from(const char *what, struct cls__failure *const *fs, size_t n,
                     cls_report **out) {
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < i && fs[j] != fs[i])
      j++;
    distinct += j == i;
  }
  cls__error(CLS_ETAINTED, 0, "%s: %zu non-blocking download%s read data that failed", what,
             n, n == 1 ? "" : "s");
  append_summary(distinct, 0, n ? fs[0] : NULL);
  if (!out)
    return CLS_ETAINTED;
  cls_report *r = report_new(n, 0);
  if (!r)
    return cls__error(CLS_ENOMEM, 0, "out of memory building a report");
  for (size_t i = 0; i < n; i++)
    report_add(r, fs[i]);
  *out = r;
  return CLS_ETAINTED;
}

/* How many of the handles carry a failure (*nf) or are bad (*nbad). */
static void count_read(cls_context *ctx, const cls_buffer *handles, size_t n, size_t *nf,
                       size_t *nbad) {
  *nf = *nbad = 0;
  for (size_t i = 0; i < n; i++) {
    struct cls__slot *s = cls__resolve(ctx, handles[i]);
    if (!s)
      ++*nbad;
    else if (s->failure)
      ++*nf;
  }
}

int cls__read_report(cls_context *ctx, const char *op, int stream, const cls_buffer *handles,
                     size_t n, cls_report **out) {
  size_t nf, nbad;
  count_read(ctx, handles, n, &nf, &nbad);
  if (out)
    *out = NULL;
  if (nf == 0 && nbad == 0)
    return CLS_OK;
  /* The settle waits, and may find a failure on another buffer of this
   * read: the report is sized for what the buffers carry after it. */
  if (nf && ctx->log.len) {
    cls__poll_settle(ctx, handles, n);
    count_read(ctx, handles, n, &nf, &nbad);
  }
  /* Built even when the caller wants none: the detail is made from it. */
  cls_report *r = report_new(nf, nbad);
  if (!r)
    return out ? cls__error(CLS_ENOMEM, 0, "out of memory building a report")
               : cls__error(CLS_ETAINTED, 0, "%s: the data carries a failure (out of memory "
                            "describing it)", op);
  for (size_t i = 0; i < n; i++) {
    struct cls__binding b = {.handle = handles[i], .access = CLS_READ};
    b.slot = cls__resolve(ctx, handles[i]);
    if (!b.slot) {
      r->bad[r->nbad].handle = handles[i];
      r->bad[r->nbad].why = cls__resolve_error(ctx, handles[i]);
      r->nbad++;
    } else if (b.slot->failure) {
      struct cls__failure *f = cls__read_failure(ctx, -1, &b, 1);
      report_add(r, f);
    }
  }
  tainted(op, stream, handles, n, r);
  if (out)
    *out = r;
  else
    cls_report_free(r);
  return CLS_ETAINTED;
}

CLS_API size_t cls_report_failures(const cls_report *r) { return r ? r->nfailures : 0; }

CLS_API int cls_report_failure(const cls_report *r, size_t i, struct cls_failure_info *o) {
  cls__error_clear();
  if (!r || !o)
    return cls__error(CLS_EINVAL, 0, "cls_report_failure: NULL argument");
  if (i >= r->nfailures)
    return cls__error(CLS_ERANGE, 0, "cls_report_failure: no failure %zu (the report has %zu)",
                      i, r->nfailures);
  const struct cls__failure *f = &r->snap[i];
  o->status = f->status;
  o->cl_status = f->cl_status;
  o->cl_name = f->cl_status ? cls_cl_status_name(f->cl_status) : "";
  o->operation = f->operation ? f->operation : "";
  o->kernel = f->kernel;
  o->stream = f->stream;
  o->position = f->position;
  o->message = f->message;
  o->build_log = f->build_log ? f->build_log : "";
  o->async = f->async;
  o->nskips = f->nskips;
  o->skipped = f->skipped;
  return CLS_OK;
}

CLS_API int cls_report_skip(const cls_report *r, size_t fi, size_t i, struct cls_skip_info *o) {
  cls__error_clear();
  if (!r || !o)
    return cls__error(CLS_EINVAL, 0, "cls_report_skip: NULL argument");
  if (fi >= r->nfailures || i >= r->snap[fi].nskips)
    return cls__error(CLS_ERANGE, 0, "cls_report_skip: no skip %zu of failure %zu", i, fi);
  const struct cls__skip *s = &r->snap[fi].skips[i];
  o->kind = s->kind;
  o->kernel = s->kernel;
  o->stream = s->stream;
  o->position = s->position;
  o->count = s->count;
  return CLS_OK;
}

const struct cls__failure *cls__report_record(const cls_report *r, size_t i) {
  return r && i < r->nfailures ? &r->snap[i] : NULL;
}

CLS_API int cls_report_failure_rank(const cls_report *r, size_t i, int *rank) {
  cls__error_clear();
  if (!r || !rank)
    return cls__error(CLS_EINVAL, 0, "cls_report_failure_rank: NULL argument");
  if (i >= r->nfailures)
    return cls__error(CLS_ERANGE, 0, "cls_report_failure_rank: no failure %zu (the report "
                      "has %zu)", i, r->nfailures);
  *rank = r->snap[i].origin > 0 ? r->snap[i].origin - 1 : -1;
  return r->snap[i].origin != 0;
}

CLS_API size_t cls_report_bad_handles(const cls_report *r) { return r ? r->nbad : 0; }

CLS_API int cls_report_bad_handle(const cls_report *r, size_t i, cls_buffer *h, int *why) {
  cls__error_clear();
  if (!r)
    return cls__error(CLS_EINVAL, 0, "cls_report_bad_handle: NULL report");
  if (i >= r->nbad)
    return cls__error(CLS_ERANGE, 0, "cls_report_bad_handle: no bad handle %zu (the report "
                      "has %zu)", i, r->nbad);
  if (h)
    *h = r->bad[i].handle;
  if (why)
    *why = r->bad[i].why;
  return CLS_OK;
}

/* A growing string for the text rendering. */
struct sbuf {
  char *p;
  size_t len, cap;
  bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...) {
  if (b->oom)
    return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if (b->p && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t ncap = b->cap ? b->cap * 2 : 1024;
    while (ncap < b->len + (size_t)n + 1)
      ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = ncap;
  }
}

static void render_failure(struct sbuf *b, size_t idx, const struct cls__failure *f) {
  sb_printf(b, "failure %zu: ", idx + 1);
  if (f->origin > 0)
    sb_printf(b, "on rank %d: ", f->origin - 1);
  else if (f->origin < 0)
    sb_printf(b, "in another process: ");
  sb_printf(b, "%s", cls_err_name(f->status));
  if (f->cl_status)
    sb_printf(b, " (%s)", cls_cl_status_name(f->cl_status));
  sb_printf(b, "%s in %s", f->async ? " found after the call returned," : "", f->operation);
  if (f->kernel[0])
    sb_printf(b, " of kernel '%s'", f->kernel);
  if (f->stream >= 0)
    sb_printf(b, " on stream %d", f->stream);
  if (f->position)
    sb_printf(b, " at position %llu", (unsigned long long)f->position);
  sb_printf(b, "\n  root cause: %s\n", f->message);
  if (f->build_log && f->build_log[0])
    sb_printf(b, "  build log:\n%s\n", f->build_log);
  if (f->skipped == 0) {
    sb_printf(b, "  skip chain: none (the read is the first to meet it)\n");
    return;
  }
  sb_printf(b, "  skip chain (%llu launch%s):\n", (unsigned long long)f->skipped,
            f->skipped == 1 ? "" : "es");
  for (size_t i = 0; i < f->nskips; i++) {
    const struct cls__skip *s = &f->skips[i];
    char rank[32] = "";
    if (s->origin > 0)
      snprintf(rank, sizeof rank, "rank %d ", s->origin - 1);
    else if (s->origin < 0)
      snprintf(rank, sizeof rank, "another process's ");
    if (s->kind == CLS_SKIP_REPLAY) {
      sb_printf(b, "    %zu. skipped as a whole: replay of %s (%llu command%s) from %sstream %d "
                   "at position %llu\n",
                i + 1, s->kernel, (unsigned long long)s->count, s->count == 1 ? "" : "s", rank,
                s->stream, (unsigned long long)s->position);
      continue;
    }
    sb_printf(b, "    %zu. %s '%s' on %sstream %d at position %llu", i + 1,
              s->kind == CLS_SKIP_UNTRUSTED ? "ran on untrusted input:" : "skipped:",
              s->kernel, rank, s->stream, (unsigned long long)s->position);
    if (s->count > 1)
      sb_printf(b, " (x%llu in a row)", (unsigned long long)s->count);
    sb_printf(b, "\n");
  }
  if (f->dropped)
    sb_printf(b, "    ... and %llu more not listed\n", (unsigned long long)f->dropped);
}

CLS_API const char *cls_report_text(cls_report *r) {
  if (!r)
    return "";
  if (r->text)
    return r->text;
  struct sbuf b = {0};
  sb_printf(&b, "clstream: the read failed: %zu failure%s", r->nfailures,
            r->nfailures == 1 ? "" : "s");
  if (r->nbad)
    sb_printf(&b, ", %zu bad handle%s", r->nbad, r->nbad == 1 ? "" : "s");
  sb_printf(&b, "\n");
  for (size_t i = 0; i < r->nfailures; i++)
    render_failure(&b, i, &r->snap[i]);
  for (size_t i = 0; i < r->nbad; i++)
    sb_printf(&b, "bad handle %#llx: %s (%s)\n", (unsigned long long)r->bad[i].handle.bits,
              cls_err_name(r->bad[i].why), cls_strerror(r->bad[i].why));
  if (b.oom) {
    free(b.p);
    return "clstream: out of memory rendering the report\n";
  }
  r->text = b.p;
  return r->text;
}

CLS_API void cls_report_free(cls_report *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->nfailures; i++)
    cls__failure_unref(r->failures[i]);
  free(r->failures);
  free(r->snap);
  free(r->bad);
  free(r->text);
  free(r);
}
