#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No client can hold the control socket: with 80 idle
# connections and one that sends a byte every 1.5 s open, `vsctl list` still
# answers within 1 s; the idle ones are closed at the 2 s deadline or pushed
# out by the 64-connection cap, the oldest of the uid with the most first;
# and vsd answers afterwards. Once as root, once as an unprivileged member
# of vsd's --group, with another member's connection that the flood must
# not push out.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
ATTACK=$top_srcdir/tests/ctl-attack.py
IDLE=80
DRIP=1

grp=vsdf$$
groupadd -r "$grp" || { fail "groupadd"; done_testing; }
on_exit "groupdel $grp"
gid=$(getent group "$grp" | cut -d: -f3)
vsd_start --group "$grp" || { fail "vsd starts"; done_testing; }
chmod 0755 "$VSD_TMP"	# the unprivileged clients reach the socket; its mode and SO_PEERCRED decide
check "create www1" vsctl create www1 --cpu 10%
member=(setpriv --reuid=65534 --regid=65534 --groups="$gid")

# attack NAME IDLE DRIP [UID]: start ctl-attack.py, as UID (a member of the
# group) if given; its JSON goes to $VSD_TMP/NAME.json once vsd closed every
# connection. Returns once they are all connected.
attack() {
	local name=$1 idle=$2 drip=$3 i
	shift 3
	rm -f "$VSD_TMP/$name.ready"
	python3 "$ATTACK" "$VSD_SOCKET" "$idle" "$drip" "$VSD_TMP/$name.ready" ${1:+"$1" "$gid"} \
		>"$VSD_TMP/$name.json" 2>"$VSD_TMP/$name.err" &
	eval "${name}_pid=$!"
	on_exit "kill $! 2>/dev/null"
	for i in $(seq 100); do
		[ -s "$VSD_TMP/$name.ready" ] && return 0
		sleep 0.05
	done
	fail "$name: the attacker connected"
	sed 's/^/#   /' "$VSD_TMP/$name.err"
	return 1
}

# timed_list NAME CMD...: CMD (a vsctl list) answers, within 1 s.
timed_list() {
	local name=$1 t0 t1 out
	shift
	t0=$EPOCHREALTIME
	out=$(timeout 10 "$@" list 2>&1)
	t1=$EPOCHREALTIME
	if printf '%s' "$out" | grep -q www1 &&
	   python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 1.0 else 1)"; then
		ok "$name answers within 1 s"
	else
		fail "$name answers within 1 s"
		diag "took $(python3 -c "print(round($t1 - $t0, 2))") s: $out"
	fi
}

# verdict NAME PUSHED: every attacker connection was closed, by the cap or at
# the deadline, and the cap pushed out PUSHED (a regex) of them.
verdict() {
	local name=$1 pushed=$2 res
	res=$(python3 - "$VSD_TMP/$name.json" "$IDLE" <<'PY'
import json, sys
try:
    conns = json.load(open(sys.argv[1]))
except ValueError:
    print("no report"); sys.exit()
idle = int(sys.argv[2])
cut = lambda c: c["error"] == "too many clients: this oldest connection of its user was closed to let another in"
late = lambda c: c["error"] == "no whole request within 2 s" and c["closed"] is not None and 1.9 <= c["closed"] <= 3.5
bad = [c for c in conns if not (cut(c) or late(c))]
drip = [c for c in conns if c["kind"] == "drip"]
print("open or wrong: %d, pushed out: %d, drip: %s" % (len(bad), sum(map(cut, conns)),
      "deadline" if drip and all(map(late, drip)) else drip))
t = [c["closed"] for c in conns if late(c)]
print("closed at the deadline: %d, after %.2f..%.2f s" % (len(t), min(t or [0]), max(t or [0])))
PY
)
	diag "$name: ${res#*$'\n'}"
	res=${res%%$'\n'*}
	like "$res" "^open or wrong: 0, pushed out: $pushed, drip: deadline\$" \
		"$name: each connection was pushed out by the cap or closed at its deadline"
}

# --- one client sends a byte every 1.5 s, alone: not a byte resets its deadline.
attack drip 0 1 && {
	timed_list "root's vsctl list while a client drips" "$VSCTL"
	wait "$drip_pid"
	verdict drip 0
}

# --- root floods: 80 idle connections (more than the cap of 64) and a drip.
# Over the cap, 16 or more are pushed out (the drip's and vsctl's connections
# push out one each); the rest meet their deadline.
attack rootflood "$IDLE" "$DRIP" && {
	timed_list "root's vsctl list during root's flood" "$VSCTL"
	wait "$rootflood_pid"
	verdict rootflood '(1[6-9]|[2-9][0-9])'
}
check "vsd answers after root's flood" vsctl show www1

# --- an unprivileged member of --group floods; another member's older
# connection stays until its own deadline.
attack bystander 1 0 65534 && attack memberflood "$IDLE" "$DRIP" 65533 && {
	timed_list "root's vsctl list during a member's flood" "$VSCTL"
	timed_list "a member's vsctl list during another member's flood" "${member[@]}" "$VSCTL"
	wait "$memberflood_pid" "$bystander_pid"
	verdict memberflood '(1[6-9]|[2-9][0-9])'
	is "$(json '[(c["error"], 1.9 <= (c["closed"] or 0) <= 3.5) for c in d]' <"$VSD_TMP/bystander.json")" \
		'[["no whole request within 2 s", true]]' \
		"the other member's connection was not pushed out: it met its deadline"
}
check "vsd answers root after the member's flood" vsctl show www1
check "and a member" "${member[@]}" "$VSCTL" show www1
kill -0 "$VSD_PID" && ok "vsd is still running" || fail "vsd is still running"
check "destroy www1" vsctl destroy www1
done_testing
