# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the libFuzzer tests (tests/rules-fuzz.sh, tests/fcgi-fuzz.sh):
# run a harness for a bounded time on the seeds in $tmp/seeds and report
# one TAP line. Any crash, sanitizer report, leak or slow input fails it.
# fuzz_setup FUZZER NAME: skip the test (saying why) when FUZZER was not
# built, else plan one check and make $tmp with corpus/ and seeds/ (removed
# on exit).
fuzz_setup() {
	if [ ! -x "$1" ]; then
		echo "1..0 # SKIP ${1#"$builddir"/} not built: clang here lacks -fsanitize=fuzzer,address"
		exit 0
	fi
	echo "1..1"
	tmp=$(mktemp -d "/tmp/vsd-$2.XXXXXX") || exit 99
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/corpus" "$tmp/seeds"
}
# fuzz_run FUZZER SECONDS MAX_LEN WHAT: WHAT names the run in the line.
fuzz_run() {
	# -timeout: a single input slower than 10 s is a bug too (quadratic blowup)
	if "$1" -max_total_time="$2" -max_len="$3" -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$tmp/" \
		"$tmp/corpus" "$tmp/seeds" >"$tmp/log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log")
		echo "ok 1 - fuzzed ${2}s, ${runs:-?} inputs, no crash or leak$4"
	else
		echo "not ok 1 - the fuzzer found a problem"
		tail -40 "$tmp/log" | sed 's/^/# /'
		for a in "$tmp"/crash-* "$tmp"/leak-* "$tmp"/timeout-* "$tmp"/oom-*; do
			[ -f "$a" ] || continue
			echo "# input $(basename "$a"):"
			od -c "$a" | head -20 | sed 's/^/#   /'
		done
	fi
}
