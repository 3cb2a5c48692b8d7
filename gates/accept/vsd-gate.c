// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vsd-gate: the accept-gate supervisor of one shared service.
 *
 * It is a process of its own, not a thread in vsd (like podman's conmon):
 * the seccomp listener fd lives here, so a vsd restart never touches it. If
 * the listener's holder died, every gated accept() would fail with ENOSYS;
 * vsd restarts are routine, this process's life is the service's life.
 *
 * Started by `vsctl run`, it stays in the foreground, forwards signals,
 * serves notifications and exits with the service's status. Started by vsd
 * for a service the rule file declares (--restart), it also restarts the
 * service with back-off when it dies, logs its output line by line, and
 * stops it on SIGTERM or a "stop" request: SIGTERM to the service, SIGKILL
 * to whatever is left after --stop-timeout. service.c starts the service,
 * as --user if given; we then keep only the capabilities we use
 * (drop_privileges()).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "gate.h"
#include "supervisor.h"
#include "profile.h"
#include "lib/log.h"
#include "rules/rules.h"
#include "seccomp-compat.h"


/* the supervisor's poll set; the listeners with waiters follow. P_QUIET is
 * an epoll fd holding the descriptors that seldom fire (signals, the tick,
 * the status socket, the database mode's ring, the threads' ends): poll()
 * costs per descriptor, and it runs per accept. P_NOTIFY comes before
 * P_QUIET: poll() looks at them in that order, which thread-exit.c needs */
enum { P_NOTIFY, P_QUIET, P_OUTPUT, P_HOLD, P_FIRST };
enum { Q_SIGNAL = 1, Q_TIMER = 2, Q_STATUS = 4, Q_DB = 8, Q_EXIT = 16 };

static const int fwd_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, SIGALRM,
};

/* --restart: the back-off between starts doubles from BACKOFF_MIN_MS up to
 * BACKOFF_MAX_MS, and starts over after a run of RUN_OK_MS or more. */
#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	30000
#define RUN_OK_MS	10000
#define STOP_TIMEOUT_S	10

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: vsd-gate [-v] --home VS [--name NAME] (--socket PATH | --vs-table FILE)\n"
	    "                [--conns-map PATH] [--status PATH] [--status-group GROUP]\n"
	    "                [--window MS]\n"
	    "                [--cgroup2 lazy|always|never] [--sync-wakeup auto|on|off]\n"
	    "                [--warm on|off|supervisor|helper|helper-fifo] [--pm-qos on|off]\n"
	    "                [--fast on|exact|off] [--sched fifo|off]\n"
	    "                [--pidfd-thread on|off]\n"
	    "                [--restart] [--stop-timeout S] [--user USER [--group GROUP]]\n"
	    "                [--log stderr|syslog] [--rules FILE (with --vs-table)] [--trace FILE]\n"
	    "                -- CMD [ARGS...]\n");
	exit(2);
}

static const char *const cg2_names[] = { "lazy", "always", "never" };
static const char *const sync_names[] = { "auto", "on", "off" };
static const char *const sched_names[] = { "fifo", "off" };
static const char *const warm_names[] = { "on", "off", "helper", "helper-fifo", "supervisor" };

