#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Declared services (vsrules(5) "service"): vsd starts each under the accept
# gate at apply, its requests are served in the requester's VS, its output
# reaches vsd's log; it is restarted with back-off when it dies, adopted
# (same pids) when vsd is killed or stopped and started again, stopped and
# started by `vsctl service`, restarted when its command changes, stopped by
# apply --prune; a command that does not exist is reported with back-off
# while vsd serves on; a name taken by `vsctl run` is refused.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server

rules_dir

# served_in FILE VS: every answer in FILE came from a thread in VS
served_in() {
	[ -s "$1" ] && ! grep -v "cg=[^ ]*/$VSH_ROOT/$2 " "$1" | grep -q "^[0-9]" ||
		{ echo "the answers (${1##*/}):"; cat "$1"; return 1; }
}
# where FILE: the VSs the answers in FILE came from, in order, one per answer
where() { sed -n "s|.* cg=[^ ]*/$VSH_ROOT/\([^ ]*\) .*|\1|p" "$1" | tr '\n' ' ' | sed 's/ $//'; }

vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '$SERVER -p $PORT'"

w one.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT"
E
out=$(vsctl apply "$R/one.rules")
like "$out" "started service echo" "apply starts the declared service"
check "it runs within 10 s" wait_until running echo
SPID=$(svc echo "['pid']")
SUP=$(svc echo "['supervisor']")
[ -n "$SPID" ] && [ -n "$SUP" ] || { fail "vsctl services shows the service's pids"; done_testing; }
is "$(svc echo "['managed']")" True "it is vsd's (managed), with home $(svc echo "['home']")"
check "its process sits in its home VS" in_vs "$SPID" base
# vsd runs in the build directory here (make check): the service, in /
is "$(readlink /proc/$SPID/cwd)" / "it runs in / (vsrules(5)), not in vsd's directory $(readlink /proc/$VSD_PID/cwd)"
# A vsctl slower than the supervisor's 20 ms wait for its request finds
# the status socket closed: it still prints the answer, and no SIGPIPE
# kills it (strace delays each connect() by 100 ms; LeakSanitizer, in a
# --enable-sanitizers build, cannot work under a tracer and is turned off).
if command -v strace >/dev/null; then
	out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -o /dev/null -e trace=connect -e inject=connect:delay_exit=100000 \
		"$VSCTL" services --json)
	is "$?:$(echo "$out" | json '[s["name"] for s in d]')" '0:["echo"]' \
		"vsctl services, slow to send its request, still reads the status"
else
	ok "# SKIP strace is not installed (scripts/deps.sh --test installs it)"
fi
check "its output reaches the log" wait_until sh -c "$(declare -f logs); VSD_TMP=$VSD_TMP VSD_ROOT=$VSD_ROOT logs echo | grep -q 'echo: port $PORT'"

# --- under the accept gate: requests served in the requester's VS
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/c1"
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/c2"
check "www1's requests are served in www1" served_in "$R/c1" www1
check "www2's requests are served in www2" served_in "$R/c2" www2
{ served_in "$R/c1" www1 && served_in "$R/c2" www2; } >/dev/null ||
	{ diag "the gate's status: $(vsctl services --json)" "its log:"; logs echo | tail -20 | sed 's/^/#   /'; }

# --- killed: started again after the first back-off step, 100 ms (the
# supervisor's log names the step it took: no wall-clock bound, which the
# VM tier's TCG would stretch), and not before it; the restart counted
t0=$(date +%s%N)	# before the kill: the step starts after it
kill -KILL "$SPID"
wait_until sh -c "[ \"\$(\"$VSCTL\" services --json | grep -o '\"pid\": [0-9]*' | head -1)\" != '\"pid\": $SPID' ] && [ \"\$(\"$VSCTL\" services --json | grep -o '\"state\": \"[a-z]*\"')\" = '\"state\": \"running\"' ]"
t1=$(date +%s%N)
NPID=$(svc echo "['pid']")
diag "killed $SPID; $NPID serves after $(((t1 - t0) / 1000000)) ms"
check "SIGKILLed, the service is started again" sh -c '[ -n "$1" ] && [ "$1" != "$2" ]' - "$NPID" "$SPID"
like "$(logs echo)" "service echo exited \(signal 9 \(Killed\)\) after [0-9]+ ms; restart 1 in 100 ms" \
	"at the first back-off step, 100 ms (not a later one, nor the cap)"
