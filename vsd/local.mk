# SPDX-License-Identifier: GPL-2.0-or-later
# libvsd: code shared by vsd, vsctl, the rules library and the gates.
noinst_LIBRARIES += vsd/libvsd.a
vsd_libvsd_a_SOURCES = \
	vsd/log.c vsd/log.h \
	vsd/util.c vsd/util.h \
	vsd/buf.c vsd/buf.h \
	vsd/proto.c vsd/proto.h \
	vsd/registry.c vsd/registry.h \
	vsd/state.c vsd/state.h \
	vsd/cgroup.c vsd/cgroup.h \
	vsd/cgroup-v1.c vsd/cgroup-v2.c \
	vsd/conntab.c vsd/conntab.h \
	vsd/vs.h

sbin_PROGRAMS += vsd/vsd
vsd_vsd_SOURCES = vsd/vsd.c vsd/vsd.h vsd/control.c vsd/cmd-vs.c
vsd_vsd_LDADD = vsd/libvsd.a

bin_PROGRAMS += vsd/vsctl
vsd_vsctl_SOURCES = vsd/vsctl.c
vsd_vsctl_LDADD = vsd/libvsd.a
