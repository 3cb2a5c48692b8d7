#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A listener of the tenant's own (vsctl-run(8), "Refused calls"). The
# kernel runs every seccomp filter of a task and, of two that return
# USER_NOTIF, keeps the one installed last. So a program run by a gated
# service (PHP's exec(), as its unprivileged user; tests/gate-nested-notify.c)
# installs a filter of its own sending accept and accept4 to a listener
# (SECCOMP_FILTER_FLAG_NEW_LISTENER) that a helper of its own answers with
# CONTINUE, then accepts connections of VS www1 on the inherited listener.
# The gate refuses that call (EBUSY, logged once, counted), through the
# native, 32-bit and x32 ABIs, and every connection of www1 is served in
# www1; and still once the supervisor is gone (killed), when the kernel's
# own one-listener check no longer stops it. A filter without a listener
# (self-sandboxing) still installs. Default options, as nobody.
. "$(dirname "$0")/lib.sh"
need_gate_escape
NEST=$top_builddir/tests/gate-nested-notify
[ -x "$NEST" ] || skip_all "tests/gate-nested-notify is not built"
NEST=$(cd "$(dirname "$NEST")" && pwd)/gate-nested-notify
id nobody >/dev/null 2>&1 || skip_all "no user nobody to run the service as"
su nobody -s /bin/sh -c "test -x '$NEST'" || skip_all "nobody cannot run programs in the build tree"

R=$(mktemp -d /tmp/vsd-nested.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null ||
	{ fail "create the VSs"; done_testing; }

# the service (escape_start) accepts only once the tenant's program has
# ended, so until then only the program serves
# fire NAME K N: once the K-th "ready" is in the log, N connections from
# www1, answers appended to $R/NAME.c
fire() {
	wait_until sh -c "[ \$(grep -c '^ready' '$R/$1.log') -ge $2 ]" ||
		diag "$1: the program did not get ready ($2)"
	vsctl exec www1 -- timeout 20 "$CLIENT" -p "$PORT" -n "$3" -v >> "$R/$1.c" 2>&1
}
metric() { vsctl metrics | sed -n "s/^$1{$2} //p"; }
# mine NAME: answers given by the program, not by the service's own accept
mine() { grep ' pid=' "$R/$1.c" | grep -v -c " pid=$(svc "$1" "['pid']") "; }

# --- self-sandboxing: filters without a listener, through seccomp(2) and
# prctl(2), install and work; the program's accepts still pass the gate
escape_start sandbox "'$NEST' sandbox '$ESC' accept 0 10" || fail "the service starts"
fire sandbox 1 10
is "$(grep '^sandbox' "$R/sandbox.log")" "sandbox seccomp 0 prctl 0 uname EACCES getpgid EXDEV" \
	"a filter without a listener installs through seccomp(2) and prctl(2), and each makes its call fail"
is "$(count "$R/sandbox.c" www1)/$(mine sandbox)" 10/10 \
	"the sandboxed program serves the 10 connections of www1, in www1"
is "$(svc sandbox "['refused']['seccomp_listener']")" 0 "status: nothing refused"
escape_stop

# --- the attack: a listener of its own, natively, then through the 32-bit
# and x32 ABIs where there are such
ABIS=native
[ "$(uname -m)" != x86_64 ] || ABIS="native int80 x32"
cmd=
for a in $ABIS; do cmd="$cmd '$NEST' notify $a '$ESC' accept 0 10;"; done
escape_start nest "$cmd" || fail "the service starts"
k=0
for a in $ABIS; do
	k=$((k + 1))
	fire nest $k 10
done
n=$(echo $ABIS | wc -w)
is "$(grep '^notify' "$R/nest.log" | tr '\n' ' ')" "$(for a in $ABIS; do printf 'notify %s: EBUSY ' $a; done)" \
	"seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) fails with EBUSY ($ABIS)"
is "$(grep -c '^continued 0$' "$R/nest.log")" "$n" "the program's own supervisor answered no accept"
total=$((n * 10))
inwww1=$(count "$R/nest.c" www1)
diag "of $total connections of www1: $inwww1 served in www1, $(count "$R/nest.c" base) in base, $(mine nest) by the program"
is "$inwww1/$(mine nest)" "$total/$total" "the program serves all $total connections of www1, in www1"
diag "$(grep 'refused seccomp' "$R/nest.log")"
is "$(grep -c 'refused seccomp' "$R/nest.log")" 1 "the supervisor logs the refusal once"
is "$(svc nest "['refused']['seccomp_listener']")" "$n" "status: refused.seccomp_listener counts each ($n)"
is "$(metric vsd_service_refused_total 'service="nest",call="seccomp_listener"')" "$n" \
	"metrics: vsd_service_refused_total{call=\"seccomp_listener\"} $n"
vsctl services > "$R/nest.table"
like "$(grep '^nest ' "$R/nest.table")" "^nest .* $n +0 +-\$" "vsctl services: REFUSED $n, OUTSIDE 0"
escape_stop

# --- once the supervisor is gone (killed), a program that outlives it
# still holds the listener; the gate's filter, its listener closed, fails
# its accepts with ENOSYS. A listener of the program's own would lift that
# (the kernel's one-listener check ends with our listener); the gate's
# rule for seccomp(2) fails it with ENOSYS then too.
chmod 0755 "$R"	# the program, as nobody, looks for $R/gone
escape_start late "exec '$NEST' notify native -w '$R/gone' '$ESC' accept 0 1" || fail "the service starts"
wait_until grep -q '^pid ' "$R/late.log" || diag "late: the program did not start"
PIDS=$(sed -n 's/^pid //p' "$R/late.log")
on_exit "kill $PIDS 2>/dev/null"
kill -KILL "$RUN"
wait "$RUN" 2>/dev/null
touch "$R/gone"
wait_until grep -q '^notify native:' "$R/late.log" || diag "late: no answer to seccomp(2)"
vsctl exec www1 -- timeout 5 "$CLIENT" -p "$PORT" -n 1 -v > "$R/late.c" 2>&1
wait_until grep -q '^served' "$R/late.log"
diag "the supervisor gone, the program's answers: $(grep -c ' pid=' "$R/late.c") ($(count "$R/late.c" www1) in www1, $(count "$R/late.c" base) in base)"
is "$(grep '^notify native:' "$R/late.log")" "notify native: ENOSYS" \
	"the supervisor gone: seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) still fails (ENOSYS)"
is "$(grep -c ' pid=' "$R/late.c")/$(sed -n 's/^served //p' "$R/late.log")" 0/0 \
	"the supervisor gone: the program serves no connection"
kill $PIDS 2>/dev/null
done_testing
