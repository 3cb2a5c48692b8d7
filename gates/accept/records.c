// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's accept records (gates/socket/records.bpf.c): vsd loads
 * the programs and pins them unattached; the first gate attaches them and
 * the others hold the same BPF links (attach(), link_of()), so they stay
 * attached while any gate runs and cost nothing while none does: fexit on
 * inet_csk_accept where vsd could load it, else the syscall exit
 * tracepoints of accept and accept4 (a perf-event link each, which keeps
 * every system call on the machine on the kernel's slow path while held).
 * Attaching needs what --user drops: fp_init() does it first.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "gate.h"
#include "gates/socket/socket.h"
#include "lib/log.h"
#include "lib/tracepoint.h"

static const char *hook = "none";

static int
pinned(const char *pindir, const char *name)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s/%s", pindir, name) >= (int)sizeof(p))
		return -1;
	return bpf_obj_get(p);
}

/*
 * The link that attaches prog already, another gate's: an fd of ours to it
 * (which keeps it attached after that gate has gone), or -1. A program can
 * be attached to a hook once (the kernel says EEXIST for a tracepoint, EBUSY
 * for fexit), and every gate of this vsd uses the same pinned programs.
 */
static int
link_of(int prog)
{
	struct bpf_prog_info pi;
	struct bpf_link_info li;
	__u32 len = sizeof(pi), id = 0;
	int fd;

	memset(&pi, 0, sizeof(pi));
	if (bpf_obj_get_info_by_fd(prog, &pi, &len) < 0)
		return -1;
	while (bpf_link_get_next_id(id, &id) == 0) {
		if ((fd = bpf_link_get_fd_by_id(id)) < 0)
			continue;	/* gone meanwhile */
		memset(&li, 0, sizeof(li));
		len = sizeof(li);
		if (bpf_obj_get_info_by_fd(fd, &li, &len) == 0 && li.prog_id == pi.id)
			return fd;
		close(fd);
	}
	return -1;
}

/* fexit (tp NULL) or the tracepoint tp: a link of ours, or -1 and errno. */
static int
attach(int prog, const char *tp)
{
	int i, fd, e = 0;

	/* a few tries: the gate whose link we found may go before we hold it */
	for (i = 0; i < 3; i++) {
		fd = tp ? tracepoint_attach(prog, tp) : bpf_link_create(prog, 0, BPF_TRACE_FEXIT, NULL);
		if (fd >= 0)
			return fd;
		if ((e = errno) != EEXIST && e != EBUSY)
			break;
		if ((fd = link_of(prog)) >= 0)
			return fd;
	}
	errno = e;
	return -1;
}

const char *
records_start(const char *pindir)
{
	int p, q, fa;

	if (strcmp(hook, "none") != 0)
		return hook;
	/* the links stay open: the attachments live as long as we do (or
	 * another gate holds them) */
	if ((p = pinned(pindir, VSD_PROG_ACCEPT_FEXIT)) >= 0) {
		fa = attach(p, NULL);
		close(p);
		if (fa >= 0)
			return hook = "fexit";
		log_warn("accept records: attach %s", VSD_PROG_ACCEPT_FEXIT);
		return NULL;
	}
	if ((p = pinned(pindir, VSD_PROG_ACCEPT_TP)) < 0 ||
	    (q = pinned(pindir, VSD_PROG_ACCEPT4_TP)) < 0) {
		if (p >= 0)
			close(p);
		log_warnx("accept records: vsd pinned no programs in %s (see its log)", pindir);
		return NULL;
	}
	/* both or neither (one alone would tax every syscall for nothing) */
	if ((fa = attach(p, "syscalls/sys_exit_accept")) >= 0 &&
	    attach(q, "syscalls/sys_exit_accept4") < 0) {
		close(fa);
		fa = -1;
	}
	if (fa < 0)
		log_warn("accept records: attach to the syscall tracepoints");
	close(p);
	close(q);
	return fa >= 0 ? (hook = "tracepoint") : NULL;
}

const char *
records_hook(void)
{
	return hook;
}
