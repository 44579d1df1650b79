/* Guard mode: guards around every buffer, checked after the launches that
 * could have crossed them, and a canary in what a launch declared it
 * writes.  The guards are written and read through a queue of guard mode's
 * own: no user command names a guard, so the only commands that can touch
 * one are launches that wrote out of bounds, and those are complete when
 * the guards are read. */
#include "guard/guard.h"
#include "failure/failure.h"
#include "failure/poll.h"
#include "base/handle.h"
#include "stream/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A launch that may have written buffer `h`, to check once complete. */
struct check {
  cls_buffer h;
  int stream;
  uint64_t seq, position;
  const char *kernel; /* lives as long as the context */
  bool wrote;         /* declared it writes h; else h is CLS_IN, written through */
  uint64_t order;     /* of submission, across streams */
};

/* F11: a CLS_IN binding of an argument the kernel may write, copied into
 * `before` ahead of its launch and into `after` behind it, on the
 * launch's stream; compared once `after_seq` has completed. */
struct watch {
  cls_buffer h;
  int stream;
  unsigned arg;
  uint64_t seq, position, stamp; /* the launch's */
  uint64_t after_seq;
  const char *kernel;
  char name[64];                 /* the argument's, "" where unknown */
  cl_mem before, after;
  size_t size;
};

/* A shadow of guard mode's own, kept for the next watch of its size. */
struct shadow {
  cl_mem mem;
  size_t size;
};

struct cls__guard {
  cl_command_queue q;
  struct watch *pending; /* of the launch being made: before copies taken */
  size_t npending, cappending;
  struct watch *watches; /* launched, to compare once complete */
  size_t nwatches, capwatches;
  struct shadow *spare;
  size_t nspare, capspare;
  size_t before;       /* guard bytes before the data: the carve alignment */
  struct check *checks; /* submission order */
  size_t nchecks, capchecks;
  uint64_t ordered;     /* checks listed so far: their `order` */
  struct check *due;    /* the checks one cls__guard_check makes; reused */
  size_t capdue;
  bool checking;        /* a check's replay polls: no check inside it */
  unsigned char *scratch; /* guard bytes as read, and as written */
  size_t capscratch;
};

static const unsigned char canary = CLS__GUARD_CANARY;
enum { CANARY_RUN = 4 }; /* shorter runs are too likely in real data */

/* The guard pattern varies with the position, so a kernel that writes one
 * value over a guard cannot leave it as it was. */
static unsigned char guard_byte(size_t i) { return (unsigned char)(0xA5u ^ (i * 37u)); }

int cls__guard_parse(const char *text, bool *on) {
  if (strcmp(text, "0") == 0 || strcmp(text, "1") == 0) {
    *on = text[0] == '1';
    return CLS_OK;
  }
  return cls__error(CLS_ECONFIG, 0, "CLS_GUARD: '%s' is neither 0 nor 1", text);
}

int cls__guard_create(cls_context *ctx) {
  struct cls__guard *g = calloc(1, sizeof *g);
  if (!g)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  cl_int crc;
  g->q = clCreateCommandQueue(ctx->clctx, ctx->device, 0, &crc);
  if (crc != CL_SUCCESS) {
    free(g);
    return cls__error(CLS_ECL, crc, "guard mode: creating its queue failed: %s",
                      cls_cl_status_name(crc));
  }
  size_t align = ctx->info.base_addr_align < 64 ? 64 : ctx->info.base_addr_align;
  g->before = align;
  ctx->guard = g;
  ctx->hooks.polled = cls__guard_check;
  ctx->hooks.holds = cls__guard_holds;
  ctx->hooks.guard = (struct cls__guard_hooks){.before = cls__guard_before,
                                               .span = cls__guard_span,
                                               .arm = cls__guard_arm,
                                               .forget = cls__guard_forget};
  return CLS_OK;
}

