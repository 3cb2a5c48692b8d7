// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Classification of Unix stream connections: the VS of the connecting side is
 * the VS its socket was created in, read by unixpeer.bpf.c (why a socket's
 * cgroup and not a process: see there and docs/DESIGN.md, "Unix sockets").
 *
 * The iterator is loaded and attached to our own file table once, at start,
 * while we still hold CAP_PERFMON/CAP_SYS_ADMIN (tracing programs need
 * them); each lookup afterwards is one BPF_ITER_CREATE, one read and one
 * close (CAP_BPF, which the supervisor keeps: Linux 6.1 refuses every bpf()
 * call without it while unprivileged BPF is off). If the kernel cannot load
 * it (no BTF, older than 6.1), Unix connections are served in the home VS,
 * as unknown TCP connections are, and we say so at the first one.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.h"
#include "unixpeer.h"
#include "gates/socket/gate-socket.h"
#include "gates/accept/unixpeer.skel.h"
#include "lib/log.h"

static struct unixpeer_bpf *skel;
static struct bpf_link *iter_link;
static int failed;		/* -errno of the load, once it failed */
static int warned;

int
unixpeer_init(void)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, o);
	union bpf_iter_link_info li = { .task.pid = (__u32)getpid() };
	int r;

	if (skel)
		return 0;
	bpf_log_init();
	o.link_info = &li;
	o.link_info_len = sizeof(li);
	if (!(skel = unixpeer_bpf__open_and_load())) {
		r = -errno;
		goto fail;
	}
	if (!(iter_link = bpf_program__attach_iter(skel->progs.unixpeer, &o))) {
		r = -errno;
		unixpeer_bpf__destroy(skel);
		skel = NULL;
		goto fail;
	}
	return 0;
fail:
	/* said when a Unix listener first needs it: a TCP-only service on an
	 * older kernel has nothing to be warned about */
	failed = r;
	log_debug("Unix peer iterator: %s", strerror(-r));
	return r;
}

/* The cgroup2 ids of fd's peer socket's cgroup and its ancestors; how many. */
static int
peer_cgroups(int fd, uint64_t *ids)
{
	struct unixpeer_rec rec;
	ssize_t n;
	int ifd, i;

	if (!skel || fd < 0) {
		if (failed && !warned++)
			log_warnx("Unix socket peers cannot be classified on this kernel (%s): "
			    "their connections are served in the home VS", strerror(-failed));
		return 0;
	}
	skel->bss->fd_lo = skel->bss->fd_hi = (__u32)fd;
	if ((ifd = bpf_iter_create(bpf_link__fd(iter_link))) < 0)
		return 0;
	n = read(ifd, &rec, sizeof(rec));
	close(ifd);
	if (n != (ssize_t)sizeof(rec) || rec.fd != (__u32)fd)
		return 0;
	for (i = 0; i < UNIXPEER_DEPTH && rec.cg[i]; i++)
		ids[i] = rec.cg[i];
	return i;
}

uint64_t
vs_cg2_id(struct gate_vs *v)
{
	return cgh_cg2_id(&v->cg);
}

uint32_t
unixpeer_lookup(struct vs_table *t, int fd)
{
	uint64_t ids[UNIXPEER_DEPTH];
	int n = peer_cgroups(fd, ids), i;
	size_t k;

	/* the deepest VS directory the socket's cgroup is in or under */
	for (i = 0; i < n; i++)
		for (k = 0; k < t->n; k++)
			if (vs_cg2_id(&t->v[k]) == ids[i])
				return t->v[k].id;
	return 0;
}
