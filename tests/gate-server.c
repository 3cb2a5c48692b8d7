// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tiny TCP server for the accept-gate tests. It knows nothing about the
 * gate: it is the "unmodified service". Per connection it reads one request
 * line, optionally burns CPU ("spin MS") or blocks while a file exists
 * ("hold PATH", at most 60 s: a test keeps the server busy for as long as it
 * needs, whatever the machine's speed), and answers one line saying which
 * cgroup the serving thread sat in and what the accepted fd looked like;
 * a request with the word "creds" also gets whom it runs as, from
 * /proc/self/status: " creds=uid:R/E/S/F,gid:...,groups:...,capeff:...,
 * capprm:...,capbnd:...,capamb:...,nnp:N" at the end of the line.
 *
 *   gate-server [-m blocking|nonblock|evloop|eintr|close] [-4 FLAGS] [-n NPROC]
 *               [-T NTHREADS] [-c COUNT] [-p PORT] [-N] [-S] [-w MS] [-F]
 *     -4 FLAGS  use accept4 with FLAGS: "cloexec", "nonblock", "both", "none"
 *     -N        pass NULL address pointers to accept
 *     -S        also listen on a second port (printed as "port2 N"); a
 *               request with the word "swap" makes that listener take the
 *               first one's descriptor number (dup2) once it is answered,
 *               as a service that replaces its listener between accepts
 *     -w MS     wait MS ms after printing the port before the first accept
 *               (a service slow to start accepting)
 *     -E        install a seccomp filter of its own that fails listen() with
 *               EPERM, before it listens (and exit 1 with "listen: ...")
 *     -D        bind a second socket to the port too (SO_REUSEADDR on both,
 *               before either listens) and listen() on it after the first:
 *               the kernel refuses that (EADDRINUSE); prints "listen2 " and
 *               the error, or "ok", then closes it
 *     -F        set TCP_FASTOPEN on the listener (a queue of 16 requests
 *               with data in the SYN), before it listens
 *     -K HEX    make each accept as accept4(2) by syscall(2), with HEX in the
 *               upper 32 bits of its flags (which the kernel ignores: a
 *               filter that let such flags through would be a way past the
 *               gate; tests/gate-escape.sh)
 * It prints "port N" on stdout once it listens, and "served N eagain E
 * eintr I" per process when it exits (after COUNT connections, or SIGTERM).
 *
 * With GATE_SERVER_UNIX=DIR in its environment (tests/gate-lib.sh's Unix
 * mode) it listens on a Unix stream socket DIR/gs-PID.sock instead and
 * prints "port PATH"; gate-client takes that path for -p. The peer address
 * of a Unix client is printed as "@NAME:0" (its abstract name) or "-:0".
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate-where.h"

static volatile sig_atomic_t stop;
static long served, eagains, eintrs;
static unsigned long hikey;	/* -K */
static int lfd_main = -1, lfd_swap = -1;	/* -S */

static void on_term(int s) { (void)s; stop = 1; }

/* -E: a seccomp filter of the service's own that fails listen() with EPERM */
static int
refuse_listen(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_listen, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -1 :
	    (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}
static void on_usr1(int s) { (void)s; }

/* The credential lines of /proc/self/status, as one word (see the top). */
static void
creds_of_self(char *buf, size_t len)
{
	static const char *const keys[][2] = {
		{ "Uid:", "uid" }, { "Gid:", "gid" }, { "Groups:", "groups" },
		{ "CapEff:", "capeff" }, { "CapPrm:", "capprm" }, { "CapBnd:", "capbnd" },
		{ "CapAmb:", "capamb" }, { "NoNewPrivs:", "nnp" },
	};
	char line[512];
	size_t off = 0, k;
	FILE *f = fopen("/proc/self/status", "re");

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t kl = strlen(keys[k][0]);
			char *v, *w;

			if (strncmp(line, keys[k][0], kl) != 0)
				continue;
			/* "1 2 3" -> "1/2/3": one word */
			for (v = line + kl; *v == ' ' || *v == '\t'; v++)
				;
			v[strcspn(v, "\n")] = '\0';
			while (*v && (v[strlen(v) - 1] == ' ' || v[strlen(v) - 1] == '\t'))
				v[strlen(v) - 1] = '\0';
			for (w = v; *w; w++)
				if (*w == ' ' || *w == '\t')
					*w = '/';
			off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%s:%s",
			    off ? "," : "", keys[k][1], v);
		}
	}
	if (f)
		fclose(f);
}

static void
spin_ms(long ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* "hold PATH": sleep while PATH exists, 60 s at most */
static void
hold(const char *path)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
	char p[200];
	int i;

	snprintf(p, sizeof(p), "%s", path);
	p[strcspn(p, " ")] = '\0';
	for (i = 0; i < 6000 && access(p, F_OK) == 0; i++)
		nanosleep(&ten_ms, NULL);
}

