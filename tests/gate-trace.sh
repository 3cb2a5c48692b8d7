#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A trace of the real gate (vsd-gate --trace) replays alone through the
# decision (tests/unit/test-gate-decide FILE): it carries the rules vsd
# pushed, at start and again on each change, and the state each fast-path
# choice was made from. A gate started by hand (`vsctl run`, with VSD_GATE
# a wrapper that adds --trace), in the default mode, serving www1 and www2
# under rules that put www1's requests in www1, then, after an apply, in
# www2.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"
DECIDE=$top_builddir/tests/unit/test-gate-decide
[ -x "$DECIDE" ] || skip_all "tests/unit/test-gate-decide is not built (make check builds it)"

rules_dir
for to in requester www2; do
	w "$to.rules" <<EOR
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
(accept, *, req = www1) => ($to)
EOR
done
printf '#!/bin/sh\nexec %s --trace %s "$@"\n' "$top_builddir/gates/accept/vsd-gate" \
	"$R/run.trace" > "$R/gate"
chmod 0755 "$R/gate"

vsd_start || { fail "vsd starts"; done_testing; }
check "apply: the VSs, www1's requests in www1" quiet vsctl apply "$R/requester.rules"
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
VSD_GATE=$R/gate "$VSCTL" run --home base --name traced -- "$SERVER" -p "$PORT" \
	> "$R/run.log" 2>&1 &
RUN=$!
on_exit "kill $RUN"
check "the gated service answers" wait_until quiet "$CLIENT" -p "$PORT" -n 1
for vs in www1 www2 www1; do
	vsctl exec "$vs" -- "$CLIENT" -p "$PORT" -n 20 > /dev/null
done
check "apply: www1's requests in www2" quiet vsctl apply "$R/www2.rules"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$R/after"
check "after the apply, www1's requests are served in www2" grep -q "cg=[^ ]*/$VSD_ROOT/www2 " "$R/after"
# the gate ends with its service: its trace is whole
kill "$RUN"
wait "$RUN" 2>/dev/null
check "the service has ended" wait_until sh -c "! pgrep -f -- '[g]ate-server -p $PORT' > /dev/null"

is "$(grep -c '^rules begin' "$R/run.trace")" 2 "the trace has the rules twice: as the gate started, and as vsd pushed them"
check "the first say www1's requests go to their requester" \
	sh -c "sed -n '/^rules begin/,/^rules end/p' '$R/run.trace' | sed -n '/(accept, \*, req = www1)/{p;q}' | grep -q '=> (requester)'"
check "the second say www2" \
	sh -c "sed -n '/^rules begin/,/^rules end/p' '$R/run.trace' | grep '(accept, \*, req = www1)' | tail -1 | grep -q '=> (www2)'"
check "no hand-added rules line: every rules line is the gate's" \
	sh -c "! grep -E '^rules ' '$R/run.trace' | grep -vqE '^rules (begin hash=[0-9a-f]+|end|-)$'"
check "the decisions in it are there to replay" grep -q '^accept ' "$R/run.trace"
# the replay's own TAP line says what failed, if anything
"$DECIDE" "$R/run.trace" | sed 's/^/# /'
check "the trace replays through the decision, each answer and CONTINUE as the gate gave it" \
	quiet "$DECIDE" "$R/run.trace"
done_testing
