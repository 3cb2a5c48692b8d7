#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Property: the checker never crashes, whatever the input. Every example and
# golden file is truncated at many points, has each line deleted in turn, and
# has bytes overwritten with the language's punctuation; each variant must
# give exit 0 (accepted) or 1 (refused), never a signal or another status.
. "$(dirname "$0")/rules-lib.sh"
seeds="$srcdir/rules/examples/*.rules $srcdir/tests/rules/*.rules"
n=0
for s in $seeds; do n=$((n + 1)); done
echo "1..$n"

runs=0
# one run; prints the status on failure
try() {
	chmod 0644 "$tmp/t.rules"
	rules_check --quiet "$tmp/t.rules" >/dev/null 2>&1
	st=$?
	runs=$((runs + 1))
	# vsctl check's statuses (vsctl(8) EXIT STATUS): 0 OK, 7 a bad file, 5
	# an include not found, 4 one refused for its permissions; anything
	# else (a signal, a sanitizer's report, internal) is a crash
	case $st in 0 | 4 | 5 | 7) return 0 ;; esac
	cp "$tmp/t.rules" "$tmp/crash.rules"
	echo "# status $st on variant '$1'"
	sed 's/^/#   /' "$tmp/crash.rules" | head -20
	return 1
}

i=0
for s in $seeds; do
	i=$((i + 1))
	name=$(basename "$s")
	bad=0
	size=$(wc -c <"$s")
	lines=$(wc -l <"$s")
	step=$((size / 25 + 1))
	off=0
	while [ $off -le "$size" ]; do
		head -c "$off" "$s" >"$tmp/t.rules"
		try "truncate $off" || bad=1
		off=$((off + step))
	done
	l=1
	while [ $l -le "$lines" ]; do
		sed "${l}d" "$s" >"$tmp/t.rules"
		try "delete line $l" || bad=1
		l=$((l + 1))
	done
	k=0
	for ch in '(' ')' '[' ']' '|' '*' '=' '>' '"' '\' '{' '}' ',' ';' '#' '.' ' '; do
		k=$((k + 1))
		off=$(( (k * 7919) % (size + 1) ))
		cp "$s" "$tmp/t.rules"
		printf '%s' "$ch" | dd of="$tmp/t.rules" bs=1 seek="$off" conv=notrunc 2>/dev/null
		try "byte $off = '$ch'" || bad=1
	done
	if [ $bad = 0 ]; then
		echo "ok $i - $name: no crash"
	else
		echo "not ok $i - $name: crashed"
	fi
done
echo "# $runs variants checked"
