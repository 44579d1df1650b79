#!/bin/sh
# make check-install: what a newcomer does with an installed clstream.
#   1. tests/consumer/main.c against the clstream make installed under
#      ROOT/dest (DESTDIR), with CMake and with pkg-config and plain $CC;
#      with MPI, tests/consumer/mpi.c against both libraries the same two
#      ways (clstream::clstream-mpi; pkg-config clstream-mpi, no mpicc),
#      run on one rank; then the example outside driver
#      (examples/drivers: priority.c and its demo) with pkg-config's flags
#      alone, the installed <clstream/driver.h> its only clstream header.
#   2. docs/install.md's table lists the headers and .pc files installed.
#   3. The man pages (when make doc made them): `man -l` of each page in
#      the build tree, as docs/install.md says, and `man -M` of each one
#      installed, render without a warning.
#   4. The README's install step in a copy of this (already built) tree:
#      its `./configure --prefix=$HOME/.local && make && make install`
#      line, run as written (this tree's other configure options kept),
#      then its first.c built with its `cc ... pkg-config` line and run.
#   check-install.sh ROOT PREFIX LIBDIR CONSUMER_SRCDIR
# Environment: CMAKE, PKG_CONFIG, CC (from configure; an empty CMAKE or
# PKG_CONFIG is an error: configure found none); CLS_SRCDIR, CLS_BUILDDIR
# (absolute), CLS_INCLUDEDIR, CLS_MANDIR, CLS_WITH_MPI (yes or no), MPIRUN.
set -eu
root=$1 prefix=$2 libdir=$3 src=$4
dest=$root/dest
failed=0
mpi=${CLS_WITH_MPI:-no}
runlib() { LD_LIBRARY_PATH="$dest$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
# One MPI rank, as the MPI suite runs them (tests/mpi/run.sh).
onerank() { runlib sh "$CLS_SRCDIR/tests/mpi/run.sh" 1 "$@"; }

[ -f "$dest$libdir/cmake/clstream/clstreamConfig.cmake" ] ||
  { echo "check-install: no $dest$libdir/cmake/clstream/clstreamConfig.cmake"; exit 1; }

echo "== CMake: find_package(clstream 0.1) with CMAKE_PREFIX_PATH=$dest$prefix"
cmake_mpi=OFF
[ "$mpi" = yes ] && cmake_mpi=ON
if [ -z "${CMAKE:-}" ]; then
  echo "check-install: configure found no cmake (Debian: apt-get install cmake)"; failed=1
elif "$CMAKE" -S "$src/cmake" -B "$root/cmake-build" -DCMAKE_C_COMPILER="${CC%% *}" \
       -DCMAKE_PREFIX_PATH="$dest$prefix" -DCMAKE_BUILD_TYPE=Release \
       -DCLS_WITH_MPI=$cmake_mpi &&
     "$CMAKE" --build "$root/cmake-build" &&
     runlib "$root/cmake-build/consumer" &&
     { [ "$mpi" = no ] || onerank "$root/cmake-build/mpi-consumer"; }; then
  echo "== CMake consumer (with MPI: $mpi): pass"
else
  echo "== CMake consumer (with MPI: $mpi): FAIL"; failed=1
fi

echo "== pkg-config: the .pc files from $dest$libdir/pkgconfig"
if [ -z "${PKG_CONFIG:-}" ]; then
  echo "check-install: configure found no pkg-config"; failed=1
else
  # The installed .pc files with the prefix moved under DESTDIR (not
  # --define-variable=prefix, which would move MPI's ompi-c.pc too).
  mkdir -p "$root/pkgconfig"
  for f in "$dest$libdir"/pkgconfig/*.pc; do
    sed "s|^prefix=.*|prefix=$dest$prefix|" "$f" >"$root/pkgconfig/${f##*/}"
  done
  pc=$PKG_CONFIG
  export PKG_CONFIG_PATH="$root/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  if cflags=$($pc --cflags clstream) && libs=$($pc --libs clstream) &&
     echo "$CC $cflags main.c $libs" &&
     $CC -std=c11 -Wall -Wextra -Werror $cflags "$src/main.c" -o "$root/pc-consumer" $libs &&
     runlib "$root/pc-consumer"; then
    echo "== pkg-config consumer: pass"
  else
    echo "== pkg-config consumer: FAIL"; failed=1
  fi
  # Plain cc, not mpicc: clstream-mpi.pc must bring MPI's flags.
  if [ "$mpi" = yes ]; then
    if cflags=$($pc --cflags clstream-mpi) && libs=$($pc --libs clstream-mpi) &&
       echo "$CC $cflags mpi.c $libs" &&
       $CC -std=c11 -Wall -Wextra -Werror $cflags "$src/mpi.c" -o "$root/pc-mpi-consumer" $libs &&
       onerank "$root/pc-mpi-consumer"; then
      echo "== pkg-config clstream-mpi consumer (plain $CC): pass"
    else
      echo "== pkg-config clstream-mpi consumer (plain $CC): FAIL"; failed=1
    fi
  fi
  drv=$src/../../examples/drivers
  if cflags=$($pc --cflags clstream) && libs=$($pc --libs clstream) &&
     $CC -std=c11 -Wall -Wextra -Werror $cflags "$drv/priority.c" "$drv/priority-demo.c" \
       -o "$root/pc-priority" $libs &&
     runlib "$root/pc-priority"; then
    echo "== pkg-config outside driver (examples/drivers/priority.c): pass"
  else
    echo "== pkg-config outside driver (examples/drivers/priority.c): FAIL"; failed=1
  fi