void cls__guard_destroy(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  if (!g)
    return;
  clFinish(g->q);
  clReleaseCommandQueue(g->q);
  for (size_t i = 0; i < g->npending; i++)
    clReleaseMemObject(g->pending[i].before);
  for (size_t i = 0; i < g->nwatches; i++) {
    clReleaseMemObject(g->watches[i].before);
    clReleaseMemObject(g->watches[i].after);
  }
  for (size_t i = 0; i < g->nspare; i++)
    clReleaseMemObject(g->spare[i].mem);
  free(g->pending);
  free(g->watches);
  free(g->spare);
  free(g->checks);
  free(g->due);
  free(g->scratch);
  free(g);
  ctx->guard = NULL;
  ctx->hooks.polled = NULL;
  ctx->hooks.holds = NULL;
  ctx->hooks.guard = (struct cls__guard_hooks){0};
}

size_t cls__guard_before(const cls_context *ctx) { return ctx->guard->before; }

size_t cls__guard_span(const cls_context *ctx, size_t size, size_t align) {
  /* Data after `before` bytes; at least `before` bytes after it too. */
  size_t g = ctx->guard->before;
  return g + (size + g + align - 1) / align * align;
}

static bool scratch(struct cls__guard *g, size_t n) {
  return cls__grow((void **)&g->scratch, &g->capscratch, n, 1, 256);
}

/* The two regions of slot's span that are guard: [off[i], off[i] + len[i]). */
static void regions(const struct cls__guard *g, const struct cls__slot *slot, size_t off[2],
                    size_t len[2]) {
  off[0] = slot->offset;
  len[0] = g->before;
  off[1] = slot->offset + g->before + slot->size;
  len[1] = slot->span - g->before - slot->size;
}

static int write_guards(cls_context *ctx, const struct cls__slot *slot) {
  struct cls__guard *g = ctx->guard;
  size_t off[2], len[2];
  regions(g, slot, off, len);
  for (int r = 0; r < 2; r++) {
    if (!scratch(g, len[r]))
      return cls__error(CLS_ENOMEM, 0, "out of host memory");
    for (size_t i = 0; i < len[r]; i++)
      g->scratch[i] = guard_byte(i);
    cl_int crc = clEnqueueWriteBuffer(g->q, slot->page->mem, CL_TRUE, off[r], len[r], g->scratch,
                                      0, NULL, NULL);
    if (crc != CL_SUCCESS)
      return cls__error(CLS_ECL, crc, "guard mode: writing a buffer's guards failed: %s",
                        cls_cl_status_name(crc));
  }
  return CLS_OK;
}

int cls__guard_arm(cls_context *ctx, struct cls__slot *slot) { return write_guards(ctx, slot); }

/* ------------------------------------------------------------------ */
/* The canary                                                          */
/* ------------------------------------------------------------------ */

int cls__guard_canary_read(cls_context *ctx, cls_buffer h, struct cls__slot *slot,
                           size_t offset, const void *bytes, size_t size) {
  if (!slot->canary_kernel)
    return CLS_OK;
  const unsigned char *p = bytes;
  size_t first = SIZE_MAX, unwritten = 0;
  for (size_t i = 0; i < size;) {
    size_t j = i;
    while (j < size && p[j] == canary)
      j++;
    if (j - i >= CANARY_RUN) {
      if (first == SIZE_MAX)
        first = i;
      unwritten += j - i;
    }
    i = j == i ? i + 1 : j;
  }
  if (first == SIZE_MAX)
    return CLS_OK;
  struct cls__failure *f = cls__failure_mint(
      ctx, CLS_EGUARD, 0,
      &(struct cls__cmd_at){.stream = slot->canary_stream,
                            .kind = CLS__CMD_LAUNCH,
                            .position = slot->canary_position,
                            .op = "launch",
                            .kernel = slot->canary_kernel},
      false,
      "guard canary: '%s' declared buffer %#llx CLS_OUT but left %zu of %zu bytes read "
      "unwritten, the first at offset %zu (a launch that writes part of a buffer, as a "
      "tile at a global offset does, binds it CLS_INOUT to keep the rest)",
      slot->canary_kernel, (unsigned long long)h.bits, unwritten, size, offset + first);
  if (f) {
    cls__slot_set_failure(slot, f);
    cls__failure_unref(f);
  }
  return CLS_EGUARD;
}

