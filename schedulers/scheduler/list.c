/* Task lists of the scheduler driver: the arenas a list keeps what its
 * tasks' enqueues need in (tasks, kernel arguments, bytes, wait events),
 * their growth, and the captures that are off the per-launch path (the
 * per-launch ones are inline in sched.h).  The arenas are reused after
 * every submission, so a launch allocates nothing once they have grown. */
#include "sched.h"

#include <stdint.h>
#include <stdlib.h>

/* Grows the list's byte arena to hold `need`; the values of its first
 * `nargs` arguments that are in it move along.  False: out of memory
 * (nothing changed). */
static bool bytes_grow(struct list *l, size_t need, size_t nargs) {
  size_t ncap = l->capbytes ? l->capbytes : 256;
  while (ncap < need)
    ncap *= 2;
  unsigned char *n = malloc(ncap);
  if (!n)
    return false;
  if (l->nbytes)
    memcpy(n, l->bytes, l->nbytes);
  uintptr_t lo = (uintptr_t)l->bytes, hi = lo + l->nbytes;
  for (size_t i = 0; i < nargs; i++) {
    uintptr_t v = (uintptr_t)l->args[i].value;
    if (v >= lo && v < hi) /* not in a cell, not local memory */
      l->args[i].value = n + (v - lo);
  }
  free(l->bytes);
  l->bytes = n;
  l->capbytes = ncap;
  return true;
}

/* Points arguments from..to-1 of a at their cells in c (the usual
 * launch then writes values and sizes only). */
static void args_at_cells(struct cls_kernel_arg *a, uint64_t *c, size_t from, size_t to) {
  for (size_t i = from; i < to; i++)
    a[i] = (struct cls_kernel_arg){8, &c[i]};
}

/* Grows the argument array and the cells beside it to hold `need`; the
 * launch tasks' argument pointers and the values in cells move along.
 * False: out of memory (nothing changed). */
static bool args_grow(struct list *l, size_t need) {
  size_t ncap = l->capargs ? l->capargs : 16;
  while (ncap < need)
    ncap *= 2;
  struct cls_kernel_arg *na = malloc(ncap * sizeof *na);
  uint64_t *nc = malloc(ncap * sizeof *nc);
  if (!na || !nc) {
    free(na);
    free(nc);
    return false;
  }
  if (l->nargs) {
    memcpy(na, l->args, l->nargs * sizeof *na);
    memcpy(nc, l->cells, l->nargs * sizeof *nc);
  }
  for (size_t i = 0; i < l->nargs; i++)
    if (na[i].value == &l->cells[i])
      na[i].value = &nc[i];
  args_at_cells(na, nc, l->nargs, ncap);
  for (size_t i = 0; i < l->n; i++) {
    struct cls_kernel_cmd *kc = &l->tasks[i].u.k.kc;
    if (l->tasks[i].kind == CLS_CMD_LAUNCH) /* args NULL: none, before any growth */
      kc->args = na + (kc->args ? (size_t)(kc->args - l->args) : 0);
  }
  free(l->args);
  free(l->cells);
  l->args = na;
  l->cells = nc;
  l->capargs = ncap;
  return true;
}

bool cls__sched_list_reserve(struct list *l, size_t nargs) {
  if (l->n == l->cap) {
    if (!cls__sched_grow((void **)&l->tasks, &l->cap, l->n + 1, sizeof *l->tasks, 16))
      return false;
    for (size_t i = 0; i < l->n; i++)
      if (l->tasks[i].kind == CLS_CMD_LAUNCH)
        cls__sched_task_repoint(&l->tasks[i]);
  }
  if (l->nargs + nargs > l->capargs && !args_grow(l, l->nargs + nargs))
    return false;
  return true;
}

bool cls__sched_capture_odd(struct list *l, size_t i, const void *v, size_t size) {
  struct cls_kernel_arg *ta = &l->args[i];
  if (l->odd <= i)
    l->odd = i + 1;
  if (!v) {
    ta->value = NULL; /* local memory */
    return true;
  }
  if (size <= 8) {
    memcpy(&l->cells[i], v, size);
    ta->value = &l->cells[i];
    return true;
  }
  size_t span = (size + 7) & ~(size_t)7;
  if (l->nbytes + span > l->capbytes && !bytes_grow(l, l->nbytes + span, i))
    return false;
  unsigned char *dst = l->bytes + l->nbytes;
  memcpy(dst, v, size);
  ta->value = dst;
  l->nbytes += span;
  return true;
}

