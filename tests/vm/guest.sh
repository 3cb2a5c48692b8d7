#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier's guest side: scripts/test --vm boots Debian 12 and runs this as
# root under systemd (scripts/vm/run.sh). The host's build tree is shared at
# the same path, so the tests find their binaries where make put them.
#
# Boot 1: the tests that only this guest can judge (all but VM_SKIP), then
#         tests/vm/package.sh up to its reboot.
# Boot 2: the rest of package.sh (what must be back after the reboot, purge),
#         then the VM-only tests (VM_ONLY), which change the guest for good.
#
# Results go to tests/vm/results/ on the share AS EACH SCRIPT ENDS, so that
# the host can count them however the run ends (stopped, timed out, the guest
# dead; scripts/vm/report.sh sums them up):
#   plan         every script this run means to run or skip, in order
#   running      the script running now and when it started (guest clock)
#   scripts.tsv  one line per script done: script, seconds, result (PASS,
#                FAIL, ERROR, SKIP; VM-SKIP for VM_SKIP), checks passed,
#                failed, skipped, and VM_SKIP's reason
#   check.log, package-N.tap, failed/ (the log of each failed script)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$top/tests/vm/results
boot=${VSD_VM_BOOT:-1}
cd "$top"

# Left to the host suite, one line each: the script, then why. What they
# test is pure user space (parsing, refusing, formatting, file modes): the
# kernel, cgroup v2 and systemd play no part in it, so the host's run of
# the same code proves it, and under TCG each costs minutes. What a refusal
# leaves in the cgroup files, what lands in them and what the kernel does
# with it are tested here by the scripts that stay (vsd-limits, vsd-drift,
# vsd-events, rules-apply, ...). A script that drives cgroups, a gate, BPF
# or systemd differently on pure v2 or 6.1 does not belong here.
VM_SKIP='
tests/unit/test-util          pure user space: string and number helpers
tests/unit/test-state         pure user space: the state file on a temporary directory
tests/unit/test-proto         pure user space: the control protocol over a socketpair
tests/unit/test-cgroup-v2     pure user space: the v2 backend on a fake tree (the real one: vsd-limits, vsd-drift, vsd-events)
tests/unit/test-cgroup-handle pure user space: the gate'"'"'s cgroup handle on a fake tree, both layouts assumed (the real moves: the gate-* scripts here)
tests/unit/test-rules         pure user space: the rule parser
tests/unit/test-tos           pure user space: TOS, DSCP and mark parsing
tests/unit/test-gate-queue    pure user space: the accept gate'"'"'s queues and aging
tests/unit/test-gate-share    pure user space: the remaining share, computed from given usage
tests/unit/test-gate-vs-table pure user space: parsing and merging the VS table
tests/unit/test-gate-decide   pure user space: recorded traces replayed through the decision
tests/unit/test-gate-workers  pure user space: the worker-limit counts
tests/unit/test-rules-write   pure user space: the rule writer
tests/unit/test-rules-attrs   pure user space: sites and content rules against an oracle
tests/unit/test-fcgi          pure user space: FastCGI records from captures
tests/unit/test-buf           pure user space: the JSON string writer
tests/rules-fuzz.sh           libFuzzer harness linked against the host'"'"'s clang runtime; pure user space, most of the tier'"'"'s time under TCG
tests/rules-robust.sh         thousands of fork/execs of the offline checker, pure user space (3.5 min under TCG)
tests/rules-layers.sh         reads the library'"'"'s symbol tables with nm (no binutils in the image); no kernel or systemd
tests/rules-golden.sh         the offline checker'"'"'s messages and dumps: pure user space
tests/rules-examples.sh       the offline checker on the examples (rules-examples-apply.sh applies them here)
tests/rules-path.sh           the rule file'"'"'s path and its directories'"'"' modes: file-system permissions, no cgroup or systemd
tests/hostile.sh              a table of hostile inputs refused before vsd touches the kernel (7 min under TCG)
tests/vsd-badinput.sh         bad arguments refused by vsctl and vsd before any cgroup write
tests/vsd-protocol.sh         malformed messages on the control socket: the protocol parser
tests/vsd-input.sh            names, keys and descriptor counts refused by the protocol and rule parsers
tests/vsctl-cli.sh            vsctl'"'"'s exit statuses, --json and help (the limits it sets: vsd-limits.sh here)
tests/vsctl-completion.sh     bash completion: bash and vsctl'"'"'s help text
tests/vsd-ctl-flood.sh        the control socket'"'"'s connection deadlines and cap: poll and accept, the same on 6.1
tests/vsd-security.sh         the control socket'"'"'s file mode and SO_PEERCRED (vsd does not use 6.5'"'"'s SO_PEERPIDFD: nothing differs on 6.1)
tests/vsd-metrics-dir.sh      the metrics and state directories'"'"' modes and links: file-system permissions, no cgroup or systemd
tests/unit/test-import-fold   pure user space: folding names into ranges
tests/import.sh               vsctl import reads Apache'"'"'s and nginx'"'"'s configuration and the pools: pure user space (where requests land: classify-hostile.sh here)
tests/fcgi-fuzz.sh            libFuzzer harness linked against the host'"'"'s clang runtime; pure user space
tests/lint-tests.sh           reads the test scripts: no kernel or systemd
tests/lint-figures.sh         reads the documents: no kernel or systemd
tests/lint-man.sh             reads the man pages and the sources: no kernel or systemd
tests/package-lint.sh         builds the package and runs lintian (dpkg-dev is not in the image); the package is installed here by tests/vm/package.sh
tests/dist-complete.sh        compares the release tarball with git (not in the image)
tests/wordpress-tiny.sh       five modes of Apache, PHP-FPM and MariaDB with 10,000 posts a site: under TCG a page takes about a second and the loads time out (the database mode on pure v2: gate-mariadb*.sh here)
tests/lint-gate-calls.sh      reads the gate'"'"'s objects with nm (no binutils in the image); no kernel or systemd
tests/lint-gate-layout.sh     reads the gate'"'"'s sources: no kernel or systemd
tests/lint-names.sh           reads the sources and documents: no kernel or systemd
tests/lint-dead.sh            reads the objects with nm (no binutils in the image); no kernel or systemd
'
# Run only here, last (after the package test's reboot): they change the
# guest in a way only a reboot undoes, which no host may see:
#   tests/vm/migrate.sh: installs the package and rewrites the guest's
#     Apache, nginx and PHP-FPM configuration (docs/migrating.md);
#   tests/vm/favordynmods.sh: remounts cgroup2 with favordynmods.
VM_ONLY="tests/vm/migrate.sh tests/vm/favordynmods.sh"

