// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where the VSs live on a host whose cgroups systemd manages.
 *
 * On a pure cgroup-v2 host with systemd as PID 1, systemd owns the tree and
 * hands out subtrees only to units with Delegate=yes. vsd's own unit cannot
 * hold the VSs: with controllers enabled for its children, systemd 252 can no
 * longer put a new vsd process into it (the kernel's no-internal-processes
 * rule: "systemctl restart vsd" fails with 219/CGROUP), and systemd removes a
 * stopped unit's cgroup, so an empty VS would be lost. DelegateSubgroup=,
 * which would solve the first half, is systemd 254+.
 *
 * So vsd keeps its VSs in a transient scope of their own, made the way
 * runc's and crun's systemd drivers make one per container:
 *
 *   /sys/fs/cgroup/vsd.slice/vsd-<root>.scope/      Delegate=yes
 *                                   <root>/.daemon  the keeper process
 *                                   <root>/<vs>     one per VS
 *
 * A scope lives as long as it holds a process. The keeper, a copy of vsd
 * that only sleeps ("vsd --keeper"), holds it while no VS has a process, so
 * stopping, restarting or killing vsd, daemon-reload and daemon-reexec leave
 * every VS and its limits in place, and the next vsd adopts the scope. vsd
 * stops the keeper when it exits with no VS left; systemd then removes the
 * empty scope. `systemctl stop vsd-<root>.scope` removes everything (the
 * Debian package's purge does that).
 *
 * The scope is made with systemd-run(1) --scope, which registers it over
 * D-Bus, moves itself in and then execs the keeper: no D-Bus code here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "lib/log.h"
#include "lib/util.h"
#include "scope.h"

#define SCOPE_SLICE		"vsd.slice"
#define KEEPER_LEAF		".daemon"	/* the leaf vsd itself uses elsewhere */
/* systemd-run under TCG takes a few seconds; a real host well under one. */
#define SCOPE_START_TIMEOUT_MS	30000
/* ... and removing an empty one, after the keeper has gone. */
#define SCOPE_REMOVE_TIMEOUT_MS	10000

int
scope_wanted(const struct cg_ctx *cg)
{
	struct stat st;

	/* sd_booted(3): systemd is PID 1 iff /run/systemd/system is a directory. */
	return cg->layout == CG_UNIFIED && stat("/run/systemd/system", &st) == 0 &&
	       S_ISDIR(st.st_mode) && !getenv("VSD_NO_SCOPE");
}

int
scope_cgroup(const char *root, char *buf, size_t len)
{
	return path_fmt(buf, len, "/%s/vsd-%s.scope", SCOPE_SLICE, root);
}

/* The first pid in dir/cgroup.procs: 0 and *pid, or -ENOENT when empty. */
static int
first_pid(const char *dir, pid_t *pid)
{
	char buf[64];
	int r;

	if ((r = cg_read(dir, "cgroup.procs", buf, sizeof(buf))) < 0)
		return r;
	if (buf[0] < '1' || buf[0] > '9')
		return -ENOENT;
	*pid = (pid_t)strtol(buf, NULL, 10);
	return 0;
}

/* 1 if /proc/pid/cgroup names the cgroup2 path want, 0 if not, -errno. */
static int
in_cgroup(pid_t pid, const char *want)
{
	char path[64], buf[PATH_MAX + 8];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if ((r = read_file(path, buf, sizeof(buf))) < 0)
		return r;
	/* pure v2: the one line is "0::<path>" */
	buf[strcspn(buf, "\n")] = '\0';
	return strncmp(buf, "0::", 3) == 0 && strcmp(buf + 3, want) == 0;
}

/* The keeper holds none of vsd's descriptors (the lock, the socket). */
static void
close_from(int lowfd)
{
	if (syscall(SYS_close_range, lowfd, ~0U, 0) < 0) {	/* Linux 5.9 */
		long max = sysconf(_SC_OPEN_MAX);

		for (int fd = lowfd; fd < max; fd++)
			close(fd);
	}
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Run "systemd-run --scope ... -- <vsd> --keeper" and wait until the keeper
 * sits in the new scope. */
static int
scope_start(const char *root, const char *cgpath, pid_t *keeper)
{
	char self[PATH_MAX], unit[NAME_MAX], desc[128];
	uint64_t deadline;
	ssize_t n;
	pid_t pid;
	int r, status;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return -errno;
	self[n] = '\0';
	snprintf(unit, sizeof(unit), "vsd-%s.scope", root);
	snprintf(desc, sizeof(desc), "Virtual servers of vsd (cgroup root %s)", root);
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		char *argv[] = { "systemd-run", "--scope", "--quiet", "--collect",
				 "--slice=" SCOPE_SLICE, "--unit", unit, "--description", desc,
				 "--property=Delegate=yes", "--", self, "--keeper", NULL };

		close_from(3);
		execvp(argv[0], argv);
		_exit(127);
	}
	deadline = now_ms() + SCOPE_START_TIMEOUT_MS;
	while ((r = in_cgroup(pid, cgpath)) == 0 && now_ms() < deadline) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			log_warnx("systemd-run could not make %s (exit %d); is systemd "
				  "running and systemd-run installed?", unit,
				  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return -ECHILD;
		}
		poll(NULL, 0, 10);
	}
	if (r <= 0) {
		log_warnx("%s did not appear within %d ms", unit, SCOPE_START_TIMEOUT_MS);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return r < 0 ? r : -ETIMEDOUT;
	}
	log_info("made %s for the VSs (keeper pid %d)", unit, (int)pid);
	*keeper = pid;
	return 0;
}

