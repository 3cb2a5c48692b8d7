#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The database mode: Debian's MariaDB as a gated service of "protocol
# mysql". Each query must run in a thread that sits in the VS of the client
# that sent it, from the connection's first query: over TCP and the Unix
# socket, one connection per VS, a cached thread reused by another VS,
# pool-of-threads, and after vsd restarts. A connection from outside every
# VS, MariaDB's main thread and its own (InnoDB) threads stay home. Where a
# query runs is read from /proc/PID/task/TID/cgroup of the thread that
# information_schema.PROCESSLIST names for it while it runs; the CPU a VS's
# queries burn must show in that VS's cgroup (cpuacct / cpu.stat). On pure
# cgroup v2 "a VS's cgroup" is its threaded child under the service's
# cgroup (the home VS's), and "home" that cgroup's child "home".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fcgi-lib.sh"
. "$(dirname "$0")/mariadb-lib.sh"
need_root
need_mariadb

rules_dir
RUN=$R/run
mkdir -p "$RUN" && chmod 0755 "$RUN"
MDB_ARGS="--thread-cache-size=8 --max-connections=300"
mdb_init "$RUN" $(test_port) || { fail "mariadb-install-db"; done_testing; }
vsd_start || { fail "vsd starts"; done_testing; }

# rules FILE EXTRA-ARGS: the rule file, the server with EXTRA-ARGS
rules() {
	w "$1" <<E
vs db cpu 10%
vs www1 cpu 20% cpu-max ${3:-50%}
vs www[2..4] cpu 20%
service mariadb home db protocol mysql command "exec $MDB_CMD $2"
E
}
rules db.rules ""
check "the rule file with a mysql service applies" quiet vsctl apply "$R/db.rules"
on_exit "vsctl service stop mariadb"
check "MariaDB runs under the gate" wait_until mdb_up
is "$(svc mariadb "['database']['on']")" True "the gate's database mode is on"
MPID=$(svc mariadb "['pid']")
V2=; [ "$(cg_layout)" = unified ] && V2=1
DBDIR=$(vs_cgroup db cpu)
if [ -n "$V2" ]; then
	is "$(cat "$DBDIR/cgroup.type") $(cat "$DBDIR/home/cgroup.type")" "domain threaded threaded" \
		"pure v2: the service's cgroup is a threaded subtree's root, with a threaded child home"
	like "$(cat "$DBDIR/cgroup.subtree_control")" "cpu" "pure v2: cpu is enabled in the service's cgroup"
fi

# from VS ARGS...: the client in VS (or outside every VS: "-"), by TCP or Unix ($VIA)
VIA=tcp
from() {
	local vs=$1; shift
	set -- "$MARIADB" --no-defaults -u root -N -B "$@"
	if [ "$VIA" = tcp ]; then
		set -- "$@" -h 127.0.0.1 -P "$MDB_PORT" --protocol=tcp
	else
		set -- "$@" -S "$MDB_SOCK"
	fi
	if [ "$vs" = - ]; then "$@"; else vsctl exec "$vs" -- "$@"; fi
}
# tid_of TAG: the thread running the query with TAG in its text, once it runs
tid_of() {
	sql_unix -e "SELECT TID FROM information_schema.PROCESSLIST
		WHERE INFO LIKE '%tag-$1%' AND ID <> CONNECTION_ID()" 2>/dev/null
}
# vs_of_tid TID: the VS the thread sits in (pure v2: the VS its threaded child
# is named after, db for home; "subtree-root" for the subtree's root itself)
vs_of_tid() {
	local p
	if [ -z "$V2" ]; then
		cg_vs < "/proc/$MPID/task/$1/cgroup" 2>/dev/null
		return
	fi
	p=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$MPID/task/$1/cgroup" 2>/dev/null)
	case $p in
	"$DBDIR/home") echo db ;;
	"$DBDIR") echo subtree-root ;;
	*) echo "${p##*/}" ;;
	esac
}
SEEN=" "	# the TIDs that ran our queries
# where VS: run SLEEP(1), tagged, as a connection's first query from VS; set
# WT and WV to the thread that ran it and its VS, read while it ran
n=0
where() {
	local tag=q$$-$n p
	n=$((n + 1))
	from "$1" -e "SELECT 'tag-$tag', SLEEP(1)" > /dev/null &
	p=$!
	WT=
	# until the query shows, or its client ends (a slow client under emulation)
	for _i in $(seq 1000); do
		WT=$(tid_of "$tag") && [ -n "$WT" ] && break
		kill -0 $p 2>/dev/null || break
		sleep 0.02
	done
	WV=$([ -n "$WT" ] && vs_of_tid "$WT")
	WV=${WV:-none}
	wait $p
	SEEN="$SEEN$WT "
}