skip_reason() { printf '%s\n' "$VM_SKIP" | awk -v t="$1" '$1 == t { sub(/^[^ ]+ +/, ""); print; exit }'; }

# One line of scripts.tsv; the counts from an automake .trs or a TAP file.
record() {	# NAME SECONDS RESULT FILE [REASON]
	local counts
	counts=$(awk '/^ok .*# [Ss][Kk][Ii][Pp]/ { s++; next }
		/^:test-result: (PASS|XFAIL)/ || /^ok / { p++ }
		/^:test-result: (FAIL|XPASS|ERROR)/ || /^not ok / { f++ }
		/^:test-result: SKIP/ { s++ }
		END { printf "%d\t%d\t%d", p, f, s }' "$4" 2>/dev/null) || counts="0	0	0"
	[ -n "$counts" ] || counts="0	0	0"
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$counts" "${5:-}" >>"$res/scripts.tsv"
	rm -f "$res/running"
}

keep_failed() {	# NAME LOG
	mkdir -p "$res/failed"
	cp "$2" "$res/failed/$(echo "$1" | tr / _).log"
}

# Each test through automake's TAP driver, as make check runs it, but without
# make: the guest has no compiler, and make would rebuild whatever looks old
# on the 9p share.
run_one() {
	local t=$1 log=${1%.sh}.log start result
	log=${log%.log}.log
	echo "$t $(date +%s)" >"$res/running"
	# a result the host's own run left on the share is not this run's
	rm -f "${log%.log}.trs"
	start=$(date +%s)
	# timeout: one hung test must not eat the tier (TCG is ~5-45x slower)
	timeout 900 env AM_TAP_AWK=awk top_srcdir="$top" top_builddir="$top" \
		bash "$top/build-aux/tap-driver.sh" --test-name "$t" --log-file "$log" \
		--trs-file "${log%.log}.trs" --color-tests no --enable-hard-errors yes \
		--expect-failure no -- "./$t" >>"$res/check.log" 2>&1
	# killed by the timeout: no .trs, or one without a result; an error
	if ! grep -q '^:test-result:' "${log%.log}.trs" 2>/dev/null; then
		echo "ERROR: $t - no result (timed out after 900 s?)" >>"$res/check.log"
		printf ':test-result: ERROR\n:global-test-result: ERROR\n' >"${log%.log}.trs"
	fi
	result=$(sed -n 's/^:global-test-result: //p' "${log%.log}.trs")
	case $result in XFAIL) result=PASS ;; XPASS) result=FAIL ;; esac
	record "$t" $(( $(date +%s) - start )) "${result:-ERROR}" "${log%.log}.trs"
	case $result in FAIL|ERROR) keep_failed "$t" "$log" ;; esac
}

