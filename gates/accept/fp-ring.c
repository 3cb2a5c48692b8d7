// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path's link to the socket gate (gates/socket/socket.h, "Gated
 * listeners"): its pinned maps, opened once; a listener's registration
 * (its port in the gated map, a ring of its own, one registration at a
 * time among the gates of one vsd); and the guard, which wakes threads
 * left waiting in the kernel's accept if the supervisor dies. The model
 * the ring feeds is fp-model.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fp.h"
#include "lib/log.h"

static char pindir[PATH_MAX];
static int gated_fd = -1, rings_fd = -1, opened, warned, accepts, fast_mode;
static uint32_t last_id;
static uint64_t own_rings;	/* the rings our listeners hold (bit per ring) */
static uint32_t *gports;
static struct vsd_ringctl *ringctl;
static size_t gports_len, ringctl_len;

static const char *const fast_names[] = { "on", "exact", "off" };

static int maps_open(void);

/*
 * The guard: a thread that waits in the kernel's accept has no notification
 * pending, so if the supervisor dies it does not see ENOSYS until a client
 * comes, and a service that exits on that error would hold its port until
 * then (vsd could not start it again). The guard, a child that holds none of
 * our descriptors, is signalled when we die (PR_SET_PDEATHSIG) and connects
 * once to each listener that has a thread waiting in the kernel: the thread
 * accepts that connection, finds it closed, and its next accept fails with
 * ENOSYS as any other would.
 */
struct fp_guard {
	struct {
		_Atomic int live;	/* a thread waits in the kernel on it */
		socklen_t len;
		struct sockaddr_storage ss;
	} a[FP_GUARDS];
};

static struct fp_guard *guard;
static pid_t guard_pid;

static void __attribute__((noreturn))
guard_main(pid_t parent)
{
	struct pollfd pf[FP_GUARDS];
	sigset_t s;
	int i, n = 0;

	sigfillset(&s);
	sigprocmask(SIG_SETMASK, &s, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	prctl(PR_SET_NAME, "vsd-gate-guard");
	syscall(SYS_close_range, 3, ~0U, 0);
	if (getppid() == parent) {
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigwaitinfo(&s, NULL);	/* we died, or ended in order (then nothing is live) */
	}
	for (i = 0; i < FP_GUARDS; i++) {
		int fd;

		if (!atomic_load(&guard->a[i].live))
			continue;
		fd = socket(guard->a[i].ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, (struct sockaddr *)&guard->a[i].ss, guard->a[i].len) < 0 &&
		    errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		pf[n++] = (struct pollfd){ .fd = fd, .events = POLLOUT };
	}
	if (n)	/* connected: the kernel queued them; give it a moment */
		poll(pf, (nfds_t)n, 200);
	_exit(0);
}

static void
guard_start(void)
{
	pid_t parent = getpid();

	guard = mmap(NULL, sizeof(*guard), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED) {
		guard = NULL;
		return;
	}
	if ((guard_pid = fork()) < 0) {
		log_warn("fast path: guard");
		munmap(guard, sizeof(*guard));
		guard = NULL;
		guard_pid = 0;
		return;
	}
	if (guard_pid == 0)
		guard_main(parent);
}

static int
guard_slot(struct gated_listener *l)
{
	int i;

	if (!guard)
		return -1;
	for (i = 0; i < FP_GUARDS; i++)
		if (guard->a[i].len == 0) {
			if (listener_reach(l, &guard->a[i].ss, &guard->a[i].len) < 0) {
				guard->a[i].len = 0;
				return -1;
			}
			return i;
		}
	return -1;
}


int
gate_fast_parse(const char *s)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(fast_names); i++)
		if (strcmp(s, fast_names[i]) == 0)
			return i;
	return -1;
}

const char *
gate_fast_name(int mode)
{
	return mode >= 0 && mode < (int)ARRAY_SIZE(fast_names) ? fast_names[mode] : "?";
}

void
fp_init(const char *conns_map, int mode)
{
	char tmp[PATH_MAX];

	fast_mode = mode;
	if (mode == GATE_FAST_ON && !guard)
		guard_start();
	pindir[0] = '\0';
	if (!conns_map || snprintf(tmp, sizeof(tmp), "%s", conns_map) >= (int)sizeof(tmp))
		return;
	snprintf(pindir, sizeof(pindir), "%s", dirname(tmp));
	/* now: the accept records load BPF programs, which --user's dropped
	 * capabilities would not allow later */
	maps_open();
}

static void *
map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t
page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

/* Do we see thread ids as the initial PID namespace does (NSpid has one)? */
static int
init_pid_ns(void)
{
	char line[256];
	int n = 0;
	FILE *fp = fopen("/proc/self/status", "re");

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *t = strtok(line + 6, " \t\n");

			for (; t; t = strtok(NULL, " \t\n"))
				n++;
			break;
		}
	fclose(fp);
	return n == 1;
}

