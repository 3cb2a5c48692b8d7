#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier's summary, on the host, from what the guest wrote to its
# results directory as each script ended (tests/vm/guest.sh: plan, running,
# scripts.tsv), so it holds whatever stopped the run: a signal, run.sh's
# watchdog, a guest that died.
#
#   report.sh RESULTS_DIR [TABLE]
#
# Prints each script left to the host suite (SKIP, with why), the slowest
# ten, and, if the run did not reach the end of its plan, how many scripts
# ran, passed and failed and which one was running. Ends with the line
# "N passed, N failed, N skipped" (checks; each script not run in the VM
# counts as one skip). Exit status 1 if anything failed or the run is
# incomplete.
#
# With TABLE (benchmarks/results/vm-tier; scripts/test-vm gives it for full
# runs only, not --only), also writes TABLE.md and TABLE.csv: each script's
# seconds in the guest and its result, and whether the run was complete
# (if not, what stopped before its end).
# The caller may say more about the run in VM_SECONDS (VM time, boots
# included), VM_ACCEL, LOAD_START and LOAD_END (the host's uptime line).
set -eu
res=${1:?usage: report.sh RESULTS_DIR [TABLE]}
table=${2:-}
tsv=$res/scripts.tsv
plan=$res/plan
[ -f "$tsv" ] || : >"$tsv" 2>/dev/null || tsv=/dev/null

awk -F'\t' '$3 == "VM-SKIP" { printf "SKIP: %s (not run in the VM: %s)\n", $1, $7 }
	$3 == "FAIL" || $3 == "ERROR" { printf "%s: %s (%d of %d checks failed; log in tests/vm/results/failed/)\n", $3, $1, $5, $4 + $5 + $6 }' "$tsv"

echo "Slowest scripts in the VM (seconds, guest clock):"
awk -F'\t' '$3 != "VM-SKIP" { printf "%6d  %s  %s\n", $2, $1, $3 }' "$tsv" | sort -rn | head -10

# Scripts of the plan with no result: the run stopped before them.
missing=$(if [ -f "$plan" ]; then
	awk -F'\t' 'NR == FNR { done[$1] = 1; next } !($1 in done) { print $1 }' "$tsv" "$plan"
fi)
nmissing=$(printf '%s' "$missing" | grep -c . || true)
running= since=
if [ -f "$res/running" ]; then
	set -- $(cat "$res/running")
	running=$1
	[ -n "${2:-}" ] && since=" (for about $(( $(date +%s) - $2 )) s)"
fi

status=0
summary=$(awk -F'\t' '$3 == "VM-SKIP" { vs++; next }
	{ ran++; p += $4; f += $5; s += $6 }
	$3 == "FAIL" || $3 == "ERROR" { bad++ }
	END { printf "%d %d %d %d %d %d", ran, ran - bad, bad, vs, p, f; printf " %d", s }' "$tsv")
set -- $summary
ran=$1 sok=$2 sbad=$3 vskip=$4 pass=$5 fail=$6 skip=$7
if [ ! -f "$plan" ]; then
	echo "VM tier: INCOMPLETE: the guest made no plan (it never started tests/vm/guest.sh; see run.sh's output above)"
	status=1
elif [ "$nmissing" -gt 0 ]; then
	echo "VM tier: INCOMPLETE: $ran of $(( ran + nmissing )) scripts ran ($sok passed, $sbad failed); $nmissing not run or cut short"
	[ -n "$running" ] && echo "VM tier: it stopped while running $running$since"
	echo "VM tier: not run or cut short:" $missing
	status=1
fi
above=; [ "$vskip" -eq 0 ] || above=" (SKIP above)"
echo "VM tier: $ran scripts ran ($sok passed, $sbad failed), $vskip left to the host suite$above"
[ "$sbad" -eq 0 ] && [ "$fail" -eq 0 ] || status=1
echo "$pass passed, $fail failed, $(( skip + vskip )) skipped"

if [ -n "$table" ] && [ -f "$plan" ]; then
	{
		echo "script,seconds,result,passed,failed,skipped,reason"
		awk -F'\t' '{ gsub(/"/, "\"\"", $7); printf "%s,%s,%s,%s,%s,%s,\"%s\"\n", $1, $2, $3, $4, $5, $6, $7 }' "$tsv"
	} >"$table.csv"
	{
		echo "# The VM tier, per script"
		echo
		echo "Written by \`./scripts/test --vm\` (scripts/vm/report.sh) from its last"
		echo "run; each script's wall time in the guest (Debian 12, 2 vCPUs,"
		echo "3 GiB), slowest first. The scripts not run in the VM, and why, are"
		echo "tests/vm/guest.sh's VM_SKIP. CSV: $(basename "$table").csv (run order)."
		echo
		echo "- run: started $(date -u -r "$plan" '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
		echo "- guest: $(sed -n 's/^booted: //p' "$res/../out/boot-1.log" 2>/dev/null | head -1); accel ${VM_ACCEL:-?}"
		echo "- host: $(nproc) CPUs; load average at the start ${LOAD_START:-?}, at the end ${LOAD_END:-?}"
		echo "- VM time: ${VM_SECONDS:-?} s (boots included, the image already made); in the scripts: $(awk -F'\t' '{ s += $2 } END { print s }' "$tsv") s"
		echo "- $ran scripts ran ($sok passed, $sbad failed), $vskip left to the host suite; $pass checks passed, $fail failed, $skip skipped"
		if [ "$nmissing" -gt 0 ]; then
			echo "- INCOMPLETE: the run stopped${running:+ while running $running}; not run or cut short:" $missing
		else
			echo "- complete: every script of the plan ran"
		fi
		echo
		echo "| script | seconds | result | checks passed | failed | skipped |"
		echo "|---|---:|---|---:|---:|---:|"
		awk -F'\t' '$3 != "VM-SKIP" { printf "%s\t| %s | %s | %s | %s | %s | %s |\n", $2, $1, $2, $3, $4, $5, $6 }' "$tsv" |
			sort -t"$(printf '\t')" -k1,1rn | cut -f2-
		echo
		echo "Left to the host suite:"
		echo
		awk -F'\t' '$3 == "VM-SKIP" { printf "- %s: %s\n", $1, $7 }' "$tsv"
	} >"$table.md"
	echo "VM tier: wrote $table.md and $table.csv"
fi
exit $status
