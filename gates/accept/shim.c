// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept shim: vsd-gate-shim.so, which vsd-gate puts first in a gated
 * service's LD_PRELOAD (vsctl-run(8), "The accept shim"). It saves the
 * service the round trip to the gate for the accepts the gate would let go
 * on unchanged anyway.
 *
 * The gate gives a lease to a thread that accepts alone on a TCP listener
 * and may wait in the kernel (fastpath.c): the listener's lease in the
 * gate's lease map (struct vsd_lease, gates/socket/socket.h) then names
 * the thread, with lease_on set, and the listener's inode. While that
 * holds, and the lease has not lapsed, this shim makes the thread's
 * accept(2) and accept4(2) on that
 * listener itself, as accept4 with the gate's key in the upper 32 bits of
 * the flags: the kernel ignores them (the argument is an int), the
 * service's seccomp filter lets that call through instead of notifying the
 * gate. Everything else (no lease, another thread, another descriptor, a
 * lease the socket gate or the gate revoked) calls the C library's
 * function, which the filter sends to the gate as before.
 *
 * At start, from VSD_GATE_PRELOAD ("FD KEY"): map FD (the gate's lease
 * map, which holds that gate's leases only; read here, written by the gate
 * and the socket gate) if it is a BPF map. The descriptor, the variable and
 * LD_PRELOAD stay as they are, so a program the service runs (a shell
 * that runs the server, a master that execs its workers) has the shim
 * too: it is under the same filter. A child that forks keeps the mapping;
 * its thread ids are its own.
 *
 * The key is no secret from the service's own code: any code in the service
 * can make such a call. The shim is for services whose code the operator
 * trusts as far as accounting goes (--preload off otherwise).
 */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "gates/socket/socket.h"

#define SHIM_ENV	"VSD_GATE_PRELOAD"

static struct vsd_lease *ctl;	/* VSD_RINGS_MAX of them */
static uint64_t key;			/* already shifted into the upper half */
static __thread pid_t my_tid;
static __thread int my_slot = -1;	/* where our lease was last */

static int (*real_accept)(int, struct sockaddr *, socklen_t *);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);

static void
after_fork(void)
{
	my_tid = 0;	/* the child's only thread has an id of its own */
	my_slot = -1;
}

__attribute__((constructor)) static void
shim_init(void)
{
	const char *v = getenv(SHIM_ENV);
	char link[64], target[64];
	unsigned long k;
	ssize_t n;
	void *p;
	int fd;

	real_accept = (int (*)(int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "accept");
	real_accept4 = (int (*)(int, struct sockaddr *, socklen_t *, int))dlsym(RTLD_NEXT, "accept4");
	if (!v)
		return;
	if (sscanf(v, "%d %lu", &fd, &k) != 2 || fd < 3 || k == 0 || k >= 0x80000000ul)
		return;
	/* the descriptor must be the map vsd-gate left us, not whatever
	 * took its number */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, target, sizeof(target) - 1)) <= 0)
		return;
	target[n] = '\0';
	if (strcmp(target, "anon_inode:bpf-map") != 0)
		return;
	p = mmap(NULL, VSD_RINGS_MAX * sizeof(struct vsd_lease), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	ctl = p;
	key = (uint64_t)k << 32;
	pthread_atfork(NULL, NULL, after_fork);
}

static uint64_t
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
lease_ok(struct vsd_lease *c, pid_t tid)
{
	struct vsd_lease w;

	w.lease = __atomic_load_n(&c->lease, __ATOMIC_ACQUIRE);
	return w.lease_on == 1 && w.lease_tid == (uint32_t)tid;
}

/* May this thread accept on fd without asking the gate? Its lease if so. */
static struct vsd_lease *
leased(int fd)
{
	struct vsd_lease *c = NULL;
	struct stat st;
	int i;

	if (!ctl)
		return NULL;
	if (!my_tid)
		my_tid = (pid_t)syscall(SYS_gettid);
	if (my_slot >= 0 && lease_ok(&ctl[my_slot], my_tid))
		c = &ctl[my_slot];
	else
		for (i = 0; i < VSD_RINGS_MAX; i++)
			if (lease_ok(&ctl[i], my_tid)) {
				my_slot = i;
				c = &ctl[i];
				break;
			}
	if (!c || mono_now() >= __atomic_load_n(&c->until, __ATOMIC_ACQUIRE))
		return NULL;
	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (uint64_t)st.st_ino == __atomic_load_n(&c->ino, __ATOMIC_ACQUIRE) ? c : NULL;
}

/*
 * accept4 in the kernel, past the gate, saying so in the lease (waiting:
 * a connection of another VS then moves us before we run, as the gate
 * moves a thread it let wait in the kernel); a cancellation point, as the
 * C library's (asynchronous cancellation around the call, as it once did).
 */
static int
direct_accept4(struct vsd_lease *c, int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int old, r, e;

	__atomic_store_n(&c->waiting, 1, __ATOMIC_SEQ_CST);
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
	r = (int)syscall(SYS_accept4, fd, addr, len, key | (uint32_t)flags);
	e = errno;
	pthread_setcanceltype(old, NULL);
	__atomic_store_n(&c->waiting, 0, __ATOMIC_RELEASE);
	errno = e;
	return r;
}

int
accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct vsd_lease *c = leased(fd);

	if (c)
		return direct_accept4(c, fd, addr, len, flags);
	if (!real_accept4) {
		errno = ENOSYS;
		return -1;
	}
	return real_accept4(fd, addr, len, flags);
}

int
accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct vsd_lease *c = leased(fd);

	if (c)
		return direct_accept4(c, fd, addr, len, 0);
	if (!real_accept) {
		errno = ENOSYS;
		return -1;
	}
	return real_accept(fd, addr, len);
}
