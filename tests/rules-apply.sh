#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rule files on a real vsd: vsctl check offline, apply as one transaction
# (create, in-place update with processes kept, --prune, a failure in the
# middle undone), vsd --rules at start, reload and SIGHUP with a bad file.
. "$(dirname "$0")/lib.sh"
need_root

# Rule files live in a world-readable directory so the check can run as nobody.
R=$(mktemp -d /tmp/vsd-rules-apply.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
w() { cat >"$R/$1"; chmod 0644 "$R/$1"; }

# The VSs of this test with their limits, as one line each, for comparisons.
snapshot() {
	vsctl list --json | json '"; ".join("%s %s %s %s %s" % (v["name"], v["cpu"], v["cpu_max"], v["mem_max"], v["pids_max"]) for v in sorted(d, key=lambda v: v["name"]))'
}

# --- check: offline, no daemon, no root -----------------------------------
w site.rules <<'E'
plan bronze cpu 5% cpu-max 20% mem 64M pids 50
vs web[1..3] plan bronze
vs app cpu 10% mem 128M
(accept, app, req = web*) => (requester)
E
out=$(VSD_SOCKET=/nonexistent setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$VSCTL" check "$R/site.rules" 2>&1)
like "$out" "OK: 4 VSs \(25% guaranteed\)" "vsctl check runs as nobody with no daemon"
w bad.rules <<'E'
vs web1 cpu 50%
vs web2 cpu 60%
(acept, web1, req = web2) => (web2)
E
out=$(vsctl check "$R/bad.rules" 2>&1)
is "$?" 7 "vsctl check exits 7 (a bad value) on errors"
like "$out" "bad.rules:2:4: share sum 110% is over 100%" "check reports the share sum"
like "$out" "bad.rules:3:2: unknown gate 'acept'" "and the unknown gate, in the same pass"

vsd_start --group nogroup || { fail "vsd starts"; done_testing; }
chmod 0711 "$VSD_TMP"	# nobody (group nogroup) may reach the socket

# --- apply: creation ----------------------------------------------------------
check "apply creates the VSs" vsctl apply "$R/site.rules"
is "$(snapshot)" "app 10 None 134217728 None; web1 5 20 67108864 50; web2 5 20 67108864 50; web3 5 20 67108864 50" \
	"the VSs have the file's limits"
check "web2's cgroups exist" test -d "$(vs_cgroup web2 cpu)"
out=$(vsctl apply "$R/site.rules")
like "$out" "0 created, 0 updated, 0 destroyed, 4 unchanged" "applying again changes nothing"

# --- in-place update: processes stay ------------------------------------------
sleep 300 &
p=$!
on_exit "kill $p"
check "a sleeping process in web1" vsctl attach web1 $p
id1=$(vsctl show web1 --json | json 'd["id"]')
w site.rules <<'E'
plan bronze cpu 5% cpu-max 20% mem 64M pids 50
vs web[1..3] plan bronze
vs web1 cpu 8% cpu-max 40% mem 96M pids 80
vs app cpu 10% mem 128M
E
out=$(vsctl check "$R/site.rules" 2>&1)
like "$out" "duplicate VS 'web1'" "(a duplicate is refused by check)"
w site.rules <<'E'
plan bronze cpu 5% cpu-max 20% mem 64M pids 50
vs web[2..3] plan bronze
vs web1 cpu 8% cpu-max 40% mem 96M pids 80
vs app cpu 10% mem 128M
E
out=$(vsctl apply "$R/site.rules")
like "$out" "updated web1 cpu 5% -> 8%" "apply updates web1 in place"
is "$(vsctl show web1 --json | json 'd["cpu"], d["cpu_max"], d["mem_max"], d["pids_max"]')" \
	"(8, 40, 100663296, 80)" "web1 has its new limits"
check "the sleeping process is still in web1, in every hierarchy" in_vs $p web1
is "$(vsctl show web1 --json | json 'd["id"]')" "$id1" "web1 kept its id"
mem=$(cat "$(vs_cgroup web1 memory)/memory.limit_in_bytes" 2>/dev/null || cat "$(vs_cgroup web1 memory)/memory.max")
is "$mem" 100663296 "the kernel has web1's new memory limit"

# --- a file that does not check is refused whole --------------------------------
before=$(snapshot)
w broken.rules <<'E'
vs web1 cpu 9%
vs web2 cpu 5%
vs web3 cpu 5%
vs app cpu 10%
vs new1 cpu 1%
vs new2 cpu 101%
E
out=$(vsctl apply "$R/broken.rules" 2>&1)
is "$?" 7 "apply of a file with an error fails (7)"
like "$out" "broken.rules:6:13: cpu '101%' is over 100%" "and says why"
is "$(snapshot)" "$before" "nothing changed"

# --- group- or world-writable: check warns, apply refuses ------------------------
cp "$R/site.rules" "$R/gw.rules"
chmod 0664 "$R/gw.rules"
out=$(vsctl check "$R/gw.rules" 2>&1)
is "$?" 0 "check of a group-writable file passes (a clone made with umask 002)"
like "$out" "gw.rules: warning: group-writable \(mode 0664\): vsd refuses to apply" \
	"with a warning that apply would refuse it"
out=$(vsctl apply "$R/gw.rules" 2>&1)
is "$?" 7 "apply of a group-writable file fails (7: the file is refused)"
like "$out" "group-writable \(mode 0664\)" "a group-writable file is refused"
chmod 0646 "$R/gw.rules"
out=$(vsctl check "$R/gw.rules" 2>&1)
is "$?" 0 "check of a world-writable file passes, with a warning"
like "$out" "gw.rules: warning: world-writable \(mode 0646\): vsd refuses to apply" \
	"the warning says world-writable"
out=$(vsctl apply "$R/gw.rules" 2>&1)
is "$?" 7 "apply of a world-writable file fails (7)"
like "$out" "world-writable \(mode 0646\); only its owner may write" "apply refuses a world-writable file"
is "$(snapshot)" "$before" "nothing changed"

# --- a client other than root: vsd reads only the files it owns ---------------------
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$VSCTL" "$@"; }
out=$(asnobody apply "$R/site.rules" 2>&1)
like "$out" "owned by uid 0; vsd reads for uid 65534 only files uid 65534 owns" \
	"a non-root client cannot make vsd read root's file"
w mine.rules <<'E'
vs web1 cpu 8% cpu-max 40% mem 96M pids 80
vs web2 cpu 5%
vs web3 cpu 5%
vs app cpu 10% mem 128M
E
chown 65534 "$R/mine.rules"
# vsd reads it (the refusal comes after the parse), and refuses it only
# because root's rules are in force: a member replaces only its own
# (vsd-member-apply.sh)
out=$(asnobody apply --dry-run "$R/mine.rules" 2>&1)
like "$out" "mine\.rules: would drop the rules in force, uid 0's, from .*site\.rules:[0-9]+:[0-9]+ on: only root may replace them" \
	"but reads a file of its own, and may not replace root's rules with it"

# --- --prune ------------------------------------------------------------------------
check "create an extra VS by hand" vsctl create extra --cpu 1%
w small.rules <<'E'
vs web1 cpu 8% cpu-max 40% mem 96M pids 80
vs web2 cpu 5%
E
out=$(vsctl apply "$R/small.rules")
like "$out" "0 destroyed" "without --prune nothing is destroyed"
is "$(vsctl list --json | json 'len(d)')" 5 "all five VSs are still there"
out=$(vsctl apply --dry-run --prune "$R/small.rules")
like "$out" "would be: 0 created, 0 updated, 3 destroyed" "--dry-run --prune says what would go"
is "$(vsctl list --json | json 'len(d)')" 5 "--dry-run changed nothing"
check "put a process in extra" vsctl attach extra $p
out=$(vsctl apply --prune "$R/small.rules" 2>&1)
like "$out" "VS 'extra' is not in the file but has 1 process" "--prune refuses to remove a VS with processes"
is "$(vsctl list --json | json 'len(d)')" 5 "and nothing was destroyed"
check "move the process back to web1" vsctl attach web1 $p
out=$(vsctl apply --prune "$R/small.rules")
like "$out" "0 created, 0 updated, 3 destroyed, 2 unchanged" "--prune destroys the VSs not in the file"
is "$(vsctl list --json | json '" ".join(sorted(v["name"] for v in d))')" "web1 web2" "only web1 and web2 remain"
gone=0
for h in cpu memory pids; do d=$(dirname "$(vs_cgroup web1 $h)")/app; [ -e "$d" ] && gone=1; done
is "$gone" 0 "app's cgroups are gone"
check "the process stayed in web1" in_vs $p web1

# --- a failure in the middle changes nothing ------------------------------------------
# A real kernel refusal in the middle of an apply. On cgroup v1 a child's CFS
# quota may not exceed its parent's (EINVAL): cap vsd's root at one CPU (web1's
# 40% of two CPUs fits under it), then create a VS capped above, 90% of two
# CPUs. On pure v2, which has no such rule, vsd's root may hold one more
# cgroup (cgroup.max.descendants): ok1 is made, toobig's mkdir fails (EAGAIN).
if [ "$(cg_layout)" = unified ]; then
	base=$(dirname "$(vs_cgroup web1 unified)")
	n=$(find "$base" -mindepth 1 -type d | wc -l)
	check "let vsd's root cgroup hold one more cgroup" sh -c "echo $((n + 1)) > $base/cgroup.max.descendants"
	on_exit "echo max > $base/cgroup.max.descendants"
	refusal="Resource temporarily unavailable"
	# EAGAIN from the kernel's mkdir: internal (vsctl(8) EXIT STATUS 1)
	want_rc=1
	lift="echo max > $base/cgroup.max.descendants"
else
	root_cpu=$(dirname "$(vs_cgroup web1 cpu)")
	check "cap vsd's root cgroup at one CPU" sh -c "echo 100000 > $root_cpu/cpu.cfs_quota_us"
	on_exit "echo -1 > $root_cpu/cpu.cfs_quota_us"
	refusal="Invalid argument"
	# EINVAL for a cap over the parent's: a bad value (7)
	want_rc=7
	lift="echo -1 > $root_cpu/cpu.cfs_quota_us"
fi
before=$(snapshot)
state_before=$(md5sum <"$VSD_STATE/state")
w mid.rules <<'E'
vs web1 cpu 9% cpu-max 40% mem 96M pids 80
vs web2 cpu 5%
vs ok1 cpu 1%
vs toobig cpu 1% cpu-max 90%
vs ok2 cpu 1%
E
check "mid.rules checks" vsctl check "$R/mid.rules"
# undone FILE WHAT PATTERN VS...: applying FILE fails, its error matches
# PATTERN, and it changed nothing: the VSs, the state file, no cgroup of VS...
undone() {
	local f=$1 what=$2 pat=$3 out rc n d left=0
	shift 3
	out=$(vsctl apply "$R/$f" 2>&1)
	rc=$?
	is "$rc" "$want_rc" "apply fails when $what (exit $want_rc)"
	like "$out" "$pat" "and says why"
	is "$(snapshot)" "$before" "the VSs are as they were"
	is "$(md5sum <"$VSD_STATE/state")" "$state_before" "the state file is unchanged"
	for n in "$@"; do for d in $(vsh_dirs); do [ -e "$d/$n" ] && left=1; done; done
	is "$left" 0 "no cgroup of $* is left"
}
undone mid.rules "creating toobig fails" "create VS toobig failed: $refusal; nothing changed" \
	ok1 toobig ok2
check "the process is still in web1" in_vs $p web1
sh -c "$lift"
out=$(vsctl apply "$R/mid.rules")
like "$out" "3 created, 1 updated" "with the limit lifted the same file applies"

# The same with many VSs to make: their caps are written by a second thread
# (lib/cgroup-async.c), whose failure must undo the apply as well.
if [ "$(cg_layout)" = unified ]; then
	n=$(find "$base" -mindepth 1 -type d | wc -l)
	check "let vsd's root cgroup hold 40 more cgroups" sh -c "echo $((n + 40)) > $base/cgroup.max.descendants"
else
	# above toobig's cap (90% of the machine), below toobig2's (95%)
	check "cap vsd's root cgroup at 92.5% of the machine" \
		sh -c "echo $(($(getconf _NPROCESSORS_ONLN) * 92500)) > $root_cpu/cpu.cfs_quota_us"
fi
before=$(snapshot)
state_before=$(md5sum <"$VSD_STATE/state")
{ cat "$R/mid.rules"; echo "vs many[1..40] cpu 0.01% cpu-max 10%"
  echo "vs toobig2 cpu 0.01% cpu-max 95%"; echo "vs many[41..80] cpu 0.01% cpu-max 10%"; } | w many.rules
undone many.rules "one of 81 new VSs cannot be made or capped" "failed: $refusal.*; nothing changed" \
	toobig2 many1 many40 many41 many80
sh -c "$lift"
out=$(vsctl apply "$R/many.rules")
like "$out" "81 created, 0 updated" "with the limit lifted the same file applies"
for d in $(vsh_dirs); do [ -e "$d/many80/cpu.cfs_quota_us" ] && q=$(cat "$d/many80/cpu.cfs_quota_us"); done
[ "$(cg_layout)" = unified ] && q=$(cat "$base/many80/cpu.max")
like "$q" "^$(($(getconf _NPROCESSORS_ONLN) * 10000))( 100000)?\$" "the caps the second thread wrote are in place"
gone=0
for n in toobig2 many{1..80}; do vsctl destroy "$n" >/dev/null && gone=$((gone + 1)); done
is "$gone" 81 "the 81 are destroyed again"

# --- vsd --rules, reload, SIGHUP ----------------------------------------------------------
vsd_stop
w boot.rules <<'E'
vs web1 cpu 9% cpu-max 40% mem 96M pids 80
vs web2 cpu 6%
E
vsd_start --rules "$R/boot.rules" || fail "vsd --rules starts"
is "$(vsctl show web2 --json | json 'd["cpu"]')" 6 "vsd --rules applied the file at start"
before=$(snapshot)
w boot.rules <<'E'
vs web1 cpu 9% cpu-max 40% mem 96M pids 80
vs web2 cpu 7%
(accept, web1, req = web9) => (requester)
E
out=$(vsctl reload 2>&1)
is "$?" 7 "reload of a bad file fails (7)"
like "$out" "boot.rules:3:22: undeclared VS 'web9'" "and says why"
is "$(snapshot)" "$before" "reload with a bad file changed nothing"
kill -HUP "$VSD_PID"
sleep 0.3
check "vsd survives SIGHUP with a bad file" kill -0 "$VSD_PID"
is "$(snapshot)" "$before" "SIGHUP with a bad file changed nothing"
like "$(cat "$VSD_TMP/vsd.log")" "SIGHUP: rule file refused" "vsd logged the refusal"
sed -i '/web9/d' "$R/boot.rules"
kill -HUP "$VSD_PID"
for i in $(seq 50); do
	[ "$(vsctl show web2 --json | json 'd["cpu"]')" = 7 ] && break
	sleep 0.1
done
is "$(vsctl show web2 --json | json 'd["cpu"]')" 7 "SIGHUP with a good file applies it"
out=$(vsctl reload)
like "$out" "0 created, 0 updated, 0 destroyed, 2 unchanged" "vsctl reload re-reads the file"
vsd_stop
echo "vs web1 cpu 200%" >>"$R/boot.rules"
"$VSD" --foreground --socket "$VSD_TMP/other.sock" --state-dir "$VSD_STATE" \
	--cgroup-root "$VSD_ROOT" --rules "$R/boot.rules" >"$VSD_TMP/bad-start.log" 2>&1
is "$?" 7 "vsd --rules with a bad file refuses to start (7)"
like "$(cat "$VSD_TMP/bad-start.log")" "boot.rules:3:13: cpu '200%' is over 100%" "and prints the errors"

# leave no VS behind: the cleanup removes the cgroup root
done_testing
