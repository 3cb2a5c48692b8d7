#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vsd pushes the VS table and the rules to every accept gate before it
# answers the command that changed them; a gate never asks vsd on the accept
# path. Against a gate started by hand (`vsctl run`), which no rule file
# declares:
#  - after `vsctl apply` returns, the next request is decided by the new
#    rules, on a single-threaded server that had just served the same VS
#    under the old ones (20 alternations), and a declared service's gate
#    has taken the table when apply returns;
#  - the first request of a VS made by `vsctl create` is served in it;
#  - with vsd stopped (SIGSTOP), requests of a VS created just before and of
#    a VS destroyed since are served (in it; at home), and the gate made no
#    request to vsd (its "pulls" count);
#  - a gate that does not answer (its supervisor stopped) does not hang
#    `vsctl apply`, which says so, and takes the table once it runs again.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"

rules_dir
PORT2=$((PORT + 7))
# the rule for www1's requests: where they come from, or www2; and a
# service the file declares, whose gate vsd starts
for to in requester www2; do
	w "$to.rules" <<EOR
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service decl home base command "$SERVER -p $PORT2"
(accept, *, req = www1) => ($to)
EOR
done
# count FILE VS: the answers in FILE served in VS
pulls() { svc echo "['vsd']['pulls']"; }
pushes() { svc echo "['vsd']['pushes']"; }
# the requests the gate counts as begun where a thread waiting in the kernel
# sat before it was moved, and its other counted misattributions: the
# default mode's price for a VS's first request after a run of another
moved() {
	svc echo "['fast']" | json 'sum(d.get(k, 0) for k in ("direct_moved", "misordered", "fd_moved"))'
}

vsd_start || { fail "vsd starts"; done_testing; }
check "apply: the VSs" quiet vsctl apply "$R/requester.rules"
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT2'"
check "the declared service runs" wait_until running decl
# The default mode: a thread the fast path let wait in the kernel under the
# old rules is moved where the new ones say before its next connection
# (fp_rules_changed); GATE_PUSH_FAST=exact|off runs the same checks in the
# other modes.
"$VSCTL" run --home base --name echo --fast "${GATE_PUSH_FAST:-on}" -- "$SERVER" -p "$PORT" > "$R/run.log" 2>&1 &
RUN=$!
on_exit "kill $RUN"
check "the gated service answers" wait_until quiet "$CLIENT" -p "$PORT" -n 1
www1() { vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -v; }

# --- apply: the next request is decided by the new rules
bad=0
for round in $(seq 20); do
	if [ $((round % 2)) = 1 ]; then old=requester new=www2 oldvs=www1 newvs=www2
	else old=www2 new=requester oldvs=www2 newvs=www1; fi
	www1 > "$R/old.$round"
	quiet vsctl apply "$R/$new.rules"
	www1 > "$R/new.$round"
	if [ "$(count "$R/old.$round" "$oldvs")/$(count "$R/new.$round" "$newvs")" != 1/1 ]; then
		bad=$((bad + 1))
		diag "round $round: $old -> $new: $(grep -o 'cg=[^ ]*' "$R/old.$round" "$R/new.$round" | tr '\n' ' ')"
	fi
done
is "$bad" 0 "apply: in 20 alternations, www1's request before each apply served by the old rule and the one right after by the new"

n0=$(svc decl "['vsd']['pushes']")
quiet vsctl apply "$R/requester.rules"
is "$(svc decl "['vsd']['pushes']")" "$((n0 + 1))" "apply: the declared service's gate took the table before apply returned"

# --- create: the gate has the new VS before create returns
check "create www3" quiet vsctl create www3 --cpu 10%
m0=$(moved)
vsctl exec www3 -- "$CLIENT" -p "$PORT" -n 1 -v > "$R/www3"
m1=$(moved)
# under --fast exact it must begin in www3; by default it may begin where
# the waiting thread sat, if the gate counted it
if [ "${GATE_PUSH_FAST:-on}" = on ] && [ "$(count "$R/www3" www3)" = 0 ]; then
	is "$((m1 - m0))" 1 "create: the new VS's first request began where the waiting thread sat, counted"
else
	is "$(count "$R/www3" www3)" 1 "create: the new VS's first request is served in it"
fi

# --- vsd stopped: nothing on the accept path waits for it
check "create www4" quiet vsctl create www4 --cpu 10%
mkfifo "$R/go"
# a client in www4 that waits for the signal to connect (vsctl exec needs vsd)
vsctl exec www4 -- sh -c "read x < '$R/go'; exec '$CLIENT' -p $PORT -n 3 -v" > "$R/www4" &
W4=$!
# a connection of www5, made and still queued when www5 is destroyed: its
# VS id is then one the gate does not know
check "create www5" quiet vsctl create www5 --cpu 10%
SPID=$(svc echo "['pid']")
kill -STOP "$SPID"
on_exit "kill -CONT $SPID"
vsctl exec www5 -- "$CLIENT" -p "$PORT" -n 1 -v > "$R/www5" &
W5=$!
wait_until sh -c "pgrep -f -- '[g]ate-client -p $PORT -n 1 -v' > '$R/w5pid'"
check "www5's connection waits in the listener's queue" \
	wait_until sh -c "ss -Htn state established '( dport = :$PORT )' | grep -q ."
check "the queued client leaves www5" quiet vsctl attach base "$(head -1 "$R/w5pid")"
check "destroy www5, its connection queued" quiet vsctl destroy www5
p0=$(pulls)
kill -STOP "$VSD_PID"
on_exit "kill -CONT $VSD_PID"
kill -CONT "$SPID"
echo go > "$R/go"
wait "$W4" "$W5"
"$CLIENT" -p "$PORT" -n 3 -v > "$R/home"
p1=$(pulls)
kill -CONT "$VSD_PID"
is "$(count "$R/www4" www4)" 3 "vsd stopped: a VS created just before is served in it"
is "$(count "$R/www5" base)" 1 "vsd stopped: a connection of a VS gone since is served at home"
is "$(count "$R/home" base)" 3 "vsd stopped: unclassified clients are served at home"
is "${p1:-none}" "${p0:-no count}" "vsd stopped: the gate asked vsd nothing on the accept path ($p0 requests, all at start)"

# --- a gate that does not answer
SUP=$(svc echo "['supervisor']")
n0=$(pushes)
kill -STOP "$SUP"
on_exit "kill -CONT $SUP"
timeout 30 "$VSCTL" apply "$R/www2.rules" > "$R/apply.out" 2>&1
rc=$?
timeout 30 "$VSCTL" create www6 --cpu 10% --json > "$R/create.json" 2>&1
kill -CONT "$SUP"
is "$rc" 0 "a stopped gate: apply returns"
like "$(cat "$R/apply.out")" "warning: gate echo did not acknowledge" "a stopped gate: apply says it did not answer"
like "$(json "d['name'] + ': ' + d['warnings'][0]" < "$R/create.json")" "^www6: warning: gate echo did not acknowledge" \
	"a stopped gate: create --json names it in \"warnings\""
pushed() { [ "$(pushes)" -gt "$n0" ]; }
check "a stopped gate takes the table once it runs" wait_until pushed
www1 > "$R/late"
is "$(count "$R/late" www2)" 1 "a stopped gate: then decides by the new rule"
done_testing
