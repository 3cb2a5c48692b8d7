#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The supervisor's scheduling class (gates/accept/sched.c, vsctl-run(8),
# "Supervisor priority"): by default vsd-gate runs SCHED_FIFO at priority 1
# with RLIMIT_RTTIME's soft limit set, while the service it starts runs SCHED_OTHER at
# nice 0; the SIGXCPU the kernel sends when that limit runs out drops it to
# SCHED_OTHER and says so, and the tick takes SCHED_FIFO back 10 s later;
# --sched off leaves it as started; a bad value is refused. Read from the
# kernel: /proc/PID/stat (rt_priority, policy, nice) and /proc/PID/limits.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 11

# policy PID: "POLICY RT_PRIORITY NICE" (stat fields 41, 40, 19; the command
# name, field 2, may hold spaces, so count from the ")" that ends it)
policy() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $39, $38, $17 }'; }
is_policy() { [ "$(policy "$1")" = "$2" ]; }
# the supervisor: vsctl run's process itself, or its child
supervisor() {
	SUP=$GPID
	[ "$(cat /proc/$SUP/comm 2>/dev/null)" = vsd-gate ] ||
		SUP=$(pgrep -P "$GPID" -x vsd-gate | head -1)
	[ -n "$SUP" ]
}

vs_create "home 10%" "www1 40%" || exit 1

# --- bad value: refused before anything starts
"$GATE" --sched maybe --home home --vs-table "$TAB" -- true > /dev/null 2> "$W/e1"
_rc=$?; _all=1; [ $_rc = 1 ] || [ $_rc = 2 ]; _r1=$?
grep -q -- "--sched maybe: expected fifo or off" "$W/e1" && [ $_r1 = 0 ] && _all=0
check "--sched maybe: refused, the value named" [ $_all = 0 ]

# --- the default
run_start sdef --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
supervisor || nok "the supervisor's pid"
diag "supervisor $SUP: $(policy "$SUP"); service $SPID: $(policy "$SPID")"
check "default: the supervisor runs SCHED_FIFO at priority 1 (policy 1, rt_priority 1)" \
	is_policy "$SUP" "1 1 0"
check "default: the service runs SCHED_OTHER at nice 0 (not inherited)" is_policy "$SPID" "0 0 0"
check "default: the supervisor's RLIMIT_RTTIME is 200000 us (SIGXCPU), the hard limit unchanged" \
	grep -Eq '^Max realtime timeout +200000 +unlimited +us' "/proc/$SUP/limits"
check "default: the service's RLIMIT_RTTIME is as the supervisor was started (unlimited)" \
	grep -Eq '^Max realtime timeout +unlimited +unlimited +us' "/proc/$SPID/limits"
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 3 > "$W/c1" 2>&1
check "default: connections are served" grep -q '^ok 3 bad 0' "$W/c1"
# what the kernel sends when the supervisor runs RLIMIT_RTTIME without sleeping
kill -XCPU "$SUP"
check "SIGXCPU: the supervisor drops to SCHED_OTHER" wait_for is_policy "$SUP" "0 0 0"
check "SIGXCPU: it is still alive and says why" wait_for sh -c \
	"kill -0 $SUP && grep -q 'the supervisor ran 200 ms without sleeping: SCHED_OTHER for 10 s' '$W/sdef.err'"
back() { for _i in $(seq 150); do is_policy "$SUP" "1 1 0" && return 0; sleep 0.1; done; return 1; }
check "SIGXCPU: SCHED_FIFO again 10 s later" back
gate_stop

# --- --sched off (vsd-gate's option; vsctl run takes the supervisor from VSD_GATE)
printf '#!/bin/sh\nexec %s --sched off "$@"\n' "$GATE" > "$W/gate-off"
chmod +x "$W/gate-off"
export VSD_GATE="$W/gate-off"
run_start soff --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
unset VSD_GATE
supervisor || nok "the supervisor's pid"
check "--sched off: the supervisor runs SCHED_OTHER at nice 0" is_policy "$SUP" "0 0 0"
check "--sched off: no RLIMIT_RTTIME set" \
	grep -Eq '^Max realtime timeout +unlimited +unlimited +us' "/proc/$SUP/limits"
gate_stop
