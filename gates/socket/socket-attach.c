// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The socket gate's per-VS part: one pinned bpf_link per hook on the VS's
 * cgroup2 directory, plus its settings in the cgroup storage map.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/util.h"
#include "gate-socket.h"
#include "socket-priv.h"

static int
gs_vsdir(const struct gate_socket *g, uint32_t vs_id, char *buf, size_t len)
{
	return path_fmt(buf, len, "%s/vs%u", g->pindir, vs_id);
}

static int
gs_linkpath(const struct gate_socket *g, uint32_t vs_id, int hook, char *buf, size_t len)
{
	return path_fmt(buf, len, "%s/vs%u/%s", g->pindir, vs_id, gs_hooks[hook].name);
}

/*
 * A pinned link we may adopt: the same cgroup and hook, cgroup still alive
 * (a link whose cgroup was removed reports cgroup id 0).  Moves it to our
 * current program if it runs an older one.  1 adopted, 0 not usable.
 */
static int
gs_adopt_link(struct gate_socket *g, int fd, int hook, uint64_t cgid)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	__u32 len = sizeof(li), plen = sizeof(pi);
	int r;

	if (bpf_obj_get_info_by_fd(fd, &li, &len) < 0 ||
	    li.type != BPF_LINK_TYPE_CGROUP || li.cgroup.cgroup_id != cgid ||
	    li.cgroup.attach_type != gs_hooks[hook].type)
		return 0;
	if (bpf_obj_get_info_by_fd(g->prog_fd[hook], &pi, &plen) < 0)
		return -errno;
	if (li.prog_id != pi.id && (r = bpf_link_update(fd, g->prog_fd[hook], NULL)) < 0) {
		log_warnx("socket gate: cannot move link %s of cgroup %llu to the "
			  "current program: %s", gs_hooks[hook].name,
			  (unsigned long long)cgid, strerror(-r));
		return r;
	}
	return 1;
}

