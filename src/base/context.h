/* Internal: the context and the state it owns.
 *
 * A context owns its devices (one, or several of one platform), its stream pool (streams, their memory pools
 * and buffer slots), its failure table, the F8 log of the work in flight,
 * the pending non-blocking reads and the program cache.  A driver owns
 * only its own scheduling state (driver.h).  The context lock is held by
 * every public entry point for its whole duration, so nothing below locks
 * again.  Types only, and the two lock calls: each layer's functions are in
 * its own header. */
#ifndef CLS_CONTEXT_H
#define CLS_CONTEXT_H

#include "base/record.h"
#include "base/stream.h"
#include "cache/cache.h"
#include "factory/fault.h"
#include "util/lock.h"
#include "util/log.h"

struct cls_driver;
struct cls__guard;
struct cls_driver_ops;
struct cls__log_entry;
struct cls__log_binding;
struct cls__pending_read;
struct cls__trace;
struct cls_program;

/* cls_context.live while the context lives; cleared by
 * cls_context_destroy (its memory then kept a while: src/api/context.c). */
#define CLS__CONTEXT_LIVE 0x636c7378u
/* Recovery: how many of the newest commands taken to run again a context
 * remembers (struct cls__keep, taken). */
#define CLS__KEEP_TAKEN 64

/* $CLS_RELEASE_EARLY (F8a): whether a ranged stream's factory may release
 * an event before its command finished. */
enum { CLS__EARLY_AUTO, CLS__EARLY_ON, CLS__EARLY_OFF };