check "and not before that step ($(((t1 - t0) / 1000000)) ms >= 100)" [ $((t1 - t0)) -ge 100000000 ]
is "$(svc echo "['restarts']")" 1 "vsctl services counts the restart"
is "$(svc echo "['last_exit']")" '{"signal": 9}' "and says how it ended"
like "$(vsctl services)" "^echo +running +$NPID +1 +base" "the table shows state, pid and restarts"
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 3 -v > "$R/c3"
check "the restarted service is gated too" served_in "$R/c3" www2

# --- vsd killed or stopped, then started: the service is adopted, not restarted
vsd_stop KILL
check "with vsd gone the service still answers" "$CLIENT" -p "$PORT" -n 2
vsd_start || fail "vsd starts again"
is "$(svc echo "['pid']") $(svc echo "['supervisor']")" "$NPID $SUP" "vsd killed and started: the same service and supervisor pids"
like "$(cat "$VSD_TMP/vsd.log")" "service echo: adopted its running supervisor \(pid $SUP\)" "vsd says it adopted it"
vsd_stop TERM
vsd_start || fail "vsd starts again"
is "$(svc echo "['pid']")" "$NPID" "vsd stopped and started: the same service pid"

# --- a supervisor that dies is started again by vsd
kill -KILL "$SUP"
check "a killed supervisor is started again by vsd" wait_until sh -c "! kill -0 $NPID 2>/dev/null" 
check "with a new service" wait_until running echo
SUP2=$(svc echo "['supervisor']")
_all=1; [ -n "$SUP2" ] && [ "$SUP2" != "$SUP" ] && _all=0
check "under a new supervisor" [ $_all = 0 ]

# --- vsctl service stop / start / restart
SPID=$(svc echo "['pid']")
check "vsctl service stop" quiet vsctl service stop echo
check "stops the service and its supervisor" wait_until sh -c "! kill -0 $SPID 2>/dev/null && ! kill -0 $SUP2 2>/dev/null"
check "the port is closed" wait_until sh -c "! '$CLIENT' -p $PORT -n 1 >/dev/null 2>&1"
vsd_stop TERM
vsd_start || fail "vsd starts again"
check "a stopped service stays stopped across a vsd restart" no_server
check "vsctl service start" quiet vsctl service start echo
check "starts it again" wait_until running echo
out=$(vsctl service stop nosuch 2>&1)
like "$out" "no declared service 'nosuch'" "an unknown service is an error"

# --- the command changed: restarted with the new one
SPID=$(svc echo "['pid']")
w two.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT -T 2"
E
out=$(vsctl apply --dry-run "$R/two.rules")
like "$out" "restart service echo \(command changed\)" "dry run: the service would be restarted"
check "dry run changes nothing" [ "$(svc echo "['pid']")" = "$SPID" ]
out=$(vsctl apply "$R/two.rules")
like "$out" "restarted service echo" "apply of a changed command restarts it"
check "with a new process" wait_until sh -c "! kill -0 $SPID 2>/dev/null"
check "that runs" wait_until running echo
check "the new command" grep -q -- "-T 2" "/proc/$(svc echo "['pid']")/cmdline"

