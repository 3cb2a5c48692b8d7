#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl top in batch mode (-b -n 2), parsed: every VS has its row, a CPU hog
# held by --cpu-max shows up first with its CPU % under the cap and its
# throttled time, an idle VS near 0; a gated service shows the CPU it spent
# for the VS whose requests it served (the gate charges each thread's own
# CPU time to the VS it sat in: gates/accept/charge.c). Bad options exit 2.
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
VSCTL=$top_builddir/vsctl/vsctl
plan 17

vsd_start || { nok "start vsd"; exit 1; }
for v in "idle 5%" "home 10%" "www1 30%"; do
	set -- $v
	"$VSCTL" create "$1" --cpu "$2" > /dev/null || { nok "create VS $1"; exit 1; }
done
"$VSCTL" create hog --cpu 5% --cpu-max 10% > /dev/null || { nok "create VS hog"; exit 1; }
"$VSCTL" exec hog -- sh -c 'while :; do :; done' &
HOG=$!
GATE_PIDS="$GATE_PIDS $HOG"

# a gated service at home; 20 requests from www1, each burning 20 ms in it
run_start svc --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 20 -r "spin 20" > "$W/client" 2>&1
check "the client's 20 requests were answered" grep -q "^ok 20 bad 0" "$W/client"
sleep 1

# the kernel's counter just before and just after top (read now, parsed
# after: python's start-up would widen the window around top)
ta=$(date +%s%N)
j0=$("$VSCTL" show hog --json)
"$VSCTL" top -b -n 2 -d 1 > "$W/top" 2> "$W/top.err"
check "top -b -n 2 exits 0" [ $? = 0 ]
j1=$("$VSCTL" show hog --json)
tb=$(date +%s%N)
thr() { printf '%s' "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"]["cpu_throttled_usec"])'; }
thr0=$(thr "$j0")
thr1=$(thr "$j1")
sed 's/^/#   /' "$W/top"
# parse: the last screen's VS rows and service rows
python3 - "$W/top" > "$W/parsed" <<'PY' || nok "parse top's output"
import re, sys
screens = open(sys.argv[1]).read().split("vsctl top - ")[1:]
print("screens", len(screens))
last = screens[-1].splitlines()
vs, svc, part = {}, {}, None
for l in last:
    if l.startswith("VS "):
        part = "vs"; continue
    if l.startswith("SERVICE "):
        part = "svc"; continue
    f = l.split()
    if not f:
        continue
    if part == "vs" and len(f) == 11:
        vs[f[0]] = f
    elif part == "svc" and len(f) == 9:
        svc[(f[0], f[1])] = f
order = [l.split()[0] for l in last if l.split() and l.split()[0] in vs]
print("rows", " ".join(sorted(vs)))
print("first", order[0] if order else "-")
print("hog_cpu", vs["hog"][1] if "hog" in vs else -1)
print("hog_throttled", vs["hog"][8].rstrip("s") if "hog" in vs else -1)
# the hog's throttled time over both screens
tot = 0.0
for sc in screens:
    for l in sc.splitlines():
        f = l.split()
        if len(f) == 11 and f[0] == "hog":
            tot += float(f[8].rstrip("s"))
print("hog_throttled_sum", round(tot, 2))
# the hog's highest CPU % over both screens: under TCG (the VM tier) a capped
# cgroup may stay throttled through a whole interval (0% there)
print("hog_cpu_max", max([float(l.split()[1]) for sc in screens for l in sc.splitlines()
                          if len(l.split()) == 11 and l.split()[0] == "hog"] or [-1]))
