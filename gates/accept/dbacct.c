// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The database mode's accounting: per VS, the CPU time and the I/O of the
 * database's threads while they served that VS's connections, the way
 * MySQL Governor accounts, without a patched server: each thread's own
 * counters, read when the gate moves the thread to another VS and on the
 * tick (dbthreads.c), the difference since the last read charged to the VS
 * the thread served in between.
 *
 * - CPU: the first field of /proc/<pid>/task/<tid>/schedstat, the
 *   scheduler's sum_exec_runtime in ns (charge.c reads it), the same on
 *   either cgroup layout: on hybrid hosts a thread may sit in a cgroup that
 *   is no VS's (a capped VS's child, dbcap.c), and on pure v2 in a threaded
 *   child, so no cgroup's counter is the VS's database time.
 * - I/O: read_bytes and write_bytes of /proc/<pid>/task/<tid>/io, the bytes
 *   the thread made the block layer fetch and the pages it dirtied. What
 *   the page cache served counts nothing, and InnoDB writes most of its
 *   pages in its own background threads (page cleaner, log writer), which
 *   serve no connection: that I/O is home's, not the VS whose rows it
 *   writes.
 * - Home: the process's own totals (/proc/<pid>/stat utime + stime, in
 *   clock ticks, and /proc/<pid>/io, dead threads included) less what the
 *   other VSs were charged: the server's own threads, connections from
 *   outside every VS, and what a thread ran in a VS between its last
 *   reading and its end. A reading the others ran ahead of (the ticks'
 *   resolution) is carried over, so the figures never go down.
 *
 * The cost: two preads through descriptors kept open per move, none per
 * query.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

/* read_bytes and write_bytes of an open /proc/.../io; 0 or -1 */
static int
read_io(int fd, uint64_t *rd, uint64_t *wr)
{
	char buf[512], *p;
	ssize_t n;

	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strstr(buf, "\nread_bytes: ")))
		return -1;
	*rd = strtoull(p + 13, NULL, 10);
	if (!(p = strstr(buf, "\nwrite_bytes: ")))
		return -1;
	*wr = strtoull(p + 14, NULL, 10);
	return 0;
}

static uint64_t
delta(uint64_t now, uint64_t mark)
{
	return now > mark ? now - mark : 0;
}

/* What the other VSs were charged, since dbacct_home() last looked. */
static uint64_t others_cpu, others_rd, others_wr;

void
dbacct_settle(struct vs_table *t, struct service_thread *th, uint32_t home)
{
	uint64_t cpu = charge_thread_cpu(th), rd = th->db_rd_mark, wr = th->db_wr_mark;
	struct gate_vs *v;
	char path[64];

	if (cpu == 0)
		return;
	if (th->io_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/io", (int)th->tgid, (int)th->tid);
		th->io_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (th->io_fd >= 0)
		read_io(th->io_fd, &rd, &wr);
	if (th->db_vs && th->db_vs != home && (v = vs_table_find(t, th->db_vs))) {
		v->db_cpu_ns += delta(cpu, th->db_cpu_mark);
		v->db_read_bytes += delta(rd, th->db_rd_mark);
		v->db_write_bytes += delta(wr, th->db_wr_mark);
		others_cpu += delta(cpu, th->db_cpu_mark);
		others_rd += delta(rd, th->db_rd_mark);
		others_wr += delta(wr, th->db_wr_mark);
	}
	th->db_cpu_mark = cpu;
	th->db_rd_mark = rd;
	th->db_wr_mark = wr;
	th->db_vs = th->bound ? th->bound : home;
}

/* utime + stime of the whole process (ns); 0 if unreadable */
static uint64_t
proc_cpu(pid_t tgid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* after the command's ")": state ppid pgrp session tty tpgid flags
	 * minflt cminflt majflt cmajflt utime stime */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
}

/* The share of a process total that is home's: its growth less the others'
 * charges, with a shortfall carried to the next call. */
struct remainder {
	uint64_t last;		/* the total at the last call */
	int64_t	 debt;		/* the others ran ahead of it */
};

static uint64_t
take(struct remainder *r, uint64_t total, uint64_t *others)
{
	int64_t d = (int64_t)delta(total, r->last) - (int64_t)*others + r->debt;

	r->last = total;
	*others = 0;
	r->debt = d < 0 ? d : 0;
	return d > 0 ? (uint64_t)d : 0;
}

void
dbacct_home(struct vs_table *t, pid_t tgid, uint32_t home)
{
	static struct remainder cpu, rd, wr;
	static pid_t last_tgid;
	uint64_t pcpu, prd = 0, pwr = 0;
	struct gate_vs *h = vs_table_find(t, home);
	char path[64];
	int fd;

	if (tgid != last_tgid) {	/* a new process counts from 0 */
		memset(&cpu, 0, sizeof(cpu));
		memset(&rd, 0, sizeof(rd));
		memset(&wr, 0, sizeof(wr));
		others_cpu = others_rd = others_wr = 0;
		last_tgid = tgid;
	}
	if (!tgid || !(pcpu = proc_cpu(tgid)))
		return;
	snprintf(path, sizeof(path), "/proc/%d/io", (int)tgid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (read_io(fd, &prd, &pwr) < 0)
			prd = rd.last, pwr = wr.last;
		close(fd);
	}
	pcpu = take(&cpu, pcpu, &others_cpu);
	prd = take(&rd, prd, &others_rd);
	pwr = take(&wr, pwr, &others_wr);
	if (h) {
		h->db_cpu_ns += pcpu;
		h->db_read_bytes += prd;
		h->db_write_bytes += pwr;
	}
}
