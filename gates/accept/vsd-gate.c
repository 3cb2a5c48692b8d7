// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsd-gate: the accept-gate supervisor of one shared service.
 *
 * It is a process of its own, not a thread in vsd (like podman's conmon):
 * the seccomp listener fd lives here, so a vsd restart never touches it. If
 * the listener's holder died, every gated accept() would fail with ENOSYS;
 * vsd restarts are routine, this process's life is the service's life.
 *
 *   fork -> child: join the home VS's cgroups, load the filter (accept,
 *           accept4 -> SCMP_ACT_NOTIFY; on hybrid hosts also socket(AF_INET*)
 *           for the lazy cgroup2 move), send the listener fd to the parent
 *           (SCM_RIGHTS), exec CMD unmodified (127 if it does not exist).
 *   parent: the supervisor; stays in the foreground, forwards signals, serves
 *           notifications, exits with the service's status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "gate.h"
#include "profile.h"
#include "lib/log.h"
#include "seccomp-compat.h"


/* the supervisor's poll set; the listeners with waiters follow */
enum { P_NOTIFY, P_SIGNAL, P_TIMER, P_STATUS, P_FIRST };

static const int fwd_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGALRM,
};

struct opts {
	const char *home, *name, *vsd_socket, *table_file, *map, *status;
	unsigned window_ms;
	enum cg2_mode cg2;
	int verbose;
	int sync;	/* --sync-wakeup on (off by default: see vsctl-run(8)) */
	int nowarm;	/* --warm off (on by default: see rcu-warm.c) */
	char **argv;
};

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: vsd-gate [-v] --home VS [--name NAME] (--socket PATH | --vs-table FILE)\n"
	    "                [--conns-map PATH] [--status PATH] [--window MS]\n"
	    "                [--cgroup2 lazy|always|never] [--sync-wakeup on|off]\n"
	    "                [--warm on|off]\n"
	    "                -- CMD [ARGS...]\n");
	exit(2);
}

static int
on_off(const char *opt, const char *arg)
{
	if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
		fatalx("%s %s: expected on or off", opt, arg);
	return strcmp(arg, "on") == 0;
}

static void
parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "home", required_argument, NULL, 'H' },
		{ "name", required_argument, NULL, 'n' },
		{ "socket", required_argument, NULL, 's' },
		{ "vs-table", required_argument, NULL, 't' },
		{ "conns-map", required_argument, NULL, 'm' },
		{ "status", required_argument, NULL, 'S' },
		{ "window", required_argument, NULL, 'w' },
		{ "cgroup2", required_argument, NULL, 'c' },
		{ "sync-wakeup", required_argument, NULL, 'y' },
		{ "warm", required_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	uint64_t w;
	int c;

	while ((c = getopt_long(argc, argv, "+v", lo, NULL)) != -1) {
		switch (c) {
		case 'H': o->home = optarg; break;
		case 'n': o->name = optarg; break;
		case 's': o->vsd_socket = optarg; break;
		case 't': o->table_file = optarg; break;
		case 'm': o->map = optarg; break;
		case 'S': o->status = optarg; break;
		case 'v': o->verbose++; break;
		case 'c':
			if (strcmp(optarg, "lazy") == 0)
				o->cg2 = CG2_LAZY;
			else if (strcmp(optarg, "always") == 0)
				o->cg2 = CG2_ALWAYS;
			else if (strcmp(optarg, "never") == 0)
				o->cg2 = CG2_NEVER;
			else
				fatalx("--cgroup2 %s: expected lazy, always or never", optarg);
			break;
		case 'y': o->sync = on_off("--sync-wakeup", optarg); break;
		case 'W': o->nowarm = !on_off("--warm", optarg); break;
		case 'w':
			if (parse_u64(optarg, 10, 60000, &w, &why) < 0)
				fatalx("--window %s %s (10..60000 ms)", optarg, why);
			o->window_ms = (unsigned)w;
			break;
		default: usage();
		}
	}
	if (optind >= argc || !o->home || (!o->vsd_socket == !o->table_file))
		usage();
	o->argv = argv + optind;
	if (!o->name) {
		const char *s = strrchr(o->argv[0], '/');

		o->name = s ? s + 1 : o->argv[0];
	}
}

