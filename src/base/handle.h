/* Internal: buffer handles.  A handle names (context tag, stream, slot
 * index, generation); resolving it checks each before touching the slot,
 * so a freed, foreign or forged handle is refused, never dereferenced. */
#ifndef CLS_HANDLE_H
#define CLS_HANDLE_H

#include "base/context.h"

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
/* A handle for slot `index` of `stream`, generation `gen`. */
static inline cls_buffer cls__handle_make(const cls_context *ctx, int stream, int index,
                                          uint32_t gen) {
  cls_buffer h;
  h.bits = ((uint64_t)ctx->tag << CLS__TAG_SHIFT) |
           ((uint64_t)stream << (CLS__INDEX_BITS + CLS__GEN_BITS)) |
           ((uint64_t)gen << CLS__INDEX_BITS) | (uint64_t)index;
  return h;
}

#endif /* CLS_HANDLE_H */
