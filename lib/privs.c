// SPDX-License-Identifier: GPL-2.0-or-later
/* Users and capabilities: see privs.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "privs.h"

/* The highest capability this kernel knows, from the bounding set. */
static int
cap_last(void)
{
	int c;

	for (c = 63; c > 0; c--)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0)
			return c;
	return CAP_LAST_CAP;
}

int
privs_name_valid(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > PRIVS_NAME_MAX || s[0] == '-' || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (isalnum(ch) || ch == '_' || ch == '-' || ch == '.')
			continue;
		if (ch == '$' && i == n - 1 && n > 1)
			continue;
		return 0;
	}
	return 1;
}

/* A decimal id, or -1. */
static long
numeric(const char *s)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return *end || errno || v < 0 || v >= 0xffffffffL ? -1 : v;
}

int
privs_resolve(const char *user, const char *group, struct privs_user *u,
	      char *err, size_t errlen)
{
	struct passwd *pw;
	struct group *gr;
	long id;
	int n;

	memset(u, 0, sizeof(*u));
	if (!privs_name_valid(user)) {
		snprintf(err, errlen, "bad user name '%.64s'", user);
		return -EINVAL;
	}
	if (group && !privs_name_valid(group)) {
		snprintf(err, errlen, "bad group name '%.64s'", group);
		return -EINVAL;
	}
	errno = 0;
	pw = (id = numeric(user)) >= 0 ? getpwuid((uid_t)id) : getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "unknown user '%s'%s%s", user, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		return -ENOENT;
	}
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	snprintf(u->user, sizeof(u->user), "%s", pw->pw_name);
	if (group) {
		errno = 0;
		gr = (id = numeric(group)) >= 0 ? getgrgid((gid_t)id) : getgrnam(group);
		if (!gr) {
			snprintf(err, errlen, "unknown group '%s'%s%s", group, errno ? ": " : "",
				 errno ? strerror(errno) : "");
			return -ENOENT;
		}
		u->gid = gr->gr_gid;
		snprintf(u->group, sizeof(u->group), "%s", gr->gr_name);
	} else if ((gr = getgrgid(u->gid))) {
		snprintf(u->group, sizeof(u->group), "%s", gr->gr_name);
	} else {
		snprintf(u->group, sizeof(u->group), "%u", (unsigned)u->gid);
	}
	/* what initgroups(3) would set: the user's groups, and the gid we run with */
	n = PRIVS_GROUPS_MAX;
	if (getgrouplist(u->user, u->gid, u->groups, &n) < 0) {
		snprintf(err, errlen, "user '%s' is in more than %d groups", u->user,
			 PRIVS_GROUPS_MAX);
		return -E2BIG;
	}
	u->ngroups = n;
	return 0;
}

static int
caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	return syscall(SYS_capget, &h, d) < 0 ? -errno : 0;
}

int
privs_permitted(uint64_t *mask)
{
	struct __user_cap_data_struct d[2];
	int r;

	if ((r = caps_get(d)) < 0)
		return r;
	*mask = (uint64_t)d[1].permitted << 32 | d[0].permitted;
	return 0;
}

/* Drop what is not in keep from the bounding set; needs CAP_SETPCAP. */
static int
bounding_keep(uint64_t keep)
{
	int c, last = cap_last();

	for (c = 0; c <= last; c++)
		if (!(keep & (1ull << c)) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
			return -errno;
	return 0;
}

int
privs_keep(uint64_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int c, r;

	/* the bounding set first: dropping from it needs CAP_SETPCAP */
	if ((r = bounding_keep(keep)) < 0)
		return r;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if ((r = caps_get(d)) < 0)
		return r;
	for (c = 0; c < 2; c++) {
		uint32_t k = (uint32_t)(keep >> (32 * c));

		d[c].effective &= k;
		d[c].permitted &= k;
		d[c].inheritable &= k;
	}
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int
privs_become(const struct privs_user *u, char *err, size_t errlen)
{
	struct __user_cap_data_struct d[2];
	int r;

	if (geteuid() != 0) {
		snprintf(err, errlen, "only root can run a command as another user");
		return -EPERM;
	}
	/*
	 * An empty bounding set, while CAP_SETPCAP lets us: nothing an exec
	 * could hand back (no_new_privs below stops setuid binaries too).
	 * The effective set keeps CAP_SETUID and CAP_SETGID for the next step.
	 */
	if ((r = bounding_keep(0)) < 0 ||
	    (r = privs_keep(1ull << CAP_SETUID | 1ull << CAP_SETGID)) < 0) {
		snprintf(err, errlen, "dropping capabilities: %s", strerror(-r));
		return r;
	}
	if (setgroups((size_t)u->ngroups, u->groups) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0) {
		r = -errno;
		snprintf(err, errlen, "becoming user %s (uid %u, gid %u): %s", u->user,
			 (unsigned)u->uid, (unsigned)u->gid, strerror(errno));
		return r;
	}
	/* uid 0 keeps its capabilities across setresuid: drop them by hand */
	if (u->uid == 0 && (r = privs_keep(0)) < 0) {
		snprintf(err, errlen, "dropping capabilities: %s", strerror(-r));
		return r;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return r;
	}
	if ((r = caps_get(d)) < 0 || d[0].effective || d[0].permitted || d[0].inheritable ||
	    d[1].effective || d[1].permitted || d[1].inheritable) {
		snprintf(err, errlen, "capabilities left after becoming %s", u->user);
		return r < 0 ? r : -EPERM;
	}
	return 0;
}
