// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host names, paths and durations in the one form both sides compare:
 * the checker normalises a site's or content rule's pattern with these, and
 * the accept gate's query normalises what a request sent the same way, so
 * "Shop.Example.:8080" finds the site "shop.example" by a hash lookup.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"

static int
host_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
	    ch == '_' || ch == '.';
}

/*
 * "Shop.Example.:8080" -> "shop.example"; "[::1]:80" -> "[::1]". Labels
 * must not be empty ("a..b", ".a"); a bracketed IPv6 literal holds hex
 * digits, ':' and '.' only. Returns the length, or -1 with *why set.
 */
int
norm_host(const char *in, char *out, size_t len, const char **why)
{
	size_t n = 0, i;
	const char *end;

	if (in[0] == '[') {
		if (!(end = strchr(in, ']'))) {
			*why = "has '[' without ']'";
			return -1;
		}
		end++;
		if (*end && *end != ':') {
			*why = "has characters after ']'";
			return -1;
		}
	} else {
		end = strchr(in, ':');	/* the port, ignored */
		if (!end)
			end = in + strlen(in);
	}
	if (end > in && end[-1] == '.' && in[0] != '[')
		end--;			/* the root's trailing dot, ignored */
	if (end == in) {
		*why = "is empty";
		return -1;
	}
	if ((size_t)(end - in) >= len || end - in > RULES_HOST_MAX) {
		*why = "is longer than 253 characters";
		return -1;
	}
	for (i = 0; in + i < end; i++) {
		char ch = in[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		if (in[0] == '[') {
			if (i > 0 && in + i + 1 < end &&
			    !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
			      ch == ':' || ch == '.')) {
				*why = "is not an IPv6 address in '[...]'";
				return -1;
			}
		} else if (!host_char(ch)) {
			*why = "has a character not allowed in a host name";
			return -1;
		} else if (ch == '.' && (i == 0 || in[i - 1] == '.')) {
			*why = "has an empty label";
			return -1;
		}
		out[n++] = ch;
	}
	out[n] = '\0';
	return (int)n;
}

/*
 * "/var//www/shop/" -> "/var/www/shop". Absolute; "." and ".." components
 * are refused, not resolved: the gate must not believe a request is under
 * /var/www/shop because it says /var/www/shop/../other. "/" alone is ""
 * (the caller decides whether that may match). Returns the length or -1.
 */
int
norm_path(const char *in, char *out, size_t len, const char **why)
{
	size_t n = 0;
	const char *p = in, *c;

	if (in[0] != '/') {
		*why = "is not an absolute path";
		return -1;
	}
	while (*p) {
		size_t cl;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		while (*p && *p != '/') {
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				*why = "has a control character";
				return -1;
			}
			p++;
		}
		cl = (size_t)(p - c);
		if ((cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.')) {
			*why = "has a '.' or '..' component";
			return -1;
		}
		if (n + 1 + cl >= len) {
			*why = "is too long";
			return -1;
		}
		out[n++] = '/';
		memcpy(out + n, c, cl);
		n += cl;
	}
	out[n] = '\0';
	return (int)n;
}

/*
 * SCRIPT_FILENAME as a path. Apache's mod_proxy_fcgi, with a SetHandler
 * "proxy:unix:...|fcgi://localhost" (Debian's php8.2-fpm conf), may send
 * it as "proxy:fcgi://localhost/var/www/x.php"; PHP-FPM strips that
 * prefix itself (fpm_main.c), so do we.
 */
int
norm_script(const char *in, char *out, size_t len, const char **why)
{
	static const char *const pfx[] = { "proxy:fcgi://", "proxy:balancer://" };
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++) {
		size_t l = strlen(pfx[i]);

		if (strncmp(in, pfx[i], l) == 0) {
			in = strchr(in + l, '/');
			if (!in) {
				*why = "has no path";
				return -1;
			}
			break;
		}
	}
	return norm_path(in, out, len, why);
}

/* "200ms", "1s": 1 ms to RULES_ATTRS_TIMEOUT_MAX ms. */
int
parse_duration_ms(const char *s, unsigned *ms, const char **why)
{
	unsigned long long v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9') {
		*why = "is not a duration (like 200ms or 1s)";
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > 1000000000ULL) {
			*why = "is out of range (1ms-10s)";
			return -ERANGE;
		}
	}
	if (strcmp(p, "s") == 0) {
		v *= 1000;
	} else if (strcmp(p, "ms") != 0) {
		*why = "is not a duration (like 200ms or 1s)";
		return -EINVAL;
	}
	if (v < 1 || v > RULES_ATTRS_TIMEOUT_MAX) {
		*why = "is out of range (1ms-10s)";
		return -ERANGE;
	}
	*ms = (unsigned)v;
	return 0;
}
