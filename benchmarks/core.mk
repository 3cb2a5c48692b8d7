# SPDX-License-Identifier: GPL-2.0-or-later
# The core benchmarks (issue 2): CPU-share fidelity and scale.
# Run from the build tree as root, e.g. benchmarks/cpushare; see benchmarks/RESULTS.md.
dist_noinst_SCRIPTS += benchmarks/cpushare
EXTRA_DIST += benchmarks/lib-vsd.sh
CLEANFILES += cpushare.csv
