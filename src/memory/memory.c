/* Buffer handles and each stream's memory pool.
 *
 * Buffers are carved from cl_mem pages (clCreateSubBuffer at offsets that
 * honour CL_DEVICE_MEM_BASE_ADDR_ALIGN); a buffer larger than half a page
 * gets a page of its own.  A freed block is reused only once every queued
 * use of it has completed:
 *   - uses on other streams are waited out: the block stays pending until
 *     those streams have completed the commands that used it;
 *   - uses on the owning stream need no wait, because the next owner is
 *     ordered after them: its slot starts as if last written by the owning
 *     stream at the page's release point, so any other stream that touches
 *     it waits for that point first (see the event driver's order()). */
#include "memory/memory.h"
#include "base/cmd.h"
#include "failure/poll.h"
#include "stream/pool.h"

#include <stdlib.h>
#include <string.h>

extern struct cls__failure cls__never_written;

/* ------------------------------------------------------------------ */
/* Pages and extents                                                   */
/* ------------------------------------------------------------------ */

static int page_new(cls_context *ctx, struct cls__stream *s, size_t size, bool dedicated,
                    struct cls__page **out) {
  struct cls__memory *m = &s->mem;
  if (ctx->page_bytes + size > ctx->info.global_mem_size)
    return cls__error(CLS_EALLOC, CL_MEM_OBJECT_ALLOCATION_FAILURE,
                      "allocating %zu bytes would exceed the device's %llu bytes of global "
                      "memory (%llu in use)",
                      size, ctx->info.global_mem_size, ctx->page_bytes);
  if (!cls__grow((void **)&m->pages, &m->cappages, m->npages + 1, sizeof *m->pages, 8))
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  struct cls__page *p = calloc(1, sizeof *p);
  if (!p)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  const struct cls__stream_pool *pool = &ctx->pool;
  cl_int rc;
  if (pool->factory->alloc)
    rc = pool->factory->alloc(s->backend, size, &p->mem);
  else
    p->mem = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, size, NULL, &rc);
  if (rc != CL_SUCCESS) {
    free(p);
    return cls__error(CLS_EALLOC, rc, "device allocation of %zu bytes failed: %s", size,
                      cls_cl_status_name(rc));
  }
  p->size = size;
  p->dedicated = dedicated;
  if (!dedicated) {
    if (!cls__grow((void **)&p->free, &p->capfree, 1, sizeof *p->free, 4)) {
      clReleaseMemObject(p->mem);
      free(p);
      return cls__error(CLS_ENOMEM, 0, "out of host memory");
    }
    p->nfree = 1;
    p->free[0].offset = 0;
    p->free[0].size = size;
  }
  ctx->page_bytes += size;
  m->pages[m->npages++] = p;
  *out = p;
  return CLS_OK;
}

/* The memos of the arguments last set name cl_mems: one released may come
 * back at the same address (ctx->hooks.released). */
static void released(cls_context *ctx) {
  if (ctx->hooks.released)
    ctx->hooks.released(ctx);
}

static void page_drop(cls_context *ctx, struct cls__memory *m, struct cls__page *p) {
  released(ctx);
  for (size_t i = 0; i < m->npages; i++)
    if (m->pages[i] == p) {
      m->pages[i] = m->pages[--m->npages];
      break;
    }
  ctx->page_bytes -= p->size;
  clReleaseMemObject(p->mem);
  free(p->free);
  free(p);
}

/* First fit.  Returns false when the page has no extent large enough. */
static bool carve(struct cls__page *p, size_t span, size_t *offset) {
  for (size_t i = 0; i < p->nfree; i++) {
    struct cls__extent *e = &p->free[i];
    if (e->size < span)
      continue;
    *offset = e->offset;
    e->offset += span;
    e->size -= span;
    if (e->size == 0) {
      memmove(e, e + 1, (p->nfree - i - 1) * sizeof *e);
      p->nfree--;
    }
    return true;
  }
  return false;
}

/* Gives an extent back, merging with its neighbours.  Only fails (and
 * leaks the extent, never corrupts) when out of host memory. */
static void release_extent(struct cls__page *p, size_t offset, size_t span, uint64_t seq) {
  if (seq > p->release_seq)
    p->release_seq = seq;
  size_t i = 0;
  while (i < p->nfree && p->free[i].offset < offset)
    i++;
  bool merge_prev = i > 0 && p->free[i - 1].offset + p->free[i - 1].size == offset;
  bool merge_next = i < p->nfree && offset + span == p->free[i].offset;
  if (merge_prev && merge_next) {
    p->free[i - 1].size += span + p->free[i].size;
    memmove(&p->free[i], &p->free[i + 1], (p->nfree - i - 1) * sizeof *p->free);
    p->nfree--;
  } else if (merge_prev) {
    p->free[i - 1].size += span;
  } else if (merge_next) {
    p->free[i].offset = offset;
    p->free[i].size += span;
  } else {
    if (!cls__grow((void **)&p->free, &p->capfree, p->nfree + 1, sizeof *p->free, 4))
      return;
    memmove(&p->free[i + 1], &p->free[i], (p->nfree - i) * sizeof *p->free);
    p->free[i].offset = offset;
    p->free[i].size = span;
    p->nfree++;
  }
}

