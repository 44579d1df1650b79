/** \file clstream/wire.h
 * \brief A buffer region and its failure record across a process boundary.
 *
 * clstream invents no transport.  These calls are what a transport library
 * (libclstream-mpi, <clstream/mpi.h>) needs of the core to let a buffer,
 * and the truth about it, leave one process and enter another: a read that
 * gives either the bytes or the buffer's failure as a *record* (a few
 * hundred bytes to 2.8 KiB of plain data: the root cause with the rank it
 * happened on, and the skip chain, bounded as locally), and the write that
 * makes a buffer take such a record as its failure (docs/scale-out.md).
 * They are in libclstream itself and cost a program that never calls them
 * nothing.
 *
 * A record is made for and read by processes of one build on machines of
 * one byte order (a record from another is refused as malformed).
 *
 * Like the rest of the API: 0 or a negative CLS_E* code; each call that
 * takes a context takes its lock.  An image handle is refused by every
 * call with #CLS_EINVAL: bytes travel, not pixels (cls_image_to_buffer()
 * first).
 */
#ifndef CLSTREAM_WIRE_H
#define CLSTREAM_WIRE_H

#include <clstream.h>

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most bytes a record takes (cls_wire_read() writes at most this
 * many): a fixed part and 32 skip chain entries. */
#define CLS_WIRE_RECORD_MAX 4096

/** Names this process's rank (MPI's, or any transport's numbering, from 0)
 * for the context: failures minted here name it when they travel, and the
 * fault grammar's rank=R key compares with it (docs/testing.md).
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or a negative rank. */
CLS_API int cls_wire_set_rank(cls_context *ctx, int rank);

/** A read that may travel: `size` bytes of `src` at `offset` into host
 * memory `dst`, on `stream`, as cls_download() (ordered after the
 * buffer's producer, waits for it).  When the read cannot deliver good
 * bytes (the buffer carries a failure, now or found when the read
 * completes: F5, F8; or the read itself is refused or fails) the record of
 * what went wrong is written to `record` (#CLS_WIRE_RECORD_MAX bytes) and
 * its length to *record_len: the buffer's first failure, root and chain,
 * as a report would name it; or, for a read that is refused (a bad handle,
 * a range), a failure of operation "send" naming the reason.  *record_len
 * is 0 when the bytes are good.  `record` may be `dst` (the bytes are
 * worthless when a record is made).
 * \return #CLS_OK (bytes in dst, *record_len 0); the code cls_download()
 * returns otherwise (#CLS_ETAINTED, #CLS_ESTALE, #CLS_ERANGE ...), with a
 * record; #CLS_EINVAL without a record when record or record_len is NULL. */
CLS_API int cls_wire_read(cls_context *ctx, int stream, cls_buffer src, size_t offset,
                          void *dst, size_t size, void *record, size_t *record_len);

/** The receiving end of a record: `dst` takes the failure the record
 * describes, as a write on `stream` that failed would leave it (the whole
 * buffer carries it; later launches that read it are skipped, F2, and
 * extend the chain on this process; a read reports the root as "on rank
 * R: ...").  The record is kept as it came: its root names the rank it
 * happened on, also after it travels on.
 * \return #CLS_ETAINTED (dst carries the failure; the detail names the
 * root, as a read's does); #CLS_EINVAL for a NULL context or record, or a
 * malformed record (dst then carries a failure saying so); #CLS_ESTALE,
 * #CLS_EFOREIGN or #CLS_ENULL for a bad dst; #CLS_ESTREAM for a bad
 * stream; #CLS_ENOMEM. */
CLS_API int cls_wire_taint(cls_context *ctx, int stream, cls_buffer dst, const void *record,
                           size_t record_len);

/** A transfer into `dst` failed in the transport: `dst` takes a new
 * failure of `status` (#CLS_EMPI for an MPI error), operation `op`
 * ("receive"; any other text is recorded as "transfer") and `message` (the
 * transport's error string), so a later read fails instead of returning
 * the old bytes (as F12).
 * \return `status` (negative), with the message as the thread's detail;
 * #CLS_EINVAL for a NULL context or message, or a status that is not
 * negative; #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad dst. */
CLS_API int cls_wire_fail(cls_context *ctx, int stream, cls_buffer dst, int status,
                          const char *op, const char *message);

/** Records `code` and the formatted text as the calling thread's last
 * error (cls_last_error_detail(), cls_last_cl_status() 0), for a
 * transport library's own errors.
 * \return code. */
CLS_API int cls_wire_error(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** Where failure `i` of a report happened: *rank is the rank of the
 * process it came from; -1 when it happened in this one, or came from a
 * process that named no rank (the report then says "in another
 * process").
 * \return 1 when it came from another process, 0 when not; #CLS_EINVAL
 * for a NULL argument; #CLS_ERANGE for i out of range. */
CLS_API int cls_report_failure_rank(const cls_report *r, size_t i, int *rank);

/** Pinned host memory for staging transfers: an OpenCL buffer allocated
 * in host memory (CL_MEM_ALLOC_HOST_PTR) and mapped, so the device copies
 * to and from it directly where the platform pins such memory.  Opaque. */
typedef struct cls_wire_host cls_wire_host;
/** Allocates `size` bytes of staging memory on the context's device;
 * *ptr is where the host reads and writes them.  Free it with
 * cls_wire_host_free() before the context is destroyed.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument or size 0; #CLS_ECL
 * when OpenCL fails (nothing is left behind); #CLS_ENOMEM. */
CLS_API int cls_wire_host_alloc(cls_context *ctx, size_t size, cls_wire_host **out, void **ptr);
/** Unmaps and releases staging memory.  NULL is accepted. */
CLS_API void cls_wire_host_free(cls_wire_host *h);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_WIRE_H */
