/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A VS's cgroups as the accept gate uses them: one handle per VS, made from
 * the directories vsd's VS table names ("key=dir", lib/cgroup.h's
 * cg_kind_key), with the layout (pure v2, hybrid, legacy v1) decided here
 * and nowhere in the gate. Everything on the per-accept path (a move, a
 * usage read) is one pwrite or pread through a descriptor the handle keeps
 * open (lib/cgroup-fast.c): no path walk after the first use.
 *
 * A handle that is all zeroes is valid and empty (no directory, nothing
 * open), so a struct that embeds one needs no initialiser of its own.
 */
#ifndef VSD_CGROUP_HANDLE_H
#define VSD_CGROUP_HANDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

struct cg_handle {
	/* per hierarchy (enum cg_kind): the VS's directory, NULL where the
	 * VS has none; the file moves are written to and the usage file,
	 * both -1 until first used (set when dir is) */
	char	*dir[CG_KIND_MAX];
	int	 wfd[CG_KIND_MAX];
	int	 rfd[CG_KIND_MAX];
	uint64_t cg2_id;	/* cgh_cg2_id()'s cache: 0 unread, UINT64_MAX none */
};

/* Take one "key=/dir" token of a VS table line: 1 if taken, 0 if it is not
 * one of ours (an unknown key: a newer vsd), -ENOMEM. */
int cgh_add(struct cg_handle *h, const char *tok);
/* 1 if a and b name the same directories. */
int cgh_same(const struct cg_handle *a, const struct cg_handle *b);
/* to (the same directories as from) takes from's open descriptors. */
void cgh_take(struct cg_handle *to, struct cg_handle *from);
/* Close what is open and free the directories; h is empty again. */
void cgh_close(struct cg_handle *h);

/*
 * The per-accept move: thread tid of process tgid into the VS in the
 * hierarchies the scheduler and the CPU accounting use. On a hybrid or v1
 * host that moves the one thread (v1 "tasks"; cgroup2 stays, see
 * cgh_move_cgroup2()); on pure cgroup v2, where one process's threads
 * cannot sit in different domain cgroups, it moves the whole process, its
 * cgroup2 membership included. Returns CGH_THREAD or CGH_PROCESS (what
 * moved), -ENOENT/-ENODEV if the VS is gone, -ESRCH if the thread exited,
 * another -errno if the kernel refused.
 */
enum { CGH_THREAD = 0, CGH_PROCESS = 1 };
int cgh_move(struct cg_handle *h, pid_t tid, pid_t tgid);
/* 1 if cgh_move() takes the whole process on this host (pure cgroup v2):
 * threads of one process then sit in different VSs only in a threaded
 * subtree (cg_threaded_* below). */
int cgh_moves_process(void);
/* 1 if the cgroup2 membership, which decides whose sockets the process
 * creates (the socket gate's BPF sees it), does not follow cgh_move(): a
 * hybrid host where the VS has a cgroup2 directory. */
int cgh_cgroup2_apart(const struct cg_handle *h);
/* Move process tgid into the VS's cgroup2 directory (when apart: the lazy
 * move; otherwise cgh_move() did it and this is 0). 0 or -errno. */
int cgh_move_cgroup2(struct cg_handle *h, pid_t tgid);
/* Move process pid into every hierarchy of the VS (a service starting at
 * home; a path walk, off the hot path). On failure *failed is the
 * directory refused. 0 or -errno. */
int cgh_join(const struct cg_handle *h, pid_t pid, const char **failed);
/* The VS's CPU usage in ns, through a descriptor kept open (closed on an
 * error, to be opened afresh next time). */
int cgh_usage(struct cg_handle *h, uint64_t *ns);
/* The file through which a process of the VS moves itself (a no-op move
 * into where it is): per thread where the layout allows. 0 or -errno. */
int cgh_warm_file(const struct cg_handle *h, char *buf, size_t len);
/* The id of the VS's cgroup2 directory, as BPF sees it (its inode number,
 * Linux 5.5+); UINT64_MAX if it has none. */
uint64_t cgh_cg2_id(struct cg_handle *h);
/* The unit tests: behave as on layout l, not on the host's (both layouts on
 * one host, test-cgroup-handle.c). */
void cgh_assume_layout(enum cg_layout l);

/* CFS bandwidth, in µs: quota 0 is no cap. */
struct cg_bw {
	uint64_t quota, period, burst;
};
/* The VS's own CPU cap (its v1 cpu cgroup's quota and period where it has
 * one, else its cgroup2 cpu.max): quota 0 if none, period 0 if unread. */
void cgh_cpu_cap(const struct cg_handle *h, uint64_t *quota, uint64_t *period);

/*
 * lib/cgroup-threaded.c: threads of one process in different VSs where a
 * move takes the whole process (cgh_moves_process()): the cgroup the
 * process runs in becomes a threaded subtree's root, and each VS gets a
 * threaded child of it, where the cpu controller works. Descriptors are
 * the caller's; each call is 0 (or a descriptor) or -errno.
 */
/* The cgroup2 directory process tgid sits in, opened. */
int cg_threaded_root(pid_t tgid);
/* A threaded child name of the root, made if missing, opened. */
int cg_threaded_child(int rootfd, const char *name);
/* Let the children have the cpu controller (on), or no more (off). */
int cg_threaded_cpu(int rootfd, int on);
/* The whole process tgid into child dfd. */
int cg_threaded_join(int dfd, pid_t tgid);
/* One thread into child dfd. */
int cg_threaded_move(int dfd, pid_t tid);
/* The thread ids in child dfd, as text (one a line). */
int cg_threaded_tids(int dfd, char *buf, size_t len);
/* Child dfd gets the CPU weight of VS v's own cgroup, and its cap: cap
 * where given (with its burst), else v's own. */
void cg_threaded_copy_cpu(int dfd, const struct cg_handle *v, const struct cg_bw *cap);

/*
 * lib/cgroup-capped.c: a capped child for one VS's share of a process's
 * threads where a move takes one thread (hybrid and v1 hosts): a child of
 * another VS's v1 cpu cgroup (the database mode: the service's home VS),
 * so the children together never get more than that cgroup, with the
 * VS's weight and a cap of its own. CPU usage still goes to the VS's own
 * cgroup where cpuacct is a hierarchy apart. Descriptors are the
 * caller's; each call is 0 (or a descriptor) or -errno.
 */
/* Child name of home's v1 cpu cgroup, made if missing, opened; *parentfd
 * is home's cgroup, opened too. */
int cg_capped_root(const struct cg_handle *home, const char *name, int *parentfd);
/* A child name of a root (cg_capped_root()), made if missing, opened. */
int cg_capped_child(int rootfd, const char *name);
/* Child dfd gets v's weight and bandwidth bw, lowered to the rate of the
 * cgroup parentfd (the kernel refuses a child's quota above it). */
void cg_capped_limits(int dfd, int parentfd, const struct cg_handle *v, const struct cg_bw *bw);
/* Thread tid into child dfd (and into v's own cpuacct cgroup). */
int cg_capped_move(int dfd, const struct cg_handle *v, pid_t tid);
/* The thread ids in child dfd, as text (one a line). */
int cg_capped_tids(int dfd, char *buf, size_t len);

#endif
