// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The socket gate's loader: load or adopt the programs and maps of
 * gates/socket/socket.bpf.c, attach them to VS cgroups through pinned bpf_links.
 * Listing the connection table is in socket-conns.c.
 *
 * Why one program set for all VSs: loading per VS costs a verifier pass and
 * a copy of every map per VS and does not scale to 1000 VSs; a link per hook
 * and VS costs one small kernel object, and the per-VS settings sit in a
 * cgroup storage map the programs read without a lookup.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <syslog.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/util.h"
#include "gate-socket.h"
#include "socket-priv.h"
#include "gates/socket/socket.skel.h"
#include "gates/socket/records.skel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC	0xcafe4a11
#endif

#define BPFFS_MNT	"/sys/fs/bpf"
#define KERNEL_BTF	"/sys/kernel/btf/vmlinux"

const struct gs_hook gs_hooks[GS_NHOOKS] = {
	{ "sock_create", BPF_CGROUP_INET_SOCK_CREATE },
	{ "sockops",     BPF_CGROUP_SOCK_OPS },
	{ "connect4",    BPF_CGROUP_INET4_CONNECT },
	{ "connect6",    BPF_CGROUP_INET6_CONNECT },
	{ "sendmsg4",    BPF_CGROUP_UDP4_SENDMSG },
	{ "sendmsg6",    BPF_CGROUP_UDP6_SENDMSG },
	{ "setsockopt",  BPF_CGROUP_SETSOCKOPT },
};

static const char *const gs_maps[GS_NMAPS] = {
	VSD_MAP_CONNS, VSD_MAP_VSCFG, VSD_MAP_STATS, VSD_MAP_VSCONNS, VSD_MAP_CONNLIM,
	VSD_MAP_GATED, VSD_MAP_GPORTS, VSD_MAP_RINGS, VSD_MAP_RINGCTL,
};

/* Another instance that stops may remove the shared parent under us: retry. */
static int
gs_mkdirs(const char *path)
{
	int r, tries;

	for (tries = 0; tries < 3; tries++)
		if ((r = mkdir_p(path, 0700)) != -ENOENT)
			break;
	if (r < 0)
		log_warnx("socket gate: mkdir %s: %s", path, strerror(-r));
	return r;
}

/* bpffs is not mounted on every system (here it is not by default). */
static int
gs_bpffs(void)
{
	struct statfs st;

	if (statfs(BPFFS_MNT, &st) == 0 && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir(BPFFS_MNT, 0700) < 0 && errno != EEXIST) {
		int r = -errno;
		log_warn("socket gate: mkdir %s", BPFFS_MNT);
		return r;
	}
	if (mount("bpf", BPFFS_MNT, "bpf", 0, "mode=0700") < 0) {
		int r = -errno;
		/* Somebody else may have mounted it meanwhile. */
		if (statfs(BPFFS_MNT, &st) == 0 && st.f_type == BPF_FS_MAGIC)
			return 0;
		log_warn("socket gate: cannot mount bpffs on %s", BPFFS_MNT);
		return r;
	}
	log_info("socket gate: mounted bpffs on %s", BPFFS_MNT);
	return 0;
}

/* What the gate needs from the kernel, each named when missing. */
static int
gs_check_kernel(void)
{
	static const struct { enum bpf_prog_type type; const char *name; } need[] = {
		{ BPF_PROG_TYPE_CGROUP_SOCK,      "cgroup/sock_create" },
		{ BPF_PROG_TYPE_SOCK_OPS,         "sockops" },
		{ BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "cgroup/connect and sendmsg" },
		{ BPF_PROG_TYPE_CGROUP_SOCKOPT,   "cgroup/setsockopt (Linux 5.3)" },
	};
	size_t i;

	if (access(KERNEL_BTF, R_OK) < 0) {
		log_warnx("socket gate: the kernel has no BTF (%s is missing; "
			  "it needs CONFIG_DEBUG_INFO_BTF=y)", KERNEL_BTF);
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(need); i++) {
		if (libbpf_probe_bpf_prog_type(need[i].type, NULL) != 1) {
			log_warnx("socket gate: the kernel cannot run %s programs "
				  "(it needs CONFIG_CGROUP_BPF=y and CONFIG_BPF_SYSCALL=y)",
				  need[i].name);
			return -ENOTSUP;
		}
	}
	return 0;
}

