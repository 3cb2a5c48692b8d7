# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by benchmarks/insulation, benchmarks/vhosts and tests/insulation-tiny.sh:
# virtual servers, Apache sites, FastCGI servers and the load generator.
# Everything started here is recorded and torn down by bench_cleanup.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
ADSERVER=${ADSERVER:-$top_builddir/fcgi-demo/adserver}
LOADGEN=${LOADGEN:-$top_builddir/benchmarks/loadgen}
SITE_CONF_IN=${SITE_CONF_IN:-$top_srcdir/benchmarks/site.conf.in}
APACHE=${APACHE:-$(command -v apache2 || echo /usr/sbin/apache2)}
APACHE_MODDIR=${APACHE_MODDIR:-/usr/lib/apache2/modules}
BENCH_MPM=${BENCH_MPM:-event}	# Apache's MPM: event or prefork
VSD=${VSD:-$top_builddir/vsd/vsd}
VSCTL=${VSCTL:-$top_builddir/vsctl/vsctl}
. "$top_srcdir/tests/vsd-harness.sh"	# starts and cleans up our vsd

BENCH_PIDS=()		# processes we started, stopped in reverse order
BENCH_CG=		# the cgroup root of our own vsd instance
BENCH_VSD_PID=
BENCH_VSS=()
BENCH_SPECS=()		# NAME:PERCENT of each VS, for the rule file of the gate mode
BENCH_RUN=		# scratch directory
BENCH_OUTSIDE_PIDS=	# processes outside every VS whose CPU we report

bench_die() { echo "${0##*/}: $*" >&2; exit 1; }
bench_log() { echo "${0##*/}: $*" >&2; }

# Our own cgroup, the parent of everything the benchmark measures, below the
# cgroup this shell runs in, in each of the hierarchies cpu, cpuacct, pids
# and unified (hybrid hosts only; on a pure-v2 host we run where we are):
#   vsd-bench-PID           cpu.shares $BENCH_SHARES; vsd itself runs here
#   vsd-bench-PID/vsd-bench-PID   our vsd's cgroup root, the VSs below it
#   vsd-bench-PID/outside   processes outside every VS (the shared FastCGI
#                           server in insulation-only mode), default weight
# The raised weight keeps other work on this shared machine from taking the
# sites' CPU mid-run (the load balancer moves it to the other CPU instead);
# it changes nothing between the VSs, which is what we compare. It counts
# against our siblings only, so it does that where we run in the root cgroup.
BENCH_SHARES=${BENCH_SHARES:-8192}
BENCH_HIERS=
declare -gA BENCH_CGDIR=()	# hierarchy -> our vsd-bench-PID directory in it
bench_hybrid() { [ -d /sys/fs/cgroup/cpu ] && [ -d /sys/fs/cgroup/unified ] &&
	[ ! -e /sys/fs/cgroup/cgroup.controllers ]; }

# bench_move SUB: move this shell ($BASHPID) into our cgroup's SUB ("" = it).
bench_move() {
	local h
	for h in $BENCH_HIERS; do
		echo "$BASHPID" > "${BENCH_CGDIR[$h]}${1:+/$1}/cgroup.procs" ||
			bench_die "cannot move into ${BENCH_CGDIR[$h]}${1:+/$1}"
	done
}

# For the harness: start vsd in our cgroup (a background subshell, then exec).
_bench_exec_in_cg() {
	bench_move ""
	exec "$@"
}

