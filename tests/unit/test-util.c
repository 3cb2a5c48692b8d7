// SPDX-License-Identifier: GPL-2.0-or-later
/* Name validation and option parsing: what vsctl and the rules accept; the
 * file writer root uses in directories others own. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "lib/util.h"

static void
names(void)
{
	static const char *good[] = { "a", "www1", "shop_2", "a-b", "abcdefghijklmnopqrstuvwxyz01234",
				      "task", "tasks2", "notify_on_release_x" };
	static const char *bad[] = { "", "1www", "Www", "-a", "_a", "a.b", "a/b", "..", ".daemon",
				     "a b", "abcdefghijklmnopqrstuvwxyz012345", "www\n", "\xc3\xa9t\xc3\xa9",
				     "tasks", "notify_on_release", "release_agent", "cgroup.procs",
				     "cpu.shares" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		ok(vs_name_valid(good[i]), "name '%s' is valid", good[i]);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		ok(!vs_name_valid(bad[i]) && vs_name_why(bad[i]) != NULL, "name #%zu is refused", i);
	is_str(vs_name_why("1a"), "must start with a lower-case letter", "reason for a leading digit");
	is_str(vs_name_why("tasks"), "is the name of a cgroup control file", "reason for tasks");
}

static void
percents(void)
{
	static const struct { const char *s; int r; unsigned bp; } t[] = {
		{ "50%", 0, 5000 }, { "50", 0, 5000 }, { "100%", 0, 10000 }, { "12.5%", 0, 1250 },
		{ "0.01%", 0, 1 }, { "33.33", 0, 3333 }, { "7.05%", 0, 705 },
		{ "0%", -ERANGE, 0 }, { "0.00", -ERANGE, 0 }, { "100.01%", -ERANGE, 0 },
		{ "150%", -ERANGE, 0 }, { "99999999999%", -ERANGE, 0 },
		{ "", -EINVAL, 0 }, { "%", -EINVAL, 0 }, { "-5%", -EINVAL, 0 }, { "5%%", -EINVAL, 0 },
		{ "1.234%", -EINVAL, 0 }, { "abc", -EINVAL, 0 }, { "5.%", -EINVAL, 0 }, { ".5%", -EINVAL, 0 },
		{ "5 %", -EINVAL, 0 }, { "0x10", -EINVAL, 0 },
	};
	char buf[16];
	const char *why;
	unsigned bp;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int r = parse_percent(t[i].s, &bp, &why);

		ok(r == t[i].r && (r < 0 ? why != NULL : bp == t[i].bp),
		   "percent '%s' -> %d (%u)", t[i].s, t[i].r, t[i].bp);
	}
	is_str(fmt_percent(5000, buf, sizeof(buf)), "50%", "format 50%%");
	is_str(fmt_percent(1250, buf, sizeof(buf)), "12.5%", "format 12.5%%");
	is_str(fmt_percent(705, buf, sizeof(buf)), "7.05%", "format 7.05%%");
	parse_percent("150%", &bp, &why);
	is_str(why, "is over 100%", "reason for 150%%");
}

static void
sizes(void)
{
	static const struct { const char *s; int r; uint64_t v; } t[] = {
		{ "512", 0, 512 }, { "64K", 0, 65536 }, { "64k", 0, 65536 }, { "256M", 0, 268435456 },
		{ "2G", 0, 2147483648ULL }, { "1T", 0, 1099511627776ULL }, { "2GiB", 0, 2147483648ULL },
		{ "10MB", 0, 10485760 }, { "100B", 0, 100 },
		{ "0", -ERANGE, 0 }, { "99999999999999999999", -ERANGE, 0 }, { "9999999999T", -ERANGE, 0 },
		{ "", -EINVAL, 0 }, { "M", -EINVAL, 0 }, { "12Q", -EINVAL, 0 }, { "-1G", -ERANGE, 0 },
		{ "1G ", -EINVAL, 0 }, { "1GG", -EINVAL, 0 },
		/* fractions: exact, then rounded down to a whole byte */
		{ "1.5G", 0, 1610612736ULL }, { "512.5M", 0, 537395200ULL }, { "0.5K", 0, 512 },
		{ "1.5GiB", 0, 1610612736ULL }, { "0.1K", 0, 102 }, { "2.25", 0, 2 },
		{ "1.000000000000000001T", 0, 1099511627776ULL },
		{ "8191.999999999T", 0, 9007199254739892ULL },
		{ "1.5.5G", -EINVAL, 0 }, { "1.G", -EINVAL, 0 }, { ".5G", -EINVAL, 0 },
		{ "1..5G", -EINVAL, 0 }, { "1.5 G", -EINVAL, 0 }, { "+1G", -EINVAL, 0 },
		{ "0.0001", -ERANGE, 0 }, { "0.0G", -ERANGE, 0 },
		{ "1.0000000000000000001G", -EINVAL, 0 },	/* 19 decimals */
		{ "8388608T", -ERANGE, 0 },	/* 2^63 */
		{ "8388607.9999999999T", 0, 9223372036854775698ULL },
		{ "18446744073709551615.5", -ERANGE, 0 }, { "18446744073709551616", -ERANGE, 0 },
	};
	const char *why;
	uint64_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int r = parse_size(t[i].s, &v, &why);

		ok(r == t[i].r && (r < 0 || v == t[i].v), "size '%s' -> %d", t[i].s, t[i].r);
	}
}