/* ------------------------------------------------------------------ */
/* Checks after launches                                               */
/* ------------------------------------------------------------------ */

void cls__guard_committed(cls_context *ctx, const struct cls__cmd *cmd, uint64_t position,
                          uint32_t through) {
  struct cls__guard *g = ctx->guard;
  /* A foreign command's writes are checked as a launch's (the library may
   * write past a buffer); only a launch had its CLS_OUT canary filled. */
  bool launch = cmd->kind == CLS__CMD_LAUNCH, named = cls__cmd_named(cmd->kind);
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__binding *b = &cmd->bind[i];
    bool wrote = b->access & CLS_WRITE;
    if (!wrote && !(through >> i & 1))
      continue;
    struct cls__slot *slot = b->slot;
    if (wrote) {
      slot->canary_kernel = launch && b->access == CLS_WRITE ? cmd->kcmd.name : NULL;
      slot->canary_stream = cmd->stream->id;
      slot->canary_position = position;
    }
    if (!named || slot->image)
      continue; /* clstream checks a transfer's range itself; an image has
                   no guard bytes (OpenCL bounds its accesses) */
    if (!cls__grow((void **)&g->checks, &g->capchecks, g->nchecks + 1, sizeof *g->checks, 16))
      continue; /* out of memory: this launch goes unchecked */
    g->checks[g->nchecks++] = (struct check){.h = b->handle, .stream = cmd->stream->id,
                                             .seq = cmd->seq, .position = position,
                                             .kernel = cmd->kcmd.name, .wrote = wrote,
                                             .order = ++g->ordered};
  }
}

bool cls__guard_holds(const cls_context *ctx, const struct cls__log_entry *e) {
  const struct cls__guard *g = ctx->guard;
  for (size_t i = 0; i < g->nwatches; i++)
    if (g->watches[i].stream == e->stream && g->watches[i].seq == e->seq)
      return true;
  for (size_t i = 0; i < g->nchecks; i++)
    if (g->checks[i].stream == e->stream && g->checks[i].seq == e->seq)
      return true;
  return false;
}

void cls__guard_forget(cls_context *ctx, cls_buffer h) {
  struct cls__guard *g = ctx->guard;
  size_t j = 0;
  for (size_t i = 0; i < g->nchecks; i++)
    if (g->checks[i].h.bits != h.bits)
      g->checks[j++] = g->checks[i];
  g->nchecks = j;
}

static bool due(cls_context *ctx, const struct check *c) {
  struct cls__stream *s = cls__stream_peek(ctx, c->stream);
  return !s || s->completed >= c->seq;
}

/* Bytes of the guard regions that differ from the pattern, and where the
 * first one is: region r (0 before, 1 after), index in it.  -1: an error
 * reading them (recorded), 0: intact. */
static long damaged(cls_context *ctx, const struct cls__slot *slot, int *region, size_t *at) {
  struct cls__guard *g = ctx->guard;
  size_t off[2], len[2];
  regions(g, slot, off, len);
  long n = 0;
  for (int r = 0; r < 2; r++) {
    if (!scratch(g, len[r]))
      return -1;
    cl_int crc = clEnqueueReadBuffer(g->q, slot->page->mem, CL_TRUE, off[r], len[r], g->scratch,
                                     0, NULL, NULL);
    if (crc != CL_SUCCESS) {
      cls__error(CLS_ECL, crc, "guard mode: reading a buffer's guards failed: %s",
                 cls_cl_status_name(crc));
      return -1;
    }
    for (size_t i = 0; i < len[r]; i++)
      if (g->scratch[i] != guard_byte(i)) {
        if (!n) {
          *region = r;
          *at = i;
        }
        n++;
      }
  }
  return n;
}

