#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Services that run as a user: `vsctl exec --user`,
# `vsctl run --user`, and a rule file's `service ... user U group G`. The
# command runs with that uid and gid (real, effective, saved, fs), the
# user's supplementary groups, no capability in any set and no_new_privs;
# its requests are still gated (served in the requester's VS); a restart,
# by the supervisor or after a vsd restart, keeps the user; unknown names
# are refused with a clear error and change nothing. The supervisor keeps
# uid 0 but only the capabilities it uses (gates/accept/vsd-gate.c).
. "$(dirname "$0")/lib.sh"
need_root
SERVER=$top_builddir/tests/gate-server
CLIENT=$top_builddir/tests/gate-client
[ -x "$SERVER" ] && [ -x "$CLIENT" ] || skip_all "tests/gate-server is not built"
command -v useradd >/dev/null && command -v groupadd >/dev/null || skip_all "useradd is missing"

R=$(mktemp -d /tmp/vsd-user.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
PORT=$(test_port)
PORT2=$((PORT + 15000))
w() { cat >"$R/$1"; chmod 0644 "$R/$1"; }

# a user of our own, in its own group and in one more
U=vsdu$$
G=vsdg$$
groupadd -r "$G" || { fail "groupadd $G"; done_testing; }
on_exit "groupdel $G"
useradd -r -M -s /usr/sbin/nologin -U -G "$G" "$U" || { fail "useradd $U"; done_testing; }
# run last to first: whatever still runs as the user (a service on its way
# out), then the user, then its own group if userdel left it
on_exit "groupdel $U"
on_exit "userdel -f $U"
on_exit "pkill -KILL -u $U; sleep 0.2"
UID_U=$(id -u "$U")
GID_U=$(id -g "$U")
GID_G=$(getent group "$G" | cut -d: -f3)
NOCAPS=0000000000000000

# field FILE KEY: a line of /proc/PID/status, tabs and spaces as one space
field() { sed -n "s/^$2:[[:space:]]*//p" "$1" | tr -s '\t ' '  ' | sed 's/ $//'; }
# runs_as STATUSFILE UID GID GROUPS...: ids, groups, no capabilities, NNP
runs_as() {
	local f=$1 u=$2 g=$3 want got
	shift 3
	want=$(printf '%s\n' "$@" | sort -n | tr '\n' ' ' | sed 's/ $//')
	got=$(field "$f" Groups | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')
	[ "$(field "$f" Uid)" = "$u $u $u $u" ] && [ "$(field "$f" Gid)" = "$g $g $g $g" ] &&
		[ "$got" = "$want" ] && [ "$(field "$f" CapEff)" = $NOCAPS ] &&
		[ "$(field "$f" CapPrm)" = $NOCAPS ] && [ "$(field "$f" CapInh)" = $NOCAPS ] &&
		[ "$(field "$f" CapBnd)" = $NOCAPS ] && [ "$(field "$f" CapAmb)" = $NOCAPS ] &&
		[ "$(field "$f" NoNewPrivs)" = 1 ] && return 0
	sed 's/^/#   /' "$f" | grep -E 'Uid|Gid|Groups|Cap|NoNew'
	return 1
}
svc() {
	vsctl services --json | json "[s for s in d if s['name'] == '$1'][0]$2" 2>/dev/null
}
wait_until() { for _i in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }
running() { [ "$(svc "$1" "['state']")" = running ] && [ "$(svc "$1" "['pid']")" -gt 0 ]; }
served_in() {
	[ -s "$1" ] && ! grep -v "cg=[^ ]*/$VSH_ROOT/$2 " "$1" | grep -q "^[0-9]" ||
		{ echo "the answers (${1##*/}):"; cat "$1"; return 1; }
}
# creds_are FILE UID GID: every answer's creds= says uid, gid, no caps, NNP
creds_are() {
	[ -s "$1" ] && ! grep "^[0-9]" "$1" | grep -qv \
		"creds=uid:$2/$2/$2/$2,gid:$3/$3/$3/$3,.*capprm:$NOCAPS,capeff:$NOCAPS,capbnd:$NOCAPS,capamb:$NOCAPS,nnp:1"
}

vsd_start || { fail "vsd starts"; done_testing; }
for v in "base 10%" "www1 30%" "www2 30%"; do
	set -- $v
	vsctl create "$1" --cpu "$2" >/dev/null || { fail "create VS $1"; done_testing; }
done

# --- vsctl exec --user
vsctl exec www1 --user "$U" -- cat /proc/self/status >"$R/exec.st"
check "vsctl exec --user: the user's ids and groups, no capabilities, no_new_privs" \
	runs_as "$R/exec.st" "$UID_U" "$GID_U" "$GID_U" "$GID_G"
vsctl exec www1 --user "$U" --group "$G" -- cat /proc/self/status >"$R/exec2.st"
# initgroups(3) with that group: it, and the groups that list the user
check "vsctl exec --user --group: that group, and the groups that list the user" \
	runs_as "$R/exec2.st" "$UID_U" "$GID_G" "$GID_G"
is "$(vsctl exec --user "$U" www1 -- id -u)" "$UID_U" "vsctl exec: --user before the VS name works too"
check "vsctl exec --user: in the VS" grep -q "/$VSD_ROOT/www1\$" <(vsctl exec www1 --user "$U" -- cat /proc/self/cgroup)
out=$(vsctl exec www1 --user nosuch-user-$$ -- true 2>&1)
r=$?
[ $r -ne 0 ] && ok "vsctl exec --user with an unknown user fails" || fail "unknown user fails (status $r)"
like "$out" "exec: unknown user 'nosuch-user-$$'" "and says so"
out=$(vsctl exec www1 --group "$G" -- true 2>&1)
like "$out" "exec: --group needs --user" "vsctl exec: --group alone is refused"

# --- vsctl run --user: unknown names are refused before anything starts
out=$(vsctl run --home base --name bad --user nosuch-user-$$ -- "$SERVER" -p "$PORT" 2>&1)
r=$?
is "$r" 5 "vsctl run --user with an unknown user exits 5 (not found)"
like "$out" "run: unknown user 'nosuch-user-$$'" "and says so"
out=$(vsctl run --home base --name bad --user "$U" --group nosuch-group-$$ -- "$SERVER" -p "$PORT" 2>&1)
like "$out" "run: unknown group 'nosuch-group-$$'" "an unknown group too"
check "nothing was started" [ ! -e "$VSD_TMP/gates/bad.sock" ]

# --- vsctl run --user: the service as the user, gated as before
vsctl run --home base --name ru --user "$U" -- "$SERVER" -p "$PORT" >"$R/ru.out" 2>"$R/ru.err" &
RUN=$!
on_exit "kill $RUN"
check "vsctl run --user starts the service" wait_until running ru
SPID=$(svc ru "['pid']")
SUP=$(svc ru "['supervisor']")
is "$(svc ru "['user']") $(svc ru "['group']")" "$U $U" "vsctl services shows the user and group"
cp "/proc/$SPID/status" "$R/ru.st"
check "the service: the user's ids and groups, no capabilities, no_new_privs" \
	runs_as "$R/ru.st" "$UID_U" "$GID_U" "$GID_U" "$GID_G"
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -r "creds" -v >"$R/c1"
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 5 -r "creds" -v >"$R/c2"
diag "www1's answers began in: $(sed -n "s|.* cg=\([^ ]*\) .*|\1|p" "$R/c1" | tr '\n' ' ')"
check "gated: www1's requests are served in www1" served_in "$R/c1" www1
check "gated: www2's requests are served in www2" served_in "$R/c2" www2
check "the serving thread runs as the user (gate-server's creds)" creds_are "$R/c1" "$UID_U" "$GID_U"
# the supervisor: still uid 0, but only CAP_KILL, CAP_SETGID, CAP_SETUID,
# CAP_SETPCAP, CAP_SYS_PTRACE, CAP_SYS_NICE (SCHED_FIFO again after a
# demotion) and CAP_BPF (5, 6, 7, 8, 19, 23, 39), in every set
KEEP=00000080008801e0
cp "/proc/$SUP/status" "$R/sup.st"
is "$(field "$R/sup.st" Uid) $(field "$R/sup.st" CapEff) $(field "$R/sup.st" CapPrm) $(field "$R/sup.st" CapBnd)" \
	"0 0 0 0 $KEEP $KEEP $KEEP" "the supervisor keeps uid 0 and seven capabilities"
# with only those capabilities, the gate still hands every connection over once
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1000 -j 8 >"$R/m1" &
M1=$!
vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 1000 -j 8 >"$R/m2"
wait $M1
_all=1; grep -q "ok 1000 bad 0" "$R/m1" && grep -q "ok 1000 bad 0" "$R/m2" && _all=0
check "2000 connections from two VSs, each answered once" [ $_all = 0 ]
check "no accept failed in the service" sh -c "! grep -q 'accept' '$R/ru.err'"
kill "$RUN"
wait "$RUN" 2>/dev/null

# --- a declared service with a user and a group
w one.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service us home base user $U group $G command "$SERVER -p $PORT2"
E
on_exit "pkill -KILL -f -- '$SERVER -p $PORT2'"
out=$(vsctl check "$R/one.rules" 2>&1)
check "vsctl check accepts user and group" [ $? -eq 0 ]
out=$(vsctl apply "$R/one.rules")
like "$out" "started service us" "apply starts the service"
check "it runs" wait_until running us
SPID=$(svc us "['pid']")
is "$(svc us "['user']") $(svc us "['group']")" "$U $G" "vsctl services shows its user and group"
cp "/proc/$SPID/status" "$R/us.st"
check "the declared service: the user, group $G, no capabilities" \
	runs_as "$R/us.st" "$UID_U" "$GID_G" "$GID_G"
vsctl exec www2 -- "$CLIENT" -p "$PORT2" -n 5 -r "creds" -v >"$R/d2"
check "gated: www2's requests are served in www2" served_in "$R/d2" www2
check "by the user" creds_are "$R/d2" "$UID_U" "$GID_G"

# restarted by its supervisor: the same user
kill -KILL "$SPID"
check "killed, it is restarted" wait_until sh -c "[ \"\$(\"$VSCTL\" services --json | python3 -c 'import json,sys; print([s[\"pid\"] for s in json.load(sys.stdin) if s[\"name\"] == \"us\"][0])')\" -ne $SPID ] 2>/dev/null"
wait_until running us
NPID=$(svc us "['pid']")
cp "/proc/$NPID/status" "$R/us2.st"
check "the restarted service runs as the user" runs_as "$R/us2.st" "$UID_U" "$GID_G" "$GID_G"

# vsd restarted, then the service: the user comes from vsd's state
vsd_stop TERM
vsd_start || fail "vsd starts again"
check "vsd's state has the user" grep -q "^us base -,user=$U,group=$G " "$VSD_STATE/services"
check "vsctl service restart" quiet vsctl service restart us
check "it runs again" wait_until sh -c "! kill -0 $NPID 2>/dev/null"
wait_until running us
cp "/proc/$(svc us "['pid']")/status" "$R/us3.st"
check "after a vsd restart, the service still runs as the user" \
	runs_as "$R/us3.st" "$UID_U" "$GID_G" "$GID_G"

# an unknown user: the file is refused, the service untouched
SPID=$(svc us "['pid']")
w bad.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service us home base user nosuch-user-$$ command "$SERVER -p $PORT2"
E
out=$(vsctl check "$R/bad.rules" 2>&1)
like "$out" "bad.rules:4:[0-9]+: service 'us': unknown user 'nosuch-user-$$'" "vsctl check: unknown user, with file:line:col"
out=$(vsctl apply "$R/bad.rules" 2>&1)
r=$?
[ $r -ne 0 ] && ok "vsctl apply refuses it" || fail "apply refuses an unknown user"
like "$out" "unknown user 'nosuch-user-$$'" "and says why"
is "$(svc us "['pid']") $(svc us "['user']")" "$SPID $U" "the service is untouched"

# another user: the service is restarted as that user
w two.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service us home base user nobody command "$SERVER -p $PORT2"
E
out=$(vsctl apply --dry-run "$R/two.rules")
like "$out" "restart service us \(user changed\)" "dry run: a new user restarts the service"
check "apply" quiet vsctl apply "$R/two.rules"
check "the old process goes" wait_until sh -c "! kill -0 $SPID 2>/dev/null"
wait_until running us
cp "/proc/$(svc us "['pid']")/status" "$R/us4.st"
check "the service runs as nobody now" runs_as "$R/us4.st" 65534 "$(id -g nobody)" $(id -G nobody)

w none.rules <<E
vs base cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
E
check "apply --prune stops it" quiet vsctl apply --prune "$R/none.rules"
wait_until sh -c "[ \"\$(\"$VSCTL\" services --json)\" = '[]' ]"
done_testing
