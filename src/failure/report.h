/* Internal: F5's reports.  A read of tainted data gets a report naming
 * every distinct failure once (its root, its skip chain) and every bad
 * handle, and the thread's detail names the first root; the public
 * cls_report_* calls read it.  Above the failure store (it settles the
 * log before it counts: failure/poll.h). */
#ifndef CLS_REPORT_H
#define CLS_REPORT_H

#include "base/context.h"

/* Failure i of a report, as the report copied it (NULL past the end):
 * what src/wire/wire.c puts on the wire. */
const struct cls__failure *cls__report_record(const cls_report *r, size_t i);
/* F5: builds the report of a read over `handles`: every distinct failure
 * once, every bad handle.  Returns CLS_OK when there is nothing to report
 * (and *out is NULL), CLS_ETAINTED with *out (if out != NULL) otherwise, or
 * CLS_ENOMEM.  CLS_ETAINTED sets the thread's detail: the read (`op`, on
 * `stream`, -1 for none), the number of failures and the first root. */
int cls__read_report(cls_context *ctx, const char *op, int stream, const cls_buffer *handles,
                     size_t n, cls_report **out);
/* CLS_ETAINTED for a copy whose source `src` carries `f` (F2: the copy is
 * skipped), with the detail of a read.  A skipped launch formats nothing
 * (F10); a copy is no hot path. */
int cls__copy_tainted(const char *op, int stream, cls_buffer src, const struct cls__failure *f);
/* A report naming exactly the given failures (async read failures), with
 * the same detail; `what` names the call ("sync of stream 2"). */
int cls__report_from(const char *what, struct cls__failure *const *fs, size_t n,
                     cls_report **out);
#endif /* CLS_REPORT_H */
