#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Why the accept gate moves only the v1 cpu/cpuacct membership per request
# on hybrid hosts: the re-binding time under the gate's real pattern (one
# move per request, requests a few ms apart, alternating between two VSs)
# for each way of following the binding in cgroup2:
#   never   v1 "tasks" writes only (cpu + cpuacct): what the default (lazy)
#           costs for a service that opens no sockets while serving
#   always  the same plus a cgroup2 cgroup.procs write (whole process): what
#           eager cgroup2 moves cost, and what lazy costs a service that
#           opens a socket per request
# Times are the gate's own (clock around the cgroup writes), from its status.
#   benchmarks/experiments/gate-bind-choice.sh [REQUESTS] [RUNS]   (root; hybrid host)
top_srcdir=${top_srcdir:-$(dirname "$0")/..}
top_builddir=${top_builddir:-.}
. "$top_srcdir/tests/gate-lib.sh"
N=${1:-400}
RUNS=${2:-3}
CSV=${CSV:-gate-bind-choice.csv}
[ "$(id -u)" = 0 ] || { echo "gate-bind-choice: needs root" >&2; exit 1; }
pure_v2 && { echo "gate-bind-choice: this compares v1 and cgroup2 moves: hybrid hosts only" >&2; exit 1; }
mk_vs home 1 2000 && mk_vs www1 2 4000 && mk_vs www2 3 4000 && mk_map || exit 1
PB=$((20000 + ($$ % 40) * 250))
echo "mode,run,requests,rebinds,p50_us,p99_us,max_us" > "$CSV"
for mode in never always; do
	req="spin 2"
	for run in $(seq "$RUNS"); do
		gate_start "bc$mode$run" --conns-map "$MAP" --cgroup2 $mode -- "$SERVER" > /dev/null || exit 1
		i=0
		while [ $i -lt "$N" ]; do
			echo "map update pinned $MAP key hex 02 00 00 00 $(le16 $((PB + i))) $(le16 "$PORT") 7f 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 7f 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 value hex 00 00 00 00 00 00 00 00 $(le32 $((2 + i % 2))) 00 00 00 00"
			i=$((i + 1))
		done > "$W/batch"
		bpftool batch file "$W/batch" > /dev/null
		"$CLIENT" -p "$PORT" -n "$N" -b "$PB" -r "$req" > /dev/null
		st=$(status)
		n=$(echo "$st" | grep -o '"rebind": {"count": [0-9]*' | grep -o '[0-9]*$')
		p50=$(echo "$st" | grep -o '"p50_us": [0-9]*' | grep -o '[0-9]*$')
		p99=$(echo "$st" | grep -o '"p99_us": [0-9]*' | grep -o '[0-9]*$')
		max=$(echo "$st" | grep -o '"max_us": [0-9]*' | grep -o '[0-9]*$')
		echo "$mode,$run,$N,$n,$p50,$p99,$max" >> "$CSV"
		gate_stop
	done
done
echo "# $(date -u +%F) nproc=$(nproc) kernel=$(uname -r) cgroups=hybrid; $N requests alternating 2 VSs, 2 ms CPU each; $RUNS runs"
echo "# median over runs [min-max]"
printf "%-8s %-16s %-16s %-20s\n" mode "p50(us)" "p99(us)" "max(us)"
for mode in never always; do
	med() { grep "^$mode," "$CSV" | cut -d, -f"$1" | sort -n | awk '{a[NR]=$1} END {printf "%d [%d-%d]", a[int((NR+1)/2)], a[1], a[NR]}'; }
	printf "%-8s %-16s %-16s %-20s\n" $mode "$(med 5)" "$(med 6)" "$(med 7)"
done
