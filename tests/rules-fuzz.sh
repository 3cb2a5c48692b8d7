#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer harness (rules/fuzz-rules.c) for a bounded time on a
# seed corpus made of the examples and the golden files. Any crash, sanitizer
# report or leak fails the test. Skipped only where clang cannot build it.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
fuzz=$builddir/rules/fuzz-rules
secs=${RULES_FUZZ_SECONDS:-20}

if [ ! -x "$fuzz" ]; then
	echo "1..0 # SKIP rules/fuzz-rules not built: clang here lacks -fsanitize=fuzzer,address"
	exit 0
fi
echo "1..1"
tmp=$(mktemp -d /tmp/vsd-rules-fuzz.XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/corpus" "$tmp/seeds"
cp "$srcdir"/rules/examples/*.rules "$srcdir"/tests/rules/*.rules "$tmp/seeds/"
# -timeout: a single input slower than 10 s is a bug too (quadratic blowup)
if "$fuzz" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
	-print_final_stats=1 -artifact_prefix="$tmp/" \
	"$tmp/corpus" "$tmp/seeds" >"$tmp/log" 2>&1; then
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log")
	echo "ok 1 - fuzzed ${secs}s, ${runs:-?} inputs, no crash or leak"
else
	echo "not ok 1 - the fuzzer found a problem"
	tail -40 "$tmp/log" | sed 's/^/# /'
	for a in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
		[ -f "$a" ] || continue
		echo "# input $(basename "$a"):"
		od -c "$a" | head -20 | sed 's/^/#   /'
	done
fi