bool cls__sched_capture_args(struct list *l, size_t a0, const struct cls_kernel_arg *ka,
                             size_t n) {
  for (size_t i = 0; i < n; i++) {
    l->args[a0 + i].size = ka[i].size;
    if (!cls__sched_capture_odd(l, a0 + i, ka[i].value, ka[i].size)) {
      /* Not counted: they are the usual ones' again (odd <= nargs). */
      args_at_cells(l->args, l->cells, a0, l->odd);
      l->odd = a0;
      return false;
    }
  }
  return true;
}

bool cls__sched_capture_xfer(struct list *l, struct task *t, const struct cls_driver_cmd *cmd) {
  if (cmd->kind == CLS_CMD_FOREIGN) {
    /* The command and its buffers, copied into the byte arena (the
     * buffers' pointer is set at the enqueue: the arena may move). */
    const struct cls_foreign_cmd *f = cmd->foreign;
    size_t size = sizeof *f + f->nbuffers * sizeof *f->buffers;
    size_t span = (size + 7) & ~(size_t)7;
    if (l->nbytes + span > l->capbytes && !bytes_grow(l, l->nbytes + span, l->nargs))
      return false;
    t->u.t.pattern_off = l->nbytes;
    memcpy(l->bytes + l->nbytes, f, sizeof *f);
    if (f->nbuffers)
      memcpy(l->bytes + l->nbytes + sizeof *f, f->buffers, f->nbuffers * sizeof *f->buffers);
    l->nbytes += span;
  }
  if (cmd->kind == CLS_CMD_FILL) {
    if (l->nbytes + 128 > l->capbytes && !bytes_grow(l, l->nbytes + 128, l->nargs))
      return false;
    t->u.t.pattern_off = l->nbytes;
    memcpy(l->bytes + l->nbytes, cmd->x.pattern, cmd->x.pattern_size);
    l->nbytes += 128;
  }
  t->u.t.x = cmd->x;
  t->u.t.x.blocking = 0;
  return true;
}

bool cls__sched_capture_waits(struct list *l, struct task *t, struct cls_driver_cmd *cmd) {
  size_t nw = cmd->nwait;
  t->nwait = (uint16_t)nw; /* <= CLS_MAX_STREAMS */
  if (nw) {
    if (!cls__sched_grow((void **)&l->waits, &l->capwaits, l->nwaits + nw, sizeof *l->waits, 16))
      return false;
    t->wait0 = (uint32_t)l->nwaits; /* < max_tasks * CLS_MAX_STREAMS */
    memcpy(l->waits + l->nwaits, cmd->wait, nw * sizeof *cmd->wait);
    l->nwaits += nw;
    cmd->nwait = 0; /* the task owns the events now */
  }
  return true;
}

void cls__sched_list_reset(struct list *l) {
  args_at_cells(l->args, l->cells, 0, l->odd);
  l->odd = 0;
  l->n = l->nargs = l->nbytes = l->nwaits = l->sent = 0;
}

void cls__sched_list_keep(struct list *l, size_t from, bool failed) {
  /* The waits already released are not the list's any more. */
  for (size_t i = 0; i < from + (failed ? 1 : 0) && i < l->n; i++) {
    struct task *t = &l->tasks[i];
    for (size_t j = 0; j < t->nwait; j++)
      l->waits[t->wait0 + j] = NULL;
    if (i == from)
      t->nwait = 0;
  }
  size_t k = l->n - from;
  if (from)
    memmove(l->tasks, l->tasks + from, k * sizeof *l->tasks);
  for (size_t i = 0; i < k; i++) /* kc's size arrays point into the task */
    if (l->tasks[i].kind == CLS_CMD_LAUNCH)
      cls__sched_task_repoint(&l->tasks[i]);
  l->n = k;
  l->sent = 0;
}

void cls__sched_free_list(struct list *l) {
  for (size_t i = 0; i < l->nwaits; i++)
    if (l->waits[i]) /* NULL: released at its enqueue (cls__sched_list_keep) */
      clReleaseEvent(l->waits[i]);
  free(l->tasks);
  free(l->args);
  free(l->cells);
  free(l->bytes);
  free(l->waits);
  memset(l, 0, sizeof *l);
}