struct cls_context {
  struct cls__lock lock;
  unsigned tag;            /* 12 bits, never 0: stamps buffer handles */
  /* CLS__CONTEXT_LIVE until destroyed: read only where the lock is
   * contended, which a destroyed context's always is (it stays held). */
  atomic_uint live;
  struct cls_device_info info;
  bool said_no_access_info; /* F11's "not checked" is logged once */
  bool strict;             /* F11: CLS_IN on a pointer the kernel may
                              write is refused (CLS_STRICT), not trusted */
  bool foreign_seen;       /* a cls_foreign call was made, or fault
                              injection loses queues after the enqueue
                              (its gate): an event of
                              another queue (a user event) may fail
                              later (a capture's plan runs keep their
                              events, its command-buffer runs go
                              command by command: capture-impl.h) */
  size_t max_work_items;   /* of one launch: what the device's size_t
                              holds (CL_DEVICE_ADDRESS_BITS) */
  cl_platform_id platform;
  cl_device_id device;     /* devices[0] */
  cl_context clctx;        /* over every device of devices[] */
  /* The context's devices (src/core/relocate.c): at least one; info is
   * dev_info[0].  Streams are placed on them by `placement` unless
   * cls_stream_place chose (placed[id]: device + 1, 0: the policy). */
  int ndevices;
  cl_device_id devices[CLS_MAX_DEVICES];
  struct cls_device_info dev_info[CLS_MAX_DEVICES];
  int placement;           /* CLS__PLACE_FIRST or CLS__PLACE_SPREAD */
  unsigned char placed[CLS_MAX_STREAMS];
  int relocate;            /* CLS_RELOCATE: CLS__RELOCATE_OFF, _SAME, _OTHER */
  unsigned recover;        /* CLS_RECOVER: the most times one command a
                              lost queue took is run again on the fresh
                              one (0: off; only with relocation on) */
  unsigned replaying;      /* runs again of the command in the call
                              (src/core/command.c, run_again) */
  uint64_t replay_origin;  /* the write stamp a kept command had when first
                              submitted, while keep.c runs it again: its
                              place in program order (cls__keep_origin) */
  bool rewaiting;          /* an upload enqueued again behind a failed
                              writer (command.c, behind_failed_upload) */
  /* F8a: ranged attribution in force (src/failure/attribution.c), the most
   * commands a stream runs without an event, and why the mode is what it
   * is (a static sentence). */
  bool ranged;
  unsigned event_every;
  const char *attribution_why;
  int release_early; /* CLS_RELEASE_EARLY: CLS__EARLY_AUTO, _ON, _OFF
                        (src/stream/pool.c: CLS_BACKEND_RELEASE_EARLY) */
  uint64_t losses_kept;    /* recovery: times a driver kept a lost queue's
                              tasks for a fresh one (cls_driver_kept) */
  /* Recovery (src/core/keep.c): the commands in flight, in submission
   * order, each re-enqueueable until proven complete; kept only with
   * relocation and recovery on.  nlost: entries a poll found lost after
   * their enqueue (or failed behind one), to run again at the next safe
   * point; busy: that replay is running. */
  struct cls__keep {
    struct cls__kept *ring;
    size_t head, len, cap, nlost;
    bool busy;
    /* Argument bytes past an entry's inline ones: spans in ring order,
     * compacted and grown amortised (no allocation per launch); scratch:
     * a replayed launch's copy (the pool may move while it is kept). */
    unsigned char *over, *scratch;
    size_t over_used, over_cap, scratch_cap;
    /* The newest commands taken to run again (stream, position: what a
     * record of this process names), a ring: a record one of them is the
     * root of is replaced by that run (cls__keep_taken). */
    struct { int stream; uint64_t position; } taken[CLS__KEEP_TAKEN];
    unsigned ntaken;
    /* The commands run again whose log entries may still be logged, in
     * write-stamp order: each one's stamp and origin, its place in
     * program order (cls__keep_placed; its kept entry may be gone, its
     * stream having proved it complete). */
    struct cls__again { uint64_t stamp, origin; } *again;
    size_t nagain, again_cap;
  } keep;
  uint64_t lost_mask;      /* streams whose queue was found lost, not yet
                              relocated (found during a poll: moved at the
                              next command or sync, cls__relocate_lost) */
  size_t page_size;
  unsigned long long page_bytes; /* device memory held in pages */
  struct cls_quirks quirks;      /* the device's, probed once per process
                                    (quirks.c); fixed after creation */
  struct cls__logger logger; /* diagnostics (CLS_LOG) */
  struct cls__fault_config *faults; /* owned; NULL: none */
  struct cls__fault_data fault_data; /* the fault factory's data */
  /* The timeline trace (src/trace/trace.h); NULL: not tracing, and then
   * each command pays one predictable branch for it. */
  struct cls__trace *trace;
  /* The driver: its ops, and its state (opaque to the core). */
  const struct cls_driver_ops *driver_ops;
  struct cls_driver *driver;
  struct cls__stream_pool pool;
  struct cls__failures failures;
  struct cls_program *programs;
  struct cls__cache cache;       /* the persistent program cache */
  /* F8: the log of the commands in flight, in submission order
   * (src/failure/log.h). */
  struct cls__log {
    struct cls__log_entry *ring; /* the capacity is a power of two */
    size_t head, len, cap;
    size_t causes;         /* entries holding a cause: with none, a log
                              whose streams all finished drops at once */
    /* Bindings of entries with more than fit in one: CLS_MAX_ARGS for
     * each position of the log, allocated once the first such entry
     * comes. */
    struct cls__log_binding *overflow;
    /* Per stream, the last CLS__FOUND failures found after their enqueue
     * (references; [0] the newest), the write stamps of their logged
     * commands, and the context's stamp when each was found: what a
     * command the device failed behind one (quirk dependent_fails) was
     * queued behind (replay.c).  Two: a lost queue's commands may be
     * found one by one, and what waited on the first must still find it
     * once the second is found. */
#define CLS__FOUND 2
    struct cls__found {
      struct cls__failure *f;
      uint64_t lo, hi, known;
    } found[CLS_MAX_STREAMS][CLS__FOUND];
    unsigned nfound; /* records held: let go once no logged command is
                        older than what they knew (cls__log_prune) */
    /* Commands the device failed with its dependent status that found no
     * failure they were queued behind, and so failed on their own: each
     * moves to one found later while it is logged, as if found in the
     * other order (replay.c, cls__replay_behind_found).  The oldest goes
     * when a ninth comes. */
#define CLS__OWN 8
    struct cls__own {
      uint64_t seq, stamp; /* the stamp: that command, not a later one
                              of a stream made anew with its id */
      int stream;
    } own[CLS__OWN];
    unsigned nown;
  } log;
  /* Non-blocking downloads waiting for a sync. */
  struct cls__pending_read *reads; /* list, newest first */
  /* The capture in progress (src/api/capture.c); NULL: commands run. */
  struct cls_capture *capture;
  unsigned captures;  /* begun: a capture's number, as reports name it */
  /* CLS_CAPTURE: CLS__CAPTURE_AUTO, _PLAN, _CB or _COMMANDS (capture.c). */
  int capture_mode;
  bool said_no_cb;          /* "no command buffers here, the plan" once */
  /* Captures holding command buffers: released when the context goes
   * (cls__capture_detach_all), if their own destroy did not come first. */
  struct cls_capture *cb_captures;
  /* Bumped whenever a slot table may move (a slot taken), a slot is freed
   * or a program released: a replay re-resolves its handles and kernels
   * only when it changed since its last (capture.c). */
  uint64_t handles_epoch;
  uint64_t stamp;          /* last write stamp given out */
  /* Scratch for the F8 replay (src/failure/replay.c); reused, never
   * shrunk. */
  /* by handle, not slot: a buffer freed during the replay's window still
   * carries the taint to what read it */
  struct cls__taint { cls_buffer handle; uint64_t stamp; } *taint_set;
  size_t taint_cap;
  struct cls__guard *guard; /* guard mode's state (guard.h); NULL: off */
  /* Calls from a lower layer (memory/, failure/) into a layer above it,
   * set by that layer, so the includes and the direct calls only go down.
   * NULL: none. */
  struct cls__hooks {
    /* after each poll of a stream, before the F8 log is pruned (guard) */
    void (*polled)(cls_context *ctx);
    /* true while log entry e must stay in the log (guard) */
    bool (*holds)(const cls_context *ctx, const struct cls__log_entry *e);
    /* a buffer's cl_mem was released: the kernels forget the arguments
     * they last set, since the driver may reuse the address (programs,
     * set at creation).  Called by cls_free, never by a launch. */
    void (*released)(cls_context *ctx);
    /* recovery: the commands kept and found lost after their enqueue run
     * again (core/keep.c), called by the relocation that moved their
     * streams (set at creation) */
    void (*replay_kept)(cls_context *ctx);
    /* Guard mode's side of carving a buffer (memory.c), set with
     * ctx->guard by guard's create: the guard bytes before the data, the
     * span of a buffer with both guards, writing a new buffer's guards,
     * and forgetting a freed buffer's pending checks. */
    struct cls__guard_hooks {
      size_t (*before)(const cls_context *ctx);
      size_t (*span)(const cls_context *ctx, size_t size, size_t align);
      int (*arm)(cls_context *ctx, struct cls__slot *slot);
      void (*forget)(cls_context *ctx, cls_buffer h);
    } guard;
  } hooks;
  uint64_t sync_timeout_ns; /* CLS_SYNC_TIMEOUT; 0: wait as long as it takes */
  unsigned checks;          /* nonzero: guard mode, a deadline, several
                               devices (migrations counted) or automatic
                               relocation: the one test the hot path makes
                               for all four */
  int origin;               /* this process's rank + 1 (cls_wire_set_rank,
                               src/wire/wire.c); 0: not known */
  /* Foreign commands' labels (src/api/foreign.c), copied once each: the
   * F8 log and the scheduler's task lists keep a command's name as a
   * pointer that must live as long as the context. */
  char **labels;
  size_t nlabels, caplabels;
  /* Images (src/memory/image.c): each device's limits and formats, asked
   * at the first image call that needs them; NULL: not yet. */
  struct cls__image_caps *image_caps[CLS_MAX_DEVICES];
};

