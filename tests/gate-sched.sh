#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The supervisor's scheduling class (gates/accept/sched.c, vsctl-run(8),
# "Supervisor priority"): by default vsd-gate runs SCHED_FIFO at priority 1
# with RLIMIT_RTTIME's soft limit set, while the service it starts runs SCHED_OTHER at
# nice 0; the SIGXCPU the kernel sends when that limit runs out drops it to
# SCHED_OTHER and says so, and the tick takes SCHED_FIFO back 10 s later;
# --sched off leaves it as started; a bad value is refused. The no-op moves
# that keep moves off RCU grace periods (gates/accept/rcu-warm.c) are the
# supervisor's own by default, so they run in its class, and the warm helper
# only sits in the home VS (with --user too); --warm helper-fifo has the
# helper make them at SCHED_FIFO 1 under the same guard. With --user the
# supervisor keeps CAP_SYS_NICE and so takes SCHED_FIFO back after a
# demotion too, while the service, run as the user, holds no capability and
# keeps the RLIMIT_RTPRIO it was started with. Read from the kernel:
# /proc/PID/stat (rt_priority, policy, nice), /proc/PID/schedstat,
# /proc/PID/limits and /proc/PID/status.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
plan 23

# policy PID: "POLICY RT_PRIORITY NICE" (stat fields 41, 40, 19; the command
# name, field 2, may hold spaces, so count from the ")" that ends it)
policy() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $39, $38, $17 }'; }
is_policy() { [ "$(policy "$1")" = "$2" ]; }
# the warm helper's status (pid, writes): its no-op moves
warm() { status | grep -o '"warm": {[^}]*}' | grep -o "\"$1\": [0-9]*" | grep -o '[0-9]*$'; }
# PID's RLIMIT_RTPRIO line (soft, hard)
rtprio() { grep '^Max realtime priority' "/proc/$1/limits" | tr -s ' '; }
# times PID has run (schedstat field 3)
runs() { awk '{ print $3 }' "/proc/$1/schedstat"; }
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
HP=$(warm pid)
check "default: the warm helper runs SCHED_OTHER at nice 0" is_policy "${HP:-0}" "0 0 0"
# a move now (the thread goes home after 100 ms idle, or to www1), then
# 0.4 s of no-op moves: the supervisor's, while the helper sleeps
w0=$(warm writes) r0=$(runs "$HP")
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 3 > /dev/null 2>&1
sleep 0.4
w1=$(warm writes) r1=$(runs "$HP")
diag "no-op moves $w0 -> $w1; the helper ran $r0 -> $r1 times"
check "default: the supervisor makes the no-op moves (10 or more in 0.4 s; the helper ran at most once)" \
	sh -c "[ $((w1 - w0)) -ge 10 ] && [ $((r1 - r0)) -le 1 ]"
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

# --- --user: the supervisor stays uid 0 but keeps no CAP_DAC_OVERRIDE; its
# no-op moves write root's own cgroup file all the same
run_start suser --home home --user nobody -- "$SERVER" || { nok "vsctl run --user starts the service"; exit 1; }
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 3 > "$W/c2" 2>&1
w0=$(warm writes)
sleep 0.3
w1=$(warm writes)
diag "--user: no-op moves $w0 -> $w1"
check "--user: connections are served, and the supervisor's no-op moves go on (10 or more in 0.3 s)" \
	sh -c "grep -q '^ok 3 bad 0' '$W/c2' && [ $((w1 - w0)) -ge 10 ]"
# it keeps CAP_SYS_NICE (bit 23) to take SCHED_FIFO back after a demotion
# (without it, the retake failed); the service must get no real-time right:
# no CAP_SYS_NICE in any set, and the RLIMIT_RTPRIO it was started with
supervisor || nok "the supervisor's pid"
nice_cap() { echo $(( (0x$(awk "/^$2:/ { print \$2 }" "/proc/$1/status") >> 23) & 1 )); }
svc_no_rt() {
	[ "$(nice_cap "$SPID" CapEff)$(nice_cap "$SPID" CapPrm)$(nice_cap "$SPID" CapBnd)" = 000 ] &&
		[ "$(rtprio "$SPID")" = "$(rtprio $$)" ]
}
diag "--user: supervisor $SUP: $(policy "$SUP"), CAP_SYS_NICE $(nice_cap "$SUP" CapEff); service $SPID: CAP_SYS_NICE $(nice_cap "$SPID" CapEff)$(nice_cap "$SPID" CapPrm)$(nice_cap "$SPID" CapBnd), $(rtprio "$SPID"); this shell: $(rtprio $$)"
check "--user: the supervisor runs SCHED_FIFO at priority 1" is_policy "$SUP" "1 1 0"
check "--user: the service holds no CAP_SYS_NICE and the RLIMIT_RTPRIO the supervisor was started with" svc_no_rt
kill -XCPU "$SUP"
check "--user, SIGXCPU: the supervisor drops to SCHED_OTHER" wait_for is_policy "$SUP" "0 0 0"
check "--user, SIGXCPU: SCHED_FIFO again 10 s later" back
gate_stop

