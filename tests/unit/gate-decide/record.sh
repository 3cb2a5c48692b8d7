#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# How the rec-*.trace files were made: the real gate (vsd-gate --trace,
# --fast off, so that every accept is the decision's) serving real
# connections from two VSs of a private vsd, with the test server and client
# of tests/gate-*.sh. As root, from the build tree:
#   top_srcdir=. top_builddir=. tests/unit/gate-decide/record.sh OUTDIR
# Each run is a few hundred lines; the replay (test-gate-decide) must give
# every recorded answer. Not a test: what it records depends on timing.
# rec-insulation.trace and rec-hosting.trace come from the benchmarks in
# their default mode (fast path on), through a supervisor that adds the
# option (vsd and vsctl run execute $VSD_GATE, vsctl-run(8)):
#   printf '#!/bin/sh\nexec %s --trace "/tmp/t/trace-$$" "$@"\n' \
#       "$PWD/gates/accept/vsd-gate" > /tmp/t/gate; chmod +x /tmp/t/gate
#   cd /tmp/t && VSD_GATE=/tmp/t/gate "$OLDPWD/benchmarks/insulation" --tiny --modes gate
#   VSD_GATE=/tmp/t/gate "$OLDPWD/benchmarks/hosting" --tiny --modes gated
# rec-insulation.trace is whole, for its fast-path choices (the "fast"
# lines; one only where the fast path may answer at all); the others are
# cut after a few hundred lines. The gate writes the rules it runs with
# into the trace (rules_write()'s text between "rules begin" and "rules
# end"), at start and on each change vsd pushes, so a replay needs nothing
# else. The runs below have none: the default rule.
# rec-workers.trace is a whole run of
#   VSD_GATE=/tmp/t/gate make check TESTS=tests/gate-workers.sh
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
trap cleanup EXIT
trap "exit 1" INT TERM
out=${1:?usage: record.sh OUTDIR}
mk_vs home 1 1900 && mk_vs www1 2 4000 && mk_vs www2 3 4000 && mk_vs tiny 4 100 || exit 1
mk_map || exit 1
PB=$((20000 + ($$ % 40) * 250))

# two VSs alternating on a single-threaded server, requests that queue
rm -f "$out/rec-two-vs.trace"
gate_start two --conns-map "$MAP" --fast off --trace "$out/rec-two-vs.trace" -- "$SERVER" || exit 1
map_range "$PB" 30 2 && map_range $((PB + 40)) 30 3
"$CLIENT" -p "$PORT" -n 30 -j 3 -b "$PB" -r "spin 2" > /dev/null &
C1=$!
"$CLIENT" -p "$PORT" -n 30 -j 3 -b $((PB + 40)) -r "spin 2" > /dev/null
wait "$C1"
gate_stop

# shares apart: www1 busy with a CPU hog (its remaining share falls), tiny
# and www2 queueing behind a prefork server of two workers
rm -f "$out/rec-share.trace"
gate_start share --conns-map "$MAP" --fast off --trace "$out/rec-share.trace" -- "$SERVER" -n 2 || exit 1
sh -c 'while :; do :; done' & HOG=$!
put_in www1 "$HOG"
sleep 0.5
map_range $((PB + 80)) 30 2 && map_range $((PB + 120)) 30 3 && map_range $((PB + 160)) 10 4
"$CLIENT" -p "$PORT" -n 12 -j 4 -b $((PB + 80)) -r "spin 3" > /dev/null &
C1=$!
"$CLIENT" -p "$PORT" -n 12 -j 4 -b $((PB + 120)) -r "spin 3" > /dev/null &
C2=$!
"$CLIENT" -p "$PORT" -n 4 -j 2 -b $((PB + 160)) -r "spin 3" > /dev/null
wait "$C1" "$C2"
kill "$HOG"
wait "$HOG"
gate_stop

# a prefork pool of three (the PHP-FPM model) with unknown clients too
rm -f "$out/rec-prefork.trace"
gate_start pf --conns-map "$MAP" --fast off --trace "$out/rec-prefork.trace" -- "$SERVER" -n 3 || exit 1
map_range $((PB + 200)) 40 2
"$CLIENT" -p "$PORT" -n 40 -j 6 -b $((PB + 200)) -r "spin 1" > /dev/null &
C1=$!
"$CLIENT" -p "$PORT" -n 20 -j 3 -r "spin 1" > /dev/null
wait "$C1"
gate_stop
wc -l "$out"/rec-*.trace
