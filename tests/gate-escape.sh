#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Nothing in the service decides (vsctl-run(8), "Refused calls"): a gated
# service, with default options and as an unprivileged user, runs a program
# the way PHP's exec() does (tests/gate-escape.c: it inherits the
# descriptors, the environment and the listener), and that program tries
# to accept a connection of VS www1 past the gate:
# - reaching a BPF map of the gate through an inherited descriptor or its
#   parent's (pidfd_getfd, /proc/PPID/fd) and writing it; the gate's
#   variables in the environment;
# - accept4 with a key in the upper 32 bits of its flags (where an older
#   build hid one), with other flag values, with LD_PRELOAD cleared, and
#   from a static binary;
# - io_uring (refused: ENOSYS, one log line, counted);
# - the 32-bit and x32 ABIs (refused: EPERM, one log line, counted);
# - handing the listener to a process outside the service (SCM_RIGHTS),
#   whose accepts the gate counts as outside its decision and logs.
# Every connection of www1 is served in www1, or counted.
. "$(dirname "$0")/lib.sh"
need_gate_escape
id nobody >/dev/null 2>&1 || skip_all "no user nobody to run the service as"
su nobody -s /bin/sh -c "test -x '$ESC'" || skip_all "nobody cannot run programs in the build tree"

R=$(mktemp -d /tmp/vsd-escape.XXXXXX)
chmod 0755 "$R"	# the service's user reaches the static binary and the socket here
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null &&
	vsctl create www2 --cpu 40% >/dev/null || { fail "create the VSs"; done_testing; }

RUN=
# the log of service NAME: its supervisor's lines and its programs' output
said() { cat "$R/$1.log"; }
# fire NAME N [K]: N connections from www1 (answers in $R/NAME.c), once the
# program's K-th (1st) way said "ready"
fire() {
	wait_until sh -c "[ \$(grep -c '^ready' '$R/$1.log') -ge ${3:-1} ]" ||
		diag "$1: the program did not get ready"
	vsctl exec www1 -- timeout 20 "$CLIENT" -p "$PORT" -n "$2" -v > "$R/$1.c" 2>&1
}
# metric NAME LABELS: a series of vsctl metrics
metric() { vsctl metrics | sed -n "s/^$1{$2} //p"; }
# by_child NAME: answers not given by the service's own process
by_child() { grep ' pid=' "$R/$1.c" | grep -v -c " pid=$(svc "$1" "['pid']") "; }

# --- the gate's state within reach: no BPF map, no variable
escape_start maps "'$ESC' maps" || fail "the service starts"
wait_until grep -q "maps uid" "$R/maps.log"
like "$(said maps | grep '^maps')" "^maps uid $(id -u nobody) own 0 others 0 unreadable [1-9][0-9]* written 0 env 0\$" \
	"the program, as nobody: no BPF map inherited, none taken from its ancestors (the supervisor's unreadable), none written, no VSD_GATE_* variable"
SPID=$(svc maps "['pid']")
is "$(tr '\0' '\n' < "/proc/$SPID/environ" | grep -c 'LD_PRELOAD\|VSD_GATE')" 0 \
	"the service's environment has no LD_PRELOAD or VSD_GATE_* of the gate"
escape_stop

# --- accept4 with flags a filter might let through: the upper 32 bits
# (the kernel ignores them) set to a key, or anything; the usual flags
FLAGS="key 5a5a5a5a00000000 ffffffff00000000 8000000000000000 100000000 80000 800 80800"
cmd=
for f in $FLAGS; do cmd="$cmd '$ESC' accept $f 10;"; done
escape_start flags "$cmd" || fail "the service starts"
k=0
for f in $FLAGS; do
	k=$((k + 1))
	fire flags 10 $k
	is "$(count "$R/flags.c" www1)/$(by_child flags)" 10/10 \
		"accept4 with flags $f by the program: its 10 connections of www1 served in www1"
done
escape_stop

# --- the same without LD_PRELOAD, and from a static binary (no dynamic
# loader at all: an LD_PRELOAD shim could not be in it)
escape_start noenv "env -u LD_PRELOAD '$ESC' accept key 10" || fail "the service starts"
fire noenv 10
is "$(count "$R/noenv.c" www1)/$(by_child noenv)" 10/10 \
	"LD_PRELOAD cleared: 10 connections of www1 served in www1"
escape_stop
if ${CC:-cc} -static -O2 -I"$top_builddir" -o "$R/esc-static" "$top_srcdir/tests/gate-escape.c" \
	2>"$R/cc.err"; then
	chmod 0755 "$R/esc-static"
	escape_start static "'$R/esc-static' accept key 10" || fail "the service starts"
	fire static 10
	is "$(count "$R/static.c" www1)/$(by_child static)" 10/10 \
		"a static binary: 10 connections of www1 served in www1"
	escape_stop
