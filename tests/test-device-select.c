/* Device listing and the CLS_DEVICE selection rules. */
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

/* The listed devices (asserting there is at least one). */
static struct cls_device_info devs[64];
static size_t ndevs;

static void list_devices(void) {
  ndevs = 0;
  CT_OK(cls_device_list(devs, sizeof devs / sizeof devs[0], &ndevs));
  ck_assert_uint_gt(ndevs, 0);
  if (ndevs > sizeof devs / sizeof devs[0])
    ndevs = sizeof devs / sizeof devs[0];
}

static int same_device(const struct cls_device_info *a, const struct cls_device_info *b) {
  return a->platform_index == b->platform_index && a->device_index == b->device_index &&
         strcmp(a->device_name, b->device_name) == 0;
}

/* Whether a device belongs to PoCL: its platform says so in its name,
 * vendor-ish version string or device version. */
static int is_pocl(const struct cls_device_info *d) {
  return ct_icontains(d->platform_name, "pocl") || ct_icontains(d->platform_version, "pocl") ||
         ct_icontains(d->device_version, "pocl");
}

static const struct cls_device_info *first_pocl(void) {
  for (size_t i = 0; i < ndevs; i++)
    if (is_pocl(&devs[i]))
      return &devs[i];
  return NULL;
}

START_TEST(device_list_counts_and_describes_devices) {
  size_t n = 0;
  CT_OK(cls_device_list(NULL, 0, &n));
  ck_assert_uint_gt(n, 0);
  list_devices();
  ck_assert_uint_eq(ndevs, n < 64 ? n : 64);
  for (size_t i = 0; i < ndevs; i++) {
    const struct cls_device_info *d = &devs[i];
    ck_assert_msg(d->device_name[0] != '\0', "device %zu has no name", i);
    ck_assert_msg(d->platform_name[0] != '\0', "device %zu has no platform name", i);
    ck_assert_msg(d->max_alloc_size > 0, "%s: max_alloc_size 0", d->device_name);
    ck_assert_msg(d->global_mem_size >= d->max_alloc_size, "%s: global %llu < max alloc %llu",
                  d->device_name, d->global_mem_size, d->max_alloc_size);
    ck_assert_msg(d->base_addr_align >= 1, "%s: base_addr_align 0", d->device_name);
    ck_assert_msg((d->base_addr_align & (d->base_addr_align - 1)) == 0,
                  "%s: base_addr_align %u not a power of two", d->device_name,
                  d->base_addr_align);
    ck_assert_msg(d->cl_version >= 120, "%s: cl_version %d", d->device_name, d->cl_version);
    ck_assert_msg(d->max_work_group_size >= 1, "%s: max_work_group_size 0", d->device_name);
    ck_assert_msg(d->compute_units >= 1, "%s: compute_units 0", d->device_name);
    ck_assert_msg(d->type == CLS_DEVICE_CPU || d->type == CLS_DEVICE_GPU ||
                      d->type == CLS_DEVICE_ACCELERATOR || d->type == CLS_DEVICE_OTHER,
                  "%s: type %d", d->device_name, d->type);
    ck_assert_int_ge(d->platform_index, 0);
    ck_assert_int_ge(d->device_index, 0);
  }
}
END_TEST

START_TEST(device_list_with_small_cap_reports_total) {
  list_devices();
  struct cls_device_info one;
  size_t n = 0;
  CT_OK(cls_device_list(&one, 1, &n));
  ck_assert_uint_ge(n, ndevs);
  ck_assert(same_device(&one, &devs[0]));
}
END_TEST

START_TEST(select_null_and_empty_pick_a_listed_device) {
  list_devices();
  struct cls_device_info a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  CT_OK(cls_device_select(NULL, &a));
  CT_OK(cls_device_select("", &b));
  ck_assert(a.device_name[0] != '\0');
  ck_assert(same_device(&a, &b));
  /* The default rule: the first GPU, else the first device. */
  const struct cls_device_info *want = &devs[0];
  for (size_t i = 0; i < ndevs; i++)
    if (devs[i].type == CLS_DEVICE_GPU) {
      want = &devs[i];
      break;
    }
  ck_assert_msg(same_device(&a, want), "default picked %d:%d %s, expected %d:%d %s",
                a.platform_index, a.device_index, a.device_name, want->platform_index,
                want->device_index, want->device_name);
}
END_TEST

