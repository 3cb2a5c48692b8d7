// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's accept records (gates/socket/records.bpf.c): vsd loads
 * the programs and pins them unattached; we attach them for as long as we
 * run (the links go with the process), so they cost nothing while no gate
 * runs: fexit on inet_csk_accept where vsd could load it, else the syscall
 * exit tracepoints of accept and accept4 (a perf event each, which keeps
 * every system call on the machine on the kernel's slow path while open).
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

const char *
records_start(const char *pindir)
{
	int p, q, ok, fa;

	if (strcmp(hook, "none") != 0)
		return hook;
	if ((p = pinned(pindir, VSD_PROG_ACCEPT_FEXIT)) >= 0) {
		ok = bpf_link_create(p, 0, BPF_TRACE_FEXIT, NULL) >= 0;
		close(p);
		if (ok)
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
	/* the events' fds stay open: the attachments live as long as we do;
	 * both or neither (one alone would tax every syscall for nothing) */
	if ((fa = tracepoint_attach(p, "syscalls/sys_exit_accept")) >= 0 &&
	    tracepoint_attach(q, "syscalls/sys_exit_accept4") < 0) {
		close(fa);
		fa = -1;
	}
	ok = fa >= 0;
	if (!ok)
		log_warn("accept records: attach to the syscall tracepoints");
	close(p);
	close(q);
	return ok ? (hook = "tracepoint") : NULL;
}

const char *
records_hook(void)
{
	return hook;
}