/* The live slot whose span touches slot's guard region r in its page. */
static struct cls__slot *neighbour(cls_context *ctx, cls_buffer h, const struct cls__slot *slot,
                                   int r) {
  struct cls__stream *s = cls__stream_peek(ctx, cls__handle_stream(h));
  for (size_t i = 0; s && i < s->mem.nslots; i++) {
    struct cls__slot *o = &s->mem.slots[i];
    if (o == slot || o->live_gen == CLS__SLOT_FREE || o->page != slot->page)
      continue;
    if (r == 1 ? o->offset == slot->offset + slot->span : o->offset + o->span == slot->offset)
      return o;
  }
  return NULL;
}

/* One buffer's due checks: the first and the last of `ncand` launches.
 * The record is the first's, and the buffer takes it where the first
 * declared it writes the buffer; a first that had it CLS_IN leaves the
 * buffer's record alone (its bytes are F11's to compare), whichever
 * launches the same poll found complete with it. */
static void check_buffer(cls_context *ctx, const struct check *first, size_t ncand,
                         const struct check *last) {
  struct cls__slot *slot = cls__resolve(ctx, first->h);
  if (!slot)
    return;
  int r = 0;
  size_t at = 0;
  long n = damaged(ctx, slot, &r, &at);
  if (n <= 0)
    return;
  char detail[CLS__MESSAGE_MAX];
  /* Where the first changed byte is, as an offset from the buffer's start. */
  long long first_at = r ? (long long)(slot->size + at) : -(long long)(ctx->guard->before - at);
  int len = snprintf(detail, sizeof detail,
                     "guard mode: out-of-bounds write %s buffer %#llx (%ld guard bytes changed, "
                     "the first at offset %lld) by '%s' on stream %d at position %llu",
                     r ? "past the end of" : "before the start of",
                     (unsigned long long)first->h.bits, n, first_at, first->kernel,
                     first->stream, (unsigned long long)first->position);
  if (ncand > 1 && len > 0 && (size_t)len < sizeof detail)
    snprintf(detail + len, sizeof detail - (size_t)len,
             " or a later launch up to '%s' on stream %d at position %llu", last->kernel,
             last->stream, (unsigned long long)last->position);
  struct cls__failure *f =
      cls__poll_failed_as(ctx, first->stream, first->seq, CLS_EGUARD, detail, (cls_buffer){0});
  if (!f) /* the launch is no longer logged: the buffer takes it */
    f = cls__failure_mint(ctx, CLS_EGUARD, 0,
                          &(struct cls__cmd_at){.stream = first->stream,
                                                .kind = CLS__CMD_LAUNCH,
                                                .position = first->position,
                                                .op = "launch",
                                                .kernel = first->kernel},
                          true, "%s", detail);
  if (!f)
    return;
  slot = cls__resolve(ctx, first->h); /* a replay does not free, but be sure */
  if (slot) {
    if (first->wrote)
      cls__slot_set_failure(slot, f);
    struct cls__slot *o = neighbour(ctx, first->h, slot, r);
    if (o)
      cls__slot_set_failure(o, f);
    write_guards(ctx, slot); /* the next crossing is found anew */
  }
  cls__failure_unref(f);
}

/* ------------------------------------------------------------------ */
/* F11: CLS_IN bindings of arguments the kernel may write              */
/* ------------------------------------------------------------------ */

cl_mem cls__guard_shadow(cls_context *ctx, size_t size) {
  struct cls__guard *g = ctx->guard;
  for (size_t i = 0; i < g->nspare; i++)
    if (g->spare[i].size == size) {
      cl_mem m = g->spare[i].mem;
      g->spare[i] = g->spare[--g->nspare];
      return m;
    }
  cl_int crc;
  cl_mem m = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, size, NULL, &crc);
  if (crc != CL_SUCCESS) {
    cls__error(CLS_ECL, crc, "guard mode: a %zu-byte shadow of a CLS_IN buffer: %s", size,
               cls_cl_status_name(crc));
    return NULL;
  }
  return m;
}

