// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Starting the gated service, and what it leaves behind.
 *
 *   fork -> child: join the home VS's cgroups, become --user (its groups,
 *           no capabilities, no_new_privs), load the filter (accept,
 *           accept4 -> SCMP_ACT_NOTIFY; where the cgroup2 membership does
 *           not follow a re-binding, also socket() for AF_INET, AF_INET6
 *           and AF_UNIX, for the lazy cgroup2 move; io_uring, the other
 *           ABIs' accepts and seccomp(2) asking for a listener, to be
 *           refused, refuse.c), send the listener fd to the parent
 *           (SCM_RIGHTS), exec CMD unmodified (127 if it does not exist).
 *
 * The supervisor is the service's child subreaper, so a prefork master's
 * workers that outlive it become our children: service_signal_all() reaches
 * them (and their descendants) when the service is stopped or restarted.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <seccomp.h>

#include "supervisor.h"
#include "lib/log.h"

/* In the child: join every hierarchy of the home VS. */
static void
join_home(const struct gate_vs *home)
{
	const char *dir = "";
	int r;

	if ((r = cgh_join(&home->cg, getpid(), &dir)) < 0) {
		fprintf(stderr, "vsd-gate: cannot join VS %s (%s): %s\n", home->name, dir,
		    strerror(-r));
		_exit(126);
	}
}

static int
load_filter(int want_socket)
{
	scmp_filter_ctx ctx;
	int r, fd;

	if (!(ctx = seccomp_init(SCMP_ACT_ALLOW)))
		return -ENOMEM;
	/* an ABI the filter does not name (refuse.c names every other ABI
	 * of x86-64 and arm64) could accept unseen */
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* keep setuid helpers of the service working: as root, no NO_NEW_PRIVS */
	if (geteuid() == 0)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* listen(): to register a TCP listener before it queues a connection;
	 * bind(): to let go of a closed one whose port the service binds again */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(accept), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(accept4), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(listen), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(bind), 0)) < 0)
		goto out;
	/* AF_UNIX too: a database of protocol mysql finds the VS of a Unix
	 * client by the cgroup2 its socket was made in (dbthreads.bpf.c) */
	if (want_socket &&
	    ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
		SCMP_A0(SCMP_CMP_EQ, AF_INET))) < 0 ||
	     (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
		SCMP_A0(SCMP_CMP_EQ, AF_INET6))) < 0 ||
	     (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
		SCMP_A0(SCMP_CMP_EQ, AF_UNIX))) < 0))
		goto out;
	if ((r = refuse_filter_add(ctx)) < 0)	/* io_uring, 32-bit and x32 accepts, listeners */
		goto out;
	if ((r = seccomp_load(ctx)) < 0)	/* SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0 */
		goto out;
	r = (fd = seccomp_notify_fd(ctx)) < 0 ? fd : fd;
out:
	seccomp_release(ctx);
	return r;
}

static int
send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'n';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int
recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) <= 0)
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static void __attribute__((noreturn))
child(const struct opts *o, const struct gate_vs *home, int sock, const sigset_t *oldmask,
    int want_socket, int out)
{
	char err[256];
	int nfd;

	join_home(home);	/* as root: the cgroup files are root's */
	if (o->user && privs_become(&o->pu, err, sizeof(err)) < 0) {
		fprintf(stderr, "vsd-gate: %s\n", err);
		_exit(126);
	}
	/* after the uid change, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);	/* better than ENOSYS from every accept */
	if ((nfd = load_filter(want_socket)) < 0) {
		fprintf(stderr, "vsd-gate: seccomp filter: %s\n", strerror(-nfd));
		_exit(126);
	}
	if (send_fd(sock, nfd) < 0)
		_exit(126);
	close(nfd);
	close(sock);
	if (out >= 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
			_exit(126);
	}
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	sched_child();
	execvp(o->argv[0], o->argv);
	fprintf(stderr, "vsd-gate: %s: %s\n", o->argv[0],
	    errno == ENOENT ? "command not found" : strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

void
service_start(const struct opts *o, const struct gate_vs *home, const sigset_t *oldmask,
    int want_socket, int pipe_output, struct start *st)
{
	int sp[2], op[2] = { -1, -1 };
	struct rlimit rl;

	st->notify_fd = st->out_fd = -1;
	st->status = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		fatal("socketpair");
	if (pipe_output && pipe2(op, O_CLOEXEC) < 0)
		fatal("pipe");
	if ((st->pid = fork()) < 0)
		fatal("fork");
	if (st->pid == 0) {
		/* the service must not keep the child end's peer */
		close(sp[0]);
		if (op[0] >= 0)
			close(op[0]);
		/* the soft limit we raised for our queues is not the service's */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			setrlimit(RLIMIT_NOFILE, &rl);
		child(o, home, sp[1], oldmask, want_socket, op[1]);
	}
	close(sp[1]);
	if (op[1] >= 0) {
		close(op[1]);
		fcntl(op[0], F_SETFL, O_NONBLOCK);
		st->out_fd = op[0];
	}
	st->pidfd = pidfd_open(st->pid, 0);
	st->notify_fd = recv_fd(sp[0]);
	close(sp[0]);
	if (st->notify_fd < 0) {	/* the child failed before exec and said why */
		waitpid(st->pid, &st->status, 0);
		st->notify_fd = -1;
	}
}

/*
 * Signal pid's children and their descendants (depth first, then pid's
 * direct children), each through a pidfd opened while it is still a child
 * of the parent we found it under, so a recycled pid is never signalled.
 */
static int
signal_children(pid_t pid, int sig, int depth)
{
	char path[64], buf[4096], *p, *end;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (depth > 64)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		char cpath[PATH_MAX];

		if (de->d_name[0] == '.' ||
		    path_fmt(cpath, sizeof(cpath), "%s/%s/children", path, de->d_name) < 0 ||
		    read_file(cpath, buf, sizeof(buf)) < 0)
			continue;
		for (p = buf; *p; p = end) {
			long c = strtol(p, &end, 10);
			int fd;

			if (end == p)
				break;
			if (c <= 0 || (fd = pidfd_open((pid_t)c, 0)) < 0)
				continue;
			if (proc_parent((pid_t)c) == pid) {
				n += signal_children((pid_t)c, sig, depth + 1);
				if (pidfd_send_signal(fd, sig, NULL, 0) == 0)
					n++;
			}
			close(fd);
		}
	}
	closedir(d);
	return n;
}

int
service_signal_all(int sig)
{
	return signal_children(getpid(), sig, 0);
}

int
service_output(int fd, const char *name)
{
	static char line[4096];
	static size_t len;
	char chunk[4096];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		ssize_t i;

		for (i = 0; i < n; i++) {
			if (chunk[i] != '\n' && len < sizeof(line) - 1) {
				line[len++] = chunk[i];
				continue;
			}
			line[len] = '\0';
			log_info("%s: %s", name, line);
			len = 0;
			if (chunk[i] != '\n')	/* a line longer than the buffer */
				line[len++] = chunk[i];
		}
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		if (len) {
			line[len] = '\0';
			log_info("%s: %s", name, line);
			len = 0;
		}
		return 0;
	}
	return 1;
}
