// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The fast path: answer an accept with SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * whenever the kernel would hand out the connection the gate would choose,
 * and hand over with ADDFD (gate.c) only when the order must change. A
 * hand-over costs the service a wake-up by a plain complete() (45-50 µs
 * here); a CONTINUE is a NOTIF_SEND, which honours the sync wake-up flag.
 *
 * The gate learns the kernel's accept queue without accepting from it: the
 * socket gate appends each connection to a registered listener to that
 * listener's ring, in the softirq that queues it, before the listener is
 * woken (gates/socket/socket.h, "Gated listeners"); and when a thread's
 * accept returns one of them, programs vsd loads and we attach
 * (gates/socket/records.bpf.c, records.c) append an accept record (the thread, the connection, its VS) to the same
 * ring. The gate keeps a model of the
 * queue: the arrivals it has read, in order, that it does not know to be
 * accepted (q), and the connections it has promised to threads it let
 * through (pr, expect of them), each promise kept when an accept record
 * names it. The model is trusted while the kernel's count (tcpi_unacked)
 * equals qn + expect: a record that lags its connection (either kind)
 * makes them differ, so no connection is hidden from the model.
 *
 * Three answers, for an accept with nothing in the gate's own queues:
 * - connections queued, and the VS of the kernel's head is the one the gate
 *   would pick (the same order as queue.c: rank, aged by the wait): re-bind
 *   the thread to it if needed, CONTINUE; the kernel hands out that head;
 * - nothing queued, a blocking listener, no other thread let through, and
 *   the latest FP_RUN arrivals of the VS the thread sits in: let the
 *   thread block in the kernel's accept (a "direct" waiter). An arrival of
 *   that VS needs nothing from us (its record is read at the thread's next
 *   accept); for one of another VS the ring wakes the gate
 *   (vsd_ringctl.wake), and the gate moves the thread. The thread is woken
 *   by the same softirq and may run before the gate has moved it: the CPU
 *   it spends meanwhile stays in its previous VS, measured per such move
 *   (the thread's own CPU time, schedstat) and reported by status;
 * - otherwise: gate.c's drain and hand-over. A drained connection takes
 *   its VS from its ring record (matched by SO_COOKIE).
 *
 * Races, and what they cost:
 * - two final ACKs on two CPUs can queue in one order and reach the ring
 *   in the other. Records closer than FP_CLOSE_NS apart of different VSs
 *   are taken as of unknown order: no CONTINUE for such a head (drain
 *   instead); a direct waiter takes what the kernel gives it, so at most
 *   its one request is charged to the other VS, and the model is then
 *   dropped until a drain has emptied the queue. A CPU that stalls longer
 *   than FP_CLOSE_NS between queueing a connection and recording it (a
 *   vCPU preempted by its host) can still invert two records: a thread let
 *   through for one takes the other. Its accept record shows it: counted
 *   (misordered) if the VS differs, and the model is dropped, so the order
 *   got wrong costs that one request. Threads let through for the same
 *   model are all of one VS (expect_vs), so none of them can take a
 *   second connection of another VS from the same inversion, as long as
 *   the gate does not drain the queue under them: after a drop it waits
 *   until they have dequeued (or FP_EXPECT_NS), since a drain would take
 *   their promised connections and leave them the next arrivals, of any
 *   VS (seen under a loaded VM: two requests misattributed by one race);
 * - a record lags its connection in the queue by the softirq's few us
 *   (TCP Fast Open's precedes it), an accept record its dequeue by the
 *   rest of the accept call: the counts disagree, no CONTINUE;
 * - a client that resets while queued stays in the kernel's queue (accept
 *   returns it); seen to drop the model once (tests/gate-fast.sh), which
 *   costs a drain, not a misattribution;
 * - a thread killed between our CONTINUE and its dequeue, or interrupted:
 *   another thread takes the promised connection (threads let through
 *   together may take each other's), or, if none does within FP_EXPECT_NS,
 *   the promise is forgotten, the model dropped and the drain takes over;
 * - the listener's identity: gate.c knows a thread's listener by its
 *   descriptor number, checked with kcmp() before reuse, except right
 *   after the listener's ring showed the thread's previous accept taking
 *   one of its connections (fd_seen). A service that puts another socket
 *   on that number in between has its next accept taken for the old
 *   listener's: that request, counted (fd_moved) from the other listener's
 *   record (on_record), or at the following accept when kcmp finds the
 *   number changed and no record had come (fd_unseen).
 * The kernel hands out each connection once whatever we believe: a wrong
 * belief misattributes, it never loses or doubles a connection, and every
 * misattributed request is one the gate counts (direct_moved, misordered,
 * fd_moved), unless records were lost (a full ring, counted by the socket
 * gate; the model is dropped then too).
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
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

#include "gate.h"
#include "gates/socket/socket.h"
#include "lib/log.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE		71	/* Linux 5.14 */
#endif

#define FP_CLOSE_NS	20000ull	/* records this close may be in either order */
#define FP_LAG_NS	20000ull	/* wait this long for a lagging record */
#define FP_EXPECT_NS	10000000ull	/* a promised dequeue not seen in 10 ms: forget it */
#define FP_SCAN		256		/* look this deep into the queue for a better VS */
#define FP_EARLY	64		/* cookies drained before their record was read */
#define FP_RUN		8		/* a thread waits in the kernel only after this many
					 * arrivals in a row of the VS it sits in */
#define FP_GUARDS	64		/* listeners the guard can wake */
#define FP_EVENTS	256		/* accept records read, not yet applied */
#define FP_PROMISED	256		/* threads let through at once, at most */
#define FP_OUTSIDE	64		/* accepts the gate did not answer, read, not yet applied */
#define FP_GONE		64		/* threads let through that ended before their record was read */
#define FP_OUTSIDE_LOG_NS 10000000000ull	/* log outside accepts at most this often */

struct fp_entry {
	uint64_t cookie;
	uint64_t t;
	uint32_t vs;
};

struct fp_listener {
	struct vsd_gated_key key;
	uint32_t ring;
	int	 rb_fd;
	struct ring_buffer *rb;
	struct vsd_ringctl *ctl;	/* ours, in the mmap of vsd_ringctl */
	uint64_t dropped;		/* ctl->dropped when we last looked */
	struct fp_entry q[VSD_RING_BYTES / sizeof(struct vsd_arrival)];
	unsigned qh, qn;
	uint64_t early[FP_EARLY];	/* a ring of them, 0 = none */
	unsigned early_i;
	unsigned expect;		/* queued connections promised to threads let through: */
	struct fp_entry pr[FP_PROMISED];	/* their records */
	uint32_t expect_vs;		/* their VS if all the same, else 0 */
	uint64_t expect_t;
	unsigned void_n;		/* threads let through before the last drop, still to dequeue */
	uint64_t void_t;		/* when the last drop came */
	struct service_thread *direct;	/* a thread let into a blocking accept */
	uint64_t direct_cpu;		/* its CPU time then */
	uint32_t run_vs;		/* the VS of the latest arrivals... */
	unsigned run_len;		/* ...and how many in a row */
	int	 guard;			/* its slot in the guard's table, -1: none */
	int	 fed;			/* a record matched a drained connection: the ring works */
	int	 lost;			/* the model is off until the queue has been emptied */
	uint32_t id;			/* ours among the listeners, never 0 */
	uint32_t gen;			/* the model's generation: one more per drop */
	struct vsd_arrival ev[FP_EVENTS];	/* accept records, in ring order */
	unsigned nev;
	int	 ev_lost;		/* more than FP_EVENTS in one read */
	unsigned fd_moved;		/* accepts of threads let through for another listener */
	struct vsd_arrival out[FP_OUTSIDE];	/* accepts the gate did not answer */
	unsigned nout, out_lost;
	/* cookies handed over, oldest first: with the tracepoint records the
	 * service's accept that returns one makes a record too. As many as
	 * the ring holds records: an older one's record was read, or lost. */
	uint64_t handed[VSD_RING_BYTES / sizeof(struct vsd_arrival)];
	unsigned hh, hn;
};

#define QCAP	(sizeof(((struct fp_listener *)0)->q) / sizeof(struct fp_entry))

static int q_find(struct fp_listener *f, uint64_t cookie);
static int handed_take(struct fp_listener *f, uint64_t cookie);
static void q_remove(struct fp_listener *f, unsigned i);

/* threads let through whose accept record was not read when they ended */
static pid_t gone[FP_GONE];
static unsigned gone_i;

static char pindir[PATH_MAX];
static int gated_fd = -1, rings_fd = -1, opened, warned, accepts, fast_mode;
static uint32_t last_id;
static uint64_t own_rings;	/* the rings our listeners hold (bit per ring) */
static uint32_t *gports;
static struct vsd_ringctl *ringctl;
static size_t gports_len, ringctl_len;

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

static void direct_end(struct fp_listener *f);

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

static void
guard_live(struct fp_listener *f, int on)
{
	if (f->guard >= 0)
		atomic_store(&guard->a[f->guard].live, on);
}

static const char *const fast_names[] = { "on", "exact", "off" };

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

static int maps_open(void);

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
 * are removed on the way, their port counts given back. -1 if none is free,
 * or our key is a live gate's (another gate serves this port here).
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
		    (v.owner == (uint32_t)getpid() && v.ring < VSD_RINGS_MAX &&
		    (own_rings & (1ull << v.ring)))) {
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
	return -1;
}

/* Was tid let through and has it ended since? (once) */
static int
gone_take(pid_t tid)
{
	unsigned i;

	for (i = 0; i < FP_GONE; i++)
		if (gone[i] == tid) {
			gone[i] = 0;
			return 1;
		}
	return 0;
}

static int
on_record(void *ctx, void *data, size_t len)
{
	struct fp_listener *f = ctx;
	const struct vsd_arrival *a = data;
	unsigned i;

	if (len < sizeof(*a))
		return 0;
	if (a->tid) {		/* an accept: applied after the read (fp_sync) */
		struct service_thread *th = thread_find((pid_t)a->tid);
		int j;

		if (!th || !th->fp_id) {
			/* not let through by us: the connection has left the
			 * queue all the same. Not an accept outside the
			 * gate's decision if we handed it over (the
			 * tracepoint records the accept that returned it) or
			 * let the thread through before it ended (its record
			 * read late) */
			if ((j = q_find(f, a->cookie)) >= 0)
				q_remove(f, (unsigned)j);
			else
				f->early[f->early_i++ % FP_EARLY] = a->cookie;
			if (th ? !handed_take(f, a->cookie) : !gone_take((pid_t)a->tid)) {
				if (f->nout < FP_OUTSIDE)
					f->out[f->nout++] = *a;
				else
					f->out_lost++;
			}
			return 0;
		}
		if (th->fp_id != f->id) {
			/* not let through here: the connection has left the
			 * queue all the same (a hand-over's was drained) */
			if ((j = q_find(f, a->cookie)) >= 0)
				q_remove(f, (unsigned)j);
			else
				f->early[f->early_i++ % FP_EARLY] = a->cookie;
			/* let through for another listener, it took one of
			 * ours: its descriptor names this one now */
			f->fd_moved++;
			th->last_l = NULL;
			th->fd_seen = 0;
			return 0;
		}
		if (f->nev == FP_EVENTS)
			f->ev_lost = 1;
		else
			f->ev[f->nev++] = *a;
		return 0;
	}
	for (i = 0; i < FP_EARLY; i++)
		if (f->early[i] == a->cookie) {	/* drained before we read it */
			f->early[i] = 0;
			f->fed = 1;
			return 0;
		}
	if (f->qn == QCAP) {
		f->lost = 1;
		return 0;
	}
	f->q[(f->qh + f->qn++) % QCAP] = (struct fp_entry){ a->cookie, a->t, a->vs_id };
	if (a->vs_id != f->run_vs) {
		f->run_vs = a->vs_id;
		f->run_len = 0;
	}
	f->run_len++;
	return 0;
}

int
fp_attach(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct vsd_gated_val v;
	uint64_t netns = 0;
	int lk, idx;

	(void)g;
	if ((l->family != AF_INET && l->family != AF_INET6) || maps_open() < 0)
		return -1;
	if (getsockname(l->fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	sl = sizeof(netns);
	if (getsockopt(l->fd, SOL_SOCKET, SO_NETNS_COOKIE, &netns, &sl) < 0)
		return -1;
	if (!(f = calloc(1, sizeof(*f))))
		return -1;
	f->rb_fd = -1;
	f->guard = -1;
	f->id = ++last_id ? last_id : ++last_id;
	f->key.netns = netns;
	f->key.port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if ((lk = reg_lock()) < 0)
		goto fail;
	if ((idx = ring_claim(&f->key)) < 0) {
		log_info("fast path off for port %u: no free ring, or another gate has it", f->key.port);
		goto fail_unlock;
	}
	f->ring = (uint32_t)idx;
	f->rb_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, VSD_RING_BYTES, NULL);
	if (f->rb_fd < 0 || bpf_map_update_elem(rings_fd, &f->ring, &f->rb_fd, BPF_ANY) < 0 ||
	    !(f->rb = ring_buffer__new(f->rb_fd, on_record, f, NULL)))
		goto fail_unlock;
	f->ctl = &ringctl[f->ring];
	__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
	f->dropped = __atomic_load_n(&f->ctl->dropped, __ATOMIC_SEQ_CST);
	v = (struct vsd_gated_val){ .ring = f->ring, .owner = (uint32_t)getpid() };
	if (bpf_map_update_elem(gated_fd, &f->key, &v, BPF_NOEXIST) < 0)
		goto fail_unlock;
	__atomic_fetch_add(&gports[f->key.port], 1, __ATOMIC_SEQ_CST);
	own_rings |= 1ull << f->ring;
	close(lk);
	f->guard = guard_slot(l);
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
	struct vsd_gated_val v;
	int lk;

	if (!f)
		return;
	lk = reg_lock();
	if (bpf_map_lookup_elem(gated_fd, &f->key, &v) == 0 && v.owner == (uint32_t)getpid() &&
	    bpf_map_delete_elem(gated_fd, &f->key) == 0 && gports[f->key.port])
		__atomic_fetch_sub(&gports[f->key.port], 1, __ATOMIC_SEQ_CST);
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

void
fp_thread_gone(struct service_thread *th)
{
	if (th->fp_id)		/* its record may be read after this */
		gone[gone_i++ % FP_GONE] = th->tid;
	if (th->direct_l && th->direct_l->fp && th->direct_l->fp->direct == th)
		direct_end(th->direct_l->fp);
	th->direct_l = NULL;
	th->fp_id = 0;
}

static struct fp_entry *
q_at(struct fp_listener *f, unsigned i)
{
	return &f->q[(f->qh + i) % QCAP];
}

static void
q_pop(struct fp_listener *f)
{
	f->qh = (f->qh + 1) % QCAP;
	f->qn--;
}

/*
 * The model is off: start again once the kernel's queue has been emptied.
 * The threads let through until now still take a connection each from the
 * kernel's head: until they have (their accept records), or FP_EXPECT_NS
 * has passed, the gate does not drain the queue under them (fp_ready,
 * fp_busy), or a promised connection would go to the drain and the thread
 * take the next arrival, of whichever VS: one race, two requests in the
 * wrong VS.
 */
static void
fp_lose(struct gate *g, struct fp_listener *f)
{
	f->void_n += f->expect;
	f->void_t = now_ns();
	f->lost = 1;
	f->qn = 0;
	f->expect = 0;
	f->gen++;		/* the promises made so far are void */
	g->fp_resync++;
}

/* Threads let through before the last drop may still dequeue. */
static int
voided(const struct fp_listener *f)
{
	return f->void_n && now_ns() - f->void_t <= FP_EXPECT_NS;
}

static void
direct_end(struct fp_listener *f)
{
	if (f->direct)
		f->direct->direct_l = NULL;
	f->direct = NULL;
	guard_live(f, 0);
	__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
}

/*
 * While a thread waits in the kernel: wake us for an arrival of a VS other
 * than vs, the one it sits in (it must be moved; one of vs needs nothing,
 * and we read its record at the thread's next accept), or for every
 * arrival while other threads wait in the gate (they must be served).
 */
static void
wake_set(struct gated_listener *l, uint32_t vs)
{
	__atomic_store_n(&l->fp->ctl->wake, l->wait_head || !vs ? VSD_WAKE_ALWAYS : vs,
	    __ATOMIC_SEQ_CST);
}

/* The VS a record names, as the drain path would queue it (home if unknown). */
static struct gate_vs *
entry_vs(struct gate *g, const struct fp_entry *e)
{
	struct gate_vs *v = e->vs ? vs_table_find(&g->tab, e->vs) : NULL;

	return v ? v : vs_table_find(&g->tab, g->home);
}

/* The direct waiter took the model's head (it has, or will: it is the only
 * thread in the kernel's accept): re-bind it there, measure what it ran
 * in the VS it was in. */
static void
direct_took_head(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	struct service_thread *th = f->direct;
	struct fp_entry *e = q_at(f, 0);
	struct gate_vs *v;
	uint64_t cpu;

	/* two arrivals too close to tell apart, of different VSs: the thread
	 * may have the other one; serve it as the first, then drop the model */
	int unsure = f->qn > 1 && q_at(f, 1)->vs != e->vs &&
	    (int64_t)(q_at(f, 1)->t - e->t) < (int64_t)FP_CLOSE_NS;

	uint32_t was = th->bound;

	gate_vs_by_id(g, e->vs);	/* a VS created after our table was made */
	gate_vs_active(g, entry_vs(g, e), now);
	if ((v = gate_rebind_vs(g, th, e->vs ? e->vs : g->home)))
		v->served++;
	workers_take(th, e->vs ? e->vs : g->home);	/* a limit set while it waited */
	/* the CPU it ran since it was let through, in the VS it was in: only
	 * an error if that was another VS */
	cpu = charge_thread_cpu(th);
	if (th->bound != was && cpu > f->direct_cpu) {
		uint64_t d = cpu - f->direct_cpu;

		g->fp_direct_moved++;
		g->fp_direct_cpu_ns += d;
		if (d > g->fp_direct_cpu_max)
			g->fp_direct_cpu_max = d;
	}
	g->fp_direct++;
	th->fp_cookie = e->cookie;	/* its accept record tells if it was */
	th->fp_vs = th->bound;
	if (f->expect == 0 || f->expect_vs != e->vs)
		f->expect_vs = f->expect ? 0 : e->vs;
	f->pr[f->expect++] = *e;
	f->expect_t = now;
	q_pop(f);
	direct_end(f);
	if (unsure)
		fp_lose(g, f);
}

static void
q_remove(struct fp_listener *f, unsigned i)
{
	for (; i + 1 < f->qn; i++)
		*q_at(f, i) = *q_at(f, i + 1);
	f->qn--;
}

static int
q_find(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->qn; i++)
		if (q_at(f, i)->cookie == cookie)
			return (int)i;
	return -1;
}

/* cookie was promised: it is no more; 0 if it was not */
static int
pr_take(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->expect; i++)
		if (f->pr[i].cookie == cookie) {
			f->pr[i] = f->pr[--f->expect];
			return 1;
		}
	return 0;
}

/* A connection promised is still queued after all: back to the front. */
static void
pr_unpromise(struct fp_listener *f)
{
	if (f->qn == QCAP) {
		f->lost = 1;
		return;
	}
	f->qh = (f->qh + QCAP - 1) % QCAP;
	f->q[f->qh] = f->pr[--f->expect];
	f->qn++;
}

/*
 * Apply the accept records read (on_record keeps those of threads we let
 * through here): each says which connection a thread took, and of which
 * VS. If that VS is not the one we bound the thread to, its request began
 * in the wrong VS: counted (misordered). The connection should be one we
 * promised, to this thread or to another let through with it (they may
 * dequeue in any order; all theirs are of one VS): it is no longer
 * queued. If it is not, two connections were queued in the other order
 * than their records came (on two CPUs). Of one VS that costs nothing:
 * the one taken leaves the model, one promised goes back to its front.
 * Of two VSs (farther apart than FP_CLOSE_NS, else no thread is let
 * through by their order: a CPU stalled between queueing one and recording
 * it) the model is dropped. Records of promises made before the model was
 * last dropped count only for the VS.
 */
static void
fp_events(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	unsigned i;
	int j;

	for (i = 0; i < f->nev; i++) {
		const struct vsd_arrival *a = &f->ev[i];
		struct service_thread *th = thread_find((pid_t)a->tid);
		uint32_t vs = a->vs_id ? a->vs_id : g->home;

		if (!th || th->fp_id != f->id)
			continue;
		th->fp_id = 0;
		th->fd_seen = f->id;	/* its descriptor was this listener then */
		if (th == f->direct) {	/* before we had read its arrival */
			struct gate_vs *v = vs_table_find(&g->tab, vs);

			direct_end(f);
			g->fp_direct++;
			if (v)
				v->served++;
		}
		if (vs != th->fp_vs)
			g->fp_misordered++;
		if (th->fp_gen != f->gen) {	/* let through before a drop */
			if (f->void_n)
				f->void_n--;
			continue;
		}
		if (pr_take(f, a->cookie)) {
			f->expect_t = now;
			continue;
		}
		if ((j = q_find(f, a->cookie)) >= 0)
			q_remove(f, (unsigned)j);
		else	/* its arrival is yet to be read */
			f->early[f->early_i++ % FP_EARLY] = a->cookie;
		if (!th->fp_cookie)	/* the direct waiter, before its arrival */
			continue;
		if (vs == th->fp_vs && f->expect)
			pr_unpromise(f);
		else {
			fp_lose(g, f);
			if (f->void_n)	/* this one has dequeued */
				f->void_n--;
		}
	}
	f->nev = 0;
	if (f->ev_lost) {	/* more than FP_EVENTS threads in flight */
		f->ev_lost = 0;
		fp_lose(g, f);
	}
}

/* Is tid's process the service's: a descendant of ours? We are the
 * service's subreaper, so none of its processes leaves our tree; a
 * process that got a listener from it (SCM_RIGHTS) is not in it. */
static int
in_service(pid_t tid)
{
	pid_t p = tid, self = getpid();
	int depth;

	for (depth = 0; depth < 64 && p > 1; depth++)
		if ((p = proc_parent(p)) == self)
			return 1;
	return 0;
}

/*
 * Accepts on l the gate did not answer (on_record): the service's own
 * thread took a connection without our CONTINUE (a race, or a way past the
 * filter), or a process outside the service did, on a listener it was
 * given. Count each; move a service thread to the connection's VS, so the
 * rest of its request runs there; log at most every FP_OUTSIDE_LOG_NS.
 */
static void
outside_apply(struct gate *g, struct gated_listener *l, uint64_t now)
{
	static uint64_t logged_at, unlogged;
	struct fp_listener *f = l->fp;
	unsigned i;

	g->outside += f->out_lost;
	unlogged += f->out_lost;
	f->out_lost = 0;
	for (i = 0; i < f->nout; i++) {
		const struct vsd_arrival *a = &f->out[i];
		uint32_t vs = a->vs_id ? a->vs_id : g->home;
		struct service_thread *th = NULL;
		struct gate_vs *v = NULL, *named;
		int is_new, mine = in_service((pid_t)a->tid);

		g->outside++;
		if (mine && (th = thread_get((pid_t)a->tid, &is_new)) && !th->waiter) {
			gate_vs_by_id(g, vs);
			if ((v = gate_rebind_vs(g, th, vs))) {
				v->served++;
				gate_vs_active(g, v, now);
			}
		}
		if (logged_at && now - logged_at < FP_OUTSIDE_LOG_NS) {
			unlogged++;
			continue;
		}
		named = vs_table_find(&g->tab, vs);
		log_warnx("port %u: thread %u %s accepted a connection of VS %s without the "
		    "gate; counted (status \"outside\")%s (%llu more not logged)",
		    f->key.port, a->tid, mine ? "of the service" : "outside the service",
		    named ? named->name : "?",
		    v ? ", re-bound there" : ", not moved", (unsigned long long)unlogged);
		logged_at = now;
		unlogged = 0;
	}
	f->nout = 0;
}

/* Read what the ring has, account for the direct waiter and for the
 * threads let through (their accept records). */
static void
fp_read(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	uint64_t dropped;

	ring_buffer__consume(f->rb);
	g->fp_fd_moved += f->fd_moved;
	f->fd_moved = 0;
	if (f->nout || f->out_lost)
		outside_apply(g, l, now);
	dropped = __atomic_load_n(&f->ctl->dropped, __ATOMIC_SEQ_CST);
	if (dropped != f->dropped) {
		f->dropped = dropped;
		fp_lose(g, f);
	}
	if (f->direct && f->qn > 0)
		direct_took_head(g, l, now);
	fp_events(g, l, now);
}

/*
 * Accepts nobody asked us about (outside the gate) are in the ring only:
 * read it on the tick too, while no thread of the service accepts.
 */
void
fp_tick(struct gate *g, struct gated_listener *l, uint64_t now)
{
	if (l->fp)
		fp_read(g, l, now);
}

/*
 * fp_read, then: the kernel's queue length, or -1 when the model does not
 * match it. A record lags its connection by a softirq's or an accept
 * call's few microseconds on another CPU: a mismatch is read again for up to
 * FP_LAG_NS before we give up (and drain), since a drain fills the gate's
 * own queue, which keeps the fast path off until it has been served.
 */
static int
fp_sync(struct gate *g, struct gated_listener *l, uint64_t now)
{
	struct fp_listener *f = l->fp;
	uint64_t t = now;
	int qlen, d;

	for (;;) {
		fp_read(g, l, t);
		if ((qlen = gate_backlog(l->fd)) < 0 || f->lost)
			return -1;
		if (f->expect && t - f->expect_t > FP_EXPECT_NS) {
			f->expect = 0;	/* a thread let through died before its dequeue */
			fp_lose(g, f);
			return -1;
		}
		/* equal, unless a record lags its connection (either kind: an
		 * arrival or an accept), so that no connection is hidden */
		d = qlen - (int)f->qn;
		if (d == (int)f->expect)
			return qlen;
		if ((t = now_ns()) - now > FP_LAG_NS)
			return -1;
	}
}

/*
 * Is the model's head the connection the gate would serve first? By
 * queue.c's order: the VS's rank, plus GATE_AGE_BP_PER_MS a ms waited.
 */
static int
head_is_pick(struct gate *g, struct fp_listener *f)
{
	struct fp_entry *h = q_at(f, 0);
	struct gate_vs *hv = entry_vs(g, h);
	double hk = hv ? hv->rank_bp : 0;
	unsigned i, n = f->qn;

	if (!h->vs || (h->vs && !vs_table_find(&g->tab, h->vs)))
		return 0;	/* another host's (its mark says), or a VS we do not know yet */
	if (n > FP_SCAN)
		return 0;
	for (i = 1; i < n; i++) {
		struct fp_entry *e = q_at(f, i);
		struct gate_vs *ev;

		if (e->vs == h->vs)
			continue;
		if ((int64_t)(e->t - h->t) < (int64_t)FP_CLOSE_NS)
			return 0;	/* their order in the kernel's queue is not sure */
		ev = entry_vs(g, e);
		if ((ev ? ev->rank_bp : 0) - GATE_AGE_BP_PER_MS * (double)(e->t - h->t) / 1e6 > hk)
			return 0;
	}
	return 1;
}

/*
 * May th wait in the kernel? Only where the next connection is likely to
 * need no move: the latest FP_RUN arrivals were of one VS, and a connection
 * of it would be served where th sits. A connection of another VS then
 * runs in th's VS until we have moved th (the error status reports);
 * afterwards the run starts again, so that costs one request per change of
 * VS after a run, and a listener whose VSs alternate is served exactly.
 */
static int
direct_fits(struct gate *g, struct fp_listener *f, struct service_thread *th)
{
	struct gate_vs *v, *to;

	if (f->run_len < FP_RUN || !f->run_vs || !th->bound ||
	    !(v = vs_table_find(&g->tab, f->run_vs)))
		return 0;
	to = gate_decide(g, th->bound, v);
	return !to || to->id == th->bound;
}

/*
 * New rules (a push from vsd): the direct waiter sits, blocked in the
 * kernel's accept, in the VS the old rules chose for its run's arrivals,
 * and an arrival of that VS does not wake us. So move it now, where the new
 * rules put those arrivals: it cannot run before the move completes, and
 * the next connection of the run is served under the rules in force.
 * Arrivals of other VSs still wake us as before.
 */
void
fp_rules_changed(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f = l->fp;

	if (f && f->direct && !direct_fits(g, f, f->direct))
		gate_rebind_vs(g, f->direct, f->run_vs);
}

/* th was let through for the connection cookie (0: whichever comes) */
static void
promise(struct fp_listener *f, struct service_thread *th, uint64_t cookie)
{
	th->fp_id = f->id;
	th->fp_gen = f->gen;
	th->fp_cookie = cookie;
	th->fp_vs = th->bound;
}

/*
 * Let th's accept (notification id) through, for the model's head or, with
 * nothing queued, as the direct waiter. 1: answered; 0: the caller takes
 * the drain path (or waits).
 */
static int
fp_let_through(struct gate *g, struct gated_listener *l, struct service_thread *th,
    uint64_t id, uint64_t now)
{
	struct fp_listener *f = l->fp;
	struct fp_entry *e;
	struct gate_vs *v;
	int qlen, on = g->fast == GATE_FAST_ON, fl;

	if (!accepts || !f->fed || g->want_attrs || l->queued || l->held || f->direct)
		return 0;
	/* wake us for the next arrival before we look at the queue for the
	 * last time, in case this thread is to wait in the kernel: an
	 * arrival after the look then wakes us */
	if (on)
		wake_set(l, th->bound);
	qlen = fp_sync(g, l, now);
	/* only a blocking call may wait in the kernel (the listener's
	 * O_NONBLOCK, read only when nothing is queued) */
	if (on && qlen == 0 && f->qn == 0 && f->expect == 0 && direct_fits(g, f, th) &&
	    (fl = fcntl(l->fd, F_GETFL)) >= 0 && !(fl & O_NONBLOCK)) {
		f->direct = th;
		th->direct_l = l;
		guard_live(f, 1);
		charge_settle(g, th);
		f->direct_cpu = th->cpu_mark;
		if (gate_continue(g, id) < 0)
			direct_end(f);	/* interrupted meanwhile */
		else
			promise(f, th, 0);
		return 1;
	}
	if (on)
		__atomic_store_n(&f->ctl->wake, VSD_WAKE_NEVER, __ATOMIC_SEQ_CST);
	if (qlen <= 0 || (int)f->expect >= qlen || f->qn == 0)
		return 0;
	e = q_at(f, 0);
	/* threads let through before may dequeue in any order: only if all
	 * of theirs are of this VS */
	if ((f->expect && f->expect_vs != e->vs) || f->expect == FP_PROMISED ||
	    !head_is_pick(g, f))
		return 0;
	gate_vs_active(g, entry_vs(g, e), now);
	v = gate_rebind_vs(g, th, e->vs);
	if (gate_continue(g, id) < 0)
		return 1;	/* interrupted: it took nothing, the model stands */
	promise(f, th, e->cookie);
	if (v)
		v->served++;
	g->fp_continued++;
	f->expect_vs = e->vs;
	f->pr[f->expect++] = *e;
	f->expect_t = now;
	q_pop(f);
	return 1;
}

/*
 * th, let through before, calls accept again: the record of what it took
 * then is in its listener's ring by now (written as that call returned), or
 * it took nothing (interrupted, or a non-blocking call that found the queue
 * empty). Apply it now, so that no later record of th (a hand-over) is
 * taken for it; its promise, if it took nothing, waits for another thread
 * or for FP_EXPECT_NS.
 */
static void
fp_settle(struct gate *g, struct gated_listener *l, struct service_thread *th, uint64_t now)
{
	struct gated_listener *o = l;

	/* Mostly the listener it accepts on again; the id, not a pointer kept
	 * in th, since a listener can go while a thread is let through. */
	if (!o || !o->fp || o->fp->id != th->fp_id)
		for (o = g->listeners; o; o = o->next)
			if (o->fp && o->fp->id == th->fp_id)
				break;
	if (o)
		fp_read(g, o, now);
	/* no record: it took nothing; let through before a drop, it no
	 * longer waits to dequeue */
	if (o && th->fp_id && th->fp_gen != o->fp->gen && o->fp->void_n)
		o->fp->void_n--;
	th->fd_unseen = th->fp_id != 0;	/* fp_events() clears it for a record */
	th->fp_id = 0;
}

/*
 * th calls accept again, on whichever descriptor: it no longer waits in the
 * kernel where it did (with the connection the ring told us of, or without:
 * a signal, or its descriptor names another listener now), and what it took
 * when let through is in that listener's ring by now.
 */
void
fp_thread_settle(struct gate *g, struct service_thread *th)
{
	struct gated_listener *d = th->direct_l;
	uint64_t now = now_ns();

	if (d && d->fp && d->fp->direct == th) {
		fp_sync(g, d, now);
		if (d->fp->direct == th)
			direct_end(d->fp);
	}
	if (th->fp_id)
		fp_settle(g, th->last_l, th, now);
}

int
fp_accept(struct gate *g, struct gated_listener *l, struct service_thread *th, uint64_t id)
{
	return !l->wait_head && fp_let_through(g, l, th, id, now_ns());
}

int
fp_ready(struct gate *g, struct gated_listener *l, int serve)
{
	struct fp_listener *f = l->fp;
	uint64_t now = now_ns();

	/* the ring woke us for a thread waiting in the kernel, or the
	 * listener is readable with nobody to serve: bring the model up */
	if (f->direct || !l->wait_head)
		fp_sync(g, l, now);
	while (serve && l->wait_head && fp_let_through(g, l, l->wait_head->th, l->wait_head->id, now))
		gate_waiter_done(g, l->wait_head);
	if (!l->wait_head)
		return 1;
	if (f->direct)
		wake_set(l, 0);	/* threads wait in the gate now */
	/* threads wait; the drain may run only if nobody else can dequeue */
	return f->expect || f->direct || voided(f);
}

int
fp_drained(struct gated_listener *l, int fd, uint32_t *vs, uint64_t *cookie_out)
{
	struct fp_listener *f = l->fp;
	uint64_t cookie = 0;
	socklen_t sl = sizeof(cookie);
	unsigned i;

	if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &sl) < 0)
		return 0;
	*cookie_out = cookie;
	ring_buffer__consume(f->rb);
	for (i = 0; i < f->qn; i++) {
		struct fp_entry *e = q_at(f, i);

		if (e->cookie != cookie)
			continue;
		*vs = e->vs;
		/* the ones before it are not in the kernel's queue (stale) */
		while (i-- > 0)
			q_pop(f);
		q_pop(f);
		f->fed = 1;
		return *vs != 0;
	}
	f->early[f->early_i++ % FP_EARLY] = cookie;
	return 0;
}

