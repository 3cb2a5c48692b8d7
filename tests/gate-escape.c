// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tenant's program in a gated service, for tests/gate-escape.sh: the ways
 * code running in a shared service (a PHP script's exec(), as the service's
 * unprivileged user) could try to accept a connection past the gate.
 *
 *   gate-escape serve PORT CMD   the service: listen on 127.0.0.1:PORT
 *                                (prints "port N"), run CMD with sh -c as
 *                                PHP's exec() would (it inherits the
 *                                environment and the listener, as fd 3),
 *                                wait for it, then accept() and answer
 *                                forever (so while CMD runs, only it
 *                                accepts)
 *   gate-escape maps             count the BPF maps this process holds and
 *                                those of its ancestors it can take
 *                                (pidfd_getfd, or open() of /proc/PID/fd/N),
 *                                write to each, and count VSD_GATE_*
 *                                variables in its environment: "maps uid U
 *                                own N others N unreadable N written N env
 *                                N" (unreadable: ancestors whose descriptors
 *                                it cannot list)
 *   gate-escape accept FLAGS N   accept4(3, ..., FLAGS) by syscall(2), FLAGS
 *                                a 64-bit hex value, or "key": the key of
 *                                VSD_GATE_PRELOAD ("fd key") in the upper 32
 *                                bits, as the accept shim of an older build
 *                                passed it; N connections
 *   gate-escape uring N          accept through io_uring (IORING_OP_ACCEPT)
 *   gate-escape int80 N          accept4 through the 32-bit ABI from 64-bit
 *                                code (int 0x80: socketcall(SYS_ACCEPT4),
 *                                then the direct call, then SYS_ACCEPT)
 *   gate-escape x32 N            accept4 through the x32 ABI
 *   gate-escape pass PATH        send fd 3 to the Unix socket PATH (SCM_RIGHTS)
 *   gate-escape recv PATH N      outside the service: take a listener from
 *                                PATH, accept N connections on it
 *   gate-escape tid N            a thread accepts one connection and ends;
 *                                then a new process gets that thread's TID
 *                                (clone3(2) set_tid: root only, Linux 5.5)
 *                                and accepts N: "tid T again"
 * Each connection is answered as tests/gate-server.c does ("pid=P cg=CPU
 * cg2=CG2 req=REQ"), so tests/gate-client.c -v shows where it ran. A way
 * that fails prints "METHOD: ERROR" and the program exits 3; each prints
 * "ready METHOD" before its first call and "served N" at the end; all but
 * serve end after 60 s (SIGALRM).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <pthread.h>

#include "gate-where.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif
#define X32_SYSCALL_BIT		0x40000000L

static void
answer(int fd)
{
	char req[256] = "", cpu[256], cg2[256], out[1024];
	int fl = fcntl(fd, F_GETFL);
	size_t off = 0;
	ssize_t n;

	/* read the request blocking, whatever accept4's flags made the socket */
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	while (off < sizeof(req) - 1 && (n = read(fd, req + off, sizeof(req) - 1 - off)) > 0) {
		off += (size_t)n;
		if (memchr(req, '\n', off))
			break;
	}
	req[off] = '\0';
	req[strcspn(req, "\n")] = '\0';
	cgroup_of_self(cpu, sizeof(cpu), cg2, sizeof(cg2));
	n = snprintf(out, sizeof(out), "pid=%d cg=%s cg2=%s req=%s\n", getpid(), cpu, cg2, req);
	if (write(fd, out, (size_t)n) < 0)
		perror("gate-escape: write");
	close(fd);
}

static int
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return fflush(stdout);
}

/* --- the ways to accept; each returns a descriptor or -errno --- */

static unsigned long accept_flags;

static int
by_syscall(int lfd)
{
	long r = syscall(SYS_accept4, lfd, NULL, NULL, accept_flags);

	return r < 0 ? -errno : (int)r;
}

