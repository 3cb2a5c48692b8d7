// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Network shares in rule files (rules/net.h). The checks are vsd's own
 * (vsd/netshare.c), made offline where the file alone can tell: a share
 * per interface adds up to at most 100% and an interface has one rate.
 * "dev" left out means the interface of the default route on the machine
 * that applies; those VSs are summed together, as vsd will sum them.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/netrate.h"
#include "net.h"

int
net_setting(int bit, const char *text, struct settings *s, const char **why)
{
	switch (bit) {
	case SB_NET_SHARE:
		return parse_percent(text, &s->net_share, why);
	case SB_NET_MAX:
		return parse_rate(text, &s->net_max, why);
	case SB_DEV_RATE:
		return parse_rate(text, &s->dev_rate, why);
	case SB_DEV:
		if ((*why = netdev_name_why(text)))
			return -EINVAL;
		snprintf(s->dev, sizeof(s->dev), "%s", text);
		return 0;
	}
	*why = "is not a network setting";
	return -EINVAL;
}

void
net_overlay(struct settings *d, const struct settings *s)
{
	if (s->set & RULES_SET_NET_SHARE)
		d->net_share = s->net_share;
	if (s->set & RULES_SET_NET_MAX)
		d->net_max = s->net_max;
	if (s->set & RULES_SET_DEV_RATE)
		d->dev_rate = s->dev_rate;
	if (s->set & RULES_SET_DEV)
		memcpy(d->dev, s->dev, sizeof(d->dev));
}

void
net_compile(struct rules_ctx *c, struct rules_vs *x, const struct settings *eff)
{
	static const struct { int bit; const char *name; } needs[] = {
		{ SB_NET_MAX, "net-max" }, { SB_DEV, "dev" }, { SB_DEV_RATE, "dev-rate" },
	};
	char a[24], b[24], e[24], p[16];
	size_t i;

	x->net_share = eff->net_share;
	x->net_max = eff->net_max;
	x->dev_rate = eff->dev_rate;
	memcpy(x->dev, eff->dev, sizeof(x->dev));
	if (!(x->set & RULES_SET_NET_SHARE)) {
		for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
			if (x->set & (1u << needs[i].bit)) {
				rerr(c, &eff->at[needs[i].bit], "VS '%s': %s needs net-share (the "
				     "VS's share of the interface)", x->name, needs[i].name);
				return;
			}
		return;
	}
	if ((x->set & RULES_SET_NET_MAX) && (x->set & RULES_SET_DEV_RATE) &&
	    x->net_max < x->dev_rate / BP_MAX * x->net_share)
		rerr(c, &eff->at[SB_NET_MAX], "VS '%s': net-max %s is below its guaranteed share "
		     "(%s of %s is %s)", x->name, fmt_rate(x->net_max, a, sizeof(a)),
		     fmt_percent(x->net_share, p, sizeof(p)), fmt_rate(x->dev_rate, b, sizeof(b)),
		     fmt_rate(x->dev_rate / BP_MAX * x->net_share, e, sizeof(e)));
}

void
net_check_budgets(struct rules_ctx *c)
{
	struct rules *rs = c->rs;
	unsigned *sum;
	int *first;	/* the first VS on the same interface, per VS */
	size_t i, j;
	char a[24], b[24], t[24];

	if (!(sum = calloc(rs->nvs ? rs->nvs : 1, sizeof(*sum))) ||
	    !(first = calloc(rs->nvs ? rs->nvs : 1, sizeof(*first)))) {
		free(sum);
		c->oom = 1;
		return;
	}
	/* quadratic in the VSs with a share: a handful of interfaces per file */
	for (i = 0; i < rs->nvs; i++) {
		struct rules_vs *x = &rs->vs[i];
		const struct rules_vs *f, *r = NULL;

		first[i] = -1;
		if (!(x->set & RULES_SET_NET_SHARE))
			continue;
		for (j = 0; j < i && first[i] < 0; j++)
			if ((rs->vs[j].set & RULES_SET_NET_SHARE) && !strcmp(rs->vs[j].dev, x->dev))
				first[i] = first[j] >= 0 ? first[j] : (int)j;
		f = first[i] >= 0 ? &rs->vs[first[i]] : x;
		/* one rate per interface: the first that gives it, the others agree */
		for (j = f - rs->vs; j < i && !r; j++)
			if ((j == (size_t)(f - rs->vs) || first[j] == first[i]) &&
			    (rs->vs[j].set & RULES_SET_DEV_RATE))
				r = &rs->vs[j];
		if (r && (x->set & RULES_SET_DEV_RATE) && r->dev_rate != x->dev_rate)
			rerr(c, &x->loc, "VS '%s': dev-rate %s differs from VS '%s''s %s on %s "
			     "(an interface has one rate)", x->name, fmt_rate(x->dev_rate, a, sizeof(a)),
			     r->name, fmt_rate(r->dev_rate, b, sizeof(b)),
			     x->dev[0] ? x->dev : "the default route's interface");
		sum[f - rs->vs] += x->net_share;
		if (sum[f - rs->vs] > BP_MAX && sum[f - rs->vs] - x->net_share <= BP_MAX)
			rerr(c, &x->loc, "network shares on %s sum to %s, over 100%%: VS '%s' adds "
			     "%s to %s", x->dev[0] ? x->dev : "the default route's interface",
			     fmt_percent(sum[f - rs->vs], t, sizeof(t)), x->name,
			     fmt_percent(x->net_share, a, sizeof(a)),
			     fmt_percent(sum[f - rs->vs] - x->net_share, b, sizeof(b)));
	}
	free(sum);
	free(first);
}

void
net_write(const struct rules_vs *x, struct buf *b)
{
	char t[24];

	if (!(x->set & RULES_SET_NET_SHARE))
		return;
	buf_printf(b, " net-share %s", fmt_percent(x->net_share, t, sizeof(t)));
	if (x->set & RULES_SET_DEV)
		buf_printf(b, " dev %s", x->dev);
	if (x->set & RULES_SET_DEV_RATE)
		buf_printf(b, " dev-rate %s", fmt_rate(x->dev_rate, t, sizeof(t)));
	if (x->set & RULES_SET_NET_MAX)
		buf_printf(b, " net-max %s", fmt_rate(x->net_max, t, sizeof(t)));
}