/* A freed image goes to its stream's spares (the oldest spare goes when
 * they are full): the next image of its description takes it (image.c). */
void cls__image_release(struct cls__memory *m, cl_mem mem, struct cls__image *image,
                        uint64_t own_seq) {
  image->release_seq = own_seq;
  struct cls__spare_images *sp = m->spares;
  if (!sp && !(sp = m->spares = calloc(1, sizeof *sp))) { /* out of memory: no spare */
    clReleaseMemObject(mem);
    free(image);
    return;
  }
  if (sp->n == CLS__SPARE_IMAGES) { /* the oldest goes */
    clReleaseMemObject(sp->at[0].mem);
    free(sp->at[0].image);
    memmove(&sp->at[0], &sp->at[1], (sp->n - 1) * sizeof *sp->at);
    sp->n--;
  }
  sp->at[sp->n].mem = mem;
  sp->at[sp->n].image = image;
  sp->n++;
}

/* Returns a block to its page (or drops its dedicated page); an image
 * goes to the stream's spares. */
static void block_release(cls_context *ctx, struct cls__memory *m, struct cls__page *page,
                          size_t offset, size_t span, cl_mem mem, uint64_t own_seq,
                          struct cls__image *image) {
  if (image) {
    released(ctx);
    cls__image_release(m, mem, image, own_seq);
    return;
  }
  if (page->dedicated) {
    if (mem != page->mem) /* guard mode: a sub-buffer even then */
      clReleaseMemObject(mem);
    page_drop(ctx, m, page); /* forgets the argument memos */
    return;
  }
  released(ctx);
  clReleaseMemObject(mem);
  release_extent(page, offset, span, own_seq);
}

/* Moves pending blocks whose uses have all completed back to their pages.
 * wait: block until they have. */
static void reclaim(cls_context *ctx, struct cls__memory *m, bool wait) {
  if (!m->npending)
    return;
  uint64_t mask = 0;
  for (size_t i = 0; i < m->npending; i++)
    mask |= m->pending[i].mask;
  for (int t = 0; t < CLS_MAX_STREAMS; t++)
    if (mask & (1ull << t)) {
      struct cls__stream *st = cls__stream_peek(ctx, t);
      if (st)
        cls__stream_poll(ctx, st, wait);
    }
  size_t j = 0;
  for (size_t i = 0; i < m->npending; i++) {
    struct cls__pending_free *p = &m->pending[i];
    bool done = true;
    for (int t = 0; t < CLS_MAX_STREAMS && done; t++) {
      if (!(p->mask & (1ull << t)))
        continue;
      struct cls__stream *st = cls__stream_peek(ctx, t);
      done = !st || st->completed >= p->need[t];
    }
    if (done)
      block_release(ctx, m, p->page, p->offset, p->span, p->mem, p->own_seq, p->image);
    else
      m->pending[j++] = *p;
  }
  m->npending = j;
}

/* ------------------------------------------------------------------ */
/* Allocation                                                          */
/* ------------------------------------------------------------------ */

int cls__memory_take_slot(struct cls__memory *m, int *index) {
  if (m->free_slot >= 0) {
    *index = m->free_slot;
    m->free_slot = m->slots[*index].next_free;
    return CLS_OK;
  }
  if (m->nslots == ((size_t)1 << CLS__INDEX_BITS))
    return cls__error(CLS_EALLOC, 0, "too many buffers on one stream");
  if (!cls__grow((void **)&m->slots, &m->capslots, m->nslots + 1, sizeof *m->slots, 64))
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  memset(&m->slots[m->nslots], 0, sizeof m->slots[0]);
  m->slots[m->nslots].gen = 1;
  m->slots[m->nslots].live_gen = CLS__SLOT_FREE;
  *index = (int)m->nslots++;
  return CLS_OK;
}

void cls__memory_put_slot(struct cls__memory *m, int index) {
  m->slots[index].next_free = m->free_slot;
  m->free_slot = index;
}