/* The socket gate's maps, once; 0, or -1 (no fast path, logged once). */
static int
maps_open(void)
{
	char p[PATH_MAX + 32];
	int fd;

	if (opened)
		return gated_fd >= 0 ? 0 : -1;
	if (!pindir[0])
		return -1;
	opened = 1;
	snprintf(p, sizeof(p), "%s/%s", pindir, VSD_MAP_GATED);
	if ((gated_fd = bpf_obj_get(p)) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/%s", pindir, VSD_MAP_RINGS);
	if ((rings_fd = bpf_obj_get(p)) < 0)
		goto fail;
	snprintf(p, sizeof(p), "%s/%s", pindir, VSD_MAP_GPORTS);
	gports_len = page_round(65536 * sizeof(uint32_t));
	if ((fd = bpf_obj_get(p)) < 0 || !(gports = map_mmap(fd, gports_len)))
		goto fail_fd;
	close(fd);
	snprintf(p, sizeof(p), "%s/%s", pindir, VSD_MAP_RINGCTL);
	ringctl_len = page_round(VSD_RINGS_MAX * sizeof(struct vsd_ringctl));
	if ((fd = bpf_obj_get(p)) < 0 || !(ringctl = map_mmap(fd, ringctl_len)))
		goto fail_fd;
	close(fd);
	/* without the accept records a thread let through could not be
	 * followed: listeners are registered (their connections recorded for
	 * the drain) but drained. Not needed with --fast off. */
	if (fast_mode == GATE_FAST_OFF)
		return 0;
	if (!init_pid_ns())
		log_warnx("fast path off: the accept records name threads by their "
		    "ids in the initial PID namespace, and we run in another; every "
		    "connection is handed over");
	else if (!records_start(pindir))
		log_warnx("fast path off: no accept records (see above); every "
		    "connection is handed over");
	else
		accepts = 1;
	return 0;
fail_fd:
	if (fd >= 0)
		close(fd);
fail:
	if (!warned++)
		log_warnx("fast path off: %s: %s (a vsd older than the gate?)", p, strerror(errno));
	if (gated_fd >= 0)
		close(gated_fd);
	if (rings_fd >= 0)
		close(rings_fd);
	gated_fd = rings_fd = -1;
	return -1;
}

static int
owner_alive(uint32_t pid)
{
	return pid != 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* One registration at a time among the gates of this vsd: its pin directory's lock. */
static int
reg_lock(void)
{
	int fd = open(pindir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && flock(fd, LOCK_EX) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A free ring index: not used by a live gate. Keys of gates that are gone
 * are removed on the way, their port counts given back. VSD_RINGS_MAX if
 * none is free; -1 if our key is a live gate's (another gate serves this
 * port here, or another listener of ours does).
 */
static int
ring_claim(const struct vsd_gated_key *mine)
{
	struct vsd_gated_key k, next, *prev = NULL;
	struct vsd_gated_val v;
	uint64_t used = 0;
	int i;

	_Static_assert(VSD_RINGS_MAX <= 64, "used[] is one word");
	while (bpf_map_get_next_key(gated_fd, prev, &next) == 0) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(gated_fd, &k, &v) < 0)
			continue;
		if ((owner_alive(v.owner) && v.owner != (uint32_t)getpid()) ||
		    (v.owner == (uint32_t)getpid() && (v.ring == VSD_RING_NONE ||
		    (v.ring < VSD_RINGS_MAX && (own_rings & (1ull << v.ring)))))) {
			/* another gate's, or another listener of ours */
			if (memcmp(&k, mine, sizeof(k)) == 0)
				return -1;
			if (v.ring < VSD_RINGS_MAX)
				used |= 1ull << v.ring;
			continue;
		}
		/* its gate is gone (or it is the leftover of a gate that had our
		 * PID): forget it */
		if (bpf_map_delete_elem(gated_fd, &k) == 0 && k.port < 65536 && gports[k.port])
			__atomic_fetch_sub(&gports[k.port], 1, __ATOMIC_SEQ_CST);
		prev = NULL;	/* the walk starts again: the key is gone */
	}
	for (i = 0; i < VSD_RINGS_MAX; i++)
		if (!(used & (1ull << i)))
			return i;
	return VSD_RINGS_MAX;
}

/* l's key in vsd_gated: its network namespace and local port; 0 or -1. */
static int
listener_key(const struct gated_listener *l, struct vsd_gated_key *k)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	memset(k, 0, sizeof(*k));
	if ((l->family != AF_INET && l->family != AF_INET6) || maps_open() < 0)
		return -1;
	if (getsockname(l->fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	sl = sizeof(k->netns);
	if (getsockopt(l->fd, SOL_SOCKET, SO_NETNS_COOKIE, &k->netns, &sl) < 0)
		return -1;
	k->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* Under the registration lock: k as ring's, the port counted; 0 or -1. */
static int
key_add(const struct vsd_gated_key *k, uint32_t ring)
{
	struct vsd_gated_val v = { .ring = ring, .owner = (uint32_t)getpid() };

	if (bpf_map_update_elem(gated_fd, k, &v, BPF_NOEXIST) < 0)
		return -1;
	__atomic_fetch_add(&gports[k->port], 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* Under the registration lock: k gone, if ours, its port's count given back. */
static void
key_del(const struct vsd_gated_key *k)
{
	struct vsd_gated_val v;

	if (bpf_map_lookup_elem(gated_fd, k, &v) == 0 && v.owner == (uint32_t)getpid() &&
	    bpf_map_delete_elem(gated_fd, k) == 0 && gports[k->port])
		__atomic_fetch_sub(&gports[k->port], 1, __ATOMIC_SEQ_CST);
}

/*
 * --fast off: no ring to read and no accept records, but the drain
 * classifies a connection by its entry in the connection table, which vsd's
 * default --record-conns gated makes only for a port counted in vsd_gports:
 * the port is registered all the same, with VSD_RING_NONE.
 */
static int
port_register(struct gated_listener *l)
{
	struct vsd_gated_key *k = calloc(1, sizeof(*k));
	int lk, r = -1;

	if (!k || listener_key(l, k) < 0 || (lk = reg_lock()) < 0)
		goto out;
	if (ring_claim(k) >= 0 && key_add(k, VSD_RING_NONE) == 0) {
		l->port_reg = k;
		k = NULL;
		r = 0;
	}
	close(lk);
out:
	free(k);
	return r;
}

int
fp_attach(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f;
	struct vsd_gated_key k;
	int lk, idx;

	(void)g;
	if (fast_mode == GATE_FAST_OFF)
		return port_register(l);
	if (listener_key(l, &k) < 0 || !(f = calloc(1, sizeof(*f))))
		return -1;
	f->rb_fd = -1;
	f->guard = -1;
	f->id = ++last_id ? last_id : ++last_id;
	f->key = k;
	if ((lk = reg_lock()) < 0)
		goto fail;
	if ((idx = ring_claim(&f->key)) < 0 || idx == VSD_RINGS_MAX) {
		log_info("fast path off for port %u: no free ring, or another gate has it", f->key.port);
		goto fail_unlock;
	}
	f->ring = (uint32_t)idx;
	f->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, VSD_RING_BYTES, NULL);
	if (f->rb_fd < 0 || bpf_map_update_elem(rings_fd, &f->ring, &f->rb_fd, BPF_ANY) < 0 ||
	    !(f->rb = ring_buffer__new(f->rb_fd, fp_on_record, f, NULL)))
		goto fail_unlock;
	f->ctl = &ringctl[f->ring];
	__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
	f->dropped = __atomic_load_n(&f->ctl->dropped, __ATOMIC_SEQ_CST);
	if (key_add(&f->key, f->ring) < 0)
		goto fail_unlock;
	own_rings |= 1ull << f->ring;
	close(lk);
	f->guard = guard_slot(l);
	f->live = f->guard >= 0 ? &guard->a[f->guard].live : NULL;
	l->fp = f;
	log_debug("fast path: port %u, ring %u", f->key.port, f->ring);
	return 0;
fail_unlock:
	close(lk);
fail:
	if (f->rb)
		ring_buffer__free(f->rb);
	if (f->rb_fd >= 0)
		close(f->rb_fd);
	free(f);
	return -1;
}

void
fp_detach(struct gated_listener *l)
{
	struct fp_listener *f = l->fp;
	int lk;

	if (l->port_reg) {
		lk = reg_lock();
		key_del(l->port_reg);
		if (lk >= 0)
			close(lk);
		free(l->port_reg);
		l->port_reg = NULL;
	}
	if (!f)
		return;
	lk = reg_lock();
	key_del(&f->key);
	bpf_map_delete_elem(rings_fd, &f->ring);
	own_rings &= ~(1ull << f->ring);
	if (lk >= 0)
		close(lk);
	if (f->direct)
		f->direct->direct_l = NULL;
	if (f->guard >= 0) {
		atomic_store(&guard->a[f->guard].live, 0);
		guard->a[f->guard].len = 0;
	}
	ring_buffer__free(f->rb);
	close(f->rb_fd);
	free(f);
	l->fp = NULL;
}

int
fp_records_on(void)
{
	return accepts;
}