/* One ring per accept: setup, one IORING_OP_ACCEPT, wait for its completion. */
static int
by_uring(int lfd)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	size_t sqlen, cqlen;
	unsigned *tail, *head, t;
	char *sq, *cq;
	int rfd, r;

	if ((rfd = (int)syscall(__NR_io_uring_setup, 4, &p)) < 0)
		return -errno;
	sqlen = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cqlen = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sqlen = cqlen = sqlen > cqlen ? sqlen : cqlen;
	sq = mmap(NULL, sqlen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd,
	    IORING_OFF_SQ_RING);
	cq = (p.features & IORING_FEAT_SINGLE_MMAP) ? sq : mmap(NULL, cqlen,
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_POPULATE, rfd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		close(rfd);
		return -ENOMEM;
	}
	tail = (unsigned *)(sq + p.sq_off.tail);
	t = *tail;
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_ACCEPT;
	sqes[0].fd = lfd;
	((unsigned *)(sq + p.sq_off.array))[t & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, rfd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		r = -errno;
		close(rfd);
		return r;
	}
	head = (unsigned *)(cq + p.cq_off.head);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) +
	    (*head & *(unsigned *)(cq + p.cq_off.ring_mask));
	r = cqe->res;
	__atomic_store_n(head, *head + 1, __ATOMIC_RELEASE);
	close(rfd);
	return r;
}

#ifdef __x86_64__
static long
int80(long nr, long a, long b, long c, long d)
{
	long r;

	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d)
	    : "memory", "r8", "r9", "r10", "r11");
	return r;
}

/* i386: socketcall(SYS_ACCEPT4), accept4 (364), socketcall(SYS_ACCEPT) */
static int
by_int80(int lfd)
{
	static uint32_t *args;
	long r;

	if (!args && (args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0)) == MAP_FAILED) {
		args = NULL;
		return -ENOMEM;
	}
	args[0] = (uint32_t)lfd;
	args[1] = args[2] = args[3] = 0;
	if ((r = int80(102, 18, (long)(uintptr_t)args, 0, 0)) >= 0)
		return (int)r;
	say("int80: socketcall(SYS_ACCEPT4): %s", strerror((int)-r));
	if ((r = int80(364, lfd, 0, 0, 0)) >= 0)
		return (int)r;
	say("int80: accept4: %s", strerror((int)-r));
	return (int)int80(102, 5, (long)(uintptr_t)args, 0, 0);
}

static int
by_x32(int lfd)
{
	long r = syscall(X32_SYSCALL_BIT | SYS_accept4, lfd, NULL, NULL, 0);

	return r < 0 ? -errno : (int)r;
}
#else
static int by_int80(int lfd) { (void)lfd; return -EAFNOSUPPORT; }
static int by_x32(int lfd) { (void)lfd; return -EAFNOSUPPORT; }
#endif

static int
accept_loop(const char *method, int (*how)(int), int lfd, long n)
{
	long served = 0;
	int fd;

	say("ready %s", method);
	while (served < n) {
		if ((fd = how(lfd)) < 0) {
			struct pollfd p = { .fd = lfd, .events = POLLIN };

			if (fd == -EINTR)
				continue;
			if (fd == -EAGAIN) {	/* a non-blocking listener */
				poll(&p, 1, 100);
				continue;
			}
			say("%s: %s", method, strerror(-fd));
			say("served %ld", served);
			return 3;
		}
		answer(fd);
		served++;
	}
	say("served %ld", served);
	return 0;
}

/* --- a TID that comes back: the gate must not take the new task for the
 * thread it knew by that TID (and re-bound) --- */

static pid_t first_tid;

static void *
accept_one(void *arg)
{
	int fd;

	(void)arg;
	first_tid = (pid_t)syscall(SYS_gettid);
	while ((fd = accept(3, NULL, NULL)) < 0 && errno == EINTR)
		;
	if (fd >= 0)
		answer(fd);
	return NULL;
}