# iter N: N iterations of SHA2, or as many as take N/3000000 s here where
# they are slower (a loaded host, the VM under emulation: there 20000000
# took two minutes, and the test outlasted the VM tier's time limit)
us=$(sql_unix -e "SET @t = NOW(6); DO BENCHMARK(300000, SHA2('x', 256));
	SELECT TIMESTAMPDIFF(MICROSECOND, @t, NOW(6))")
rate=$(( 300000 * 1000000 / (${us:-100000} + 1) ))
iter() { echo $(( rate >= 3000000 ? $1 : $1 / 3000 * rate / 1000 )); }
diag "SHA2 iterations per second here: $rate"

# --- one connection per VS, over TCP and over the Unix socket
for VIA in tcp unix; do
	for v in www1 www2 www3 www4; do
		where $v
		is "$WV" "$v" "$VIA: the first query from $v runs in $v (thread $WT)"
	done
done
VIA=tcp
where -
is "$WV" db "a connection from outside every VS is served at home (thread $WT)"
if [ -n "$V2" ]; then
	for f in cpu.weight cpu.max; do
		is "$(cat "$DBDIR/www1/$f")" "$(cat "$(vs_cgroup www1 cpu)/$f")" "pure v2: www1's threaded child has www1's $f"
	done
	max0=$(cat "$DBDIR/www1/cpu.max")
	rules db.rules "" 40%
	check "a rule file with a new cap for www1 applies" quiet vsctl apply "$R/db.rules"
	is "$(svc mariadb "['pid']")" "$MPID" "the service was not restarted"
	is "$(cat "$DBDIR/www1/cpu.max")" "$(cat "$(vs_cgroup www1 cpu)/cpu.max")" \
		"pure v2: www1's threaded child follows www1's new cap"
	check "pure v2: that cap differs from the old one ($max0)" \
		sh -c '[ "$(cat "$1")" != "$2" ]' - "$DBDIR/www1/cpu.max" "$max0"
fi

# --- the thread cache: a thread that served another VS (or home) before
# serves the next connection, from www2
before=$(for t in /proc/$MPID/task/*; do echo "${t##*/}:$(vs_of_tid "${t##*/}")"; done)
where www2
prev=$(echo "$before" | sed -n "s/^$WT://p")
diag "thread cache: www2's query ran in thread $WT, which sat in ${prev:-(none: a new thread)}"
is "$WV" www2 "the next connection, from www2, runs in www2"
check "a cached thread that sat in another VS served it (thread_cache_size 8)" \
	sh -c '[ -n "$1" ] && [ "$1" != www2 ]' - "$prev"

# --- every query of a long connection, and the CPU it burns, in its VS
# usage VS: the CPU time of VS's cgroup (pure v2: its threaded child's cpu.stat)
usage() {
	local d
	d=$(vs_cgroup "$1" cpuacct)
	if [ -n "$V2" ]; then
		d=$DBDIR/$1
		[ "$1" = db ] && d=$DBDIR/home
	fi
	"$top_builddir/tests/cgroup-usage" "$d" 2>/dev/null || echo 0
}
u0=$(usage www3); d0=$(usage db)
q="SELECT BENCHMARK($(iter 3000000), SHA2('x', 256));"
# the thread that ran them is ours too, new or from the cache (the check of
# MariaDB's own threads below must not take it for one of them)
wt=$(from www3 -e "$q$q$q$q SELECT TID FROM information_schema.PROCESSLIST
	WHERE ID = CONNECTION_ID()" | tail -1)
SEEN="$SEEN$wt "
u1=$(usage www3); d1=$(usage db)
diag "4 CPU-bound queries from www3: www3's cgroup used $(( (u1 - u0) / 1000000 )) ms, db's $(( (d1 - d0) / 1000000 )) ms"
check "www3's cgroup was charged for its queries' CPU (more than 5x the home VS's)" \
	test $((u1 - u0)) -gt $((5 * (d1 - d0)))

# --- MariaDB's own threads (main, InnoDB, timers) stay home
others=
for t in /proc/$MPID/task/*; do
	t=${t##*/}
	case $SEEN in *" $t "*) continue ;; esac
	[ "$(vs_of_tid "$t")" = db ] || others="$others $t:$(vs_of_tid "$t")"
