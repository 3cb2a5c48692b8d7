// SPDX-License-Identifier: GPL-2.0-or-later
/* The state file: round trip, atomic save, and refusal of damaged files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gates/socket/socket.h"
#include "vsd/state.h"
#include "tap.h"

static struct vs *
mk(const char *name, unsigned cpu, unsigned cap, uint64_t mem, uint64_t pids)
{
	struct vs *vs = calloc(1, sizeof(*vs));

	snprintf(vs->name, sizeof(vs->name), "%s", name);
	vs->lim = (struct vs_limits){ cpu, cap, mem, pids };
	return vs;
}

static void
round_trip(void)
{
	struct registry a = { 0 }, b = { 0 };
	struct buf t1 = { 0 }, t2 = { 0 };
	const char *why;
	struct vs *x;
	int line;

	reg_add(&a, mk("www1", 5000, 0, 0, 0));
	reg_add(&a, mk("www2", 2500, 4000, 268435456, 100));
	reg_add(&a, mk("gone", 100, 0, 0, 0));
	reg_remove(&a, reg_find(&a, "gone"));	/* its id 3 must never come back */
	x = reg_find(&a, "www2");		/* socket gate settings */
	x->gate = (struct gate_socket_cfg){ VSD_CFG_TOS | VSD_CFG_MARK | VSD_CFG_PRIO, 0xb8, 42, 6 };
	x->net = (struct vs_net){ "veth-0", 7500, 150000000, 200000000, 0x10 };	/* network share */
	state_format(&a, &t1);
	ok(state_parse(t1.p, &b, &line, &why) == 0, "formatted state parses");
	state_format(&b, &t2);
	is_str(t2.p, t1.p, "format(parse(format(x))) == format(x)");
	x = reg_find(&b, "www2");
	ok(x && x->id == 2 && x->lim.cpu == 2500 && x->lim.cpu_max == 4000 &&
	   x->lim.mem_max == 268435456 && x->lim.pids_max == 100, "www2's limits survive");
	ok(x && x->gate.flags == (VSD_CFG_TOS | VSD_CFG_MARK | VSD_CFG_PRIO) && x->gate.tos == 0xb8 &&
	   x->gate.mark == 42 && x->gate.priority == 6, "www2's socket gate settings survive");
	ok(x && strcmp(x->net.dev, "veth-0") == 0 && x->net.share == 7500 &&
	   x->net.max == 150000000 && x->net.rate == 200000000 && x->net.minor == 0x10,
	   "www2's network share survives");
	x = reg_find(&b, "www1");
	ok(x && x->gate.flags == 0 && !x->net.dev[0] &&
	   strstr(t1.p, "vs www1 id=1 cpu=5000 cpu-max=0 mem=0 pids=0\n"),
	   "a VS without gate settings has none, and its line is as before");
	x = reg_find(&b, "www2");
	ok(b.next_id == 4, "next id survives removal (got %u)", b.next_id);
	reg_add(&b, mk("new", 100, 0, 0, 0));
	ok(reg_find(&b, "new")->id == 4, "a new VS gets a fresh id");
	ok(reg_cpu_sum(&b, NULL) == 7600 && reg_cpu_sum(&b, x) == 5100, "share sums");
	reg_free(&a);
	reg_free(&b);
	buf_free(&t1);
	buf_free(&t2);
}

static void
damaged(void)
{
	static const struct { const char *text; int line; } t[] = {
		{ "garbage\n", 1 },
		{ "vsd-state 2\n", 1 },
		{ "vsd-state 1\nvs www1 id=1\n", 2 },			/* no cpu */
		{ "vsd-state 1\nvs www1 cpu=100\n", 2 },		/* no id */
		{ "vsd-state 1\nvs Www id=1 cpu=100\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100\nvs a id=2 cpu=100\n", 3 },
		{ "vsd-state 1\nvs a id=1 cpu=100\nvs b id=1 cpu=100\n", 3 },
		{ "vsd-state 1\nvs a id=1 cpu=10001\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 colour=red\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 mem\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 tos=256\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 mark=4294967296\n", 2 },
		{ "vsd-state 1\nnext-id x\n", 2 },
		/* network shares: a bad interface name, a share without its rate or class */
		{ "vsd-state 1\nvs a id=1 cpu=100 net-dev=../x net-share=100 net-rate=8000 net-class=16\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 net-dev=eth0 net-share=100\n", 2 },
		{ "vsd-state 1\nvs a id=1 cpu=100 net-dev=eth0 net-share=100 net-rate=8000 net-class=2\n", 2 },
		{ "vsd-state 1\n# comment\n\nwhat\n", 4 },
	};
	const char *why;
	size_t i;
	int line;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct registry r = { 0 };
		int rc = state_parse(t[i].text, &r, &line, &why);

		ok(rc < 0 && line == t[i].line && why, "damaged state #%zu refused at line %d (%s)",
		   i, line, why ? why : "?");
		reg_free(&r);
	}
}

static void
save_load(void)
{
	char dir[] = "/tmp/vsd-test-state-XXXXXX", path[256];
	struct registry a = { 0 }, b = { 0 };

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	ok(state_load(dir, &b) == 0 && b.n == 0, "a missing state file is an empty registry");
	reg_add(&a, mk("www1", 5000, 0, 0, 0));
	ok(state_save(dir, &a) == 0, "save");
	snprintf(path, sizeof(path), "%s/.state.tmp", dir);
	ok(access(path, F_OK) < 0, "no temporary file left behind");
	ok(state_load(dir, &b) == 0 && b.n == 1 && reg_find(&b, "www1"), "load what was saved");
	snprintf(path, sizeof(path), "%s/state", dir);
	unlink(path);
	rmdir(dir);
	reg_free(&a);
	reg_free(&b);
}

int
main(void)
{
	round_trip();
	damaged();
	save_load();
	return tap_done();
}
