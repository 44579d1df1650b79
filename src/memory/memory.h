/* Internal: buffer memory (memory.c).  Buffers are carved from pages on
 * the stream they were allocated on; a freed block is reused only once its
 * uses on every stream have completed. */
#ifndef CLS_MEMORY_H
#define CLS_MEMORY_H

#include "base/handle.h"

int cls__memory_alloc(cls_context *ctx, struct cls__stream *s, size_t size,
                      cls_buffer *out);
int cls__memory_free(cls_context *ctx, cls_buffer h);
void cls__memory_fini(cls_context *ctx, struct cls__stream *s);

#endif /* CLS_MEMORY_H */
