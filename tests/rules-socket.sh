#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Socket rules (vsrules(5)): (socket, b) => (a) makes the sockets created in
# VS b belong to a: a's TOS and mark on the wire, a's in vsctl conns; an
# apply without the rule gives b's sockets back to b; a `vsctl set` of a
# reaches b's new sockets too.  vsd records every connection (--record-conns
# all), so vsctl conns shows them whatever their destination.
. "$(dirname "$0")/lib.sh"
need_root
[ -r /sys/kernel/btf/vmlinux ] || skip_all "kernel without BTF (/sys/kernel/btf/vmlinux)"
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2 hierarchy: the socket gate needs one"
SGH=$top_builddir/tests/net-probe
R=$(mktemp -d /tmp/vsd-rules-socket.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
w() { cat >"$R/$1"; chmod 0644 "$R/$1"; }

vsd_start --record-conns all || { fail "vsd starts"; done_testing; }
"$SGH" serve 127.0.0.1 0 > "$VSD_TMP/s4" &
on_exit "kill $!"
for i in $(seq 100); do grep -q ready "$VSD_TMP/s4" && break; sleep 0.05; done
p4=$(sed -n 's/^ready //p' "$VSD_TMP/s4")

w on.rules <<'E'
vs a cpu 10% tos 0x28 mark 7
vs b cpu 10% tos 0xb8 mark 9
(socket, b) => (a)
E
w off.rules <<'E'
vs a cpu 10% tos 0x28 mark 7
vs b cpu 10% tos 0xb8 mark 9
E
check "apply (socket, b) => (a)" quiet vsctl apply "$R/on.rules"
out=$(vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=40" "a socket made in b carries a's TOS 0x28"
like "$out" "mark=7" "and a's mark"
out=$(vsctl exec a -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=40" "a's own sockets are a's as ever"
# a connection held open from b: vsctl conns says it is a's
rm -f "$VSD_TMP/rel"
vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" "$VSD_TMP/rel" > "$VSD_TMP/hold" &
hp=$!
on_exit "touch $VSD_TMP/rel"
for i in $(seq 200); do grep -q connected "$VSD_TMP/hold" && break; sleep 0.05; done
local_b=$(sed -n 's/^local=//p' "$VSD_TMP/hold")
is "$(vsctl conns --json | json "[c['vs'] for c in d if c['local'] == '$local_b']")" '["a"]' \
	"vsctl conns records b's connection as a's"
touch "$VSD_TMP/rel"; wait $hp
check "vsctl set a --dscp EF" quiet vsctl set a --dscp EF
out=$(vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=184" "after set a, b's sockets carry a's new TOS 0xb8"
check "apply a file without the rule" quiet vsctl apply "$R/off.rules"
out=$(vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=184" "b's sockets are b's again (TOS 0xb8)"
like "$out" "mark=9" "with b's mark"
check "apply the rule again" quiet vsctl apply "$R/on.rules"
# a's settings changed by a file: b's entry follows its owner's, though
# b itself did not change (vsd writes only the entries that differ)
sed 's/^vs a cpu 10% tos 0x28/vs a cpu 10% tos 0x30/' "$R/on.rules" | w on2.rules
check "apply a file that changes a's TOS to 0x30" quiet vsctl apply "$R/on2.rules"
out=$(vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=48" "b's sockets carry a's new TOS 0x30"
vsd_stop TERM
vsd_start --record-conns all || fail "vsd starts again"
out=$(vsctl exec b -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "mark=7" "a restarted vsd keeps the socket rule in force"
done_testing
