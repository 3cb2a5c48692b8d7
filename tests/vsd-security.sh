#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Only root, or members of --group, may use the control socket, and the
# status sockets of the services vsd starts. The socket file's mode is the
# first wall; SO_PEERCRED is the second, tested here by widening the mode on
# purpose.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
vsd_start || { fail "vsd starts"; done_testing; }
check "create a VS as root" vsctl create one --cpu 10%
chmod 0755 "$VSD_TMP"	# let others reach the socket file, so its own mode is what is tested

is "$(stat -c '%a %U' "$VSD_SOCKET")" "600 root" "socket is 0600 root"
is "$(stat -c '%a' "$VSD_STATE")" "700" "state directory is 0700"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
out=$(as_nobody "$VSCTL" list 2>&1)
[ $? -ne 0 ] && ok "nobody cannot use the socket" || fail "nobody cannot use the socket"
like "$out" "Permission denied|permission denied" "and is told so"

chmod 0666 "$VSD_SOCKET"
out=$(as_nobody "$VSCTL" create evil --cpu 5% 2>&1)
[ $? -ne 0 ] && ok "with the mode widened, SO_PEERCRED still refuses nobody" || fail "SO_PEERCRED refuses"
like "$out" "permission denied: only root may talk to vsd" "the refusal is explicit"
is "$(vsctl list --json | json '[v["name"] for v in d]')" '["one"]' "nothing changed"
grep -q "refused a client with uid 65534" "$VSD_TMP/vsd.log" && ok "vsd logs the refusal" || fail "refusal logged"
# a refusal closes the client's socket and nothing else of vsd's
is "$(readlink "/proc/$VSD_PID/fd/0")" "$(readlink "/proc/$$/fd/0")" "vsd's standard input is still open after refusals"
vsctl destroy one >/dev/null
vsd_stop

# --group opens the socket to one group, and only to it.
grp=vsdt$$
groupadd -r "$grp" || { fail "groupadd"; done_testing; }
on_exit "groupdel $grp"
gid=$(getent group "$grp" | cut -d: -f3)
vsd_start --group "$grp" || fail "vsd starts with --group"
is "$(stat -c '%a %G' "$VSD_SOCKET")" "660 $grp" "socket is 0660 with the group"
check "a member of the group may list" setpriv --reuid=65534 --regid=65534 --groups="$gid" "$VSCTL" list
check "and create" setpriv --reuid=65534 --regid=65534 --groups="$gid" "$VSCTL" create grp1 --cpu 5%
chmod 0666 "$VSD_SOCKET"
out=$(as_nobody "$VSCTL" list 2>&1)
[ $? -ne 0 ] && ok "a non-member is refused by SO_PEERCRED" || fail "non-member refused"

# A service vsd starts opens its status socket to vsd's group too (vsd-gate
# --group): 0660 with the group, readable by a member with vsctl services;
# anyone else is refused by SO_PEERCRED, and vsctl services says so.
printf 'vs grp1 cpu 5%%\nservice idle home grp1 command "sleep 600"\n' >"$VSD_TMP/svc.rules"
check "apply a declared service" vsctl apply "$VSD_TMP/svc.rules"
st=$VSD_TMP/gates/idle.sock
for _i in $(seq 200); do [ -S "$st" ] && break; sleep 0.05; done
is "$(stat -c '%a %G' "$st")" "660 $grp" "its status socket is 0660 with vsd's group"
like "$(setpriv --reuid=65534 --regid=65534 --groups="$gid" "$VSCTL" services --json)" \
	'"name": "idle"' "a member reads it with vsctl services"
chmod 0755 "$VSD_TMP/gates"
chmod 0666 "$st"
like "$(as_nobody "$VSCTL" services 2>&1)" 'services: idle: permission denied: only root' \
	"with the mode widened, a non-member is refused and vsctl services says so"
like "$(as_nobody "$VSCTL" services --json 2>/dev/null | json '[v["error"] for v in d if v["name"] == "idle"][0]')" \
	'^permission denied: only root' "and under --json, as the entry's error"
