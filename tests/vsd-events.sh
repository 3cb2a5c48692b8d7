#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Limit events, provoked for real and read from the kernel's own counters
# through vsd (vsctl show, --json, list --json): an OOM kill in a VS with
# --mem, a fork bomb held by --pids, a CPU hog held by --cpu-max. Each
# counter must start at 0 and rise. On a hybrid host they come from the v1
# files (memory.failcnt, memory.oom_control, pids.events, cpu.stat), on pure
# v2 from memory.events, pids.events and cpu.stat (lib/cgroup-events.c).
. "$(dirname "$0")/lib.sh"
need_root
MEMHOG=$top_builddir/tests/memhog
[ -x "$MEMHOG" ] || skip_all "tests/memhog is not built"
vsd_start || { fail "vsd starts"; done_testing; }
layout=$(cg_layout)
diag "layout: $layout"

ev() { vsctl show "$1" --json | json "d['events']['$2']"; }
# rise VS KEY: the counter is above 0 (vsd's figures are at most 0.5 s
# old: vsd/stats.h; wait_until retries)
rise() { [ "$(ev "$1" "$2")" -gt 0 ] 2>/dev/null; }

check "create mem --mem 32M" vsctl create mem --cpu 10% --mem 32M
check "create fork --pids 8" vsctl create fork --cpu 10% --pids 8
check "create hog --cpu-max 10%" vsctl create hog --cpu 5% --cpu-max 10%

for k in oom_kill mem_max; do is "$(ev mem $k)" 0 "mem: $k starts at 0"; done
is "$(ev fork pids_max)" 0 "fork: pids_max starts at 0"
is "$(ev hog cpu_throttled)" 0 "hog: cpu_throttled starts at 0"
is "$(ev hog cpu_throttled_usec)" 0 "hog: cpu_throttled_usec starts at 0"
if [ "$layout" = unified ]; then
	is "$(ev mem mem_high)" 0 "mem: mem_high is counted on v2"
else
	is "$(ev mem mem_high)" null "mem: mem_high is null on v1 (no memory.high)"
fi

# OOM: 256 MiB touched in a VS limited to 32 MiB (no swap can take it:
# the VM tier and this machine have none; memhog exits 0 if it got it all).
out=$(vsctl exec mem -- "$MEMHOG" 256 2>&1); st=$?
diag "memhog: status $st: $out"
[ "$st" -eq 137 ] && ok "memhog was killed (SIGKILL)" || fail "memhog was killed (status $st)"
wait_until rise mem oom_kill && ok "mem: oom_kill rose to $(ev mem oom_kill)" ||
	fail "mem: oom_kill rose ($(ev mem oom_kill))"
wait_until rise mem mem_max && ok "mem: mem_max rose to $(ev mem mem_max)" ||
	fail "mem: mem_max rose ($(ev mem mem_max))"
like "$(vsctl show mem)" "events: oom-kill [1-9][0-9]*, " "show prints the OOM kills"

# Fork bomb, bounded: 20 children against --pids 8; refusals are counted.
vsctl exec fork -- sh -c 'for i in $(seq 20); do sleep 3 & done; wait' >/dev/null 2>&1
wait_until rise fork pids_max && ok "fork: pids_max rose to $(ev fork pids_max)" ||
	fail "fork: pids_max rose ($(ev fork pids_max))"
like "$(vsctl show fork)" "pids-max [1-9]" "show prints the refused forks"

# CPU hog against a 10% cap: the kernel throttles it in most periods.
vsctl exec hog -- sh -c 'while :; do :; done' &
hogpid=$!
on_exit "kill $hogpid"
sleep 2
kill "$hogpid"; wait "$hogpid" 2>/dev/null
wait_until rise hog cpu_throttled && ok "hog: cpu_throttled rose to $(ev hog cpu_throttled)" ||
	fail "hog: cpu_throttled rose ($(ev hog cpu_throttled))"
t=$(ev hog cpu_throttled_usec)
[ "$t" -gt 100000 ] 2>/dev/null && ok "hog: throttled for $t us (> 0.1 s at a 10% cap; summed over CPUs)" ||
	fail "hog: throttled time ($t us)"
# periods and throttled periods from one sample (they move while read)
pt=$(vsctl show hog --json | json '"%d %d" % (d["events"]["cpu_periods"], d["events"]["cpu_throttled"])')
read -r p t <<<"$pt"
[ "$p" -ge "$t" ] 2>/dev/null && [ "$t" -gt 0 ] && ok "hog: $p periods >= $t throttled ones" ||
	fail "hog: periods ($pt)"
like "$(vsctl show hog)" "cpu cap: throttled in [1-9][0-9]* of [1-9][0-9]* periods" \
	"show prints the throttling"

# list --json carries the same counters, per VS.
n=$(vsctl list --json | json "[v['name'] for v in d if v['events']['oom_kill'] and v['events']['oom_kill'] > 0]")
is "$n" '["mem"]' "list --json: only mem has OOM kills"

# Counters are per VS: the others' stay at 0.
is "$(ev fork oom_kill)" 0 "fork: no OOM kill"
is "$(ev mem pids_max)" 0 "mem: no refused fork"

for v in mem fork hog; do check "destroy $v" vsctl destroy $v --force; done
done_testing
