#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Where the accept gate's supervisor spends its time per accept, against the
# mechanism's floor (benchmarks/notify-floor), for the accept gate's rate target.
# For each mode a fresh acceptbench server (as benchmarks/accept-cost runs
# it: VS "home", clients in VS "www1", 4 client threads in a closed loop),
# and `perf record -e cpu-clock -g` on the supervisor process alone while
# the clients run. The samples are put in classes by the system call they
# were in (a class "(switch)" if the stack went through __schedule: the
# context switch itself), and each class is given in microseconds per
# accept: samples / frequency / accepts in the sampled seconds.
#
# Low sampling frequency on purpose: at perf's default 4 kHz the sampling
# itself slowed the supervisor enough that the accept records lagged and a
# fifth of the accepts were handed over instead of let through (status
# "handed"), which is not the path being measured; at 300 Hz it was 2%.
# Sampling still inflates every class evenly: compare the modes, not the
# totals with the schedstat figures of accept-cost.
#
#   benchmarks/experiments/supervisor-profile.sh [SECONDS] [HZ]   (root, perf)
BENCH=sprof
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
. "$top_srcdir/benchmarks/lib-vsd.sh"
D=${1:-14}
HZ=${2:-300}
AB=$top_builddir/benchmarks/acceptbench
NF=$top_builddir/benchmarks/notify-floor
bench_check_env
command -v perf >/dev/null || bench_die "needs perf (Debian: linux-perf)"
[ -x "$AB" ] && [ -x "$NF" ] || bench_die "build first: no $AB or $NF"
[ "$D" -ge 4 ] || bench_die "SECONDS: at least 4"
SPID=
stop_server() {
	[ -n "$SPID" ] && kill -TERM "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	SPID=
}
bench_start_vsd
trap 'stop_server; bench_cleanup' EXIT
vsctl create home --cpu 20% > /dev/null || bench_die "cannot create VS home"
vsctl create www1 --cpu 40% > /dev/null || bench_die "cannot create VS www1"

# classes SCRIPT-OUTPUT ACCEPTS: the table
classes() {
	python3 - "$1" "$2" "$HZ" <<'EOF'
import collections, sys
path, accepts, hz = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
stacks, cur = [], []
for line in open(path):
    line = line.strip()
    if not line:
        if cur:
            stacks.append(cur)
        cur = []
        continue
    parts = line.split(None, 1)
    cur.append(parts[1] if len(parts) > 1 else parts[0])
if cur:
    stacks.append(cur)
n = collections.Counter()
for s in stacks:
    key = "user space"
    for i, f in enumerate(s):
        if f.startswith("entry_SYSCALL"):
            sysf = [x for x in s[:i] if x.startswith(("__x64_sys_", "__do_sys_"))]
            key = sysf[-1].replace("__do_sys_", "").replace("__x64_sys_", "") if sysf else "syscall exit"
            break
    if any("__schedule" in f for f in s):
        key += " (switch)"
    n[key] += 1
for k, v in n.most_common(12):
    print("  %-24s %5.1f%%  %6.2f us/accept" % (k, 100.0 * v / len(stacks), v / hz / accepts * 1e6))
print("  %-24s %5d samples %6.2f us/accept" % ("total", len(stacks), len(stacks) / hz / accepts * 1e6))
EOF
}

echo "# $(bench_machine)"
echo "# $0 $D $HZ: perf -F $HZ on the supervisor for $((D - 2)) of the clients' $D seconds"
for mode in gated floor; do
	out=$BENCH_DIR/$mode.out
	if [ $mode = floor ]; then
		vsctl exec home -- "$NF" -- "$AB" server > "$out" 2>&1 &
	else
		vsctl run --gate accept --home home --name sprof -- "$AB" server > "$out" 2>&1 &
	fi
	SPID=$!
	i=0
	while ! port=$(awk '/^port /{ print $2; exit }' "$out") || [ -z "$port" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || bench_die "$mode server did not start: $(cat "$out")"
		sleep 0.05
	done
	srv=$(pgrep -f -- "$AB server" | while read -r p; do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = acceptbench ] && echo "$p"; done | tail -1)
	sup=$(awk '/^PPid:/ { print $2 }' /proc/"$srv"/status 2>/dev/null)
	[ -n "$sup" ] || bench_die "$mode: cannot find the supervisor"
	vsctl exec www1 -- "$AB" conc -p "$port" -j 4 -d 1 > /dev/null	# warm up
	vsctl exec www1 -- "$AB" conc -p "$port" -j 4 -d "$D" > "$BENCH_DIR/conc" &
	cpid=$!
	sleep 1
	perf record -q -e cpu-clock -F "$HZ" -g -p "$sup" -o "$BENCH_DIR/perf.data" -- sleep $((D - 2)) \
		> /dev/null 2>&1 || bench_die "perf record failed"
	wait "$cpid"
	rate=$(awk '{ for (i = 1; i < NF; i++) if ($i == "rate") print $(i + 1) }' "$BENCH_DIR/conc")
	[ -n "$rate" ] || bench_die "$mode: the client failed: $(cat "$BENCH_DIR/conc")"
	handed=
	[ $mode = gated ] && handed=$(vsctl services --json | grep -o '"handed": [0-9]*' | head -1)
	echo "$mode: $rate accepts/s under perf${handed:+; $handed}"
	perf script -i "$BENCH_DIR/perf.data" -F ip,sym > "$BENCH_DIR/perf.txt" 2>/dev/null
	classes "$BENCH_DIR/perf.txt" "$(awk -v r="$rate" -v d=$((D - 2)) 'BEGIN { print r * d }')"
	rm -f "$BENCH_DIR/perf.data"
	stop_server
done
