/* Ordering facts shared by every driver: which streams a command must be
 * ordered after, and what a wait on another stream buys. */
#include "core.h"
#include "driver.h"

uint64_t cls__order_needs(const struct cls__cmd *cmd, uint64_t need[CLS_MAX_STREAMS]) {
  const struct cls__stream *s = cmd->stream;
  uint64_t mask = 0;
  for (size_t i = 0; i < cmd->nbind; i++) {
    const struct cls__slot *slot = cmd->bind[i].slot;
    int w = slot->writer;
    /* Reading or writing: after the last write. */
    if (w >= 0 && w != s->id && slot->write_seq > s->synced[w]) {
      if (!(mask & (1ull << w)) || slot->write_seq > need[w])
        need[w] = slot->write_seq;
      mask |= 1ull << w;
    }
    /* Writing: also after the reads since that write. */
    if (!(cmd->bind[i].access & CLS_WRITE) || !slot->read_mask)
      continue;
    for (int r = 0; r < CLS_MAX_STREAMS; r++) {
      if (r == s->id || !(slot->read_mask & (1ull << r)) || slot->read_seq[r] <= s->synced[r])
        continue;
      if (!(mask & (1ull << r)) || slot->read_seq[r] > need[r])
        need[r] = slot->read_seq[r];
      mask |= 1ull << r;
    }
  }
  return mask;
}

void cls__order_synced(struct cls__stream *s, const struct cls__stream *p, uint64_t upto) {
  if (upto > s->synced[p->id])
    s->synced[p->id] = upto;
  /* What p was ordered after, s now is too. */
  for (int u = 0; u < CLS_MAX_STREAMS; u++)
    if (u != s->id && p->synced[u] > s->synced[u])
      s->synced[u] = p->synced[u];
}