done
is "${others:-none}" none "every thread that served no connection of ours is in the home VS"
is "$(vs_of_tid "$MPID")" db "the main (accepting) thread stays home"

# --- 200 short-lived connections, 50 from each of 4 VSs at once, each one
# CPU-bound query: the CPU lands in the VSs' cgroups, not at home (a query
# that ran before its thread was moved would be charged to the VS the
# thread sat in before: another www or home)
ev0=$(svc mariadb "['database']['moved']")
for v in www1 www2 www3 www4; do eval "b_$v=\$(usage $v)"; done
b_db=$(usage db)
burst() {
	local i
	for i in $(seq 50); do
		from "$1" -e "SELECT BENCHMARK($(iter 100000), SHA2('$1', 256))" || return 1
	done > /dev/null
}
pids=
for v in www1 www2 www3 www4; do burst $v & pids="$pids $!"; done
bad=0
for p in $pids; do wait $p || bad=$((bad + 1)); done
is "$bad" 0 "200 short connections from 4 VSs: every query answered"
tot=0
for v in www1 www2 www3 www4; do
	eval "d=\$(( \$(usage $v) - b_$v ))"
	diag "$v: $((d / 1000000)) ms of CPU in its cgroup"
	tot=$((tot + d))
	check "$v's cgroup was charged for its queries" test "$d" -gt 0
done
dd=$(( $(usage db) - b_db ))
diag "home (db): $((dd / 1000000)) ms; $(( $(svc mariadb "['database']['moved']") - ev0 )) thread moves"
check "at least 95% of the queries' CPU is in the VSs' cgroups, not at home" \
	test $((100 * tot)) -ge $((95 * (tot + dd)))

# --- vsd restarts: connections opened before (vsctl exec needs vsd) send
# their queries while vsd is stopped and after it is back
# open_client NAME VS: a client in VS reading queries from fd 7 (NAME's fifo)
open_client() {
	mkfifo "$RUN/$1"
	from "$2" < "$RUN/$1" > "$RUN/$1.out" 2>&1 &
	CPID=$!
	exec 7> "$RUN/$1"
}
# ask_where NAME TAG: send SLEEP(1) tagged TAG on the open client; WT, WV as where
ask_where() {
	ASK=$2
	echo "SELECT 'tag-$2', SLEEP(1);" >&7
	WT=
	wait_until eval 'WT=$(tid_of "$ASK") && [ -n "$WT" ]'
	WV=$([ -n "$WT" ] && vs_of_tid "$WT")
	WV=${WV:-none}
	wait_until grep -q "tag-$2" "$RUN/$1.out"
}
open_client r2 www2
echo "SELECT 'first';" >&7
wait_until grep -q first "$RUN/r2.out"
vsd_stop
ask_where r2 stopped
is "$WV" www2 "while vsd is stopped, a query from www2 runs in www2"
vsd_start 7>&- || fail "vsd starts again"
ask_where r2 again
is "$WV" www2 "after vsd restarted, the same connection's next query runs in www2"
exec 7>&-
wait $CPID
where www3
is "$WV" www3 "after vsd restarted, a new connection from www3 runs in www3"

