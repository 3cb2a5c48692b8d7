// SPDX-License-Identifier: GPL-2.0-or-later
/* A BPF program on a tracepoint without libbpf's object: lib/tracepoint.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "tracepoint.h"

static int
tp_id(const char *tp)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[512], buf[32];
	ssize_t n;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/events/%s/id", dirs[i], tp);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			return atoi(buf);
		}
	}
	errno = ENOENT;
	return -1;
}

int
tracepoint_attach(int prog, const char *tp)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .sample_period = 1, .wakeup_events = 1 };
	int id = tp_id(tp), fd, link, e;

	if (id < 0)
		return -1;
	a.config = (uint64_t)id;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	/* a BPF link (Linux 5.15), which holds the event: the link is all the
	 * caller keeps, and others can find and share it by its program */
	link = bpf_link_create(prog, fd, BPF_PERF_EVENT, NULL);
	e = errno;
	if (link >= 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		e = errno;
		close(link);
		link = -1;
	}
	close(fd);
	errno = e;
	return link;
}