# --- the gate decides by the rules, and an apply changes them at once
SPID=$(svc echo "['pid']")
w rules1.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT -T 2"
(accept, *, req = www2) => (home)
(accept, *, req = www1) => (www2)
(accept, *, req = base) => (www1)
(accept, *, req = *) => (requester)
E
check "apply rules for the accept gate" quiet vsctl apply "$R/rules1.rules"
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r2"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r1"
"$CLIENT" -p "$PORT" -n 3 -v > "$R/r0"
is "$(where "$R/r2")" "base base base base base" "(accept, *, req = www2) => (home): www2's requests are served in the home VS"
is "$(where "$R/r1")" "www2 www2 www2 www2 www2" "(accept, *, req = www1) => (www2): www1's requests are served in www2"
# vsrules(5), GATE RULES: a connection the socket gate did not classify is
# the home VS's request, so the rule for base's requests decides it
is "$(where "$R/r0")" "www1 www1 www1" "(accept, *, req = base) => (www1): a client in no VS is served in www1"
w rules2.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT -T 2"
(accept, *, req = *) => (requester)
E
check "apply a file without those rules" quiet vsctl apply "$R/rules2.rules"
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r2"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r1"
is "$(where "$R/r2")" "www2 www2 www2 www2 www2" "www2's requests move to www2 at once"
is "$(where "$R/r1")" "www1 www1 www1 www1 www1" "www1's requests to www1"
is "$(svc echo "['pid']")" "$SPID" "with the service still running (same pid)"
vsd_stop KILL
vsd_start || fail "vsd starts again"
w rules3.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT -T 2"
(accept, base, req = www2) => (stay)
E
check "apply (accept, base, req = www2) => (stay)" quiet vsctl apply "$R/rules3.rules"
# stay is decided by where the accepting thread is: at home once idle
at_home() { [ "$(svc echo "['threads']" | python3 -c 'import json,sys; print(set(t["bound"] for t in json.load(sys.stdin) if t["waiting"]))')" = "{'base'}" ]; }
wait_until at_home || diag "threads: $(svc echo "['threads']")"
check "idle service threads are back in the home VS" at_home
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r2"
is "$(where "$R/r2")" "base base base base base" "stay: www2's requests are served where the thread is, in base"
vsd_stop TERM
vsd_start || fail "vsd starts again"
wait_until at_home
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$R/r2"
is "$(where "$R/r2")" "base base base base base" "a restarted vsd hands the gate the same rules"

# --- a command that does not exist: reported, with back-off; vsd serves on
w three.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service echo home base command "$SERVER -p $PORT -T 2"
service broken home base command "/nonexistent/cmd --x"
E
check "apply with a service whose command does not exist" quiet vsctl apply "$R/three.rules"
sleep 3
n=$(svc broken "['restarts']")
diag "in 3 s: $n restarts of the broken service"
_all=1; [ "$n" -ge 2 ] && [ "$n" -le 6 ] && _all=0
check "it is retried with back-off (2 to 6 restarts in 3 s, not dozens)" [ $_all = 0 ]
is "$(svc broken "['last_exit']")" '{"code": 127}' "vsctl services shows its exit code 127"
# each attempt runs for a moment (the shell before it finds no command), and
# the back-off's fifth falls near 3.1 s: wait for a state between attempts
restarting() { case "$(svc broken "['state']")" in restarting|failed) return 0 ;; esac; return 1; }
check "and that it is restarting" wait_until restarting
like "$(logs broken)" "/nonexistent/cmd: not found" "the log has the shell's message"
like "$(logs broken)" "service broken exited \(exit 127 \(command not found\)\)" "and the supervisor's"
check "vsd serves on" quiet vsctl list
check "the other service serves on" "$CLIENT" -p "$PORT" -n 2

# --- a name held by a service started by hand is refused
"$VSCTL" run --home base --name byhand -- "$SERVER" -p $((PORT + 1)) > /dev/null 2>&1 &
HAND=$!
on_exit "kill $HAND"
wait_until sh -c "'$VSCTL' services | grep -q '^byhand '"
w four.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service byhand home base command "sleep 100"
E
out=$(vsctl apply "$R/four.rules" 2>&1)
like "$out" "four.rules:4:9: service byhand: a service of that name runs already, started by hand" \
	"apply refuses a name taken by vsctl run"
kill "$HAND"; wait "$HAND" 2>/dev/null

# --- apply --prune: undeclared services stop; nothing of them is left
SPID=$(svc echo "['pid']"); SUP=$(svc echo "['supervisor']")
BSUP=$(svc broken "['supervisor']")
w five.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
E
out=$(vsctl apply "$R/five.rules")
check "without --prune the services stay" [ "$(svc echo "['pid']")" = "$SPID" ]
out=$(vsctl apply --prune "$R/five.rules")
like "$out" "stopped service echo" "apply --prune stops the undeclared service"
check "its process, its supervisor and the broken one's are gone" \
	wait_until sh -c "! kill -0 $SPID 2>/dev/null && ! kill -0 $SUP 2>/dev/null && ! kill -0 $BSUP 2>/dev/null"
check "no process of the service is left" no_server
check "no status socket is left" sh -c "! ls $VSD_TMP/gates/*.sock 2>/dev/null | grep -q ."
is "$(vsctl services --json)" "[]" "vsctl services lists none"
done_testing