static void
numbers(void)
{
	const char *why;
	uint64_t v;

	ok(parse_u64("42", 1, 100, &v, &why) == 0 && v == 42, "u64 42 in [1,100]");
	ok(parse_u64("0", 1, 100, &v, &why) == -ERANGE, "u64 0 below min");
	ok(parse_u64("101", 1, 100, &v, &why) == -ERANGE, "u64 101 above max");
	ok(parse_u64("+5", 1, 100, &v, &why) == -EINVAL, "u64 with a sign");
	ok(parse_u64("5x", 1, 100, &v, &why) == -EINVAL, "u64 with junk");
	ok(parse_u64("18446744073709551616", 0, UINT64_MAX, &v, &why) == -ERANGE, "u64 overflow");
}

static void
fields(void)
{
	char path[] = "/tmp/vsd-test-field-XXXXXX";
	long v = 0;
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, "Name:\tx\nPid:\t42\nPPid:\t7\nTgid:\t-1\n", 34) != 34) {
		ok(0, "write a status file");
		return;
	}
	close(fd);
	ok(read_field_long(path, "Name", &v) == 0, "first line is found");
	ok(read_field_long(path, "Pid", &v) == 0 && v == 42, "Pid: 42 (not PPid)");
	ok(read_field_long(path, "PPid", &v) == 0 && v == 7, "PPid: 7");
	ok(read_field_long(path, "Tgid", &v) == 0 && v == -1, "negative value");
	ok(read_field_long(path, "id", &v) == -ENODATA, "a key that is only a suffix is absent");
	ok(read_field_long("/nonexistent/x", "Pid", &v) == -ENOENT, "missing file");
	unlink(path);
}

/* write_file_replace: links at the name and a world-writable directory */
static void
replace(void)
{
	char dir[] = "/tmp/vsd-test-replace-XXXXXX", p[256], q[256], buf[64];
	struct stat st;
	int n = 0;
	DIR *dh;
	struct dirent *e;

	if (!mkdtemp(dir)) {
		ok(0, "make a directory");
		return;
	}
	snprintf(p, sizeof(p), "%s/target", dir);
	snprintf(q, sizeof(q), "%s/f", dir);
	ok(write_file_replace(dir, "target", "keep", 4, 0600, 1) == 0, "write a file");
	ok(symlink(p, q) == 0, "a link at the name to replace");
	ok(write_file_replace(dir, "f", "new", 3, 0644, 0) == 0, "replace over the link");
	ok(lstat(q, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644,
	   "the name is a regular file, 0644, whatever the umask");
	ok(read_file(q, buf, sizeof(buf)) == 0 && !strcmp(buf, "new"), "with the new text");
	ok(read_file(p, buf, sizeof(buf)) == 0 && !strcmp(buf, "keep") &&
	   stat(p, &st) == 0 && (st.st_mode & 07777) == 0600, "the link's target unchanged");
	if ((dh = opendir(dir))) {
		while ((e = readdir(dh)))
			n += e->d_name[0] != '.';
		closedir(dh);
	}
	ok(n == 2, "no temporary file left (%d names)", n);
	chmod(dir, 0777);
	ok(write_file_replace(dir, "f", "x", 1, 0644, 0) == -EPERM,
	   "a world-writable directory without the sticky bit: -EPERM");
	chmod(dir, 01777);
	ok(write_file_replace(dir, "f", "x", 1, 0644, 0) == 0, "with the sticky bit: written");
	snprintf(q, sizeof(q), "%s/link", dir);
	ok(symlink(dir, q) == 0 && write_file_replace(q, "f", "x", 1, 0644, 0) == -ELOOP,
	   "a directory given as a link: -ELOOP");
	unlink(q);
	snprintf(q, sizeof(q), "%s/f", dir);
	unlink(q);
	unlink(p);
	rmdir(dir);
}

int
main(void)
{
	names();
	percents();
	sizes();
	numbers();
	fields();
	replace();
	return tap_done();
}
