/* Internal: the memory a stream's buffers live in -- pages, the slots
 * buffer handles name, and the handle bits.  Types only: the functions are
 * memory.h's (allocation) and the failure store's (what a slot carries). */
#ifndef CLS_SLOT_H
#define CLS_SLOT_H

#include "util/util.h"

struct cls__failure;

/* A page: one cl_mem that buffers are carved from.  Free extents are kept
 * sorted by offset and merged on release. */
struct cls__extent {
  size_t offset, size;
};
struct cls__page {
  cl_mem mem;
  size_t size;
  bool dedicated;          /* one buffer owns the whole page */
  size_t nfree, capfree;
  struct cls__extent *free;
  /* Last use, on the owning stream, of any block released into this page:
   * the next owner of a block is ordered after it (see memory.c). */
  uint64_t release_seq;
};

/* A buffer slot.  Lives in the memory of the stream the buffer was
 * allocated on; the handle names (stream, index, generation). */
struct cls__slot {
  uint32_t gen;            /* bumped on free: older handles are stale */
  uint32_t live_gen;       /* gen while allocated, CLS__SLOT_FREE otherwise:
                              one compare resolves a handle */
  size_t size;             /* as requested */
  size_t span;             /* as carved (aligned) */
  struct cls__page *page;
  size_t offset;           /* in the page */
  cl_mem mem;              /* sub-buffer, or the page's cl_mem if dedicated */
  struct cls__failure *failure; /* F1: NULL or one counted reference */
  /* Ordering facts, in stream sequence numbers (0: none). */
  int writer;              /* stream of the last write, -1: none */
  int canary_stream;       /* guard mode: see canary_kernel (here, beside
                              writer: a slot's size is in every handle's
                              resolution) */
  uint64_t write_seq;
  uint64_t write_stamp;    /* context-wide order of the last write, skips
                              included (F8 replay, see replay.c) */
  /* Recovery (src/failure/kept.c, cls__keep_add), valid while
   * write_stamp == span_last (the last write was noted there): the bytes
   * [last_lo, last_hi) that last write covered, and [span_lo, span_hi)
   * those the writes stamped after span_base up to span_prev (the write
   * before it) covered.  A command to run again whose read range the
   * writes since it ran miss reads what it read then (input_overwritten,
   * src/core/keep.c). */
  uint64_t span_base, span_prev, span_last;
  size_t span_lo, span_hi, last_lo, last_hi;
  uint64_t read_mask;      /* streams that read since the last write */
  uint64_t reads_held;     /* the read mask a write leaves: 0, or with
                              recovery on the reads before it not known
                              complete (failure/kept.c, hold_reads) */
  uint64_t read_seq[CLS_MAX_STREAMS];
  int next_free;           /* free-slot list */
  unsigned char device;    /* the device that used it last (a context of
                              several devices: a use elsewhere migrates) */
  unsigned char kind;      /* 0: a buffer, CLS__KIND_IMAGE: an image; a
                              launch tests refuse[i] >> (access + kind), so
                              a buffer where the kernel takes an image, or
                              the other way round, costs no compare */
  /* Guard mode: the canary-filled launch that last wrote it (NULL: the
   * last write was another command), for the check on a download. */
  const char *canary_kernel;
  uint64_t canary_position;
  /* An image (src/memory/image.c): its shape and format; NULL for a
   * buffer.  An image has no page: `mem` is its own cl_mem. */
  struct cls__image *image;
};

/* An image's shape and format, as allocated (normalized: 2D has depth
 * and array_size 1). */
struct cls__image {
  struct cls_image_desc desc;
  size_t pixel;            /* bytes per pixel */
  /* Pooled after a free (memory.c): the last use on the owning stream,
   * which the next owner is ordered after, as a page's release_seq. */
  uint64_t release_seq;
};

/* cls__slot.kind of an image: the shift of its bits in cls_kernel.refuse. */
#define CLS__KIND_IMAGE 4

/* A freed block waiting for its uses on other streams to complete. */
struct cls__pending_free {
  struct cls__page *page;
  size_t offset, span;
  cl_mem mem;              /* sub-buffer to release once reusable */
  uint64_t need[CLS_MAX_STREAMS]; /* per stream: seq that must complete */
  uint64_t mask;
  uint64_t own_seq;        /* last use on the owning stream */
  struct cls__image *image; /* an image (page NULL, mem its own) */
};

#define CLS__SPARE_IMAGES 4 /* freed images kept per stream */
struct cls__memory {
  size_t npages, cappages;
  struct cls__page **pages;
  size_t nslots, capslots;
  struct cls__slot *slots;
  int free_slot;           /* head of the free-slot list, -1: none */
  size_t npending, cappending;
  struct cls__pending_free *pending;
  /* Freed images kept for reuse by an image of the same description
   * (image.c); NULL until the stream frees its first image.  Out of line:
   * a stream's size is in every handle's resolution. */
  struct cls__spare_images *spares;
};
struct cls__spare_images {
  size_t n;
  struct cls__spare_image {
    cl_mem mem;             /* the image's cl_mem */
    struct cls__image *image; /* its description */
  } at[CLS__SPARE_IMAGES];
};

/* Handle bits: context tag (12) | stream (6) | generation (22) | index (24). */
#define CLS__GEN_BITS 22
#define CLS__INDEX_BITS 24
#define CLS__STREAM_BITS 6
#define CLS__TAG_SHIFT (CLS__INDEX_BITS + CLS__GEN_BITS + CLS__STREAM_BITS)
/* No handle carries this generation (it has more than CLS__GEN_BITS). */
#define CLS__SLOT_FREE UINT32_MAX

static inline int cls__handle_stream(cls_buffer h) {
  return (int)((h.bits >> (CLS__INDEX_BITS + CLS__GEN_BITS)) & ((1u << CLS__STREAM_BITS) - 1));
}

#endif /* CLS_SLOT_H */
