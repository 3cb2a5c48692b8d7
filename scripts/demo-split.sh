#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Two VSs at 75% and 25%, two CPU hogs in each, for a few seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
VSD=./vsd/vsd VSCTL=./vsctl/vsctl
tmp=$(mktemp -d /tmp/vsd-demo.XXXXXX)
export VSD_SOCKET=$tmp/vsd.sock
root=vsd-demo-$$
secs=${DEMO_SECONDS:-8}
vsd_pid=
cleanup() {
	for vs in gold bronze; do $VSCTL destroy "$vs" --force >/dev/null 2>&1; done
	[ -n "$vsd_pid" ] && kill "$vsd_pid" 2>/dev/null && wait "$vsd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

$VSD --foreground --socket "$VSD_SOCKET" --state-dir "$tmp/state" --cgroup-root "$root" \
	2>"$tmp/vsd.log" &
vsd_pid=$!
for i in $(seq 50); do [ -S "$VSD_SOCKET" ] && break; sleep 0.1; done
if ! $VSCTL create gold --cpu 75% || ! $VSCTL create bronze --cpu 25%; then
	cat "$tmp/vsd.log" >&2
	exit 1
fi
echo "vsd is running; created VS gold (75%) and bronze (25%)"
for vs in gold gold bronze bronze; do
	$VSCTL exec $vs -- sh -c 'while :; do :; done' &
	disown	# destroy --force ends them; no job-control chatter
done
usage() { $VSCTL show "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["usage"]["cpu_usec"])'; }
sleep 1
g0=$(usage gold) b0=$(usage bronze)
echo "measuring for $secs s with two CPU hogs in each VS on $(nproc) CPUs ..."
sleep "$secs"
g1=$(usage gold) b1=$(usage bronze)
$VSCTL list
python3 - "$((g1 - g0))" "$((b1 - b0))" <<'PY'
import sys
g, b = int(sys.argv[1]), int(sys.argv[2])
t = g + b
print()
print("VS       configured  measured  (share of what the two used)")
print("gold          75%%      %5.1f%%" % (100.0 * g / t))
print("bronze        25%%      %5.1f%%" % (100.0 * b / t))
print("difference: %.1f points" % abs(100.0 * g / t - 75))
PY
