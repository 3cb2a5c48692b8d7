# SPDX-License-Identifier: GPL-2.0-or-later
# etc: the rule file vsd applies at start (vsd/vsd.service runs
# vsd --rules $(sysconfdir)/vsd/vsd.rules). It declares nothing until the
# operator edits it; the Debian package marks it as a conffile.
vsdconfdir = $(sysconfdir)/vsd
dist_vsdconf_DATA = etc/vsd.rules
