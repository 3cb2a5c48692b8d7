// SPDX-License-Identifier: GPL-2.0-or-later
/* vsd: the virtual server daemon. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gate-vs.h"
#include "lib/exitcode.h"
#include "lib/log.h"
#include "apply.h"
#include "drift.h"
#include "features.h"
#include "fork-gate.h"
#include "netshare.h"
#include "member.h"
#include "metrics.h"
#include "scope.h"
#include "sd-notify.h"
#include "state.h"
#include "vsd.h"

#define DEFAULT_SOCKET		"/run/vsd/vsd.sock"
#define DEFAULT_STATE_DIR	"/var/lib/vsd"
#define DEFAULT_ROOT		"vsd"

static void
usage(FILE *f)
{
	fprintf(f, "usage: vsd [-fv] [--foreground] [--socket PATH] [--state-dir DIR]\n"
		   "           [--cgroup-root NAME] [--group GROUP [--group-marks LO-HI]]\n"
		   "           [--rules FILE] [--verbose]\n"
		   "           [--metrics-file PATH.prom [--metrics-interval SECONDS]]\n"
		   "           [--record-conns gated | all]\n"
		   "       vsd --check | --version | --help\n");
}

/* The directory the control socket goes in (/run/vsd), made if missing. */
static int
mkdir_parent(const char *path, mode_t mode)
{
	char dir[PATH_MAX], *slash;

	if (path_fmt(dir, sizeof(dir), "%s", path) < 0)
		return -ENAMETOOLONG;
	if (!(slash = strrchr(dir, '/')) || slash == dir)
		return 0;
	*slash = '\0';
	return mkdir_p(dir, mode);
}

/* Only one vsd per state directory: the lock lives as long as the process. */
static int
lock_state_dir(const char *dir)
{
	char path[PATH_MAX];
	int dfd, fd;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		fatal("mkdir %s", dir);
	if (path_fmt(path, sizeof(path), "%s/lock", dir) < 0)
		fatalx("state directory path too long");
	/* what every state file's write (write_file_replace) will insist on,
	 * said now rather than at the first save */
	if ((dfd = dir_open_nofollow(dir)) < 0)
		fatalx_status(vx_from_errno(dfd), "--state-dir %s%s", dir, dir_why(dfd));
	/* O_NOFOLLOW: root opens nothing a link at this name points to */
	fd = openat(dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0)
		fatal("open %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			fatalx_status(VX_CONFLICT, "another vsd is running with state directory %s", dir);
		fatal("lock %s", path);
	}
	return fd;
}

/*
 * The first vsd since the machine booted? The state directory remembers the
 * boot id of the last run (state/boot_id). After a reboot every VS's cgroup
 * is gone, and that is no accident: the VSs are made again, empty, with
 * their limits (their processes went with the reboot).
 */
static int
first_run_since_boot(const char *state_dir)
{
	char path[PATH_MAX], now[64], last[64];

	if (read_file("/proc/sys/kernel/random/boot_id", now, sizeof(now)) < 0 ||
	    path_fmt(path, sizeof(path), "%s/boot_id", state_dir) < 0)
		return 0;
	if (read_file(path, last, sizeof(last)) == 0 && strcmp(now, last) == 0)
		return 0;
	if (write_file_atomic(state_dir, "boot_id", now, strlen(now)) < 0)
		log_warnx("cannot record the boot id in %s", state_dir);
	return 1;
}

/* After a reboot: make a VS's cgroups again, with its limits. */
static int
recreate(struct vsd *d, struct vs *vs)
{
	int r;

	if ((r = cg_vs_create(&d->cg, vs)) < 0) {
		log_warnx("VS %s: cannot make its cgroups again after the reboot: %s",
			  vs->name, strerror(-r));
		return r;
	}
	log_info("VS %s: made again after the reboot", vs->name);
	return 0;
}

/* Take over the VSs of an earlier run; a cgroup that vanished while vsd was
 * away is reported, not recreated, unless the machine rebooted since. */
