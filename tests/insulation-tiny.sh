#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A few seconds of the insulation and virtual-host benchmarks, end to end on
# real Apache, FastCGI and cgroups: every mode must serve requests and the
# CSVs must be well formed.  The ratios are NOT checked: timings on a shared
# 2-core machine are noise at this length.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root: it creates cgroups and starts Apache"
	exit 0
fi
for f in "$top_builddir/fcgi-demo/adserver" "$top_builddir/benchmarks/loadgen"; do
	[ -x "$f" ] || { echo "Bail out! $f is not built"; exit 1; }
done
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] || {
	echo "1..0 # SKIP apache2 is not installed (scripts/deps.sh installs it)"; exit 0; }

. "$top_srcdir/tests/vsd-harness.sh"	# vsh_dirs, vsh_check_roots
out=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
trap 'st=$?; rm -rf "$out"; vsh_check_roots || st=1; exit $st' EXIT
n=0
ok()   { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

echo "1..16"
PATH=$PATH:/usr/sbin "$top_srcdir/benchmarks/insulation" --tiny --out "$out/ins" \
    >"$out/ins.log" 2>&1
rc=$?
sed 's/^/# /' "$out/ins.log"
csv=$out/ins/insulation.csv

# The accept gate is part of this build: the driver exits 3 ("the accept
# gate is missing") only if vsctl lost it, and that is a failure here.
check "insulation: exit status 0" test $rc = 0

header_ok() {
	head -1 "$1" | grep -q '^mode,rep,b_conns,a_conns,a_rps,b_rps,a_p50_ms,a_p99_ms,'
}
# Every data line: 18 fields, a known mode, numbers elsewhere.
rows_ok() {
	awk -F, -v modes=" $2 " 'NR == 1 { next }
	     NF != 18 || index(modes, " " $1 " ") == 0 { bad = 1 }
	     { for (i = 2; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) bad = 1 }
	     END { exit bad || NR < 2 }' "$1"
}
# mode served requests on both sites, without errors
served() {
	awk -F, -v m="$2" '$1 == m && $5 > 0 && $6 > 0 && $13 == 0 && $14 == 0 { ok = 1 }
	     END { exit !ok }' "$1"
}
check "insulation: CSV header" header_ok "$csv"
check "insulation: CSV rows well formed" rows_ok "$csv" "insulation-only gate replicated"
check "insulation-only: both sites served requests" served "$csv" insulation-only
check "replicated: both sites served requests" served "$csv" replicated
check "gate: both sites served requests" served "$csv" gate
# Ad requests really reached the FastCGI server(s) in every mode that ran.
check "ad requests were answered" awk -F, 'NR > 1 && ($11 <= 0 || $12 <= 0) { bad = 1 }
    END { exit bad }' "$csv"
check "replicated: each site's ads served in its own VS" \
    grep -Eq "replicated: site A's ad ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$out/ins.log"
check "gate: the ad server rebinds to each site's VS" \
    grep -Eq "gate: site A's ad ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$out/ins.log"
# site.conf.in turns backend connection reuse off so the gate sees every request.
check "every FastCGI request came with its own accept()" eval \
    'grep -q "one accept per request" "$out/ins.log" && ! grep -q "connections were reused\|did not report" "$out/ins.log"'
check "insulation: plot written" test -s "$out/ins/insulation.png"
check "insulation: summary table printed" grep -q "A(gate) / A(replicated)" "$out/ins.log"

PATH=$PATH:/usr/sbin "$top_srcdir/benchmarks/vhosts" --tiny --out "$out/vh" >"$out/vh.log" 2>&1
rc=$?
sed 's/^/# /' "$out/vh.log"
check "vhosts: exit status 0" test $rc = 0
check "vhosts: CSV rows well formed" rows_ok "$out/vh/vhosts.csv" "no-vs vs"
check "vhosts: both modes served requests" \
    eval 'served "$out/vh/vhosts.csv" no-vs && served "$out/vh/vhosts.csv" vs'

# Nothing left behind: cgroups, socket-gate pins or processes.
leftovers() {
	local log cg run
	for log in "$out/ins.log" "$out/vh.log"; do
		read -r cg run < <(sed -n 's/.*cgroups: \([^;]*\); scratch: \(.*\)/\1 \2/p' "$log")
		[ -n "$cg" ] && [ -n "$run" ] || return 1
		# below the cgroup the benchmark ran in, or at a root
		if VSH_ROOT=$cg vsh_dirs | grep -q . || grep -q "warning: .* is left behind" "$log"; then
			echo "# left behind: cgroup $cg"; return 1
		fi
		if [ -e "/sys/fs/bpf/vsd/$cg" ] || grep -q "/sys/fs/bpf/vsd/$cg was left behind" "$log"; then
			echo "# left behind: socket-gate pins /sys/fs/bpf/vsd/$cg"; return 1
		fi
		if [ -e "$run" ] || pgrep -f "$run" >/dev/null; then
			echo "# left behind: $run or a process using it"; return 1
		fi
	done
}
check "no cgroups, pins or processes left behind" leftovers
