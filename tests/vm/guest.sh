#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier's guest side: scripts/test --vm boots Debian 12 and runs this as
# root under systemd (scripts/vm/run.sh). The host's build tree is shared at
# the same path, so the tests find their binaries where make put them.
#
# Boot 1: the integration tests (make check with the host's Makefile), then
#         tests/vm/package.sh up to its reboot.
# Boot 2: the rest of package.sh (what must be back after the reboot, purge).
# Results go to tests/vm/results/ (check.log, test-suite.log, package-N.tap,
# failed/); scripts/test --vm sums them up on the host.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$top/tests/vm/results
boot=${VSD_VM_BOOT:-1}
cd "$top"

# Run only on the host, each for a reason:
#   rules-fuzz.sh: the libFuzzer harness is linked against the host's clang
#     runtime; fuzzing under TCG would take most of the tier's time and
#     covers no kernel or systemd behaviour;
#   rules-robust.sh: thousands of fork/execs of the offline checker, pure
#     user space, ~45x slower under TCG (3.5 min measured); the same binary
#     runs it on the host.
HOST_ONLY="tests/rules-fuzz.sh tests/rules-robust.sh"

run_integration() {
	local t tests
	tests=$(make -s --no-print-directory print-unit-tests)
	for t in $(make -s --no-print-directory print-integration-tests); do
		case " $HOST_ONLY " in *" $t "*) continue ;; esac
		tests="$tests $t"
	done
	# check-TESTS runs the tests without building: the guest has no compiler,
	# and the host built everything before it booted us.
	make -s --no-print-directory check-TESTS TESTS="$tests" >"$res/check.log" 2>&1
	cp test-suite.log "$res/test-suite.log"
	for t in $(grep -l '^not ok\|^ERROR\|^Bail out' $(find tests -name '*.log' ! -path 'tests/vm/*') 2>/dev/null); do
		mkdir -p "$res/failed"
		cp "$t" "$res/failed/$(echo "$t" | tr / _)"
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

if [ "$boot" = 1 ]; then
	rm -rf "$res"
	mkdir -p "$res"
	# tests/vm/only (written by scripts/test --vm --only-package) skips the
	# integration tests, for quick iterations on the package test.
	[ "$(cat tests/vm/only 2>/dev/null)" = package ] || run_integration
fi
run_package
exit 0
