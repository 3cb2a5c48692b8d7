// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Network shares: an egress share of a device per VS, work-conserving like
 * --cpu, with an optional cap, built on HTB.
 *
 * On a device that carries shares vsd owns the root qdisc, HTB 5d:, with
 *   5d:1        rate = ceil = the device's rate (--dev-rate, else its link
 *               speed): the bottleneck vsd shapes to, so the queue builds
 *               here, where the shares are kept, and not in the NIC;
 *   5d:2        traffic of no VS (the host's own, ARP): what the shares
 *               leave, at least 1% of the rate, borrowing up to the rate;
 *   5d:MINOR    one per VS: rate = share of the device's rate, ceil = its
 *               --net-max or the device's rate (so it borrows what others
 *               leave: work-conserving), quantum proportional to the share
 *               (so what is borrowed is split like the shares);
 * and one cls_bpf filter (gates/net/netcls.bpf.c) that puts a packet in the
 * class of the VS whose cgroup holds its socket. Why the cgroup and not the
 * socket gate's SO_PRIORITY or SO_MARK: see that file and vsd(8).
 *
 * vsd replaces only a root qdisc the kernel made (handle 0: noqueue, mq,
 * fq_codel, pfifo_fast); one an administrator set up is refused, named.
 * Deleting 5d: when the last VS leaves the device gives the kernel's
 * default back.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/net/netcls-load.h"
#include "gates/net/tc.h"
#include "lib/log.h"
#include "lib/netrate.h"
#include "rules/rules.h"
#include "netshare.h"

#define NET_HANDLE	TC_HANDLE(NET_MAJOR, 0)

int
net_opts_given(const struct request *req)
{
	return req_get(req, "net-share") || req_get(req, "net-max") || req_get(req, "dev") ||
	       req_get(req, "dev-rate");
}

