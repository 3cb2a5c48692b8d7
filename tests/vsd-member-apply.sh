#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A member of vsd's --group applying a rule file of its own, as an attacker
# would (vsd(8), SECURITY): a file is applied whole, so one applied over
# root's rules would drop the lines only root may write (a remote table,
# the VSs and rules for every user's processes), and a line naming a VS
# root gave a mark or a TOS would clear it by leaving it out. Each such
# apply is refused, says why (file:line:column), and changes nothing; the
# member's own rules it may replace.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
grp=vsdt$$
groupadd -r "$grp" || { fail "groupadd"; done_testing; }
on_exit "groupdel $grp"
gid=$(getent group "$grp" | cut -d: -f3)
# vsd in a network namespace of the test's: a remote line needs
# net.ipv4.tcp_fwmark_accept there, which the host's is left without
command -v ip >/dev/null && command -v nsenter >/dev/null || skip_all "needs ip(8) and nsenter(1)"
NS=vsd-ma-$$
ip netns add "$NS" || { fail "make the network namespace"; done_testing; }
on_exit "ip netns del $NS"
nsenter --net="/run/netns/$NS" sysctl -qw net.ipv4.tcp_fwmark_accept=1 ||
	{ fail "set net.ipv4.tcp_fwmark_accept in the namespace"; done_testing; }
VSH_LAUNCH="nsenter --net=/run/netns/$NS"
vsd_start --group "$grp" || { fail "vsd starts with --group"; done_testing; }
chmod 0755 "$VSD_TMP"	# the member reaches its files under it
member() { setpriv --reuid=65534 --regid=65534 --groups="$gid" "$@"; }
# the member's files, in a directory of its own
MD=$VSD_TMP/member
mkdir -m 0755 "$MD"
mrules() { printf "$2" > "$MD/$1"; chown 65534 "$MD/$1"; }
# everything an apply may change: the rules in force (as vsd saved them),
# the VSs and their socket settings
state() {
	cat "$VSD_STATE/applied.rules" 2>/dev/null
	vsctl list --json | json '[(v["name"], v.get("gate")) for v in d]'
}
# refused WHAT FILE PATTERN [apply options]: the member's apply fails, says
# PATTERN, and changes nothing
refused() {
	_b=$(state)
	_out=$(member "$VSCTL" apply "$MD/$2" "${@:4}" 2>&1); _st=$?
	if [ $_st -ne 0 ] && [[ $_out =~ $3 ]]; then
		ok "$1: refused, and says why"
	else
		fail "$1: refused, and says why"
		diag "status $_st: $_out"
	fi
	is "$(state)" "$_b" "$1: the refused apply changed nothing"
}

# --- with no rules in force, or its own, a member applies its file
mrules own.rules 'vs m1 cpu 1%%\n'
check "a member applies its file when no rules are in force" member "$VSCTL" apply "$MD/own.rules"
mrules own.rules 'vs m1 cpu 2%%\n'
check "and replaces its own rules" member "$VSCTL" apply "$MD/own.rules"
is "$(vsctl show m1 --json | json 'd["cpu"]')" 2 "which took effect (cpu 2%)"

# --- a VS root gave a mark or a TOS: a member's line that leaves it out
# would clear it
check "root creates a VS with a mark, and one with a TOS" \
	sh -c "'$VSCTL' create rmark --cpu 1% --mark 0x100 && '$VSCTL' create rtos --cpu 1% --tos 0x20"
mrules omark.rules 'vs m1 cpu 2%%\nvs rmark cpu 1%%\n'
refused "leaving out root's mark on rmark" omark.rules \
	"omark.rules:2:[0-9]+: VS rmark would lose or change what uid 65534 may not set: SO_MARK 0x100 needs root"
mrules otos.rules 'vs m1 cpu 2%%\nvs rtos cpu 1%%\n'
refused "leaving out root's TOS on rtos" otos.rules "otos.rules:2:[0-9]+: VS rtos would lose or change what uid 65534 may not set: .*TOS"
is "$(vsctl show rmark --json | json 'd["gate"]["mark"]')/$(vsctl show rtos --json | json 'd["gate"]["tos"]')" \
	256/32 "rmark keeps its mark, rtos its TOS"

# --- root's rules in force: a remote table, a VS with a mark
cat > "$VSD_TMP/root.rules" <<'RULES'
vs www1 cpu 10% mark 0x200
vs www2 cpu 10%
vs rold cpu 1%
remote dscp af11 from 198.18.0.1 => www1
RULES
check "root applies its rules (a remote line, a mark)" vsctl apply "$VSD_TMP/root.rules"
root_first="would drop the rules in force, uid 0's, from $VSD_TMP/root.rules:1:[0-9]+ on: only root may replace them"
mrules clear.rules 'vs m1 cpu 2%%\n'
refused "a member's file over root's (clearing the remote table)" clear.rules "$root_first"
refused "the same with --prune (destroying root's VSs)" clear.rules "$root_first" --prune
vsctl show rold >/dev/null 2>&1 && ok "root's VS rold is still there" || fail "root's VS rold is still there"
mrules same.rules 'vs www1 cpu 10%%\nvs www2 cpu 10%%\nvs rold cpu 1%%\n'
refused "root's lines without the remote line and the mark" same.rules "$root_first"
refused "the same, as a dry run" same.rules "$root_first" --dry-run
is "$(grep -c '^remote' "$VSD_STATE/applied.rules")/$(vsctl show www1 --json | json 'd["gate"]["mark"]')" \
	1/512 "the remote line is in force, www1 keeps its mark"
check "root still applies its rules" vsctl apply "$VSD_TMP/root.rules"
for v in m1 rmark rtos www1 www2 rold; do vsctl destroy "$v" >/dev/null; done
vsd_stop
done_testing
