# SPDX-License-Identifier: GPL-2.0-or-later
# The core benchmarks (issue 2): CPU-share fidelity and scale.
# Run from the build tree as root, e.g. benchmarks/cpushare; see benchmarks/RESULTS.md.
dist_noinst_SCRIPTS += benchmarks/cpushare
EXTRA_DIST += benchmarks/lib-vsd.sh
CLEANFILES += cpushare.csv

# vsd-bulk: many requests from one process (the scale benchmark's breakdown).
noinst_PROGRAMS += benchmarks/vsd-bulk
benchmarks_vsd_bulk_SOURCES = benchmarks/vsd-bulk.c
benchmarks_vsd_bulk_LDADD = vsd/libvsd.a
dist_noinst_SCRIPTS += benchmarks/scale
CLEANFILES += scale.csv