START_TEST(select_pocl_matches_case_insensitively) {
  list_devices();
  const struct cls_device_info *p = first_pocl();
  struct cls_device_info a, b;
  if (!p) {
    /* No PoCL here: the name matches nothing. */
    CT_ERR(cls_device_select("pocl", &a), CLS_ENODEV);
    return;
  }
  int rc = cls_device_select("pocl", &a);
  ck_assert_msg(rc == 0, "select(\"pocl\") returned %s: %s (PoCL device: %s / %s)",
                cls_err_name(rc), cls_last_error_detail(), p->platform_name, p->device_name);
  rc = cls_device_select("PoCL", &b);
  ck_assert_msg(rc == 0, "select(\"PoCL\") returned %s: %s", cls_err_name(rc),
                cls_last_error_detail());
  ck_assert(same_device(&a, &b));
  ck_assert_msg(is_pocl(&a), "select(\"pocl\") picked %s / %s", a.platform_name,
                a.device_name);
}
END_TEST

START_TEST(select_substring_of_device_name_matches) {
  list_devices();
  /* A piece of the last device's name, in upper case, from its first word
   * (a selection holds no whitespace, and a ':' makes it "P:D"). */
  const struct cls_device_info *d = &devs[ndevs - 1];
  size_t len = strcspn(d->device_name, " \t:");
  ck_assert_uint_gt(len, 0);
  char piece[64];
  size_t start = len > 4 ? 1 : 0, n = len - start > 6 ? 6 : len - start;
  for (size_t i = 0; i < n; i++)
    piece[i] = (char)toupper((unsigned char)d->device_name[start + i]);
  piece[n] = '\0';
  struct cls_device_info got;
  int rc = cls_device_select(piece, &got);
  ck_assert_msg(rc == 0, "select(\"%s\") returned %s: %s", piece, cls_err_name(rc),
                cls_last_error_detail());
  ck_assert_msg(ct_icontains(got.device_name, piece) || ct_icontains(got.platform_name, piece),
                "select(\"%s\") picked %s / %s", piece, got.platform_name, got.device_name);
}
END_TEST

START_TEST(select_index_pair_picks_that_device) {
  list_devices();
  struct cls_device_info got;
  CT_OK(cls_device_select("0:0", &got));
  ck_assert_int_eq(got.platform_index, 0);
  ck_assert_int_eq(got.device_index, 0);
  ck_assert(same_device(&got, &devs[0]));
  const struct cls_device_info *last = &devs[ndevs - 1];
  char spec[32];
  snprintf(spec, sizeof spec, "%d:%d", last->platform_index, last->device_index);
  CT_OK(cls_device_select(spec, &got));
  ck_assert(same_device(&got, last));
}
END_TEST

START_TEST(select_cpu_picks_a_cpu_device) {
  list_devices();
  const struct cls_device_info *cpu = NULL;
  for (size_t i = 0; i < ndevs && !cpu; i++)
    if (devs[i].type == CLS_DEVICE_CPU)
      cpu = &devs[i];
  struct cls_device_info got;
  if (!cpu) {
    CT_ERR(cls_device_select("cpu", &got), CLS_ENODEV);
    return;
  }
  CT_OK(cls_device_select("cpu", &got));
  ck_assert_int_eq(got.type, CLS_DEVICE_CPU);
  ck_assert(same_device(&got, cpu));
  CT_OK(cls_device_select("CPU", &got));
  ck_assert_int_eq(got.type, CLS_DEVICE_CPU);
}
END_TEST

START_TEST(select_unknown_name_is_enodev_and_lists_devices) {
  list_devices();
  struct cls_device_info got;
  CT_ERR(cls_device_select("nonexistent-xyz", &got), CLS_ENODEV);
  const char *detail = cls_last_error_detail();
  ck_assert_ptr_nonnull(detail);
  ck_assert_msg(strstr(detail, devs[0].device_name) != NULL,
                "detail does not name the device '%s': %s", devs[0].device_name, detail);
}
END_TEST

START_TEST(select_index_out_of_range_is_enodev) {
  struct cls_device_info got;
  CT_ERR(cls_device_select("99:0", &got), CLS_ENODEV);
  CT_ERR(cls_device_select("0:99", &got), CLS_ENODEV);
}
END_TEST

