# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl: the command-line client. vsctl.c talks to vsd; run.c starts a
# service under the accept gate (it execs vsd-gate); check.c checks rule
# files offline, without a daemon; out.c reports errors (exit statuses of
# lib/exitcode.h, JSON under --json) and holds the help texts; import*.c
# write a rule file from the web server and PHP-FPM configuration.
# Tests: tests/vsd-*.sh, tests/gate-vsd.sh, tests/rules-*.sh.
bin_PROGRAMS += vsctl/vsctl
vsctl_vsctl_SOURCES = vsctl/vsctl.c vsctl/run.c vsctl/vsctl.h vsctl/check.c vsctl/out.c vsctl/top.c \
	vsctl/import.c vsctl/import.h vsctl/import-sites.c vsctl/import-apache.c vsctl/import-nginx.c \
	vsctl/import-fpm.c vsctl/import-fold.c vsctl/import-fold.h vsctl/import-out.c
# import-basis.h: the pool memory the hosting benchmark measured, which
# import's consolidation saving rests on, read from its results at build time
nodist_vsctl_vsctl_SOURCES = vsctl/import-basis.h
BUILT_SOURCES += vsctl/import-basis.h
CLEANFILES += vsctl/import-basis.h
dist_noinst_SCRIPTS += vsctl/import-basis.sh
IMPORT_BASIS = $(srcdir)/benchmarks/results/hosting.csv $(srcdir)/benchmarks/results/hosting.md \
	$(srcdir)/benchmarks/hosting
vsctl/import-basis.h: $(srcdir)/vsctl/import-basis.sh $(IMPORT_BASIS)
	$(AM_V_GEN)$(MKDIR_P) vsctl && \
	$(SHELL) $(srcdir)/vsctl/import-basis.sh $(IMPORT_BASIS) >$@.tmp && mv $@.tmp $@
# Bash completion, installed as "vsctl" where bash-completion loads it on
# demand (--with-bashcompletiondir, configure.ac). Test: tests/vsctl-completion.sh.
dist_bashcompletion_DATA = vsctl/bash-completion/vsctl
vsctl_vsctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
vsctl_vsctl_LDADD = rules/librules.a lib/libvsd.a $(JSONC_LIBS)