/* In the child: join every hierarchy of the home VS. */
static void
join_home(struct gvs *home)
{
	int h;

	for (h = 0; h < GCG_MAX; h++) {
		char path[4096], pid[16];

		if (!home->dir[h])
			continue;
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (path_fmt(path, sizeof(path), "%s/cgroup.procs", home->dir[h]) < 0 ||
		    write_file(path, pid) < 0) {
			fprintf(stderr, "vsd-gate: cannot join VS %s (%s): %s\n", home->name,
			    home->dir[h], strerror(errno));
			_exit(126);
		}
	}
}

static int
load_filter(int want_socket)
{
	scmp_filter_ctx ctx;
	int r, fd;

	if (!(ctx = seccomp_init(SCMP_ACT_ALLOW)))
		return -ENOMEM;
	/* a 32-bit binary is not gated rather than killed */
	seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	/* keep setuid helpers of the service working: as root, no NO_NEW_PRIVS */
	if (geteuid() == 0)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(accept), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(accept4), 0)) < 0)
		goto out;
	if (want_socket &&
	    ((r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
		SCMP_A0(SCMP_CMP_EQ, AF_INET))) < 0 ||
	     (r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(socket), 1,
		SCMP_A0(SCMP_CMP_EQ, AF_INET6))) < 0))
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
child(struct opts *o, struct gvs *home, int sock, const sigset_t *oldmask, int want_socket)
{
	int nfd;

	prctl(PR_SET_PDEATHSIG, SIGTERM);	/* better than ENOSYS from every accept */
	join_home(home);
	if ((nfd = load_filter(want_socket)) < 0) {
		fprintf(stderr, "vsd-gate: seccomp filter: %s\n", strerror(-nfd));
		_exit(126);
	}
	if (send_fd(sock, nfd) < 0)
		_exit(126);
	close(nfd);
	close(sock);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	execvp(o->argv[0], o->argv);
	fprintf(stderr, "vsd-gate: %s: %s\n", o->argv[0],
	    errno == ENOENT ? "command not found" : strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static void
arm_timer(int tfd, unsigned ms)
{
	struct itimerspec its = {
		.it_value = { ms / 1000, (long)(ms % 1000) * 1000000 },
		.it_interval = { ms / 1000, (long)(ms % 1000) * 1000000 },
	};

	timerfd_settime(tfd, 0, &its, NULL);
}

static int
exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int
main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct gate g = { 0 };
	struct gvs *home;
	struct rlimit rl;
	sigset_t mask, oldmask;
	int sp[2], nfd, sfd, tfd, stfd = -1, pidfd, status = 0, r;
	int child_done = 0, filter_gone = 0, want_socket, sync_wakeup = 0;
	struct glisten **ls = NULL;
	struct pollfd *pfd = calloc(P_FIRST, sizeof(*pfd));
	size_t nls = 0;
	unsigned period = 100;
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	pid_t pid;
	size_t i;

	parse_opts(argc, argv, &o);
	log_init(1, o.verbose, "vsd-gate");
	if (!pfd)
		fatalx("out of memory");
	share_init(o.window_ms);
	g.vsd_socket = o.vsd_socket;
	g.table_file = o.table_file;
	gate_refresh(&g, 1);
	if (g.tab.n == 0)
		fatalx("no VS table from %s", o.vsd_socket ? o.vsd_socket : o.table_file);
	if (!(home = vstab_find_name(&g.tab, o.home)))
		fatalx("home VS %s does not exist", o.home);
	g.home = home->id;
	bind_init(g.tab.pure_v2, o.cg2);
	conns_init(o.map ? o.map : g.tab.conns_map);
	/* the lazy cgroup2 move is for hybrid hosts only (see rebind.c) */
	want_socket = !g.tab.pure_v2 && o.cg2 == CG2_LAZY && home->dir[GCG_UNIFIED] != NULL;
	/* one fd per queued connection plus a few per VS: lift the soft limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		struct rlimit nl = { rl.rlim_max < 65536 ? rl.rlim_max : 65536, rl.rlim_max };

		setrlimit(RLIMIT_NOFILE, &nl);
	}

	sigemptyset(&mask);
	for (i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(&mask, fwd_signals[i]);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		fatal("socketpair");
	if ((pid = fork()) < 0)
		fatal("fork");
	if (pid == 0) {
		/* the service must not keep the child end's peer */
		close(sp[0]);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			setrlimit(RLIMIT_NOFILE, &rl);
		child(&o, home, sp[1], &oldmask, want_socket);
	}
	close(sp[1]);
	pidfd = pidfd_open(pid, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* a prefork master's workers stay ours */
	nfd = recv_fd(sp[0]);
	close(sp[0]);
	if (nfd < 0) {
		/* the child failed before exec and said why */
		waitpid(pid, &status, 0);
		return exit_code(status);
	}
	/* the flags go by value, not by pointer */
	if (o.sync && ioctl(nfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0)
		sync_wakeup = 1;
	else if (o.sync)
		log_info("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP unavailable (Linux 6.6+): %s",
		    strerror(errno));

	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		fatal("signalfd/timerfd");
	if ((r = gate_init(&g, nfd)) < 0)
		fatalx("gate: %s", strerror(-r));
	g.sync_wakeup = sync_wakeup;
	/* after the service's fork: it must not inherit the helper's mapping */
	if (!o.nowarm && (r = warm_start(home, g.tab.pure_v2)) < 0)
		log_warnx("no helper against RCU waits in cgroup moves: %s", strerror(-r));
	if (o.status)
		stfd = status_open(o.status);
	arm_timer(tfd, period);
	log_debug("serving %s (pid %d) from VS %s", o.name, pid, o.home);

	/*
	 * poll(), not epoll: a task blocked in poll() on the notification fd is
	 * woken with the waker's flags, so with --sync-wakeup on
	 * (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) we run on the calling thread's CPU;
	 * epoll's callback drops that flag (ep_poll_callback keeps only WF_SYNC).
	 * Listeners are in the set only while a thread waits on them: no
	 * epoll_ctl per accept either.
	 */
	while (!(child_done && filter_gone)) {
		size_t nl = gate_waiting_listeners(&g, ls, nls), k;
		int n;

		if (nl > nls) {
			struct glisten **nls_p = realloc(ls, nl * 2 * sizeof(*ls));
			struct pollfd *np = realloc(pfd, (P_FIRST + nl * 2) * sizeof(*pfd));

			if (nls_p)
				ls = nls_p;
			if (np)
				pfd = np;
			if (nls_p && np)
				nls = nl * 2;
			nl = gate_waiting_listeners(&g, ls, nls);
			if (nl > nls)
				nl = nls;
		}
		pfd[P_NOTIFY] = (struct pollfd){ .fd = filter_gone ? -1 : nfd, .events = POLLIN };
		pfd[P_SIGNAL] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[P_TIMER] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfd[P_STATUS] = (struct pollfd){ .fd = stfd, .events = POLLIN };
		for (k = 0; k < nl; k++)
			pfd[P_FIRST + k] = (struct pollfd){ .fd = ls[k]->fd, .events = POLLIN };
		PROF_BEGIN();
		n = poll(pfd, P_FIRST + nl, -1);
		PROF_MARK(PROF_POLL);
		if (n < 0) {
			if (errno != EINTR)
				fatal("poll");
			continue;
		}
		/* listeners first: nothing below frees one before the next poll */
		for (k = 0; k < nl; k++)
			if (pfd[P_FIRST + k].revents)
				gate_listener_ready(&g, ls[k]);
		if (pfd[P_NOTIFY].revents & POLLIN)
			gate_notify(&g);
		else if (pfd[P_NOTIFY].revents & (POLLHUP | POLLERR))
			filter_gone = 1;	/* no task uses the filter any more */
		if (pfd[P_SIGNAL].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				int st;
				pid_t w;

				if (si.ssi_signo != SIGCHLD) {
					/* a terminal's ^C reaches the service's process
					 * group by itself (SI_KERNEL): forward only sent ones */
					if (!child_done && si.ssi_signo != SIGPIPE &&
					    si.ssi_code != SI_KERNEL)
						pidfd_send_signal(pidfd, (int)si.ssi_signo, NULL, 0);
					continue;
				}
				while ((w = waitpid(-1, &st, WNOHANG)) > 0)
					if (w == pid) {
						status = st;
						child_done = 1;
					}
			}
		}
		if (pfd[P_TIMER].revents & POLLIN) {
			uint64_t exp;
			unsigned np;

			if (read(tfd, &exp, sizeof(exp)) == sizeof(exp) &&
			    (np = gate_tick(&g)) != period)
				arm_timer(tfd, period = np);
		}
		if (pfd[P_STATUS].revents & POLLIN)
			status_serve(&g, stfd, o.name, pid);
	}
	gate_close_all(&g);
	if (o.status)
		unlink(o.status);
	log_debug("%s exited with status %d", o.name, exit_code(status));
	return exit_code(status);
}