static int place(cls_context *ctx, struct cls__stream *s, size_t span, struct cls__page **page,
                 size_t *offset) {
  struct cls__memory *m = &s->mem;
  if (span > ctx->page_size / 2) {
    *offset = 0;
    return page_new(ctx, s, span, true, page);
  }
  for (size_t i = 0; i < m->npages; i++)
    if (!m->pages[i]->dedicated && carve(m->pages[i], span, offset)) {
      *page = m->pages[i];
      return CLS_OK;
    }
  int rc = page_new(ctx, s, ctx->page_size, false, page);
  if (rc < 0)
    return rc;
  carve(*page, span, offset);
  return CLS_OK;
}

int cls__memory_alloc(cls_context *ctx, struct cls__stream *s, size_t size, cls_buffer *out) {
  if (size == 0)
    return cls__error(CLS_EINVAL, 0, "cls_alloc: size 0");
  size_t align = ctx->info.base_addr_align < 64 ? 64 : ctx->info.base_addr_align;
  if (size > ctx->info.max_alloc_size || size > SIZE_MAX - align)
    return cls__error(CLS_ETOOBIG, 0,
                      "cls_alloc: %zu bytes exceeds the device's maximum allocation of %llu",
                      size, ctx->info.max_alloc_size);
  size_t span = ctx->guard ? ctx->hooks.guard.span(ctx, size, align) : (size + align - 1) / align * align;
  if (span < size)
    return cls__error(CLS_ETOOBIG, 0, "cls_alloc: %zu bytes and their guards overflow", size);
  if (ctx->faults) {
    cl_int frc = cls__fault_alloc(ctx->faults, s->id);
    if (frc != CL_SUCCESS)
      return cls__error(CLS_EALLOC, frc, "injected fault: allocation on stream %d failed (%s)",
                        s->id, cls_cl_status_name(frc));
  }
  struct cls__memory *m = &s->mem;
  reclaim(ctx, m, false);
  int index = -1;
  int rc = cls__memory_take_slot(m, &index);
  ctx->handles_epoch++;
  if (rc < 0)
    return rc;
  struct cls__page *page = NULL;
  size_t offset = 0;
  rc = place(ctx, s, span, &page, &offset);
  if (rc == CLS_EALLOC && m->npending) {
    /* Memory freed but still in use elsewhere: wait for it, then retry. */
    reclaim(ctx, m, true);
    rc = place(ctx, s, span, &page, &offset);
  }
  if (rc < 0)
    goto fail_place;
  cl_mem mem = page->mem;
  /* Guard mode: the data starts after its guard, in every page. */
  size_t data = ctx->guard ? offset + ctx->hooks.guard.before(ctx) : offset;
  if (!page->dedicated || ctx->guard) {
    cl_buffer_region region = {.origin = data, .size = size};
    cl_int crc;
    mem = clCreateSubBuffer(page->mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                            &region, &crc);
    if (crc != CL_SUCCESS) {
      rc = cls__error(CLS_EALLOC, crc, "clCreateSubBuffer(%zu bytes at %zu) failed: %s", size,
                      offset, cls_cl_status_name(crc));
      goto fail_sub;
    }
  }
  struct cls__slot *slot = &m->slots[index];
  slot->live_gen = slot->gen;
  slot->size = size;
  slot->span = span;
  slot->page = page;
  slot->offset = offset;
  slot->mem = mem;
  slot->failure = &cls__never_written;
  slot->writer = page->release_seq ? s->id : -1;
  slot->device = (unsigned char)s->device; /* where its bytes are (migrations) */
  slot->write_seq = page->release_seq;
  slot->read_mask = 0;
  slot->reads_held = 0;
  slot->canary_kernel = NULL;
  slot->image = NULL;
  slot->kind = 0;
  if (ctx->guard) {
    /* The guards go through a queue of their own: the earlier uses of
     * this region on the owning stream must be over first. */
    if (page->release_seq > s->completed)
      cls__stream_poll(ctx, s, true);
    if ((rc = ctx->hooks.guard.arm(ctx, slot)) < 0)
      goto fail_guard;
  }
  *out = cls__handle_make(ctx, s->id, index, slot->gen);
  return CLS_OK;

fail_guard:
  slot->live_gen = CLS__SLOT_FREE;
  if (mem != page->mem)
    clReleaseMemObject(mem);
fail_sub:
  if (page->dedicated)
    page_drop(ctx, m, page);
  else
    release_extent(page, offset, span, 0);
fail_place:
  cls__memory_put_slot(m, index);
  return rc;
}

