# SPDX-License-Identifier: GPL-2.0-or-later
# vsd: the daemon. vsd.c (start-up, adoption, signals), control.c (who may
# use the control socket, which command answers), clients.c (its connections,
# served from the poll loop with deadlines and a cap), one file per group of
# commands (cmd-*.c), the registry and its state file, the per-VS side of the
# socket gate (gate-vs.c) and rule-file application (apply.c), the VS table
# and rules pushed to the accept gates (gate-push.c), limits changed
# behind vsd's back (drift.c), the VSs' systemd scope (scope.c), the
# readiness protocol (sd-notify.c), `vsd --check` (features.c), and the unit.
# Tests: tests/vsd-*.sh, tests/socket-gate-vsd.sh, tests/gate-vsd.sh,
# tests/rules-apply.sh, tests/gate-push.sh, tests/unit/test-state.c; network
# shares (netshare.c): tests/net-share.sh.

# The registry and its state file, also linked by the unit tests.
noinst_LIBRARIES += vsd/libregistry.a
vsd_libregistry_a_SOURCES = \
	vsd/registry.c vsd/registry.h \
	vsd/state.c vsd/state.h

sbin_PROGRAMS += vsd/vsd
vsd_vsd_SOURCES = \
	vsd/vsd.c vsd/vsd.h \
	vsd/control.c vsd/clients.c \
	vsd/cmd-vs.c vsd/cmd-conns.c vsd/cmd-gate.c \
	vsd/cmd-stats.c vsd/stats.h vsd/metrics.c vsd/metrics.h vsd/vs-services.c \
	vsd/drift.c vsd/drift.h \
	vsd/gate-vs.c vsd/gate-vs.h \
	vsd/netshare.c vsd/netshare.h \
	vsd/apply.c vsd/apply.h vsd/applied.c vsd/apply-diff.c \
	vsd/services.c vsd/services.h vsd/guard.c vsd/guard.h \
	vsd/gate-push.c \
	vsd/member.c vsd/member-apply.c vsd/member.h \
	vsd/fork-gate.c vsd/fork-gate.h \
	vsd/remote.c vsd/remote.h \
	vsd/scope.c vsd/scope.h \
	vsd/sd-notify.c vsd/sd-notify.h \
	vsd/features.c vsd/features.h
vsd_vsd_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
vsd_vsd_LDADD = vsd/libregistry.a rules/librules.a $(GATENET_LIBS) $(GATESOCKET_LIBS) $(LIBNFTABLES_LIBS) $(JSONC_LIBS)

# The systemd unit, in --with-systemdsystemunitdir (configure.ac).
systemdsystemunit_DATA = vsd/vsd.service
EXTRA_DIST += vsd/vsd.service.in
CLEANFILES += vsd/vsd.service
vsd/vsd.service: $(srcdir)/vsd/vsd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) vsd && sed -e 's|@sbindir[@]|$(sbindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' $(srcdir)/vsd/vsd.service.in >$@.tmp && \
	mv $@.tmp $@
