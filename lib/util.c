// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/*
 * The cgroup control files whose names fit the pattern (every other one has a
 * dot): a VS directory cannot be made under such a name, and vsd must never
 * touch release_agent or notify_on_release (v1; every v2 file has a dot).
 */
static const char *const cgroup_file_names[] = {
	"tasks", "notify_on_release", "release_agent",
};

const char *
vs_name_why(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0)
		return "is empty";
	if (n > VS_NAME_MAX)
		return "is longer than 31 characters";
	if (name[0] < 'a' || name[0] > 'z')
		return "must start with a lower-case letter";
	for (i = 1; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return "may hold only a-z, 0-9, '_' and '-'";
	}
	for (i = 0; i < ARRAY_SIZE(cgroup_file_names); i++)
		if (strcmp(name, cgroup_file_names[i]) == 0)
			return "is the name of a cgroup control file";
	return NULL;
}

int
vs_name_valid(const char *name)
{
	return name && vs_name_why(name) == NULL;
}

int
parse_percent(const char *s, unsigned *bp, const char **why)
{
	unsigned long whole = 0, frac = 0;
	int ndigits = 0, nfrac = 0;
	const char *p = s;

	*why = "is not a percentage (like 50% or 12.5%)";
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (unsigned long)(*p - '0');
		if (whole > 1000000)
			goto range;
		ndigits++;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++) {
			if (nfrac >= 2) {
				*why = "has more than two decimals";
				return -EINVAL;
			}
			frac = frac * 10 + (unsigned long)(*p - '0');
			nfrac++;
		}
		if (nfrac == 0)
			return -EINVAL;
	}
	if (ndigits == 0)
		return -EINVAL;
	if (*p == '%')
		p++;
	if (*p != '\0')
		return -EINVAL;
	if (nfrac == 1)
		frac *= 10;
	whole = whole * BP_PER_PCT + frac;
	if (whole > BP_MAX)
		goto range;
	if (whole == 0) {
		*why = "must be more than 0%";
		return -ERANGE;
	}
	*bp = (unsigned)whole;
	*why = NULL;
	return 0;
range:
	*why = "is over 100%";
	return -ERANGE;
}

char *
fmt_percent(unsigned bp, char *buf, size_t len)
{
	if (bp % BP_PER_PCT == 0)
		snprintf(buf, len, "%u%%", bp / BP_PER_PCT);
	else if (bp % 10 == 0)
		snprintf(buf, len, "%u.%u%%", bp / BP_PER_PCT, (bp % BP_PER_PCT) / 10);
	else
		snprintf(buf, len, "%u.%02u%%", bp / BP_PER_PCT, bp % BP_PER_PCT);
	return buf;
}

int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why)
{
	unsigned long long v;
	char *end;

	*why = "is not a whole number";
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max) {
		*why = "is out of range";
		return -ERANGE;
	}
	*out = v;
	*why = NULL;
	return 0;
}

/*
 * "512M", "1.5G", "512.5M", "64KiB", "4096": a decimal number, up to 18
 * decimals, times a binary unit. The exact value is taken (128-bit), then
 * rounded down to a whole byte: 0.1K is 102 bytes. Everything else is
 * refused with a reason: a sign, a second dot, a dot with no digit after
 * it, a unit that is not K, M, G or T, zero, and anything past 2^63.
 */
int
parse_size(const char *s, uint64_t *bytes, const char **why)
{
	unsigned __int128 whole = 0, frac = 0, pow10 = 1, v;
	unsigned shift = 0, nfrac = 0;
	const char *p = s;

	*why = "is not a size (like 512M, 1.5G or 2G)";
	if (*p == '-') {
		*why = "is negative";
		return -ERANGE;
	}
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (unsigned)(*p - '0');
		if (whole > UINT64_MAX)
			goto range;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++) {
			if (++nfrac > 18) {
				*why = "has more than 18 decimals";
				return -EINVAL;
			}
			frac = frac * 10 + (unsigned)(*p - '0');
			pow10 *= 10;
		}
		if (nfrac == 0)
			return -EINVAL;	/* "1.G", "1.5.5G" fails below */
	}
	switch (toupper((unsigned char)*p)) {
	case '\0': break;
	case 'K': shift = 10; p++; break;
	case 'M': shift = 20; p++; break;
	case 'G': shift = 30; p++; break;
	case 'T': shift = 40; p++; break;
	case 'B': break;
	default: return -EINVAL;
	}
	if (shift && (*p == 'i' || *p == 'I'))
		p++;
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p != '\0')
		return -EINVAL;
	/* whole < 2^64 and shift <= 40: no 128-bit overflow */
	v = (whole << shift) + (frac << shift) / pow10;
	if (v > (UINT64_MAX >> 1))
		goto range;
	if (v == 0) {
		*why = "must be more than 0";
		return -ERANGE;
	}
	*bytes = (uint64_t)v;
	*why = NULL;
	return 0;
range:
	*why = "is too large";
	return -ERANGE;
}

char *
fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
	return buf;
}

/* A whole number, decimal or 0x hex, in [0, max]. */
static int
parse_num(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long long v;
	char *end;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull would take a second "0x" and leading blanks or signs */
	if (!isxdigit((unsigned char)s[0]) || (base == 10 && !isdigit((unsigned char)s[0])) ||
	    (base == 16 && (s[1] == 'x' || s[1] == 'X')))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v > max)
		return -ERANGE;
	*out = (unsigned long)v;
	return 0;
}

