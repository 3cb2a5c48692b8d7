# SPDX-License-Identifier: GPL-2.0-or-later
# fcgi-demo: the shared "advertisement banner" FastCGI server of the
# insulation experiment (issue 6).
noinst_PROGRAMS += fcgi-demo/adserver
fcgi_demo_adserver_SOURCES = fcgi-demo/adserver.c
fcgi_demo_adserver_LDADD = vsd/libvsd.a -lfcgi

# A few seconds of the insulation and virtual-host benchmarks end to end
# (benchmarks/insulation, benchmarks/vhosts): real Apache, FastCGI, cgroups.
TESTS += tests/insulation-tiny.sh
dist_noinst_SCRIPTS += tests/insulation-tiny.sh
