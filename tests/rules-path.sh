#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The path to a rule file is checked, not only the file:
# a directory others can write lets them swap in another file, or a link to
# one, between two reloads. Here an unprivileged user (nobody) really does
# it; vsd must refuse, and change nothing. Sticky directories (as /tmp) and
# links made by root keep working; /proc and /sys files are not rule files.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

D=$(mktemp -d /tmp/vsd-rules-path.XXXXXX)
chmod 0755 "$D"
on_exit "rm -rf $D"
mkdir -m 0755 "$D/w" "$D/other" "$D/nob"
mkdir -m 1777 "$D/sticky"
chown 65534 "$D/nob"
w() { cat >"$1"; chmod 0644 "$1"; }
w "$D/w/boot.rules" <<<'vs web1 cpu 5%'
w "$D/other/evil.rules" <<<'vs evil cpu 5%'	# root's file, but not the one applied
names() { vsctl list --json | json '" ".join(sorted(v["name"] for v in d))'; }

vsd_start --rules "$D/w/boot.rules" || { fail "vsd --rules starts"; done_testing; }
is "$(names)" web1 "vsd --rules applied the file in a 0755 directory"

# --- nobody swaps the file for a link while the directory is 0777 -------------
chmod 0777 "$D/w"
check "nobody can put a link where root's file was (the directory is 0777)" \
	as_nobody sh -c "ln -s ../other/evil.rules $D/w/new && mv -T $D/w/new $D/w/boot.rules"
check "(it is a link now)" test -L "$D/w/boot.rules"
out=$(vsctl reload 2>&1)
is "$?" 7 "reload through a world-writable directory fails"
like "$out" "boot.rules: refused: directory $D/w is group- and world-writable \(mode 0777\); others could replace the file" \
	"and names the directory"
is "$(names)" web1 "the swapped-in file was not applied"
kill -HUP "$VSD_PID"
sleep 0.3
is "$(names)" web1 "nor by SIGHUP"
like "$(cat "$VSD_TMP/vsd.log")" "SIGHUP: rule file refused" "vsd logged the refusal"

# --- apply: a root-owned file in a 0777 directory -------------------------------
chmod 0755 "$D/w"
rm -f "$D/w/boot.rules"
w "$D/w/site.rules" <<<'vs web1 cpu 6%'
chmod 0777 "$D/w"
out=$(vsctl apply "$D/w/site.rules" 2>&1)
is "$?" 7 "apply of root's file in a 0777 directory fails"
like "$out" "directory $D/w is group- and world-writable \(mode 0777\)" "and says why"
out=$(vsctl check "$D/w/site.rules" 2>&1)
is "$?" 0 "vsctl check of the same file passes (it only warns)"
like "$out" "warning: directory $D/w is group- and world-writable \(mode 0777\): vsd refuses to apply" \
	"with a warning that apply would refuse it"
chmod 0775 "$D/w"
out=$(vsctl apply "$D/w/site.rules" 2>&1)
like "$out" "directory $D/w is group-writable \(mode 0775\)" "a group-writable directory is refused too"
chmod 0755 "$D/w"
out=$(vsctl apply "$D/w/site.rules" 2>&1)
like "$out" "1 updated" "with the directory 0755 again the file applies"

# --- a directory that belongs to someone else -----------------------------------
w "$D/nob/site.rules" <<<'vs web1 cpu 7%'
out=$(vsctl apply "$D/nob/site.rules" 2>&1)
is "$?" 7 "apply of root's file in a directory nobody owns fails"
like "$out" "refused: directory $D/nob belongs to uid 65534" "and says whose it is"

# --- sticky directories (as /tmp): only the owner of a link may replace it -------
w "$D/sticky/site.rules" <<<'vs web1 cpu 5%'
check "root's file in a root-owned sticky 1777 directory applies" vsctl apply "$D/sticky/site.rules"
check "nobody makes a link in the sticky directory" \
	as_nobody ln -s ../other/evil.rules "$D/sticky/nobodys.rules"
w "$D/w/inc.rules" <<<'include "../sticky/nobodys.rules"'
out=$(vsctl apply "$D/w/inc.rules" 2>&1)
is "$?" 7 "an include through nobody's link is refused"
like "$out" "inc.rules:1:9: included file '$D/w/../sticky/nobodys.rules': refused: symbolic link $D/sticky/nobodys.rules belongs to uid 65534" \
	"and names the link and its owner"
out=$(vsctl apply "$D/sticky/nobodys.rules" 2>&1)
rc=$?
if [ "$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)" = 1 ]; then
	# the kernel refuses first (fs.protected_symlinks, on under systemd):
	# root may not follow nobody's link in a sticky world-writable directory
	is "$rc" 4 "vsctl apply of nobody's link is refused too (4: permission denied)"
	like "$out" "nobodys.rules: Permission denied" \
		"(the kernel's fs.protected_symlinks refuses to follow it)"
else
	is "$rc" 7 "vsctl apply of nobody's link is refused too (7: the file is refused)"
	like "$out" "nobodys.rules: refused: symbolic link $D/sticky/nobodys.rules belongs to uid 65534" \
		"(vsctl leaves the link in the path, for vsd to check)"
fi
ln -s ../other/evil.rules "$D/sticky/roots.rules"
w "$D/w/inc.rules" <<<'include "../sticky/roots.rules"'
out=$(vsctl apply --dry-run "$D/w/inc.rules" 2>&1)
like "$out" "would be: 1 created" "a link root made is followed"
out=$(vsctl apply --dry-run "$D/sticky/roots.rules" 2>&1)
like "$out" "would be: 1 created" "by vsctl apply too"
is "$(names)" web1 "nothing was applied on the way"

# --- kernel pseudo files are not rule files -------------------------------------
w "$D/w/proc.rules" <<<'include "/proc/version"'
out=$(vsctl apply "$D/w/proc.rules" 2>&1)
is "$?" 7 "an include of /proc/version is refused"
like "$out" "proc.rules:1:9: included file '/proc/version': not a rule file: it is on /proc \(procfs\)" \
	"not read as an empty file"
out=$(vsctl check "$D/w/proc.rules" 2>&1)
is "$?" 7 "vsctl check refuses it too (it is no permission matter)"
sys=$(ls /sys/kernel/uevent_seqnum /sys/kernel/profiling /sys/power/state 2>/dev/null | head -1)
if [ -n "$sys" ]; then
	w "$D/w/sys.rules" <<<"include \"$sys\""
	out=$(vsctl apply "$D/w/sys.rules" 2>&1)
	like "$out" "included file '$sys': not a rule file: it is on /sys \(sysfs\)" "so is a /sys file"
else
	ok "# SKIP no readable /sys/kernel file on this host"
fi
is "$(names)" web1 "none of the refused files changed anything"

done_testing