fi

# docs/install.md's table of what `make install` installs: the names in
# backquotes in the rows for a directory (rows that start "with MPI" only
# when MPI was built) are what is in that directory, no more, no less.
doc=$CLS_SRCDIR/docs/install.md
listed() { # listed WHERE: the names the table gives for WHERE
  grep "| \`$1\` |\$" "$doc" |
    { if [ "$mpi" = yes ]; then cat; else grep -v '^| with MPI'; fi; } |
    sed 's/| `[^`]*` |$//' | grep -o '`[^`]*`' | tr -d '`' | sort
}
compare() { # compare WHERE DIR FIND-ARGS...
  where=$1 dir=$2; shift 2
  have=$(cd "$dir" && find . "$@" | sed 's|^\./||' | sort)
  want=$(listed "$where")
  if [ -n "$want" ] && [ "$have" = "$want" ]; then
    echo "== docs/install.md lists the $where files installed: pass ($(echo $want))"
  else
    echo "== docs/install.md lists the $where files installed: FAIL"
    echo "   listed:    $(echo $want)"; echo "   installed: $(echo $have)"; failed=1
  fi
}
compare '$(includedir)' "$dest$CLS_INCLUDEDIR" -name '*.h'
compare '$(libdir)/pkgconfig' "$dest$libdir/pkgconfig" -name '*.pc'

# The man pages: every one renders, without a warning (a .so link that
# does not resolve, a line that troff reads as a request), both as
# docs/install.md runs them from the build tree and as installed.
if [ -d "$CLS_BUILDDIR/apidoc/man/man3" ] && ! command -v man >/dev/null 2>&1; then
  echo "check-install: man pages were built but there is no man (Debian: apt-get install man-db)"
  failed=1
elif [ -d "$CLS_BUILDDIR/apidoc/man/man3" ]; then
  bad=0 n=0
  for f in "$CLS_BUILDDIR"/apidoc/man/man3/*.3; do
    n=$((n + 1))
    page=apidoc/man/man3/${f##*/}
    out=$(cd "$CLS_BUILDDIR" && MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || out="$out (exit $?)"
    [ -z "$out" ] || { echo "   man -l $page: $out"; bad=1; }
    name=${f##*/}; name=${name%.3}
    out=$(MANWIDTH=80 man --warnings -M "$dest$CLS_MANDIR" 3 "$name" 2>&1 >/dev/null) || out="$out (exit $?)"
    [ -z "$out" ] || { echo "   man -M $dest$CLS_MANDIR 3 $name: $out"; bad=1; }
  done
  if [ $bad = 0 ]; then echo "== man pages: $n, each rendered without a warning, built and installed: pass"
  else echo "== man pages: FAIL"; failed=1; fi
else
  echo "== man pages: none built (make doc needs doxygen): not checked"
fi

# The README, from the quick start to a program of one's own, in a copy of
# this tree (it was built with its own prefix, as the quick start leaves
# it): a changed --prefix must relink the libraries (libtool refuses to
# install a library linked for another libdir).
readme=$CLS_SRCDIR/README.md
tree=$root/tree home=$root/home
echo "== README: ./configure --prefix=\$HOME/.local && make && make install in the quick-start tree (a copy)"
mkdir -p "$tree" "$home"
(cd "$CLS_BUILDDIR" && tar cf - --exclude=./check-install.tmp --exclude=./tests/cache .) |
  (cd "$tree" && tar xf -)
line=$(grep -m1 '^\./configure --prefix=\$HOME/\.local' "$readme") ||
  { echo "check-install: README.md has no ./configure --prefix=\$HOME/.local line"; exit 1; }
configure=./configure
[ -f "$tree/configure" ] || configure=$CLS_SRCDIR/configure
args=$(cd "$tree" && ./config.status --config)
cmd="$configure $args${line#./configure}"
echo "   $cmd"
log=$root/readme-install.log
if (cd "$tree" && unset MAKEFLAGS MFLAGS MAKELEVEL && HOME=$home && export HOME &&
    eval "$cmd") >"$log" 2>&1; then
  echo "== README install into \$HOME/.local: pass"
else
  echo "== README install into \$HOME/.local: FAIL"; tail -n 15 "$log"; failed=1
fi
# The README's first.c, built with its own commands against that install.
awk '/Save as `first.c`:/ { s = 1; next } s == 1 && /^```c$/ { s = 2; next }
     s == 2 && /^```$/ { exit } s == 2' "$readme" >"$root/first.c"
ccline=$(grep -m1 '^cc -o first first.c' "$readme")
exports=$(grep -m1 '^export PKG_CONFIG_PATH=\$HOME/\.local' "$readme")
if [ -s "$root/first.c" ] && [ -n "$ccline" ] && [ -n "$exports" ] &&
   (cd "$root" && unset PKG_CONFIG_PATH && HOME=$home && export HOME && eval "$exports" &&
    eval "$ccline"); then
  echo "== README first.c against \$HOME/.local: pass"
else
  echo "== README first.c against \$HOME/.local: FAIL"; failed=1
fi
exit $failed
