#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The socket gate through the product: a private vsd, vsctl create/set with
# --tos/--dscp/--mark, processes started with vsctl exec, packets captured
# on lo, vsctl conns, a restart with vsd down, destroy.  The first vsd
# records every connection (--record-conns all: vsctl conns is the point);
# the restarts switch to gated (the default) and back.
. "$(dirname "$0")/lib.sh"
need_root
[ -r /sys/kernel/btf/vmlinux ] || skip_all "kernel without BTF (/sys/kernel/btf/vmlinux)"
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2 hierarchy: the socket gate needs one"
SGH=$top_builddir/tests/net-probe
PINS=/sys/fs/bpf/vsd/$VSD_ROOT

vsd_start --record-conns all || { fail "vsd starts"; done_testing; }
grep -q "socket gate: loaded its programs in $PINS" "$VSD_TMP/vsd.log" &&
	ok "vsd loads the gate at start" || fail "vsd loads the gate at start"
grep -q "socket gate: recording every TCP connection of a VS (--record-conns all)" "$VSD_TMP/vsd.log" &&
	ok "vsd logs the recording mode" || fail "vsd logs the recording mode"

# Settings, and refusals that change nothing.
check "create www1 --tos 0x28 --mark 42" vsctl create www1 --cpu 10% --tos 0x28 --mark 42
check "create www2 --dscp EF" vsctl create www2 --cpu 10% --dscp EF
refused() {
	local want=$1 out rc
	shift
	out=$(vsctl "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && printf '%s' "$out" | grep -Eq -- "$want" && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
		ok "refused: vsctl $*"
	else
		fail "refused: vsctl $* (rc $rc)"
		diag "got: $out" "want one line: /$want/"
	fi
}
refused "--tos and --dscp both set the TOS byte" create www9 --cpu 1% --tos 0x28 --dscp EF
refused "--tos 256 is over 255" create www9 --cpu 1% --tos 256
refused "--tos 0x1g is not a TOS byte" create www9 --cpu 1% --tos 0x1g
refused "--dscp AF44 is not a DSCP" create www9 --cpu 1% --dscp AF44
refused "--dscp 64 is over 63" create www9 --cpu 1% --dscp 64
refused "--mark 4294967296 is over 0xffffffff" create www9 --cpu 1% --mark 4294967296
refused "--tos and --dscp both" set www1 --tos 1 --dscp EF
is "$(vsctl list --json | json '[v["name"] for v in d]')" '["www1", "www2"]' "refused creates made no VS"
is "$(vsctl show www1 --json | json 'd["gate"]["tos"], d["gate"]["mark"], d["gate"]["attached"]')" \
	"(40, 42, True)" "www1's settings unchanged after a refused set"
is "$(vsctl show www2 --json | json 'd["gate"]["tos"], d["gate"]["dscp"]')" "(184, 'EF')" \
	"--dscp EF is TOS 0xb8"
like "$(vsctl show www1)" "socket gate: attached, tos 0x28 \(dscp AF11 = 10\), mark 42" "show prints the gate"
like "$(vsctl show www1)" "0 not recorded because the map was full" "show prints the full-map count"
like "$(vsctl show www1)" "recording: all \(every TCP connection of a VS" "show prints the recording mode"
is "$(vsctl list --json | json '[v["gate"]["record"] for v in d]')" '["all", "all"]' \
	"list --json gives the recording mode"

"$SGH" serve 127.0.0.1 0 > "$VSD_TMP/s4" &
on_exit "kill $!"
"$SGH" serve ::1 0 > "$VSD_TMP/s6" &
on_exit "kill $!"
for i in $(seq 100); do grep -q ready "$VSD_TMP/s4" && grep -q ready "$VSD_TMP/s6" && break; sleep 0.05; done
p4=$(sed -n 's/^ready //p' "$VSD_TMP/s4")
p6=$(sed -n 's/^ready //p' "$VSD_TMP/s6")

# On the wire.
out=$(vsctl exec www1 -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=40" "IPv4 SYN from www1 carries TOS 0x28"
like "$out" "data_tos=40" "IPv4 data from www1 carries TOS 0x28"
like "$out" "mark=42" "SO_MARK 42 on www1's socket"
out=$(vsctl exec www1 -- "$SGH" tcp ::1 "$p6" 2>&1)
like "$out" "syn_tos=40" "IPv6 SYN from www1 carries traffic class 0x28"
like "$out" "data_tos=40" "IPv6 data from www1 carries traffic class 0x28"
out=$(vsctl exec www2 -- "$SGH" udp 127.0.0.1 0 connect 2>&1)
like "$out" "udp_tos=184" "UDP from www2 carries TOS 0xb8 (EF)"
out=$("$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=0" "a process outside any VS sends TOS 0"
like "$out" "mark=0" "and has no mark"

# Attribution while open, gone after close.
# hold TAG VS ADDR PORT: a connection that stays open until release TAG;
# sets $held to its local address.
hold() {
	rm -f "$VSD_TMP/rel-$1"
	vsctl exec "$2" -- "$SGH" tcp "$3" "$4" "$VSD_TMP/rel-$1" > "$VSD_TMP/hold-$1" &
	eval "hold_$1=$!"
	on_exit "touch $VSD_TMP/rel-$1"
	for i in $(seq 200); do grep -q connected "$VSD_TMP/hold-$1" && break; sleep 0.05; done
	held=$(sed -n 's/^local=//p' "$VSD_TMP/hold-$1")
}
release() { touch "$VSD_TMP/rel-$1"; eval "wait \$hold_$1"; }
hold a www1 127.0.0.1 "$p4"
local_a=$held
is "$(vsctl conns --json | json "[(c['vs'], c['family'], c['remote']) for c in d if c['local'] == '$local_a']")" \
	"[[\"www1\", \"inet\", \"127.0.0.1:$p4\"]]" "vsctl conns --json shows www1's open connection"
like "$(vsctl conns www1)" "^www1 +inet +out +$local_a +127.0.0.1:$p4" "vsctl conns www1 (table)"
is "$(vsctl conns www2 --json)" "[]" "vsctl conns www2 shows none of www1's"
release a
is "$(vsctl conns --json | json "len([c for c in d if c['local'] == '$local_a'])")" 0 "gone after close"

out=$(vsctl exec www1 -- "$SGH" many 127.0.0.1 "$p4" 10000 2>&1)
like "$out" "done=10000" "10,000 connections from www1"
# The last socket may still wait in LAST_ACK for the server's ACK for a moment.
for i in $(seq 100); do [ "$(vsctl conns --json)" = "[]" ] && break; sleep 0.02; done
is "$(vsctl conns --json)" "[]" "the connection map is empty again"
is "$(vsctl show www1 --json | json 'd["gate"]["conns_full"]')" 0 "no full-map failures"

# set changes what new sockets get; the state file keeps it.
check "set www1 --dscp AF41" vsctl set www1 --dscp AF41
out=$(vsctl exec www1 -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=136" "after set, www1's SYN carries TOS 0x88 (AF41)"
like "$(cat "$VSD_STATE/state")" "vs www1 id=1 .* tos=136 mark=42" "the state file keeps the gate settings"
check "set www2 --dscp none" vsctl set www2 --dscp none
out=$(vsctl exec www2 -- "$SGH" udp 127.0.0.1 0 connect 2>&1)
like "$out" "udp_tos=0" "--dscp none clears www2's TOS"

# A create whose gate cannot attach is refused and leaves nothing:
# something else sits where the new VS's pins would go.
bpftool map create "$PINS/vs3" type array key 4 value 4 entries 1 name vsd_blocker 2>/dev/null
on_exit "rm -f $PINS/vs3"
out=$(vsctl create www3 --cpu 5% --tos 8 2>&1)
like "$out" "create: www3: cannot attach the socket gate" "create refused when the gate cannot attach"
is "$(vsctl list --json | json '[v["name"] for v in d]')" '["www1", "www2"]' "no VS www3"
n=0
for d in $(cg_root_dirs "$VSD_ROOT"); do [ -e "$d/www3" ] && n=$((n + 1)); done
is "$n" 0 "no cgroup of www3 left"
grep -q www3 "$VSD_STATE/state" && fail "www3 not in the state file" || ok "www3 not in the state file"
rm -f "$PINS/vs3"

# Restart: with vsd down, a new connection from www1 is still marked and
# recorded, and the restarted vsd lists it.
rm -f "$VSD_TMP/go" "$VSD_TMP/rel-r"
vsctl exec www1 -- sh -c "echo waiting; while [ ! -e $VSD_TMP/go ]; do sleep 0.05; done
	exec $SGH tcp 127.0.0.1 $p4 $VSD_TMP/rel-r" > "$VSD_TMP/hold-r" &
hold_r=$!
on_exit "touch $VSD_TMP/go $VSD_TMP/rel-r"
for i in $(seq 200); do grep -q waiting "$VSD_TMP/hold-r" && break; sleep 0.05; done
vsd_stop TERM
touch "$VSD_TMP/go"
for i in $(seq 200); do grep -q connected "$VSD_TMP/hold-r" && break; sleep 0.05; done
like "$(cat "$VSD_TMP/hold-r")" "mark=42" "with vsd down, a new socket in www1 is still marked"
local_r=$(sed -n 's/^local=//p' "$VSD_TMP/hold-r")

# A recording mode that is neither is refused before anything is made.
out=$("$VSD" --foreground --record-conns some --socket "$VSD_SOCKET" --state-dir "$VSD_STATE" \
	--cgroup-root "$VSD_ROOT" 2>&1)
is "$?" 7 "vsd --record-conns some: exit 7 (a bad value)"
like "$out" "--record-conns some: not gated or all" "and says why"

# A gate the verifier refuses stops vsd from starting, with its message.
out=$(VSD_SOCKET_BPF_OBJ=$top_builddir/tests/sg-broken.bpf.o "$VSD" --foreground \
	--socket "$VSD_SOCKET" --state-dir "$VSD_STATE" --cgroup-root "$VSD_ROOT" 2>&1)
rc=$?
[ $rc -ne 0 ] && ok "vsd refuses to start when the verifier refuses the gate" ||
	fail "vsd refuses to start when the verifier refuses the gate (rc $rc)"
like "$out" "invalid mem access" "and logs the verifier's message"
like "$out" "cannot set up the socket gate" "and says what failed"

vsd_start || fail "vsd restarts"
grep -q "socket gate: adopted its programs" "$VSD_TMP/vsd.log" && ok "the restarted vsd adopts the pinned gate" ||
	fail "the restarted vsd adopts the pinned gate"
is "$(vsctl conns --json | json "[c['vs'] for c in d if c['local'] == '$local_r']")" '["www1"]' \
	"the restarted vsd lists the connection made while it was down"
release r

# The restarted vsd records as its own option says (gated, the default),
# not as the pinned maps did, and says so.
like "$(cat "$VSD_TMP/vsd.log")" "the previous vsd recorded all connections; this vsd's option wins" \
	"the restart from all to gated is logged"
is "$(vsctl show www1 --json | json 'd["gate"]["record"]')" gated "show --json: gated now"
hold u www1 127.0.0.1 "$p4"
is "$(vsctl conns --json | json "len([c for c in d if c['local'] == '$held'])")" 0 \
	"gated: www1's connection to an ungated port is not recorded"
release u
# the port gated by hand, as an accept gate registers its listener
check "port $p4 gated by hand" "$top_builddir/tests/socket-gate-ctl" "$VSD_ROOT" gport "$p4" 1
hold g www1 127.0.0.1 "$p4"
is "$(vsctl conns --json | json "[(c['vs'], c['direction']) for c in d if c['local'] == '$held']")" \
	'[["www1", "out"]]' "gated: its connection to the gated port is recorded (connecting side only)"
release g
check "port $p4 ungated again" "$top_builddir/tests/socket-gate-ctl" "$VSD_ROOT" gport "$p4" -1
vsd_stop TERM
vsd_start --record-conns all || fail "vsd restarts with --record-conns all"
like "$(cat "$VSD_TMP/vsd.log")" "the previous vsd recorded connections to gated listeners only; this vsd's option wins" \
	"the restart from gated to all is logged"
hold v www1 127.0.0.1 "$p4"
is "$(vsctl conns --json | json "len([c for c in d if c['local'] == '$held'])")" 1 \
	"all again: the connection to the ungated port is recorded"
release v
is "$(vsctl show www1 --json | json 'd["gate"]["tos"], d["gate"]["mark"], d["gate"]["attached"]')" \
	"(136, 42, True)" "settings and attachment survive the restart"

# A rule file's tos/dscp and mark reach the gate too (vsctl apply).
RF=$(mktemp -d /tmp/vsd-test-sg-rules.XXXXXX)
on_exit "rm -rf $RF"
printf 'vs www1 cpu 10%%\nvs www2 cpu 10%%\nvs rul1 cpu 5%% dscp AF21 mark 7\n' > "$RF/a.rules"
check "apply a rule file with dscp and mark" vsctl apply "$RF/a.rules"
is "$(vsctl show rul1 --json | json 'd["gate"]["tos"], d["gate"]["mark"], d["gate"]["attached"]')" \
	"(72, 7, True)" "a VS created by a rule file has the file's TOS and mark, attached"
out=$(vsctl exec rul1 -- "$SGH" tcp 127.0.0.1 "$p4" 2>&1)
like "$out" "syn_tos=72" "its SYN carries TOS 0x48 (AF21)"
printf 'vs www1 cpu 10%%\nvs www2 cpu 10%%\nvs rul1 cpu 5%% tos 0x10\n' > "$RF/a.rules"
check "apply the file changed to tos 0x10, no mark" vsctl apply "$RF/a.rules"
is "$(vsctl show rul1 --json | json 'd["gate"]["tos"], d["gate"]["mark"]')" "(16, None)" \
	"apply updates the gate settings in place"
is "$(vsctl show www1 --json | json 'd["gate"]["tos"], d["gate"]["mark"]')" "(None, None)" \
	"the file is the whole truth: www1's TOS and mark, absent from it, are cleared"
rul_id=$(vsctl show rul1 --json | json 'd["id"]')
printf 'vs www1 cpu 10%%\nvs www2 cpu 10%%\n' > "$RF/a.rules"
check "apply --prune removes rul1" vsctl apply --prune "$RF/a.rules"
[ -n "$rul_id" ] && [ ! -e "$PINS/vs$rul_id" ] && ok "nothing of rul1 (id $rul_id) left under $PINS" ||
	fail "nothing of rul1 (id $rul_id) left under $PINS"

# Destroy detaches everything of the VS.
check "destroy www1" vsctl destroy www1
[ ! -e "$PINS/vs1" ] && ok "nothing of www1 left under $PINS" || fail "nothing of www1 left under $PINS"
out=$("$SGH" tcp 127.0.0.1 "$p4" 2>&1)
check "destroy www2" vsctl destroy www2
vsd_stop TERM
[ ! -e "$PINS" ] && ok "a vsd stopping with no VS leaves nothing under /sys/fs/bpf/vsd/" ||
	fail "a vsd stopping with no VS leaves nothing under /sys/fs/bpf/vsd/ ($(ls -R "$PINS" | tr '\n' ' '))"
done_testing
