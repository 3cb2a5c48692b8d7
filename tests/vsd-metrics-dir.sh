#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The metrics file is written as root into a directory another user owns
# (node_exporter's textfile directory belongs to prometheus). Played as that
# owner: links planted at the old temporary name, at other names one could
# guess and at the file's own name, all pointing at a root-only 0600 file,
# must leave it as it was, content and mode. A directory anyone may write
# without the sticky bit, or one reached through a link, is refused with a
# clear error, at start and when it becomes so while vsd runs; so is a state
# directory given as a link.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
M=$(mktemp -d /tmp/vsd-mdir.XXXXXX)
on_exit "rm -rf $M"
chmod 0711 "$M"		# the attacker reaches its own directory inside
attacker() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# root's secret, which the attacker cannot read
mkdir -m 0700 "$M/root"
printf 'root only\n' > "$M/root/secret"
chmod 0600 "$M/root/secret"
want="$(sha256sum < "$M/root/secret") 600 0"
secret() { echo "$(sha256sum < "$M/root/secret") $(stat -c '%a %u' "$M/root/secret")"; }

# the textfile directory, the attacker's, with its links planted first
T=$M/textfile
mkdir -m 0755 "$T"
chown 65534:65534 "$T"
for n in .vsd.prom.tmp vsd.prom.tmp .vsd.prom.new vsd.prom~ vsd.prom; do
	attacker ln -s "$M/root/secret" "$T/$n"
done
is "$(find "$T" -type l | wc -l)" 5 "the attacker planted 5 links in its directory"

vsd_start --metrics-file "$T/vsd.prom" --metrics-interval 1 || { fail "vsd starts"; done_testing; }
ino0=$(stat -c %i "$T/vsd.prom")
# two writes at least: the one at start and one a second later (a new inode)
check "vsd writes the file again within the interval" \
	wait_until sh -c "[ \"\$(stat -c %i '$T/vsd.prom')\" != $ino0 ]"
is "$(secret)" "$want" "the root-only file is unchanged, content and mode"
check "the metrics file is a regular file now, not the link" \
	sh -c "[ -f '$T/vsd.prom' ] && [ ! -L '$T/vsd.prom' ]"
is "$(stat -c '%a %u' "$T/vsd.prom")" "644 0" "mode 0644, root's"
check "it holds vsd's metrics" grep -q '^# TYPE vsd_vss gauge' "$T/vsd.prom"
is "$(find "$T" -name '*.tmp' -type f | wc -l)" 0 "no temporary file is left"

# the attacker opens its directory to everyone: vsd stops writing there
attacker chmod 0777 "$T"
check "then vsd refuses the directory and says why" wait_until \
	grep -q "metrics: cannot write $T/vsd.prom: directory $T is world-writable without the sticky bit" \
	"$VSD_TMP/vsd.log"
ino1=$(stat -c %i "$T/vsd.prom")
sleep 1.5
is "$(stat -c %i "$T/vsd.prom")" "$ino1" "and writes nothing more in it"
is "$(secret)" "$want" "the root-only file is still unchanged"
vsd_stop

# --- refused at start, before anything is made: vsd(8) --metrics-file
bad() {	# bad NAME WANT-REGEX DIR
	local name=$1 want=$2 out st
	# (timeout and our own cgroup root: a vsd that accepts the directory
	# runs on, and the cleanup removes what it made)
	out=$(timeout 20 "$VSD" --foreground --socket "$M/bad.sock" --state-dir "$M/bad" \
		--cgroup-root "$VSD_ROOT" --metrics-file "$3/vsd.prom" 2>&1); st=$?
	if [ $st != 0 ] && printf '%s' "$out" | grep -Eq -- "$want" && [ ! -e "$M/bad.sock" ] &&
		[ ! -e "$3/vsd.prom" ]; then
		ok "$name (exit $st)"
	else
		fail "$name"
		diag "status $st: $out"
	fi
}
mkdir -m 0777 "$M/ww"
chmod 0777 "$M/ww"	# whatever the umask
bad "a world-writable directory without the sticky bit is refused" \
	"directory $M/ww is world-writable without the sticky bit" "$M/ww"
mkdir "$M/real"
ln -s "$M/real" "$M/link"
bad "a directory reached through a link is refused" "directory $M/link is a symbolic link" "$M/link"

# the state directory's files are written the same way: a link is refused
mkdir -m 0700 "$M/state.real"
ln -s "$M/state.real" "$M/state.link"
out=$(timeout 20 "$VSD" --foreground --socket "$M/bad.sock" --state-dir "$M/state.link" \
	--cgroup-root "$VSD_ROOT" 2>&1); st=$?
if [ $st != 0 ] && [[ $out == *"--state-dir $M/state.link is a symbolic link"* ]] &&
	[ ! -e "$M/bad.sock" ] && [ -z "$(ls -A "$M/state.real")" ]; then
	ok "a state directory given as a link is refused, and nothing written in it (exit $st)"
else
	fail "a state directory given as a link is refused"
	diag "status $st: $out"
fi

# a sticky world-writable directory (as /tmp) is fine: only an entry's
# owner may rename or remove it there
mkdir "$M/sticky"
chmod 1777 "$M/sticky"
attacker ln -s "$M/root/secret" "$M/sticky/.vsd.prom.tmp"
vsd_start --metrics-file "$M/sticky/vsd.prom" || fail "vsd starts with a sticky directory"
check "a sticky world-writable directory is accepted" test -f "$M/sticky/vsd.prom"
is "$(secret)" "$want" "and the root-only file is unchanged there too"
vsd_stop
done_testing
