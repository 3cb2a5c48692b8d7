// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsd --check`: what this kernel and this service manager support, and
 * which fallback vsd and the gates use where a feature is missing. Every
 * line is a probe of the running system, not a guess from the version
 * number. Runs as any user; some probes need root and say so.
 *
 * Minimum: Linux 5.14 (ADDFD_FLAG_SEND, cgroup.kill) with BTF and cgroup
 * BPF; Debian 12's 6.1 is the reference. Newer kernels add speed, not
 * correctness: see vsd(8), KERNEL AND SYSTEMD.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "lib/util.h"
#include "lib/tracepoint.h"
#include "features.h"
#include "scope.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5 */
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL	/* Linux 6.9 */
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS	SECCOMP_IOW(4, __u64)	/* Linux 6.6 */
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP	(1UL << 0)
#endif

static int
path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* A user-notification filter on a harmless syscall, in a child, and the
 * flag the accept gate asks for on its listener. 1, 0, or -errno. */
static int
probe_sync_wakeup(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),	/* nr */
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };
		__u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
		int fd;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(2);
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (fd < 0)
			_exit(2);
		/* the flags go by value, not by pointer */
		_exit(ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) == 2)
		return -ENOSYS;
	return WEXITSTATUS(st) == 0;
}

static int
probe_peerpidfd(void)
{
	int sv[2], pfd, r;
	socklen_t len = sizeof(pfd);

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	r = getsockopt(sv[0], SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) == 0;
	if (r)
		close(pfd);
	close(sv[0]);
	close(sv[1]);
	return r;
}

static int
probe_pidfd(unsigned flags)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), flags);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The root cgroup has no cgroup.kill: look at the children of the cgroup2
 * mount. -1 (unknown) when there is none, or no cgroup2 at all. */
static int
probe_cgroup_kill(const struct cg_ctx *cg)
{
	glob_t g;
	int r = 0;

	if (!cg || cg->layout == CG_LEGACY ||
	    glob(cg->layout == CG_UNIFIED ? "/sys/fs/cgroup/*/cgroup.procs" :
		 "/sys/fs/cgroup/unified/*/cgroup.procs", 0, NULL, &g) != 0)
		return -1;
	for (size_t i = 0; i < g.gl_pathc && !r; i++) {
		char kill[PATH_MAX];

		snprintf(kill, sizeof(kill), "%.*s/cgroup.kill",
			 (int)(strrchr(g.gl_pathv[i], '/') - g.gl_pathv[i]), g.gl_pathv[i]);
		r = path_exists(kill);
	}
	globfree(&g);
	return r;
}

/*
 * The syscall exit tracepoint of accept4 (the accept gate's records where
 * the kernel refuses fexit, gates/socket/records.bpf.c), found the way the
 * gate finds it (lib/tracepoint.h: tracefs, or a private mount of it).
 * -1: not ours to see (no tracefs mounted, and no privilege to mount it).
 */
static int
probe_accept_tracepoint(void)
{
	if (tracepoint_id("syscalls/sys_exit_accept4") >= 0)
		return 1;
	return geteuid() == 0 ? 0 : -1;
}

/* "favordynmods" among the cgroup2 mount's options. */
static int
probe_favordynmods(void)
{
	char buf[16384];

	if (read_file("/proc/self/mounts", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		if (strstr(l, " cgroup2 ") && strstr(l, "favordynmods"))
			return 1;
	return 0;
}

static void
systemd_version(char *buf, size_t len)
{
	FILE *p;

	snprintf(buf, len, "none (PID 1 is not systemd)");
	if (!path_exists("/run/systemd/system"))
		return;
	if ((p = popen("systemctl --version 2>/dev/null", "r")) != NULL) {
		if (fgets(buf, (int)len, p))
			buf[strcspn(buf, "\n")] = '\0';
		pclose(p);
	}
}

static void
line(const char *what, int have, const char *needs, const char *without)
{
	printf("%-34s %-4s %-12s %s\n", what, have > 0 ? "yes" : have == 0 ? "no" : "?",
	       needs, have > 0 ? "" : without);
}

int
features_print(const struct cg_ctx *cg)
{
	struct utsname u;
	char sd[128];
	int sync;

	uname(&u);
	systemd_version(sd, sizeof(sd));
	printf("kernel   %s\nsystemd  %s\ncgroups  %s%s\n\n", u.release, sd,
	       cg ? cg_layout_name(cg->layout) : "unknown",
	       cg && scope_wanted(cg) ? " (VSs in the systemd scope vsd-<root>.scope)" : "");
	printf("%-34s %-4s %-12s %s\n", "FEATURE", "HAVE", "NEEDS", "WITHOUT IT");
	line("BTF (/sys/kernel/btf/vmlinux)", path_exists("/sys/kernel/btf/vmlinux"), "5.4",
	     "the socket gate cannot load: vsd refuses to start");
	line("pidfd_open", probe_pidfd(0), "5.3", "vsd refuses to start");
	line("pidfd_open(PIDFD_THREAD)", probe_pidfd(PIDFD_THREAD), "6.9",
	     "the accept gate holds the thread's process by pidfd and checks the TID");
	sync = probe_sync_wakeup();
	line("SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP", sync, "6.6",
	     sync < 0 ? "(probe needs seccomp; run as root)" :
	     "accept-gate answers wake the service the ordinary way (slower, still exact)");
	line("SO_PEERPIDFD", probe_peerpidfd(), "6.5",
	     "not used yet: clients are checked by SO_PEERCRED either way");
	line("cgroup.kill", probe_cgroup_kill(cg), "5.14",
	     "destroy --force kills the VS's processes one by one");
	line("syscall tracepoints (accept)", probe_accept_tracepoint(), "2.6.33",
	     "(CONFIG_FTRACE_SYSCALLS) accept gates need fexit for the fast path");
	line("cgroup2 favordynmods", probe_favordynmods(), "6.0 (mount)",
	     "the accept gate keeps cgroup moves fast with its rcu-warm helper");
	return 0;
}
