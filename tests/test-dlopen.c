/* The shared library loads with dlopen(), as bindings for other languages
 * and plugins load it, and its thread-local error state works there on
 * every thread.  A library whose thread-locals need the static TLS block
 * (initial-exec access) fails that load with "cannot allocate memory in
 * static TLS block" once they outgrow the block's spare room.  This
 * program does not link the library: it only loads it. */
#include <clstream.h>

#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

struct api {
  int (*context_create)(cls_context **, const struct cls_context_options *);
  const char *(*detail)(void);
  const char *(*strerror_)(int);
};

static void *load(void) {
  void *h = dlopen(CLSTREAM_SO, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen(%s): %s", CLSTREAM_SO, dlerror());
  return h;
}

static struct api api_of(void *h) {
  struct api a;
  /* POSIX: a function pointer converts from dlsym's object pointer. */
  *(void **)&a.context_create = dlsym(h, "cls_context_create");
  *(void **)&a.detail = dlsym(h, "cls_last_error_detail");
  *(void **)&a.strerror_ = dlsym(h, "cls_strerror");
  ck_assert_msg(a.context_create && a.detail && a.strerror_, "dlsym: %s", dlerror());
  return a;
}

/* A refused call sets this thread's detail; the library's thread-locals
 * are reached from a library loaded late. */
static int refused_call_sets_the_detail(const struct api *a) {
  return a->context_create(NULL, NULL) == CLS_EINVAL && strlen(a->detail()) > 0;
}

START_TEST(the_library_loads_with_dlopen_and_its_calls_work) {
  struct api a = api_of(load());
  ck_assert_str_eq(a.strerror_(CLS_EINVAL), "invalid argument");
  ck_assert_str_eq(a.detail(), "");
  ck_assert(refused_call_sets_the_detail(&a));
}
END_TEST

static void *on_thread(void *arg) {
  return (void *)(intptr_t)refused_call_sets_the_detail(arg);
}

/* A thread started after the load has thread-locals of its own: its error
 * is set there, and the loading thread's stays as it was. */
START_TEST(each_thread_has_its_own_error_after_dlopen) {
  struct api a = api_of(load());
  pthread_t t;
  void *ok = NULL;
  ck_assert_int_eq(pthread_create(&t, NULL, on_thread, &a), 0);
  ck_assert_int_eq(pthread_join(t, &ok), 0);
  ck_assert_msg(ok != NULL, "the thread's refused call left no detail");
  ck_assert_str_eq(a.detail(), "");
}
END_TEST

int main(void) {
  Suite *s = suite_create("dlopen");
  TCase *tc = tcase_create("dlopen");
  tcase_add_test(tc, the_library_loads_with_dlopen_and_its_calls_work);
  tcase_add_test(tc, each_thread_has_its_own_error_after_dlopen);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? 1 : 0;
}
