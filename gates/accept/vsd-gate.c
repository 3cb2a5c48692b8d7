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
join_home(struct gate_vs *home)
{
	int h;

	char pid[16];
	int r;

	snprintf(pid, sizeof(pid), "%d", getpid());
	for (h = 0; h < CG_KIND_MAX; h++) {
		if (home->dir[h] && (r = cg_write(home->dir[h], "cgroup.procs", pid)) < 0) {
			fprintf(stderr, "vsd-gate: cannot join VS %s (%s): %s\n", home->name,
			    home->dir[h], strerror(-r));
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
child(struct opts *o, struct gate_vs *home, int sock, const sigset_t *oldmask, int want_socket)
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

/* The supervisor's state while it serves. */
struct supervisor {
	struct opts	 o;
	struct gate	 g;
	struct gate_vs	*home;
	pid_t		 pid;		/* the service's main process */
	int		 pidfd;
	int		 sfd, tfd, stfd;	/* signals, the tick timer, the status socket */
	unsigned	 period;	/* the tick, ms */
	int		 status;	/* the service's wait status, once it exited */
	int		 child_done, filter_gone;
	struct gated_listener **ls;	/* listeners with waiters, for poll */
	struct pollfd	*pfd;
	size_t		 nls;
};

/* The VS table, the home VS, the binding and classification back ends. */
static void
gate_setup(struct supervisor *sv)
{
	struct gate *g = &sv->g;
	struct rlimit rl;

	share_init(sv->o.window_ms);
	g->vsd_socket = sv->o.vsd_socket;
	g->table_file = sv->o.table_file;
	gate_refresh(g, 1);
	if (g->tab.n == 0)
		fatalx("no VS table from %s", sv->o.vsd_socket ? sv->o.vsd_socket : sv->o.table_file);
	if (!(sv->home = vs_table_find_name(&g->tab, sv->o.home)))
		fatalx("home VS %s does not exist", sv->o.home);
	g->home = sv->home->id;
	bind_init(g->tab.pure_v2, sv->o.cg2);
	conns_init(sv->o.map ? sv->o.map : g->tab.conns_map);
	/* one fd per queued connection plus a few per VS: lift the soft limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		struct rlimit nl = { rl.rlim_max < 65536 ? rl.rlim_max : 65536, rl.rlim_max };

		setrlimit(RLIMIT_NOFILE, &nl);
	}
}

/*
 * Fork the service under the filter (child()) and take the filter's listener
 * from it. Returns the notification fd, or -1 if the child failed before exec
 * (its wait status is in sv->status).
 */
static int
start_service(struct supervisor *sv, sigset_t *mask)
{
	struct gate_vs *home = sv->home;
	sigset_t oldmask;
	struct rlimit rl;
	int sp[2], nfd, want_socket;
	size_t i;

	/* the lazy cgroup2 move is for hybrid hosts only (see rebind.c) */
	want_socket = !sv->g.tab.pure_v2 && sv->o.cg2 == CG2_LAZY &&
	    home->dir[CG_KIND_UNIFIED] != NULL;
	sigemptyset(mask);
	for (i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(mask, fwd_signals[i]);
	sigaddset(mask, SIGCHLD);
	sigaddset(mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, mask, &oldmask);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		fatal("socketpair");
	if ((sv->pid = fork()) < 0)
		fatal("fork");
	if (sv->pid == 0) {
		/* the service must not keep the child end's peer */
		close(sp[0]);
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			setrlimit(RLIMIT_NOFILE, &rl);
		child(&sv->o, home, sp[1], &oldmask, want_socket);
	}
	close(sp[1]);
	sv->pidfd = pidfd_open(sv->pid, 0);
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* a prefork master's workers stay ours */
	nfd = recv_fd(sp[0]);
	close(sp[0]);
	if (nfd < 0)	/* the child failed before exec and said why */
		waitpid(sv->pid, &sv->status, 0);
	return nfd;
}

/* The descriptors the loop polls, the gate, the RCU helper, the status socket. */
static void
serve_setup(struct supervisor *sv, int nfd, const sigset_t *mask)
{
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int r;

	if (!(sv->pfd = calloc(P_FIRST, sizeof(*sv->pfd))))
		fatalx("out of memory");
	/* the flags go by value, not by pointer */
	if (sv->o.sync && ioctl(nfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0)
		sv->g.sync_wakeup = 1;
	else if (sv->o.sync)
		log_info("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP unavailable (Linux 6.6+): %s",
		    strerror(errno));
	if ((sv->sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (sv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		fatal("signalfd/timerfd");
	if ((r = gate_init(&sv->g, nfd)) < 0)
		fatalx("gate: %s", strerror(-r));
	/* after the service's fork: it must not inherit the helper's mapping */
	if (!sv->o.nowarm && (r = rcu_warm_start(sv->home, sv->g.tab.pure_v2)) < 0)
		log_warnx("no helper against RCU waits in cgroup moves: %s", strerror(-r));
	sv->stfd = sv->o.status ? status_open(sv->o.status) : -1;
	sv->period = 100;
	arm_timer(sv->tfd, sv->period);
}

/* Fill the poll set: our four descriptors, then the listeners with waiters. */
static size_t
poll_set(struct supervisor *sv)
{
	size_t nl = gate_waiting_listeners(&sv->g, sv->ls, sv->nls), k;

	if (nl > sv->nls) {
		struct gated_listener **nls_p = realloc(sv->ls, nl * 2 * sizeof(*sv->ls));
		struct pollfd *np = realloc(sv->pfd, (P_FIRST + nl * 2) * sizeof(*sv->pfd));

		if (nls_p)
			sv->ls = nls_p;
		if (np)
			sv->pfd = np;
		if (nls_p && np)
			sv->nls = nl * 2;
		nl = gate_waiting_listeners(&sv->g, sv->ls, sv->nls);
		if (nl > sv->nls)
			nl = sv->nls;
	}
	sv->pfd[P_NOTIFY] = (struct pollfd){ .fd = sv->filter_gone ? -1 : sv->g.notify_fd,
	    .events = POLLIN };
	sv->pfd[P_SIGNAL] = (struct pollfd){ .fd = sv->sfd, .events = POLLIN };
	sv->pfd[P_TIMER] = (struct pollfd){ .fd = sv->tfd, .events = POLLIN };
	sv->pfd[P_STATUS] = (struct pollfd){ .fd = sv->stfd, .events = POLLIN };
	for (k = 0; k < nl; k++)
		sv->pfd[P_FIRST + k] = (struct pollfd){ .fd = sv->ls[k]->fd, .events = POLLIN };
	return nl;
}

/* Forward what was sent to us to the service; reap it when it exits. */
static void
on_signals(struct supervisor *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->sfd, &si, sizeof(si)) == sizeof(si)) {
		int st;
		pid_t w;

		if (si.ssi_signo != SIGCHLD) {
			/* a terminal's ^C reaches the service's process
			 * group by itself (SI_KERNEL): forward only sent ones */
			if (!sv->child_done && si.ssi_signo != SIGPIPE && si.ssi_code != SI_KERNEL)
				pidfd_send_signal(sv->pidfd, (int)si.ssi_signo, NULL, 0);
			continue;
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == sv->pid) {
				sv->status = st;
				sv->child_done = 1;
			}
	}
}

/*
 * The event loop, until the service has exited and no task uses the filter.
 * poll(), not epoll: a task blocked in poll() on the notification fd is woken
 * with the waker's flags, so with --sync-wakeup on
 * (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) we run on the calling thread's CPU;
 * epoll's callback drops that flag (ep_poll_callback keeps only WF_SYNC).
 * Listeners are in the set only while a thread waits on them: no epoll_ctl
 * per accept either.
 */
static void
serve(struct supervisor *sv)
{
	while (!(sv->child_done && sv->filter_gone)) {
		size_t nl = poll_set(sv), k;
		struct pollfd *pfd;
		int n;

		PROF_BEGIN();
		n = poll(sv->pfd, P_FIRST + nl, -1);
		PROF_MARK(PROF_POLL);
		if (n < 0) {
			if (errno != EINTR)
				fatal("poll");
			continue;
		}
		pfd = sv->pfd;
		/* listeners first: nothing below frees one before the next poll */
		for (k = 0; k < nl; k++)
			if (pfd[P_FIRST + k].revents)
				gate_listener_ready(&sv->g, sv->ls[k]);
		if (pfd[P_NOTIFY].revents & POLLIN)
			gate_notify(&sv->g);
		else if (pfd[P_NOTIFY].revents & (POLLHUP | POLLERR))
			sv->filter_gone = 1;	/* no task uses the filter any more */
		if (pfd[P_SIGNAL].revents & POLLIN)
			on_signals(sv);
		if (pfd[P_TIMER].revents & POLLIN) {
			uint64_t exp;
			unsigned np;

			if (read(sv->tfd, &exp, sizeof(exp)) == sizeof(exp) &&
			    (np = gate_tick(&sv->g)) != sv->period)
				arm_timer(sv->tfd, sv->period = np);
		}
		if (pfd[P_STATUS].revents & POLLIN)
			status_serve(&sv->g, sv->stfd, sv->o.name, sv->pid);
	}
}

int
main(int argc, char **argv)
{
	struct supervisor sv = { .stfd = -1 };
	sigset_t mask;
	int nfd;

	parse_opts(argc, argv, &sv.o);
	log_init(1, sv.o.verbose, "vsd-gate");
	gate_setup(&sv);
	if ((nfd = start_service(&sv, &mask)) < 0)
		return exit_code(sv.status);
	serve_setup(&sv, nfd, &mask);
	log_debug("serving %s (pid %d) from VS %s", sv.o.name, sv.pid, sv.o.home);
	serve(&sv);
	gate_close_all(&sv.g);
	if (sv.o.status)
		unlink(sv.o.status);
	log_debug("%s exited with status %d", sv.o.name, exit_code(sv.status));
	return exit_code(sv.status);
}