# package.sh keeps its state in a directory of its own, carried across the
# reboot in results/. previous/: the previous release's package, or why-not
# (scripts/vm/deb-previous.sh).
run_package() {
	local work start name="tests/vm/package.sh#$boot" result=PASS
	work=$(mktemp -d)
	cp "$top"/tests/vm/debs/vsd_*.deb "$work/"
	mkdir "$work/previous"
	cp "$top"/tests/vm/debs/previous/* "$work/previous/" 2>/dev/null
	cp "$res/package-state" "$work/" 2>/dev/null
	echo "$name $(date +%s)" >"$res/running"
	start=$(date +%s)
	tests/vm/package.sh "$work" >"$res/package-$boot.tap" 2>&1 || result=FAIL
	grep -q '^not ok' "$res/package-$boot.tap" && result=FAIL
	grep -q '^ok' "$res/package-$boot.tap" || result=ERROR
	record "$name" $(( $(date +%s) - start )) "$result" "$res/package-$boot.tap"
	[ "$result" = PASS ] || keep_failed "$name" "$res/package-$boot.tap"
	cp "$work/package-state" "$res/" 2>/dev/null
	[ -e "$work/reboot-requested" ] && touch "$top/tests/vm/reboot-requested"
	return 0
}

# tests/vm/only, for quick iterations (scripts/test --vm --only ...): the
# word "package" runs just the package test; a list of tests runs those
# (VM_SKIP or not).
only=$(cat tests/vm/only 2>/dev/null)

if [ "$boot" = 1 ]; then
	rm -rf "$res"
	mkdir -p "$res"
	: >"$res/scripts.tsv"
	case $only in
	"") tests="$(make -s --no-print-directory print-unit-tests) $(make -s --no-print-directory print-integration-tests)" ;;
	package) tests= ;;
	*) tests=$only ;;
	esac
	{
		for t in $tests; do echo "$t"; done
		if [ -z "$only" ] || [ "$only" = package ]; then
			echo "tests/vm/package.sh#1"
			echo "tests/vm/package.sh#2"
		fi
		[ -n "$only" ] || for t in $VM_ONLY; do echo "$t"; done
	} >"$res/plan"
	for t in $tests; do
		why=$(skip_reason "$t")
		if [ -n "$why" ] && [ -z "$only" ]; then
			echo "SKIP: $t (not run in the VM: $why)" >>"$res/check.log"
			record "$t" 0 VM-SKIP /dev/null "$why"
			continue
		fi
		run_one "$t"
	done
	# a list of tests: those alone, no package test
	[ -z "$only" ] || [ "$only" = package ] || exit 0
fi
run_package
# the last boot (no reboot asked for): the VM-only tests
if [ -z "$only" ] && [ ! -e "$top/tests/vm/reboot-requested" ]; then
	for t in $VM_ONLY; do
		run_one "$t"
	done
fi
exit 0
