#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build the Debian package from this tree's tracked files (as they are in the
# working tree) in a scratch copy, and put the .deb in DIR (default
# tests/vm/debs). Needs the build dependencies of debian/control.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$top/tests/vm/debs}
work=$(mktemp -d /tmp/vsd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/vsd" "$dest"
(cd "$top" && git ls-files -z | xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$work/vsd"
(cd "$work/vsd" && dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1) || {
	tail -40 "$work/build.log" >&2
	exit 1
}
rm -f "$dest"/vsd_*.deb
cp "$work"/vsd_*.deb "$dest/"
ls "$dest"/vsd_*.deb
