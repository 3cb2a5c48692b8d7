// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tenant's program in a gated service, for tests/gate-nested-notify.sh:
 * a seccomp filter of its own stacked on the gate's, then CMD, which
 * accepts (tests/gate-escape.c "accept 0 N" on the listener, fd 3).
 *
 *   gate-nested-notify notify ABI [-w FILE] CMD [ARG ...]
 *        the attack: install a filter sending accept and accept4 to a
 *        listener of its own (seccomp(2) with SECCOMP_FILTER_FLAG_NEW_LISTENER;
 *        ABI: "native", "int80" (the 32-bit call) or "x32"), print "notify
 *        ABI: ok" or "notify ABI: ERROR", and run CMD in a child whatever the
 *        outcome, while this process answers every notification with
 *        CONTINUE, as benchmarks/notify-floor.c does. The kernel keeps, of
 *        two filters returning USER_NOTIF, the one installed last, so the
 *        gate would never see CMD's accepts. At the end "continued K": the
 *        notifications answered. With -w: first print "pid P" and wait
 *        until FILE exists (the test makes it once the supervisor is gone)
 *   gate-nested-notify sandbox CMD [ARG ...]
 *        self-sandboxing as many programs do: a filter without a listener,
 *        through seccomp(2) and through prctl(PR_SET_SECCOMP), each making
 *        one call fail with its own errno (uname: EACCES, getpgid: EXDEV);
 *        print "sandbox seccomp E prctl E uname E getpgid E" (E: 0 or an
 *        errno's name), then exec CMD under both filters
 * Ends after 60 s (SIGALRM) whatever happens; CMD dies with it.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define X32_SYSCALL_BIT		0x40000000L
#define NR_SECCOMP_I386		354	/* arch/x86/entry/syscalls/syscall_32.tbl */

/* every field named: BPF_STMT leaves jt/jf out, which -Wextra flags */
#define STMT(c, v)		{ .code = (c), .jt = 0, .jf = 0, .k = (v) }
#define JUMP(c, v, t, e)	{ .code = (c), .jt = (t), .jf = (e), .k = (v) }

/* errno's name for the few the test looks for, else its number */
static const char *
ename(int e)
{
	static char b[16];

	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case EACCES: return "EACCES";
	case EXDEV: return "EXDEV";
	case ENOSYS: return "ENOSYS";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	}
	snprintf(b, sizeof(b), "%d", e);
	return b;
}

/* --- the attack --- */

#ifdef __x86_64__
static long
int80(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c)
	    : "memory", "r8", "r9", "r10", "r11");
	return r;
}
#endif

/*
 * seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER, prog) through abi: the
 * listener's fd, or -errno. The compat calls read a struct compat_sock_fprog
 * (a 32-bit pointer), so it and the program live below 4 GiB.
 */
static int
install_listener(const char *abi)
{
	static const struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_accept, 2, 0),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_accept4, 1, 0),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = (void *)f };
	long r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (strcmp(abi, "native") == 0) {
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		    &prog);
		return r < 0 ? -errno : (int)r;
	}
#ifdef __x86_64__
	{
		struct { uint16_t len; uint32_t filter; } *cp;	/* struct compat_sock_fprog */
		char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		if (low == MAP_FAILED)
			return -ENOMEM;
		memcpy(low + 64, f, sizeof(f));
		cp = (void *)low;
		cp->len = prog.len;
		cp->filter = (uint32_t)(uintptr_t)(low + 64);
		if (strcmp(abi, "int80") == 0)
			return (int)int80(NR_SECCOMP_I386, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, (long)(uintptr_t)cp);
		if (strcmp(abi, "x32") == 0) {
			r = syscall(X32_SYSCALL_BIT | SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, cp);
			return r < 0 ? -errno : (int)r;
		}
	}
#endif
	return -EAFNOSUPPORT;
}

/* The tenant's own supervisor: CONTINUE to everything until pid ends. */
static long
supervise(int nfd, pid_t pid)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	long k = 0;

	while (waitpid(pid, NULL, WNOHANG) == 0) {
		struct pollfd p = { .fd = nfd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0 || !(p.revents & POLLIN))
			continue;
		memset(&req, 0, sizeof(req));
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
			k++;
	}
	return k;
}

static int
notify(const char *abi, const char *file, char **cmd)
{
	int nfd;
	pid_t pid;

	if (file) {
		printf("pid %d\n", (int)getpid());
		while (access(file, F_OK) < 0)
			usleep(20000);
	}
	nfd = install_listener(abi);
	printf("notify %s: %s\n", abi, nfd >= 0 ? "ok" : ename(-nfd));
	if ((pid = fork()) < 0)
		return perror("gate-nested-notify: fork"), 3;
	if (pid == 0) {		/* under the filter, as its parent is */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (nfd >= 0)
			close(nfd);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (nfd >= 0)
		printf("continued %ld\n", supervise(nfd, pid));
	else
		printf("continued 0\n");
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* --- self-sandboxing, which must keep working --- */

static int
sandbox(char **cmd)
{
	struct sock_filter f[] = {
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),	/* k set below */
		STMT(BPF_RET | BPF_K, 0),			/* k set below */
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct utsname u;
	int e1 = 0, e2 = 0, e3 = 0, e4 = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return perror("gate-nested-notify: no_new_privs"), 3;
	f[1].k = SYS_uname;
	f[2].k = SECCOMP_RET_ERRNO | EACCES;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		e1 = errno;
	f[1].k = SYS_getpgid;
	f[2].k = SECCOMP_RET_ERRNO | EXDEV;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		e2 = errno;
	if (uname(&u) < 0)
		e3 = errno;
	if (getpgid(0) < 0)
		e4 = errno;
	printf("sandbox seccomp %s", ename(e1));
	printf(" prctl %s", ename(e2));
	printf(" uname %s", ename(e3));
	printf(" getpgid %s\n", ename(e4));
	execvp(cmd[0], cmd);
	return perror("gate-nested-notify: exec"), 127;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	alarm(60);
	if (argc >= 4 && strcmp(argv[1], "notify") == 0 && strcmp(argv[3], "-w") != 0)
		return notify(argv[2], NULL, argv + 3);
	if (argc >= 6 && strcmp(argv[1], "notify") == 0)
		return notify(argv[2], argv[4], argv + 5);
	if (argc >= 3 && strcmp(argv[1], "sandbox") == 0)
		return sandbox(argv + 2);
	fprintf(stderr, "usage: gate-nested-notify notify native|int80|x32 [-w FILE] CMD [ARG ...] | "
	    "sandbox CMD [ARG ...]\n");
	return 2;
}
