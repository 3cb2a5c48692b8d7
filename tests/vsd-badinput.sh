#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every bad input gets a clear one-line error, a non-zero exit, and leaves
# the state exactly as it was (state file and the kernel's cgroup files).
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
check "create www1 at 60%" vsctl create www1 --cpu 60% --mem 64M
check "create www2 at 30%" vsctl create www2 --cpu 30%

snapshot() {
	cat "$VSD_STATE/state"
	vsctl list --json | json '[(v["name"], v["cpu"], v["cpu_max"], v["mem_max"], v["pids_max"]) for v in d]'
	for d in $(vsctl list --json | json '" ".join(sum([v["cgroups"] for v in d], []))'); do
		cat "$d"/cpu.shares "$d"/cpu.weight "$d"/memory.limit_in_bytes "$d"/memory.max 2>/dev/null
	done
	find $(cg_root_dirs "$VSD_ROOT") -maxdepth 1 -type d | sort
}
before=$(snapshot)

# expect PATTERN ARGS...: vsctl ARGS must fail with one line matching PATTERN.
expect() {
	local pat=$1 out rc lines
	shift
	out=$(vsctl "$@" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$out" | wc -l)
	if [ $rc -ne 0 ] && [ "$lines" -eq 1 ] && printf '%s' "$out" | grep -Eq -- "$pat"; then
		ok "refused: vsctl $*"
	else
		fail "refused: vsctl $* (rc $rc)"
		diag "got: $out" "want: /$pat/"
	fi
}

expect "bad VS name 'Www': it must start with a lower-case letter" create Www --cpu 1%
expect "bad VS name '1a'" create 1a --cpu 1%
expect "bad VS name 'a/b'" create a/b --cpu 1%
expect "bad VS name '\.\./x'" create ../x --cpu 1%
expect "bad VS name '\.daemon'" create .daemon --cpu 1%
expect "longer than 31" create abcdefghijklmnopqrstuvwxyz0123456 --cpu 1%
expect "create: no VS name given" create --cpu 1%
expect "--cpu is required" create www3
expect "--cpu 0% must be more than 0%" create www3 --cpu 0%
expect "--cpu 150% is over 100%" create www3 --cpu 150%
expect "--cpu abc is not a percentage" create www3 --cpu abc
expect "--cpu 1.234% has more than two decimals" create www3 --cpu 1.234%
expect "share 20% is more than is left: 10% of 100% is unallocated" create www3 --cpu 20%
expect "VS 'www1' exists already" create www1 --cpu 1%
expect "--cpu-max 5% is below the guaranteed --cpu 10%" create www3 --cpu 10% --cpu-max 5%
expect "--mem 12Q is not a size" create www3 --cpu 1% --mem 12Q
expect "--mem 0 must be more than 0" create www3 --cpu 1% --mem 0
expect "--mem 100 is below one page" create www3 --cpu 1% --mem 100
expect "--pids 0 is out of range" create www3 --cpu 1% --pids 0
expect "--pids x is not a whole number" create www3 --cpu 1% --pids x
expect "unknown option '--cpus'" create www3 --cpus 1%
expect "unknown option '--c'" create www3 --c 1%
expect "option --cpu needs a value" create www3 --cpu
expect "option --force takes no value" destroy www1 --force=yes
expect "set: share 80% is more than www1 can have: 70% \\(other VSs hold 30%\\)" set www1 --cpu 80%
expect "set: nothing to change" set www1
expect "set: no VS named 'nope'" set nope --cpu 1%
expect "destroy: no VS named 'nope'" destroy nope
expect "show: no VS named 'nope'" show nope
expect "attach: no process 4194000" attach www1 4194000
expect "attach: pid '999999999' is out of range" attach www1 999999999
expect "attach: pid 'abc' is not a whole number" attach www1 abc
expect "attach: no pid given" attach www1
expect "unknown command 'frobnicate'" frobnicate
# processes vsd never moves into a VS (vsd would kill them with destroy --force)
# Where this test fails (vsd moves init), init goes back where it was at once.
init_cgroups=$(cat /proc/1/cgroup)
init_moved=0
restore_init() {
	grep -q "/$VSD_ROOT/" /proc/1/cgroup || return 0
	diag "init was moved into a VS of ours; putting it back"
	init_moved=1
	printf '%s\n' "$init_cgroups" | while IFS=: read -r _ ctl path; do
		case $ctl in
		"") mnt=/sys/fs/cgroup; [ "$(cg_layout)" = unified ] || mnt=/sys/fs/cgroup/unified ;;
		name=*) continue ;;
		*) mnt=/sys/fs/cgroup/${ctl%%,*} ;;
		esac
		grep -q ":$ctl:.*/$VSD_ROOT/" /proc/1/cgroup && echo 1 > "$mnt$path/cgroup.procs"
	done
}
on_exit restore_init
expect "attach: pid 1 is init; vsd leaves it where it is" attach www1 1
restore_init
expect "attach: pid $VSD_PID is vsd itself" attach www1 "$VSD_PID"
kthread=$(awk '$1 == "PPid:" && $2 == 2 {print FILENAME; exit}' /proc/[0-9]*/status 2>/dev/null |
	cut -d/ -f3)
