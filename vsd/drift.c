// SPDX-License-Identifier: GPL-2.0-or-later
/* Limits changed behind vsd's back: see drift.h. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "drift.h"
#include "lib/log.h"
#include "vsd.h"

/* FNV-1a over what drifted and to what: a new hash is a new drift to log. */
static uint64_t
drift_hash(const struct vs_drift *dr)
{
	uint64_t h = 14695981039346656037ull;
	const char *s;
	int i, k;

	for (i = 0; i < dr->n; i++) {
		const char *part[] = { dr->v[i].hier, dr->v[i].file, dr->v[i].have };

		for (k = 0; k < 3; k++)
			for (s = part[k]; ; s++) {
				h = (h ^ (unsigned char)*s) * 1099511628211ull;
				if (!*s)
					break;
			}
	}
	return h ? h : 1;
}

int
drift_check(struct vsd *d, struct vs *vs, struct vs_drift *dr, const char *when)
{
	uint64_t h;
	int i, n;

	dr->n = 0;
	if (vs->status != VS_OK)
		return 0;
	if ((n = cg_vs_drift(&d->cg, vs, dr->v, CG_DRIFT_MAX)) == -ENOENT) {
		/* a directory of the VS was removed behind vsd's back: the VS
		 * is missing, as adopt() finds one at start (vsctl(8), status) */
		vs->status = VS_MISSING;
		log_warnx("%s: VS %s: a cgroup of it disappeared behind vsd's back; "
			  "'vsctl destroy %s' forgets it", when, vs->name, vs->name);
		return 0;
	}
	if (n < 0) {
		log_warnx("%s: VS %s: cannot read its limits back: %s", when, vs->name,
			  strerror(-n));
		return 0;
	}
	dr->n = n;
	vs->drift_n = n;
	/* each new drift once, not at every list */
	h = n > 0 ? drift_hash(dr) : 0;
	if (h && h != vs->drift_logged)
		for (i = 0; i < n; i++)
			log_warnx("%s: VS %s: %s/%s is '%s', vsd set '%s': changed behind vsd's "
				  "back (vsctl set or apply restores it)", when, vs->name,
				  dr->v[i].hier, dr->v[i].file, dr->v[i].have, dr->v[i].want);
	vs->drift_logged = h;
	return n;
}

void
drift_json(const struct vs_drift *dr, struct buf *b)
{
	int i;

	buf_printf(b, "[");
	for (i = 0; i < dr->n; i++) {
		buf_printf(b, "%s{\"name\": ", i ? ", " : "");
		buf_json_str(b, dr->v[i].file);
		buf_printf(b, ", \"limit\": \"%s\", \"hierarchy\": ", dr->v[i].limit);
		buf_json_str(b, dr->v[i].hier);
		buf_printf(b, ", \"want\": ");
		buf_json_str(b, dr->v[i].want);
		buf_printf(b, ", \"have\": ");
		buf_json_str(b, dr->v[i].have);
		buf_printf(b, "}");
	}
	buf_printf(b, "]");
}

void
drift_text(const struct vs_drift *dr, struct buf *b)
{
	int i;

	for (i = 0; i < dr->n; i++)
		buf_printf(b, "drift: %s/%s is %s, vsd set %s (vsctl set or apply restores it)\n",
			   dr->v[i].hier, dr->v[i].file, dr->v[i].have[0] ? dr->v[i].have :
			   "unreadable", dr->v[i].want);
}

int
drift_restore(struct vsd *d, struct vs *vs, int n, const char *when)
{
	int r;

	if ((r = cg_vs_rewrite(&d->cg, vs)) < 0)
		return r;
	log_info("%s: VS %s: wrote its limits again (%d file%s had drifted)", when, vs->name,
		 n, n == 1 ? "" : "s");
	vs->drift_logged = 0;
	vs->drift_n = 0;
	return 0;
}

int
drift_known(struct vsd *d, struct vs *vs)
{
	struct vs_drift dr;

	return vs->drift_n >= 0 ? vs->drift_n : drift_check(d, vs, &dr, "apply");
}

/*
 * Every VS within DRIFT_SWEEP_S seconds, a slice a second: at 10,000 VSs
 * 500 VSs a second, about 30 ms of vsd's CPU a second (at most 57 us a VS, 4-5 reads,
 * measured by benchmarks/rules-provider 1000: unchanged re-apply 56.6 ms).
 */
#define DRIFT_SWEEP_S	20
#define DRIFT_SLICE_MIN	50

void
drift_sweep(struct vsd *d)
{
	uint64_t now = mono_ns();
	size_t n = d->reg.n, k;
	struct vs_drift dr;

	if (now < d->drift_at)
		return;
	d->drift_at = now + 1000000000ull;
	k = n / DRIFT_SWEEP_S + 1;
	if (k < DRIFT_SLICE_MIN)
		k = DRIFT_SLICE_MIN;
	if (k > n)		/* fewer VSs than a slice: each once */
		k = n;
	for (; k > 0; k--) {
		if (d->drift_next >= n)
			d->drift_next = 0;
		drift_check(d, d->reg.v[d->drift_next++], &dr, "sweep");
	}
}

int
drift_timeout_ms(const struct vsd *d, int t)
{
	uint64_t now = mono_ns();
	int w;

	if (d->reg.n == 0)
		return t;
	w = d->drift_at <= now ? 0 : (int)((d->drift_at - now) / 1000000 + 1);
	return t < 0 || w < t ? w : t;
}