static void
adopt(struct vsd *d)
{
	int rebooted = first_run_since_boot(d->state_dir);
	char dir[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < d->reg.n; i++) {
		struct vs *vs = d->reg.v[i];

		if (!cg_vs_exists(&d->cg, vs) && (!rebooted || recreate(d, vs) < 0)) {
			vs->status = VS_MISSING;
			log_warnx("VS %s: its cgroup disappeared while vsd was away; "
				  "'vsctl destroy %s' forgets it", vs->name, vs->name);
			continue;
		}
		vs->status = VS_OK;
		if (cg_vs_bpf_path(&d->cg, vs, dir, sizeof(dir)) == 0 && stat(dir, &st) == 0)
			vs->cg2_id = st.st_ino;
		/*
		 * Adopts the links pinned by the last run (they kept marking
		 * while vsd was away) and moves them to this vsd's programs.
		 */
		if (gate_vs_attach(d, vs) < 0)
			log_warnx("VS %s: the socket gate could not be attached; its sockets "
				  "are not marked until 'vsctl set' or a restart succeeds", vs->name);
		log_debug("adopted VS %s", vs->name);
	}
}

/*
 * On a systemd host the VSs live in a scope of their own (scope.c): adopt
 * it or make it, and put the tree there.
 */
static void
place_tree(struct vsd *d, const char *root)
{
	char own[PATH_MAX];
	pid_t keeper;
	int r;

	if (!scope_wanted(&d->cg))
		return;
	if ((r = scope_ensure(root, d->cg.hier[0].mnt, &keeper)) < 0)
		fatalx("cannot make the systemd scope for the VSs: %s (see above)", strerror(-r));
	if ((r = scope_cgroup(root, own, sizeof(own))) < 0 || (r = cg_set_own(&d->cg, own)) < 0)
		fatalx("scope cgroup path: %s", strerror(-r));
	d->cg.leaf_pid = keeper;
}

/* vsd stops with no VS: nothing of this instance stays (cgroups, pins, scope). */
static void
release_empty(struct vsd *d)
{
	if (d->reg.n != 0)
		return;
	if (d->cg.leaf_pid)
		scope_stop_keeper(d->cg.leaf_pid);
	cg_release(&d->cg);
	if (d->cg.leaf_pid && d->cg.nhier > 0)
		scope_wait_removed(d->cg.hier[0].base);
	if (d->gate)
		gate_socket_purge(d->gate);
}

static int
setup_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* SIGHUP: re-read the rule file; a bad one is refused and nothing changes. */
static void
reload_rules(struct vsd *d)
{
	struct buf out = { 0 }, errs = { 0 };

	if (!d->rules_path) {
		log_info("SIGHUP: no rule file to re-read (see --rules)");
		return;
	}
	if (rules_reload(d, 0, 0, &out, &errs) < 0)
		log_warnx("SIGHUP: rule file refused, nothing changed:\n%s",
			  errs.p ? errs.p : "");
	buf_free(&out);
	buf_free(&errs);
}

/* The control socket and its clients, signals, and the pidfds of the services' supervisors. */
static int
loop(struct vsd *d, int lfd, int sfd)
{
	struct pollfd *pfd = NULL;
	struct signalfd_siginfo si;
	size_t cap = 0, want, nc, ns;
	int tmo, gtmo;

	for (;;) {
		want = 3 + d->ctl.n + d->svcs.n;
		if (cap < want) {
			struct pollfd *np = realloc(pfd, want * 2 * sizeof(*pfd));

			if (!np)
				fatalx("out of memory");
			pfd = np;
			cap = want * 2;
		}
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = fork_gate_fd(), .events = POLLIN };
		nc = ctl_pollfds(d, pfd + 3, cap - 3);
		ns = svc_pollfds(d, pfd + 3 + nc, cap - 3 - nc);
		tmo = ctl_timeout_ms(d, metrics_timeout_ms(d, drift_timeout_ms(d, svc_timeout_ms(d))));
		if ((gtmo = gate_vs_timeout_ms(d)) >= 0 && (tmo < 0 || gtmo < tmo))
			tmo = gtmo;
		if (poll(pfd, 3 + nc + ns, tmo) < 0) {
			if (errno == EINTR)
				continue;
			log_warn("poll");
			free(pfd);
			return 1;
		}
		/* new processes first: the sooner moved, the less they run astray */
		if (pfd[2].revents & POLLIN)
			fork_gate_events(d);
		svc_events(d, pfd + 3 + nc, ns);
		svc_tick(d);
		drift_sweep(d);
		gate_vs_tick(d);
		metrics_tick(d);
		if (pfd[1].revents & POLLIN) {
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					/* the supervisors we started (services.c) */
					int st;
					pid_t w;

					while ((w = waitpid(-1, &st, WNOHANG)) > 0)
						log_debug("child %d ended: wait status 0x%x", (int)w, st);
					continue;
				}
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					log_info("signal %u: stopping; the VSs, the services and "
						 "their processes stay", si.ssi_signo);
					free(pfd);
					return 0;
				}
				if (si.ssi_signo == SIGHUP)
					reload_rules(d);
			}
		}
		/* the clients known before this poll, then the new ones */
		ctl_events(d, pfd + 3, nc);
		if (pfd[0].revents & POLLIN)
			ctl_accept(d, lfd);
	}
}

