// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CPU a gated service spends for each VS: each service thread's own CPU
 * time (the first field of /proc/<pid>/task/<tid>/schedstat, the
 * scheduler's sum_exec_runtime in ns, read through a descriptor kept open:
 * one pread, about a microsecond), charged to the VS the thread sat in
 * while it ran. The gate settles a thread's account when it moves the
 * thread (gate_bind() in place.c) and when a client asks for the figures
 * (status.c), so the hot path pays one read per move, none per accept that
 * stays in the same VS. Exact for single-threaded and prefork services; on
 * pure cgroup v2 a move takes the whole process, and a sibling thread's
 * time since its own last move goes to the VS it was in then.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gate.h"

uint64_t
charge_thread_cpu(struct service_thread *th)
{
	char path[64], buf[96];
	ssize_t n;

	if (th->sched_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)th->tgid, (int)th->tid);
		if ((th->sched_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return 0;
	}
	/* seq_file: a read from offset 0 formats the figures afresh */
	if ((n = pread(th->sched_fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

void
charge_settle(struct gate *g, struct service_thread *th)
{
	uint64_t now = charge_thread_cpu(th);
	struct gate_vs *v;

	if (now == 0)
		return;
	if (th->cpu_vs && now > th->cpu_mark && (v = vs_table_find(&g->tab, th->cpu_vs)))
		v->charged_ns += now - th->cpu_mark;
	th->cpu_mark = now;
	th->cpu_vs = th->bound;
}

struct settle_ctx {
	struct gate *g;
};

static void
settle_one(struct service_thread *th, void *arg)
{
	struct settle_ctx *x = arg;

	if (th->cpu_vs || th->bound)
		charge_settle(x->g, th);
}

void
charge_settle_all(struct gate *g)
{
	struct settle_ctx x = { g };

	thread_foreach(settle_one, &x);
}