START_TEST(select_malformed_index_is_an_error) {
  struct cls_device_info got;
  CT_ERR(cls_device_select("-1:0", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select("1:", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select(":", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select(":0", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select("0:0:0", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select("0:-1", &got), CLS_ECONFIG);
  CT_ERR(cls_device_select("0:x", &got), CLS_ECONFIG);
}
END_TEST

/* The detail of the last call quotes `piece`. */
static void detail_names(const char *spec, const char *piece) {
  const char *d = cls_last_error_detail();
  ck_assert_msg(strstr(d, piece) != NULL, "'%s': the detail should quote '%s': %s", spec, piece,
                d);
}

/* An index past what an int holds used to wrap (4294967296 selected
 * platform 0): it is refused as malformed, with the number as given. */
START_TEST(index_too_large_is_econfig_never_another_device) {
  static const struct {
    const char *spec, *quoted;
  } big[] = {{"4294967296:0", "4294967296"},
             {"0:4294967296", "4294967296"},
             {"2147483648:0", "2147483648"},
             {"99999999999999999999:0", "99999999999999999999"},
             {"0:18446744073709551616", "18446744073709551616"}};
  struct cls_device_info got;
  for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
    memset(&got, 0x5a, sizeof got);
    CT_ERR(cls_device_select(big[i].spec, &got), CLS_ECONFIG);
    detail_names(big[i].spec, big[i].quoted);
    ck_assert_msg(strstr(cls_last_error_detail(), ">= 0") == NULL, "%s",
                  cls_last_error_detail());
  }
  /* Within an int, a device that does not exist is CLS_ENODEV. */
  CT_ERR(cls_device_select("2147483647:0", &got), CLS_ENODEV);
}
END_TEST

/* No sign, no whitespace, anywhere: " 0:0" and "0:0 " get the same
 * answer (" 0:0", "0: 0" and "+0:+0" used to select 0:0, "0:0 " was
 * CLS_ENODEV). */
START_TEST(signs_and_whitespace_are_econfig_wherever_they_are) {
  static const char *const bad[] = {" 0:0", "0:0 ", "0: 0", "0 :0", "+0:+0", "+0:0", "0:+0",
                                    "\t0:0", "0:0\n", " cpu", "gpu ", "po cl", " ", "\t"};
  struct cls_device_info got;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CT_ERR(cls_device_select(bad[i], &got), CLS_ECONFIG);
    detail_names(bad[i], bad[i]); /* the whole text is quoted */
  }
  CT_ERR(cls_device_select("+0:+0", &got), CLS_ECONFIG);
  detail_names("+0:+0", "'+0'");
  CT_ERR(cls_device_select("0: 0", &got), CLS_ECONFIG);
  detail_names("0: 0", "whitespace");
}
END_TEST

/* The option and the variable go through the same grammar. */
START_TEST(device_option_and_env_refuse_the_same_strings) {
  static const char *const bad[] = {"4294967296:0", "0:4294967296", " 0:0", "0:0 ", "+0:+0",
                                    "0:0:0"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = bad[i]};
    cls_context *c = (cls_context *)&o;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_ptr_null(c);
    detail_names(bad[i], "CLS_DEVICE");
    ck_assert_int_eq(setenv("CLS_DEVICE", bad[i], 1), 0);
    c = (cls_context *)&o;
    CT_ERR(cls_context_create(&c, NULL), CLS_ECONFIG);
    ck_assert_ptr_null(c);
    unsetenv("CLS_DEVICE");
  }
}
END_TEST

START_TEST(context_on_pocl_reports_its_device) {
  list_devices();
  const struct cls_device_info *p = first_pocl();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = "pocl"};
  if (!p) {
    cls_context *ctx = (cls_context *)&o;
    CT_ERR(cls_context_create(&ctx, &o), CLS_ENODEV);
    ck_assert_ptr_null(ctx);
    return;
  }
  cls_context *ctx = ct_context_opts(&o);
  struct cls_device_info info = ct_context_info(ctx);
  ck_assert_msg(is_pocl(&info), "context device %s / %s", info.platform_name,
                info.device_name);
  struct cls_device_info sel;
  CT_OK(cls_device_select("pocl", &sel));
  ck_assert(same_device(&info, &sel));
  ck_assert_ptr_nonnull(cls_context_driver(ctx));
  ck_assert(cls_context_driver(ctx)[0] != '\0');
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(context_device_option_by_index) {
  list_devices();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = "0:0"};
  cls_context *ctx = ct_context_opts(&o);
  struct cls_device_info info = ct_context_info(ctx);
  ck_assert(same_device(&info, &devs[0]));
  ck_assert_uint_eq(info.max_alloc_size, devs[0].max_alloc_size);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(context_honours_cls_device_env) {
  list_devices();
  /* The variable is read: a name that matches nothing fails creation. */
  ck_assert_int_eq(setenv("CLS_DEVICE", "nonexistent-xyz", 1), 0);
  cls_context *ctx = (cls_context *)&ctx;
  CT_ERR(cls_context_create(&ctx, NULL), CLS_ENODEV);
  ck_assert_ptr_null(ctx);
  /* It picks the device it names. */
  const struct cls_device_info *last = &devs[ndevs - 1];
  char spec[32];
  snprintf(spec, sizeof spec, "%d:%d", last->platform_index, last->device_index);
  ck_assert_int_eq(setenv("CLS_DEVICE", spec, 1), 0);
  ctx = ct_context();
  struct cls_device_info info = ct_context_info(ctx);
  ck_assert(same_device(&info, last));
  cls_context_destroy(ctx);
  /* An explicit option wins over the variable. */
  ck_assert_int_eq(setenv("CLS_DEVICE", "nonexistent-xyz", 1), 0);
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = "0:0"};
  ctx = ct_context_opts(&o);
  info = ct_context_info(ctx);
  ck_assert(same_device(&info, &devs[0]));
  cls_context_destroy(ctx);
  unsetenv("CLS_DEVICE");
}
END_TEST

/* The no-device error gives the vendor hints clstream-info gives
 * (src/device/hints.h): with OCL_ICD_VENDORS naming Mesa's rusticl and no
 * RUSTICL_ENABLE, rusticl offers no device, and the detail says what to
 * set.  The ICD loader reads OCL_ICD_VENDORS once per process, and this
 * one has read it: the context is made by this program run again
 * (--enodev-detail, below), which prints the code and the detail.  Where
 * rusticl is not installed the loader finds no platform in that file, and
 * the detail must still name RUSTICL_ENABLE. */
START_TEST(enodev_detail_says_rusticl_needs_RUSTICL_ENABLE) {
  const char *icd = getenv("CLS_RUSTICL_ICD") ? getenv("CLS_RUSTICL_ICD")
                                              : "/etc/OpenCL/vendors/rusticl.icd";
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    setenv("OCL_ICD_VENDORS", icd, 1);
    unsetenv("RUSTICL_ENABLE");
    unsetenv("CLS_DEVICE");
    /* Under LeakSanitizer, rusticl's own allocations at load (a leak of
     * Mesa's, not clstream's) would fail the run: leaks are not this
     * test's question. */
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[1024];
    snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    execl("/proc/self/exe", "test-device-select", "--enodev-detail", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char out[8192];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof out - 1 && (n = read(fd[0], out + len, sizeof out - 1 - len)) > 0)
    len += (size_t)n;
  out[len] = '\0';
  close(fd[0]);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "--enodev-detail: status %d: %s",
                status, out);
  ck_assert_msg(strncmp(out, "CLS_ENODEV\n", 11) == 0 && strstr(out, "RUSTICL_ENABLE"),
                "OCL_ICD_VENDORS=%s without RUSTICL_ENABLE: %s", icd, out);
}
END_TEST

