#!/bin/sh
# The drivers and the MPI library include nothing of clstream's
# internals: every #include in schedulers/, examples/drivers/ and mpi/ is
# <clstream.h>, <clstream/...>, a system header (<mpi.h>), or a header of
# the file's own folder ("sched.h", "endpoint.h").  The build gives them
# include/ as their only clstream include path; this also catches a
# relative path into src/ ("../../src/...").
srcdir=${srcdir:-.}
status=0
check() { # what, then the files
  what=$1; shift
  bad=$(grep -n '^[[:space:]]*#[[:space:]]*include' "$@" |
        grep -v -E '#[[:space:]]*include[[:space:]]*(<clstream(\.h|/[a-z]+\.h)>|<[a-z0-9_/]+\.h>|"[A-Za-z0-9_-]+\.h")' )
  # A system header path naming src/ is not one.
  bad2=$(grep -n -E '#[[:space:]]*include[[:space:]]*<[^>]*src/' "$@")
  if [ -n "$bad$bad2" ]; then
    echo "driver-includes: $what includes more than public and system headers:"
    printf '%s\n%s\n' "$bad" "$bad2"
    status=1
  else
    echo "driver-includes: $# $what files include only public and system headers"
  fi
}
check driver "$srcdir"/schedulers/*/*.[ch] "$srcdir"/examples/drivers/*.[ch]
check "MPI library" "$srcdir"/mpi/*.[ch]
exit $status
