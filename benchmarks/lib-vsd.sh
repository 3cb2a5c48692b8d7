# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the core benchmarks (cpushare, scale, accept-cost, rules-scale):
# a private vsd instance (tests/vsd-harness.sh) and its cleanup.
#
# The caller sets BENCH (a short name) and may set top_builddir; then calls
# bench_start_vsd. An EXIT trap destroys every VS of the instance (--force),
# stops vsd with SIGTERM, and checks that no cgroup or socket-gate pin of the
# instance is left.

: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
VSD_BIN=${VSD_BIN:-$top_builddir/vsd/vsd}
VSCTL_BIN=${VSCTL_BIN:-$top_builddir/vsctl/vsctl}
VSD=$VSD_BIN VSCTL=$VSCTL_BIN
. "$top_srcdir/tests/vsd-harness.sh"

bench_die() {
	echo "$BENCH: $*" >&2
	exit 1
}

bench_check_env() {
	[ "$(id -u)" = 0 ] || bench_die "must run as root (it creates cgroups)"
	[ -x "$VSD_BIN" ] && [ -x "$VSCTL_BIN" ] ||
		bench_die "build first: no $VSD_BIN or $VSCTL_BIN (make -j2)"
}

vsctl() {
	"$VSCTL_BIN" --socket "$BENCH_SOCK" "$@"
}

# Milliseconds since the epoch, for wall-clock windows.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# The cgroup layout as vsd sees it ("unified", "hybrid", "legacy").
bench_layout() {
	case "$(stat -f -c %T /sys/fs/cgroup)" in
	cgroup2fs) echo unified ;;
	tmpfs) if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		echo hybrid
	else
		echo legacy
	fi ;;
	*) echo unknown ;;
	esac
}

bench_machine() {
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); nproc: $(nproc); kernel: $(uname -r);" \
		"cgroups: $(bench_layout); load: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Destroy every VS (--force), stop vsd with SIGTERM, and check that it removed
# its root directories and pins itself; returns 1 if anything was left behind
# (the harness then removes it).
bench_stop_vsd() {
	left=0
	if [ -n "$VSH_PID" ] && kill -0 "$VSH_PID" 2>/dev/null; then
		for vs in $(vsctl list --json 2>/dev/null | tr ',' '\n' |
			    sed -n 's/.*"name": "\([^"]*\)".*/\1/p'); do
			vsctl destroy "$vs" --force >/dev/null 2>&1 ||
				echo "$BENCH: cleanup: cannot destroy VS $vs" >&2
		done
		vsh_stop TERM
	fi
	BENCH_VSD_PID=
	for d in $(vsh_dirs) $( [ -d "/sys/fs/bpf/vsd/$VSH_ROOT" ] && echo "/sys/fs/bpf/vsd/$VSH_ROOT"); do
		echo "$BENCH: cleanup: $d was left behind; removing it" >&2
		left=1
	done
	vsh_cleanup
	[ -n "${BENCH_DIR:-}" ] && rm -rf "$BENCH_DIR"
	BENCH_DIR=
	return $left
}

bench_cleanup() {
	st=$?
	trap - EXIT INT TERM
	bench_stop_vsd || st=1
	exit "$st"
}

# Start vsd (tests/vsd-harness.sh); its log goes to $BENCH_DIR/vsd.log.
# The state directory is in $1, by default on disk (/var/tmp) as /var/lib/vsd
# would be: fsync costs what it costs there.
bench_start_vsd() {
	BENCH_DIR=$(mktemp -d "${1:-/var/tmp}/vsd-$BENCH.XXXXXX") || exit 1
	VSH_DIR=$BENCH_DIR
	VSH_ROOT=vsd-$BENCH-$$
	BENCH_SOCK=$BENCH_DIR/vsd.sock
	BENCH_ROOT=$VSH_ROOT
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	if ! vsh_start; then
		cat "$BENCH_DIR/vsd.log" >&2
		bench_die "vsd did not start"
	fi
	BENCH_VSD_PID=$VSH_PID
}

# median, min and max of the numbers on stdin, one a line: "MED MIN MAX"
bench_stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan nan nan"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'
}