/* This program run again by the test above: a context with the default
 * selection, its code and detail on stdout. */
static int print_enodev_detail(void) {
  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, NULL);
  printf("%s\n%s\n", cls_err_name(rc), cls_last_error_detail());
  cls_context_destroy(ctx);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--enodev-detail") == 0)
    return print_enodev_detail();
  ct_require_device();
  unsetenv("CLS_DEVICE");
  Suite *s = suite_create("device-select");
  CT_ADD(s, device_list_counts_and_describes_devices);
  CT_ADD(s, device_list_with_small_cap_reports_total);
  CT_ADD(s, select_null_and_empty_pick_a_listed_device);
  CT_ADD(s, select_pocl_matches_case_insensitively);
  CT_ADD(s, select_substring_of_device_name_matches);
  CT_ADD(s, select_index_pair_picks_that_device);
  CT_ADD(s, select_cpu_picks_a_cpu_device);
  CT_ADD(s, select_unknown_name_is_enodev_and_lists_devices);
  CT_ADD(s, select_index_out_of_range_is_enodev);
  CT_ADD(s, select_malformed_index_is_an_error);
  CT_ADD(s, index_too_large_is_econfig_never_another_device);
  CT_ADD(s, signs_and_whitespace_are_econfig_wherever_they_are);
  CT_ADD(s, device_option_and_env_refuse_the_same_strings);
  CT_ADD(s, context_on_pocl_reports_its_device);
  CT_ADD(s, context_device_option_by_index);
  CT_ADD(s, context_honours_cls_device_env);
  CT_ADD(s, enodev_detail_says_rusticl_needs_RUSTICL_ENABLE);
  return ct_run(s);
}
