// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Traffic control over rtnetlink, with libmnl. Why not exec tc(8): vsd
 * needs the kernel's answer per object (an error names what failed), runs
 * where iproute2 may be missing, and must not parse tc's text output to
 * adopt what an earlier run made.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "lib/log.h"
#include "tc.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK	11
#endif

/* Our requests are small; a dump answer comes in pages (MNL_SOCKET_BUFFER_SIZE
 * is a sysconf() call, not a constant). */
#define TX_SIZE		4096
#define RX_SIZE		32768

/* The kernel's psched tick is 64 ns (PSCHED_SHIFT 6, since Linux 2.6.31). */
#define PSCHED_TICK_NS	64

struct tc_req {
	char			 buf[TX_SIZE];
	struct nlmsghdr		*nlh;
	struct tcmsg		*tcm;
};

static void
req_init(struct tc_req *q, uint16_t type, uint16_t flags, int ifindex, uint32_t parent,
	 uint32_t handle)
{
	memset(q->buf, 0, sizeof(struct nlmsghdr) + sizeof(struct tcmsg) + 64);
	q->nlh = mnl_nlmsg_put_header(q->buf);
	q->nlh->nlmsg_type = type;
	q->nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	q->nlh->nlmsg_seq = (uint32_t)time(NULL);
	q->tcm = mnl_nlmsg_put_extra_header(q->nlh, sizeof(struct tcmsg));
	q->tcm->tcm_family = AF_UNSPEC;
	q->tcm->tcm_ifindex = ifindex;
	q->tcm->tcm_parent = parent;
	q->tcm->tcm_handle = handle;
}

/* The kernel's extended ack message, if it sent one. */
static const char *
ext_msg(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	mnl_attr_for_each_payload((const void *)((const char *)e + off),
				  nlh->nlmsg_len - sizeof(*nlh) - off) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
			return mnl_attr_get_str(attr);
	}
	return NULL;
}

/*
 * Send q, read answers until the ack; each other message goes to cb. 0 or
 * -errno (the kernel's, its message logged with what).
 */