/* fresh: the VS's pin directory was made just now, so there is no pin to adopt. */
static int
gs_attach_hook(struct gate_socket *g, int cgfd, uint64_t cgid, uint32_t vs_id, int hook,
	       int fresh)
{
	char path[PATH_MAX];
	int fd, r;

	if ((r = gs_linkpath(g, vs_id, hook, path, sizeof(path))) < 0)
		return r;
	if (!fresh && (fd = bpf_obj_get(path)) >= 0) {
		r = gs_adopt_link(g, fd, hook, cgid);
		if (r == 0) {
			/* Stale: another cgroup, or its cgroup is gone. */
			bpf_link_detach(fd);
			unlink(path);
		}
		close(fd);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	fd = bpf_link_create(g->prog_fd[hook], cgfd, gs_hooks[hook].type, NULL);
	if (fd < 0) {
		log_warnx("socket gate: cannot attach %s to cgroup %llu: %s",
			  gs_hooks[hook].name, (unsigned long long)cgid, strerror(-fd));
		return fd;
	}
	if ((r = bpf_obj_pin(fd, path)) < 0) {
		r = -errno;
		log_warn("socket gate: cannot pin %s", path);
		bpf_link_detach(fd);
	}
	close(fd);
	return r;
}

static int
gs_write_cfg(struct gate_socket *g, uint64_t cgid, uint32_t vs_id,
	     const struct gate_socket_cfg *cfg)
{
	struct vsd_vscfg v = {
		.vs_id = vs_id,
		.flags = cfg->flags,
		.mark = cfg->mark,
		.priority = cfg->priority,
		.tos = cfg->tos,
		.cgroup_id = cgid,
	};

	/* BPF_EXIST: the storage exists only while we are attached there. */
	if (bpf_map_update_elem(g->map_fd[GS_MAP_VSCFG], &cgid, &v, BPF_EXIST) < 0) {
		int r = -errno;
		log_warn("socket gate: cannot write the settings of VS %u (cgroup %llu)",
			 vs_id, (unsigned long long)cgid);
		return r;
	}
	return 0;
}

/*
 * The VS's counters of its share of the connection table.  Ones that exist
 * already are kept: after a vsd restart they still count the VS's entries.
 */
static int
gs_vsconns_add(struct gate_socket *g, uint32_t vs_id)
{
	struct vsd_vs_conns zero = { 0 };

	if (bpf_map_update_elem(g->map_fd[GS_MAP_VSCONNS], &vs_id, &zero, BPF_NOEXIST) < 0 &&
	    errno != EEXIST) {
		int r = -errno;
		log_warn("socket gate: cannot make the connection counters of VS %u", vs_id);
		return r;
	}
	return 0;
}

int
gate_socket_attach(struct gate_socket *g, const char *cgdir, uint64_t cgid,
		   uint32_t vs_id, const struct gate_socket_cfg *cfg)
{
	char path[PATH_MAX];
	int cgfd, i, r, fresh;

	if (vs_id == 0)
		return -EINVAL;		/* 0 means "no settings" to the programs */
	if ((cgfd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = -errno;
		log_warn("socket gate: %s", cgdir);
		return r;
	}
	if ((r = gs_vsdir(g, vs_id, path, sizeof(path))) < 0)
		goto out;
	fresh = mkdir(path, 0700) == 0;
	if (!fresh && errno != EEXIST) {
		r = -errno;
		log_warn("socket gate: mkdir %s", path);
		goto out;
	}
	for (i = 0; i < GS_NHOOKS; i++)
		if ((r = gs_attach_hook(g, cgfd, cgid, vs_id, i, fresh)) < 0)
			goto undo;
	/* The counters before the settings: vs_id 0 until then, nothing counted. */
	if ((r = gs_vsconns_add(g, vs_id)) < 0 || (r = gs_write_cfg(g, cgid, vs_id, cfg)) < 0)
		goto undo;
	close(cgfd);
	return 0;
undo:
	/* Never leave a VS half-attached. */
	gate_socket_detach(g, vs_id);
out:
	close(cgfd);
	return r;
}

int
gate_socket_update(struct gate_socket *g, uint64_t cgid, uint32_t vs_id,
		   const struct gate_socket_cfg *cfg)
{
	return gs_write_cfg(g, cgid, vs_id, cfg);
}

/*
 * Drops the VS's connection entries: nothing would delete them later.  A
 * walk over the whole mapped table (4 MB; the VS's sockets may sit
 * anywhere), without a bpf() call per entry.
 */
static void
gs_drop_conns(struct gate_socket *g, uint32_t vs_id)
{
	uint32_t pooled;
	int n = conntab_drop_vs(&g->conns, vs_id, &pooled);

	/* What they took from the shared pool goes back; the rest goes below. */
	if (pooled && g->lim)
		__atomic_fetch_sub(&g->lim->pool_used, pooled, __ATOMIC_SEQ_CST);
	if (n)
		log_debug("socket gate: dropped %d connection(s) of VS %u", n, vs_id);
	if (bpf_map_delete_elem(g->map_fd[GS_MAP_VSCONNS], &vs_id) < 0 && errno != ENOENT)
		log_warn("socket gate: cannot remove the connection counters of VS %u", vs_id);
}

int
gate_socket_detach(struct gate_socket *g, uint32_t vs_id)
{
	char path[PATH_MAX];
	int i, fd, r, ret = 0;

	for (i = 0; i < GS_NHOOKS; i++) {
		if ((r = gs_linkpath(g, vs_id, i, path, sizeof(path))) < 0)
			return r;
		if ((fd = bpf_obj_get(path)) < 0) {
			if (errno != ENOENT && !ret)
				ret = -errno;
			continue;
		}
		/* Detach now, even if someone else holds the link open. */
		if ((r = bpf_link_detach(fd)) < 0 && !ret) {
			log_warnx("socket gate: cannot detach %s: %s", path, strerror(-r));
			ret = r;
		}
		close(fd);
		if (unlink(path) < 0 && errno != ENOENT && !ret) {
			ret = -errno;
			log_warn("socket gate: unlink %s", path);
		}
	}
	if ((r = gs_vsdir(g, vs_id, path, sizeof(path))) < 0)
		return r;
	if (rmdir(path) < 0 && errno != ENOENT && !ret) {
		ret = -errno;
		log_warn("socket gate: rmdir %s", path);
	}
	gs_drop_conns(g, vs_id);
	return ret;
}

int
gate_socket_attached(struct gate_socket *g, uint32_t vs_id)
{
	char path[PATH_MAX];
	int r;

	/*
	 * Attach pins all links or none (it rolls back), so one pin tells;
	 * the sockops link, which records the connections, is the one that
	 * matters most.  One access() per VS keeps 'vsctl list' cheap.
	 */
	if ((r = gs_linkpath(g, vs_id, GS_SOCKOPS, path, sizeof(path))) < 0)
		return r;
	return access(path, F_OK) == 0;
}

int
gate_socket_purge(struct gate_socket *g)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned vs_id;
	char extra;
	DIR *d;
	int r, ret = 0;

	if ((d = opendir(g->pindir))) {
		while ((de = readdir(d)))
			if (sscanf(de->d_name, "vs%u%c", &vs_id, &extra) == 1 &&
			    (r = gate_socket_detach(g, vs_id)) < 0 && !ret)
				ret = r;
		closedir(d);
	}
	/* Programs and maps: unpinned, they go with our last fd. */
	if ((d = opendir(g->pindir))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			if (gs_path(g, path, sizeof(path), de->d_name) == 0 &&
			    unlink(path) < 0 && !ret) {
				ret = -errno;
				log_warn("socket gate: unlink %s", path);
			}
		}
		closedir(d);
	}
	if (rmdir(g->pindir) < 0 && !ret) {
		ret = -errno;
		log_warn("socket gate: rmdir %s", g->pindir);
	}
	/*
	 * The parent /sys/fs/bpf/vsd is shared by instances: remove it only if
	 * we were the last (rmdir fails while another instance's directory is
	 * in it); an instance starting at this moment retries its mkdir.
	 */
	rmdir(VSD_BPFFS);
	gate_socket_close(g);
	return ret;
}