int cls__memory_free(cls_context *ctx, cls_buffer h) {
  struct cls__slot *slot = cls__resolve(ctx, h);
  if (!slot) {
    int err = cls__resolve_error(ctx, h);
    return cls__error(err, 0, "cls_free: %s", cls_strerror(err));
  }
  if (ctx->guard)
    ctx->hooks.guard.forget(ctx, h);
  int owner = cls__handle_stream(h);
  struct cls__stream *s = cls__stream_peek(ctx, owner);
  struct cls__memory *m = &s->mem;
  int index = (int)(slot - m->slots);

  struct cls__pending_free pf = {.page = slot->page, .offset = slot->offset,
                                 .span = slot->span, .mem = slot->mem, .image = slot->image};
  /* The last uses: the last write and the reads since; everything before
   * them is ordered before them. */
  if (slot->writer >= 0) {
    if (slot->writer == owner)
      pf.own_seq = slot->write_seq;
    else {
      pf.need[slot->writer] = slot->write_seq;
      pf.mask |= 1ull << slot->writer;
    }
  }
  for (uint64_t rm = slot->read_mask; rm; rm &= rm - 1) {
    int t = __builtin_ctzll(rm);
    if (t == owner) {
      if (slot->read_seq[t] > pf.own_seq)
        pf.own_seq = slot->read_seq[t];
    } else if (slot->read_seq[t] > pf.need[t]) {
      pf.need[t] = slot->read_seq[t];
      pf.mask |= 1ull << t;
    }
  }
  /* A driver that defers enqueues hands those uses to their queues now:
   * the cl_mem may be released below, before they would have been. */
  const struct cls_driver_ops *dops = ctx->driver_ops;
  if (dops->settle && pf.own_seq)
    dops->settle(ctx->driver, &s->pub, pf.own_seq);
  for (uint64_t om = pf.mask; om; om &= om - 1) {
    int t = __builtin_ctzll(om);
    struct cls__stream *st = cls__stream_peek(ctx, t);
    if (dops->settle)
      dops->settle(ctx->driver, &st->pub, pf.need[t]);
    if (st->completed >= pf.need[t]) /* no wait left on that stream */
      pf.mask &= ~(1ull << t);
  }
  /* Recovery: a driver that defers may have kept the owner's tasks for
   * its fresh queue instead of enqueuing them (a settle above found its
   * queue lost: cls_driver_kept), so no queue holds the cl_mem for them
   * yet: the block waits for them to complete there, as for another
   * stream's uses. */
  if (pf.own_seq && (ctx->lost_mask >> owner & 1) && s->completed < pf.own_seq) {
    pf.need[owner] = pf.own_seq;
    pf.mask |= 1ull << owner;
  }
  if (pf.mask &&
      !cls__grow((void **)&m->pending, &m->cappending, m->npending + 1, sizeof *m->pending, 8))
    return cls__error(CLS_ENOMEM, 0, "out of host memory");

  ctx->handles_epoch++;
  cls__slot_set_failure(slot, NULL);
  slot->live_gen = CLS__SLOT_FREE;
  slot->image = NULL;
  slot->gen = (slot->gen + 1) & ((1u << CLS__GEN_BITS) - 1);
  if (slot->gen == 0)
    slot->gen = 1;
  cls__memory_put_slot(m, index);
  if (pf.mask)
    m->pending[m->npending++] = pf;
  else
    block_release(ctx, m, pf.page, pf.offset, pf.span, pf.mem, pf.own_seq, pf.image);
  return CLS_OK;
}

void cls__memory_fini(cls_context *ctx, struct cls__stream *s) {
  struct cls__memory *m = &s->mem;
  for (size_t i = 0; i < m->nslots; i++) {
    struct cls__slot *slot = &m->slots[i];
    if (slot->live_gen == CLS__SLOT_FREE)
      continue;
    cls__slot_set_failure(slot, NULL);
    if (slot->image) {
      clReleaseMemObject(slot->mem);
      free(slot->image);
    } else if (slot->mem != slot->page->mem) {
      clReleaseMemObject(slot->mem);
    }
  }
  for (size_t i = 0; i < m->npending; i++) {
    struct cls__pending_free *p = &m->pending[i];
    if (p->image) {
      clReleaseMemObject(p->mem);
      free(p->image);
    } else if (p->mem != p->page->mem) {
      clReleaseMemObject(p->mem);
    }
  }
  for (size_t i = 0; m->spares && i < m->spares->n; i++) {
    clReleaseMemObject(m->spares->at[i].mem);
    free(m->spares->at[i].image);
  }
  free(m->spares);
  m->spares = NULL;
  for (size_t i = 0; i < m->npages; i++) {
    ctx->page_bytes -= m->pages[i]->size;
    clReleaseMemObject(m->pages[i]->mem);
    free(m->pages[i]->free);
    free(m->pages[i]);
  }
  free(m->pages);
  free(m->slots);
  free(m->pending);
  memset(m, 0, sizeof *m);
  m->free_slot = -1;
}
