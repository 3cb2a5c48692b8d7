# SPDX-License-Identifier: GPL-2.0-or-later
# The core benchmarks (issue 2): CPU-share fidelity and scale. Run them as
# root from the build tree (benchmarks/cpushare, benchmarks/scale); they start
# a private vsd each. Figures: benchmarks/RESULTS.md.
dist_noinst_SCRIPTS += benchmarks/cpushare benchmarks/scale
EXTRA_DIST += benchmarks/lib-vsd.sh benchmarks/RESULTS.md
CLEANFILES += cpushare.csv scale.csv

# vsd-bulk: many requests from one process (the scale benchmark's breakdown).
noinst_PROGRAMS += benchmarks/vsd-bulk
benchmarks_vsd_bulk_SOURCES = benchmarks/vsd-bulk.c
benchmarks_vsd_bulk_LDADD = vsd/libvsd.a