/* The stream if it exists, else NULL; no creation. */
static inline struct cls__stream *cls__stream_peek(cls_context *ctx, int id) {
  if (id < 0 || id >= CLS_MAX_STREAMS)
    return NULL;
  struct cls__stream *s = &ctx->pool.streams[id];
  return s->created ? s : NULL;
}
/* Whether an OpenCL status, returned for a command, means its queue is
 * lost rather than the command failed (docs/devices.md, "Lease expiry"). */
static inline bool cls__lost_status(cl_int status) { return status == CL_DEVICE_NOT_AVAILABLE; }
/* The status of a command that waited on a failed event: the
 * specification's, or PoCL 3.1's (-1, whatever the event failed with). */
static inline bool cls__behind_failed_status(cl_int status) {
  return status == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST || status == -1;
}
/* Number of failures minted so far: a driver that submits deferred work
 * while ordering compares it before and after (a failure was found). */
static inline uint64_t cls__failures_minted(const cls_context *ctx) {
  /* A lost queue whose tasks a driver kept asks for a retry too: the
   * retry relocates, and the kept tasks go to the fresh queue first. */
  return ctx->failures.minted + ctx->losses_kept;
}
/* CLS_RELOCATE (docs/devices.md): ctx->relocate. */
enum { CLS__RELOCATE_OFF, CLS__RELOCATE_SAME, CLS__RELOCATE_OTHER };
/* CLS_CAPTURE: how cls_capture_end replays (capture.c). */
enum { CLS__CAPTURE_AUTO, CLS__CAPTURE_PLAN, CLS__CAPTURE_CB, CLS__CAPTURE_COMMANDS };
/* CLS_RECOVER=on: a command is run again at most this many times. */
#define CLS__RECOVER_DEFAULT 2u

