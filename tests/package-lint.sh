#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian package as Debian checks it: scripts/vm/deb.sh builds the source
# and binary packages from the distributed tree, and lintian finds no error
# and no warning in them. What is overridden, and why, is in
# debian/vsd.lintian-overrides; lintian's full report (info, pedantic and
# experimental tags too) is in this test's log.
. "$(dirname "$0")/lib.sh"
command -v dpkg-buildpackage >/dev/null || skip_all "dpkg-buildpackage is missing (dpkg-dev: scripts/deps.sh installs it)"
command -v lintian >/dev/null || skip_all "lintian is missing (scripts/deps.sh --test installs it)"
out=$(cd "$top_srcdir" && dpkg-checkbuilddeps 2>&1) ||
	skip_all "build dependencies missing (scripts/deps.sh --test installs them): ${out##*: }"

tmp=$(mktemp -d /tmp/vsd-package-lint.XXXXXX) || exit 99
on_exit "rm -rf '$tmp'"

check "deb.sh builds the source and binary packages from the distributed tree" \
	env BUILDDIR="$top_builddir" "$top_srcdir/scripts/vm/deb.sh" "$tmp"
changes=$(ls "$tmp"/vsd_*.changes 2>/dev/null)
report=$(lintian --fail-on error,warning -I --pedantic -E --show-overrides "$changes" 2>&1)
rc=$?
printf '%s\n' "$report" | grep -v '^running with root privileges' | sed 's/^/# lintian: /'
is "$rc" 0 "lintian: no error and no warning in the source and binary packages"

# A native package: its version is configure's, or configure's with a local
# suffix (+local1: debian/README.source).
version=$(dpkg-parsechangelog -l "$top_srcdir/debian/changelog" -S Version)
is "${version%%+*}" "$(sed -n 's/^PACKAGE_VERSION = //p' "$top_builddir/Makefile")" \
	"debian/changelog's version ($version) is configure's"
done_testing