print("idle_cpu", vs["idle"][1] if "idle" in vs else -1)
print("status", " ".join(sorted(set(v[10] for v in vs.values()))))
print("www1_served", svc[("svc", "www1")][2] if ("svc", "www1") in svc else -1)
print("www1_cpu_s", svc[("svc", "www1")][5] if ("svc", "www1") in svc else -1)
print("home_cpu_s", svc[("svc", "home")][5] if ("svc", "home") in svc else 0)
print("www1_db_cpu_s", svc[("svc", "www1")][7] if ("svc", "www1") in svc else -1)
PY
get() { awk -v k="$1" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$W/parsed"; }
check "two screens" [ "$(get screens)" = 2 ]
check "a row for each VS" [ "$(get rows)" = "hog home idle www1" ]
check "every VS is ok" [ "$(get status)" = ok ]
check "sorted by CPU: the hog first" [ "$(get first)" = hog ]
hc=$(get hog_cpu_max)
diag "hog: $(get hog_cpu)% of the machine in the last screen, $hc% at most (cap 10%), throttled $(get hog_throttled) s in 1 s"
check "the hog uses CPU (> 2% of the machine in a screen)" python3 -c "import sys; sys.exit(not $hc > 2)"
check "and no more than its cap (10%, +2 points for sampling)" python3 -c "import sys; sys.exit(not $hc <= 12)"
# what top showed is what the kernel counted meanwhile: no more than the
# counter's rise d around the top run, and all of it but what rose outside
# top's two intervals. Those take at least 2 s (-d 1, two screens) of the
# wall time from before thr0 to after thr1, so at most that time less 2 s
# lies outside them, and the counter (the throttled time of each CPU's
# run queue, summed) rises at most by the number of CPUs each second of
# it. The bound comes from this run's own clock: under TCG (the VM tier),
# where vsctl itself takes seconds, it widens as the run does. The hog,
# capped at 10%, is throttled in every period it runs: top shows some
# (0.01: top prints each screen's time to 0.01 s, rounded)
ts=$(get hog_throttled_sum)
ncpu=$(getconf _NPROCESSORS_ONLN)
diag "throttled: top shows $ts s over two screens; the kernel's counter rose $(( (thr1 - thr0) / 1000 )) ms meanwhile, in $(( (tb - ta) / 1000000 )) ms of wall time: at most $(( ncpu * ((tb - ta) / 1000000 - 2000) )) ms of it outside top's intervals ($ncpu CPUs)"
check "top's throttled time agrees with the kernel's counter" python3 -c "
import sys; t, d, out = $ts, ($thr1 - $thr0) / 1e6, ($tb - $ta) / 1e9 - 2
sys.exit(not (0 < t <= d + 0.01 and t >= d - $ncpu * out - 0.01))"
check "the idle VS is near 0% (< 2)" python3 -c "import sys; sys.exit(not $(get idle_cpu) < 2)"
check "the service's row for www1: 20 served" [ "$(get www1_served)" = 20 ]
wc=$(get www1_cpu_s)
diag "service CPU charged to www1: $wc s (20 x 20 ms spun), to home: $(get home_cpu_s) s"
check "the service's CPU charged to www1 (>= 0.3 s of 0.4 s spun)" \
	python3 -c "import sys; sys.exit(not $wc >= 0.3)"
check "a service not in database mode: www1's DB-CPU-s is 0.00" [ "$(get www1_db_cpu_s)" = 0.00 ]
check "services --json has it too (cpu_usec)" python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output([sys.argv[1], "services", "--json"]))
v = [v for s in d if s["name"] == "svc" for v in s["vs"] if v["name"] == "www1"]
sys.exit(not (v and v[0]["cpu_usec"] >= 300000))' "$VSCTL"

"$VSCTL" top -b -n 1 -d 1 -s name > "$W/byname"
check "-s name: rows in name order" [ "$(awk '/^VS /{p=1; next} p && NF == 11 {print $1}' "$W/byname" | tr '\n' ' ')" = "hog home idle www1 " ]
bad=0
for o in "-s foo" "-d 0" "-n 0" "-x" "-d"; do
	# shellcheck disable=SC2086
	"$VSCTL" top -b $o > /dev/null 2> "$W/bad"
	st=$?
	[ $st = 2 ] && grep -q "^vsctl: top: " "$W/bad" || { bad=1; diag "top $o: status $st: $(cat "$W/bad")"; }
done
check "bad options: status 2 and a message" [ $bad = 0 ]
kill "$HOG" 2>/dev/null
"$VSCTL" destroy hog --force > /dev/null
"$VSCTL" top -b -n 1 -d 1 > "$W/after"
check "a destroyed VS leaves the view" sh -c "! grep -q '^hog ' '$W/after'"
