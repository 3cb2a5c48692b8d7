#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stopping vsd (SIGTERM, or SIGKILL) leaves the VSs and their processes
# alone; a restarted vsd adopts them; a cgroup removed behind vsd's back is
# reported, not recreated; one vsd per state directory and per socket.
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
check "create keep" vsctl create keep --cpu 30% --mem 512M
check "create gone" vsctl create gone --cpu 20%
sleep 300 &
p=$!
on_exit "kill $p"
check "attach a process to keep" vsctl attach keep $p
keepdirs=$(vsctl show keep --json | json '" ".join(d["cgroups"])')
gonedirs=$(vsctl show gone --json | json '" ".join(d["cgroups"])')

# A second daemon on the same state directory refuses to start.
out=$("$VSD" --foreground --socket "$VSD_TMP/other.sock" --state-dir "$VSD_STATE" \
	--cgroup-root "$VSD_ROOT" 2>&1)
rc=$?
[ $rc -ne 0 ] && ok "a second vsd on the same state dir exits non-zero" || fail "second vsd refused ($rc)"
like "$out" "another vsd is running with state directory" "and says why"
out=$("$VSD" --foreground --socket "$VSD_SOCKET" --state-dir "$VSD_TMP/state2" \
	--cgroup-root "${VSD_ROOT}b" 2>&1)
[ $? -ne 0 ] && ok "a second vsd on the same socket is refused" || fail "second vsd on same socket"
like "$out" "another vsd is listening" "and says why"
rm -rf "$VSD_TMP/state2"
check "the first vsd still answers" vsctl list

vsd_stop TERM
check "after SIGTERM the process is alive" kill -0 $p
check "and still in its VS" in_vs $p keep
n=0
for d in $keepdirs $gonedirs; do [ -d "$d" ] && n=$((n + 1)); done
is "$n" "$(echo $keepdirs $gonedirs | wc -w)" "every VS cgroup is still there"

# Remove gone's cgroups while vsd is away.
for d in $gonedirs; do rmdir "$d"; done
vsd_start || fail "vsd restarts"
is "$(vsctl show keep --json | json 'd["status"], d["mem_max"], d["procs"]')" "('ok', 536870912, [$p])" \
	"restarted vsd adopts keep with its limit and process"
is "$(vsctl show gone --json | json 'd["status"]')" missing "a vanished VS is reported missing"
like "$(vsctl list)" "gone .* missing" "list shows it as missing"
grep -q "VS gone: its cgroup disappeared" "$VSD_TMP/vsd.log" && ok "and vsd logs it" || fail "vsd logs the missing VS"
n=0
for d in $gonedirs; do [ -d "$d" ] && n=$((n + 1)); done
is "$n" 0 "the missing VS is not silently recreated"
vsctl set gone --cpu 10% 2>/dev/null
is "$?" 5 "set on a missing VS is refused (not found)"
check "destroy forgets the missing VS" vsctl destroy gone
is "$(vsctl list --json | json '[v["name"] for v in d]')" '["keep"]' "only keep remains"

# A cgroup removed while vsd runs: with several hierarchies, one directory
# can go while a process stays in the others. vsd reports the VS missing at
# the next look, and destroy still refuses to kill that process without
# --force (it once skipped the check for a missing VS). With one (pure v2),
# an empty VS's directory goes, and vsd reports it missing while it runs.
# half_is_missing: what a VS whose directory went while vsd runs looks like
half_is_missing() {
	is "$(vsctl list --json | json '[v["status"] for v in d if v["name"] == "half"]')" '["missing"]' \
		"list reports half missing while vsd runs"
	like "$(vsctl show half)" "half .* missing" "show too"
	grep -q "VS half: a cgroup of it disappeared" "$VSD_TMP/vsd.log" && ok "and vsd logs it" ||
		fail "vsd logs the VS that went missing"
}
check "create half" vsctl create half --cpu 5% --pids 50
halfdirs=$(vsctl show half --json | json '" ".join(d["cgroups"])')
if [ "$(echo $halfdirs | wc -w)" -gt 1 ]; then
	sleep 300 &
	p2=$!
	on_exit "kill $p2"
	check "attach a process to half" vsctl attach half $p2
	last=${halfdirs##* }
	# out of the last hierarchy's VS directory, into vsd's own (its parent)
	echo $p2 >"$(dirname "$last")/cgroup.procs" && rmdir "$last"
	check "one of half's directories is gone" test ! -d "$last"
	half_is_missing
	# as a restarted vsd finds it, too
	vsd_stop TERM
	vsd_start || fail "vsd restarts"
	vsctl destroy half 2>/dev/null
	is "$?" 6 "destroy of the missing VS with a process is refused without --force"
	check "and the process lives" kill -0 $p2
	check "destroy half --force" vsctl destroy half --force
	# a zombie until this shell reaps it: gone or Z is killed
	wait_until sh -c "! grep -q '^State:.*[RSD]' /proc/$p2/status 2>/dev/null" &&
		ok "--force killed it" || fail "--force killed it"
else
	# one hierarchy (pure cgroup v2): no directory can go while a process
	# stays in it; an empty VS's can, and vsd must see that while it runs
	find "$halfdirs" -depth -type d -exec rmdir {} \;
	check "half's directory is gone" test ! -d "$halfdirs"
	half_is_missing
	vsctl set half --cpu 10% 2>/dev/null
	is "$?" 5 "set on the missing VS is refused (not found)"
	check "destroy forgets half" vsctl destroy half
fi

# A killed daemon loses nothing either.
vsd_stop KILL
check "after SIGKILL the process is alive" kill -0 $p
vsd_start || fail "vsd restarts after SIGKILL"
is "$(vsctl show keep --json | json 'd["procs"]')" "[$p]" "adopted again after SIGKILL"
# keep 1, gone 2, half 3: third is 4
check "new VSs get fresh ids after restart" sh -c "$VSCTL create third --cpu 5% && $VSCTL show third --json | grep -q '\"id\": 4'"
check "destroy keep --force" vsctl destroy keep --force
check "destroy third" vsctl destroy third
done_testing
