/* Internal: guard mode (CLS_GUARD=1), a device-memory checker.
 *
 * What it promises:
 *   - every buffer of a guarded context sits between two guard regions of
 *     its own page (so it stays a sub-buffer), written with a known pattern
 *     when the buffer is allocated;
 *   - after a launch that could write a guarded buffer has completed (as
 *     a poll finds it: at syncs, reads and polls), the buffer's guards are
 *     read back (a buffer it declared CLS_IN too, where it may write
 *     through it all the same); a damaged guard is a failure of that
 *     launch found after its enqueue (F8, rooted at the first launch that
 *     could have done it), and the neighbouring buffer in the page takes
 *     it too;
 *   - each CLS_OUT destination of a launch is filled with a canary byte on
 *     the launch's stream first; a blocking download of a buffer whose last
 *     writer was that launch fails when what it read still holds a run of
 *     four or more canary bytes, naming the kernel and the first offset.
 * Off (ctx->guard NULL), none of this runs: one branch per command. */
#ifndef CLS_GUARD_H
#define CLS_GUARD_H

#include "base/cmd.h"
#include "base/slot.h"

struct cls__log_entry;

/* Parses CLS_GUARD's grammar ("0" or "1") into *on; CLS_ECONFIG otherwise. */
int cls__guard_parse(const char *text, bool *on);
/* Creates the guard state and its queue on ctx's device (ctx->guard). */
int cls__guard_create(cls_context *ctx);
void cls__guard_destroy(cls_context *ctx);

/* Bytes of guard before a buffer's data (the carve alignment), and the
 * span a buffer of `size` bytes takes with both guards. */
size_t cls__guard_before(const cls_context *ctx);
size_t cls__guard_span(const cls_context *ctx, size_t size, size_t align);
/* Writes slot's guards (the slot is carved, its page region free of any
 * earlier use).  Returns a CLS_E* code. */
int cls__guard_arm(cls_context *ctx, struct cls__slot *slot);

/* The canary byte the command path fills each CLS_OUT destination of a
 * launch with first (command.c: a command of clstream's own). */
#define CLS__GUARD_CANARY 0xCB
/* After a command's commit: checks to make once a launch completes, and
 * which buffers now hold a canary-filled launch's output.  `through`:
 * the CLS_IN bindings (bit i for bind[i]) the command may still write
 * through (a kernel argument not const, any buffer given to a foreign
 * command): their guards are checked too, and a damaged one names the
 * command (the buffer itself, whose bytes F11 compares, keeps its
 * record). */
void cls__guard_committed(cls_context *ctx, const struct cls__cmd *cmd, uint64_t position,
                          uint32_t through);
/* The checks whose launches have completed (ctx->hooks.polled, after
 * each poll). */
void cls__guard_check(cls_context *ctx);
/* True while log entry e has a check still to make: the F8 log keeps it,
 * so a damaged guard can still be replayed from it (ctx->hooks.holds). */
bool cls__guard_holds(const cls_context *ctx, const struct cls__log_entry *e);
/* After a blocking download of [offset, offset + size) of `h` into `bytes`:
 * CLS_OK, or CLS_EGUARD with the buffer now carrying the failure when the
 * bytes hold the canary of the launch that last wrote it. */
int cls__guard_canary_read(cls_context *ctx, cls_buffer h, struct cls__slot *slot,
                           size_t offset, const void *bytes, size_t size);
/* F11: each CLS_IN binding of a launch whose argument the kernel may
 * write (not const) is copied into a shadow before the launch and into
 * another behind it, on the launch's stream (command.c makes the copies);
 * once the second copy completed (as a poll finds it) the two are
 * compared, and a change is a CLS_EGUARD failure of the launch found after
 * its enqueue (F8): its write set, the commands that read the buffer after
 * it and the buffer itself take it.
 *
 * A shadow of `size` bytes (guard mode's own; NULL with the error
 * recorded). */
cl_mem cls__guard_shadow(cls_context *ctx, size_t size);
/* The launch being made: binding `h` (its argument `arg`, named `name` or
 * "") was copied into `before` (owned from here on). */
int cls__guard_pending(cls_context *ctx, cls_buffer h, unsigned arg, const char *name,
                       cl_mem before, size_t size);
size_t cls__guard_npending(const cls_context *ctx);
void cls__guard_pending_at(const cls_context *ctx, size_t i, cls_buffer *h, size_t *size);
/* The launch (seq, position, write stamp) was enqueued, and pending i was
 * copied into `after` (NULL: it could not be; unchecked) by command
 * after_seq of `stream`: compared once that completes. */
void cls__guard_watch(cls_context *ctx, size_t i, cl_mem after, uint64_t after_seq, int stream,
                      uint64_t seq, uint64_t position, uint64_t stamp, const char *kernel);
/* The launch is done with (enqueued or not): what is still pending goes. */
void cls__guard_pending_end(cls_context *ctx);

/* A buffer is freed: its checks go. */
void cls__guard_forget(cls_context *ctx, cls_buffer h);

#endif /* CLS_GUARD_H */