expect "attach: pid ${kthread:-2} is a kernel thread" attach www1 "${kthread:-2}"
python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)' &
threaded=$!
on_exit "kill $threaded"
tid=
for _ in $(seq 100); do
	tid=$(ls "/proc/$threaded/task" 2>/dev/null | grep -vx "$threaded" | head -1)
	[ -n "$tid" ] && break
	sleep 0.05
done
expect "attach: $tid is a thread of process $threaded, not a process" attach www1 "$tid"
sleep 60 &
mine=$!
on_exit "kill $mine"
expect "attach: pid 1 is init" attach www1 "$mine" 1
restore_init
in_vs "$mine" www1 && fail "a refused attach moves none of its processes" ||
	ok "a refused attach moves none of its processes"
is "$init_moved" 0 "init was never moved into a VS"

after=$(snapshot)
if [ "$before" = "$after" ]; then
	ok "state, limits and cgroups unchanged by all of the above"
else
	fail "state unchanged"
	diff <(echo "$before") <(echo "$after") | sed 's/^/#   /'
fi

# JSON mode: errors are a JSON object with "error", on stdout.
out=$(vsctl --json create www1 --cpu 1% 2>/dev/null)
is "$(echo "$out" | json 'd["error"]')" "create: VS 'www1' exists already" "--json error object"
out=$(vsctl show nope --json 2>/dev/null)
is "$(echo "$out" | json 'list(d)')" '["error", "class", "exit"]' "--json error for an unknown VS"
is "$(echo "$out" | json '[d["class"], d["exit"]]')" '["not-found", 5]' "its class: not found"
out=$(vsctl create www3 --cpu 1% --bogus --json 2>/dev/null)
is "$(echo "$out" | json 'd["error"]')" "create: unknown option '--bogus'" "--json error from vsctl itself"
check "destroy www1" vsctl destroy www1
check "destroy www2" vsctl destroy www2

# --socket naming something that is not a socket: vsd refuses to start and
# the file stays (it used to be unlinked as a "stale socket").
vsd_stop
for kind in file link; do
	victim=$VSD_TMP/precious
	echo "keep me" > "$victim"
	path=$victim
	[ $kind = link ] && { path=$VSD_TMP/link; ln -sf "$victim" "$path"; }
	# a vsd that wrongly starts serves until timeout stops it (status 124)
	out=$(timeout 5 "$VSD" --foreground --socket "$path" --state-dir "$VSD_STATE" \
		--cgroup-root "$VSD_ROOT" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && ok "vsd --socket (a $kind) refuses to start" ||
		{ fail "vsd --socket (a $kind) refuses to start (status $rc)"; diag "$out"; }
	like "$out" "$path exists and is not a socket; not removing it" "and says why"
	is "$(cat "$victim" 2>&1)" "keep me" "what the $kind names is left as it was"
	[ $kind = file ] || { [ -L "$path" ] && ok "the link stays" || fail "the link stays"; }
done
done_testing
