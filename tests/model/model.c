/* The reference model: see model.h.  Plain C, no OpenCL. */
#include "model.h"

#include <stdio.h>
#include <string.h>

const char *const md_kernel_base[MD_NKERNELS] = {"set", "add", "axpy", "inc"};
const int md_kernel_nbuf[MD_NKERNELS] = {1, 4, 2, 1};
const int md_kernel_access[MD_NKERNELS][4] = {
    {MD_W}, {MD_R, MD_R, MD_R, MD_W}, {MD_R, MD_RW}, {MD_RW}};

void md_kernel_name(int kernel, int stream, char out[MD_NAME]) {
  snprintf(out, MD_NAME, "%s_s%d", md_kernel_base[kernel], stream);
}

const char *md_kernel_source(int streams) {
  static char src[8192];
  size_t len = 0;
  for (int s = 0; s < streams; s++)
    len += (size_t)snprintf(
        src + len, sizeof src - len,
        "kernel void set_s%d(global uint *out, uint v) {\n"
        "  size_t i = get_global_id(0); out[i] = v + (uint)i; }\n"
        "kernel void add_s%d(global const uint *a, global const uint *b,\n"
        "                    global const uint *c, global uint *out) {\n"
        "  size_t i = get_global_id(0); out[i] = a[i] + b[i] + c[i]; }\n"
        "kernel void axpy_s%d(global const uint *x, global uint *y, uint k) {\n"
        "  size_t i = get_global_id(0); y[i] = y[i] + k * x[i]; }\n"
        "kernel void inc_s%d(global uint *x) {\n"
        "  size_t i = get_global_id(0); x[i] = x[i] + 1u; }\n",
        s, s, s, s);
  return src;
}

