# SPDX-License-Identifier: GPL-2.0-or-later
# Socket gate tests (issue 3); included from gates/local.mk.
check_PROGRAMS += tests/sg-helper tests/sg-loader
tests_sg_helper_SOURCES = tests/sg-helper.c
tests_sg_loader_SOURCES = tests/sg-loader.c
tests_sg_loader_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_sg_loader_LDADD = $(GATESOCKET_LIBS)

TESTS += tests/socket-gate.sh
dist_noinst_SCRIPTS += tests/socket-gate.sh