int
gs_path(const struct gate_socket *g, char *buf, size_t len, const char *name)
{
	return path_fmt(buf, len, "%s/%s", g->pindir, name);
}

static void
gs_close_fds(struct gate_socket *g)
{
	int i;

	conntab_unmap(&g->conns);
	if (g->lim)
		munmap(g->lim, g->limlen);
	g->lim = NULL;
	for (i = 0; i < GS_NHOOKS; i++) {
		if (g->prog_fd[i] >= 0)
			close(g->prog_fd[i]);
		g->prog_fd[i] = -1;
	}
	for (i = 0; i < GS_NMAPS; i++) {
		if (g->map_fd[i] >= 0)
			close(g->map_fd[i]);
		g->map_fd[i] = -1;
	}
}

/*
 * May we keep a pinned program instead of the one just loaded?  Only if it
 * is the same code (the tag hashes the instructions, map references left
 * out) and it uses the maps pinned next to it, which we reuse (every
 * program uses vsd_vscfg).
 */
static int
gs_same_prog(int pinned_fd, int new_fd, int map_fd)
{
	struct bpf_prog_info a = {}, b = {};
	struct bpf_map_info mi = {};
	__u32 ids[8], alen = sizeof(a), blen = sizeof(b), mlen = sizeof(mi), i;

	a.nr_map_ids = ARRAY_SIZE(ids);
	a.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pinned_fd, &a, &alen) < 0 ||
	    bpf_obj_get_info_by_fd(new_fd, &b, &blen) < 0 ||
	    bpf_obj_get_info_by_fd(map_fd, &mi, &mlen) < 0 ||
	    a.type != b.type || memcmp(a.tag, b.tag, sizeof(a.tag)))
		return 0;
	for (i = 0; i < a.nr_map_ids && i < ARRAY_SIZE(ids); i++)
		if (ids[i] == mi.id)
			return 1;
	return 0;
}

/*
 * A pinned map that the object's cannot replace (libbpf would refuse to
 * load): an older vsd's, such as the hash map that held the connections
 * before the open-addressed table.  It is unpinned, and a new one made:
 * the old programs keep theirs until the VS links move to the new
 * programs, and the connections it recorded are not listed any more.
 */
static void
gs_drop_stale_pin(struct bpf_map *m, const char *path)
{
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int fd;

	if ((fd = bpf_obj_get(path)) < 0)
		return;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) == 0 &&
	    (mi.type != bpf_map__type(m) || mi.key_size != bpf_map__key_size(m) ||
	     mi.value_size != bpf_map__value_size(m) ||
	     mi.max_entries != bpf_map__max_entries(m) ||
	     mi.map_flags != bpf_map__map_flags(m))) {
		log_warnx("socket gate: %s has another layout (an older vsd's); replacing it, "
			  "its entries are lost", path);
		unlink(path);
	}
	close(fd);
}

static int
quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/*
 * The accept gates' accept records (records.bpf.c; socket.h, "Gated
 * listeners"), loaded on our maps with fexit (only accepts pay) or, where
 * the kernel refuses it (the try is quiet), the syscall exit tracepoints,
 * and pinned unattached: an accept gate attaches them for as long as it
 * runs (gates/accept/records.c), so they cost nothing while none does.
 * The pins of the kind not loaded go. Without them the gates keep their
 * listeners off the fast path: not fatal here.
 */