static void shadow_put(struct cls__guard *g, cl_mem m, size_t size) {
  if (!m)
    return;
  if (g->nspare < 8 &&
      cls__grow((void **)&g->spare, &g->capspare, g->nspare + 1, sizeof *g->spare, 8)) {
    g->spare[g->nspare++] = (struct shadow){m, size};
    return;
  }
  clReleaseMemObject(m);
}

int cls__guard_pending(cls_context *ctx, cls_buffer h, unsigned arg, const char *name,
                       cl_mem before, size_t size) {
  struct cls__guard *g = ctx->guard;
  if (!cls__grow((void **)&g->pending, &g->cappending, g->npending + 1, sizeof *g->pending, 4)) {
    shadow_put(g, before, size);
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  }
  struct watch *w = &g->pending[g->npending++];
  *w = (struct watch){.h = h, .arg = arg, .before = before, .size = size};
  snprintf(w->name, sizeof w->name, "%s", name);
  return CLS_OK;
}

size_t cls__guard_npending(const cls_context *ctx) { return ctx->guard->npending; }

void cls__guard_pending_at(const cls_context *ctx, size_t i, cls_buffer *h, size_t *size) {
  *h = ctx->guard->pending[i].h;
  *size = ctx->guard->pending[i].size;
}

void cls__guard_watch(cls_context *ctx, size_t i, cl_mem after, uint64_t after_seq, int stream,
                      uint64_t seq, uint64_t position, uint64_t stamp, const char *kernel) {
  struct cls__guard *g = ctx->guard;
  struct watch w = g->pending[i];
  w.after_seq = after_seq; /* never 0: the launch before it has a seq */
  w.after = after;
  w.after_seq = after_seq;
  w.stream = stream;
  w.seq = seq;
  w.position = position;
  w.stamp = stamp;
  w.kernel = kernel;
  g->pending[i].before = NULL; /* the watch owns it now */
  if (!after ||
      !cls__grow((void **)&g->watches, &g->capwatches, g->nwatches + 1, sizeof *g->watches, 8)) {
    shadow_put(g, w.before, w.size); /* this launch goes unchecked */
    shadow_put(g, after, w.size);
    return;
  }
  g->watches[g->nwatches++] = w;
}

void cls__guard_pending_end(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  for (size_t i = 0; i < g->npending; i++)
    shadow_put(g, g->pending[i].before, g->pending[i].size);
  g->npending = 0;
}

/* The two copies of watch w differ: the kernel wrote what it declared it
 * reads.  Its write set and what read the buffer after it take a
 * CLS_EGUARD failure (F8), and so does the buffer. */
static void wrote_input(cls_context *ctx, const struct watch *w, size_t changed, size_t first) {
  char detail[512];
  snprintf(detail, sizeof detail,
           "guard mode: kernel '%s' wrote argument %u%s%s%s, declared CLS_IN (%zu of %zu bytes "
           "changed, the first at offset %zu), at position %llu on stream %d: declare it "
           "CLS_INOUT, or keep the kernel from writing it",
           w->kernel, w->arg, w->name[0] ? " ('" : "", w->name, w->name[0] ? "')" : "", changed,
           w->size, first, (unsigned long long)w->position, w->stream);
  struct cls__failure *f =
      cls__poll_failed_as(ctx, w->stream, w->seq, CLS_EGUARD, detail, w->h);
  if (!f) /* the launch is no longer logged: the buffer takes it */
    f = cls__failure_mint(ctx, CLS_EGUARD, 0,
                          &(struct cls__cmd_at){.stream = w->stream,
                                                .kind = CLS__CMD_LAUNCH,
                                                .position = w->position,
                                                .op = "launch",
                                                .kernel = w->kernel},
                          true, "%s", detail);
  if (!f)
    return;
  struct cls__slot *slot = cls__resolve(ctx, w->h);
  if (slot && slot->write_stamp <= w->stamp) /* not written since by a declared writer */
    cls__slot_set_failure(slot, f);
  cls__failure_unref(f);
}