static int
talk(struct tc_req *q, mnl_cb_t cb, void *data, const char *what)
{
	static char rx[RX_SIZE];
	struct mnl_socket *nl;
	unsigned portid;
	int one = 1, r = 0;
	ssize_t n;

	if (!(nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC)))
		return -errno;
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_sendto(nl, q->nlh, q->nlh->nlmsg_len) < 0) {
		r = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	for (;;) {
		const struct nlmsghdr *h;
		int left;

		if ((n = mnl_socket_recvfrom(nl, rx, sizeof(rx))) <= 0) {
			r = n < 0 ? -errno : -EIO;
			goto out;
		}
		left = (int)n;
		for (h = (const struct nlmsghdr *)rx; mnl_nlmsg_ok(h, left);
		     h = mnl_nlmsg_next(h, &left)) {
			if (!mnl_nlmsg_portid_ok(h, portid) || h->nlmsg_seq != q->nlh->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
				const char *m = ext_msg(h);

				r = e->error;
				if (r < 0 && what)
					log_warnx("%s: %s%s%s", what, strerror(-r), m ? ": " : "",
						  m ? m : "");
				goto out;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				goto out;
			if (cb && cb(h, data) < MNL_CB_OK) {
				r = -EIO;
				goto out;
			}
		}
	}
out:
	mnl_socket_close(nl);
	return r;
}

struct root_find {
	int		 ifindex;
	uint32_t	*handle;
	char		*kind;
	size_t		 len;
	int		 found;
};

static int
root_cb(const struct nlmsghdr *h, void *data)
{
	struct root_find *f = data;
	const struct tcmsg *t = mnl_nlmsg_get_payload(h);
	const struct nlattr *a;

	if (h->nlmsg_type != RTM_NEWQDISC || t->tcm_ifindex != f->ifindex ||
	    t->tcm_parent != TC_H_ROOT)
		return MNL_CB_OK;
	*f->handle = t->tcm_handle;
	f->found = 1;
	mnl_attr_for_each(a, h, sizeof(*t)) {
		if (mnl_attr_get_type(a) == TCA_KIND)
			snprintf(f->kind, f->len, "%s", mnl_attr_get_str(a));
	}
	return MNL_CB_OK;
}

int
tc_root_qdisc(int ifindex, uint32_t *handle, char *kind, size_t len)
{
	struct root_find f = { ifindex, handle, kind, len, 0 };
	struct tc_req q;
	int r;

	req_init(&q, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0);
	kind[0] = '\0';
	*handle = 0;
	if ((r = talk(&q, root_cb, &f, "tc: list qdiscs")) < 0)
		return r;
	return f.found ? 0 : -ENOENT;
}

int
tc_htb_qdisc(int ifindex, uint32_t handle, uint16_t defminor, int replace)
{
	struct tc_htb_glob g = { .version = 3, .rate2quantum = 10, .defcls = defminor };
	struct nlattr *opt;
	struct tc_req q;

	req_init(&q, RTM_NEWQDISC, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL),
		 ifindex, TC_H_ROOT, handle);
	mnl_attr_put_strz(q.nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(q.nlh, TCA_OPTIONS);
	mnl_attr_put(q.nlh, TCA_HTB_INIT, sizeof(g), &g);
	mnl_attr_nest_end(q.nlh, opt);
	return talk(&q, NULL, NULL, "tc: add the htb qdisc");
}

int
tc_leaf_queue(int ifindex, uint32_t classid, uint32_t limit)
{
	struct tc_fifo_qopt fifo = { .limit = limit };
	struct tc_req q;
	int r;

	/* handle 0: the kernel picks one; replace grafts it over the default */
	req_init(&q, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, ifindex, classid, 0);
	mnl_attr_put_strz(q.nlh, TCA_KIND, "fq_codel");
	if ((r = talk(&q, NULL, NULL, NULL)) != -ENOENT)
		return r;
	/* a kernel without sch_fq_codel: a FIFO of limit bytes */
	req_init(&q, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, ifindex, classid, 0);
	mnl_attr_put_strz(q.nlh, TCA_KIND, "bfifo");
	mnl_attr_put(q.nlh, TCA_OPTIONS, sizeof(fifo), &fifo);
	return talk(&q, NULL, NULL, "tc: add a bfifo leaf");
}

int
tc_qdisc_del(int ifindex, uint32_t handle)
{
	struct tc_req q;

	req_init(&q, RTM_DELQDISC, 0, ifindex, TC_H_ROOT, handle);
	return talk(&q, NULL, NULL, NULL);
}

/* The time to send burst bytes at rate, in psched ticks, as HTB wants its buffer. */
static uint32_t
ticks(uint64_t burst, uint64_t rate)
{
	double t = (double)burst * 1e9 / (double)rate / PSCHED_TICK_NS;

	return t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

/*
 * A burst of 20 ms at the rate, at least two full-size Ethernet frames. A
 * floor of two 64 KiB GSO packets (tried first) let a class at a few Mbit/s
 * send half a second over its rate: 75/25 at 2 Mbit/s came out 64/36; 10 ms
 * cost a lone VS at 70 Mbit/s a sixth of the link. HTB lets a class go into
 * debt for a packet larger than its burst, so a GSO packet still goes out
 * whole.
 */
static uint64_t
burst_of(uint64_t rate)
{
	uint64_t b = rate / 50;

	return b < 3028 ? 3028 : b;
}

int
tc_htb_class(int ifindex, uint32_t parent, uint32_t classid, uint64_t rate, uint64_t ceil,
	     uint32_t quantum)
{
	struct tc_htb_opt o = { 0 };
	struct nlattr *opt;
	struct tc_req q;

	if (rate == 0 || ceil < rate)
		return -EINVAL;
	/* the rates are in the ratespec when they fit its 32 bits, else
	 * in TCA_HTB_RATE64 / CEIL64 (Linux 3.13) */
	o.rate.rate = rate > UINT32_MAX ? UINT32_MAX : (uint32_t)rate;
	o.ceil.rate = ceil > UINT32_MAX ? UINT32_MAX : (uint32_t)ceil;
	/* not TC_LINKLAYER_UNAWARE: no rate table wanted (Linux 3.8) */
	o.rate.linklayer = o.ceil.linklayer = TC_LINKLAYER_ETHERNET;
	o.buffer = ticks(burst_of(rate), rate);
	o.cbuffer = ticks(burst_of(ceil), ceil);
	o.quantum = quantum;
	req_init(&q, RTM_NEWTCLASS, NLM_F_CREATE, ifindex, parent, classid);
	mnl_attr_put_strz(q.nlh, TCA_KIND, "htb");
	opt = mnl_attr_nest_start(q.nlh, TCA_OPTIONS);
	mnl_attr_put(q.nlh, TCA_HTB_PARMS, sizeof(o), &o);
	if (rate > UINT32_MAX)
		mnl_attr_put_u64(q.nlh, TCA_HTB_RATE64, rate);
	if (ceil > UINT32_MAX)
		mnl_attr_put_u64(q.nlh, TCA_HTB_CEIL64, ceil);
	mnl_attr_nest_end(q.nlh, opt);
	return talk(&q, NULL, NULL, "tc: add or change an htb class");
}

int
tc_class_del(int ifindex, uint32_t classid)
{
	struct tc_req q;

	req_init(&q, RTM_DELTCLASS, 0, ifindex, 0, classid);
	return talk(&q, NULL, NULL, NULL);
}

int
tc_bpf_filter(int ifindex, uint32_t handle, int prog_fd, const char *name)
{
	struct nlattr *opt;
	struct tc_req q;

	/* preference 1, all protocols; filter handle 1 so a replace finds it */
	req_init(&q, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_REPLACE, ifindex, handle, 1);
	q.tcm->tcm_info = TC_H_MAKE(1u << 16, htons(ETH_P_ALL));
	mnl_attr_put_strz(q.nlh, TCA_KIND, "bpf");
	opt = mnl_attr_nest_start(q.nlh, TCA_OPTIONS);
	mnl_attr_put_u32(q.nlh, TCA_BPF_FD, (uint32_t)prog_fd);
	mnl_attr_put_strz(q.nlh, TCA_BPF_NAME, name);
	mnl_attr_put_u32(q.nlh, TCA_BPF_FLAGS, TCA_BPF_FLAG_ACT_DIRECT);
	/* the major number of the classes the program names by minor */
	mnl_attr_put_u32(q.nlh, TCA_BPF_CLASSID, handle & 0xffff0000u);
	mnl_attr_nest_end(q.nlh, opt);
	return talk(&q, NULL, NULL, "tc: attach the bpf classifier");
}
