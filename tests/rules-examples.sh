#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in rules/examples/ passes the check (from a private copy, so a
# checkout made with umask 002 does not trip the group-writable refusal).
. "$(dirname "$0")/rules-lib.sh"
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