# --- --warm helper-fifo: the helper makes the no-op moves, in the
# supervisor's class and under its guard
printf '#!/bin/sh\nexec %s --warm helper-fifo "$@"\n' "$GATE" > "$W/gate-hf"
printf '#!/bin/sh\nexec %s --sched off --warm helper-fifo "$@"\n' "$GATE" > "$W/gate-hfoff"
chmod +x "$W/gate-hf" "$W/gate-hfoff"
# hf NAME WRAPPER: the service under it; HP the helper's pid
hf() {
	export VSD_GATE="$W/$2"
	run_start "$1" --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
	unset VSD_GATE
	HP=$(warm pid)
	wait_for sh -c "[ -n '$HP' ] && grep -q 'vsd-gate-warm' /proc/$HP/comm"
	sleep 0.2	# it takes its class after joining the home VS
}
# home's v1 cpu cgroup: with real-time group scheduling a real-time task
# needs real-time runtime there, and a new cgroup has none
HC=$(find /sys/fs/cgroup/cpu/ -maxdepth 4 -type d -path "*/$T/home" 2>/dev/null | head -1)
if [ -n "$HC" ] && [ -f "$HC/cpu.rt_runtime_us" ]; then
	hf hf0 gate-hf
	diag "helper $HP: $(policy "$HP"), home's cpu.rt_runtime_us $(cat "$HC/cpu.rt_runtime_us")"
	check "helper-fifo, no real-time runtime in home's cpu cgroup: the helper stays SCHED_OTHER and says why" \
		sh -c "[ \"\$(sed 's/.*) //' /proc/$HP/stat | awk '{ print \$39, \$38, \$17 }')\" = '0 0 0' ] &&
		grep -q 'no real-time priority for the warm helper (Operation not permitted' '$W/hf0.err'"
	gate_stop
	# ours alone: the private vsd's root (right under the mount) and home
	if [ "$(dirname "$(dirname "$HC")")" = /sys/fs/cgroup/cpu ] &&
	    echo 10000 > "$(dirname "$HC")/cpu.rt_runtime_us" && echo 10000 > "$HC/cpu.rt_runtime_us"; then
		RTOK=1
	else
		RTOK=
	fi
else
	ok "# SKIP no real-time group scheduling: nothing to refuse the helper"
	RTOK=1
fi
if [ -n "$RTOK" ]; then
	hf hf1 gate-hf
	diag "helper $HP: $(policy "$HP")"
	check "helper-fifo: the helper runs SCHED_FIFO at priority 1" is_policy "$HP" "1 1 0"
	check "helper-fifo: the helper's RLIMIT_RTTIME is 200000 us, as the supervisor's" \
		grep -Eq '^Max realtime timeout +200000 +unlimited +us' "/proc/$HP/limits"
	kill -XCPU "$HP"
	check "helper-fifo, SIGXCPU: the helper drops to SCHED_OTHER, alive, and says why" wait_for sh -c \
		"kill -0 $HP && [ \"\$(sed 's/.*) //' /proc/$HP/stat | awk '{ print \$39, \$38, \$17 }')\" = '0 0 0' ] &&
		grep -q 'the warm helper ran 200 ms without sleeping: SCHED_OTHER for 10 s' '$W/hf1.err'"
	gate_stop
else
	for _t in 1 2 3; do ok "# SKIP home's cpu cgroup cannot get real-time runtime here"; done
fi
hf hfoff gate-hfoff
check "helper-fifo with --sched off: the helper runs SCHED_OTHER at nice 0" is_policy "$HP" "0 0 0"
gate_stop
