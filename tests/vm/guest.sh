#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier's guest side: scripts/test --vm boots Debian 12 and runs this as
# root under systemd (scripts/vm/run.sh). The host's build tree is shared at
# the same path, so the tests find their binaries where make put them.
#
# Boot 1: the integration tests (make check with the host's Makefile), then
#         tests/vm/package.sh up to its reboot.
# Boot 2: the rest of package.sh (what must be back after the reboot, purge),
#         then the VM-only tests (VM_ONLY), which change the guest for good.
# Results go to tests/vm/results/ (check.log, test-suite.log, package-N.tap,
# failed/); scripts/test --vm sums them up on the host.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$top/tests/vm/results
boot=${VSD_VM_BOOT:-1}
cd "$top"

# Run only on the host, each for a reason; counted here as skipped, with
# it (test-suite.log), so that the tier's "N skipped" shows them.
HOST_ONLY="tests/rules-fuzz.sh tests/rules-robust.sh tests/rules-layers.sh"
host_only_why() {
	case $1 in
	tests/rules-fuzz.sh) echo "the libFuzzer harness is linked against the host's" \
		"clang runtime; fuzzing under TCG would take most of the tier's time and" \
		"covers no kernel or systemd behaviour" ;;
	tests/rules-robust.sh) echo "thousands of fork/execs of the offline checker, pure" \
		"user space, ~45x slower under TCG (3.5 min measured); the same binary" \
		"runs it on the host" ;;
	tests/rules-layers.sh) echo "reads the library's symbol tables with nm (binutils" \
		"is not in the image); nothing of the kernel or systemd" ;;
	esac
}
# Run only here, last (after the package test's reboot): they change the
# guest in a way only a reboot undoes, which no host may see:
#   tests/vm/favordynmods.sh: remounts cgroup2 with favordynmods.
VM_ONLY="tests/vm/favordynmods.sh"

# Each test through automake's TAP driver, as make check runs it, but without
# make: the guest has no compiler, and make would rebuild whatever looks old
# on the 9p share. Writes a test-suite.log with automake's summary lines.
run_one() {
	local t=$1 log=${1%.sh}.log
	log=${log%.log}.log
	# timeout: one hung test must not eat the tier (TCG is ~5-45x slower)
	timeout 900 env AM_TAP_AWK=awk top_srcdir="$top" top_builddir="$top" \
		bash "$top/build-aux/tap-driver.sh" --test-name "$t" --log-file "$log" \
		--trs-file "${log%.log}.trs" --color-tests no --enable-hard-errors yes \
		--expect-failure no -- "./$t" >>"$res/check.log" 2>&1
	# killed by the timeout: no .trs, or one without a result; an error
	if ! grep -q '^:test-result:' "${log%.log}.trs" 2>/dev/null; then
		echo "ERROR: $t - no result (timed out after 900 s?)" >>"$res/check.log"
		echo ':test-result: ERROR' >"${log%.log}.trs"
	fi
}

run_integration() {
	local t tests trs skipped=
	tests=$(make -s --no-print-directory print-unit-tests)
	for t in $(make -s --no-print-directory print-integration-tests); do
		case " $HOST_ONLY " in *" $t "*) skipped="$skipped $t"; continue ;; esac
		tests="$tests $t"
	done
	[ -n "$only" ] && [ "$only" != package ] && tests=$only skipped=
	for t in $tests; do
		run_one "$t"
	done
	trs=$(for t in $tests; do echo "${t%.sh}.trs"; done)
	# shellcheck disable=SC2086
	# shellcheck disable=SC2086
	{
		cat $trs 2>/dev/null | awk -v host_only="$(echo $skipped | wc -w)" '
			/^:test-result: PASS/ { p++ } /^:test-result: (FAIL|XPASS)/ { f++ }
			/^:test-result: ERROR/ { e++ } /^:test-result: SKIP/ { s++ }
			END { s += host_only
			      printf "# TOTAL: %d\n# PASS:  %d\n# SKIP:  %d\n# FAIL:  %d\n# ERROR: %d\n",
			      p + f + e + s, p, s, f, e }'
		for t in $skipped; do
			echo "SKIP: $t - not run in the VM (host only): $(host_only_why "$t")"
		done
	} >"$res/test-suite.log"
	grep '^SKIP:' "$res/test-suite.log" >>"$res/check.log"
	for t in $tests; do
		grep -q '^:test-result: \(FAIL\|ERROR\)' "${t%.sh}.trs" 2>/dev/null || continue
		mkdir -p "$res/failed"
		cp "${t%.sh}.log" "$res/failed/$(echo "$t" | tr / _).log"
	done
}

# package.sh keeps its state in a directory of its own, carried across the
# reboot in results/.
run_package() {
	local work
	work=$(mktemp -d)
	cp "$top"/tests/vm/debs/vsd_*.deb "$work/"
	cp "$res/package-state" "$work/" 2>/dev/null
	tests/vm/package.sh "$work" >"$res/package-$boot.tap" 2>&1
	cp "$work/package-state" "$res/" 2>/dev/null
	[ -e "$work/reboot-requested" ] && touch "$top/tests/vm/reboot-requested"
	return 0
}

# tests/vm/only, for quick iterations (scripts/test --vm --only ...): the
# word "package" runs just the package test; a list of tests runs those.
only=$(cat tests/vm/only 2>/dev/null)

if [ "$boot" = 1 ]; then
	rm -rf "$res"
	mkdir -p "$res"
	[ "$only" = package ] || run_integration
	# a list of tests: those alone, no package test
	[ -z "$only" ] || [ "$only" = package ] || exit 0
fi
run_package
# the last boot (no reboot asked for): the VM-only tests, as TAP files that
# scripts/test --vm counts with the package test's
if [ -z "$only" ] && [ ! -e "$top/tests/vm/reboot-requested" ]; then
	for t in $VM_ONLY; do
		run_one "$t"
		cp "${t%.sh}.log" "$res/vmonly-$(basename "${t%.sh}").tap"
		grep -q '^:test-result: \(FAIL\|ERROR\)' "${t%.sh}.trs" 2>/dev/null || continue
		mkdir -p "$res/failed"
		cp "${t%.sh}.log" "$res/failed/$(echo "$t" | tr / _).log"
	done
fi
exit 0