struct options {
	const char	*root, *group, *group_marks, *rules;
	const char	*metrics_file, *metrics_interval;
	int		 foreground, verbose, check;
	int		 record_all;	/* --record-conns all */
};

/* The command line: -1 to go on, else the exit status. */
static int
parse_options(int argc, char **argv, struct options *o, struct vsd *d)
{
	static const struct option opts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "group", required_argument, NULL, 'g' },
		{ "group-marks", required_argument, NULL, 'G' },
		{ "rules", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "check", no_argument, NULL, 'C' },
		{ "metrics-file", required_argument, NULL, 'M' },
		{ "metrics-interval", required_argument, NULL, 'I' },
		{ "version", no_argument, NULL, 'V' },
		{ "record-conns", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "fs:d:r:g:R:vhC", opts, NULL)) != -1) {
		switch (c) {
		case 'f': o->foreground = 1; break;
		case 's': d->socket_path = optarg; break;
		case 'd': d->state_dir = optarg; break;
		case 'r': o->root = optarg; break;
		case 'g': o->group = optarg; break;
		case 'G': o->group_marks = optarg; break;
		case 'R': o->rules = optarg; break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout); return 0;
		case 'C': o->check = 1; break;
		case 'M': o->metrics_file = optarg; break;
		case 'I': o->metrics_interval = optarg; break;
		case 'V': printf("vsd %s\n", PACKAGE_VERSION); return 0;
		case 'K':
			/* checked before anything is made, as every option */
			if (strcmp(optarg, "gated") && strcmp(optarg, "all")) {
				fprintf(stderr, "vsd: --record-conns %.32s: not gated or all\n",
					optarg);
				return VX_BADVALUE;
			}
			o->record_all = !strcmp(optarg, "all");
			break;
		default: usage(stderr); return VX_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return VX_USAGE;
	}
	return -1;
}

/* The socket gate needs cgroup2 (hybrid or pure v2); legacy hosts run without. */
static void
open_socket_gate(struct vsd *d, const char *root, int record_all)
{
	struct vsd_connlim lim;
	int adopted = 0, r, was;

	if (d->cg.layout == CG_LEGACY) {
		log_warnx("no cgroup2 hierarchy: the socket gate is off");
		return;
	}
	if ((r = gate_socket_open(root, &d->gate, &adopted)) < 0) {
		unlink_socket(d->socket_path);
		fatalx("cannot set up the socket gate: %s (see above)", strerror(-r));
	}
	log_info("socket gate: %s its programs in %s", adopted ? "adopted" : "loaded",
		 gate_socket_pindir(d->gate));
	/*
	 * The mode lives in the pinned vsd_connlim, so it outlives us; this
	 * vsd's option wins over the one a previous vsd left there.  Entries
	 * recorded before stay until their connections close; connections
	 * open before a switch to all stay unrecorded.
	 */
	gate_socket_connlim(d->gate, &lim);
	if ((was = gate_socket_set_record_all(d->gate, record_all)) < 0) {
		unlink_socket(d->socket_path);
		fatalx("cannot set the socket gate's recording mode: %s", strerror(-was));
	}
	log_info("socket gate: recording %s (--record-conns %s)",
		 record_all ? "every TCP connection of a VS" :
		 "connections to gated listeners only", record_all ? "all" : "gated");
	/* a pool set means a vsd before us gave VSs their shares on these pins */
	if (lim.pool && was != record_all)
		log_info("socket gate: the previous vsd recorded %s; this vsd's option wins",
			 was ? "all connections" : "connections to gated listeners only");
}

