#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl/import-basis.h, from the hosting benchmark's results in this tree:
# the memory one gated pool and the per-site pools took serving the same
# two sites, which `vsctl import` bases its consolidation saving on
# (import-out.c). Made at build time, so that the figures vsctl prints are
# the ones the results page shows, never copied by hand.
#   import-basis.sh RESULTS.csv RESULTS.md BENCHMARK >import-basis.h
# RESULTS.csv: the medians of pools_pss_kb over the gated and the per-site
# rows, as benchmarks/bench-report computes them for RESULTS.md's table.
# A pool's processes: its master and its workers, --workers if the run that
# RESULTS.md describes passed it, else BENCHMARK's default.
set -eu
csv=$1 md=$2 bench=$3

die() { echo "import-basis.sh: $*" >&2; exit 1; }

# median MODE: the median of the pools_pss_kb column over MODE's rows
median() {
	awk -F, -v m="$1" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pools_pss_kb") c = i; next }
		c && $1 == m && $c ~ /^[0-9]+$/ { print $c }' "$csv" | sort -n |
	awk '{ v[NR] = $1 }
		END { if (NR) printf "%.0f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

gated=$(median gated)
per_site=$(median per-site)
[ -n "$gated" ] && [ -n "$per_site" ] || die "$csv: no pools_pss_kb for the gated and per-site modes"
[ "$per_site" -gt "$gated" ] || die "$csv: the per-site pools ($per_site kB) take no more than the gated one ($gated kB)"
workers=$(sed -n 's/.*`benchmarks\/hosting [^`]*--workers \([0-9][0-9]*\).*/\1/p' "$md" | head -1)
[ -n "$workers" ] || workers=$(sed -n 's/.*[ 	]WORKERS=\([0-9][0-9]*\).*/\1/p' "$bench" | head -1)
[ -n "$workers" ] || die "$bench: no default WORKERS"

name=benchmarks/results/$(basename "$csv")
cat <<EOF
/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Made by vsctl/import-basis.sh from $name: do not edit. */
#define IMP_BASIS_CSV		"$name"
#define IMP_BASIS_GATED_KIB	${gated}L	/* one gated pool serving both sites */
#define IMP_BASIS_PER_SITE_KIB	${per_site}L	/* one pool per site... */
#define IMP_BASIS_PER_SITE_POOLS	2	/* ...of its two sites, a.example and b.example */
#define IMP_BASIS_PROCS		$((workers + 1))	/* a pool: its master and $workers workers */
EOF
