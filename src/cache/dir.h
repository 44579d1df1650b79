/* Private to the program cache: the directory's checked access, shared by
 * dir.c (configuration, trust, the key) and cache.c (entries). */
#ifndef CLS_CACHE_DIR_H
#define CLS_CACHE_DIR_H

#include "cache/cache.h"

#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/types.h>

#define KEY_FILE "key"
#define KEY_LEN 16

/* Numbers the temporary files of this process, one writer's apart. */
extern atomic_uint cls__cache_tmp_counter;

/* mkdir -p, mode 0700 for what it makes. */
int cls__cache_make_dirs(const char *dir);
/* The directory, opened, when it is this user's own; -1 otherwise (see
 * dir.c). */
int cls__cache_open_dir(struct cls__cache *c, const struct cls__logger *lg, bool *refused);
/* A regular file of the directory, opened without blocking or following
 * a link; -1 otherwise. */
int cls__cache_open_regular(int dfd, const char *name, struct stat *st);
bool cls__cache_read_all(int fd, void *p, size_t n, off_t off);
bool cls__cache_write_all(int fd, const void *p, size_t n);
/* The directory's key file into c->key: 0, -1 when there is none (or it
 * cannot be made), 1 when it is not this user's alone. */
int cls__cache_read_key(struct cls__cache *c, const struct cls__logger *lg, int dfd, bool make);

#endif /* CLS_CACHE_DIR_H */
