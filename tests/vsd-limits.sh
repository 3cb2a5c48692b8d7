#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Limits land in the right cgroup files for this host's layout, and the
# kernel enforces them.
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
ncpu=$(nproc)
layout=$(cg_layout)
diag "layout: $layout, $ncpu CPUs"

check "create lim with every limit" vsctl create lim --cpu 25% --cpu-max 50% --mem 64M --pids 8
cpu=$(vs_cgroup lim cpu)
mem=$(vs_cgroup lim memory)
pids=$(vs_cgroup lim pids)
quota=$((50 * ncpu * 1000))
if [ "$layout" = unified ]; then
	is "$(cat "$cpu/cpu.weight")" 2500 "25% -> cpu.weight 2500"
	is "$(cat "$cpu/cpu.max")" "$quota 100000" "cap 50% of $ncpu CPUs -> cpu.max"
	is "$(cat "$mem/memory.max")" 67108864 "memory.max"
else
	is "$(cat "$cpu/cpu.shares")" 2500 "25% -> cpu.shares 2500"
	is "$(cat "$cpu/cpu.cfs_period_us")/$(cat "$cpu/cpu.cfs_quota_us")" "100000/$quota" \
		"cap 50% of $ncpu CPUs -> cfs quota"
	is "$(cat "$mem/memory.limit_in_bytes")" 67108864 "memory.limit_in_bytes"
fi
is "$(cat "$pids/pids.max")" 8 "pids.max"

# The kernel enforces the pids limit on a command run in the VS.
out=$(vsctl exec lim -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 2 & done; wait' 2>&1)
like "$out" "Cannot fork|Resource temporarily unavailable|retry: " "the 9th process cannot fork"

# The cap holds a CPU hog near 50% of the machine even when the machine is idle otherwise.
vsctl exec lim -- sh -c 'while :; do :; done' &
on_exit "kill $!"
vsctl exec lim -- sh -c 'while :; do :; done' &
on_exit "kill $!"
sleep 1
# The window runs from one usage read to the other. Each read happens
# somewhere inside its vsctl call, which takes a good part of a second under
# TCG (the VM tier): time each call and take the window between their
# midpoints, so the reading does not depend on how slow the calls are.
usage_at() {	# prints "usage_usec midpoint_usec"
	local a b u
	a=$(date +%s%6N)
	u=$(vsctl show lim --json | json 'd["usage"]["cpu_usec"]')
	b=$(date +%s%6N)
	echo "$u $(( (a + b) / 2 ))"
}
read -r u0 t0 < <(usage_at)
sleep 5
read -r u1 t1 < <(usage_at)
pct=$(( (u1 - u0) * 100 / ((t1 - t0) * ncpu) ))
diag "capped VS used $pct% of the machine"
[ "$pct" -le 55 ] && ok "cap 50% holds ($pct%)" || fail "cap 50% holds ($pct%)"
vsctl destroy lim --force >/dev/null

# Clearing limits writes the kernel's "no limit" values.
check "create free" vsctl create free --cpu 10% --cpu-max 20% --mem 1G --pids 100
check "set every limit to none" vsctl set free --cpu-max none --mem none --pids none
cpu=$(vs_cgroup free cpu)
mem=$(vs_cgroup free memory)
pids=$(vs_cgroup free pids)
if [ "$layout" = unified ]; then
	is "$(cat "$cpu/cpu.max")" "max 100000" "cpu.max back to max"
	is "$(cat "$mem/memory.max")" max "memory.max back to max"
else
	is "$(cat "$cpu/cpu.cfs_quota_us")" -1 "cfs quota back to -1"
	[ "$(cat "$mem/memory.limit_in_bytes")" -gt 1000000000000 ] && ok "memory limit lifted" || fail "memory limit lifted"
fi
is "$(cat "$pids/pids.max")" max "pids.max back to max"
check "set --cpu 60%" vsctl set free --cpu 60%
if [ "$layout" = unified ]; then
	is "$(cat "$cpu/cpu.weight")" 6000 "cpu.weight follows set"
else
	is "$(cat "$cpu/cpu.shares")" 6000 "cpu.shares follows set"
fi
check "destroy free" vsctl destroy free
done_testing
