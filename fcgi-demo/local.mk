# SPDX-License-Identifier: GPL-2.0-or-later
# fcgi-demo: the shared "advertisement banner" FastCGI server of the
# insulation experiment, built only where the FastCGI devkit is installed
# (configure says when it is skipped).
# Tests: tests/insulation-tiny.sh (through benchmarks/insulation).
if HAVE_FCGI
noinst_PROGRAMS += fcgi-demo/adserver
fcgi_demo_adserver_SOURCES = fcgi-demo/adserver.c
fcgi_demo_adserver_LDADD = lib/libvsd.a -lfcgi
endif