int
scope_ensure(const char *root, const char *mnt, pid_t *keeper)
{
	char cgpath[PATH_MAX], dir[PATH_MAX], leaf[PATH_MAX];
	struct stat st;
	int r;

	if ((r = scope_cgroup(root, cgpath, sizeof(cgpath))) < 0 ||
	    (r = path_fmt(dir, sizeof(dir), "%s%s", mnt, cgpath)) < 0 ||
	    (r = path_fmt(leaf, sizeof(leaf), "%s/%s/%s", dir, root, KEEPER_LEAF)) < 0)
		return r;
	/* An earlier vsd made it: adopt its keeper. */
	if (stat(dir, &st) == 0 && first_pid(leaf, keeper) == 0) {
		log_info("adopted vsd-%s.scope (keeper pid %d)", root, (int)*keeper);
		return 0;
	}
	if (stat(dir, &st) == 0) {
		/*
		 * The scope lives on (a VS holds a process) but its keeper is gone,
		 * e.g. killed by hand: a new one joins the scope directly, which a
		 * delegated subtree allows.
		 */
		pid_t pid;

		if ((pid = fork()) < 0)
			return -errno;
		if (pid == 0) {
			close_from(3);
			keeper_main();
		}
		*keeper = pid;
		log_info("vsd-%s.scope had lost its keeper; started pid %d", root, (int)pid);
		return 0;
	}
	return scope_start(root, cgpath, keeper);
}

void
scope_stop_keeper(pid_t keeper)
{
	int pfd = (int)syscall(SYS_pidfd_open, keeper, 0);
	struct pollfd p;

	if (pfd < 0)
		return;		/* already gone */
	/* The keeper may be an earlier vsd's child: wait on its pidfd. */
	if (syscall(SYS_pidfd_send_signal, pfd, SIGTERM, NULL, 0) == 0) {
		p = (struct pollfd){ .fd = pfd, .events = POLLIN };
		poll(&p, 1, 5000);
		waitpid(keeper, NULL, WNOHANG);
	}
	close(pfd);
}

/*
 * The keeper is gone and vsd has removed its own directories: systemd sees
 * the scope empty and removes it (a moment later; seconds under TCG). Wait
 * for that, so that nothing of the instance is left when vsd has exited.
 */
void
scope_wait_removed(const char *vsroot)
{
	char dir[PATH_MAX], *slash;
	uint64_t deadline = now_ms() + SCOPE_REMOVE_TIMEOUT_MS;
	struct stat st;

	/* A VS or vsd's own directory is left: the scope stays, rightly. */
	if (stat(vsroot, &st) == 0)
		return;
	if (path_fmt(dir, sizeof(dir), "%s", vsroot) < 0 || !(slash = strrchr(dir, '/')) ||
	    slash == dir)
		return;
	*slash = '\0';		/* <mnt>/vsd.slice/vsd-<root>.scope */
	while (stat(dir, &st) == 0) {
		if (now_ms() >= deadline) {
			log_warnx("systemd has not removed %s within %d ms; "
				  "`systemctl stop %s` does", dir, SCOPE_REMOVE_TIMEOUT_MS,
				  strrchr(dir, '/') + 1);
			return;
		}
		poll(NULL, 0, 10);
	}
}

void
keeper_main(void)
{
	sigset_t set;
	int fd;

	/* Hold nothing of whoever started vsd: a caller that reads vsd's output
	 * through a pipe must see it closed when vsd exits. */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	/* Nothing to do but exist: the scope lives while we do. SIGTERM ends it. */
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	for (;;)
		pause();
}
