// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The accept gate's cgroup handle (lib/cgroup-handle.c) on a directory tree
 * whose interface files are plain files, as on a hybrid host and as on a
 * pure-v2 one (cgh_assume_layout): which file each call writes or reads,
 * what a move says it took, the descriptors it keeps, and the threaded
 * children of lib/cgroup-threaded.c, the capped children of
 * lib/cgroup-capped.c and a VS's own cap (cgh_cpu_cap). What the kernel does with the writes
 * is the integration tests' (gate-fast, gate-races, gate-mariadb, ...).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgh-peek.h"
#include "lib/cgroup-handle.h"
#include "tap.h"

static char top[] = "/tmp/vsd-test-cgh-XXXXXX";

static const char *
at(const char *rel)
{
	static char bufs[4][512];
	static int i;
	char *b = bufs[i++ % 4];

	snprintf(b, sizeof(bufs[0]), "%s/%s", top, rel);
	return b;
}

/* An interface file, empty (or holding s). */
static void
put(const char *rel, const char *s)
{
	FILE *f = fopen(at(rel), "w");

	if (f) {
		fputs(s, f);
		fclose(f);
	}
}

static const char *
got(const char *rel)
{
	static char buf[256];
	FILE *f = fopen(at(rel), "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static void
mkdirs(void)
{
	static const char *const d[] = { "cpu", "cpu/www1", "cpuacct", "cpuacct/www1", "memory",
		"memory/www1", "u", "u/www1", "u/www2", "u/svc", "u/svc/home", "cpu/home",
		"cpu/home/db.svc", "cpu/home/db.svc/www1" };
	static const char *const f[] = { "cpu/www1/tasks", "cpu/www1/cgroup.procs",
		"cpuacct/www1/tasks", "cpuacct/www1/cgroup.procs", "memory/www1/tasks",
		"memory/www1/cgroup.procs", "u/www1/cgroup.procs", "u/www2/cgroup.procs",
		"u/svc/cgroup.subtree_control", "u/svc/home/cgroup.type",
		"u/svc/home/cgroup.threads", "u/svc/home/cgroup.procs",
		"u/svc/home/cpu.weight", "u/svc/home/cpu.max", "u/svc/home/cpu.max.burst",
		"cpu/home/db.svc/www1/tasks", "cpu/home/db.svc/www1/cpu.shares",
		"cpu/home/db.svc/www1/cpu.cfs_quota_us", "cpu/home/db.svc/www1/cpu.cfs_period_us",
		"cpu/home/db.svc/www1/cpu.cfs_burst_us" };
	size_t i;

	for (i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		mkdir(at(d[i]), 0755);
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		put(f[i], "");
	put("cpuacct/www1/cpuacct.usage", "5000\n");
	put("u/www1/cpu.stat", "usage_usec 7\nuser_usec 5\nsystem_usec 2\n");
	put("u/www1/cpu.weight", "250\n");
	put("u/www1/cpu.max", "30000 100000\n");
	put("cpu/www1/cpu.shares", "512\n");
	put("cpu/www1/cpu.cfs_quota_us", "-1\n");
	put("cpu/www1/cpu.cfs_period_us", "100000\n");
	put("cpu/home/cpu.cfs_quota_us", "50000\n");
	put("cpu/home/cpu.cfs_period_us", "100000\n");
}

/* A handle of www1's table line: "cpu=DIR cpuacct=DIR ..." under top. */
static void
handle(struct cg_handle *h, const char *keys)
{
	char tok[600], *s = strdup(keys), *k, *save = NULL;

	memset(h, 0, sizeof(*h));
	for (k = strtok_r(s, " ", &save); k; k = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(k, '=');

		*eq = '\0';
		snprintf(tok, sizeof(tok), "%s=%s/%s", k, top, eq + 1);
		cgh_add(h, tok);
	}
	free(s);
}

static void
test_parse(void)
{
	struct cg_handle h = { 0 }, z;
	int fd0;

	ok(cgh_add(&h, "cpu=/c/www1") == 1 && cgh_add(&h, "unified=/u/www1") == 1,
	   "a known key with an absolute directory is taken");
	ok(cgh_add(&h, "newkey=/x") == 0 && cgh_add(&h, "cpu=relative") == 0 &&
	   cgh_add(&h, "cpu") == 0 && cgh_add(&h, "cpux=/c") == 0,
	   "an unknown key, a relative directory, no '=', a longer key: not ours");
	is_str(cgh_dir(&h, "cpu"), "/c/www1", "the cpu directory");
	ok(cgh_add(&h, "cpu=/c2/www1") == 1, "a key named twice");
	is_str(cgh_dir(&h, "cpu"), "/c2/www1", "the last one holds");
	ok(cgh_dir(&h, "memory") == NULL && cgh_dir(&h, "nokey") == NULL,
	   "no directory for a hierarchy not named, nor for an unknown key");
	ok(cgh_nfds(&h) == 0, "nothing is opened while parsing");
	cgh_close(&h);
	ok(cgh_dir(&h, "cpu") == NULL && cgh_dir(&h, "unified") == NULL, "closed: empty again");

	/* a zeroed handle holds no descriptor, whatever its zero fields say */
	if (fcntl(0, F_GETFD) < 0)
		fd0 = open("/dev/null", O_RDONLY);
	else
		fd0 = 0;
	memset(&z, 0, sizeof(z));
	cgh_close(&z);
	ok(fd0 == 0 && fcntl(0, F_GETFD) >= 0, "closing a zeroed handle leaves descriptor 0 alone");
}

static void
test_hybrid(void)
{
	struct cg_handle h, same, other, co, nocpu;
	struct stat st;
	char buf[600];
	uint64_t ns = 0;
	const char *failed = NULL;
	int wfd;

	cgh_assume_layout(CG_HYBRID);
	handle(&h, "cpu=cpu/www1 cpuacct=cpuacct/www1 memory=memory/www1 unified=u/www1");
	ok(!cgh_moves_process(), "hybrid: a move takes one thread");
	ok(cgh_cgroup2_apart(&h), "hybrid: cgroup2 does not follow it");
	ok(cgh_move(&h, 123, 100) == CGH_THREAD, "the move says it took the thread");
	is_str(got("cpu/www1/tasks"), "123", "the thread id in cpu's tasks");
	is_str(got("cpuacct/www1/tasks"), "123", "and in cpuacct's");
	ok(!*got("u/www1/cgroup.procs") && !*got("memory/www1/tasks") &&
	   !*got("memory/www1/cgroup.procs"), "cgroup2 and memory stay as they were");
	ok(cgh_nfds(&h) == 2, "two descriptors kept for the next move");
	wfd = h.wfd[CG_KIND_CPU];
	put("cpu/www1/tasks", "");
	ok(cgh_move(&h, 124, 100) == CGH_THREAD && h.wfd[CG_KIND_CPU] == wfd &&
	   strcmp(got("cpu/www1/tasks"), "124") == 0, "the next move writes through the same one");
	ok(cgh_move_cgroup2(&h, 100) == 0, "the lazy cgroup2 move");
	is_str(got("u/www1/cgroup.procs"), "100", "moves the process (its id) in cgroup2");
	ok(cgh_usage(&h, &ns) == 0 && ns == 5000, "usage from cpuacct.usage (%llu ns)",
	   (unsigned long long)ns);
	put("cpuacct/www1/cpuacct.usage", "7000\n");
	ok(cgh_usage(&h, &ns) == 0 && ns == 7000 && cgh_nfds(&h) == 4,
	   "read again through the descriptor kept (%llu ns)", (unsigned long long)ns);
	ok(cgh_warm_file(&h, buf, sizeof(buf)) == 0 && strcmp(buf, at("cpu/www1/tasks")) == 0,
	   "the warm helper writes cpu's tasks (%s)", buf);
	ok(stat(at("u/www1"), &st) == 0 && cgh_cg2_id(&h) == (uint64_t)st.st_ino,
	   "the cgroup2 id is its directory's inode");

	handle(&same, "cpu=cpu/www1 cpuacct=cpuacct/www1 memory=memory/www1 unified=u/www1");
	handle(&other, "cpu=cpu/www1 cpuacct=cpuacct/www1 unified=u/www1");
	ok(cgh_same(&h, &same) && !cgh_same(&h, &other), "same directories, or not");
	cgh_take(&same, &h);
	ok(cgh_nfds(&same) == 4 && cgh_nfds(&h) == 0, "the descriptors go to the new handle");
	cgh_close(&h);
	cgh_close(&same);
	cgh_close(&other);
	ok(fcntl(wfd, F_GETFD) < 0, "closing the handle closes them");

	handle(&co, "cpu=cpu/www1 cpuacct=cpu/www1 unified=u/www1");
	put("cpu/www1/tasks", "");
	put("cpu/www1/cpuacct.usage", "9000\n");
	ok(cgh_move(&co, 125, 100) == CGH_THREAD && cgh_nfds(&co) == 1 &&
	   strcmp(got("cpu/www1/tasks"), "125") == 0, "cpu and cpuacct co-mounted: one write");
	ok(cgh_usage(&co, &ns) == 0 && ns == 9000,
	   "and usage from cpuacct.usage in the shared directory (%llu ns)", (unsigned long long)ns);
	cgh_close(&co);
	handle(&co, "cpu=cpu/www1 unified=u/www1");
	ok(cgh_usage(&co, &ns) == 0 && ns == 7000,
	   "no cpuacct directory: usage from cgroup2's cpu.stat (%llu ns)", (unsigned long long)ns);
	cgh_close(&co);

	handle(&nocpu, "unified=u/www2");
	ok(cgh_move(&nocpu, 123, 100) == -ENOENT, "no cpu directory: -ENOENT, nothing moves");
	ok(!*got("u/www2/cgroup.procs"), "not even in cgroup2");
	ok(cgh_warm_file(&nocpu, buf, sizeof(buf)) == 0 &&
	   strcmp(buf, at("u/www2/cgroup.procs")) == 0, "the warm helper falls back to cgroup2");
	cgh_close(&nocpu);

	handle(&other, "cpu=cpu/www1 memory=memory/www1 unified=u/gone");
	ok(cgh_join(&other, 42, &failed) == -ENOENT && failed && strcmp(failed, at("u/gone")) == 0,
	   "joining a VS whose directory is gone says which (%s)", failed ? failed : "-");
	is_str(got("cpu/www1/cgroup.procs"), "42", "join writes the process in cpu");
	is_str(got("memory/www1/cgroup.procs"), "42", "and in memory");
	ok(cgh_move_cgroup2(&other, 100) == -ENOENT && cgh_cg2_id(&other) == UINT64_MAX,
	   "a cgroup2 directory that is gone: no move, no id");
	cgh_close(&other);
}

static void
test_unified(void)
{
	struct cg_handle h, gone;
	char buf[600];
	uint64_t ns = 0;

	cgh_assume_layout(CG_UNIFIED);
	handle(&h, "unified=u/www1");
	ok(cgh_moves_process(), "pure v2: a move takes the whole process");
	ok(!cgh_cgroup2_apart(&h), "pure v2: cgroup2 follows the move");
	put("u/www1/cgroup.procs", "");
	ok(cgh_move(&h, 123, 100) == CGH_PROCESS, "the move says it took the process");
	is_str(got("u/www1/cgroup.procs"), "100", "the process id in cgroup.procs");
	put("u/www1/cgroup.procs", "");
	ok(cgh_move_cgroup2(&h, 100) == 0 && !*got("u/www1/cgroup.procs"),
	   "the lazy cgroup2 move has nothing to do");
	ok(cgh_usage(&h, &ns) == 0 && ns == 7000, "usage from cpu.stat's usage_usec (%llu ns)",
	   (unsigned long long)ns);
	ok(cgh_warm_file(&h, buf, sizeof(buf)) == 0 &&
	   strcmp(buf, at("u/www1/cgroup.procs")) == 0, "the warm helper writes cgroup.procs");
	cgh_close(&h);

	handle(&gone, "unified=u/gone");
	ok(cgh_move(&gone, 123, 100) == -ENOENT, "a VS whose directory is gone: -ENOENT");
	ok(cgh_usage(&gone, &ns) == -ENOENT && cgh_nfds(&gone) == 0, "its usage: -ENOENT");
	cgh_close(&gone);
}

static void
test_threaded(void)
{
	struct cg_handle v;
	char buf[64];
	int root = open(at("u/svc"), O_RDONLY | O_DIRECTORY), c;

	handle(&v, "unified=u/www1");
	c = cg_threaded_child(root, "home");
	ok(c >= 0, "a threaded child (an existing directory is adopted)");
	is_str(got("u/svc/home/cgroup.type"), "threaded", "its type is threaded");
	ok(cg_threaded_cpu(root, 1) == 0, "cpu for the children");
	is_str(got("u/svc/cgroup.subtree_control"), "+cpu", "in the root's subtree_control");
	ok(cg_threaded_join(c, 100) == 0, "the process joins the child");
	is_str(got("u/svc/home/cgroup.procs"), "100", "through its cgroup.procs");
	ok(cg_threaded_move(c, 123) == 0, "one thread moves into the child");
	is_str(got("u/svc/home/cgroup.threads"), "123", "through its cgroup.threads");
	ok(cg_threaded_tids(c, buf, sizeof(buf)) >= 0 && strcmp(buf, "123") == 0,
	   "its threads read back");
	cg_threaded_copy_cpu(c, &v, NULL);
	is_str(got("u/svc/home/cpu.weight"), "250", "the child gets the VS's cpu.weight");
	is_str(got("u/svc/home/cpu.max"), "30000 100000", "and its cpu.max");
	cg_threaded_copy_cpu(c, &v, &(struct cg_bw){ 200000, 1000000, 150000 });
	ok(strcmp(got("u/svc/home/cpu.max"), "200000 1000000") == 0 &&
	   strcmp(got("u/svc/home/cpu.max.burst"), "150000") == 0,
	   "a cap given replaces the VS's: cpu.max and cpu.max.burst");
	cg_threaded_copy_cpu(c, &v, &(struct cg_bw){ 0, 100000, 0 });
	ok(strcmp(got("u/svc/home/cpu.max"), "max 100000") == 0 &&
	   strcmp(got("u/svc/home/cpu.max.burst"), "0") == 0,
	   "a cap of no quota writes max, and the burst back to 0");
	ok(cg_threaded_cpu(root, 0) == 0 && strcmp(got("u/svc/cgroup.subtree_control"), "-cpu") == 0,
	   "cpu taken back from the children");
	ok(cg_threaded_child(root, "nofiles") == -ENOENT,
	   "a directory where the kernel made no cgroup files is refused");
	close(c);
	close(root);
	cgh_close(&v);
}

static void
test_cap(void)
{
	struct cg_handle v, u;
	uint64_t q = 1, p = 1;

	handle(&v, "cpu=cpu/www1");
	cgh_cpu_cap(&v, &q, &p);
	ok(q == 0 && p == 100000, "v1: no quota (-1) reads as no cap, with its period");
	put("cpu/www1/cpu.cfs_quota_us", "30000\n");
	cgh_cpu_cap(&v, &q, &p);
	ok(q == 30000 && p == 100000, "v1: a quota reads as the cap");
	put("cpu/www1/cpu.cfs_quota_us", "-1\n");
	handle(&u, "unified=u/www1");
	cgh_cpu_cap(&u, &q, &p);
	ok(q == 30000 && p == 100000, "v2: cpu.max QUOTA PERIOD");
	put("u/www2/cpu.max", "max 100000\n");
	cgh_close(&u);
	handle(&u, "unified=u/www2");
	cgh_cpu_cap(&u, &q, &p);
	ok(q == 0 && p == 100000, "v2: cpu.max max PERIOD is no cap");
	cgh_close(&u);
	cgh_close(&v);
}

static void
test_capped(void)
{
	struct cg_handle v, home, none;
	char buf[64];
	int root, parent = 0, c;

	handle(&v, "cpu=cpu/www1 cpuacct=cpuacct/www1");
	handle(&home, "cpu=cpu/home");
	handle(&none, "unified=u/www1");
	ok(cg_capped_root(&none, "db.svc", &parent) == -ENOENT && parent == -1,
	   "no v1 cpu cgroup in the home VS: no root");
	root = cg_capped_root(&home, "db.svc", &parent);
	ok(root >= 0 && parent >= 0, "the root under the home VS's cpu cgroup, and its parent");
	c = cg_capped_child(root, "www1");
	ok(c >= 0, "a capped child (an existing directory is adopted)");
	cg_capped_limits(c, parent, &v, &(struct cg_bw){ 200000, 1000000, 100000 });
	is_str(got("cpu/home/db.svc/www1/cpu.shares"), "512", "the child gets the VS's cpu.shares");
	ok(strcmp(got("cpu/home/db.svc/www1/cpu.cfs_period_us"), "1000000") == 0 &&
	   strcmp(got("cpu/home/db.svc/www1/cpu.cfs_quota_us"), "200000") == 0 &&
	   strcmp(got("cpu/home/db.svc/www1/cpu.cfs_burst_us"), "100000") == 0,
	   "and the bandwidth given: period, quota, burst");
	cg_capped_limits(c, parent, &v, &(struct cg_bw){ 800000, 1000000, 800000 });
	ok(strcmp(got("cpu/home/db.svc/www1/cpu.cfs_quota_us"), "500000") == 0 &&
	   strcmp(got("cpu/home/db.svc/www1/cpu.cfs_burst_us"), "500000") == 0,
	   "a quota over the parent's rate (0.5 CPU) is lowered to it, and its burst with it");
	cg_capped_limits(c, parent, &v, &(struct cg_bw){ 0, 100000, 0 });
	ok(strcmp(got("cpu/home/db.svc/www1/cpu.cfs_quota_us"), "-1") == 0 &&
	   strcmp(got("cpu/home/db.svc/www1/cpu.cfs_period_us"), "100000") == 0,
	   "no quota: the child's quota is -1");
	ok(cg_capped_move(c, &v, 321) == 0, "a thread moves into the child");
	ok(strcmp(got("cpu/home/db.svc/www1/tasks"), "321") == 0 &&
	   strcmp(got("cpuacct/www1/tasks"), "321") == 0,
	   "through its tasks, and into the VS's own cpuacct cgroup");
	ok(cg_capped_tids(c, buf, sizeof(buf)) >= 0 && strcmp(buf, "321") == 0,
	   "its threads read back");
	close(c);
	close(root);
	close(parent);
	cgh_close(&none);
	cgh_close(&home);
	cgh_close(&v);
}

int
main(void)
{
	char cmd[600];

	if (!mkdtemp(top)) {
		printf("1..0 # SKIP no temporary directory\n");
		return 77;
	}
	mkdirs();
	test_parse();
	test_hybrid();
	test_unified();
	test_threaded();
	test_cap();
	test_capped();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", top);
	return tap_done();
}