/* arg's index in names[n] (the enum's order), or a fatal "expected a, b or c". */
static int
keyword(const char *opt, const char *arg, const char *const *names, int n)
{
	char want[128] = "";
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	for (i = 0; i < n; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
		    i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
	fatalx("%s %s: expected %s", opt, arg, want);
}

static int
on_off(const char *opt, const char *arg)
{
	static const char *const names[] = { "on", "off" };

	return keyword(opt, arg, names, 2) == 0;
}

/* --status-group: a group name, or a gid as vsd passes it. */
static gid_t
parse_group(const char *arg)
{
	struct group *gr = getgrnam(arg);
	const char *why;
	uint64_t g;

	if (gr)
		return gr->gr_gid;
	if (parse_u64(arg, 0, (gid_t)-2, &g, &why) < 0)
		fatalx("--status-group %s: no such group", arg);
	return (gid_t)g;
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
		{ "status-group", required_argument, NULL, 'G' },
		{ "window", required_argument, NULL, 'w' },
		{ "cgroup2", required_argument, NULL, 'c' },
		{ "sync-wakeup", required_argument, NULL, 'y' },
		{ "warm", required_argument, NULL, 'W' },
		{ "sched", required_argument, NULL, 'C' },
		{ "pm-qos", required_argument, NULL, 'Q' },
		{ "fast", required_argument, NULL, 'F' },
		{ "restart", no_argument, NULL, 'r' },
		{ "stop-timeout", required_argument, NULL, 'T' },
		{ "log", required_argument, NULL, 'l' },
		{ "rules", required_argument, NULL, 'R' },
		{ "trace", required_argument, NULL, 'X' },
		{ "pidfd-thread", required_argument, NULL, 'P' },
		{ "user", required_argument, NULL, 'u' },
		{ "group", required_argument, NULL, 'g' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *why;
	uint64_t w;
	int c;

	o->stop_timeout = STOP_TIMEOUT_S;
	o->status_group = (gid_t)-1;
	while ((c = getopt_long(argc, argv, "+v", lo, NULL)) != -1) {
		switch (c) {
		case 'H': o->home = optarg; break;
		case 'n': o->name = optarg; break;
		case 's': o->vsd_socket = optarg; break;
		case 't': o->table_file = optarg; break;
		case 'm': o->map = optarg; break;
		case 'S': o->status = optarg; break;
		case 'G': o->status_group = parse_group(optarg); break;
		case 'v': o->verbose++; break;
		case 'r': o->restart = 1; break;
		case 'R': o->rules = optarg; break;
		case 'X': o->trace = optarg; break;
		case 'u': o->user = optarg; break;
		case 'g': o->group = optarg; break;
		case 'P': bind_pidfd_thread(on_off("--pidfd-thread", optarg)); break;
		case 'c':	/* enum cg2_mode's order */
			o->cg2 = (enum cg2_mode)keyword("--cgroup2", optarg, cg2_names, 3);
			break;
		case 'y':	/* enum sync_mode's order */
			o->sync = keyword("--sync-wakeup", optarg, sync_names, 3);
			break;
		case 'W':	/* enum warm_mode's order */
			o->warm = keyword("--warm", optarg, warm_names, 5);
			break;
		case 'C': o->nosched = keyword("--sched", optarg, sched_names, 2); break;
		case 'Q': o->pmqos = on_off("--pm-qos", optarg); break;
		case 'F':
			if ((o->fast = gate_fast_parse(optarg)) < 0)
				fatalx("--fast %s: expected on, exact or off", optarg);
			break;
		case 'w':
			if (parse_u64(optarg, 10, 60000, &w, &why) < 0)
				fatalx("--window %s %s (10..60000 ms)", optarg, why);
			o->window_ms = (unsigned)w;
			break;
		case 'T':
			if (parse_u64(optarg, 1, 3600, &w, &why) < 0)
				fatalx("--stop-timeout %s %s (1..3600 s)", optarg, why);
			o->stop_timeout = (unsigned)w;
			break;
		case 'l':
			if (strcmp(optarg, "stderr") != 0 && strcmp(optarg, "syslog") != 0)
				fatalx("--log %s: expected stderr or syslog", optarg);
			o->syslog = strcmp(optarg, "syslog") == 0;
			break;
		default: usage();
		}
	}
	if (optind >= argc || !o->home || (!o->vsd_socket == !o->table_file) ||
	    (o->rules && !o->table_file) || (o->group && !o->user))
		usage();
	o->argv = argv + optind;
	if (!o->name) {
		const char *s = strrchr(o->argv[0], '/');

		o->name = s ? s + 1 : o->argv[0];
	}
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

enum run_state { ST_STARTING, ST_RUNNING, ST_RESTARTING, ST_FAILED, ST_STOPPING };
static const char *const state_names[] = {
	"starting", "running", "restarting", "failed", "stopping",
};

/* The supervisor's state while it serves. */
struct supervisor {
	struct opts	 o;
	struct gate	 g;
	struct gate_vs	*home;
	sigset_t	 mask, oldmask;
	struct start	 st;		/* the current run (st.notify_fd >= 0 while it lasts) */
	int		 sfd, tfd, stfd;	/* signals, the tick timer, the status socket */
	int		 qfd;		/* epoll of those three (P_QUIET) */
	unsigned	 period;	/* the tick, ms */
	int		 child_done, filter_gone, warm_started;
	int		 stopping;	/* stop asked: no restart; leave once the run ends */
	int		 done;		/* leave the loop */
	enum run_state	 state;
	time_t		 since;		/* when state last changed (wall clock) */
	uint64_t	 started;	/* monotonic ns of the last start */
	uint64_t	 kill_at;	/* SIGKILL what is left at this time (0: no) */
	uint64_t	 restart_at;	/* start again at this time (0: no) */
	unsigned	 backoff_ms, restarts;
	int		 last_status, have_last;
	struct gated_listener **ls;	/* listeners with waiters, for poll */
	struct pollfd	*pfd;
	size_t		 nls;
};

static void
set_state(struct supervisor *sv, enum run_state s)
{
	sv->state = s;
	sv->since = time(NULL);
}

/* The VS table, the home VS, the binding and classification back ends. */
static void
gate_setup(struct supervisor *sv)
{
	struct gate *g = &sv->g;
	struct rlimit rl;

	share_init(sv->o.window_ms);
	g->vsd_socket = sv->o.vsd_socket;
	g->table_file = sv->o.table_file;
	g->pmqos = sv->o.pmqos;
	g->fast = sv->o.fast;
	g->svc_name = sv->o.name;	/* before the rules: which are this service's */
	if (sv->o.trace && trace_open(g, sv->o.trace) < 0)
		fatalx("--trace %s: cannot create it (see above)", sv->o.trace);
	gate_refresh(g, 1);
	if (g->tab.n == 0)
		fatalx("no VS table from %s", sv->o.vsd_socket ? sv->o.vsd_socket : sv->o.table_file);
	if (!(sv->home = vs_table_find_name(&g->tab, sv->o.home)))
		fatalx("home VS %s does not exist", sv->o.home);
	g->home = sv->home->id;
	trace_table(g);
	/* from vsd, the rules come with the table; else from --rules FILE */
	if (sv->o.rules) {
		struct rules *rs = NULL;

		if (gate_rules_load_file(sv->o.rules, &rs) < 0)
			fatalx("--rules %s: refused (see above)", sv->o.rules);
		gate_rules_update(g, 1, rs);
	}
	bind_init(sv->o.cg2);
	conns_init(sv->o.map ? sv->o.map : g->tab.conns_map);
	fp_init(sv->o.map ? sv->o.map : g->tab.conns_map, g->fast);
	/* loads a tracing program: before drop_privileges(); failure is logged */
	unixpeer_init();
	/* one fd per queued connection plus a few per VS: lift the soft limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		struct rlimit nl = { rl.rlim_max < 65536 ? rl.rlim_max : 65536, rl.rlim_max };

		setrlimit(RLIMIT_NOFILE, &nl);
	}
}

/*
 * With --user, keep only the capabilities the supervisor uses from here on,
 * in every set, the bounding set included (so no exec gets the others back):
 *   CAP_SYS_PTRACE  pidfd_getfd() of the listener, in a process of another uid
 *   CAP_KILL        signals to that process and to what it leaves behind
 *   CAP_SETUID, CAP_SETGID, CAP_SETPCAP
 *                   each (re)start: the child sets the user's groups and ids
 *                   and empties its bounding set (privs_become)
 *   CAP_BPF         re-opening the socket gate's pinned map (classify.c);
 *                   Linux 6.1 refuses every bpf() call without it while
 *                   unprivileged BPF is off, as on Debian
 *   CAP_SYS_NICE    unless --sched off: SCHED_FIFO again after a SIGXCPU
 *                   demotion (sched.c). An RLIMIT_RTPRIO of 1 would do
 *                   too, but raising its hard limit needs CAP_SYS_RESOURCE,
 *                   which root in a container often lacks (Docker's
 *                   default set); CAP_SYS_PTRACE already lets us do more
 *                   than CAP_SYS_NICE could, and the service, whose child
 *                   empties every set (privs_become), gets neither
 * We stay uid 0: moving threads writes "tasks" and "cgroup.procs", which are
 * root's files, and cgroup v1 lets only euid 0 (or the task's own uid) move
 * another's task; uid 0 needs no capability for either. What goes is
 * everything else, CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, CAP_NET_ADMIN and
 * CAP_SYS_MODULE among them: a supervisor fooled by what a service sends
 * it can no longer mount, load modules or touch files it does not own.
 *
 * Without --user the service runs as root with every capability and NNP
 * off (setuid helpers keep working), so its child needs CAP_SYS_ADMIN to
 * load the filter: then there is nothing to drop that the service would
 * not hold anyway, and we keep what we were started with.
 */
static void
drop_privileges(struct supervisor *sv)
{
	const uint64_t keep = 1ull << CAP_SYS_PTRACE | 1ull << CAP_KILL | 1ull << CAP_SETUID |
	    1ull << CAP_SETGID | 1ull << CAP_SETPCAP | 1ull << CAP_BPF |
	    (sv->o.nosched ? 0 : 1ull << CAP_SYS_NICE);
	uint64_t have = 0;
	int r;

	if (!sv->o.user)
		return;
	if ((r = privs_keep(keep)) < 0)
		fatalx("cannot drop capabilities: %s", strerror(-r));
	privs_permitted(&have);
	log_debug("capabilities kept: 0x%llx (service runs as %s:%s)", (unsigned long long)have,
	    sv->o.pu.user, sv->o.pu.group);
}

/* fd into the quiet set (P_QUIET), reported as tag */
static int
quiet_add(int qfd, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(qfd, EPOLL_CTL_ADD, fd, &ev);
}

/* What lives as long as we do: signals, the tick, the status socket. */
static void
loop_setup(struct supervisor *sv)
{
	size_t i;

	if (!(sv->pfd = calloc(P_FIRST, sizeof(*sv->pfd))))
		fatalx("out of memory");
	sigemptyset(&sv->mask);
	for (i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(&sv->mask, fwd_signals[i]);
	sigaddset(&sv->mask, SIGCHLD);
	sigaddset(&sv->mask, SIGPIPE);
	sigprocmask(SIG_BLOCK, &sv->mask, &sv->oldmask);
	if ((sv->sfd = signalfd(-1, &sv->mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (sv->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0)
		fatal("signalfd/timerfd");
	prctl(PR_SET_CHILD_SUBREAPER, 1);	/* a prefork master's workers stay ours */
	/* vsd finds supervisors by their status sockets (it must never kill a
	 * gated service's process for a VS it serves): without one, no start */
	if (sv->o.status && (sv->stfd = status_open(sv->o.status, sv->o.status_group)) < 0)
		fatalx("--status %s: cannot open the status socket", sv->o.status);
	sv->period = 100;
	arm_timer(sv->tfd, sv->period);
	if ((sv->qfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    quiet_add(sv->qfd, sv->sfd, Q_SIGNAL) < 0 || quiet_add(sv->qfd, sv->tfd, Q_TIMER) < 0 ||
	    (sv->stfd >= 0 && quiet_add(sv->qfd, sv->stfd, Q_STATUS) < 0) ||
	    (dbthreads_fd() >= 0 && quiet_add(sv->qfd, dbthreads_fd(), Q_DB) < 0) ||
	    (thread_exit_fd() >= 0 && quiet_add(sv->qfd, thread_exit_fd(), Q_EXIT) < 0))
		fatal("epoll");
}

/*
 * One run: fork the service under the filter and serve its listener. 0, or
 * -1 if the child failed before exec (its wait status is in sv->st.status).
 */
static int
run_start(struct supervisor *sv)
{
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	struct gate_vs *home = sv->home;
	int want_socket, r;

	/* the home VS may have been re-made (a reboot, destroy + create) */
	gate_refresh(&sv->g, 1);
	if ((home = vs_table_find_name(&sv->g.tab, sv->o.home)))
		sv->home = home;
	else
		home = sv->home;
	/* the lazy cgroup2 move, where cgroup2 does not follow a move (rebind.c) */
	want_socket = sv->o.cg2 == CG2_LAZY && cgh_cgroup2_apart(&home->cg);
	sv->child_done = sv->filter_gone = 0;
	sv->started = now_ns();
	service_start(&sv->o, home, &sv->oldmask, want_socket, sv->o.restart, &sv->st);
	if (sv->st.notify_fd < 0) {
		sv->child_done = sv->filter_gone = 1;
		return -1;
	}
	/* the flags go by value, not by pointer */
	if (sv->o.sync != SYNC_OFF &&
	    ioctl(sv->st.notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0)
		sv->g.sync_wakeup = 1;
	else if (sv->o.sync == SYNC_ON)
		log_info("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP unavailable (Linux 6.6+): %s",
		    strerror(errno));
	if ((r = gate_init(&sv->g, sv->st.notify_fd)) < 0)
		fatalx("gate: %s", strerror(-r));
	/* after the service's fork: it must not inherit the helper's mapping */
	if (!sv->warm_started) {
		sv->warm_started = 1;
		if ((r = rcu_warm_start(sv->home, sv->o.warm)) < 0)
			log_warnx("no helper against RCU waits in cgroup moves: %s", strerror(-r));
	}
	dbthreads_run(&sv->g, sv->st.pid);
	set_state(sv, ST_RUNNING);
	log_debug("serving %s (pid %d) from VS %s", sv->o.name, sv->st.pid, sv->o.home);
	return 0;
}

/* A stop was asked (SIGTERM, SIGINT, or "stop" on the status socket). */
static void
request_stop(struct supervisor *sv, int sig)
{
	if (sv->stopping)
		return;
	sv->stopping = 1;
	sv->restart_at = 0;
	if (sv->st.notify_fd < 0 && sv->child_done) {	/* between runs */
		sv->done = 1;
		return;
	}
	set_state(sv, ST_STOPPING);
	if (!sv->child_done)
		pidfd_send_signal(sv->st.pidfd, sig, NULL, 0);
	else
		service_signal_all(sig);
	sv->kill_at = now_ns() + (uint64_t)sv->o.stop_timeout * 1000000000ull;
}

/*
 * The service's main process exited. A managed service (or one being
 * stopped) takes what it left with it, so that its filter goes away and the
 * run can end; a service started by hand keeps today's behaviour: its
 * workers serve on until they exit.
 */
static void
main_exited(struct supervisor *sv)
{
	if (!sv->o.restart && !sv->stopping)
		return;
	if (service_signal_all(SIGTERM) > 0 && !sv->kill_at)
		sv->kill_at = now_ns() + (uint64_t)sv->o.stop_timeout * 1000000000ull;
}

static void
describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d%s", WEXITSTATUS(st),
		    WEXITSTATUS(st) == 127 ? " (command not found)" : "");
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "status %d", st);
}

/* The run is over: every task of the filter is gone. Restart or leave. */
static void
run_end(struct supervisor *sv)
{
	uint64_t ran_ms = (now_ns() - sv->started) / 1000000;
	char what[96];

	if (sv->st.notify_fd >= 0) {
		gate_close_all(&sv->g);
		close(sv->st.notify_fd);
		sv->st.notify_fd = -1;
	}
	if (sv->st.pidfd >= 0)
		close(sv->st.pidfd);
	sv->st.pidfd = -1;
	sv->kill_at = 0;
	dbthreads_run(&sv->g, 0);
	sv->last_status = sv->st.status;
	sv->have_last = 1;
	describe_status(sv->st.status, what, sizeof(what));
	if (!sv->o.restart || sv->stopping) {
		log_debug("%s exited (%s)", sv->o.name, what);
		sv->done = 1;
		return;
	}
	sv->backoff_ms = ran_ms >= RUN_OK_MS || !sv->backoff_ms ? BACKOFF_MIN_MS :
	    sv->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : sv->backoff_ms * 2;
	sv->restarts++;
	sv->restart_at = now_ns() + (uint64_t)sv->backoff_ms * 1000000ull;
	set_state(sv, sv->backoff_ms >= BACKOFF_MAX_MS ? ST_FAILED : ST_RESTARTING);
	log_warnx("service %s exited (%s) after %llu ms; restart %u in %u ms", sv->o.name, what,
	    (unsigned long long)ran_ms, sv->restarts, sv->backoff_ms);
}

/* Fill the poll set: our descriptors, then the listeners with waiters. */
static size_t
poll_set(struct supervisor *sv)
{
	int running = sv->st.notify_fd >= 0;
	size_t nl = running ? gate_waiting_listeners(&sv->g, sv->ls, sv->nls) : 0;

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
	sv->pfd[P_NOTIFY] = (struct pollfd){ .fd = !running || sv->filter_gone ? -1 :
	    sv->st.notify_fd, .events = POLLIN };
	sv->pfd[P_QUIET] = (struct pollfd){ .fd = sv->qfd, .events = POLLIN };
	sv->pfd[P_OUTPUT] = (struct pollfd){ .fd = sv->st.out_fd, .events = POLLIN };
	/* connections waiting for their FastCGI params (hold.c) */
	sv->pfd[P_HOLD] = (struct pollfd){ .fd = running && sv->g.nheld ? sv->g.hold_epfd : -1,
	    .events = POLLIN };
	for (size_t k = 0; k < nl; k++)
		sv->pfd[P_FIRST + k] = (struct pollfd){ .fd = gate_listener_pollfd(sv->ls[k]),
		    .events = POLLIN };
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
			/* a managed service: TERM and INT mean stop, not restart */
			if (sv->o.restart && (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)) {
				request_stop(sv, SIGTERM);
				continue;
			}
			/* a terminal's ^C reaches the service's process
			 * group by itself (SI_KERNEL): forward only sent ones */
			if (!sv->child_done && si.ssi_signo != SIGPIPE && si.ssi_code != SI_KERNEL)
				pidfd_send_signal(sv->st.pidfd, (int)si.ssi_signo, NULL, 0);
			continue;
		}
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == sv->st.pid && !sv->child_done) {
				sv->st.status = st;
				sv->child_done = 1;
				main_exited(sv);
			}
	}
}

/* A request on the status socket: "status" (or nothing), "stats", "refresh",
 * "stop", "push". */
static void
on_status(struct supervisor *sv)
{
	struct status_info si = {
		.name = sv->o.name, .managed = sv->o.restart, .restarts = sv->restarts,
		.since = (long long)sv->since, .last_status = sv->have_last ? sv->last_status : -1,
		.user = sv->o.user ? sv->o.pu.user : NULL, .group = sv->o.user ? sv->o.pu.group : NULL,
	};
	char cmd[64];
	uid_t uid;
	int fd;

	if ((fd = status_accept(sv->stfd, sv->o.status_group, cmd, sizeof(cmd), &uid)) < 0)
		return;
	/* a new table from vsd: root or our uid only (vsd's group may read) */
	if (strncmp(cmd, "push ", 5) == 0 && (uid == 0 || uid == geteuid())) {
		gate_push(&sv->g, fd, cmd);
		return;
	}
	if (strcmp(cmd, "stop") == 0 && (uid == 0 || uid == geteuid()))
		request_stop(sv, SIGTERM);
	si.pid = sv->st.notify_fd >= 0 || !sv->child_done ? sv->st.pid : 0;
	si.state = state_names[sv->state];
	si.stats = strcmp(cmd, "stats") == 0;
	status_reply(&sv->g, fd, &si);
	/* after the answer: the client may be vsd, which answers our
	 * "gatetable" only once it is back in its loop */
	if (strcmp(cmd, "refresh") == 0)
		gate_refresh(&sv->g, 1);
}

static void
on_tick(struct supervisor *sv)
{
	uint64_t exp, now = now_ns();
	unsigned np = 100;

	if (read(sv->tfd, &exp, sizeof(exp)) != sizeof(exp))
		return;
	/* the database mode's moves, if its ring is not in the quiet set yet */
	dbthreads_ready();
	if (sv->st.notify_fd >= 0)
		np = gate_tick(&sv->g);
	sched_tick(now);
	if (sv->kill_at && now >= sv->kill_at) {
		log_warnx("service %s: still running %u s after SIGTERM; SIGKILL", sv->o.name,
		    sv->o.stop_timeout);
		if (!sv->child_done)
			pidfd_send_signal(sv->st.pidfd, SIGKILL, NULL, 0);
		service_signal_all(SIGKILL);
		sv->kill_at = now + 1000000000ull;	/* and again, for late forks */
	}
	if (sv->restart_at && now >= sv->restart_at) {
		sv->restart_at = 0;
		if (run_start(sv) < 0)
			run_end(sv);
	}
	/* deadlines are checked on ticks: keep them short while one is set */
	if ((sv->kill_at || sv->restart_at) && np > 100)
		np = 100;
	if (np != sv->period)
		arm_timer(sv->tfd, sv->period = np);
}

/* Which of the quiet descriptors are ready (Q_ flags). */
static unsigned
quiet_ready(int qfd)
{
	struct epoll_event ev[8];	/* more than the quiet set holds */
	unsigned r = 0;
	int n, k;

	n = epoll_wait(qfd, ev, (int)ARRAY_SIZE(ev), 0);
	for (k = 0; k < n; k++)
		r |= ev[k].data.u32;
	return r;
}

/*
 * The event loop, until the service has exited for good and no task uses the
 * filter. poll(), not epoll: a task blocked in poll() on the notification fd
 * is woken with the waker's flags, so with SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
 * (--sync-wakeup; by default where the kernel has it) we run on the calling
 * thread's CPU;
 * epoll's callback drops that flag (ep_poll_callback keeps only WF_SYNC), so
 * the notification fd stays in poll() and only the quiet ones go to epoll.
 * Listeners are in the set only while a thread waits on them: no epoll_ctl
 * per accept either.
 */
static void
serve(struct supervisor *sv)
{
	while (!sv->done) {
		size_t nl = poll_set(sv), k;
		struct pollfd *pfd;
		unsigned quiet;
		int n;

		/* a held connection's bound is checked on ticks (hold.c) */
		if (sv->g.nheld && sv->period > 10)
			arm_timer(sv->tfd, sv->period = 10);

		PROF_BEGIN();
		n = poll(sv->pfd, P_FIRST + nl, rcu_warm_timeout(now_ns()));
		PROF_MARK(PROF_POLL);
		rcu_warm_run(now_ns());
		if (n < 0) {
			if (errno != EINTR)
				fatal("poll");
			continue;
		}
		pfd = sv->pfd;
		quiet = pfd[P_QUIET].revents & POLLIN ? quiet_ready(sv->qfd) : 0;
		/* threads that ended, before a notification can name their TID
		 * again: the quiet set is polled after the notification fd */
		if (quiet & Q_EXIT)
			gate_threads_ended(&sv->g);
		/* listeners first: nothing below frees one before the next poll */
		for (k = 0; k < nl; k++)
			if (pfd[P_FIRST + k].revents)
				gate_listener_ready(&sv->g, sv->ls[k]);
		if (pfd[P_HOLD].revents & POLLIN)
			gate_hold_ready(&sv->g);
		if (pfd[P_NOTIFY].revents & POLLIN)
			gate_notify(&sv->g);
		else if (pfd[P_NOTIFY].revents & (POLLHUP | POLLERR))
			sv->filter_gone = 1;	/* no task uses the filter any more */
		if (pfd[P_OUTPUT].revents && !service_output(sv->st.out_fd, sv->o.name)) {
			close(sv->st.out_fd);
			sv->st.out_fd = -1;
		}
		if (quiet & Q_SIGNAL)
			on_signals(sv);
		if (quiet & Q_TIMER)
			on_tick(sv);
		if (quiet & Q_STATUS)
			on_status(sv);
		if (quiet & Q_DB)
			dbthreads_ready();
		if (sv->st.notify_fd >= 0 && sv->child_done && sv->filter_gone)
			run_end(sv);
	}
}

int
main(int argc, char **argv)
{
	struct supervisor sv = { .stfd = -1, .st = { .notify_fd = -1, .out_fd = -1, .pidfd = -1 } };

	char err[256];

	parse_opts(argc, argv, &sv.o);
	log_init(!sv.o.syslog, sv.o.verbose, "vsd-gate");
	/* once, here: a forked child must not do NSS lookups */
	if (sv.o.user && privs_resolve(sv.o.user, sv.o.group, &sv.o.pu, err, sizeof(err)) < 0)
		fatalx("--user: %s", err);
	gate_setup(&sv);
	loop_setup(&sv);
	/* needs CAP_SYS_NICE, and comes before the service's first fork */
	sched_supervisor(!sv.o.nosched);
	drop_privileges(&sv);
	if (run_start(&sv) < 0)
		run_end(&sv);
	serve(&sv);
	if (sv.st.out_fd >= 0)
		while (service_output(sv.st.out_fd, sv.o.name))
			;
	gate_close_all(&sv.g);
	/* what lives as long as we do, freed so that a leak checker (configure
	 * --enable-sanitizers) reports real leaks only */
	vs_table_free(&sv.g.tab);
	workers_free(&sv.g.wk);
	rules_free(sv.g.rules);
	free(sv.g.id_of);
	free(sv.ls);
	free(sv.pfd);
	if (sv.o.status)
		unlink_socket(sv.o.status);
	return exit_code(sv.last_status);
}
