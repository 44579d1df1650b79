/* clstream-info: lists every OpenCL platform the ICD loader offers, with
 * its devices or why it has none, the device the default selection and
 * $CLS_DEVICE pick, the driver a context runs on, and the quirks probed on
 * its device; with --cache, the persistent program cache and a cold and
 * warm build.  The platforms come from OpenCL itself: clstream's device
 * list has only platforms that have devices.
 *
 * This file reads the options and picks the output: the facts are gathered
 * once (info/facts.c) and written by one printer (info/info.h): text
 * (info/text.c) or, with --json, one JSON object for scripts (info/json.c;
 * docs/install.md shows its shape).  --cache is info/cache.c.
 *
 * Exit status: 0 on success, 1 when no device is found (or the selection or
 * the context fails), 2 on a usage error. */
#include "info/info.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to,
          "Usage: clstream-info [--help] [--version] [--json] [--cache]\n"
          "\n"
          "Lists every OpenCL platform the ICD loader offers, with its devices\n"
          "or why it has none, the device the default selection picks, the device\n"
          "$CLS_DEVICE picks (when set) and the driver a context runs on.\n"
          "--json prints the same as one JSON object, for scripts.\n"
          "\n"
          "  --cache  the persistent program cache instead: its directory, entries\n"
          "           and size, and a small program built cold, then warm (in a\n"
          "           temporary directory: the cache itself is not touched)\n"
          "\n"
          "Environment:\n"
          "  CLS_DEVICE     device selection: \"P:D\", \"cpu\", \"gpu\", \"accelerator\",\n"
          "                 or part of a platform or device name (\"pocl\")\n"
          "  CLS_SCHEDULER  driver and its parameters: \"event\", \"scheduler\",\n"
          "                 \"scheduler:interleave,max_tasks=8\"; CLS_SCHEDULER=help\n"
          "                 prints every driver with its parameters\n"
          "  CLS_PRECISE    \"1\": exact attribution of failures (an OpenCL event per\n"
          "                 command); \"0\" or unset: ranged where the device allows it\n"
          "  CLS_EVENT_EVERY  ranged: the most commands without an event (default 64)\n"
          "  CLS_CACHE      \"off\" turns the persistent program cache off\n"
          "  CLS_CACHE_DIR  its directory (default $XDG_CACHE_HOME/clstream,\n"
          "                 else ~/.cache/clstream)\n"
          "  CLS_CACHE_MAX  its cap in bytes, or with K, M or G (default 64M)\n"
          "  OCL_ICD_VENDORS  restricts the OpenCL ICD loader to these vendors\n"
          "  RUSTICL_ENABLE   the drivers Mesa's rusticl offers devices of\n"
          "                   (none until set; llvmpipe is the CPU one)\n");
}

/* The formats: the default (text) first, each picked by its option. */
static const struct info_printer *const printers[] = {&info_text_printer, &info_json_printer};

int main(int argc, char **argv) {
  const struct info_printer *printer = printers[0];
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cache") == 0)
      return info_cache_main();
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("clstream-info (clstream) %s\n", cls_version_string());
      return 0;
    }
    const struct info_printer *named = NULL;
    for (size_t p = 0; p < sizeof printers / sizeof printers[0]; p++)
      if (printers[p]->name && strcmp(argv[i], printers[p]->name) == 0)
        named = printers[p];
    if (!named) {
      fprintf(stderr, "clstream-info: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
    printer = named;
  }
  struct info_facts facts;
  int status = info_facts_gather(&facts, printer->extras);
  printer->print(&facts, stdout);
  info_facts_free(&facts);
  return status;
}
