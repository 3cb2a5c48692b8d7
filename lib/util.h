/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsing and validation shared by vsd, vsctl and the rules library. */
#ifndef VSD_UTIL_H
#define VSD_UTIL_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#define VS_NAME_MAX	31	/* [a-z][a-z0-9_-]{0,30}, not a cgroup file's name */
#define BP_PER_PCT	100	/* shares are kept in basis points: 1% = 100 */
#define BP_MAX		10000	/* 100% */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * 1 if name is a valid VS name, 0 if not: [a-z][a-z0-9_-]{0,30} and not
 * tasks, notify_on_release or release_agent (cgroup v1 control files). The
 * one rule for VS, service, plan, group and cgroup-root names, in vsctl, the
 * rules checker and vsd alike.
 */
int vs_name_valid(const char *name);
/* A short reason why name is not valid, for error messages. */
const char *vs_name_why(const char *name);

/*
 * "50", "50%", "12.5%", "0.01%" -> basis points (50% = 5000).
 * Returns 0, or -EINVAL (not a percentage) / -ERANGE (over 100% or below
 * 0.01%); *why then says why in a few words.
 */
int parse_percent(const char *s, unsigned *bp, const char **why);
/* basis points -> "50%", "12.5%", "0.01%" */
char *fmt_percent(unsigned bp, char *buf, size_t len);

/*
 * "512", "64K", "256M", "1.5G", "512.5M", "1T" (binary units; a trailing B
 * or iB is fine), rounded down to a whole byte; the one size parser of
 * vsctl, vsd and rule files. -EINVAL or -ERANGE with *why.
 */
int parse_size(const char *s, uint64_t *bytes, const char **why);
/* bytes -> "1536M", "4096", in the largest binary unit that divides them */
char *fmt_size(uint64_t bytes, char *buf, size_t len);
/* A whole decimal number in [min, max]. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why);

/*
 * Socket gate settings, as vsctl and rule files write them.
 * tos: the full TOS byte, 0-255 decimal or 0x00-0xff.
 * dscp: CS0-CS7, AF11-AF43, EF (any case) or 0-63; *tos gets dscp << 2.
 * mark: SO_MARK, a 32-bit number, decimal or 0x hex.
 */
int parse_tos(const char *s, uint8_t *tos, const char **why);
int parse_dscp(const char *s, uint8_t *tos, const char **why);
int parse_mark(const char *s, uint32_t *mark, const char **why);

/* File helpers; each returns 0 or -errno. */
int read_file(const char *path, char *buf, size_t len);	/* NUL-terminates, strips trailing \n */
int write_file(const char *path, const char *s);
/* The same, for name relative to the directory dfd (openat: no walk of a
 * long path for each file of a directory). */
int read_file_at(int dfd, const char *name, char *buf, size_t len);
int write_file_at(int dfd, const char *name, const char *s);
int write_file_atomic(const char *dir, const char *name, const char *data, size_t len);
/*
 * The same with the file's mode (umask aside) and, if sync, the fsyncs of
 * the file and its directory (a file rewritten every few seconds, whose
 * loss in a crash costs nothing, goes without). Readers see the old file
 * or the new one, never a part. No link is followed and no name the
 * directory's owner could plant is used (lib/file-replace.c): the file is
 * written unnamed (O_TMPFILE) or under a random name, then renamed.
 * -ELOOP if dir is a symbolic link; -EPERM if anyone may write it and it
 * has no sticky bit (DIR_UNSAFE_WHY says so).
 */
int write_file_replace(const char *dir, const char *name, const char *data, size_t len,
		       unsigned mode, int sync);
/* The same in the directory dfd, from dir_open_nofollow(). */
int write_file_replace_at(int dfd, const char *name, const char *data, size_t len,
			  unsigned mode, int sync);
/* dir opened (O_DIRECTORY | O_NOFOLLOW) and checked by dir_writers_ok(); the fd or -errno. */
int dir_open_nofollow(const char *dir);
/* 0, or -EPERM if anyone may write the directory dfd and it has no sticky bit. */
int dir_writers_ok(int dfd);
#define DIR_UNSAFE_WHY	"is world-writable without the sticky bit: anyone could replace the file"
/* What a directory's error r from the above means, to follow its name in a
 * message: " is world-writable ...", " is a symbolic link: ...", or ": "
 * and strerror(-r). */
const char *dir_why(int r);
/* In a line of "key=value" words: the value of key into out (truncated to
 * len); 0, or -ENOENT. */
int kv_get(const char *line, const char *key, char *out, size_t len);
/* The number after "KEY:" at the start of a line of a /proc-style file; -ENODATA if absent. */
int read_field_long(const char *path, const char *key, long *v);
/* The parent of pid, from /proc/PID/stat; 0 if it is gone. */
pid_t proc_parent(pid_t pid);
/* Its parent and its flags (PF_*: PF_KTHREAD is 0x00200000); -ESRCH if gone. */
int proc_stat(pid_t pid, pid_t *ppid, unsigned *flags);
/* Its real, effective, saved and filesystem user IDs; -ESRCH if gone. */
int proc_uids(pid_t pid, uid_t uids[4]);
/*
 * Remove a stale Unix socket file, and nothing else: 0 if path is gone (or
 * was never there), -ENOTSOCK if something else is there (a regular file, a
 * directory, a symbolic link), which stays; or -errno.
 */
int unlink_socket(const char *path);
/* mkdir -p: path and every missing parent, with mode; existing ones are fine. */
int mkdir_p(const char *path, unsigned mode);
/*
 * path made absolute against the working directory, symbolic links left in
 * (malloc'd; NULL with errno set): whoever reads the file checks each link
 * on the way (rules/open.c), which realpath() would have resolved unseen.
 */
char *path_absolute(const char *path);

/*
 * vsd-gate's path: $VSD_GATE if set; next to a binary run from the build
 * tree (vsd/vsd, vsctl/vsctl), the build tree's gates/accept/vsd-gate;
 * else LIBEXECDIR/vsd-gate, where it is installed.
 */
void gate_exe_path(char *buf, size_t len);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);

/* qsort() comparator for doubles, ascending (the benchmarks' medians). */
int cmp_double(const void *a, const void *b);

/* Formatted path into buf; -ENAMETOOLONG if it does not fit. */
int path_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline void freep(void *p) { extern void free(void *); free(*(void **)p); }
#define cleanup_free __attribute__((cleanup(freep)))

#endif