# vsctl run opens its status socket to the group of vsd's control socket.
"$VSCTL" run --name r1 --home grp1 -- sleep 600 >/dev/null 2>&1 &
run_pid=$!
on_exit "kill $run_pid 2>/dev/null"
for _i in $(seq 200); do [ -S "$VSD_TMP/gates/r1.sock" ] && break; sleep 0.05; done
is "$(stat -c '%a %G' "$VSD_TMP/gates/r1.sock")" "660 $grp" "vsctl run's status socket is 0660 with vsd's group"
kill "$run_pid"
wait "$run_pid" 2>/dev/null
printf 'vs grp1 cpu 5%%\n' >"$VSD_TMP/svc.rules"
check "apply --prune stops the service" vsctl apply "$VSD_TMP/svc.rules" --prune
# the services' processes leave grp1 as they exit, after the answers above:
# destroy (which refuses a VS that holds processes) once they are gone
check "grp1 is destroyed once its services' processes are gone" wait_until quiet vsctl destroy grp1

# --- a member acts only on its own processes (vsd(8), ACCESS)
member() { setpriv --reuid=65534 --regid=65534 --groups="$gid" "$@"; }
check "a member creates a VS" member "$VSCTL" create grp1 --cpu 5%
sleep 1000 &
rootp=$!
on_exit "kill $rootp"
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 &
userp=$!
on_exit "kill $userp"
out=$(member "$VSCTL" attach grp1 "$rootp" 2>&1)
[ $? -ne 0 ] && ok "a member cannot attach root's process" || fail "a member cannot attach root's process"
like "$out" "attach: process $rootp belongs to uid 0; uid 65534 may only act on its own processes" \
	"and is told why"
in_vs "$rootp" grp1 && fail "root's process stays where it was" || ok "root's process stays where it was"
check "a member may attach its own process" member "$VSCTL" attach grp1 "$userp"
in_vs "$userp" grp1 && ok "which is then in the VS" || fail "which is then in the VS"
check "a member may run a command in a VS" member "$VSCTL" exec grp1 -- true
check "root may attach root's process to the member's VS" vsctl attach grp1 "$rootp"
out=$(member "$VSCTL" destroy grp1 --force 2>&1)
[ $? -ne 0 ] && ok "a member cannot destroy --force a VS holding root's process" ||
	fail "a member cannot destroy --force a VS holding root's process"
like "$out" "destroy: process $rootp belongs to uid 0; uid 65534 may only act on its own processes" \
	"and is told which process"
kill -0 "$rootp" && kill -0 "$userp" && ok "nothing was killed" || fail "nothing was killed"
check "the VS is still there" vsctl show grp1
check "root moves its process to a VS of its own" sh -c "'$VSCTL' create rootvs --cpu 1% && '$VSCTL' attach rootvs $rootp"
check "with only its own process left, the member may destroy --force" member "$VSCTL" destroy grp1 --force
wait "$userp"
is "$?" 137 "which killed the member's process"
kill -0 "$rootp" && ok "and not root's" || fail "and not root's"

# services run as root: only root starts or stops one
out=$(member "$VSCTL" service stop anything 2>&1)
like "$out" "service: only root may start or stop a service" "a member cannot stop a service"
printf 'vs m1 cpu 1%%\nservice evil home m1 command "touch %s/evil"\n' "$VSD_TMP" > "$VSD_TMP/m.rules"
chown 65534 "$VSD_TMP/m.rules"
out=$(member "$VSCTL" apply "$VSD_TMP/m.rules" 2>&1)
[ $? -ne 0 ] && ok "a member cannot apply a service line" || fail "a member cannot apply a service line"
like "$out" "service lines need root" "and is told why"
vsctl show m1 >/dev/null 2>&1 && fail "the refused apply changed nothing" || ok "the refused apply changed nothing"

# every change is logged with the client's uid and pid
log=$VSD_TMP/vsd.log
grep -Eq "attach name=grp1 pid=$userp by uid 65534 \(pid [0-9]+\): done" "$log" &&
	ok "vsd logs a member's attach with its uid and pid" || fail "vsd logs a member's attach"
grep -Eq "destroy name=grp1 force=1 by uid 65534 \(pid [0-9]+\): refused: destroy: process $rootp" "$log" &&
	ok "and a refused destroy, with why" || fail "and a refused destroy"
grep -Eq "create name=rootvs cpu=1% by uid 0 \(pid [0-9]+\): done" "$log" &&
	ok "and root's changes" || fail "and root's changes"
vsctl destroy rootvs --force >/dev/null