# --- a VS destroyed while its connection is open: a client that opened
# its connection in www4 and then left it (its socket stays www4's); the
# query running while www4 goes completes, and the next runs at home
open_client q www4
echo "SELECT 'first';" >&7
wait_until grep -q first "$RUN/q.out"
# the client itself (vsctl exec runs it in the background subshell's child)
cpid=$(pgrep -P "$CPID" -x mariadb)
check "the client that opened the connection leaves www4" quiet vsctl attach www1 "$cpid"
echo "SELECT 'tag-gone', SLEEP(2);" >&7
WT=
wait_until eval 'WT=$(tid_of gone) && [ -n "$WT" ]'
is "$(vs_of_tid "$WT")" www4 "the query of a client that left www4 runs in www4"
check "www4 is destroyed while that query runs" quiet vsctl destroy www4 --force
echo "SELECT 'after';" >&7
exec 7>&-
wait $CPID
is "$(tr -s '\t\n' '  ' < "$RUN/q.out")" "first tag-gone 0 after " "the running query and the next one answered"
is "$(vs_of_tid "$WT")" db "its thread was moved home"
if [ -n "$V2" ]; then
	check "pure v2: www4's threaded child is removed" test ! -e "$DBDIR/www4"
fi

# --- pool-of-threads: a few threads serve every connection
rules db.rules "--thread-handling=pool-of-threads --thread-pool-size=2"
check "the rule file with pool-of-threads applies" quiet vsctl apply "$R/db.rules"
wait_until sh -c '[ "$(vsctl services --json | grep -o "\"pid\": [0-9]*" | head -1)" != "\"pid\": '"$MPID"'" ]'
check "MariaDB runs again, with pool-of-threads" wait_until mdb_up
MPID=$(svc mariadb "['pid']")
is "$(sql_unix -e 'SELECT @@thread_handling')" pool-of-threads "MariaDB uses pool-of-threads"
# the pool's threads report no TID in PROCESSLIST: the thread that runs a
# CPU-bound first query is the one whose CPU time grows most while it runs
cpu_of_tasks() {
	local t
	for t in /proc/$MPID/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)"; done
}
running() {
	[ -n "$(sql_unix -e "SELECT ID FROM information_schema.PROCESSLIST
		WHERE INFO LIKE '%tag-$1%' AND ID <> CONNECTION_ID()")" ]
}
busy_where() {
	local p a b
	from "$1" -e "SELECT BENCHMARK($(iter 20000000), SHA2('tag-$1', 256))" > /dev/null &
	p=$!
	# sample once it runs (the client may start slowly)
	wait_until running "$1"
	sleep 0.2
	a=$(cpu_of_tasks)
	sleep 0.3
	b=$(cpu_of_tasks)
	WT=$(join <(echo "$a" | sort) <(echo "$b" | sort) | awk '{ d = $3 - $2 } d > m { m = d; t = $1 } END { print t }')
	WV=$([ -n "$WT" ] && vs_of_tid "$WT")
	WV=${WV:-none}
	wait $p
}
for VIA in tcp unix; do
	for v in www1 www2 www3; do
		busy_where $v
		is "$WV" "$v" "pool-of-threads, $VIA: the first query from $v runs in $v (thread $WT)"
	done
done
if [ -n "$V2" ]; then
	check "the service stops" quiet vsctl service stop mariadb
	check "pure v2: the service stopped, its threaded children are removed" \
		wait_until sh -c '[ -z "$(ls -d "$1"/*/ 2>/dev/null)" ]' - "$DBDIR"
	is "$(cat "$DBDIR/cgroup.type")" domain "pure v2: the service's cgroup is a domain again"
fi
done_testing