static int
tid_again(long n)
{
	struct clone_args ca = { .exit_signal = SIGCHLD, .set_tid_size = 1 };
	pthread_t t;
	pid_t pid = -1;
	int i, st;

	say("ready tid");
	if (pthread_create(&t, NULL, accept_one, NULL) != 0 || pthread_join(t, NULL) != 0)
		return say("tid: pthread"), 3;
	ca.set_tid = (uintptr_t)&first_tid;
	/* the TID is free once the kernel has released the thread, a moment
	 * after pthread_join() returns */
	for (i = 0; i < 2000; i++) {
		if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) >= 0 || errno != EEXIST)
			break;
		usleep(1000);
	}
	if (pid < 0)
		return say("tid: %s", strerror(errno)), 3;
	if (pid == 0)
		_exit(accept_loop("tid again", by_syscall, 3, n));
	say("tid %d again", (int)pid);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

/* --- the BPF maps within reach --- */

static int
is_bpf_map(int fd)
{
	char l[64], p[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	if ((n = readlink(p, l, sizeof(l) - 1)) < 0)
		return 0;
	l[n] = '\0';
	return strcmp(l, "anon_inode:bpf-map") == 0;
}

/* Try to change a map: write its first page where it can be mapped, and
 * its first element through the bpf(2) call. 1 if either worked. */
static int
spoil(int fd)
{
	union { char b[128]; uint64_t w[16]; } key = { 0 }, val;
	long r;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct { uint32_t fd, pad; uint64_t key, value, flags; } a = {
		(uint32_t)fd, 0, (uintptr_t)&key, (uintptr_t)&val, 0 };

	if (m != MAP_FAILED) {
		memset(m, 0xff, 64);
		munmap(m, 4096);
		return 1;
	}
	memset(&val, 0xff, sizeof(val));
	r = syscall(SYS_bpf, 2 /* BPF_MAP_UPDATE_ELEM */, &a, sizeof(a));
	return r == 0;
}

/* maps of pid (0: ours) we could take (pidfd_getfd, or open() of its
 * /proc link), each tried; -1 if its descriptors cannot be listed */
static int
maps_of(pid_t pid, int *written)
{
	char dir[64];
	struct dirent *de;
	DIR *d;
	int n = 0, pfd = -1;

	snprintf(dir, sizeof(dir), pid ? "/proc/%d/fd" : "/proc/self/fd", (int)pid);
	if (!(d = opendir(dir)))
		return -1;
	if (pid && (pfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name), mine;

		if (de->d_name[0] == '.')
			continue;
		mine = pid ? (int)syscall(SYS_pidfd_getfd, pfd, fd, 0) : fd;
		if (mine < 0) {	/* then through its /proc link */
			char link[512];

			snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
			mine = open(link, O_RDWR | O_CLOEXEC);
		}
		if (mine < 0)
			continue;
		if (is_bpf_map(mine)) {
			n++;
			*written += spoil(mine);
		}
		if (pid)
			close(mine);
	}
	closedir(d);
	if (pfd >= 0)
		close(pfd);
	return n;
}

static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, ppid = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		if ((p = strrchr(buf, ')')))
			sscanf(p + 2, "%*c %d", &ppid);
	}
	close(fd);
	return ppid;
}

static int
maps(void)
{
	extern char **environ;
	int written = 0, own, others = 0, unreadable = 0, env = 0, n;
	pid_t p;
	char **e;

	own = maps_of(0, &written);
	/* the shell, the service, the supervisor, ... up to init */
	for (p = getppid(); p > 1; p = parent_of(p))
		if ((n = maps_of(p, &written)) < 0)
			unreadable++;
		else
			others += n;
	for (e = environ; *e; e++)
		env += strncmp(*e, "VSD_GATE_", 9) == 0;
	say("maps uid %u own %d others %d unreadable %d written %d env %d", (unsigned)getuid(),
	    own, others, unreadable, written, env);
	return 0;
}

/* --- a listener handed out, and taken outside the service --- */

