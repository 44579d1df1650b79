#!/bin/sh
# The drivers include nothing of clstream's internals: every #include in
# schedulers/ and examples/drivers/ is <clstream.h>, <clstream/...>, a
# system header, or a header of the driver's own folder ("sched.h").  The
# build gives them include/ as their only clstream include path; this
# also catches a relative path into src/ ("../../src/...").
srcdir=${srcdir:-.}
bad=$(grep -n '^[[:space:]]*#[[:space:]]*include' \
        "$srcdir"/schedulers/*/*.[ch] "$srcdir"/examples/drivers/*.[ch] |
      grep -v -E '#[[:space:]]*include[[:space:]]*(<clstream(\.h|/[a-z]+\.h)>|<[a-z0-9_/]+\.h>|"[A-Za-z0-9_-]+\.h")' )
# A system header path naming src/ is not one.
bad2=$(grep -n -E '#[[:space:]]*include[[:space:]]*<[^>]*src/' \
         "$srcdir"/schedulers/*/*.[ch] "$srcdir"/examples/drivers/*.[ch])
if [ -n "$bad$bad2" ]; then
  echo "driver-includes: a driver includes more than <clstream/driver.h> and system headers:"
  printf '%s\n%s\n' "$bad" "$bad2"
  exit 1
fi
n=$(ls "$srcdir"/schedulers/*/*.[ch] "$srcdir"/examples/drivers/*.[ch] | wc -l)
echo "driver-includes: $n driver files include only public and system headers"