# bench_vs_setup NAME:PERCENT...: our own vsd instance (own socket, state
# directory and cgroup root, so it never meets the machine's vsd) and its VSs.
bench_vs_setup() {
	local spec i h root
	BENCH_CG=vsd-bench-$$
	export VSD_SOCKET=$BENCH_RUN/vsd.sock
	bench_log "cgroups: $BENCH_CG; scratch: $BENCH_RUN"
	if bench_hybrid; then
		BENCH_HIERS="cpu cpuacct pids unified"
		for h in $BENCH_HIERS; do
			BENCH_CGDIR[$h]=$(vsh_own_cgroup "$h")/$BENCH_CG
			mkdir "${BENCH_CGDIR[$h]}" "${BENCH_CGDIR[$h]}/outside" ||
				bench_die "cannot create our cgroup ${BENCH_CGDIR[$h]}"
		done
		echo "$BENCH_SHARES" > "${BENCH_CGDIR[cpu]}/cpu.shares" ||
			bench_die "cannot set cpu.shares of ${BENCH_CGDIR[cpu]}"
	else
		bench_log "not a hybrid cgroup host: running without our own parent cgroup"
	fi
	# The root name is unique too: vsd also makes it in hierarchies we do
	# not wrap (memory), where two runs side by side would otherwise meet.
	# The harness (tests/vsd-harness.sh) starts it, inside our cgroup.
	VSH_ROOT=$BENCH_CG VSH_DIR=$BENCH_RUN VSH_LAUNCH=_bench_exec_in_cg
	vsh_start || bench_die "vsd did not start: $(tail -3 "$BENCH_RUN/vsd.log")"
	BENCH_VSD_PID=$VSH_PID
	for spec in "$@"; do
		"$VSCTL" create "${spec%%:*}" --cpu "${spec#*:}%" >&2 ||
			bench_die "cannot create VS ${spec%%:*}"
		BENCH_VSS+=("${spec%%:*}")
		BENCH_SPECS+=("$spec")
	done
}

# bench_vs_exec VS CPUS CMD...: become CMD inside VS ("" = where we are,
# outside every VS), pinned to CPUS ("" = anywhere).  Call it in a subshell.
bench_vs_exec() {
	local vs=$1 cpus=$2 pin=()
	shift 2
	[ -n "$cpus" ] && pin=(taskset -c "$cpus")
	if [ -z "$vs" ]; then
		bench_move outside
		exec "${pin[@]}" "$@"
	fi
	exec "$VSCTL" exec "$vs" -- "${pin[@]}" "$@"
}

# CPU time (us) a VS has used so far, as vsd reports it: its own "usage",
# not the CPU of the services that served it, listed after.
bench_vs_cpu_us() {
	"$VSCTL" --json show "$1" | grep -o '"usage": {"cpu_usec": [0-9]*' | grep -o '[0-9]*$'
}

# CPU time (us) used outside every VS: our "outside" cgroup where there is
# one (hybrid hosts), else the given processes'.
bench_outside_cpu_us() {
	if [ -n "$BENCH_HIERS" ]; then
		echo $(($(cat "${BENCH_CGDIR[cpuacct]}/outside/cpuacct.usage") / 1000))
		return
	fi
	bench_proc_cpu_us "$@"
}

# CPU time (us) of processes (all their threads), from /proc/PID/stat.
bench_proc_cpu_us() {
	local pid tck sum=0 t
	tck=$(getconf CLK_TCK)
	for pid in "$@"; do
		t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null) || continue
		sum=$((sum + ${t:-0}))
	done
	echo $((sum * 1000000 / tck))
}

bench_vs_teardown() {
	local vs i h d pids
	[ -n "$BENCH_VSD_PID" ] || return 0
	# --force kills whatever is still inside (a stray Apache child...).
	for vs in "${BENCH_VSS[@]}"; do
		"$VSCTL" destroy "$vs" --force >/dev/null 2>&1 ||
			bench_log "warning: could not destroy VS $vs: $("$VSCTL" destroy "$vs" --force 2>&1)"
	done
	BENCH_VSS=()
	vsh_stop TERM	# it removes its empty cgroup root
	BENCH_VSD_PID=
	for h in $BENCH_HIERS; do
		for d in "${BENCH_CGDIR[$h]}/outside" "${BENCH_CGDIR[$h]}"; do
			[ -d "$d" ] || continue
			for i in 1 2 3 4 5 6 7 8 9 10; do
				pids=$(cat "$d/cgroup.procs" 2>/dev/null)
				[ -z "$pids" ] && break
				# shellcheck disable=SC2086
				kill -KILL $pids 2>/dev/null
				sleep 0.1
			done
			rmdir "$d" 2>/dev/null
		done
	done
	for d in $(vsh_dirs); do	# ours and our vsd's, wherever they are
		bench_log "warning: $d is left behind"
	done
	# With no VS left, vsd unpins its socket gate when it stops; the harness
	# removes whatever of the instance is left (cgroups, scope, pins).
	[ -d "/sys/fs/bpf/vsd/$BENCH_CG" ] &&
		bench_log "warning: /sys/fs/bpf/vsd/$BENCH_CG was left behind; removing it"
	vsh_cleanup
	BENCH_CG= BENCH_HIERS=
	BENCH_CGDIR=()
}

