#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prometheus metrics (vsd --metrics-file, vsctl metrics), parsed by a real
# parser (Debian's python3-prometheus-client, text_string_to_metric_families)
# and checked against a known load: the limits as set, a process that burns
# 1.0 s of CPU, one that holds 64 MiB, refused forks, and a gated service
# burning 10 x 20 ms for www1. The file is replaced whole (a rename: a new
# inode each time), readable by node_exporter's user (0644), and bad
# options stop vsd before it makes anything.
. "$(dirname "$0")/lib.sh"
need_root
PY=/usr/bin/python3	# Debian's, with python3-prometheus-client (scripts/deps.sh --test)
"$PY" -c 'import prometheus_client' 2>/dev/null ||
	skip_all "python3-prometheus-client is missing (scripts/deps.sh --test installs it)"
MEMHOG=$top_builddir/tests/memhog
SERVER=$top_builddir/tests/gate-server
CLIENT=$top_builddir/tests/gate-client
[ -x "$MEMHOG" ] && [ -x "$SERVER" ] || skip_all "tests/memhog or tests/gate-server is not built"
M=$(mktemp -d /tmp/vsd-metrics.XXXXXX)
on_exit "rm -rf $M"

# --- bad options: a clear error, nothing made
bad() {	# bad NAME WANT-STATUS WANT-REGEX VSD-ARGS...: vsd(8) EXIT STATUS
	local name=$1 want_st=$2 want=$3 out st
	shift 3
	out=$("$VSD" --foreground --socket "$M/bad.sock" --state-dir "$M/bad" \
		--cgroup-root "vsd-tm$$" "$@" 2>&1); st=$?
	if [ $st = "$want_st" ] && printf '%s' "$out" | grep -Eq -- "$want" && [ ! -e "$M/bad.sock" ]; then
		ok "$name (exit $st)"
	else
		fail "$name"
		diag "status $st: $out"
	fi
}
bad "a relative --metrics-file is refused" 7 "must be an absolute path" --metrics-file vsd.prom
bad "a file not ending in .prom is refused" 7 "ending in .prom" --metrics-file "$M/vsd.txt"
bad "a missing directory is refused" 5 "directory $M/nope" --metrics-file "$M/nope/vsd.prom"
bad "--metrics-interval 0 is refused" 7 "1 to 3600" --metrics-file "$M/vsd.prom" --metrics-interval 0
bad "--metrics-interval alone is refused" 2 "needs --metrics-file" --metrics-interval 5
check "and no cgroup of that instance was made" sh -c "! ls -d /sys/fs/cgroup/*/vsd-tm$$ /sys/fs/cgroup/vsd-tm$$ 2>/dev/null | grep -q ."

PROM=$M/vsd.prom
vsd_start --metrics-file "$PROM" --metrics-interval 1 || { fail "vsd starts"; done_testing; }
check "the file is there once vsd runs" test -s "$PROM"
is "$(stat -c %a "$PROM")" 644 "mode 0644: node_exporter's user reads it"

check "create load" vsctl create load --cpu 25% --cpu-max 50% --mem 256M --pids 100
check "create home, www1, burn" sh -c "$VSCTL create home --cpu 10% && $VSCTL create www1 --cpu 20% && $VSCTL create burn --cpu 5%"

# the known load: alone in burn, 1.0 s of CPU burnt after Python's start,
# and the process's whole CPU time at its end (its clock counts from before
# vsctl moved it: an upper bound); in load 64 MiB held and forks refused
# past --pids 100 (forks cost seconds of CPU under TCG, the VM tier)
vsctl exec burn -- "$PY" -c '
import time
t0 = time.process_time()
while time.process_time() - t0 < 1.0:
    pass
print(time.process_time())' > "$M/burn.txt"
"$VSCTL" exec load -- "$MEMHOG" 64 300 > "$M/hog.out" &
HOGPID=$!
on_exit "kill $HOGPID"
wait_until grep -q held "$M/hog.out"
vsctl exec load -- sh -c 'for i in $(seq 120); do sleep 2 & done 2>/dev/null; wait' >/dev/null 2>&1

# a gated service, 10 requests from www1 burning 20 ms each in it
"$VSCTL" run --name svc --home home -- "$SERVER" > "$M/svc.out" 2> "$M/svc.err" &
on_exit "kill $!"
wait_until grep -q "^port " "$M/svc.out"
PORT=$(awk '/^port /{print $2; exit}' "$M/svc.out")
vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 10 -r "spin 20" > "$M/client" 2>&1
check "the client's 10 requests were answered" grep -q "^ok 10 bad 0" "$M/client"

ino0=$(stat -c %i "$PROM")
# the file follows within the interval (1 s; vsd's samples are 0.5 s old at most)
fresh() { grep -q 'vsd_vs_memory_bytes{vs="load"} [0-9]\{8\}' "$PROM" &&
	grep -q 'vsd_service_served_total{service="svc",vs="www1"} 10$' "$PROM"; }
