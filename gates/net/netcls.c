// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The network share classifier's loader. The program is not pinned: each
 * filter holds the program it was attached with, and vsd replaces the
 * filter on every device it adopts. The map is pinned, so the filters
 * of the last run keep classifying while vsd is away and after it came
 * back (they read the same map).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/util.h"
#include "netcls.h"
#include "netcls-load.h"
#include "gates/net/netcls.skel.h"

struct netcls {
	struct netcls_bpf	*skel;
	char			 pin[PATH_MAX];
};

int
netcls_open(const char *pindir, unsigned vs_level, struct netcls **out)
{
	struct netcls *n;
	int fd = -1, r;

	if (!(n = calloc(1, sizeof(*n))))
		return -ENOMEM;
	if ((r = path_fmt(n->pin, sizeof(n->pin), "%s/%s", pindir, VSD_MAP_NETCLS)) < 0)
		goto fail;
	if (!(n->skel = netcls_bpf__open())) {
		r = -errno;
		log_warnx("network shares: cannot open the classifier: %s", strerror(-r));
		goto fail;
	}
	n->skel->rodata->vs_level = vs_level;
	if ((fd = bpf_obj_get(n->pin)) >= 0 &&
	    (r = bpf_map__reuse_fd(n->skel->maps.vsd_netcls, fd)) < 0) {
		log_warnx("network shares: %s is not the classifier's map: %s", n->pin,
			  strerror(-r));
		goto fail;
	}
	if ((r = netcls_bpf__load(n->skel)) < 0) {
		log_warnx("network shares: the kernel refused the classifier: %s (see above)",
			  strerror(-r));
		goto fail;
	}
	if (fd < 0 && (r = bpf_map__pin(n->skel->maps.vsd_netcls, n->pin)) < 0) {
		log_warnx("network shares: cannot pin %s: %s", n->pin, strerror(-r));
		goto fail;
	}
	if (fd >= 0)
		close(fd);
	*out = n;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	netcls_bpf__destroy(n->skel);
	free(n);
	return r;
}

void
netcls_close(struct netcls *n)
{
	if (!n)
		return;
	netcls_bpf__destroy(n->skel);
	free(n);
}

void
netcls_unpin(struct netcls *n)
{
	if (n && unlink(n->pin) < 0 && errno != ENOENT)
		log_warn("network shares: unlink %s", n->pin);
}

int
netcls_prog_fd(const struct netcls *n)
{
	return bpf_program__fd(n->skel->progs.vsd_netcls_classify);
}

int
netcls_set(struct netcls *n, uint64_t cgid, int ifindex, uint16_t minor)
{
	struct netcls_key k = { .cgid = cgid, .ifindex = (uint32_t)ifindex };
	uint32_t v = minor;

	return bpf_map_update_elem(bpf_map__fd(n->skel->maps.vsd_netcls), &k, &v, BPF_ANY) < 0 ?
	       -errno : 0;
}

int
netcls_del(struct netcls *n, uint64_t cgid, int ifindex)
{
	struct netcls_key k = { .cgid = cgid, .ifindex = (uint32_t)ifindex };

	if (bpf_map_delete_elem(bpf_map__fd(n->skel->maps.vsd_netcls), &k) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}
