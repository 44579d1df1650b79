/* Internal: the timeline trace (CLS_TRACE=FILE, docs/trace.md).
 *
 * A Chrome trace-event JSON file in the array form ([event, ...]), which
 * Perfetto and chrome://tracing open, written through one buffer
 * allocated when the trace is opened: recording an event formats it into
 * the buffer and allocates nothing; a full buffer is written out.
 *
 * What it promises:
 *   - The file is valid JSON after every flush: each flush writes the
 *     buffered events and the closing "]" in one pwrite at the end of the
 *     last event, and the next flush writes over the "]".  A program that
 *     exits without destroying its context keeps everything recorded up
 *     to its last flush (cls_stream_sync, cls_sync, a full buffer), as a
 *     file the viewers open.
 *   - Cut anywhere after an event (a crash inside a write, a full disk, a
 *     copy stopped short), the file is the array without its "]", which
 *     the viewers load: each event starts with its separator (",\n{").
 *   - The first event, process_name, names the run, and its arguments
 *     hold clstream's version, the device and the driver.
 *   - Every string from outside (names, messages, the metadata) is
 *     escaped: quotes, backslashes, control characters, and each byte of
 *     ill-formed UTF-8 as U+FFFD; the file is UTF-8.
 *   - Tracks: pid 1 is the context's device (pid 1 + i for device i once a
 *     context has several); tid S is stream S (host side: commands as
 *     accepted, skips, failures, refusals, waits); tid 100 + Q is the
 *     device timeline of backend queue Q (device start and end, where the
 *     device gives profiling times); tid 99 is the context itself (what
 *     names no stream).  Each track is named by "M" thread_name metadata
 *     the first time it is used.
 *   - Times are microseconds of CLOCK_MONOTONIC (cls__now_ns, util/settle.h,
 *     is in nanoseconds); device times are moved onto that clock by the offset
 *     given with cls__trace_set_device_offset.
 * Every call is made under the context lock; none may fail the caller: a
 * write error is logged once by the caller's logger and the trace goes
 * quiet. */
#ifndef CLS_TRACE_H
#define CLS_TRACE_H

#include "util/log.h"
#include "util/util.h"

struct cls__trace;

/* What the metadata names: device, driver (with its parameters), library
 * version. */
struct cls__trace_meta {
  const char *device;
  const char *driver;
  const char *version;
};

/* Creates `path` (or truncates an existing regular file) and writes the
 * metadata.  CLS_EINVAL with the path and the system's reason when the
 * file cannot be created, or when `path` is not a regular file (a FIFO, a
 * device, a directory, a symbolic link: refused before it is opened,
 * never blocking);
 * CLS_ENOMEM.  On failure a file this call created is removed; an
 * existing file never is. */
int cls__trace_open(struct cls__trace **out, const char *path, const struct cls__trace_meta *meta,
                    struct cls__logger *log);
/* Flushes, closes and frees.  NULL is accepted. */
void cls__trace_close(struct cls__trace *t);
/* Closes, removes the file when cls__trace_open created it (O_EXCL, and
 * the path still names it), and frees: a context creation that failed
 * leaves nothing behind, and removes nothing of the user's.  NULL is
 * accepted. */
void cls__trace_discard(struct cls__trace *t);
/* Writes what is buffered, then the closing text: the file is valid. */
void cls__trace_flush(struct cls__trace *t);

/* device_ns + offset = CLOCK_MONOTONIC nanoseconds. */
void cls__trace_set_device_offset(struct cls__trace *t, int64_t offset);

/* Names stream s's track ("stream S"). */
void cls__trace_stream(struct cls__trace *t, int s);
/* A command accepted on stream s as its command `seq`: `cat` is the kind
 * ("launch", "upload", "download", "copy", "fill"), `name` the kernel or
 * the kind; host time from t0 to t1 (ns). */
void cls__trace_cmd(struct cls__trace *t, int s, const char *cat, const char *name,
                    uint64_t seq, uint64_t t0, uint64_t t1);
/* Device execution of backend queue q's command `seq` (device clock, ns). */
void cls__trace_device(struct cls__trace *t, int q, const char *name, uint64_t seq,
                       uint64_t start, uint64_t end);
/* A command skipped at position `pos` of stream s on a failure whose
 * message is `root`. */
void cls__trace_skip(struct cls__trace *t, int s, const char *name, uint64_t pos,
                     const char *root);
/* A failure minted (`cat` "failure") or a refusal (`cat` "refusal") on
 * stream s (outside 0..63: the context's track), with its message. */
void cls__trace_failure(struct cls__trace *t, const char *cat, int s, const char *name,
                        uint64_t pos, const char *message);
/* Stream `consumer` now waits for stream `producer` up to its command
 * `upto`: a flow arrow from the producer's last command to now. */
void cls__trace_wait(struct cls__trace *t, int producer, int consumer, uint64_t upto);

#endif /* CLS_TRACE_H */
