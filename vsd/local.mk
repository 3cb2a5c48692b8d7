# SPDX-License-Identifier: GPL-2.0-or-later
# libvsd: code shared by vsd, vsctl, the rules library and the gates.
noinst_LIBRARIES += vsd/libvsd.a
vsd_libvsd_a_SOURCES = \
	vsd/log.c vsd/log.h \
	vsd/util.c vsd/util.h \
	vsd/buf.c vsd/buf.h
