# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks: filled in by its issue.
# The insulation (Figure 12) and virtual-host (Figure 11) benchmarks (issue 6).
noinst_PROGRAMS += benchmarks/loadgen
benchmarks_loadgen_SOURCES = benchmarks/loadgen.c
benchmarks_loadgen_LDADD = vsd/libvsd.a
dist_noinst_SCRIPTS += benchmarks/insulation benchmarks/vhosts
dist_noinst_DATA += benchmarks/lib-bench.sh benchmarks/site.conf.in
# The committed full runs (benchmarks/RESULTS.md, README).
dist_noinst_DATA += benchmarks/results/insulation.csv benchmarks/results/insulation.png \
	benchmarks/results/vhosts.csv benchmarks/results/vhosts.png \
	benchmarks/results/vhosts-event.csv benchmarks/results/vhosts-event.png
