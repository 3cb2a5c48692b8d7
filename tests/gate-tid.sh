#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A thread ID that comes back names a new task, not the thread the gate
# knew by it (gates/accept/thread-exit.c). A gated service's thread accepts
# a connection of VS www1 (the gate re-binds it there) and ends; then a new
# process of the service gets the same ID (clone3(2) with set_tid, which
# needs root: an unprivileged program would have to wait for the kernel's
# pids to go round) and accepts the next connections of www1. It sits in
# the home VS: if the gate took it for the old thread, already in www1, it
# would not move it, and www1's requests would run at home. Default
# options.
. "$(dirname "$0")/lib.sh"
need_gate_escape

R=$(mktemp -d /tmp/vsd-tid.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null ||
	{ fail "create the VSs"; done_testing; }

"$VSCTL" run --gate accept --home base --name tid -- "$ESC" serve "$PORT" "'$ESC' tid 10" \
	> "$R/tid.log" 2>&1 &
RUN=$!
on_exit "kill $RUN 2>/dev/null; wait $RUN 2>/dev/null"
wait_until running tid || fail "the service starts"
wait_until grep -q '^ready tid$' "$R/tid.log" || diag "the program did not get ready"
vsctl exec www1 -- timeout 20 "$CLIENT" -p "$PORT" -n 1 -v > "$R/first.c" 2>&1
is "$(count "$R/first.c" www1)" 1 "the thread serves the first connection of www1 in www1"
if ! wait_until grep -q '^ready tid again' "$R/tid.log"; then
	said=$(grep '^tid' "$R/tid.log")
	case $said in
	*"Operation not permitted"*|*"Invalid argument"*|*"Function not implemented"*)
		skip_all "clone3 with set_tid is not available here: $said" ;;
	esac
	fail "a new process gets the thread's ID ($said)"
	done_testing
fi
T=$(sed -n 's/^tid \([0-9]*\) again$/\1/p' "$R/tid.log")
vsctl exec www1 -- timeout 20 "$CLIENT" -p "$PORT" -n 10 -v > "$R/again.c" 2>&1
is "$(grep -c " pid=$T " "$R/again.c")" 10 "the new process with the old thread's ID ($T) serves the next 10"
is "$(count "$R/again.c" www1)" 10 "the gate moves it to www1 for them: all 10 served in www1"
done_testing
