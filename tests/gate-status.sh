#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The supervisor's status socket: mode 0600 whatever the
# umask, or 0660 with --status-group; SO_PEERCRED serves root and the group's
# members and refuses anyone else, even with the file's mode widened.
# And what it says of the wake-up flag: --sync-wakeup auto, the
# default, sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP exactly where vsd --check's
# own probe finds it (Linux 6.6+; not on Debian 12's 6.1), off never does.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
command -v setpriv > /dev/null || skip_all "setpriv (util-linux) is missing"
plan 18

mk_vs home 1 2000 || { nok "create the home VS"; exit 1; }
chmod 0755 "$W"	# others reach the socket file: its mode and SO_PEERCRED decide
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# refused WHO...: the client is told no, and learns nothing of the service
refused() { _o=$("$@" "$CLIENT" -u "$STATUS" 2>&1); echo "$_o" | grep -q '^{"error": "permission denied' && ! echo "$_o" | grep -q '"pid"'; }
# no_entry WHO...: the file's mode keeps the client out
no_entry() { "$@" "$CLIENT" -u "$STATUS" 2>&1 | grep -q "Permission denied"; }
served() { "$@" "$CLIENT" -u "$STATUS" 2>/dev/null | grep -q "\"supervisor\": $GPID,"; }
# stop_as UID: send "stop" as UID (no groups), through root's python3 dropping privileges
stop_as() {
	python3 -c 'import os, socket, sys
os.setgroups([]); os.setresgid(65534, 65534, 65534); u = int(sys.argv[1]); os.setresuid(u, u, u)
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[2])
try:
    s.sendall(b"stop\n"); s.recv(4096)
except OSError:
    pass	# refused before it read' "$1" "$STATUS"
}

# --- without --status-group: root only, whatever the umask
umask 000
gate_start solo -- "$SERVER" || diag "the gate did not start (see $W/solo.err)"
umask 022
check "mode 0600 under umask 000" [ "$(stat -c %a "$STATUS")" = 600 ]
check "root is served" served env
check "nobody cannot even connect (the mode)" no_entry nobody
chmod 0666 "$STATUS"
check "with the mode widened, SO_PEERCRED refuses nobody" refused nobody
stop_as 65534
sleep 0.2
check "and a refused stop stops nothing" served env
check "the supervisor logs the refusal" grep -q "status socket: refused a client with uid 65534" "$W/solo.err"
gate_stop

# --- with --status-group: root and the members
grp=vsdg$$
groupadd -r "$grp" || { nok "groupadd"; exit 1; }
trap 'groupdel "$grp" 2>/dev/null; cleanup' EXIT
gid=$(getent group "$grp" | cut -d: -f3)
member() { setpriv --reuid=65534 --regid=65534 --groups="$gid" "$@"; }
umask 000
gate_start grp --status-group "$grp" -- "$SERVER" || diag "the gate did not start (see $W/grp.err)"
umask 022
check "mode 0660 and the group under umask 000" [ "$(stat -c '%a %G' "$STATUS")" = "660 $grp" ]
check "root is served" served env
check "a member is served" served member
check "a non-member cannot connect (the mode)" no_entry nobody
chmod 0666 "$STATUS"
check "with the mode widened, SO_PEERCRED refuses a non-member" refused nobody
gate_stop

# --- a gid, as vsd passes it; a group that does not exist is an error
gate_start gid --status-group "$gid" -- "$SERVER" || diag "the gate did not start (see $W/gid.err)"
check "--status-group GID: mode 0660 with that group" [ "$(stat -c '%a %g' "$STATUS")" = "660 $gid" ]
gate_stop
groupdel "$grp"
"$GATE" --home home --vs-table "$TAB" --status "$W/x.sock" --status-group "nosuchgroup$$" -- true 2> "$W/x.err"
check "--status-group of no group is refused" [ $? = 1 ]
check "and says so" grep -q "nosuchgroup$$: no such group" "$W/x.err"

# --- the wake-up flag: auto, the default, sets it exactly where the kernel
# has it (vsd --check's probe, a filter of its own); off never does
have=$("$VSD" --check 2>/dev/null | awk '$1 == "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP" { print $2 }')
case $have in yes) want=true ;; no) want=false ;; *) want=unknown ;; esac
sync_is() { status | grep -q "\"sync_wakeup\": $1"; }
gate_start sync -- "$SERVER" || diag "the gate did not start (see $W/sync.err)"
check "by default the flag is set as the kernel allows (vsd --check: ${have:-nothing})" sync_is "$want"
gate_stop
gate_start nosync --sync-wakeup off -- "$SERVER" || diag "the gate did not start (see $W/nosync.err)"
check "--sync-wakeup off: the flag is not set" sync_is false
gate_stop
"$GATE" --home home --vs-table "$TAB" --sync-wakeup sometimes -- true 2> "$W/y.err"
check "--sync-wakeup sometimes is refused" [ $? = 1 ]
check "and says what it takes" grep -q "sometimes: expected auto, on or off" "$W/y.err"
exit $tap_failed
