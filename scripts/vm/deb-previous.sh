#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The previous release's Debian package, for the VM tier's upgrade test
# (tests/vm/package.sh installs it, then upgrades to this tree's package).
#
#   deb-previous.sh [DIR]    DIR default: tests/vm/debs/previous
#
# The previous release is the newest tag v* that is an ancestor of HEAD and
# names another version than configure.ac's AC_INIT. A clone without tags
# (CI's may fetch none), and a release tarball, use debian/upgrade-from
# instead. The package is built as it was at that release, by that tree's
# own scripts/vm/deb.sh, in a scratch directory: from `git archive` of its
# commit, or, in a release tarball (no history), from that release's own
# tarball, $VSD_PREVIOUS_TARBALL (vsd-VERSION.tar.gz). It is cached in
# $VSD_VM_CACHE/.debs/COMMIT (default /var/cache/vsd-vm), so later runs
# only copy it, from a clone or a tarball alike: a dot directory, which
# image.sh's removal of outdated images (its glob */) leaves alone.
#
# A shallow clone without the commit fetches it from its origin. Where there
# is no previous release to build (a tarball with neither the cached package
# nor $VSD_PREVIOUS_TARBALL; a shallow clone whose origin cannot give the
# commit), DIR holds no package but a file why-not saying why, exit status
# 0, and the upgrade test skips with that reason. A failed build exits 1.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$top/tests/vm/debs/previous}
cache=${VSD_VM_CACHE:-/var/cache/vsd-vm}/.debs
rm -rf "$dest"
mkdir -p "$dest"
none() {
	echo "$*" >"$dest/why-not"
	echo "deb-previous.sh: no upgrade test: $*" >&2
	exit 0
}

ac_version() { sed -n 's/^AC_INIT(\[vsd\], \[\([^]]*\)\].*/\1/p' "$1/configure.ac"; }
current=$(ac_version "$top")
[ -n "$current" ] || { echo "deb-previous.sh: no version in configure.ac's AC_INIT" >&2; exit 1; }
# a git clone of its own, or a release tarball (unpacked anywhere, in
# another clone too): then no history, only debian/upgrade-from
clone=yes
{ git -C "$top" rev-parse --git-dir >/dev/null 2>&1 &&
  [ "$(git -C "$top" rev-parse --show-toplevel)" = "$top" ]; } || clone=

version= commit= from=
[ -z "$clone" ] || for tag in $(git -C "$top" tag --merged HEAD --sort=-version:refname -l 'v*'); do
	[ "${tag#v}" != "$current" ] || continue
	version=${tag#v}
	commit=$(git -C "$top" rev-parse "$tag^{commit}")
	from="tag $tag"
	break
done
if [ -z "$commit" ]; then
	set -- $(sed -e 's/#.*//' "$top/debian/upgrade-from" | awk 'NF { print; exit }')
	[ $# = 2 ] || { echo "deb-previous.sh: debian/upgrade-from: want one line VERSION COMMIT" >&2; exit 1; }
	version=$1 commit=$2 from="debian/upgrade-from"
fi
if [ -z "$clone" ]; then
	tarball=${VSD_PREVIOUS_TARBALL:-}
	ls "$cache/$commit"/vsd_*.deb >/dev/null 2>&1 || [ -n "$tarball" ] ||
		none "this tree is a release tarball, no git clone: set VSD_PREVIOUS_TARBALL to the release tarball of $version (debian/upgrade-from) to build its package"
	[ -z "$tarball" ] || [ -f "$tarball" ] ||
		{ echo "deb-previous.sh: VSD_PREVIOUS_TARBALL: no file $tarball" >&2; exit 1; }
elif [ "$from" = debian/upgrade-from ]; then
	shallow=$(git -C "$top" rev-parse --is-shallow-repository)
	# a shallow clone (CI's often is) fetches that one commit from its origin
	if ! git -C "$top" cat-file -e "$commit^{commit}" 2>/dev/null && [ "$shallow" = true ]; then
		git -C "$top" fetch -q --depth=1 --no-tags origin "$commit" 2>/dev/null || true
	fi
	git -C "$top" cat-file -e "$commit^{commit}" 2>/dev/null ||
		none "the previous release $version ($commit, debian/upgrade-from) is not in this clone, nor could it be fetched from its origin"
	# a shallow history cannot say; the version check below still holds
	[ "$shallow" = true ] || git -C "$top" merge-base --is-ancestor "$commit" HEAD ||
		none "the previous release $version ($commit, debian/upgrade-from) is not an ancestor of HEAD"
fi
[ "$version" != "$current" ] ||
	none "debian/upgrade-from names $version, this tree's own version: bump it (see the file)"

dir=$cache/$commit
if ! ls "$dir"/vsd_*.deb >/dev/null 2>&1; then
	start=$(date +%s)
	mkdir -p "$cache"
	work=$(mktemp -d "$cache/build.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	mkdir "$work/src" "$work/out"
	if [ -n "$clone" ]; then
		git -C "$top" archive --format=tar "$commit" | tar -x -C "$work/src"
	else
		tar -xf "$tarball" -C "$work/src" --strip-components=1
		from="$from, $tarball"
	fi
	got=$(ac_version "$work/src")
	if [ "$got" != "$version" ]; then
		echo "deb-previous.sh: $from: the source is version '$got', not $version" >&2
		exit 1
	fi
	[ -x "$work/src/scripts/vm/deb.sh" ] ||
		{ echo "deb-previous.sh: $version ($commit) has no scripts/vm/deb.sh to build it with" >&2; exit 1; }
	# its deb.sh alone decides how it builds: none of this run's settings
	env -u BUILDDIR -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		"$work/src/scripts/vm/deb.sh" "$work/out" >"$work/build.log" 2>&1 || {
		tail -40 "$work/build.log" >&2
		echo "deb-previous.sh: building $version ($commit) failed" >&2
		exit 1
	}
	rm -rf "$dir"
	mv "$work/out" "$dir"
	echo "deb-previous.sh: built $version ($from, $commit) in $(( $(date +%s) - start )) s" >&2
fi
cp "$dir"/vsd_*.deb "$dest/"
echo "$version $commit" >"$dest/release"
ls "$dest"/vsd_*.deb