# --- vsctl apply tells a member nothing about root's directories: vsd reads
# a member's rule file, and what it includes, with the member's permissions
RO=$VSD_TMP/rootonly
mkdir -m 0700 "$RO"
printf 'vs rootf cpu 1%%\n' > "$RO/exists.rules"
chmod 0644 "$RO/exists.rules"
MI=$VSD_TMP/memberinc
mkdir -m 0755 "$MI"
printf 'include "../rootonly/exists.rules"\n' > "$MI/inc-exists.rules"
printf 'include "../rootonly/missing.rules"\n' > "$MI/inc-missing.rules"
chown -R 65534 "$MI"
# the member's answers for the file that is there and the one that is not,
# each name replaced by NAME: the same text, and no word of the owner. As
# an attacker would: straight to the socket (vsctl's own look at the path
# is made with the member's permissions anyway), and with vsctl.
probe() { CTL_AS="setpriv --reuid=65534 --regid=65534 --groups=$gid" \
	ctl_send "F(b'apply\\0path=$1\\0')" | sed "s/$2/NAME/g"; }
a=$(probe "$RO/exists.rules" exists); b=$(probe "$RO/missing.rules" missing)
is "$a" "$b" "a member's raw apply of a file in a root-only directory: there or not, the same error"
check "which says nothing of its owner" sh -c "! printf '%s' \"\$1\" | grep -q 'owned by'" _ "$a"
like "$a" "NAME.rules: cannot open: Permission denied" "only that the member may not open it"
vprobe() { member "$VSCTL" apply "$1" 2>&1 | sed "s/$2/NAME/g"; }
is "$(vprobe "$RO/exists.rules" exists)" "$(vprobe "$RO/missing.rules" missing)" \
	"the same through vsctl"
a=$(vprobe "$MI/inc-exists.rules" exists); b=$(vprobe "$MI/inc-missing.rules" missing)
is "$a" "$b" "the same through a relative include in the member's own file"
like "$a" "Permission denied" "(the include is opened with the member's permissions)"
vsctl show rootf >/dev/null 2>&1 && fail "nothing was applied" || ok "nothing was applied"
check "root still applies the root-owned file" vsctl apply "$RO/exists.rules"
check "and made its VS" vsctl show rootf
vsctl destroy rootf >/dev/null

# --- marks, priorities and TOS are root's (vsd(8), SECURITY): SO_MARK and
# SO_PRIORITY above 6 need CAP_NET_ADMIN, and a VS's DSCP is what remote
# hosts classify it by. A member tries each way in: create, set, a rule
# file, and a VS root made.
state() { vsctl list --json | json '[(v["name"], v.get("gate")) for v in d]'; }
before=$(state)
for opt in "--mark 0x76000001" "--mark 5" "--priority 7" "--dscp AF11" "--tos 0x28"; do
	# shellcheck disable=SC2086
	out=$(member "$VSCTL" create mk1 --cpu 1% $opt 2>&1); st=$?
	case $opt in
	--mark*) why="SO_MARK $(printf '0x%x' "${opt#--mark }") needs root" ;;
	--priority*) why="SO_PRIORITY 7 needs root" ;;
	*) why="TOS 0x28 needs root" ;;
	esac
	if [ $st -ne 0 ] && [[ $out == *"create: $why"* ]]; then
		ok "a member cannot create a VS with $opt, and is told why"
	else
		fail "a member cannot create a VS with $opt"
		diag "status $st: $out"
	fi
done
is "$(state)" "$before" "the refused creates made nothing"
check "a member may create a VS with --priority 6 (no privilege needed for it)" \
	member "$VSCTL" create mk2 --cpu 1% --priority 6