else
	ok "# SKIP a static binary: no static C library to link one ($(head -1 "$R/cc.err"))"
fi

# --- io_uring: refused with ENOSYS, logged once, counted; no connection
# taken that way (the service's own accept then serves them, gated)
escape_start uring "'$ESC' uring 10; '$ESC' uring 10" || fail "the service starts"
fire uring 10
is "$(said uring | grep -c '^uring: Function not implemented')/$(said uring | grep -c '^served 0')" 2/2 \
	"io_uring_setup fails with ENOSYS, twice; nothing accepted through io_uring"
is "$(grep -c 'refused io_uring' "$R/uring.log")" 1 "the supervisor logs the refusal once"
is "$(svc uring "['refused']['io_uring']")" 2 "status: refused.io_uring counts both"
is "$(count "$R/uring.c" www1)" 10 "the 10 connections of www1 are served in www1 by the service's accept"
escape_stop

# --- the 32-bit ABI (int 0x80 from 64-bit code: socketcall(SYS_ACCEPT4),
# accept4, socketcall(SYS_ACCEPT)) and the x32 ABI: refused with EPERM
if [ "$(uname -m)" = x86_64 ]; then
	escape_start abi "'$ESC' int80 10; '$ESC' x32 10" || fail "the service starts"
	fire abi 10
	is "$(said abi | grep -o 'int80: [^:|]*:\? *Operation not permitted' | grep -c .)/$(said abi | grep -o 'x32: Operation not permitted' | grep -c .)/$(said abi | grep -c '^served 0')" \
		3/1/2 "the 32-bit socketcall, accept4 and accept and the x32 accept4 fail with EPERM; nothing accepted"
	is "$(grep -c 'refused .*accept' "$R/abi.log")" 1 "the supervisor logs the refusal once"
	is "$(svc abi "['refused']['compat_accept']")" 4 "status: refused.compat_accept counts all 4"
	is "$(count "$R/abi.c" www1)" 10 "the 10 connections of www1 are served in www1"
	vsctl services > "$R/abi.table"
	like "$(grep '^abi ' "$R/abi.table")" "^abi .* 4 +0 +-$" \
		"vsctl services: REFUSED 4, OUTSIDE 0"
	is "$(metric vsd_service_refused_total 'service="abi",call="compat_accept"')" 4 \
		"metrics: vsd_service_refused_total{call=\"compat_accept\"} 4"
	escape_stop
else
	ok "# SKIP the 32-bit and x32 ABIs: $(uname -m) is not x86_64"
fi

# --- the listener handed to a process outside the service (in www2): its
# accepts are outside the gate's decision, counted and logged
S=$(mktemp -d /tmp/vsd-escape-s.XXXXXX)
chmod 0755 "$S"
on_exit "rm -rf $S"
vsctl exec www2 -- timeout 60 "$ESC" recv "$S/l.sock" 1000 > "$R/recv.out" 2>&1 &
RECV=$!
on_exit "kill $RECV 2>/dev/null"
wait_until grep -q listening "$R/recv.out" || fail "the outside process listens"
escape_start passed "'$ESC' pass '$S/l.sock'" || fail "the service starts"
wait_until grep -q "^ready outside" "$R/recv.out" || fail "the outside process has the listener"
for i in $(seq 20); do
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -v >> "$R/passed.c" 2>&1
done
RPID=$(grep -o ' pid=[0-9]*' "$R/passed.c" | sort | uniq -c | sort -n | awk 'END { print $2 }')
out=$(grep -c "cg=[^ ]*/$VSD_ROOT/www2 " "$R/passed.c")
diag "of 20 connections of www1: $out served by the outside process in www2, $(count "$R/passed.c" www1) in www1"
check "the outside process took some of the 20 connections" [ "$out" -ge 1 ]
is "$(svc passed "['outside']")" "$out" "status: outside counts each connection taken outside the gate"
is "$(( $(count "$R/passed.c" www1) + out ))" 20 "the others are served in www1"
check "the supervisor logs it (rate-limited)" grep -q "accepted a connection of VS www1 without the gate" \
	"$R/passed.log"
is "$(metric vsd_service_outside_accepts_total 'service="passed"')" "$out" \
	"metrics: vsd_service_outside_accepts_total counts them"
escape_stop
kill "$RECV" 2>/dev/null
wait "$RECV" 2>/dev/null
done_testing