/* The interface of the IPv4 default route in vsd's network namespace. */
static int
default_dev(char *dev, size_t len)
{
	char line[256], name[64];
	unsigned long dst, gw, flags, mask;
	FILE *f;
	int r = -ENOENT;

	if (!(f = fopen("/proc/net/route", "re")))
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lx %lx %lx %*d %*d %*d %lx", name, &dst, &gw, &flags,
			   &mask) == 5 && dst == 0 && mask == 0 && (flags & 1)) {
			if (strlen(name) >= len)
				continue;
			memcpy(dev, name, strlen(name) + 1);
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

/* The link speed the kernel reports (Mbit/s in sysfs), in bits/s; 0 if unknown. */
static uint64_t
link_speed(const char *dev)
{
	char path[96], v[32];
	long long mbit;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", dev);
	if (read_file(path, v, sizeof(v)) < 0 || sscanf(v, "%lld", &mbit) != 1 || mbit <= 0)
		return 0;
	return (uint64_t)mbit * 1000000;
}

/* Sum of the shares on dev, leaving out skip; and the rate they divide. */
static unsigned
dev_sum(const struct vsd *d, const char *dev, const struct vs *skip, uint64_t *rate)
{
	unsigned sum = 0;
	size_t i;

	for (i = 0; i < d->reg.n; i++) {
		const struct vs *o = d->reg.v[i];

		if (o == skip || strcmp(o->net.dev, dev) != 0)
			continue;
		sum += o->net.share;
		if (rate)
			*rate = o->net.rate;
	}
	return sum;
}

/* The lowest class number no other VS on dev holds. */
static int
free_minor(const struct vsd *d, const char *dev, const struct vs *skip, uint16_t *minor)
{
	unsigned m;
	size_t i;

	for (m = NET_MINOR_FIRST; m <= NET_MINOR_LAST; m++) {
		for (i = 0; i < d->reg.n; i++)
			if (d->reg.v[i] != skip && d->reg.v[i]->net.minor == m &&
			    strcmp(d->reg.v[i]->net.dev, dev) == 0)
				break;
		if (i == d->reg.n) {
			*minor = (uint16_t)m;
			return 0;
		}
	}
	return -ENOSPC;
}

/* A cap below the guaranteed rate: 1, and "RATE is below ..." in msg. */
static int
cap_below_share(const struct vs_net *n, char *msg, size_t len)
{
	uint64_t g = n->rate / BP_MAX * n->share;
	char a[24], b[24], c[24], p[16];

	if (!n->max || n->max >= g)
		return 0;
	snprintf(msg, len, "%s is below the guaranteed share (%s of %s is %s)",
		 fmt_rate(n->max, a, sizeof(a)), fmt_percent(n->share, p, sizeof(p)),
		 fmt_rate(n->rate, b, sizeof(b)), fmt_rate(g, c, sizeof(c)));
	return 1;
}

/* --net-share P%|none and --net-max RATE|none into n. */
static int
parse_share_max(const struct request *req, struct vs_net *n, struct reply *rep)
{
	const char *cmd = rep->cmd, *v, *why;
	int r;

	if ((v = req_get(req, "net-share"))) {
		if (strcmp(v, "none") == 0) {
			memset(n, 0, sizeof(*n));
			if (req_get(req, "net-max") || req_get(req, "dev") || req_get(req, "dev-rate"))
				return reply_err(rep, -EINVAL, "%s: --net-share none takes no "
						 "--net-max, --dev or --dev-rate", cmd);
			return 0;
		}
		if ((r = parse_percent(v, &n->share, &why)) < 0)
			return reply_err(rep, r, "%s: --net-share %.32s %s", cmd, v, why);
	}
	if ((v = req_get(req, "net-max"))) {
		if (strcmp(v, "none") == 0)
			n->max = 0;
		else if ((r = parse_rate(v, &n->max, &why)) < 0)
			return reply_err(rep, r, "%s: --net-max %.32s %s", cmd, v, why);
	}
	return 1;
}

int
net_opts_parse(struct vsd *d, const struct request *req, const struct vs *vs,
	       struct vs_net *net, struct reply *rep)
{
	const char *cmd = rep->cmd, *dev = req_get(req, "dev"), *rate = req_get(req, "dev-rate");
	struct vs_net n = vs->net;
	char a[16], b[16], c[24], why_cap[128];
	uint64_t drate = 0;
	const char *why;
	unsigned others;
	int r;

	if (!net_opts_given(req))
		return 0;
	if ((r = parse_share_max(req, &n, rep)) <= 0) {
		if (r == 0)
			*net = n;	/* none */
		return r;
	}
	if (!n.share)
		return reply_err(rep, -EINVAL, "%s: --net-share is needed with --net-max, --dev "
				 "and --dev-rate (the VS has no network share)", cmd);
	if (!d->gate)
		return reply_err(rep, -EOPNOTSUPP, "%s: network shares classify by cgroup2, and "
				 "this host has none", cmd);
	if (dev) {
		if ((why = netdev_name_why(dev)))
			return reply_err(rep, -EINVAL, "%s: --dev '%.32s' %s", cmd, dev, why);
		if (strcmp(dev, n.dev) != 0)
			n.minor = 0;
		snprintf(n.dev, sizeof(n.dev), "%s", dev);
	} else if (!n.dev[0] && default_dev(n.dev, sizeof(n.dev)) < 0) {
		return reply_err(rep, -EINVAL, "%s: --dev is needed: there is no default route "
				 "to take the interface from", cmd);
	}
	if (!if_nametoindex(n.dev))
		return reply_err(rep, -ENODEV, "%s: --dev %s: no such interface", cmd, n.dev);
	/* the device's rate: given, else the one its VSs have, else its link speed */
	others = dev_sum(d, n.dev, vs, &drate);
	if (rate) {
		if ((r = parse_rate(rate, &n.rate, &why)) < 0)
			return reply_err(rep, r, "%s: --dev-rate %.32s %s", cmd, rate, why);
	} else if (drate) {
		n.rate = drate;
	} else if (!n.rate || strcmp(n.dev, vs->net.dev) != 0) {
		if (!(n.rate = link_speed(n.dev)))
			return reply_err(rep, -EINVAL, "%s: the link speed of %s is unknown: give "
					 "--dev-rate RATE (the rate the shares divide)", cmd, n.dev);
	}
	if (others + n.share > BP_MAX)
		return reply_err(rep, -ENOSPC, "%s: network share %s on %s is more than is left: "
				 "%s (other VSs hold %s)", cmd, fmt_percent(n.share, a, sizeof(a)),
				 n.dev, fmt_percent(BP_MAX - others, b, sizeof(b)),
				 fmt_percent(others, c, sizeof(c)));
	if (cap_below_share(&n, why_cap, sizeof(why_cap)))
		return reply_err(rep, -EINVAL, "%s: --net-max %s", cmd, why_cap);
	if (!n.minor && free_minor(d, n.dev, vs, &n.minor) < 0)
		return reply_err(rep, -ENOSPC, "%s: %s has no free class for another VS", cmd, n.dev);
	*net = n;
	return 0;
}

/* The depth of the VSs' cgroup2 directories below the cgroup2 root. */
static int
vs_level(const struct vsd *d, unsigned *level)
{
	int h;

	for (h = 0; h < d->cg.nhier; h++) {
		const struct cg_hier *hi = &d->cg.hier[h];
		const char *p = hi->base + strlen(hi->mnt);

		if (!(hi->roles & CG_R_BPF))
			continue;
		for (*level = 1; *p; p++)	/* base's components, then the VS's */
			if (*p == '/' && p[1] && p[1] != '/')
				(*level)++;
		return 0;
	}
	return -ENOENT;
}

static int
classifier(struct vsd *d)
{
	unsigned level;
	int r;

	if (d->netcls)
		return 0;
	if (!d->gate || (r = vs_level(d, &level)) < 0)
		return -EOPNOTSUPP;
	return netcls_open(gate_socket_pindir(d->gate), level, &d->netcls);
}

/* Bits per second of the device's rate times bp, in bytes per second (>= 1). */
static uint64_t
bytes_of(uint64_t bps, unsigned bp)
{
	uint64_t v = bps / 8 / BP_MAX * bp + bps / 8 % BP_MAX * bp / BP_MAX;

	return v ? v : 1;
}

/* HTB's quantum: what a class may send per round when borrowing, so the
 * spare bandwidth is split in proportion to the shares, as cpu.weight does. */
static uint32_t
quantum_of(unsigned bp)
{
	return bp * 20 < 1000 ? 1000 : bp * 20;
}

/*
 * A leaf class and its queue: fq_codel, or a FIFO of 100 ms at the
 * ceiling, not HTB's default pfifo of txqueuelen packets, which at a few
 * Mbit/s is seconds of queue, where TCP no longer follows the shares (75/25
 * at 5 Mbit/s came out 71/29).
 */
static int
leaf(int ifindex, uint16_t minor, uint64_t rate, uint64_t ceil, unsigned bp)
{
	int r;

	if ((r = tc_htb_class(ifindex, TC_HANDLE(NET_MAJOR, NET_MINOR_TOP),
			      TC_HANDLE(NET_MAJOR, minor), rate, ceil, quantum_of(bp))) < 0)
		return r;
	/* the FIFO's bytes: 100 ms at the ceiling, at least two GSO packets */
	return tc_leaf_queue(ifindex, TC_HANDLE(NET_MAJOR, minor),
			     ceil / 10 < 131072 ? 131072 : ceil / 10 > UINT32_MAX ? UINT32_MAX :
			     (uint32_t)(ceil / 10));
}

static int
vs_class(int ifindex, const struct vs_net *n)
{
	uint64_t ceil = n->max && n->max < n->rate ? n->max : n->rate;

	return leaf(ifindex, n->minor, bytes_of(n->rate, n->share), bytes_of(ceil, BP_MAX),
		    n->share);
}

/*
 * Make dev carry its VSs' shares: the qdisc (adopted if it is ours), the
 * device's class, the class of traffic of no VS, the filter; then every
 * VS's class and map entry. With no VS on dev, the qdisc goes.
 */
static int
dev_sync(struct vsd *d, const char *dev, uint64_t rate)
{
	uint64_t had = 0;
	unsigned sum = dev_sum(d, dev, NULL, &had), rest;
	int ifindex = (int)if_nametoindex(dev), n = 0, r;
	uint32_t handle;
	char kind[32];
	size_t i;

	if (!ifindex)
		return -ENODEV;
	if (!rate)
		rate = had;
	for (i = 0; i < d->reg.n; i++)
		n += strcmp(d->reg.v[i]->net.dev, dev) == 0;
	if (n == 0) {
		if ((r = tc_qdisc_del(ifindex, NET_HANDLE)) < 0 && r != -ENOENT && r != -EINVAL)
			log_warnx("network shares: %s: cannot delete qdisc 5d:: %s", dev,
				  strerror(-r));
		else
			log_info("network shares: %s: no VS left, qdisc 5d: deleted", dev);
		return 0;
	}
	if ((r = classifier(d)) < 0)
		return r;
	if ((r = tc_root_qdisc(ifindex, &handle, kind, sizeof(kind))) < 0 && r != -ENOENT)
		return r;
	if (r == 0 && handle != 0 && (handle != NET_HANDLE || strcmp(kind, "htb") != 0)) {
		log_warnx("network shares: %s has a root qdisc vsd did not make (%s %x:); "
			  "remove it first (tc qdisc del dev %s root)", dev, kind, handle >> 16, dev);
		return -EBUSY;
	}
	if (handle != NET_HANDLE &&
	    (r = tc_htb_qdisc(ifindex, NET_HANDLE, NET_MINOR_REST, 1)) < 0)
		return r;
	rest = BP_MAX - (sum > BP_MAX ? BP_MAX : sum);
	if (rest < BP_MAX / 100)
		rest = BP_MAX / 100;
	if ((r = tc_htb_class(ifindex, NET_HANDLE, TC_HANDLE(NET_MAJOR, NET_MINOR_TOP),
			      bytes_of(rate, BP_MAX), bytes_of(rate, BP_MAX), 200000)) < 0 ||
	    (r = leaf(ifindex, NET_MINOR_REST, bytes_of(rate, rest), bytes_of(rate, BP_MAX),
		      rest)) < 0 ||
	    (r = tc_bpf_filter(ifindex, NET_HANDLE, netcls_prog_fd(d->netcls), "vsd_netcls")) < 0)
		return r;
	for (i = 0; i < d->reg.n; i++) {
		struct vs *o = d->reg.v[i];

		if (strcmp(o->net.dev, dev) != 0)
			continue;
		o->net.rate = rate;	/* one rate per device */
		if ((r = vs_class(ifindex, &o->net)) < 0)
			return r;
		if (o->status == VS_OK && o->cg2_id &&
		    (r = netcls_set(d->netcls, o->cg2_id, ifindex, o->net.minor)) < 0) {
			log_warnx("network shares: VS %s: classifier map: %s", o->name,
				  strerror(-r));
			return r;
		}
	}
	return 0;
}

/* No VS has a share any more: the classifier's map goes too. */
static void
release_if_unused(struct vsd *d)
{
	size_t i;

	for (i = 0; i < d->reg.n; i++)
		if (d->reg.v[i]->net.dev[0])
			return;
	if (d->netcls) {
		netcls_unpin(d->netcls);
		netcls_close(d->netcls);
		d->netcls = NULL;
	}
}

/* vs's class and map entry on the device of old go. */
static void
leave(struct vsd *d, const struct vs *vs, const struct vs_net *old)
{
	int ifindex = (int)if_nametoindex(old->dev), r;

	if (!ifindex)
		return;
	if (d->netcls && vs->cg2_id)
		netcls_del(d->netcls, vs->cg2_id, ifindex);
	if ((r = tc_class_del(ifindex, TC_HANDLE(NET_MAJOR, old->minor))) < 0 && r != -ENOENT)
		log_warnx("network shares: VS %s: class 5d:%x on %s stays: %s", vs->name,
			  old->minor, old->dev, strerror(-r));
}

int
net_apply(struct vsd *d, struct vs *vs, const struct vs_net *old)
{
	int moved, r = 0;

	/* a class on a device it is new on (rule files give none) */
	if (vs->net.dev[0] && (!vs->net.minor || strcmp(old->dev, vs->net.dev) != 0) &&
	    (r = free_minor(d, vs->net.dev, vs, &vs->net.minor)) < 0)
		return r;
	moved = old->dev[0] && (strcmp(old->dev, vs->net.dev) != 0 || old->minor != vs->net.minor);
	if (moved)
		leave(d, vs, old);
	if (vs->net.dev[0] && (r = dev_sync(d, vs->net.dev, vs->net.rate)) < 0)
		log_warnx("network shares: VS %s on %s: %s", vs->name, vs->net.dev, strerror(-r));
	if (moved)
		dev_sync(d, old->dev, 0);
	release_if_unused(d);
	return r;
}

int
net_want(struct vsd *d, const struct rules *rs, const struct rules_vs *x, const struct vs *cur,
	 struct vs_net *n, struct buf *errs)
{
	char why_cap[128], def[sizeof(n->dev)];
	uint64_t rate = 0;
	size_t i;

	memset(n, 0, sizeof(*n));
	if (!(x->set & RULES_SET_NET_SHARE))
		return 0;
	n->share = x->net_share;
	n->max = x->set & RULES_SET_NET_MAX ? x->net_max : 0;
	if (default_dev(def, sizeof(def)) < 0)
		def[0] = '\0';
	memcpy(n->dev, x->dev[0] ? x->dev : def, sizeof(n->dev));
	if (!n->dev[0]) {
		buf_printf(errs, "VS '%s': no dev given, and there is no default route to take "
			   "the interface from\n", x->name);
		return -EINVAL;
	}
	if (!if_nametoindex(n->dev)) {
		buf_printf(errs, "VS '%s': dev %s: no such interface\n", x->name, n->dev);
		return -ENODEV;
	}
	/* the device's rate: the one the file gives it, on a VS that names
	 * the device or leaves it to the default route (one rate per device,
	 * which vsctl check cannot see across the two); else vsd's, else the
	 * link speed */
	for (i = 0; i < rs->nvs && !rate; i++) {
		const struct rules_vs *o = &rs->vs[i];

		if ((o->set & RULES_SET_DEV_RATE) && strcmp(o->dev[0] ? o->dev : def, n->dev) == 0)
			rate = o->dev_rate;
	}
	if (rate && (x->set & RULES_SET_DEV_RATE) && x->dev_rate != rate) {
		char a[24], b[24];

		buf_printf(errs, "VS '%s': dev-rate %s differs from the %s another VS of the "
			   "file gives %s (an interface has one rate)\n", x->name,
			   fmt_rate(x->dev_rate, a, sizeof(a)), fmt_rate(rate, b, sizeof(b)),
			   n->dev);
		return -EINVAL;
	}
	if (!rate)
		dev_sum(d, n->dev, NULL, &rate);
	if (!rate && !(rate = link_speed(n->dev))) {
		buf_printf(errs, "VS '%s': the link speed of %s is unknown: give dev-rate\n",
			   x->name, n->dev);
		return -EINVAL;
	}
	n->rate = rate;
	if (cap_below_share(n, why_cap, sizeof(why_cap))) {
		buf_printf(errs, "VS '%s': net-max %s\n", x->name, why_cap);
		return -EINVAL;
	}
	if (cur && strcmp(cur->net.dev, n->dev) == 0)
		n->minor = cur->net.minor;
	return 0;
}

int
net_eq(const struct vs_net *a, const struct vs_net *b)
{
	return strcmp(a->dev, b->dev) == 0 && a->share == b->share && a->max == b->max &&
	       a->rate == b->rate;
}

int
net_admit_plan(struct vsd *d, const struct rules *rs, const struct vs_net *want, int prune,
	       struct buf *errs)
{
	char a[16], b[16], c[16];
	size_t i, j;
	int r = 0;

	for (i = 0; i < rs->nvs; i++) {
		unsigned sum = 0, kept = 0;

		if (!want[i].dev[0])
			continue;
		for (j = 0; j < i; j++)	/* each interface once */
			if (strcmp(want[j].dev, want[i].dev) == 0)
				break;
		if (j < i)
			continue;
		for (j = i; j < rs->nvs; j++)
			if (strcmp(want[j].dev, want[i].dev) == 0)
				sum += want[j].share;
		for (j = 0; !prune && j < d->reg.n; j++)
			if (strcmp(d->reg.v[j]->net.dev, want[i].dev) == 0 &&
			    rules_vs_index(rs, d->reg.v[j]->name) < 0)
				kept += d->reg.v[j]->net.share;
		if (sum + kept > BP_MAX) {
			buf_printf(errs, "the network shares on %s would sum to %s: the file's %s "
				   "plus %s of VSs it does not name\n", want[i].dev,
				   fmt_percent(sum + kept, a, sizeof(a)), fmt_percent(sum, b, sizeof(b)),
				   fmt_percent(kept, c, sizeof(c)));
			r = -EINVAL;
		}
	}
	return r;
}

void
net_remove(struct vsd *d, struct vs *vs)
{
	struct vs_net old = vs->net;

	if (!old.dev[0])
		return;
	memset(&vs->net, 0, sizeof(vs->net));
	net_apply(d, vs, &old);
}

void
net_adopt(struct vsd *d)
{
	size_t i, j;
	int r;

	for (i = 0; i < d->reg.n; i++) {
		const char *dev = d->reg.v[i]->net.dev;

		for (j = 0; j < i && strcmp(d->reg.v[j]->net.dev, dev) != 0; j++)
			;
		if (!dev[0] || j < i)	/* no share, or the device is done */
			continue;
		if ((r = dev_sync(d, dev, 0)) < 0)
			log_warnx("network shares on %s not in force: %s; 'vsctl set' tries again",
				  dev, strerror(-r));
		else
			log_info("network shares on %s in force", dev);
	}
}

void
net_close(struct vsd *d)
{
	netcls_close(d->netcls);
	d->netcls = NULL;
}

void
net_json(const struct vs *vs, struct buf *b)
{
	buf_printf(b, ", \"net\": ");
	if (!vs->net.dev[0]) {
		buf_printf(b, "null");
		return;
	}
	buf_printf(b, "{\"dev\": ");
	buf_json_str(b, vs->net.dev);
	if (vs->net.share % BP_PER_PCT)
		buf_printf(b, ", \"share\": %u.%02u", vs->net.share / BP_PER_PCT,
			   vs->net.share % BP_PER_PCT);
	else
		buf_printf(b, ", \"share\": %u", vs->net.share / BP_PER_PCT);
	buf_printf(b, ", \"max\": ");
	if (vs->net.max)
		buf_printf(b, "%" PRIu64, vs->net.max);
	else
		buf_printf(b, "null");
	buf_printf(b, ", \"dev_rate\": %" PRIu64 ", \"class\": \"%x:%x\"}", vs->net.rate,
		   NET_MAJOR, vs->net.minor);
}

void
net_text(const struct vs *vs, struct buf *b)
{
	char s[16], r[24], m[24];

	if (!vs->net.dev[0])
		return;
	buf_printf(b, "net: %s of %s (%s), cap %s, class %x:%x\n",
		   fmt_percent(vs->net.share, s, sizeof(s)), vs->net.dev,
		   fmt_rate(vs->net.rate, r, sizeof(r)),
		   vs->net.max ? fmt_rate(vs->net.max, m, sizeof(m)) : "none",
		   NET_MAJOR, vs->net.minor);
}