static int
unix_at(const char *path, int do_bind)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (s < 0)
		return -1;
	if (do_bind ? bind(s, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(s, 1) < 0 ||
	    chmod(path, 0777) < 0 : connect(s, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(s);
		return -1;
	}
	return s;
}

static int
pass(const char *path)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, byte = 'l';
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int s = unix_at(path, 0), lfd = 3;

	if (s < 0)
		return say("pass: %s: %s", path, strerror(errno)), 3;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &lfd, sizeof(int));
	if (sendmsg(s, &mh, 0) != 1)
		return say("pass: sendmsg: %s", strerror(errno)), 3;
	return say("passed"), 0;
}

static int
recv_listener(const char *path, long n)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int s, c, lfd;

	unlink(path);
	if ((s = unix_at(path, 1)) < 0)
		return say("recv: %s: %s", path, strerror(errno)), 3;
	say("listening %s", path);
	if ((c = accept(s, NULL, NULL)) < 0 || recvmsg(c, &mh, MSG_CMSG_CLOEXEC) != 1 ||
	    !(cm = CMSG_FIRSTHDR(&mh)) || cm->cmsg_type != SCM_RIGHTS)
		return say("recv: no listener"), 3;
	memcpy(&lfd, CMSG_DATA(cm), sizeof(int));
	close(c);
	close(s);
	unlink(path);
	accept_flags = 0;
	return accept_loop("outside", by_syscall, lfd, n);
}

/* --- the service itself --- */

static int
serve(long port, const char *cmd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t sl = sizeof(sin);
	int lfd, one = 1, fd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 4096) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &sl) < 0)
		return perror("gate-escape: listen"), 1;
	say("port %d", ntohs(sin.sin_port));
	switch (fork()) {
	case -1:
		return perror("gate-escape: fork"), 1;
	case 0:		/* PHP's exec(): sh -c, the listener inherited */
		if (lfd == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(lfd, 3) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (wait(NULL) < 0 && errno == EINTR)
		;
	for (;;) {
		if ((fd = accept(lfd, NULL, NULL)) < 0) {
			if (errno == EINTR)
				continue;
			return perror("gate-escape: accept"), 1;
		}
		answer(fd);
	}
}

int
main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	long n = argc > 3 ? atol(argv[3]) : argc > 2 ? atol(argv[2]) : 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(m, "serve") == 0 && argc == 4)
		return serve(atol(argv[2]), argv[3]);
	alarm(60);	/* a way that works on a build that lets it through may wait
			 * for connections no one sends: end anyway */
	if (strcmp(m, "maps") == 0)
		return maps();
	if (strcmp(m, "accept") == 0 && argc == 4) {
		const char *k = getenv("VSD_GATE_PRELOAD");

		if (strcmp(argv[2], "key") != 0)
			accept_flags = strtoul(argv[2], NULL, 16);
		else if (k && strchr(k, ' '))
			accept_flags = strtoul(strchr(k, ' ') + 1, NULL, 10) << 32;
		else	/* no key to find: any upper half */
			accept_flags = 0x5a5a5a5aUL << 32;
		return accept_loop("accept", by_syscall, 3, n);
	}
	if (strcmp(m, "uring") == 0)
		return accept_loop("uring", by_uring, 3, n);
	if (strcmp(m, "int80") == 0)
		return accept_loop("int80", by_int80, 3, n);
	if (strcmp(m, "x32") == 0)
		return accept_loop("x32", by_x32, 3, n);
	if (strcmp(m, "pass") == 0 && argc == 3)
		return pass(argv[2]);
	if (strcmp(m, "recv") == 0 && argc == 4)
		return recv_listener(argv[2], n);
	if (strcmp(m, "tid") == 0)
		return tid_again(n);
	fprintf(stderr, "usage: gate-escape serve PORT CMD | maps | accept FLAGS|key N | "
	    "uring N | int80 N | x32 N | pass PATH | recv PATH N | tid N\n");
	return 2;
}
