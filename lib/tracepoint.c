// SPDX-License-Identifier: GPL-2.0-or-later
/* A BPF program on a tracepoint without libbpf's object: lib/tracepoint.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "tracepoint.h"

/* The id file's number, or -1. */
static int
id_read(const char *dir, const char *tp)
{
	char p[512], buf[32];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/events/%s/id", dir, tp);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

/*
 * tracefs where no one mounted it (a host whose init is not systemd): a
 * child mounts it in a mount namespace of its own, where the mount goes
 * with the child, reads the id and exits. The host's mount table is not
 * touched. Needs CAP_SYS_ADMIN; -1 without.
 */
static int
id_read_private(const char *tp)
{
	int pfd[2], id = -1, st;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (unshare(CLONE_NEWNS) == 0 &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		    mount("tracefs", "/sys/kernel/tracing", "tracefs",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
			id = id_read("/sys/kernel/tracing", tp);
		_exit(write(pfd[1], &id, sizeof(id)) == sizeof(id) ? 0 : 1);
	}
	close(pfd[1]);
	if (read(pfd[0], &id, sizeof(id)) != sizeof(id))
		id = -1;
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return id;
}

int
tracepoint_id(const char *tp)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	size_t i;
	int id;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if ((id = id_read(dirs[i], tp)) >= 0)
			return id;
	if ((id = id_read_private(tp)) >= 0)
		return id;
	errno = ENOENT;
	return -1;
}

int
tracepoint_attach(int prog, const char *tp)
{
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(a),
				     .sample_period = 1, .wakeup_events = 1 };
	int id = tracepoint_id(tp), fd, link, e;

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
