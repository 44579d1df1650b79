/* Guard mode: guards around every buffer, checked after the launches that
 * could have crossed them, and a canary in what a launch declared it
 * writes.  The guards are written and read through a queue of guard mode's
 * own: no user command names a guard, so the only commands that can touch
 * one are launches that wrote out of bounds, and those are complete when
 * the guards are read. */
#include "guard/guard.h"
#include "failure/failure.h"
#include "failure/inflight.h"
#include "memory/handle.h"
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
};

struct cls__guard {
  cl_command_queue q;
  size_t before;       /* guard bytes before the data: the carve alignment */
  struct check *checks; /* submission order */
  size_t nchecks, capchecks;
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
  return CLS_OK;
}

void cls__guard_destroy(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  if (!g)
    return;
  clFinish(g->q);
  clReleaseCommandQueue(g->q);
  free(g->checks);
  free(g->due);
  free(g->scratch);
  free(g);
  ctx->guard = NULL;
  ctx->hooks.polled = NULL;
  ctx->hooks.holds = NULL;
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
      ctx, CLS_EGUARD, 0, "launch", slot->canary_kernel, slot->canary_stream,
      slot->canary_position, false,
      "guard canary: '%s' declared buffer %#llx CLS_OUT but left %zu of %zu bytes read "
      "unwritten, the first at offset %zu",
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

void cls__guard_committed(cls_context *ctx, const struct cls__cmd *cmd, uint64_t position) {
  struct cls__guard *g = ctx->guard;
  bool launch = cmd->kind == CLS__CMD_LAUNCH;
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__binding *b = &cmd->bind[i];
    if (!(b->access & CLS_WRITE))
      continue;
    struct cls__slot *slot = b->slot;
    slot->canary_kernel = launch && b->access == CLS_WRITE ? cmd->kcmd.name : NULL;
    slot->canary_stream = cmd->stream->id;
    slot->canary_position = position;
    if (!launch)
      continue; /* clstream checks a transfer's range itself */
    if (!cls__grow((void **)&g->checks, &g->capchecks, g->nchecks + 1, sizeof *g->checks, 16))
      continue; /* out of memory: this launch goes unchecked */
    g->checks[g->nchecks++] = (struct check){.h = b->handle, .stream = cmd->stream->id,
                                             .seq = cmd->seq, .position = position,
                                             .kernel = cmd->kcmd.name};
  }
}

bool cls__guard_holds(const cls_context *ctx, const struct cls__log_entry *e) {
  const struct cls__guard *g = ctx->guard;
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

/* One buffer's due checks: the first and the last of `ncand` launches. */
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
      cls__inflight_failed_as(ctx, first->stream, first->seq, CLS_EGUARD, detail);
  if (!f) /* the launch is no longer logged: the buffer takes it */
    f = cls__failure_mint(ctx, CLS_EGUARD, 0, "launch", first->kernel, first->stream,
                          first->position, true, "%s", detail);
  if (!f)
    return;
  slot = cls__resolve(ctx, first->h); /* a replay does not free, but be sure */
  if (slot) {
    cls__slot_set_failure(slot, f);
    struct cls__slot *o = neighbour(ctx, first->h, slot, r);
    if (o)
      cls__slot_set_failure(o, f);
    write_guards(ctx, slot); /* the next crossing is found anew */
  }
  cls__failure_unref(f);
}

void cls__guard_check(cls_context *ctx) {
  struct cls__guard *g = ctx->guard;
  if (!g->nchecks || g->checking)
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
  /* Per buffer: its first and last due launch, in submission order. */
  for (size_t i = 0; i < ndue; i++) {
    if (!c[i].h.bits)
      continue;
    size_t last = i, ncand = 1;
    for (size_t j = i + 1; j < ndue; j++)
      if (c[j].h.bits == c[i].h.bits) {
        last = j;
        ncand++;
      }
    struct check first = c[i], lastc = c[last];
    for (size_t j = i + 1; j < ndue; j++)
      if (c[j].h.bits == first.h.bits)
        c[j].h.bits = 0;
    check_buffer(ctx, &first, ncand, &lastc);
  }
  g->checking = false;
}
