/* Internal: buffer memory (memory.c).  Buffers are carved from pages on
 * the stream they were allocated on; a freed block is reused only once its
 * uses on every stream have completed.  Handles resolve to slots here. */
#ifndef CLS_MEMORY_H
#define CLS_MEMORY_H

#include "core/context.h"

/* Resolves a handle to its live slot; NULL with *err set to CLS_ENULL,
 * CLS_EFOREIGN or CLS_ESTALE otherwise.  Never touches memory a bad handle
 * names beyond bounds-checked slot lookups.  Inline: every binding of
 * every command takes it. */
static inline struct cls__slot *cls__resolve(cls_context *ctx, cls_buffer h) {
  if ((unsigned)(h.bits >> CLS__TAG_SHIFT) != ctx->tag)
    return NULL;
  /* A stream never created has no slots: the bound check covers it. */
  const struct cls__stream *s = &ctx->pool.streams[cls__handle_stream(h)];
  size_t index = h.bits & ((1u << CLS__INDEX_BITS) - 1);
  uint32_t gen = (uint32_t)((h.bits >> CLS__INDEX_BITS) & ((1u << CLS__GEN_BITS) - 1));
  if (index >= s->mem.nslots)
    return NULL;
  struct cls__slot *slot = &s->mem.slots[index];
  if (slot->live_gen != gen)
    return NULL;
  return slot;
}
/* Why cls__resolve(h) returned NULL: CLS_ENULL, CLS_EFOREIGN or CLS_ESTALE. */
static inline int cls__resolve_error(cls_context *ctx, cls_buffer h) {
  if ((unsigned)(h.bits >> CLS__TAG_SHIFT) != ctx->tag)
    return h.bits == 0 ? CLS_ENULL : CLS_EFOREIGN; /* the tag is never 0 */
  return CLS_ESTALE;
}
cls_buffer cls__handle_make(cls_context *ctx, int stream, int index, uint32_t gen);

int cls__memory_alloc(cls_context *ctx, struct cls__stream *s, size_t size,
                      cls_buffer *out);
int cls__memory_free(cls_context *ctx, cls_buffer h);
void cls__memory_fini(cls_context *ctx, struct cls__stream *s);

#endif /* CLS_MEMORY_H */
