#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Golden tests for the rule-file checker: tests/rules/X.rules -> X.out, the
# messages (or the --dump of a good file) and the exit status, compared with
# diff -u. An X.out without X.rules checks a file that does not exist.
. "$(dirname "$0")/rules-lib.sh"
# A private copy: the permission tests chmod files, and whatever umask made
# the checkout, the other files must be writable by their owner only.
cp "$srcdir"/tests/rules/* "$tmp"/ || exit 99
chmod 0644 "$tmp"/*
chmod 0664 "$tmp"/warn-group-writable.rules "$tmp"/warn-include-writable.inc
chmod 0646 "$tmp"/warn-world-writable.rules
root=0
[ "$(id -u)" = 0 ] && chown 65534 "$tmp"/warn-owner.rules && root=1
cd "$tmp" || exit 99

n=0
for out in *.out; do n=$((n + 1)); done
echo "1..$n"
i=0
for out in *.out; do
	i=$((i + 1))
	name=${out%.out}
	if [ "$name" = warn-owner ] && [ $root = 0 ]; then
		echo "ok $i - $name # SKIP giving a file to another uid needs root"
		continue
	fi
	rules_check --dump "$name.rules" >"$name.got" 2>&1
	echo "exit $?" >>"$name.got"
	if diff -u "$out" "$name.got" >"$name.diff"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name"
		sed 's/^/# /' "$name.diff"
	fi
done
