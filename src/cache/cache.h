/* Internal: the persistent program cache -- program binaries kept on disk
 * so kernels are not compiled again on every start (docs/cache.md).
 *
 * What it promises:
 *   - A binary handed back by cls__cache_load was stored by
 *     cls__cache_store under exactly the same key: platform name and
 *     version, device name, driver version, clstream's version, the full
 *     build options and the whole source (compared byte for byte, not by
 *     hash), and it passed its checksum, a hash keyed with the directory's
 *     secret key file (SipHash-2-4, util/hash.h): bytes changed by anyone
 *     who cannot read that file fail it.  Anything else found on disk
 *     (truncated, corrupt, forged, another format or another key, not a
 *     regular file) is a miss, logged once per context, never an error,
 *     never a crash and never a hang: a file is opened with O_NONBLOCK,
 *     its header read first, and its body only when the header says it
 *     is this key's and the file's size is what the header says.
 *   - The directory is used only when it is the user's own: owned by the
 *     effective user and not writable by group or others (like ~/.ssh for
 *     ssh).  Another is refused, logged once per context, and programs
 *     are built from source.  It is checked at each load and store, and
 *     everything in it is reached through that checked descriptor.
 *   - A program that can read files into its source (#include and the
 *     like: cls__cache_reads_files) is not cached: the key holds its
 *     source, not what the vendor's preprocessor would pull in.
 *   - A file appears whole or not at all: it is written to a temporary file
 *     of a unique name (pid and counter) in the same directory, then
 *     renamed over the entry.  Several processes may fill one directory
 *     at once.
 *   - The directory stays under its cap: before a write, entries are
 *     removed oldest first (by modification time; a hit refreshes it) until
 *     the new one fits.  Only files named like entries are ever removed.
 *   - Nothing here fails a build: a directory that cannot be made or
 *     written is logged once per context, and the build goes on from
 *     source.
 * The configuration (CLS_CACHE, CLS_CACHE_DIR, CLS_CACHE_MAX) is read once,
 * at context creation, and malformed text is CLS_ECONFIG there.
 * Everything runs under the context lock. */
#ifndef CLS_CACHE_H
#define CLS_CACHE_H

#include "util/log.h"
#include "util/util.h"

#define CLS__CACHE_DEFAULT_MAX ((uint64_t)64 << 20)

struct cls__cache {
  bool enabled;           /* false: CLS_CACHE=off, or no directory */
  char *dir;              /* owned; NULL when not enabled */
  uint64_t max;           /* bytes on disk, all entries together */
  bool said_bad, said_dir, said_binary, said_trust; /* logged once per context */
  bool have_key;          /* key read from DIR/key */
  unsigned char key[16];  /* the entry checksum's key */
  bool refused;           /* the vendor refused a binary: no more tries */
  uint64_t hits, misses, stores;
};

/* What a binary was built for; all strings NUL-terminated but source. */
struct cls__cache_key {
  const char *platform, *platform_version, *device, *driver_version;
  const char *options;    /* as passed to clBuildProgram */
  const char *source;
  size_t srclen;
};

/* Reads the configuration: CLS_CACHE (on|off), the directory (opt_dir,
 * else $CLS_CACHE_DIR, else $XDG_CACHE_HOME/clstream, else
 * ~/.cache/clstream) and CLS_CACHE_MAX.  CLS_ECONFIG for malformed text,
 * CLS_ENOMEM; on failure nothing is left to free. */
int cls__cache_init(struct cls__cache *c, const char *opt_dir);
void cls__cache_fini(struct cls__cache *c);

/* 1 with *bin (malloc'ed, the caller frees) and *len when the directory
 * holds a valid entry for exactly this key; 0 otherwise. */
int cls__cache_load(struct cls__cache *c, const struct cls__logger *lg,
                    const struct cls__cache_key *k, unsigned char **bin, size_t *len);
/* Stores the binary under the key, evicting what the cap asks.  Failures
 * are logged, not returned. */
void cls__cache_store(struct cls__cache *c, const struct cls__logger *lg,
                      const struct cls__cache_key *k, const unsigned char *bin, size_t len);
/* Whether the program can read other files when it is built: its source
 * or options name #include, #import, #embed, -include or -imacros (in any
 * spelling the preprocessor reads as one: line splices, digraphs,
 * trigraphs), or the options hold a response file ('@').  Such a program
 * is never cached: a header that changed would leave a stale binary. */
bool cls__cache_reads_files(const struct cls__cache_key *k);
/* Removes the key's entry (the vendor refused its binary). */
void cls__cache_drop(struct cls__cache *c, const struct cls__cache_key *k);
/* Entries and their bytes on disk now (0 and 0 when there is no
 * directory). */
void cls__cache_usage(const struct cls__cache *c, uint64_t *entries, uint64_t *bytes);

#endif /* CLS_CACHE_H */
