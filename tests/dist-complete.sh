#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The release tarball carries every tracked file: 'make distdir' against
# git's list. make distcheck cannot see a file left out when the build does
# not name it: a test that globs its data (tests/rules/*.out) runs fewer cases
# from the tarball and still passes.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || skip_all "git is missing: no list of tracked files"
top=$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)
[ "$top" = "$(cd "$top_srcdir" && pwd -P)" ] ||
	skip_all "the source tree is not a git clone (a release tarball, say): no list of tracked files"

tmp=$(mktemp -d /tmp/vsd-dist-complete.XXXXXX) || exit 99
on_exit "rm -rf '$tmp'"
check "make distdir" make -C "$top_builddir" -s --no-print-directory distdir distdir="$tmp/d"
# Left out on purpose: git's own .gitignore files; nothing builds, tests or
# packages vsd from them. The result pages go too: tests/lint-figures.sh
# reads them all, and `make bench-report` regenerates each from its CSV.
missing=$(cd "$top" && git ls-files | grep -Ev '(^|/)\.gitignore$' |
	while read -r f; do [ -e "$f" ] && [ ! -e "$tmp/d/$f" ] && printf '%s ' "$f"; done)
is "$missing" "" "every tracked file is in the tarball (.gitignore files aside)"
done_testing