uint32_t md_upload_value(uint32_t seed, int i) {
  uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + 0x9e3779b9u;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

uint32_t md_fill_value(uint32_t pattern, int psize, int i) {
  switch (psize) {
  case 1:
    return (pattern & 0xffu) * 0x01010101u;
  case 2:
    return (pattern & 0xffffu) * 0x00010001u;
  case 4:
    return pattern;
  default: /* 8: the pattern, then its complement */
    return (i & 1) ? ~pattern : pattern;
  }
}

void md_world_init(struct md_world *w, bool deferred) {
  memset(w, 0, sizeof *w);
  w->deferred = deferred;
}

void md_state_init(struct md_state *st) { memset(st, 0, sizeof *st); }

void md_all_known(struct md_state *st) {
  for (int i = 0; i < st->nfail; i++)
    st->fail[i].known = true;
}

/* ------------------------------------------------------------------ */
/* Faults (src/factory/fault-spec.c, cls__fault_fires())                */
/* ------------------------------------------------------------------ */

static int fires_when(struct md_world *w, int when, const char *op, const char *kernel,
                      int stream, bool peek, bool at_complete) {
  for (int i = 0; i < w->nclauses; i++) {
    struct md_clause *c = &w->cl[i];
    if (c->when != when || c->at_complete != at_complete ||
        (c->stream >= 0 && c->stream != stream) ||
        (c->op && strcmp(c->op, op) != 0) ||
        (c->kernel[0] && (!kernel || strcmp(c->kernel, kernel) != 0)))
      continue;
    uint64_t seen = c->seen + 1;
    if (!peek)
      c->seen = seen;
    if (c->nth && seen < c->nth)
      continue;
    if (c->times && c->fired >= c->times)
      continue;
    if (!peek)
      c->fired++;
    /* A failure at completion, a loss after the enqueue too: under
     * ranged attribution its range may cover the stream's earlier
     * commands (md_affected). */
    if ((when == MD_W_COMPLETE || at_complete) && stream >= 0 && stream < MD_S)
      w->complete_hit[stream]++;
    return c->status;
  }
  return 0;
}

bool md_same_queue(const struct md_world *w, int s, int t) {
  int nd = w->ndev > 0 ? w->ndev : 1;
  return w->shared && !w->own[s] && !w->own[t] && s % nd == t % nd &&
         s % w->shared == t % w->shared;
}

/* A "lost" clause fired on a command of stream s: s moves to a queue of
 * its own, one generation up.  Where streams share queues (w->shared;
 * placement spread: stream i on device i mod N) the queue was also that
 * of every stream md_same_queue names: each of them is at risk
 * (md_world).  s itself moves in the call, at a known point. */
static void lost_moved(struct md_world *w, int s, bool late) {
  w->lost_fired++;
  for (int t = 0; t < MD_S; t++)
    if (t != s && !w->risk[t] && md_same_queue(w, s, t)) {
      w->risk[t] = true;
      w->gen_hi[t] = w->gen[t] + 1;
      w->risked++;
      if (w->split || late) { /* its list may hold what it issued before */
        w->fresh_risk |= 1ull << t;
        if (w->recover)
          w->issued_hi[t] += w->since_sync[t];
      }
    }
  if (late) { /* found later: s moves when it meets the loss, as the others */
    w->late = true;
    if (!w->risk[s]) {
      w->risk[s] = true;
      w->gen_hi[s] = w->gen[s] + 1;
    }
    return;
  }
  w->own[s] = true;
  w->gen[s]++;
  w->gen_hi[s]++;
}

/* As src/factory/fault.c: an enqueue meets the "lost" clauses first (one
 * that fires loses the queue: the stream moves to a fresh queue, one
 * generation up, and the command fails), then the "enqueue" clauses.
 * With recovery (w->recover, the bound: src/core/command.c) the command
 * runs again on the fresh queue, where it meets every clause again (a
 * second loss counts against the bound); within the bound it is as if
 * nothing was lost. */
static int fires(struct md_world *w, int when, const char *op, const char *kernel, int stream,
                 bool peek) {
  if (when == MD_W_ENQUEUE)
    for (unsigned replays = 0;; replays++) {
      int st = fires_when(w, MD_W_LOST, op, kernel, stream, peek, false);
      if (!st)
        break;
      if (!peek)
        lost_moved(w, stream, false);
      if (peek || replays >= w->recover)
        return st;
    }
  return fires_when(w, when, op, kernel, stream, peek, false);
}

/* A loss at completion just fired, with recovery: what a stream at risk
 * issued since its last sync, before the loss (so before may_run_again
 * held), may run again too, after the loss, at the position its stream
 * has then (a fill of a stream sharing the lost queue, say).  Its records
 * get the open upper bound a command issued after the loss gets. */
static bool since_last_sync(const struct md_world *w, int s, uint64_t pos_lo) {
  return s >= 0 && s < MD_S && w->risk[s] && pos_lo > w->issued_lo[s] - w->since_sync[s];
}

static void reopen_since_sync(const struct md_world *w, struct md_state *st) {
  for (int f = 0; f < st->nfail; f++) {
    struct md_failure *mf = &st->fail[f];
    if (mf->async && since_last_sync(w, mf->stream, mf->pos_lo))
      mf->open_hi = true;
    for (int i = 0; i < mf->nchain; i++)
      if (since_last_sync(w, mf->chain[i].stream, mf->chain[i].pos_lo))
        mf->chain[i].open_hi = true;
  }
}

/* A "lost" clause at=complete, met by a command the queue accepted (a
 * launch, before its enqueue and completion faults: on the lost queue it
 * runs nothing).  With recovery within the bound (exact attribution) the
 * command and what waits on it run again: as if nothing was lost.
 * Without, the command's stream is at risk as a shared queue's peers
 * (md_state.lossrisk): it and what follows on it until the stream moves
 * may fail with the loss.  Returns whether the loss shows (no replay). */
static bool lost_at_complete(struct md_world *w, struct md_state *st, const char *op,
                             const char *kernel, int s) {
  if (!fires_when(w, MD_W_LOST, op, kernel, s, false, true))
    return false;
  lost_moved(w, s, true);
  w->late_fired++;
  if (w->recover && !w->ranged) {
    w->late_losses++;
    w->issued_hi[s]++; /* this command runs again too */
    reopen_since_sync(w, st);
    return false;
  }
  st->lossrisk[s] = st->lostrec[s] = st->lossy = true;
  return true;
}

/* ------------------------------------------------------------------ */
/* State helpers                                                       */
/* ------------------------------------------------------------------ */

static int resolve(const struct md_state *st, int b) {
  if (b < 0 || b >= MD_B)
    return MD_ENULL;
  switch (st->buf[b].state) {
  case MD_LIVE:
    return MD_OK;
  case MD_FREED:
    return MD_ESTALE;
  default:
    return MD_ENULL;
  }
}

static void issue(struct md_world *w, int s, uint64_t *lo, uint64_t *hi) {
  w->since_sync[s]++;
  *lo = ++w->issued_lo[s];
  /* A loss at completion not yet seen moved: this command (or one before
   * it) may be run again first, a position more (one per command). */
  w->issued_hi[s] += w->late && w->recover && !w->ranged ? 2 : 1;
  *hi = w->issued_hi[s];
}

static int fail_new(struct md_state *st, int status, int cl, const char *op, const char *kernel,
                    int stream, uint64_t lo, uint64_t hi, bool async) {
  if (st->nfail == MD_MAX_FAIL)
    return st->nfail - 1; /* never reached by the generator's program sizes */
  struct md_failure *f = &st->fail[st->nfail];
  memset(f, 0, sizeof *f);
  f->status = status;
  f->cl_status = cl;
  f->op = op;
  snprintf(f->kernel, sizeof f->kernel, "%s", kernel);
  f->stream = stream;
  f->pos_lo = lo;
  f->pos_hi = hi;
  f->async = async;
  f->known = !async;
  f->rd_at = st->rd_ops;
  return st->nfail++;
}

/* A buffer still "never written" gets its own record at its first check. */
static int materialize(struct md_state *st, int b) {
  struct md_buf *mb = &st->buf[b];
  if (mb->failure == MD_NEVER)
    mb->failure = fail_new(st, MD_ETAINTED, 0, "alloc", "", mb->stream, 0, 0, false);
  return mb->failure;
}

static void taint(struct md_state *st, int b, int f) {
  struct md_buf *mb = &st->buf[b];
  mb->failure = f;
  memset(mb->known, 0, sizeof mb->known);
  memset(mb->unsure, 0, sizeof mb->unsure);
}

/* Whether a command issued now may run again after a loss at completion
 * not yet found, at a position its issue range cannot bound. */
static bool may_run_again(const struct md_world *w) {
  return w->late && w->recover && !w->ranged;
}

static void chain_add(const struct md_world *w, struct md_state *st, int f, const char *kernel,
                      int stream, uint64_t lo, uint64_t hi) {
  struct md_failure *mf = &st->fail[f];
  if (mf->nchain == MD_MAX_CHAIN) {
    mf->nlost++;
    return;
  }
  struct md_chain *c = &mf->chain[mf->nchain++];
  snprintf(c->kernel, sizeof c->kernel, "%s", kernel);
  c->stream = stream;
  c->pos_lo = lo;
  c->pos_hi = hi;
  c->open_hi = may_run_again(w);
}

uint64_t md_failure_hi(const struct md_world *w, const struct md_failure *f) {
  return w && f->open_hi && w->issued_hi[f->stream] > f->pos_hi ? w->issued_hi[f->stream]
                                                                 : f->pos_hi;
}

uint64_t md_chain_hi(const struct md_world *w, const struct md_chain *c) {
  return w && c->open_hi && w->issued_hi[c->stream] > c->pos_hi ? w->issued_hi[c->stream] : c->pos_hi;
}

static bool unknown_async(const struct md_state *st, int f) {
  return f >= 0 && st->fail[f].async && !st->fail[f].known;
}

/* ------------------------------------------------------------------ */
/* Ranged attribution (F8a): where the exact prediction may be wrong    */
/* ------------------------------------------------------------------ */

/* Whether the model tracks where its prediction may be wrong: ranged
 * attribution, or a shared queue lost with recovery off. */
static bool loosened(const struct md_state *st) { return st->ranged || st->lossy; }

/* Whether a command of stream s may fail in ways the model cannot name:
 * a completion fault's range (ranged), or a lost shared queue. */
static bool affected(const struct md_state *st, int s) {
  return st->affected[s] || st->lossrisk[s] || st->poisoned[s];
}

bool md_loose(const struct md_state *st, int f) {
  return loosened(st) && f >= 0 && st->rd_ops > st->fail[f].rd_at;
}

/* Whether the command reads a diverged buffer (its read bindings); counts
 * it in rd_ops when it does. */
static bool reads_diverged(struct md_state *st, const int *slot, const int *acc, int n) {
  bool rd = false;
  for (int i = 0; loosened(st) && i < n; i++)
    rd |= (acc[i] & MD_R) && st->buf[slot[i]].diverged;
  st->rd_ops += rd;
  return rd;
}

/* Buffer b was written (or tainted) by a command of stream s: diverged when
 * that stream's commands may fall in a failed range or the command read a
 * diverged buffer; a full write on trusted input makes the model exact
 * again, a partial one does not (F4 keeps a ranged failure). */
static void wrote(struct md_state *st, int s, int b, bool rd, bool full) {
  struct md_buf *mb = &st->buf[b];
  mb->writers = 1u << s;
  if (!loosened(st))
    return;
  if (affected(st, s) || rd)
    mb->diverged = true;
  else if (full)
    mb->diverged = false;
}

/* A command the model runs wrote elements [off, off+len) of buffer b
 * (md_buf.unsure): they are unsure when it may not have run in clstream;
 * the buffer's other unsure elements are no longer known (this write
 * clears the failure that kept them from being read). */
static void wrote_elems(struct md_state *st, int s, int b, int off, int len, bool rd) {
  struct md_buf *mb = &st->buf[b];
  if (!loosened(st))
    return;
  bool u = affected(st, s) || rd;
  for (int e = 0; e < mb->elems; e++)
    if (e >= off && e < off + len)
      mb->unsure[e] = u;
    else if (mb->unsure[e])
      mb->known[e] = mb->unsure[e] = 0;
}

/* A launch writes the first MD_N elements but clears the buffer's failure
 * (a binding is a whole-buffer write): on a diverged buffer the elements
 * past MD_N may be what a command skipped in clstream (and run in the
 * model) left there, so the model stops claiming them. */
static void launch_wrote(struct md_state *st, int s, int b, bool rd) {
  struct md_buf *mb = &st->buf[b];
  if (loosened(st) && mb->diverged && mb->elems > MD_N)
    memset(mb->known + MD_N, 0, (size_t)(mb->elems - MD_N));
  wrote(st, s, b, rd, true);
}

/* A lost queue with recovery off (md_buf.risky): whether a command of
 * stream s with bindings slot[]/acc[] may fail behind the loss without
 * reading what failed: it writes a risky buffer, so it waits on a command
 * that may fail with the loss. */
static bool writes_risky(const struct md_state *st, const int *slot, const int *acc, int n) {
  bool behind = false;
  for (int i = 0; st->lossy && i < n; i++)
    behind |= (acc[i] & MD_W) && st->buf[slot[i]].risky;
  return behind;
}

/* Marks the buffers a command of stream s makes risky: all it touches
 * where s is at risk or where it may fail behind the loss (may_fail: it
 * reads a diverged buffer or writes a risky one), since a later writer of
 * any of them waits on it -- of what it reads too (the write-after-read
 * wait: `add(b1 -> b0)` failed behind the loss fails `set(b1)` after it,
 * a_command_failed_behind_one_failed_behind_a_loss_names_the_loss). */
static void mark_risky(struct md_state *st, int s, const int *slot, int n, bool may_fail) {
  for (int i = 0; st->lossy && i < n; i++)
    if (st->lossrisk[s] || may_fail)
      st->buf[slot[i]].risky = true;
}

/* writes_risky, counted as reads_diverged counts: a record minted before
 * such a command may have another skip chain. */
static bool behind_risk(struct md_state *st, const int *slot, const int *acc, int n, bool rd) {
  bool behind = writes_risky(st, slot, acc, n);
  if (behind && !rd)
    st->rd_ops++;
  return behind;
}

void md_affected(const struct md_world *w, const struct md_op *ops, int n,
                 bool affected[MD_S]) {
  static struct md_state st; /* large: one, reused */
  struct md_world dry = *w;
  struct md_expect ex;
  memset(dry.complete_hit, 0, sizeof dry.complete_hit);
  md_state_init(&st);
  for (int i = 0; i < n; i++)
    md_step(&dry, &st, &ops[i], &ex);
  for (int s = 0; s < MD_S; s++)
    affected[s] = dry.complete_hit[s] > 0;
  /* Shared at the program's start: a relocation inside it (own) comes
   * after commands that still used the shared queue. */
  int nd = w->ndev > 0 ? w->ndev : 1;
  for (int s = 0; w->shared && s < MD_S; s++)
    for (int t = 0; t < MD_S; t++)
      affected[s] |= dry.complete_hit[t] > 0 && !w->own[s] && !w->own[t] &&
                     s % nd == t % nd && s % w->shared == t % w->shared;
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

/* F2: the first read binding, in argument order, carrying a failure.
 * Returns the binding index or -1. */
static int first_tainted(const struct md_state *st, const int *slot, const int *acc, int n) {
  for (int i = 0; i < n; i++)
    if ((acc[i] & MD_R) && st->buf[slot[i]].failure != MD_CLEAN)
      return i;
  return -1;
}

/* Which failure a command reading several takes does not depend on when
 * they are found (F8): the first tainted input in argument order decides,
 * as if every failure had been known at the enqueue.  Nothing is left open
 * for the generator to avoid. */
bool md_ambiguous(const struct md_state *st, const struct md_op *op) {
  (void)st;
  (void)op;
  return false;
}

/* The writers (md_buf.writers) of the read bindings up to `first`, the one
 * whose failure skips the command: a deferred writer among them that meets
 * a loss later carries a failure that comes first in argument order (F8),
 * so the skipped command's outputs name it then. */
static unsigned skipped_writes(const struct md_state *st, const int *slot, const int *acc,
                               int first) {
  unsigned m = 0;
  for (int i = 0; i <= first; i++)
    if (acc[i] & MD_R)
      m |= st->buf[slot[i]].writers;
  return m;
}

/* A launch or copy whose input carries failure f is skipped (F2): its
 * outputs were tainted by the caller; the chain gets the skip, and the call
 * answers rc_skip.  Where f is not known yet (F8), the command runs and is
 * found untrusted later; its own enqueue fault may still fire (rc_fail). */
static void skipped(struct md_world *w, struct md_state *st, struct md_expect *ex, int f,
                    const char *op, const char *kernel, const char *chain, int s, int rc_skip,
                    int rc_fail) {
  uint64_t lo, hi;
  issue(w, s, &lo, &hi);
  chain_add(w, st, f, chain, s, lo, hi);
  ex->rcmask = md_bit(rc_skip);
  if (unknown_async(st, f)) {
    ex->rcmask |= md_bit(MD_OK);
    if (!w->deferred && fires(w, MD_W_ENQUEUE, op, kernel, s, true)) {
      ex->rcmask |= md_bit(rc_fail);
      ex->imm_rc = rc_fail;
    }
    /* It may run: a completion fault may then fail its stream's range
     * (the peek counts in complete_hit, for md_affected). */
    fires(w, MD_W_COMPLETE, op, kernel, s, true);
  }
}

/* A launch or copy on clean input is issued: the fault that fails it, if
 * any (0: none), with *async set when the failure is found after the call
 * (a completion fault, or an enqueue fault a driver meets when it submits);
 * the call answers rc_fail for an immediate one. */
static int issued(struct md_world *w, struct md_state *st, struct md_expect *ex, const char *op,
                  const char *kernel, int s, int rc_fail, uint64_t *lo, uint64_t *hi,
                  bool *async) {
  issue(w, s, lo, hi);
  /* fault.c: the "lost" clauses at=complete are met after those at the
   * enqueue (fires) and before the enqueue faults; a command behind the
   * gate meets no completion fault (it ends with the loss). */
  bool gone = lost_at_complete(w, st, op, kernel, s);
  int status = fires(w, MD_W_ENQUEUE, op, kernel, s, false);
  *async = false;
  if (status) {
    *async = w->deferred;
    ex->rcmask = md_bit(*async ? MD_OK : rc_fail);
    if (!*async)
      ex->imm_rc = rc_fail;
  } else {
    ex->rcmask = md_bit(MD_OK);
    if (!gone)
      status = fires(w, MD_W_COMPLETE, op, kernel, s, false);
    *async = true; /* found at completion */
  }
  return status;
}

static void launch(struct md_world *w, struct md_state *st, const struct md_op *op,
                   struct md_expect *ex) {
  int k = op->kernel, s = op->stream, n = md_kernel_nbuf[k];
  const int *acc = md_kernel_access[k];
  char name[MD_NAME];
  md_kernel_name(k, s, name);
  /* Work sizes are checked before the arguments. */
  for (int i = -1; i < n; i++) {
    int rc = i < 0 ? (op->refuse ? MD_EWORKSIZE : MD_OK) : resolve(st, op->b[i]);
    if (rc) {
      /* F12: refused; every output that is a live buffer gets the record. */
      uint64_t lo, hi;
      issue(w, s, &lo, &hi);
      int f = -1;
      for (int j = 0; j < n; j++)
        if ((acc[j] & MD_W) && !resolve(st, op->b[j])) {
          if (f < 0)
            f = fail_new(st, rc, 0, "launch", name, s, lo, hi, false);
          w->created[s] = true;
          taint(st, op->b[j], f);
          wrote(st, s, op->b[j], false, false); /* not logged: a range may reach past it */
        }
      if (f < 0) { /* nothing to mark: no record, no position */
        w->issued_lo[s]--;
        w->issued_hi[s]--;
      } else {
        ex->imm_rc = rc;
      }
      ex->rcmask = md_bit(rc);
      return;
    }
  }
  w->created[s] = true;
  int first = first_tainted(st, op->b, acc, n);
  bool rd_in = reads_diverged(st, op->b, acc, n);
  /* rd: what it writes may not be what the model computes */
  bool rd = behind_risk(st, op->b, acc, n, rd_in) || rd_in;
  mark_risky(st, s, op->b, n, rd);
  st->poisoned[s] |= st->lossy && rd;
  uint64_t lo, hi;
  if (first >= 0) {
    int f = materialize(st, op->b[first]);
    if (rd) /* clstream may skip it on a range record (an earlier input) */
      st->fail[f].rd_at = 0;
    unsigned from = skipped_writes(st, op->b, acc, first);
    for (int i = 0; i < n; i++)
      if (acc[i] & MD_W) {
        taint(st, op->b[i], f);
        wrote(st, s, op->b[i], rd, true);
        st->buf[op->b[i]].writers |= from;
      }
    skipped(w, st, ex, f, "launch", name, name, s, MD_ESKIPPED, MD_ELAUNCH);
    return;
  }
  bool async;
  int status = issued(w, st, ex, "launch", name, s, MD_ELAUNCH, &lo, &hi, &async);
  mark_risky(st, s, op->b, n, rd); /* lost itself: at risk now */
  /* Ranged: clean inputs here may carry a range failure in clstream. */
  if (rd_in)
    ex->rcmask |= md_bit(MD_ESKIPPED);
  if (status) {
    int f = fail_new(st, MD_ELAUNCH, status, "launch", name, s, lo, hi, async);
    st->fail[f].open_hi = async && may_run_again(w);
    for (int i = 0; i < n; i++)
      if (acc[i] & MD_W) {
        taint(st, op->b[i], f);
        wrote(st, s, op->b[i], rd, true);
      }
    return;
  }
  /* It ran: compute the outputs from the inputs as they were. */
  uint32_t out[MD_N];
  uint8_t kn[MD_N];
  const struct md_buf *a = &st->buf[op->b[0]];
  for (int i = 0; i < MD_N; i++) {
    switch (k) {
    case MD_K_SET:
      out[i] = op->value + (uint32_t)i;
      kn[i] = 1;
      break;
    case MD_K_ADD: {
      const struct md_buf *b = &st->buf[op->b[1]], *c = &st->buf[op->b[2]];
      out[i] = a->val[i] + b->val[i] + c->val[i] + (w->planted_bug ? 1u : 0u);
      kn[i] = a->known[i] & b->known[i] & c->known[i];
      break;
    }
    case MD_K_AXPY: {
      const struct md_buf *y = &st->buf[op->b[1]];
      out[i] = y->val[i] + op->value * a->val[i];
      kn[i] = a->known[i] & y->known[i];
      break;
    }
    default:
      out[i] = a->val[i] + 1u;
      kn[i] = a->known[i];
    }
  }
  for (int i = 0; i < n; i++)
    if (acc[i] & MD_W) {
      struct md_buf *o = &st->buf[op->b[i]];
      launch_wrote(st, s, op->b[i], rd);
      wrote_elems(st, s, op->b[i], 0, MD_N, rd);
      o->failure = MD_CLEAN;
      memcpy(o->val, out, sizeof out);
      memcpy(o->known, kn, sizeof kn);
    }
}

static bool in_range(const struct md_buf *b, int off, int len) {
  return len > 0 && off >= 0 && off + len <= b->elems;
}

/* F12: a write clstream refuses at the call (a range, a size, an overlap)
 * leaves a synchronous record on its destination, at a position of its
 * stream, and the call answers `code`. */
static void refused(struct md_world *w, struct md_state *st, struct md_expect *ex,
                    const char *opname, int s, int dst, int code) {
  uint64_t lo, hi;
  w->created[s] = true;
  issue(w, s, &lo, &hi);
  taint(st, dst, fail_new(st, code, 0, opname, "", s, lo, hi, false));
  wrote(st, s, dst, false, false); /* not logged: a range may reach past it */
  ex->rcmask = md_bit(code);
  ex->imm_rc = code; /* a position, neither enqueued nor skipped */
}

/* A command that writes one buffer and reads none: upload, fill. */
static void write_only(struct md_world *w, struct md_state *st, const struct md_op *op,
                       struct md_expect *ex, const char *opname, bool deferrable) {
  int s = op->stream, rc = resolve(st, op->b[0]);
  if (rc) {
    ex->rcmask = md_bit(rc);
    return;
  }
  struct md_buf *b = &st->buf[op->b[0]];
  if (op->refuse) { /* a fill's pattern, checked before the range */
    refused(w, st, ex, opname, s, op->b[0], MD_EINVAL);
    return;
  }
  if (!in_range(b, op->off, op->len)) {
    refused(w, st, ex, opname, s, op->b[0], op->len <= 0 ? MD_EINVAL : MD_ERANGE);
    return;
  }
  w->created[s] = true;
  uint64_t lo, hi;
  issue(w, s, &lo, &hi);
  int status = fires(w, MD_W_ENQUEUE, opname, NULL, s, false);
  bool async = false;
  if (status) {
    async = deferrable && w->deferred;
    ex->rcmask = md_bit(async ? MD_OK : MD_ECL);
    if (!async)
      ex->imm_rc = MD_ECL;
  } else {
    ex->rcmask = md_bit(MD_OK);
    status = fires(w, MD_W_COMPLETE, opname, NULL, s, false);
    async = true;
  }
  /* A blocking upload on a stream still on a lost shared queue is refused
   * there (recovery off): CLS_ECL in the call, the loss on the buffer. */
  if (st->lossrisk[s] && !(deferrable && w->deferred)) {
    ex->rcmask |= md_bit(MD_ECL);
    ex->imm_rc = MD_ECL;
  }
  static const int write_acc[1] = {MD_W};
  bool behind = behind_risk(st, op->b, write_acc, 1, false);
  mark_risky(st, s, op->b, 1, behind);
  st->poisoned[s] |= st->lossy && behind;
  /* A blocking upload behind a command that fails meanwhile fails in the
   * call (its wait list failed). */
  if (behind && !(deferrable && w->deferred))
    ex->rcmask |= md_bit(MD_ECL);
  bool full = op->off == 0 && op->len == b->elems;
  wrote(st, s, op->b[0], behind, full);
  if (status) {
    int f = fail_new(st, MD_ECL, status, opname, "", s, lo, hi, async);
    st->fail[f].open_hi = async && may_run_again(w);
    taint(st, op->b[0], f);
    return;
  }
  b->failure = MD_CLEAN;
  wrote_elems(st, s, op->b[0], op->off, op->len, behind);
  for (int i = 0; i < op->len; i++) {
    int e = op->off + i;
    b->val[e] = op->kind == MD_FILL ? md_fill_value(op->value, op->psize, e)
                                    : md_upload_value(op->value, i);
    b->known[e] = 1;
  }
}

static void copy(struct md_world *w, struct md_state *st, const struct md_op *op,
                 struct md_expect *ex) {
  int s = op->stream, rc;
  if ((rc = resolve(st, op->b[1]))) { /* no destination: nothing to mark */
    ex->rcmask = md_bit(rc);
    return;
  }
  if ((rc = resolve(st, op->b[0]))) {
    refused(w, st, ex, "copy", s, op->b[1], rc);
    return;
  }
  struct md_buf *src = &st->buf[op->b[0]], *dst = &st->buf[op->b[1]];
  if (!in_range(src, op->off, op->len) || !in_range(dst, op->off2, op->len)) {
    refused(w, st, ex, "copy", s, op->b[1], op->len <= 0 ? MD_EINVAL : MD_ERANGE);
    return;
  }
  if (op->b[0] == op->b[1] && op->off < op->off2 + op->len && op->off2 < op->off + op->len) {
    refused(w, st, ex, "copy", s, op->b[1], MD_EINVAL);
    return;
  }
  w->created[s] = true;
  uint64_t lo, hi;
  static const int copy_acc[2] = {MD_R, MD_W};
  bool rd_in = reads_diverged(st, op->b, copy_acc, 2);
  bool rd = behind_risk(st, op->b, copy_acc, 2, rd_in) || rd_in;
  mark_risky(st, s, op->b, 2, rd);
  st->poisoned[s] |= st->lossy && rd;
  bool full = op->off2 == 0 && op->len == dst->elems;
  if (src->failure != MD_CLEAN) {
    int f = materialize(st, op->b[0]);
    if (rd) /* clstream may skip it on a range record */
      st->fail[f].rd_at = 0;
    unsigned from = skipped_writes(st, op->b, copy_acc, 0);
    taint(st, op->b[1], f);
    wrote(st, s, op->b[1], rd, full);
    dst->writers |= from;
    skipped(w, st, ex, f, "copy", NULL, "copy", s, MD_ETAINTED, MD_ECL);
    return;
  }
  bool async;
  int status = issued(w, st, ex, "copy", NULL, s, MD_ECL, &lo, &hi, &async);
  mark_risky(st, s, op->b, 2, rd); /* lost itself: at risk now */
  if (rd_in) /* ranged: the source may carry a range failure in clstream */
    ex->rcmask |= md_bit(MD_ETAINTED);
  wrote(st, s, op->b[1], rd, full);
  if (status) {
    int f = fail_new(st, MD_ECL, status, "copy", "", s, lo, hi, async);
    st->fail[f].open_hi = async && may_run_again(w);
    taint(st, op->b[1], f);
    return;
  }
  uint32_t v[MD_MAXE];
  uint8_t kn[MD_MAXE];
  memcpy(v, src->val + op->off, (size_t)op->len * sizeof *v);
  memcpy(kn, src->known + op->off, (size_t)op->len);
  dst->failure = MD_CLEAN;
  wrote_elems(st, s, op->b[1], op->off2, op->len, rd);
  memcpy(dst->val + op->off2, v, (size_t)op->len * sizeof *v);
  memcpy(dst->known + op->off2, kn, (size_t)op->len);
}

static void download_exact(struct md_world *w, struct md_state *st, const struct md_op *op,
                           struct md_expect *ex) {
  int s = op->stream, rc = resolve(st, op->b[0]);
  if (rc) {
    ex->rcmask = md_bit(rc);
    return;
  }
  struct md_buf *b = &st->buf[op->b[0]];
  if (!in_range(b, op->off, op->len)) {
    ex->rcmask = md_bit(op->len <= 0 ? MD_EINVAL : MD_ERANGE);
    return;
  }
  w->created[s] = true;
  if (b->failure != MD_CLEAN) {
    int f = materialize(st, op->b[0]);
    ex->rcmask = md_bit(MD_ETAINTED);
    ex->nf = 1;
    ex->fail[0] = f;
    if (unknown_async(st, f)) {
      /* Not found yet: the read is enqueued (a position), and the failure
       * is found when it completes. */
      w->issued_hi[s]++;
      if (fires(w, MD_W_ENQUEUE, "download", NULL, s, true)) {
        ex->rcmask |= md_bit(MD_ECL);
        ex->imm_rc = MD_ECL;
      } else if (fires(w, MD_W_COMPLETE, "download", NULL, s, true)) {
        ex->rcmask |= md_bit(MD_ECL);
      }
    }
    st->fail[f].known = true; /* a report names it: clstream found it */
    return;
  }
  uint64_t lo, hi;
  issue(w, s, &lo, &hi);
  /* A loss at completion not yet seen moved: the device may fail the read
   * behind a command that failed behind it, and then it reads once more
   * (src/core/download.c), a position more. */
  if (w->late)
    w->issued_hi[s]++;
  if (fires(w, MD_W_ENQUEUE, "download", NULL, s, false)) {
    ex->imm_rc = MD_ECL;
    ex->rcmask = md_bit(MD_ECL);
    return;
  }
  if (fires(w, MD_W_COMPLETE, "download", NULL, s, false)) {
    ex->rcmask = md_bit(MD_ECL);
    return;
  }
  ex->rcmask = md_bit(MD_OK);
  ex->bytes = true;
  ex->n = op->len;
  memcpy(ex->val, b->val + op->off, (size_t)op->len * sizeof *ex->val);
  memcpy(ex->known, b->known + op->off, (size_t)op->len);
}

/* Ranged: a read of a diverged buffer may fail with a range record (the
 * model's bytes came from commands it believes ran) and take no position
 * (refused) where the model enqueues it, or the reverse; a read on a
 * stream whose queue failed may fail itself (CLS_ECL). */
static void download(struct md_world *w, struct md_state *st, const struct md_op *op,
                     struct md_expect *ex) {
  int s = op->stream;
  uint64_t lo = w->issued_lo[s], hi = w->issued_hi[s];
  int f0 = resolve(st, op->b[0]) ? -1 : st->buf[op->b[0]].failure;
  bool unfound = unknown_async(st, f0);
  download_exact(w, st, op, ex);
  if (!loosened(st) || resolve(st, op->b[0]) || !in_range(&st->buf[op->b[0]], op->off, op->len))
    return;
  ex->relaxed = st->buf[op->b[0]].diverged || affected(st, s);
  if (!ex->relaxed)
    return;
  st->poisoned[s] |= st->lossy; /* it may fail behind the loss too */
  ex->rcmask |= md_bit(MD_ETAINTED) | (affected(st, s) ? md_bit(MD_ECL) : 0);
  if (st->lossrisk[s] && !ex->imm_rc) { /* refused by the lost queue in the call */
    ex->imm_rc = MD_ECL;
    /* before it learnt what its buffer carries (context 0x6f5f03d5685fbeef) */
    ex->unfound = unfound ? f0 + 1 : 0;
  }
  if (w->issued_lo[s] > lo)
    w->issued_lo[s]--;
  if (w->issued_hi[s] == hi)
    w->issued_hi[s]++;
}

void md_step(struct md_world *w, struct md_state *st, const struct md_op *op,
             struct md_expect *ex) {
  memset(ex, 0, sizeof *ex);
  /* Recovery off, or a loss after the enqueue under ranged attribution
   * (reported, not run again: docs/design.md, "Recovery"): a stream at
   * risk may meet its lost queue at any command until it moves. */
  bool shows = w->recover == 0 || (w->late && w->ranged);
  for (int s = 0; s < MD_S; s++) {
    st->lossrisk[s] = w->risk[s] && shows;
    st->lostrec[s] |= st->lossrisk[s];
    st->lossy |= st->lossrisk[s];
  }
  /* Recovery off: what a stream put at risk by the last op's loss wrote
   * since the last sync may still have been in its list then, and meet
   * the loss (md_world.fresh_risk: split lists, or a loss after the
   * enqueue, whose gate an interleaved task may go behind): its buffers
   * may carry it, their bytes are unsure. */
  for (uint64_t m = w->fresh_risk; m; m &= m - 1) {
    int t = __builtin_ctzll(m);
    for (int b = 0; w->deferred && st->lossrisk[t] && b < MD_B; b++) {
      struct md_buf *mb = &st->buf[b];
      if (mb->state != MD_LIVE || !(mb->writers & 1u << t))
        continue;
      mb->diverged = mb->risky = true;
      for (int e = 0; e < mb->elems; e++)
        mb->unsure[e] |= mb->known[e];
    }
  }
  w->fresh_risk = 0;
  switch (op->kind) {
  case MD_ALLOC: {
    struct md_buf *b = &st->buf[op->b[0]];
    w->created[op->stream] = true;
    if (fires_when(w, MD_W_ALLOC, "alloc", NULL, op->stream, false, false)) {
      ex->rcmask = md_bit(MD_EALLOC);
      b->state = MD_NONE;
      return;
    }
    memset(b, 0, sizeof *b);
    b->state = MD_LIVE;
    b->stream = op->stream;
    b->elems = op->elems;
    b->failure = MD_NEVER;
    ex->rcmask = md_bit(MD_OK);
    return;
  }
  case MD_FREE: {
    int rc = resolve(st, op->b[0]);
    ex->rcmask = md_bit(rc);
    if (!rc) {
      st->buf[op->b[0]].state = MD_FREED;
      st->buf[op->b[0]].failure = MD_CLEAN;
    }
    return;
  }
  case MD_UPLOAD:
    write_only(w, st, op, ex, "upload", false);
    return;
  case MD_UPLOAD_ASYNC:
    write_only(w, st, op, ex, "upload", true);
    return;
  case MD_FILL:
    write_only(w, st, op, ex, "fill", true);
    return;
  case MD_LAUNCH:
    launch(w, st, op, ex);
    return;
  case MD_COPY:
    copy(w, st, op, ex);
    return;
  case MD_DOWNLOAD:
    download(w, st, op, ex);
    return;
  case MD_SYNC:
    ex->rcmask = md_bit(MD_OK);
    st->poisoned[op->stream] = false;
    w->since_sync[op->stream] = 0;
    for (int i = 0; i < st->nfail; i++)
      if (st->fail[i].stream == op->stream)
        st->fail[i].known = true;
    return;
  case MD_SYNC_ALL:
    ex->rcmask = md_bit(MD_OK);
    md_all_known(st);
    memset(st->poisoned, 0, sizeof st->poisoned);
    memset(w->since_sync, 0, sizeof w->since_sync);
    for (int b = 0; b < MD_B; b++) { /* every list submitted, every command done */
      st->buf[b].writers = 0;
      st->buf[b].risky = false;
    }
    return;
  case MD_RELOCATE: {
    /* Waits for the stream's queue (what it learns is not counted on:
     * "known" stays as it was), moves it; bytes and failures stay. */
    uint64_t *g = &w->gen[op->stream];
    if (!op->refuse) {
      /* At risk: the runner read the generation first (gen is what it
       * read); the stream gets a queue of its own, the risk ends. */
      ex->gen_arg = *g;
      ex->rcmask = md_bit(MD_OK);
      w->gen_hi[op->stream] = ++*g;
      w->risk[op->stream] = false;
      w->own[op->stream] = true;
      w->created[op->stream] = true;
    } else {
      ex->gen_arg = *g ? *g - 1 : *g + 1;
      ex->rcmask = md_bit(*g ? MD_ESTALEGEN : MD_EINVAL);
    }
    return;
  }
  case MD_SYNC_CHECK:
    md_all_known(st);
    memset(w->since_sync, 0, sizeof w->since_sync);
    memset(st->poisoned, 0, sizeof st->poisoned);
    for (int b = 0; b < MD_B; b++)
      st->buf[b].risky = false;
    for (int i = 0; i < op->len; i++) {
      int b = op->b[i], rc = resolve(st, b);
      if (rc) {
        ex->bad[ex->nbad++] = rc;
        continue;
      }
      if (st->buf[b].failure == MD_CLEAN)
        continue;
      int f = materialize(st, b);
      bool dup = false;
      for (int j = 0; j < ex->nf; j++)
        dup |= ex->fail[j] == f;
      if (!dup)
        ex->fail[ex->nf++] = f;
    }
    ex->rcmask = md_bit(ex->nf || ex->nbad ? MD_ETAINTED : MD_OK);
    return;
  }
}

/* ------------------------------------------------------------------ */
/* Text                                                                */
/* ------------------------------------------------------------------ */

void md_op_text(const struct md_op *op, char *out, size_t cap) {
  char name[MD_NAME];
  switch (op->kind) {
  case MD_ALLOC:
    snprintf(out, cap, "alloc b%d on s%d, %d elements", op->b[0], op->stream, op->elems);
    break;
  case MD_FREE:
    snprintf(out, cap, "free b%d", op->b[0]);
    break;
  case MD_UPLOAD:
  case MD_UPLOAD_ASYNC:
    snprintf(out, cap, "upload%s b%d[%d..%d) on s%d, seed %#x",
             op->kind == MD_UPLOAD_ASYNC ? "_async" : "", op->b[0], op->off, op->off + op->len,
             op->stream, op->value);
    break;
  case MD_FILL:
    snprintf(out, cap, "fill b%d[%d..%d) on s%d, pattern %#x/%d", op->b[0], op->off,
             op->off + op->len, op->stream, op->value, op->refuse ? 3 : op->psize);
    break;
  case MD_LAUNCH: {
    md_kernel_name(op->kernel, op->stream, name);
    int n = md_kernel_nbuf[op->kernel];
    size_t len = (size_t)snprintf(out, cap, "launch %s(", name);
    for (int i = 0; i < n && len < cap; i++)
      len += (size_t)snprintf(out + len, cap - len, "%s%s b%d", i ? ", " : "",
                              md_kernel_access[op->kernel][i] == MD_R   ? "in"
                              : md_kernel_access[op->kernel][i] == MD_W ? "out"
                                                                        : "inout",
                              op->b[i]);
    if (len < cap)
      snprintf(out + len, cap - len, "%s%.0u) on s%d%s",
               op->kernel == MD_K_SET || op->kernel == MD_K_AXPY ? ", " : "",
               op->kernel == MD_K_SET || op->kernel == MD_K_AXPY ? op->value : 0u, op->stream,
               op->refuse ? ", local 5" : "");
    break;
  }
  case MD_COPY:
    snprintf(out, cap, "copy b%d[%d..%d) -> b%d[%d..) on s%d", op->b[0], op->off,
             op->off + op->len, op->b[1], op->off2, op->stream);
    break;
  case MD_DOWNLOAD:
    snprintf(out, cap, "download b%d[%d..%d) on s%d", op->b[0], op->off, op->off + op->len,
             op->stream);
    break;
  case MD_SYNC:
    snprintf(out, cap, "sync s%d", op->stream);
    break;
  case MD_SYNC_ALL:
    snprintf(out, cap, "sync all");
    break;
  case MD_RELOCATE:
    snprintf(out, cap, "relocate s%d to device %u%s", op->stream, op->value,
             op->refuse ? " (stale generation)" : "");
    break;
  case MD_SYNC_CHECK: {
    size_t len = (size_t)snprintf(out, cap, "sync all; check");
    for (int i = 0; i < op->len && len < cap; i++)
      len += (size_t)snprintf(out + len, cap - len, " b%d", op->b[i]);
    break;
  }
  default:
    snprintf(out, cap, "op %d", op->kind);
  }
}

static const char *status_text(int st, char *buf, size_t cap) {
  switch (st) {
  case -5:
    return "CL_OUT_OF_RESOURCES";
  case -4:
    return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case -6:
    return "CL_OUT_OF_HOST_MEMORY";
  case -30:
    return "CL_INVALID_VALUE";
  default:
    snprintf(buf, cap, "%d", st);
    return buf;
  }
}

void md_spec_text(const struct md_world *w, char *out, size_t cap) {
  static const char *const when[] = {"enqueue", "complete", "alloc", "lost"};
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < w->nclauses && len < cap; i++) {
    const struct md_clause *c = &w->cl[i];
    char num[16];
    len += (size_t)snprintf(out + len, cap - len, "%s%s:status=%s", i ? ";" : "",
                            when[c->when], status_text(c->status, num, sizeof num));
    if (c->kernel[0] && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",kernel=%s", c->kernel);
    if (c->op && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",op=%s", c->op);
    if (c->stream >= 0 && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",stream=%d", c->stream);
    if (c->nth && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",nth=%llu", (unsigned long long)c->nth);
    if (c->times && c->when != MD_W_LOST && len < cap) /* lost: once, implied */
      len += (size_t)snprintf(out + len, cap - len, ",times=%llu",
                              (unsigned long long)c->times);
    if (c->hold && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",hold=%llu", (unsigned long long)c->hold);
    if (c->at_complete && len < cap)
      len += (size_t)snprintf(out + len, cap - len, ",at=complete");
  }
}