/* Whether watch w's two copies differ: *changed bytes, the first at
 * *first.  A copy that cannot be read leaves the launch unchecked. */
static bool differs(struct cls__guard *g, const struct watch *w, size_t *changed, size_t *first) {
  *changed = *first = 0;
  if (!scratch(g, 2 * w->size) ||
      clEnqueueReadBuffer(g->q, w->before, CL_TRUE, 0, w->size, g->scratch, 0, NULL, NULL) !=
          CL_SUCCESS ||
      clEnqueueReadBuffer(g->q, w->after, CL_TRUE, 0, w->size, g->scratch + w->size, 0, NULL,
                          NULL) != CL_SUCCESS)
    return false;
  for (size_t j = 0; j < w->size; j++)
    if (g->scratch[j] != g->scratch[w->size + j] && !(*changed)++)
      *first = j;
  return *changed != 0;
}

/* The watches whose after copy completed.  They stay listed until all
 * are made (a failure found replays the log, which polls, and the launch
 * must stay logged meanwhile: cls__guard_holds). */
static void check_watches(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  size_t n = g->nwatches;
  for (size_t i = 0; i < n; i++) {
    struct watch *w = &g->watches[i];
    struct cls__stream *s = cls__stream_peek(ctx, w->stream);
    if (s && s->completed < w->after_seq)
      continue;
    size_t changed, first;
    if (differs(g, w, &changed, &first))
      wrote_input(ctx, w, changed, first);
    w->after_seq = 0; /* made */
  }
  size_t keep = 0;
  for (size_t i = 0; i < g->nwatches; i++) {
    struct watch *w = &g->watches[i];
    if (w->after_seq) {
      g->watches[keep++] = *w;
      continue;
    }
    shadow_put(g, w->before, w->size);
    shadow_put(g, w->after, w->size);
  }
  g->nwatches = keep;
}

void cls__guard_check(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  if (g->checking)
    return;
  if (g->nwatches) {
    g->checking = true;
    check_watches(ctx);
    g->checking = false;
  }
  if (!g->nchecks)
    return;
  /* Take the due checks out first: the replay a damaged guard starts may
   * poll, and the next check must not see them again. */
  if (!cls__grow((void **)&g->due, &g->capdue, g->nchecks, sizeof *g->due, 16))
    return; /* out of memory: they are made at a later poll */
  struct check *c = g->due;
  size_t ndue = 0, keep = 0;
  for (size_t i = 0; i < g->nchecks; i++) {
    if (due(ctx, &g->checks[i]))
      c[ndue++] = g->checks[i];
    else
      g->checks[keep++] = g->checks[i];
  }
  g->nchecks = keep;
  g->checking = true;
  /* Per buffer: its first due launch, and the last, in submission order,
   * of those that could have written its guards by now: the due ones and
   * those not yet seen complete (enqueued, they may have run). */
  for (size_t i = 0; i < ndue; i++) {
    if (!c[i].h.bits)
      continue;
    size_t ncand = 1;
    struct check first = c[i], lastc = c[i];
    for (size_t j = i + 1; j < ndue; j++)
      if (c[j].h.bits == c[i].h.bits) {
        lastc = c[j];
        ncand++;
      }
    for (size_t j = 0; j < g->nchecks; j++)
      if (g->checks[j].h.bits == first.h.bits) {
        ncand++;
        if (g->checks[j].order > lastc.order)
          lastc = g->checks[j];
      }
    for (size_t j = i + 1; j < ndue; j++)
      if (c[j].h.bits == first.h.bits)
        c[j].h.bits = 0;
    check_buffer(ctx, &first, ncand, &lastc);
  }
  g->checking = false;
}