/* --metrics-file, --metrics-interval: checked before anything is made. */
static void
metrics_options(struct vsd *d, const struct options *o)
{
	const char *why;
	uint64_t n = METRICS_INTERVAL_S;
	int r;

	/* the exit statuses of vsd(8): 2 usage, 7 a bad value, 5 no such directory */
	if (o->metrics_interval && parse_u64(o->metrics_interval, 1, 3600, &n, &why) < 0)
		fatalx_status(VX_BADVALUE, "--metrics-interval %s %s (1 to 3600 seconds)",
			      o->metrics_interval, why);
	d->metrics_interval_s = (unsigned)n;
	if (o->metrics_interval && !o->metrics_file)
		fatalx_status(VX_USAGE, "--metrics-interval needs --metrics-file");
	if (o->metrics_file && (r = metrics_set_file(d, o->metrics_file, &why)) < 0)
		fatalx_status(vx_from_errno(r), "--metrics-file %s: %s", o->metrics_file,
			      why ? why : strerror(-r));
	/* the directory is the operator's (the collector's); vsd makes none,
	 * follows no link to it and refuses one anyone may write */
	if (o->metrics_file && ((r = dir_open_nofollow(d->metrics_dir)) < 0 ||
				(close(r), access(d->metrics_dir, W_OK) < 0 && (r = -errno))))
		fatalx_status(vx_from_errno(r), "--metrics-file %s: %s", o->metrics_file,
			      metrics_why(d, r));
}

/* --rules at start: a file that does not check stops vsd and changes nothing. */
static void
apply_rules_at_start(struct vsd *d, const char *path, const char *given)
{
	struct buf out = { 0 }, errs = { 0 };

	if (rules_apply_file(d, path, geteuid(), NULL, 0, 0, &out, &errs) < 0) {
		fputs(errs.p ? errs.p : "", stderr);
		unlink_socket(d->socket_path);
		release_empty(d);
		fatalx_status(VX_BADVALUE, "--rules %s: refused, nothing changed", given);
	}
	buf_free(&out);
	buf_free(&errs);
}

/*
 * Everything before serving: the state directory's lock, the cgroup tree
 * (in a systemd scope where systemd manages cgroups), the state, the control
 * socket, the socket gate, adoption, the rule file. Returns the listening
 * socket; any failure is fatal and leaves an empty instance behind.
 */
