// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's accept records (records.bpf.c): loaded on vsd's pinned
 * maps and attached for as long as the gate runs (the links go with the
 * process). fexit on inet_csk_accept where the kernel takes it (it costs
 * only accepts); else the syscall exit tracepoints of accept and accept4,
 * which make every system call on the machine take the slow path while
 * attached.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.h"
#include "gates/socket/socket.h"
#include "gates/socket/gate-socket.h"
#include "gates/accept/records.skel.h"
#include "lib/log.h"

static struct records_bpf *skel;
static const char *hook = "none";

static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static int
reuse(struct bpf_map *m, const char *pindir, const char *name, uint32_t *max)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	char p[PATH_MAX];
	int fd, r;

	if (snprintf(p, sizeof(p), "%s/%s", pindir, name) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	if ((fd = bpf_obj_get(p)) < 0)
		return -errno;
	if (max && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
		*max = info.max_entries;
	r = bpf_map__reuse_fd(m, fd);
	close(fd);	/* reuse_fd holds its own */
	return r;
}

/* Loaded and attached with the fexit program or the tracepoints; NULL if
 * the kernel refuses (the fexit try is quiet: a locked-down kernel says no). */
static struct records_bpf *
load(const char *pindir, int fexit)
{
	struct records_bpf *s;
	uint32_t slots = 0;

	if (fexit)
		libbpf_set_print(quiet);
	if (!(s = records_bpf__open()))
		goto fail;
	bpf_program__set_autoload(s->progs.vsd_accept_fexit, fexit);
	bpf_program__set_autoload(s->progs.vsd_accept4_tp, !fexit);
	bpf_program__set_autoload(s->progs.vsd_accept_tp, !fexit);
	if (reuse(s->maps.vsd_conns, pindir, VSD_MAP_CONNS, &slots) < 0 ||
	    reuse(s->maps.vsd_gated, pindir, VSD_MAP_GATED, NULL) < 0 ||
	    reuse(s->maps.vsd_gports, pindir, VSD_MAP_GPORTS, NULL) < 0 ||
	    reuse(s->maps.vsd_rings, pindir, VSD_MAP_RINGS, NULL) < 0 ||
	    reuse(s->maps.vsd_ringctl, pindir, VSD_MAP_RINGCTL, NULL) < 0 ||
	    slots == 0 || (slots & (slots - 1)))
		goto fail;
	s->rodata->conns_mask = slots - 1;
	if (records_bpf__load(s) < 0 || records_bpf__attach(s) < 0)
		goto fail;
	if (fexit)
		bpf_log_init();
	return s;
fail:
	if (fexit)
		bpf_log_init();
	records_bpf__destroy(s);
	return NULL;
}

const char *
records_start(const char *pindir)
{
	if (!skel && (skel = load(pindir, 1)))
		hook = "fexit";
	else if (!skel && (skel = load(pindir, 0)))
		hook = "tracepoint";
	return skel ? hook : NULL;
}

const char *
records_hook(void)
{
	return hook;
}