static void
gs_load_records(struct gate_socket *g, uint32_t slots)
{
	static const char *const pins[] = {
		VSD_PROG_ACCEPT_FEXIT, VSD_PROG_ACCEPT_TP, VSD_PROG_ACCEPT4_TP,
	};
	struct records_bpf *s = NULL;
	struct bpf_program *progs[3];
	char path[PATH_MAX];
	int fexit, i, r = -1;

	for (i = 0; i < 3; i++)
		if (gs_path(g, path, sizeof(path), pins[i]) == 0)
			unlink(path);
	for (fexit = 1; fexit >= 0 && r < 0; fexit--) {
		records_bpf__destroy(s);
		if (fexit)
			libbpf_set_print(quiet);
		if (!(s = records_bpf__open())) {
			bpf_log_init();
			continue;
		}
		progs[0] = s->progs.vsd_accept_fexit;
		progs[1] = s->progs.vsd_accept_tp;
		progs[2] = s->progs.vsd_accept4_tp;
		for (i = 0; i < 3; i++)
			bpf_program__set_autoload(progs[i], fexit ? i == 0 : i > 0);
		s->rodata->conns_mask = slots - 1;
		if (bpf_map__reuse_fd(s->maps.vsd_conns, g->map_fd[GS_MAP_CONNS]) == 0 &&
		    bpf_map__reuse_fd(s->maps.vsd_gated, g->map_fd[GS_MAP_GATED]) == 0 &&
		    bpf_map__reuse_fd(s->maps.vsd_gports, g->map_fd[GS_MAP_GPORTS]) == 0 &&
		    bpf_map__reuse_fd(s->maps.vsd_rings, g->map_fd[GS_MAP_RINGS]) == 0 &&
		    bpf_map__reuse_fd(s->maps.vsd_ringctl, g->map_fd[GS_MAP_RINGCTL]) == 0)
			r = records_bpf__load(s);
		bpf_log_init();
	}
	for (i = 0; r == 0 && i < 3; i++) {
		if (!bpf_program__autoload(progs[i]))
			continue;
		if (gs_path(g, path, sizeof(path), pins[i]) < 0 ||
		    (r = bpf_program__pin(progs[i], path)) < 0)
			log_warnx("socket gate: cannot pin %s: %s", path, strerror(-r));
	}
	if (r < 0)
		log_warnx("socket gate: the kernel takes neither the fexit program nor the "
			  "syscall tracepoints of the accept records: accept gates keep their "
			  "listeners off the fast path");
	else	/* the loop stepped past the kind that loaded */
		log_debug("socket gate: accept records by %s", fexit == 0 ? "fexit" : "tracepoint");
	records_bpf__destroy(s);
}

/*
 * Loads the programs, reusing the pinned maps (libbpf checks that they
 * fit), so the connection table survives.  Where the same program is
 * already pinned, it is adopted and the new copy dropped; otherwise (first
 * start, or a new vsd version) the new one replaces the pin, and the VS
 * links move to it when vsd attaches them again (gate_socket_attach).
 * Loading also proves that this kernel's verifier takes the programs,
 * before any VS depends on them.  Returns the number of adopted programs.
 */