int
parse_tos(const char *s, uint8_t *tos, const char **why)
{
	unsigned long v;
	int r = parse_num(s, 255, &v);

	if (r < 0) {
		*why = r == -ERANGE ? "is over 255" : "is not a TOS byte (0-255 or 0x00-0xff)";
		return r;
	}
	*tos = (uint8_t)v;
	*why = NULL;
	return 0;
}

int
parse_dscp(const char *s, uint8_t *tos, const char **why)
{
	unsigned long v;
	int r;

	*why = "is not a DSCP (CS0-CS7, AF11-AF43, EF or 0-63)";
	if (strcasecmp(s, "ef") == 0) {
		v = 46;
	} else if (strncasecmp(s, "cs", 2) == 0 && s[2] >= '0' && s[2] <= '7' && !s[3]) {
		v = (unsigned long)(s[2] - '0') << 3;
	} else if (strncasecmp(s, "af", 2) == 0 && s[2] >= '1' && s[2] <= '4' &&
		   s[3] >= '1' && s[3] <= '3' && !s[4]) {
		/* RFC 2597: AFxy = 8x + 2y */
		v = 8ul * (unsigned long)(s[2] - '0') + 2ul * (unsigned long)(s[3] - '0');
	} else if (isdigit((unsigned char)s[0])) {
		r = parse_num(s, 63, &v);
		if (r < 0) {
			if (r == -ERANGE)
				*why = "is over 63";
			return r;
		}
	} else {
		return -EINVAL;
	}
	*tos = (uint8_t)(v << 2);
	*why = NULL;
	return 0;
}

int
parse_mark(const char *s, uint32_t *mark, const char **why)
{
	unsigned long v;
	int r = parse_num(s, UINT32_MAX, &v);

	if (r < 0) {
		*why = r == -ERANGE ? "is over 0xffffffff" : "is not a mark (a 32-bit number)";
		return r;
	}
	*mark = (uint32_t)v;
	*why = NULL;
	return 0;
}

int
read_file(const char *path, char *buf, size_t len)
{
	return read_file_at(AT_FDCWD, path, buf, len);
}

int
read_file_at(int dfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	size_t got = 0;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	return 0;
}

int
write_file(const char *path, const char *s)
{
	return write_file_at(AT_FDCWD, path, s);
}

int
write_file_at(int dfd, const char *name, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, r = 0;

	fd = openat(dfd, name, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int
write_file_atomic(const char *dir, const char *name, const char *data, size_t len)
{
	return write_file_replace(dir, name, data, len, 0600, 1);
}

int
read_field_long(const char *path, const char *key, long *v)
{
	char buf[4096], want[64], *p;
	int r;

	if ((r = read_file(path, buf, sizeof(buf))) < 0 ||
	    (r = path_fmt(want, sizeof(want), "\n%s:", key)) < 0)
		return r;
	if (strncmp(buf, want + 1, strlen(want + 1)) == 0)
		p = buf;
	else if ((p = strstr(buf, want)))
		p++;
	else
		return -ENODATA;
	*v = strtol(p + strlen(key) + 1, NULL, 10);
	return 0;
}

int
mkdir_p(const char *path, unsigned mode)
{
	char tmp[4096], *p;
	int r;

	if ((r = path_fmt(tmp, sizeof(tmp), "%s", path)) < 0)
		return r;
	for (p = tmp + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(tmp, (mode_t)mode) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (c == '\0')
			return 0;
	}
}

int
path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

void
gate_exe_path(char *buf, size_t len)
{
	const char *env = getenv("VSD_GATE");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/'))) {
			*slash = '\0';
			if (path_fmt(buf, len, "%s/../gates/accept/vsd-gate", self) == 0 &&
			    access(buf, X_OK) == 0)
				return;
		}
	}
	snprintf(buf, len, "%s/vsd-gate", LIBEXECDIR);
}

int
unlink_socket(const char *path)
{
	struct stat st;

	/* lstat: a symbolic link is not a socket, wherever it points */
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int
proc_stat(pid_t pid, pid_t *ppid, unsigned *flags)
{
	char path[64], buf[512], *p;
	unsigned fl = 0;
	int pp = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* after the command, which may hold spaces and parentheses: field 3
	 * (state), 4 (ppid), 5-8, 9 (flags) */
	if (read_file(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %d %*d %*d %*d %*d %u", &pp, &fl) != 2)
		return -ESRCH;
	if (ppid)
		*ppid = pp;
	if (flags)
		*flags = fl;
	return 0;
}

pid_t
proc_parent(pid_t pid)
{
	pid_t ppid;

	return proc_stat(pid, &ppid, NULL) == 0 ? ppid : 0;
}

int
proc_uids(pid_t pid, uid_t uids[4])
{
	char path[64], buf[4096], *p;
	unsigned u[4];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "\nUid:")) ||
	    sscanf(p + 5, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
		return -ESRCH;
	for (i = 0; i < 4; i++)
		uids[i] = (uid_t)u[i];
	return 0;
}

char *
path_absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (!(out = malloc(strlen(cwd) + 1 + strlen(path) + 1)))
		return NULL;
	sprintf(out, "%s/%s", cwd, path);
	return out;
}

uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
kv_get(const char *line, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");

			snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p + kl + 1);
			return 0;
		}
		p += kl;
	}
	return -ENOENT;
}