static int
start_up(struct vsd *d, const struct options *o)
{
	char *rules_abs = NULL;
	const char *why;
	int r, lfd;

	if (!vs_name_valid(o->root))
		fatalx_status(VX_BADVALUE, "--cgroup-root '%s' %s", o->root, vs_name_why(o->root));
	if (o->group) {
		struct group *gr = getgrnam(o->group);

		if (!gr)
			fatalx_status(VX_NOTFOUND, "--group %s: no such group", o->group);
		d->group = gr->gr_gid;
	}
	if (o->group_marks && !o->group)
		fatalx_status(VX_USAGE, "--group-marks needs --group");
	if (o->group_marks && (r = member_marks_parse(d, o->group_marks, &why)) < 0)
		fatalx_status(VX_BADVALUE, "--group-marks %.64s %s", o->group_marks, why);
	metrics_options(d, o);
	if (geteuid() != 0)
		fatalx_status(VX_PERM, "must run as root");
	/* absolute: reload must find it after daemon() changed to /; links
	 * left in, for the loader to check each (vsrules(5), SECURITY) */
	if (o->rules && (!(rules_abs = path_absolute(o->rules)) || access(rules_abs, F_OK) < 0))
		fatalx_status(vx_from_errno(errno), "--rules %s: %s", o->rules, strerror(errno));

	lock_state_dir(d->state_dir);
	if ((r = cg_init(&d->cg, "/sys/fs/cgroup", "/proc/self/cgroup", o->root)) < 0)
		fatalx("cannot find the cgroup layout: %s", strerror(-r));
	if ((r = state_load(d->state_dir, &d->reg)) < 0)
		fatalx("cannot load the state in %s: %s", d->state_dir, strerror(-r));
	/* The socket comes before the cgroups: a vsd that cannot serve changes nothing. */
	if ((r = mkdir_parent(d->socket_path, 0755)) < 0)
		fatalx("cannot create the directory of %s: %s", d->socket_path, strerror(-r));
	if ((lfd = control_listen(d->socket_path, d->group)) < 0)
		fatalx_status(lfd == -EADDRINUSE ? VX_CONFLICT : VX_INTERNAL, "cannot listen on %s: %s",
			      d->socket_path, strerror(-lfd));
	open_socket_gate(d, o->root, o->record_all);
	/* After the socket and the gate: a vsd that cannot serve makes no scope. */
	place_tree(d, o->root);
	if ((r = cg_prepare(&d->cg)) < 0) {
		unlink_socket(d->socket_path);
		release_empty(d);
		fatalx("cannot prepare the cgroup tree: %s", strerror(-r));
	}
	/* the rules in force first: the socket rules decide what adopt() attaches */
	applied_load(d);
	adopt(d);
	gate_vs_update_all(d);	/* a socket rule's target adopted after its source */
	net_adopt(d);		/* after adopt(): the classifier needs the cgroup ids */
	if ((r = svc_load(d)) < 0)
		log_warnx("cannot load the services from %s: %s", d->state_dir, strerror(-r));
	svc_adopt_all(d);
	if (rules_abs) {
		apply_rules_at_start(d, rules_abs, o->rules);
		free(rules_abs);
	}
	/* gates that ran on while vsd was away: ids may have changed */
	gate_push_all(d, NULL);
	/* the first metrics file now: a path vsd cannot write is said at once */
	if (d->metrics_dir && (r = metrics_write(d)) < 0) {
		unlink_socket(d->socket_path);
		release_empty(d);
		fatalx("--metrics-file %s: cannot write it: %s", o->metrics_file, metrics_why(d, r));
	}
	d->metrics_at = mono_ns() + (uint64_t)d->metrics_interval_s * 1000000000ull;
	return lfd;
}

int
main(int argc, char **argv)
{
	struct vsd d = { .socket_path = DEFAULT_SOCKET, .state_dir = DEFAULT_STATE_DIR,
			 .group = (gid_t)-1 };
	struct options o = { .root = DEFAULT_ROOT };
	int r, lfd, sfd;

	/* The scope's keeper (scope.c): no options, no logging, nothing else. */
	if (argc == 2 && strcmp(argv[1], "--keeper") == 0)
		keeper_main();
	if ((r = parse_options(argc, argv, &o, &d)) >= 0)
		return r;
	log_init(1, o.verbose, "vsd");
	if (o.check) {
		struct cg_ctx cg;

		return features_print(cg_init(&cg, "/sys/fs/cgroup", "/proc/self/cgroup", o.root) == 0 ?
				      &cg : NULL);
	}
	d.log_syslog = !o.foreground;
	lfd = start_up(&d, &o);
	if ((sfd = setup_signals()) < 0)
		fatal("signalfd");
	log_info("vsd %s: %s cgroups under %s, %zu VS%s, listening on %s", PACKAGE_VERSION,
		 cg_layout_name(d.cg.layout), d.cg.hier[0].base, d.reg.n, d.reg.n == 1 ? "" : "s",
		 d.socket_path);
	if (!o.foreground) {
		if (daemon(0, 0) < 0)
			fatal("daemon");
		log_init(0, o.verbose, "vsd");
	}
	/* Type=notify: systemd (and "systemctl start") wait for this. */
	sd_notifyf("READY=1\nSTATUS=%zu VS%s, %s cgroups under %s", d.reg.n, d.reg.n == 1 ? "" : "s",
		   cg_layout_name(d.cg.layout), d.cg.hier[0].base);
	r = loop(&d, lfd, sfd);
	sd_notifyf("STOPPING=1");
	ctl_close_all(&d);
	close(lfd);
	unlink_socket(d.socket_path);
	if (d.reg.n == 0)
		release_empty(&d);
	else
		gate_socket_close(d.gate);
	fork_gate_close();
	net_close(&d);
	rules_release(&d);
	buf_free(&d.gate_text);
	svc_free(&d);
	reg_free(&d.reg);
	free(d.metrics_dir);
	return r;
}
