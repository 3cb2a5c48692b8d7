#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fork rules (vsrules(5)): (fork, a) => (b) moves every new process created in
# VS a into VS b (vsd/fork-gate.c, the kernel's process events); the parent
# stays in a; an apply without the rule stops it; a restarted vsd keeps it.
. "$(dirname "$0")/lib.sh"
need_root
R=$(mktemp -d /tmp/vsd-rules-fork.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
w() { cat >"$R/$1"; chmod 0644 "$R/$1"; }

vsd_start || { fail "vsd starts"; done_testing; }
w on.rules <<'E'
vs a cpu 10%
vs b cpu 10%
(fork, a) => (b)
E
w off.rules <<'E'
vs a cpu 10%
vs b cpu 10%
(fork, *) => (creator)
E

# spawn VS: a shell in VS (vsctl exec: no fork, it becomes the shell) that
# forks one long sleep; sets $sh and $child
spawn() {
	vsctl exec "$1" -- sh -c 'sleep 60 & echo "$$ $!"; wait' > "$R/pids" &
	on_exit "kill $! 2>/dev/null"
	wait_until test -s "$R/pids"
	read -r sh child < "$R/pids"
	on_exit "kill $sh $child 2>/dev/null"
	: > "$R/pids"
}

check "apply (fork, a) => (b)" quiet vsctl apply "$R/on.rules"
like "$(cat "$VSD_TMP/vsd.log")" "fork gate: on" "vsd listens to process events"
spawn a
t0=$(date +%s%N)
check "a process forked in a is moved to b" wait_until in_vs "$child" b
diag "moved within $((($(date +%s%N) - t0) / 1000000)) ms of the test seeing it"
check "its parent stays in a" in_vs "$sh" a

check "apply a file whose fork rules all say creator" quiet vsctl apply "$R/off.rules"
like "$(cat "$VSD_TMP/vsd.log")" "fork gate: off" "vsd stops listening"
spawn a
sleep 0.5
check "a process forked in a now stays in a" in_vs "$child" a

check "apply the rule again" quiet vsctl apply "$R/on.rules"
vsd_stop TERM
vsd_start || fail "vsd starts again"
spawn a
check "a restarted vsd keeps the fork rule in force" wait_until in_vs "$child" b
done_testing