static int
gs_load(struct gate_socket *g)
{
	static const char *const prog_names[GS_NHOOKS] = {
		"vsd_sock_create", "vsd_sockops", "vsd_connect4", "vsd_connect6",
		"vsd_sendmsg4", "vsd_sendmsg6", "vsd_setsockopt",
	};
	struct bpf_program *progs[GS_NHOOKS];
	struct bpf_map *maps[GS_NMAPS];
	struct bpf_object *obj;
	const char *file = getenv("VSD_SOCKET_BPF_OBJ");
	char path[PATH_MAX], name[64];
	const void *elf;
	size_t elfsz;
	int i, r, fd, nadopted = 0;

	/*
	 * The object built into vsd (the skeleton's copy), or for testing
	 * and debugging one named by VSD_SOCKET_BPF_OBJ.
	 */
	if (file) {
		obj = bpf_object__open_file(file, NULL);
	} else {
		elf = socket_bpf__elf_bytes(&elfsz);
		obj = bpf_object__open_mem(elf, elfsz, NULL);
	}
	if (!obj) {
		r = -errno;
		log_warnx("socket gate: cannot open the BPF object%s%s: %s",
			  file ? " " : "", file ? file : "", strerror(-r));
		return r;
	}
	for (i = 0; i < GS_NMAPS; i++)
		if (!(maps[i] = bpf_object__find_map_by_name(obj, gs_maps[i])))
			break;
	for (r = 0; r < GS_NHOOKS; r++)
		if (!(progs[r] = bpf_object__find_program_by_name(obj, prog_names[r])))
			break;
	if (i < GS_NMAPS || r < GS_NHOOKS) {
		log_warnx("socket gate: the BPF object lacks %s",
			  i < GS_NMAPS ? gs_maps[i] : prog_names[r]);
		r = -EINVAL;
		goto out;
	}

	for (i = 0; i < GS_NMAPS; i++) {
		if ((r = gs_path(g, path, sizeof(path), gs_maps[i])) < 0 ||
		    (r = bpf_map__set_pin_path(maps[i], path)) < 0)
			goto out;
		gs_drop_stale_pin(maps[i], path);
	}
	if ((r = bpf_object__load(obj)) < 0) {
		/* libbpf has logged the verifier's message through us. */
		log_warnx("socket gate: the kernel refused the BPF programs: %s",
			  strerror(-r));
		goto out;
	}
	for (i = 0; i < GS_NMAPS; i++) {
		if ((g->map_fd[i] = fcntl(bpf_map__fd(maps[i]), F_DUPFD_CLOEXEC, 3)) < 0) {
			r = -errno;
			goto out;
		}
	}
	gs_load_records(g, bpf_map__max_entries(maps[GS_MAP_CONNS]));
	if ((r = conntab_map(&g->conns, g->map_fd[GS_MAP_CONNS], 1)) < 0) {
		log_warnx("socket gate: cannot map the connection table: %s", strerror(-r));
		goto out;
	}
	g->limlen = (size_t)sysconf(_SC_PAGESIZE);
	g->lim = mmap(NULL, g->limlen, PROT_READ | PROT_WRITE, MAP_SHARED,
		      g->map_fd[GS_MAP_CONNLIM], 0);
	if (g->lim == MAP_FAILED) {
		r = -errno;
		g->lim = NULL;
		log_warn("socket gate: cannot map %s", VSD_MAP_CONNLIM);
		goto out;
	}
	for (i = 0; i < GS_NHOOKS; i++) {
		snprintf(name, sizeof(name), "prog_%s", gs_hooks[i].name);
		if ((r = gs_path(g, path, sizeof(path), name)) < 0)
			goto out;
		if ((fd = bpf_obj_get(path)) >= 0) {
			if (gs_same_prog(fd, bpf_program__fd(progs[i]),
					 g->map_fd[GS_MAP_VSCFG])) {
				g->prog_fd[i] = fd;
				nadopted++;
				continue;
			}
			close(fd);
			unlink(path);
		}
		if ((r = bpf_program__pin(progs[i], path)) < 0) {
			log_warnx("socket gate: cannot pin %s: %s", path, strerror(-r));
			goto out;
		}
		if ((g->prog_fd[i] = fcntl(bpf_program__fd(progs[i]), F_DUPFD_CLOEXEC, 3)) < 0) {
			r = -errno;
			goto out;
		}
	}
	r = nadopted;
out:
	if (r < 0)
		gs_close_fds(g);
	bpf_object__close(obj);
	return r;
}

int
gate_socket_open(const char *cgroup_root, struct gate_socket **gp, int *adopted)
{
	struct gate_socket *g;
	int i, r;

	bpf_log_init();
	if ((r = gs_bpffs()) < 0 || (r = gs_check_kernel()) < 0)
		return r;
	if (!(g = calloc(1, sizeof(*g))))
		return -ENOMEM;
	for (i = 0; i < GS_NHOOKS; i++)
		g->prog_fd[i] = -1;
	for (i = 0; i < GS_NMAPS; i++)
		g->map_fd[i] = -1;
	while (*cgroup_root == '/')
		cgroup_root++;
	if ((r = path_fmt(g->pindir, sizeof(g->pindir), "%s/%s", VSD_BPFFS,
			  cgroup_root)) < 0 ||
	    (r = gs_mkdirs(g->pindir)) < 0)
		goto fail;
	if ((r = gs_load(g)) < 0)
		goto fail;
	if (adopted)
		*adopted = r == GS_NHOOKS;
	log_debug("socket gate: %s programs in %s", r == GS_NHOOKS ? "adopted" : "loaded",
		  g->pindir);
	*gp = g;
	return 0;
fail:
	rmdir(g->pindir);	/* only if we left it empty */
	free(g);
	return r;
}

void
gate_socket_close(struct gate_socket *g)
{
	if (!g)
		return;
	gs_close_fds(g);
	free(g);
}

const char *
gate_socket_pindir(const struct gate_socket *g)
{
	return g->pindir;
}
