#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Debian source and binary packages from the distributed tree
# ('make distdir': the files of the release tarball, which 'make distcheck'
# keeps complete), in a scratch directory, and put them in DIR (default
# tests/vm/debs): the .deb, the .dsc and its tarball, the .changes for
# lintian. Works from a git clone and from an unpacked release tarball alike.
# Needs the build dependencies of debian/control.
#   BUILDDIR   the configured build directory (default: the source tree if it
#              is configured in place, else a scratch configure)
set -eu
# A build of its own: called from make (tests/package-lint.sh under make
# check), the package's own make would take the caller's TESTS=... and flags.
unset MAKEFLAGS MFLAGS MAKELEVEL
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$top/tests/vm/debs}
work=$(mktemp -d /tmp/vsd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"
build=${BUILDDIR:-}
if [ -z "$build" ] && [ -f "$top/Makefile" ]; then
	build=$top
elif [ -z "$build" ]; then
	# an unconfigured tree: configure it out of tree, only to list its files
	[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
	build=$work/build
	mkdir "$build"
	(cd "$build" && "$top/configure" --quiet --disable-integration-tests) >"$work/build.log" 2>&1 || {
		tail -40 "$work/build.log" >&2
		exit 1
	}
fi
make -C "$build" -s --no-print-directory distdir distdir="$work/vsd" >"$work/build.log" 2>&1 || {
	tail -40 "$work/build.log" >&2
	exit 1
}
(cd "$work/vsd" && dpkg-buildpackage -us -uc >"$work/build.log" 2>&1) || {
	tail -40 "$work/build.log" >&2
	exit 1
}
rm -f "$dest"/vsd_* "$dest"/vsd-dbgsym_*
# the .changes lists every file the build made, itself aside
cp "$work"/vsd_*.changes "$dest/"
sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} [0-9]* [^ ]* [^ ]* //p' "$work"/vsd_*.changes |
	while read -r f; do cp "$work/$f" "$dest/"; done
ls "$dest"/vsd_*.deb
