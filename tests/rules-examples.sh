#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in rules/examples/ passes the check (from a private copy, so a
# checkout made with umask 002 does not trip the group-writable refusal).
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
vsctl=${VSCTL:-$builddir/vsd/vsctl}
case $vsctl in /*) ;; *) vsctl=$(pwd)/$vsctl ;; esac
# offline: no daemon, no root
rules_check() { "$vsctl" check "$@"; }

tmp=$(mktemp -d /tmp/vsd-rules-examples.XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
cp "$srcdir"/rules/examples/*.rules "$tmp"/ || exit 99
chmod 0644 "$tmp"/*
cd "$tmp" || exit 99
n=0
for f in *.rules; do n=$((n + 1)); done
echo "1..$n"
i=0
for f in *.rules; do
	i=$((i + 1))
	if out=$(rules_check "$f" 2>&1); then
		echo "ok $i - $out"
	else
		echo "not ok $i - $f does not check"
		echo "$out" | sed 's/^/# /'
	fi
done