static void
serve(int fd, struct sockaddr_storage *ss, socklen_t sl, int have_addr)
{
	char req[256] = "", cpu[256], cg2[256], peer[64] = "-", out[2048], creds[640];
	int fdfl = fcntl(fd, F_GETFD), fl = fcntl(fd, F_GETFL), port = 0;
	size_t off = 0;
	ssize_t n;

	/* read the request line blocking, whatever the fd's mode */
	if (fl & O_NONBLOCK)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	while (off < sizeof(req) - 1) {
		n = read(fd, req + off, sizeof(req) - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;	/* the EINTR test sends signals all the time */
		if (n <= 0)
			break;
		off += (size_t)n;
		if (memchr(req, '\n', off))
			break;
	}
	req[off] = '\0';
	req[strcspn(req, "\n")] = '\0';
	if (strncmp(req, "spin ", 5) == 0 || strstr(req, " spin "))
		spin_ms(strtol(strstr(req, "spin ") + 5, NULL, 10));
	if (strstr(req, " hold "))
		hold(strstr(req, " hold ") + 6);
	if (strstr(req, " sock")) {
		/* a socket created while serving belongs to the served VS */
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (s >= 0)
			close(s);
	}
	if (have_addr && ss->ss_family == AF_INET) {
		struct sockaddr_in *in = (void *)ss;

		inet_ntop(AF_INET, &in->sin_addr, peer, sizeof(peer));
		port = ntohs(in->sin_port);
	} else if (have_addr && ss->ss_family == AF_UNIX) {
		struct sockaddr_un *un = (void *)ss;
		size_t nl = sl > offsetof(struct sockaddr_un, sun_path) + 1 ?
		    sl - offsetof(struct sockaddr_un, sun_path) - 1 : 0;

		if (nl && un->sun_path[0] == '\0')
			snprintf(peer, sizeof(peer), "@%.*s", (int)nl, un->sun_path + 1);
	}
	cgroup_of_self(cpu, sizeof(cpu), cg2, sizeof(cg2));
	creds[0] = '\0';
	if (strstr(req, "creds")) {
		strcpy(creds, " creds=");
		creds_of_self(creds + 7, sizeof(creds) - 7);
	}
	n = snprintf(out, sizeof(out), "seq=%ld pid=%d cg=%s cg2=%s cloexec=%d nonblock=%d peer=%s:%d peerlen=%d req=%s%s\n",
	    served, getpid(), cpu, cg2, !!(fdfl & FD_CLOEXEC), !!(fl & O_NONBLOCK), peer, port,
	    have_addr ? (int)sl : -1, req, creds);
	while (write(fd, out, (size_t)n) < 0 && errno == EINTR)
		;
	close(fd);
	if (lfd_swap >= 0 && strstr(req, " swap")) {
		dup2(lfd_swap, lfd_main);
		close(lfd_swap);
		lfd_swap = -1;
	}
}

static void
loop(int lfd, const char *mode, int use4, int flags4, int nulladdr, long count)
{
	while (!stop && (count == 0 || served < count)) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct sockaddr *sa = nulladdr ? NULL : (struct sockaddr *)&ss;
		socklen_t *slp = nulladdr ? NULL : &sl;
		int fd;

		memset(&ss, 0, sizeof(ss));
		if (strcmp(mode, "evloop") == 0) {
			/* one accept per readiness event, like nginx without multi_accept */
			struct pollfd p = { .fd = lfd, .events = POLLIN };

			if (poll(&p, 1, -1) < 0)
				continue;
		}
		if (hikey)
			fd = (int)syscall(SYS_accept4, lfd, sa, slp,
			    (long)((unsigned long)hikey << 32 | (unsigned)(use4 ? flags4 : 0)));
		else
			fd = use4 ? accept4(lfd, sa, slp, flags4) : accept(lfd, sa, slp);
		if (fd < 0) {
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = lfd, .events = POLLIN };

				eagains++;
				poll(&p, 1, 100);
				continue;
			}
			if (errno == EINTR) {
				eintrs++;
				printf("eintr\n");
				fflush(stdout);
				continue;
			}
			perror("gate-server: accept");
			exit(1);
		}
		__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		if (strcmp(mode, "close") == 0)
			close(fd);
		else
			serve(fd, &ss, sl, !nulladdr);
	}
	printf("served %ld eagain %ld eintr %ld\n", served, eagains, eintrs);
	fflush(stdout);
}

struct targ {
	int lfd, use4, flags4, nulladdr;
	const char *mode;
};

static void *
thread_main(void *arg)
{
	struct targ *t = arg;

	loop(t->lfd, t->mode, t->use4, t->flags4, t->nulladdr, 0);
	return NULL;
}

