#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Where the whole machine's time goes per connection while 4 clients drive
# one single-threaded accept-and-close server (benchmarks/accept-cost's
# concurrent run), for the accept gate's rate target: ungated, under the
# mechanism's floor (benchmarks/notify-floor) and under the accept gate.
# `perf record -a -e cpu-clock -g` on both CPUs; each sample is put in a
# class by its task (the clients and the server are "acceptbench", the
# supervisor "vsd-gate" or "notify-floor", idle "swapper") and by what its
# stack was doing: waking a client with the server's FIN (tcp_fin ->
# sock_def_wakeup), waking the server for a connection (sock_def_readable),
# a context switch (__schedule); the rest is not shown apart. Each class is
# given in microseconds per connection: samples / frequency * 1e6 / conns.
# A wake-up costs the waker most when the wakee's CPU has halted (an IPI
# to a halted virtual CPU): the classes show how much of each mode's time
# that is. Sampling inflates every class evenly: compare the modes. It
# also slows the supervisor enough that some accept records lag and their
# accepts are handed over (the gate's line says how many): each hand-over
# wakes the service with a plain wake-up, which shows as idle time.
#
#   benchmarks/experiments/system-profile.sh [SECONDS] [HZ]   (root, perf)
BENCH=sysprof
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
. "$top_srcdir/benchmarks/lib-vsd.sh"
D=${1:-6}
HZ=${2:-1000}
AB=$top_builddir/benchmarks/acceptbench
NF=$top_builddir/benchmarks/notify-floor
bench_check_env
command -v perf >/dev/null || bench_die "needs perf (Debian: linux-perf)"
[ -x "$AB" ] && [ -x "$NF" ] || bench_die "build first: make -j2"
[ "$D" -ge 4 ] || bench_die "SECONDS: 4 at least"
bench_start_vsd
SPID=
stop_server() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=; }
trap 'stop_server; bench_cleanup' EXIT
vsctl create home --cpu 20% > /dev/null || bench_die "cannot create VS home"
vsctl create www1 --cpu 40% > /dev/null || bench_die "cannot create VS www1"
echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC'); nproc: $(nproc); kernel: $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $0 $D $HZ: perf -a at $HZ Hz for $((D - 2)) of the clients' $D seconds"
for mode in ungated floor gated; do
	case $mode in
	ungated) vsctl exec home -- "$AB" server > "$BENCH_DIR/s.out" 2>&1 & ;;
	floor) vsctl exec home -- "$NF" -- "$AB" server > "$BENCH_DIR/s.out" 2>&1 & ;;
	gated) vsctl run --gate accept --home home --name sysprof -- "$AB" server > "$BENCH_DIR/s.out" 2>&1 & ;;
	esac
	SPID=$!
	i=0
	while ! PORT=$(awk '/^port /{print $2; exit}' "$BENCH_DIR/s.out") || [ -z "$PORT" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || bench_die "$mode: the server did not start"; sleep 0.05
	done
	vsctl exec www1 -- "$AB" conc -p "$PORT" -j 4 -d 1 > /dev/null	# warm
	vsctl exec www1 -- "$AB" conc -p "$PORT" -j 4 -d "$D" > "$BENCH_DIR/conc" &
	CP=$!
	sleep 1
	perf record -a -e cpu-clock -F "$HZ" -g -o "$BENCH_DIR/$mode.data" -- sleep $((D - 2)) > /dev/null 2>&1
	wait $CP
	[ $mode != gated ] || hand=$(vsctl services --json | python3 -c 'import json, sys
s = [x for x in json.load(sys.stdin) if x["name"] == "sysprof"][0]
print("gate: %d handed over, %d without a hand-over" % (s["handed"], s["fast"]["continued"] + s["fast"]["direct"]))')
	stop_server
	rate=$(awk '{for (i = 1; i < NF; i++) if ($i == "rate") print $(i + 1)}' "$BENCH_DIR/conc")
	perf script -i "$BENCH_DIR/$mode.data" -F comm,ip,sym 2>/dev/null | python3 -c '
import sys
mode, hz, secs, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
conns = rate * secs
cls = {}
def add(k): cls[k] = cls.get(k, 0) + 1
comm, stack = None, []
def flush():
    if comm is None: return
    c = comm if comm in ("acceptbench", "swapper", "vsd-gate", "notify-floor") else "other"
    if c == "notify-floor": c = "supervisor"
    if c == "vsd-gate": c = "supervisor"
    if "tcp_fin" in stack and "sock_def_wakeup" in stack: w = "FIN wakes a client"
    elif "sock_def_readable" in stack and "tcp_child_process" in stack: w = "connection wakes the server"
    elif "__schedule" in stack: w = "context switch"
    else: w = "rest"
    add((c, w)); add((c, "all"))
for line in sys.stdin:
    if not line.strip():
        flush(); comm, stack = None, []; continue
    if not line.startswith("\t"):
        comm = line.split()[0]
        continue
    stack.append(line.split()[-1] if line.split() else "")
flush()
us = lambda n: n / hz * 1e6 / conns
print("%-8s %6.0f accepts/s%s" % (mode, rate, ("; " + sys.argv[5]) if len(sys.argv) > 5 and sys.argv[5] else ""))
for c in ("acceptbench", "supervisor", "swapper", "other"):
    if (c, "all") not in cls: continue
    parts = ", ".join("%s %.1f" % (w, us(n)) for (cc, w), n in sorted(cls.items()) if cc == c and w not in ("all", "rest"))
    print("  %-12s %6.1f us/conn%s" % (c if c != "swapper" else "idle", us(cls[(c, "all")]), " (" + parts + ")" if parts else ""))
' "$mode" "$HZ" "$((D - 2))" "${rate:-0}" "$hand"
	hand=
done