before=$(state)
out=$(member "$VSCTL" set mk2 --mark 0x76000001 2>&1)
[ $? -ne 0 ] && ok "a member cannot set a mark on its VS" || fail "a member cannot set a mark on its VS"
like "$out" "set: SO_MARK 0x76000001 needs root" "and is told why"
out=$(member "$VSCTL" set mk2 --cpu 2% --priority 7 2>&1)
[ $? -ne 0 ] && ok "nor a priority above 6, even with another change" || fail "nor a priority above 6"
is "$(state)" "$before" "the refused sets changed nothing (not even --cpu)"
# a rule file: the member's own, in a directory of its own
MD=$VSD_TMP/member
mkdir -m 0755 "$MD"
chown 65534 "$MD"
printf 'vs mk3 cpu 1%% mark 0x76000001\n' > "$MD/mark.rules"
printf 'vs mk3 cpu 1%%\nremote dscp AF11 from 198.18.0.1 => mk3\n' > "$MD/remote.rules"
chown 65534 "$MD"/*.rules
out=$(member "$VSCTL" apply "$MD/mark.rules" 2>&1)
[ $? -ne 0 ] && ok "a member's rule file cannot set a mark" || fail "a member's rule file cannot set a mark"
like "$out" "$MD/mark.rules:1:[0-9]+: VS mk3: SO_MARK 0x76000001 needs root" "and is told where and why"
out=$(member "$VSCTL" apply "$MD/remote.rules" 2>&1)
[ $? -ne 0 ] && ok "nor have remote lines" || fail "nor have remote lines"
like "$out" "$MD/remote.rules:2:[0-9]+: remote lines need root" "and is told where and why"
is "$(state)" "$before" "the refused applies changed nothing"
# a VS root made with a mark lends it to no member's process; MARKPY prints
# the SO_MARK of a new socket (anyone may read it back)
MARKPY='import socket; print(socket.socket().getsockopt(socket.SOL_SOCKET, socket.SO_MARK))'
check "root creates a VS with a mark" vsctl create rmark --cpu 1% --mark 0x100
out=$(member "$VSCTL" exec rmark -- true 2>&1)
[ $? -ne 0 ] && ok "a member cannot run a command in a VS with a mark" ||
	fail "a member cannot run a command in a VS with a mark"
like "$out" "exec: VS 'rmark' gives its sockets what uid 65534 may not set: SO_MARK 0x100" \
	"and is told why"
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 1000 &
userp2=$!
on_exit "kill $userp2"
out=$(member "$VSCTL" attach rmark "$userp2" 2>&1)
[ $? -ne 0 ] && ok "nor attach its process to it" || fail "nor attach its process to it"
in_vs "$userp2" rmark && fail "its process is not in the VS" || ok "its process is not in the VS"
is "$(vsctl exec rmark -- /usr/bin/python3 -c "$MARKPY" 2>&1)" 256 \
	"root may run a command there, and its socket gets the mark"
# nor through a rule: the member's own VS, with its process in it, and a
# file that sends that VS's sockets (or new processes) to root's VS
check "the member attaches its process to its own VS" member "$VSCTL" attach mk2 "$userp2"
for kind in socket fork; do
	printf 'vs mk2 cpu 1%%\nvs rmark cpu 1%% mark 0x100\n(%s, mk2) => (rmark)\n' "$kind" \
		> "$MD/$kind.rules"
	chown 65534 "$MD/$kind.rules"
	out=$(member "$VSCTL" apply "$MD/$kind.rules" 2>&1); st=$?
	[ "$kind" = socket ] && what=sockets || what="new processes"
	if [ $st -ne 0 ] && [[ $out == *"$kind.rules:3:"*": the $what of VS mk2 would go to VS rmark: SO_MARK 0x100 needs root"* ]]; then
		ok "a member's ($kind, own VS) => (root's VS with a mark) is refused, and says why"
	else
		fail "a member's ($kind, own VS) => (root's VS with a mark) is refused"
		diag "status $st: $out"
	fi
	# the rules in force are still the old: a socket the member makes in
	# mk2 has no mark
	is "$(member "$VSCTL" exec mk2 -- /usr/bin/python3 -c "$MARKPY" 2>&1)" 0 \
		"and changed nothing: a socket the member makes in mk2 has no mark"
done
kill "$userp2"
check "root may set a mark on the member's VS" vsctl set mk2 --mark 0x76000001
vsctl destroy rmark >/dev/null; vsctl destroy mk2 >/dev/null
vsd_stop

# --group-marks LO-HI: the range a member may use, checked at start
out=$("$VSD" --foreground --socket "$VSD_TMP/gm.sock" --state-dir "$VSD_TMP/gm" \
	--cgroup-root "$VSD_ROOT" --group "$grp" --group-marks 0x75000000-0x77000000 2>&1); st=$?
if [ $st -ne 0 ] && [[ $out == *"overlaps the marks of vsd's remote lines"* ]] && [ ! -e "$VSD_TMP/gm.sock" ]; then
	ok "--group-marks over vsd's remote marks is refused at start"
else
	fail "--group-marks over vsd's remote marks is refused at start"
	diag "status $st: $out"
fi
vsd_start --group "$grp" --group-marks 0x1000-0x1fff || fail "vsd starts with --group-marks"
check "a member may set a mark in the range" member "$VSCTL" create gm1 --cpu 1% --mark 0x1000
check "and run a command there" member "$VSCTL" exec gm1 -- true
out=$(member "$VSCTL" set gm1 --mark 0x2000 2>&1)
like "$out" "set: SO_MARK 0x2000 is outside --group-marks 0x1000-0x1fff" "but not one outside it"
is "$(vsctl show gm1 --json | json 'd["gate"]["mark"]')" 4096 "which changed nothing"
vsctl destroy gm1 >/dev/null
done_testing