int
main(int argc, char **argv)
{
	const char *mode = "blocking";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sigaction sa = { 0 };
	socklen_t sl = sizeof(sin);
	int c, lfd, one = 1, nproc = 1, nthr = 1, use4 = 0, flags4 = 0, nulladdr = 0, i, two = 0;
	int lfd2 = -1, dup_listen = 0, own_filter = 0, tfo = 0;
	long count = 0, port = 0, wait_ms = 0;
	char where[128];
	const char *udir;

	while ((c = getopt(argc, argv, "m:4:n:T:c:p:NSw:DEFK:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case '4':
			use4 = 1;
			if (strcmp(optarg, "cloexec") == 0) flags4 = SOCK_CLOEXEC;
			else if (strcmp(optarg, "nonblock") == 0) flags4 = SOCK_NONBLOCK;
			else if (strcmp(optarg, "both") == 0) flags4 = SOCK_CLOEXEC | SOCK_NONBLOCK;
			else if (strcmp(optarg, "bad") == 0) flags4 = 0x40000000;
			break;
		case 'n': nproc = atoi(optarg); break;
		case 'T': nthr = atoi(optarg); break;
		case 'c': count = atol(optarg); break;
		case 'p': port = atol(optarg); break;
		case 'N': nulladdr = 1; break;
		case 'S': two = 1; break;
		case 'w': wait_ms = atol(optarg); break;
		case 'D': dup_listen = 1; break;
		case 'E': own_filter = 1; break;
		case 'F': tfo = 16; break;
		case 'K': hikey = strtoul(optarg, NULL, 16); break;
		default:
			fprintf(stderr, "usage: gate-server [-m blocking|nonblock|eintr|close] [-4 FLAGS] [-n NPROC] [-c COUNT] [-p PORT] [-N] [-S] [-w MS] [-D] [-E]\n");
			return 2;
		}
	}
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;	/* no SA_RESTART: accept fails with EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if ((udir = getenv("GATE_SERVER_UNIX"))) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/gs-%d.sock", udir, (int)getpid());
		unlink(sun.sun_path);
		if ((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
			return perror("socket"), 1;
		if (bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(lfd, 4096) < 0)
			return perror("bind/listen"), 1;
		snprintf(where, sizeof(where), "%s", sun.sun_path);
	} else {
		if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
			return perror("socket"), 1;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
			return perror("bind"), 1;
		if (dup_listen) {
			getsockname(lfd, (struct sockaddr *)&sin, &sl);
			if ((lfd2 = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
			    setsockopt(lfd2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
			    bind(lfd2, (struct sockaddr *)&sin, sizeof(sin)) < 0)
				return perror("-D: bind"), 1;
		}
		if (own_filter && refuse_listen() < 0)
			return perror("-E: seccomp"), 1;
		if (tfo && setsockopt(lfd, IPPROTO_TCP, TCP_FASTOPEN, &tfo, sizeof(tfo)) < 0)
			return perror("-F: TCP_FASTOPEN"), 1;
		if (listen(lfd, 4096) < 0)
			return perror("listen"), 1;
		if (lfd2 >= 0) {
			printf("listen2 %s\n", listen(lfd2, 16) < 0 ? strerror(errno) : "ok");
			close(lfd2);
		}
		sl = sizeof(sin);
		getsockname(lfd, (struct sockaddr *)&sin, &sl);
		snprintf(where, sizeof(where), "%d", ntohs(sin.sin_port));
	}
	if (strcmp(mode, "nonblock") == 0 || strcmp(mode, "evloop") == 0)
		fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	printf("port %s\n", where);
	if (two && !udir) {
		sin.sin_port = 0;
		sl = sizeof(sin);
		if ((lfd_swap = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    bind(lfd_swap, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd_swap, 4096) < 0)
			return perror("-S: bind/listen"), 1;
		getsockname(lfd_swap, (struct sockaddr *)&sin, &sl);
		printf("port2 %d\n", ntohs(sin.sin_port));
		lfd_main = lfd;
	}
	fflush(stdout);
	if (wait_ms > 0)
		usleep((useconds_t)wait_ms * 1000);
	if (nthr > 1) {
		/* N threads of one process accept on the listener (until SIGTERM) */
		struct targ t = { lfd, use4, flags4, nulladdr, mode };
		pthread_t th;

		for (i = 0; i < nthr; i++)
			pthread_create(&th, NULL, thread_main, &t);
		while (!stop)
			pause();
		printf("served %ld\n", served);
		fflush(stdout);
		_exit(0);
	}
	if (nproc <= 1) {
		loop(lfd, mode, use4, flags4, nulladdr, count);
		return 0;
	}
	pid_t kids[64];

	if (nproc > 64)
		nproc = 64;
	for (i = 0; i < nproc; i++) {
		if ((kids[i] = fork()) == 0) {
			loop(lfd, mode, use4, flags4, nulladdr, count);
			_exit(0);
		}
	}
	close(lfd);
	while (wait(NULL) > 0 || errno == EINTR)
		if (stop)
			for (i = 0; i < nproc; i++)
				kill(kids[i], SIGTERM);
	return 0;
}
