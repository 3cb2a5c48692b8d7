# SPDX-License-Identifier: GPL-2.0-or-later
# fcgi-demo: the shared "advertisement banner" FastCGI server of the
# insulation experiment, built only where the FastCGI devkit is installed
# (configure says when it is skipped). Installed as
# $(pkglibexecdir)/fcgi-adserver, which rules/examples/fcgi-insulation.rules
# declares as its service.
# Tests: tests/insulation-tiny.sh (through benchmarks/insulation),
# tests/rules-examples-apply.sh.
if HAVE_FCGI
noinst_PROGRAMS += fcgi-demo/adserver
fcgi_demo_adserver_SOURCES = fcgi-demo/adserver.c
fcgi_demo_adserver_LDADD = lib/libvsd.a -lfcgi

install-exec-local: install-fcgi-adserver
install-fcgi-adserver: fcgi-demo/adserver
	$(MKDIR_P) $(DESTDIR)$(pkglibexecdir)
	$(INSTALL_PROGRAM) fcgi-demo/adserver $(DESTDIR)$(pkglibexecdir)/fcgi-adserver
uninstall-local: uninstall-fcgi-adserver
uninstall-fcgi-adserver:
	rm -f $(DESTDIR)$(pkglibexecdir)/fcgi-adserver
.PHONY: install-fcgi-adserver uninstall-fcgi-adserver bench-report
endif