# CPU pinning (see benchmarks/results/insulation.md): the sites and their FastCGI servers share
# the last CPU, the load generator gets CPU 0.  bench_pin 0 turns it off.
BENCH_SITE_CPUS= BENCH_LG_CPUS=
bench_pin() {
	local n
	n=$(nproc)
	if [ "$1" = 1 ] && [ "$n" -ge 2 ] && command -v taskset >/dev/null; then
		BENCH_SITE_CPUS=$((n - 1)) BENCH_LG_CPUS=0
	else
		BENCH_SITE_CPUS= BENCH_LG_CPUS=
	fi
}

# Background a command and remember it.  bench_spawn LOG VS CMD...
bench_spawn() {
	local log=$1 vs=$2
	shift 2
	# setsid: Apache's prefork MPM signals its whole process group when it
	# stops, which would otherwise be us.  (Not a group leader here, so
	# setsid does not fork and $! stays the server's pid.)
	( bench_vs_exec "$vs" "$BENCH_SITE_CPUS" setsid "$@" ) >>"$log" 2>&1 &
	BENCH_PIDS+=($!)
	BENCH_LAST_PID=$!
}

bench_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# bench_wait_port PORT [HOST [SECONDS]]: HOST (127.0.0.1) listens on PORT,
# within SECONDS (10)
bench_wait_port() {
	local port=$1 host=${2:-127.0.0.1} i
	for i in $(seq $((${3:-10} * 10))); do
		(exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# A static mix in DIR and the list of its paths (weighted by repetition) in
# DIR.paths: mostly small pages, some larger ones, like a 2000-era site.
bench_make_docroot() {
	local dir=$1 n size i
	mkdir -p "$dir"
	: > "$dir.paths"
	for spec in 1:4 4:3 16:2 64:1; do
		size=${spec%%:*} n=${spec#*:}
		for i in $(seq "$n"); do
			head -c $((size * 1024)) /dev/zero | tr '\0' 'x' > "$dir/f${size}k-$i.html"
			echo "/f${size}k-$i.html" >> "$dir.paths"
		done
	done
	echo "ok" > "$dir/index.html"
	chmod -R a+rX "$dir"
}

# bench_site_start NAME PORT FCGI_ADDR VS: one Apache instance in VS.
bench_site_start() {
	local name=$1 port=$2 fcgi=$3 vs=$4 dir=$BENCH_RUN/$1 user group
	mkdir -p "$dir"
	chmod 755 "$dir"
	[ -d "$BENCH_RUN/docroot" ] || bench_make_docroot "$BENCH_RUN/docroot"
	user=www-data group=www-data
	id "$user" >/dev/null 2>&1 || user=nobody group=nogroup
	sed -e "s|@NAME@|$name|g" -e "s|@PORT@|$port|g" -e "s|@RUNDIR@|$dir|g" \
	    -e "s|@DOCROOT@|$BENCH_RUN/docroot|g" -e "s|@MODDIR@|$APACHE_MODDIR|g" \
	    -e "s|@USER@|$user|g" -e "s|@GROUP@|$group|g" -e "s|@FCGI@|$fcgi|g" -e "s|@MPM@|$BENCH_MPM|g" \
	    "$SITE_CONF_IN" > "$dir/httpd.conf"
	"$APACHE" -t -f "$dir/httpd.conf" >"$dir/configtest.log" 2>&1 ||
		bench_die "$name: bad Apache configuration: $(cat "$dir/configtest.log")"
	bench_spawn "$dir/stderr.log" "$vs" "$APACHE" -f "$dir/httpd.conf" -DFOREGROUND
	eval "SITE_PID_$name=$BENCH_LAST_PID"
	bench_wait_port "$port" ||
		bench_die "$name: Apache did not listen on $port: $(tail -3 "$dir/error.log" "$dir/stderr.log" 2>/dev/null)"
}

bench_site_stop() {
	local pidvar=SITE_PID_$1
	[ -n "${!pidvar:-}" ] && bench_stop "${!pidvar}"
	eval "SITE_PID_$1="
}

# bench_fcgi_start NAME ADDR VS [adserver options]: a plain adserver in VS.
bench_fcgi_start() {
	local name=$1 addr=$2 vs=$3
	shift 3
	bench_spawn "$BENCH_RUN/$name.log" "$vs" "$ADSERVER" --listen "$addr" "$@"
	eval "FCGI_PID_$name=$BENCH_LAST_PID"
	bench_wait_port "${addr##*:}" || bench_die "$name: adserver did not listen on $addr: $(tail -3 "$BENCH_RUN/$name.log")"
}

# Stop it and check that every request came over a connection of its own,
# i.e. passed accept() (site.conf.in explains why that matters).
bench_fcgi_stop() {
	local pidvar=FCGI_PID_$1 svcvar=FCGI_SVC_$1 log=$BENCH_RUN/$1.log svc= line req acc
	if [ -n "${!svcvar:-}" ]; then
		svc=1
		bench_gate_fcgi_stop "$1"
		log=$BENCH_RUN/vsd.log	# where vsd's services write
	elif [ -n "${!pidvar:-}" ]; then
		bench_stop "${!pidvar}"
		eval "FCGI_PID_$1="
	else
		return 0
	fi
	line=$(grep "adserver: stopping:" "$log" | tail -1)
	# under systemd, vsd's services write to their unit's journal
	if [ -z "$line" ] && [ -n "$svc" ] && command -v journalctl >/dev/null; then
		line=$(journalctl -q --no-pager -o cat -u "vsd-$BENCH_CG-$1.service" |
			grep "adserver: stopping:" | tail -1)
	fi
	req=$(sed -n 's/.*stopping: \([0-9]*\) requests.*/\1/p' <<<"$line")
	acc=$(sed -n 's/.*requests, \([0-9]*\) connections.*/\1/p' <<<"$line")
	if [ -z "$req" ]; then
		bench_log "warning: $1: adserver did not report its counts"
	elif [ "$req" != "$acc" ]; then
		bench_log "warning: $1: $req requests over $acc connections: backend connections were reused, the accept gate did not see every request"
	else
		bench_log "$1: $req requests, $acc accepts: one accept per request"
	fi
}

# The cgroup (v1 cpu, or v2) that answered an ad request on PORT.
bench_probe_ad() {
	local port=$1 line
	exec 9<>"/dev/tcp/127.0.0.1/$port" || return 1
	printf 'GET /ad HTTP/1.0\r\nHost: localhost\r\n\r\n' >&9
	while IFS= read -r -t 5 line <&9; do
		line=${line%$'\r'}
		[ -z "$line" ] && break
		case $line in X-VS-Cgroup:*) echo "${line#X-VS-Cgroup: }" ;; esac
	done
	exec 9<&-
}

# The load generator runs in its own VS ("loadgen", created by the caller)
# and, with bench_pin, on its own CPU: see benchmarks/results/insulation.md.
# bench_loadgen LOADGEN-ARGS...: run it in its VS, CSV on stdout.
bench_loadgen() {
	( bench_vs_exec loadgen "$BENCH_LG_CPUS" "$LOADGEN" "$@" )
}

# The accept gate comes from vsctl (another issue); never fake it.
BENCH_GATE_MISSING=
bench_gate_available() {
	if ! "$VSCTL" --help 2>&1 | grep -q -- 'vsctl run.*--gate'; then
		BENCH_GATE_MISSING="the accept gate is missing: $VSCTL has no \"run --gate accept\""
		return 1
	fi
	return 0
}

# bench_gate_rules FILE [SERVICE-LINE]: the benchmark's VSs as a rule file,
# with the paper's rules (Reumann et al., section "Insulation Despite
# Service Sharing": the server in www1 serving www2 moves to www2 and vice
# versa; from its home VS, to the requester) and the service, if given.
bench_gate_rules() {
	local spec
	{
		for spec in "${BENCH_SPECS[@]}"; do echo "vs ${spec%%:*} cpu ${spec#*:}%"; done
		[ -n "${2:-}" ] && echo "$2"
		echo "(accept, www[1|2], req = www[2|1]) => (www[2|1])"
		echo "(accept, *, req = *) => (requester)"
	} >"$1"
	chmod 0644 "$1"
}

# bench_gate_fcgi_start NAME ADDR [adserver options]: the shared adserver
# under the accept gate, at home in VS "fcgi" while it serves nobody. As a
# provider runs it: a service line of a rule file, applied to our vsd,
# which starts it (vsrules(5), SERVICES); its output goes to vsd's log.
bench_gate_fcgi_start() {
	local name=$1 addr=$2
	shift 2
	if ! bench_gate_available; then
		bench_log "gate: $BENCH_GATE_MISSING"
		return 1
	fi
	bench_gate_rules "$BENCH_RUN/gate.rules" \
		"service $name home fcgi command \"$ADSERVER --listen $addr $*\""
	"$VSCTL" apply "$BENCH_RUN/gate.rules" >&2 || bench_die "$name: vsctl apply of the gate's rule file failed"
	eval "FCGI_SVC_$name=1"
	bench_wait_port "${addr##*:}" ||
		bench_die "$name: the gated adserver did not listen on $addr: $(tail -3 "$BENCH_RUN/vsd.log")"
}

# Stop a service bench_gate_fcgi_start declared: apply the file without it.
bench_gate_fcgi_stop() {
	local i
	bench_gate_rules "$BENCH_RUN/nogate.rules"
	"$VSCTL" apply --prune "$BENCH_RUN/nogate.rules" >/dev/null ||
		bench_log "warning: could not stop service $1"
	for i in $(seq 100); do
		"$VSCTL" services --json | grep -q "\"name\": \"$1\"" || break
		sleep 0.1
	done
	eval "FCGI_SVC_$1="
}

bench_cleanup() {
	local i
	for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
		bench_stop "${BENCH_PIDS[i]}"
	done
	BENCH_PIDS=()
	bench_vs_teardown
	[ -n "$BENCH_RUN" ] && [ -z "${BENCH_KEEP:-}" ] && rm -rf "$BENCH_RUN"
	return 0
}

bench_init() {
	[ "$(id -u)" = 0 ] || bench_die "needs root (it creates cgroups and starts Apache as www-data)"
	[ -x "$ADSERVER" ] || bench_die "$ADSERVER is missing; run make first"
	[ -x "$LOADGEN" ] || bench_die "$LOADGEN is missing; run make first"
	[ -x "$VSD" ] && [ -x "$VSCTL" ] || bench_die "$VSD or $VSCTL is missing; run make first"
	[ -x "$APACHE" ] || bench_die "apache2 not found (Debian: apt-get install apache2)"
	[ -e "$APACHE_MODDIR/mod_proxy_fcgi.so" ] ||
		bench_die "$APACHE_MODDIR/mod_proxy_fcgi.so is missing"
	BENCH_RUN=$(mktemp -d /tmp/vsd-bench.XXXXXX) || bench_die "mktemp failed"
	chmod 755 "$BENCH_RUN"
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

# Medians over the repetitions: "mode b_conns a_rps b_rps a_p50 a_p99 n" per
# mode and B load, from a CSV with the columns mode,rep,b_conns,a_conns,
# a_rps,b_rps,a_p50_ms,a_p99_ms.
bench_medians() {
	awk -F, 'NR > 1 { k = $1 SUBSEP $3; n[k]++; A[k, n[k]] = $5; B[k, n[k]] = $6
		P[k, n[k]] = $7; Q[k, n[k]] = $8; if (!(k in seen)) { seen[k]; order[++no] = k } }
	function med(arr, k, c,   i, j, t, v) {
		for (i = 1; i <= c; i++) v[i] = arr[k, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
			if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
		return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
	}
	END { for (i = 1; i <= no; i++) { k = order[i]; split(k, p, SUBSEP)
		printf "%s %d %.1f %.1f %.2f %.2f %d\n", p[1], p[2], med(A, k, n[k]),
		    med(B, k, n[k]), med(P, k, n[k]), med(Q, k, n[k]), n[k] } }' "$1"
}

# bench_report CSV PNG TITLE "MODES": the table of medians and the plot of
# A's throughput against B's load, one line per mode (paper Figures 11/12).
bench_report() {
	local csv=$1 png=$2 title=$3 modes=$4 med m plot= dat
	med=$(bench_medians "$csv")
	echo
	echo "Medians over repetitions ($csv):"
	printf '%-16s %6s %9s %9s %9s %9s %4s\n' mode b_conns a_rps b_rps a_p50_ms a_p99_ms reps
	awk '{ printf "%-16s %6d %9.1f %9.1f %9.2f %9.2f %4d\n", $1, $2, $3, $4, $5, $6, $7 }' <<<"$med"
	if ! command -v gnuplot >/dev/null; then
		bench_log "gnuplot not found (Debian: apt-get install gnuplot-nox); no plot"
		return 0
	fi
	for m in $modes; do
		dat=$BENCH_RUN/plot-$m.dat
		awk -v m="$m" '$1 == m { print $2, $3 }' <<<"$med" > "$dat"
		[ -s "$dat" ] || continue
		plot="$plot${plot:+, }'$dat' using 1:2 with linespoints lw 2 pt 7 title '$m'"
	done
	[ -n "$plot" ] || return 0
	gnuplot <<EOF || bench_log "gnuplot failed; no plot"
set terminal pngcairo size 800,520 font ',11' noenhanced
set output '$png'
set title '$title'
set xlabel "site B's load (simultaneous connections)"
set ylabel "site A's throughput (requests/s)"
set yrange [0:*]
set grid
set key bottom left
plot $plot
EOF
	[ -s "$png" ] && echo "Plot: $png"
}

bench_csv_header() {
	echo mode,rep,b_conns,a_conns,a_rps,b_rps,a_p50_ms,a_p99_ms,b_p50_ms,b_p99_ms,a_ad_rps,b_ad_rps,a_errors,b_errors,www1_cpu_pct,www2_cpu_pct,outside_cpu_pct,loadgen_cpu_pct > "$1"
}

# bench_run_point MODE REP B [loadgen options]: one point, appended to $CSV:
# sites A ($PORT_A, $A_CONNS connections) and B ($PORT_B, B connections)
# driven by the load generator in its own VS, and the CPU every VS used
# and outside every VS (see bench_outside_cpu_us).
bench_run_point() {
	local mode=$1 rep=$2 b=$3 out t0 t1 o0 o1 w10 w11 w20 w21 l0 l1 a bb
	shift 3
	t0=$(date +%s%N) o0=$(bench_outside_cpu_us $BENCH_OUTSIDE_PIDS) w10=$(bench_vs_cpu_us www1)
	w20=$(bench_vs_cpu_us www2) l0=$(bench_vs_cpu_us loadgen)
	out=$(bench_loadgen --site "A=127.0.0.1:$PORT_A:$A_CONNS" --site "B=127.0.0.1:$PORT_B:$b" \
	    --paths "$BENCH_RUN/docroot.paths" --duration "$DURATION" --warmup "$WARMUP" "$@") ||
		{ bench_log "$mode: the load generator failed"; return 1; }
	t1=$(date +%s%N) o1=$(bench_outside_cpu_us $BENCH_OUTSIDE_PIDS) w11=$(bench_vs_cpu_us www1)
	w21=$(bench_vs_cpu_us www2) l1=$(bench_vs_cpu_us loadgen)
	a=$(grep '^A,' <<<"$out") bb=$(grep '^B,' <<<"$out")
	# loadgen CSV: site,conns,duration_s,requests,errors,rps,p50_ms,p99_ms,ad_requests,ad_p50_ms,ad_p99_ms
	awk -F, -v mode="$mode" -v rep="$rep" -v b="$b" -v a_conns="$A_CONNS" \
	    -v wall=$(((t1 - t0) / 1000)) -v out=$((o1 - o0)) -v w1=$((w11 - w10)) \
	    -v w2=$((w21 - w20)) -v lg=$((l1 - l0)) -v A="$a" -v B="$bb" 'BEGIN {
		split(A, x); split(B, y)
		pct = 100 / wall
		printf "%s,%d,%d,%d,%.1f,%.1f,%.2f,%.2f,%.2f,%.2f,%.1f,%.1f,%d,%d,%.1f,%.1f,%.1f,%.1f\n",
		    mode, rep, b, a_conns, x[6], y[6], x[7], x[8], y[7], y[8],
		    x[9] / x[3], y[9] / y[3], x[5], y[5],
		    w1 * pct, w2 * pct, out * pct, lg * pct
	}' >> "$CSV"
	tail -1 "$CSV" | awk -F, '{ printf "  %-16s rep %d  B=%2d  A %7.1f rps (p50 %6.2f ms, p99 %7.2f ms)  B %7.1f rps  cpu%% www1 %5.1f www2 %5.1f outside %5.1f loadgen %5.1f\n",
	    $1, $2, $3, $5, $7, $8, $6, $15, $16, $17, $18 }' >&2
}

