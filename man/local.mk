# SPDX-License-Identifier: GPL-2.0-or-later
# Manual pages, and the systemd unit (installed under $(prefix), so that
# 'make distcheck' and DESTDIR installs work without root).
#
# Later issues add their pages below this line.
dist_man_MANS += man/vsd.8 man/vsctl.8
dist_man_MANS += man/vsctl-run.8

systemdunitdir = $(prefix)/lib/systemd/system
systemdunit_DATA = vsd.service
EXTRA_DIST += vsd.service.in
CLEANFILES += vsd.service
vsd.service: $(srcdir)/vsd.service.in Makefile
	$(AM_V_GEN)sed -e 's|@sbindir[@]|$(sbindir)|g' $(srcdir)/vsd.service.in >$@.tmp && mv $@.tmp $@