#define HCAP	ARRAY_SIZE(((struct fp_listener *)0)->handed)

void
fp_handed(struct gated_listener *l, struct queued_conn *c)
{
	struct fp_listener *f = l->fp;
	socklen_t sl = sizeof(c->cookie);

	/* a held connection (hold.c) was drained without fp_drained() */
	if (!c->cookie && getsockopt(c->fd, SOL_SOCKET, SO_COOKIE, &c->cookie, &sl) < 0)
		return;
	if (f->hn == HCAP) {	/* the oldest: its record was read, or lost */
		f->hh = (f->hh + 1) % HCAP;
		f->hn--;
	}
	f->handed[(f->hh + f->hn++) % HCAP] = c->cookie;
}

/* Was cookie handed over? (once) Records come mostly in hand-over order. */
static int
handed_take(struct fp_listener *f, uint64_t cookie)
{
	unsigned i;

	for (i = 0; i < f->hn; i++)
		if (f->handed[(f->hh + i) % HCAP] == cookie)
			break;
	if (i == f->hn)
		return 0;
	f->handed[(f->hh + i) % HCAP] = 0;
	while (f->hn && !f->handed[f->hh]) {	/* taken ones at the front */
		f->hh = (f->hh + 1) % HCAP;
		f->hn--;
	}
	return 1;
}

void
fp_drain_done(struct gate *g, struct gated_listener *l)
{
	struct fp_listener *f = l->fp;
	int qlen = gate_backlog(l->fd);

	if (qlen == 0 && f->expect == 0 && !f->direct && !voided(f)) {
		if (f->qn)	/* records of connections no longer queued */
			g->fp_stale += f->qn;
		f->qn = 0;
		f->lost = 0;
	}
}

int
fp_pollfd(const struct gated_listener *l)
{
	return l->fp && l->fp->direct ? l->fp->rb_fd : -1;
}

int
fp_busy(const struct gated_listener *l)
{
	return l->fp && (l->fp->expect > 0 || voided(l->fp));
}

uint32_t
fp_listener_id(const struct gated_listener *l)
{
	return l->fp ? l->fp->id : 0;
}
