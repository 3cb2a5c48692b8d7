#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# apply --prune of a rule file that drops a declared service and its home VS:
# one apply stops the service (SIGTERM, SIGKILL 10 s later),
# waits until it is gone, then destroys the VS; when it returns nothing of
# either is left. A process of anyone else in that VS still refuses the
# apply, which then changes nothing, and a destroy that fails after the
# service was stopped undoes the apply and starts the service again.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server

rules_dir
vs_names() { vsctl list --json | json '" ".join(sorted(v["name"] for v in d))'; }
# no_cgroup VS: no directory of VS in any hierarchy vsd uses
no_cgroup() {
	local d
	for d in $(cg_root_dirs "$VSD_ROOT"); do
		[ -e "$d/$1" ] && { echo "$d/$1 is left"; return 1; }
	done
	return 0
}

vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"

w with.rules <<E
vs base cpu 10%
vs www1 cpu 30%
service echo home base command "$SERVER -p $PORT -n 2"
E
w without.rules <<E
vs www1 cpu 30%
E
check "apply a service and its home VS" quiet vsctl apply "$R/with.rules"
check "the service runs" wait_until running echo
SPID=$(svc echo "['pid']")
SUP=$(svc echo "['supervisor']")
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 3 > /dev/null
check "it serves www1 under the gate" [ $? = 0 ]
check "its prefork workers run in base" [ "$(server_procs | wc -l)" -ge 3 ]

# --- a process of someone else in base: refused whole, nothing changes
"$VSCTL" exec base -- sleep 300 &
OTHER=$!
on_exit "kill -KILL $OTHER"
wait_until in_vs "$OTHER" base
out=$(vsctl apply --prune "$R/without.rules" 2>&1)
like "$out" "VS 'base' is not in the file but has 1 process" \
	"another process in the home VS refuses the apply (the service's do not count)"
is "$(svc echo "['pid']") $(vs_names)" "$SPID base www1" "refused: the service and its VS stay"
kill -KILL "$OTHER"; wait "$OTHER" 2>/dev/null
wait_until sh -c "! grep -qx $OTHER $(vs_cgroup base cpu)/cgroup.procs"

out=$(vsctl apply --dry-run --prune "$R/without.rules")
like "$out" "destroy base" "dry run: the home VS would be destroyed"
like "$out" "stop service echo" "dry run: the service would be stopped"
is "$(svc echo "['pid']") $(vs_names)" "$SPID base www1" "dry run: nothing changes"

# --- one apply --prune drops both
out=$(vsctl apply --prune "$R/without.rules" 2>&1)
st=$?
is "$st" 0 "apply --prune of a file without the service and its home VS succeeds"
like "$out" "destroyed base" "it destroys the home VS"
like "$out" "stopped service echo" "it stops the service"
# no waiting from here on: when the apply returns, everything is gone
check "no process of the service is left" no_server
check "its supervisor is gone" sh -c "! kill -0 $SUP 2>/dev/null"
check "no cgroup of the VS is left" no_cgroup base
is "$(vs_names)" "www1" "vsctl list shows only www1"
is "$(vsctl services --json)" "[]" "vsctl services lists none"
check "no status socket is left" sh -c "! ls $VSD_TMP/gates/*.sock 2>/dev/null | grep -q ."

# --- a service that ignores SIGTERM: SIGKILL after 10 s; a destroy that
# fails after it was stopped (a process moved into the VS meanwhile, behind
# vsd's back) undoes the apply and starts the service again
w stub.rules <<E
vs base cpu 10%
vs www1 cpu 30%
service stub home base command "trap '' TERM; $SERVER -p $PORT -n 2; sleep 1000"
E
check "apply a service that ignores SIGTERM" quiet vsctl apply "$R/stub.rules"
check "it runs" wait_until running stub
SPID=$(svc stub "['pid']")
DIRS=$(vsctl show base --json | json '" ".join(d["cgroups"])')
sleep 300 &
OTHER=$!
on_exit "kill -KILL $OTHER"
vsctl apply --prune "$R/without.rules" > "$R/out1" 2>&1 &
APPLY=$!
sleep 2		# the apply is waiting for the service, 10 s
for d in $DIRS; do echo "$OTHER" > "$d/cgroup.procs"; done
wait "$APPLY"
st=$?
diag "$(sed "s/^/apply: /" "$R/out1")"
check "a destroy that fails after the service stopped fails the apply" [ "$st" != 0 ]
like "$(cat "$R/out1")" "destroy VS base failed: .*nothing changed" "and says nothing changed"
like "$(cat "$R/out1")" "service stub was stopped and is started again" "and that the service is started again"
is "$(vs_names)" "base www1" "the VS is still there"
check "the service runs again" wait_until running stub
check "a new process, in its home VS" [ "$(svc stub "['pid']")" != "$SPID" ]
check "in its home VS" in_vs "$(svc stub "['pid']")" base
kill -KILL "$OTHER"; wait "$OTHER" 2>/dev/null
for d in $DIRS; do wait_until sh -c "! grep -qx $OTHER $d/cgroup.procs"; done

out=$(vsctl apply --prune "$R/without.rules" 2>&1)
is "$?" 0 "then apply --prune succeeds"
like "$(logs stub)" "service stub: still running 10 s after SIGTERM; SIGKILL" "after SIGKILL, 10 s after SIGTERM"
check "no process of the service is left" no_server
check "no cgroup of the VS is left" no_cgroup base
is "$(vs_names) $(vsctl services --json)" "www1 []" "vsctl list and services show both gone"
done_testing
