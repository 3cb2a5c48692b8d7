// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * notify-floor: the cheapest supervisor a seccomp user-notification accept
 * gate can have, as a reference for benchmarks/accept-cost -N. It sends the
 * command's accept(2) and accept4(2) to itself and answers each with
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE, nothing else: no classification, no
 * re-binding, no check. What it costs per accept (two context switches,
 * poll + RECV + SEND) is the floor of any gate that stops every accept.
 *
 *   notify-floor [-S] -- command [arg ...]
 *
 * Like vsd-gate it waits in poll(2) and sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 * (Linux 6.6+) where the kernel has it; -S leaves it off.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)
#endif

#if defined(__x86_64__)
#define NATIVE_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH	AUDIT_ARCH_AARCH64
#else
#error "notify-floor: add this architecture's AUDIT_ARCH_"
#endif

/* In the child: the filter, its listener fd sent to the parent over sp. */
static void
child(int sp, char **argv)
{
	/* every field named: BPF_STMT leaves jt/jf out, which -Wextra flags */
#define STMT(c, v)		{ .code = (c), .jt = 0, .jf = 0, .k = (v) }
#define JUMP(c, v, t, e)	{ .code = (c), .jt = (t), .jf = (e), .k = (v) }
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),	/* another ABI's numbers */
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_accept, 2, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_accept4, 1, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	char b = 0;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int fd;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    (fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			       SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog)) < 0) {
		perror("notify-floor: seccomp");
		_exit(126);
	}
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sp, &m, 0) < 0) {
		perror("notify-floor: sendmsg");
		_exit(126);
	}
	close(fd);
	close(sp);
	execvp(argv[0], argv);
	perror("notify-floor: exec");
	_exit(127);
}

static int
recv_fd(int sp)
{
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	char b;
	struct iovec iov = { &b, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sp, &m, 0) <= 0 || !(cm = CMSG_FIRSTHDR(&m)) || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

int
main(int argc, char **argv)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int o, sync = 1, sp[2], nfd, st;
	pid_t pid;

	while ((o = getopt(argc, argv, "S")) != -1) {
		if (o != 'S') {
			fprintf(stderr, "usage: notify-floor [-S] -- command [arg ...]\n");
			return 2;
		}
		sync = 0;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: notify-floor [-S] -- command [arg ...]\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0 || (pid = fork()) < 0) {
		perror("notify-floor");
		return 1;
	}
	if (pid == 0) {
		close(sp[0]);
		child(sp[1], argv + optind);
	}
	close(sp[1]);
	if ((nfd = recv_fd(sp[0])) < 0) {
		fprintf(stderr, "notify-floor: no notification fd from the child\n");
		return 1;
	}
	close(sp[0]);
	if (sync) {
		__u64 fl = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, fl) < 0)
			fprintf(stderr, "notify-floor: no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: %s\n",
				strerror(errno));
	}
	for (;;) {
		struct pollfd pf = { .fd = nfd, .events = POLLIN };

		if (poll(&pf, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("notify-floor: poll");
			break;
		}
		if (pf.revents & (POLLHUP | POLLERR))
			break;	/* no task uses the filter any more */
		memset(&req, 0, sizeof(req));
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			perror("notify-floor: RECV");
			break;
		}
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			perror("notify-floor: SEND");
	}
	if (waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