/* Every public entry point that returns a status takes the lock here,
 * once: the thread's error detail is cleared on the way in, so a call that
 * succeeds never shows the text of an earlier one (cls_context_destroy,
 * which returns nothing, takes the lock itself and keeps the detail).
 * The contended path waits, or refuses a destroyed context (CLS_ESTALE)
 * or a call from inside one of the context's callbacks on the thread that
 * holds the lock (CLS_EDRIVER), recorded: off the hot path (context.c). */
int cls__lock_slow(cls_context *ctx, const char *call);
static inline int cls__lock(cls_context *ctx, const char *call) {
  cls__error_clear();
  /* &cls__last: an address unique to this thread, already at hand. */
  if (__builtin_expect(!cls__lock_try(&ctx->lock, &cls__last), 0))
    return cls__lock_slow(ctx, call);
  return CLS_OK;
}
/* For the calls that read, without the lock, what is fixed at creation:
 * CLS_ESTALE, recorded, for a context destroyed (and still kept). */
int cls__context_gone(cls_context *ctx, const char *call);
#define CLS__LIVE(ctx, call)                                                        \
  do {                                                                              \
    if (atomic_load_explicit(&(ctx)->live, memory_order_relaxed) != CLS__CONTEXT_LIVE) \
      return cls__context_gone(ctx, call);                                          \
  } while (0)
/* cls__lock in a public entry point that returns a status. */
#define CLS__LOCK(ctx)                 \
  do {                                 \
    int cls__lrc_ = cls__lock(ctx, __func__); \
    if (cls__lrc_ < 0)                 \
      return cls__lrc_;                \
  } while (0)
static inline void cls__unlock(cls_context *ctx) { cls__lock_give(&ctx->lock); }

#endif /* CLS_CONTEXT_H */