# (up to 60 s: under qemu's TCG the load itself is slow to show)
wait_long() { for _i in $(seq 240); do "$@" && return 0; sleep 0.25; done; return 1; }
wait_long fresh && ok "the file shows the load within the interval" ||
	fail "the file shows the load within the interval"
# the next write replaces the file by a rename: a new inode (under a slow VM
# the write that shows the load may have come before ino0 was read)
renamed() { [ "$(stat -c %i "$PROM")" != "$ino0" ]; }
wait_long renamed && ok "replaced by rename (inode $ino0 -> $(stat -c %i "$PROM"))" ||
	fail "replaced by rename"
cp "$PROM" "$M/snap.prom"
check "no temporary file left" sh -c "! ls -A '$M' | grep -q '\.tmp'"

# the service's own CPU time so far (gate-server: one thread)
SPID=$(vsctl services --json | json '[s["pid"] for s in d if s["name"] == "svc"][0]')
cut -d' ' -f1 "/proc/$SPID/schedstat" > "$M/svc_cpu.txt"
"$PY" - "$M/snap.prom" "$M/svc_cpu.txt" "$M/burn.txt" > "$M/check" 2>&1 <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fams = {f.name: f for f in text_string_to_metric_families(text)}
def val(name, **labels):
    for f in fams.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None
res = []
def want(what, ok):
    res.append(("ok" if ok else "FAIL") + " " + what)
# every family has HELP and TYPE; counters' samples end in _total
helps = [l.split()[2] for l in text.splitlines() if l.startswith("# HELP ")]
types = {l.split()[2]: l.split()[3] for l in text.splitlines() if l.startswith("# TYPE ")}
want("HELP and TYPE for every family (%d)" % len(helps), set(helps) == set(types) and len(helps) >= 18)
want("counters named *_total", all(n.endswith("_total") for n, t in types.items() if t == "counter"))
want("families parsed: %d" % len(fams), len(fams) == len(types))
want("share 25%% -> 0.25 (%s)" % val("vsd_vs_cpu_share_ratio", vs="load"), val("vsd_vs_cpu_share_ratio", vs="load") == 0.25)
want("cap 50% -> 0.5", val("vsd_vs_cpu_cap_ratio", vs="load") == 0.5)
want("no cap on www1: no sample", val("vsd_vs_cpu_cap_ratio", vs="www1") is None)
want("memory limit 256M in bytes", val("vsd_vs_memory_limit_bytes", vs="load") == 268435456)
want("pids limit 100", val("vsd_vs_pids_limit", vs="load") == 100)
c = val("vsd_vs_cpu_seconds_total", vs="burn")
burnt = float(open(sys.argv[3]).read())
# the burner's own count stops at its last print; what the interpreter
# burns after it (0.7 s under TCG) is the VS's too
want("CPU seconds >= 1.0 burnt, <= the burner's %.3f s + max(0.1, 20%%) (%s)" % (burnt, c),
     c is not None and 1.0 <= c <= burnt + max(0.1, 0.2 * burnt))
m = val("vsd_vs_memory_bytes", vs="load")
want("memory >= 64 MiB held, < 256 MiB (%s)" % m, m is not None and 64 << 20 <= m < 256 << 20)
t = val("vsd_vs_tasks", vs="load")
want("tasks: the holder (%s)" % t, t is not None and t >= 1)
p = val("vsd_vs_pids_max_events_total", vs="load")
want("refused forks counted (%s)" % p, p is not None and p >= 1)
want("up", val("vsd_vs_up", vs="load") == 1)
want("4 VSs", val("vsd_vss") == 4)
want("www1 served 10 by svc", val("vsd_service_served_total", service="svc", vs="www1") == 10)
s = val("vsd_service_cpu_seconds_total", service="svc", vs="www1")
# the rest of each request (the answer, /proc reads) is CPU for www1 too:
# no upper bound but the service's own CPU time (svc_cpu.txt, schedstat)
total = float(open(sys.argv[2]).read()) / 1e9
want("svc's CPU for www1 >= 0.15 s of 0.2 s spun, <= the service's %.3f s (%s)" % (total, s),
     s is not None and 0.15 <= s <= total + 0.01)
h = val("vsd_service_cpu_seconds_total", service="svc", vs="home") or 0
want("little of it charged home (%s)" % h, h < 0.1)
want("queued 0", val("vsd_service_queued", service="svc", vs="www1") == 0)
print("\n".join(res))
PY
while read -r st what; do
	[ "$st" = ok ] && ok "parser: $what" || { fail "parser: $st $what"; }
done < "$M/check"

# vsctl metrics answers the same families on request
n1=$(grep -c '^# TYPE' "$M/snap.prom"); n2=$(vsctl metrics | grep -c '^# TYPE')
is "$n2" "$n1" "vsctl metrics: the same families as the file"
kill "$HOGPID" 2>/dev/null
done_testing
