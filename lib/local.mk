# SPDX-License-Identifier: GPL-2.0-or-later
# lib: what every program shares: logging, small utilities, the growable
# buffer and its JSON writer, the control protocol, and the cgroup backend
# (one for vsd and the accept gate; v1, hybrid and pure v2 behind cg_ops;
# the gate's per-VS handle, cgroup-handle.h, decides the layout for it,
# with its threaded and capped children, cgroup-threaded.c and
# cgroup-capped.c),
# and privs.c: running as a user, keeping only the capabilities one uses.
# Depends on nothing else in the tree.
# Tests: tests/unit/test-util.c, test-proto.c, test-cgroup-v2.c,
# test-cgroup-handle.c.
noinst_LIBRARIES += lib/libvsd.a
lib_libvsd_a_SOURCES = \
	lib/log.c lib/log.h \
	lib/util.c lib/util.h lib/file-replace.c \
	lib/buf.c lib/buf.h \
	lib/proto.c lib/proto.h \
	lib/usock.c lib/usock.h \
	lib/cgroup.c lib/cgroup.h \
	lib/cgroup-v1.c lib/cgroup-v2.c lib/cgroup-fast.c lib/cgroup-async.c \
	lib/cgroup-handle.c lib/cgroup-handle.h lib/cgroup-threaded.c \
	lib/cgroup-capped.c \
	lib/cgroup-events.c \
	lib/privs.c lib/privs-fs.c lib/privs.h \
	lib/netrate.c lib/netrate.h \
	lib/exitcode.c lib/exitcode.h \
	lib/tracepoint.c lib/tracepoint.h \
	lib/vs.h lib/remote-mark.h
