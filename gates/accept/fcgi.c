// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A defensive parser of the start of a FastCGI connection (see fcgi.h).
 * Every length is checked against what is there before it is used; the input
 * is bounded by the caller (FCGI_PEEK_MAX) and so is everything we copy.
 * What a hostile client can do is make its own connection unclassifiable
 * (FCGI_BAD: the gate then decides by the requester, as for any service) or
 * slow (FCGI_MORE until the gate's bound: then it is served from home).
 */
#include "config.h"

#include <string.h>

#include "fcgi.h"

#define FCGI_VERSION_1		1
#define FCGI_BEGIN_REQUEST	1
#define FCGI_PARAMS		4
#define FCGI_GET_VALUES		9	/* management record (request id 0) */
#define FCGI_HEADER_LEN		8
#define FCGI_BEGIN_LEN		8
#define FCGI_MAX_MGMT		4	/* management records we skip before BEGIN */

/* A name or value length at *pos of the params stream; -1 if incomplete. */
static long
pair_len(const uint8_t *s, size_t n, size_t *pos)
{
	if (*pos >= n)
		return -1;
	if (!(s[*pos] & 0x80))
		return s[(*pos)++];
	if (n - *pos < 4)
		return -1;
	long v = (long)(s[*pos] & 0x7f) << 24 | (long)s[*pos + 1] << 16 |
	    (long)s[*pos + 2] << 8 | s[*pos + 3];
	*pos += 4;
	return v;
}

/*
 * Walk the pairs of the params stream s[0..n) (values are copied NUL
 * terminated to *vals, which grows up to end). Returns the offset after the
 * last complete pair, or (size_t)-1 if a length is impossible (ended is 1:
 * the stream is complete, so a pair that does not fit is malformed).
 */
static size_t
pairs(struct fcgi_params *p, const uint8_t *s, size_t n, int ended, char **vals, char *end)
{
	static const struct { const char *name; size_t off; } want[] = {
		{ "HTTP_HOST", offsetof(struct fcgi_params, http_host) },
		{ "SERVER_NAME", offsetof(struct fcgi_params, server_name) },
		{ "DOCUMENT_ROOT", offsetof(struct fcgi_params, docroot) },
		{ "SCRIPT_FILENAME", offsetof(struct fcgi_params, script) },
	};
	size_t pos = 0, done = 0, i;
	unsigned seen = 0;

	while (pos < n) {
		long nl = pair_len(s, n, &pos), vl = nl < 0 ? -1 : pair_len(s, n, &pos);

		if (nl < 0 || vl < 0 || (size_t)nl > n - pos || (size_t)vl > n - pos - (size_t)nl)
			return ended ? (size_t)-1 : done;
		const uint8_t *name = s + pos, *val = s + pos + nl;

		pos += (size_t)nl + (size_t)vl;
		done = pos;
		p->npairs++;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			const char **slot = (const char **)((char *)p + want[i].off);

			if ((size_t)nl != strlen(want[i].name) || memcmp(name, want[i].name, (size_t)nl))
				continue;
			/* the first one counts, usable or not; a value with a NUL
			 * in it is not a name or a path we could match (it would
			 * be cut short) */
			if (seen & 1u << i)
				break;
			seen |= 1u << i;
			if (memchr(val, 0, (size_t)vl) || (size_t)(end - *vals) < (size_t)vl + 1)
				break;
			memcpy(*vals, val, (size_t)vl);
			(*vals)[vl] = 0;
			*slot = *vals;
			*vals += vl + 1;
			break;
		}
	}
	return done;
}

enum fcgi_status
fcgi_parse(const uint8_t *in, size_t len, struct fcgi_params *p)
{
	size_t off = 0, slen = 0, half = FCGI_PEEK_MAX;
	unsigned id = 0, mgmt = 0;
	int ended = 0;
	char *vals;

	memset(p, 0, offsetof(struct fcgi_params, store));
	if (len > FCGI_PEEK_MAX)
		len = FCGI_PEEK_MAX;
	/* records, up to the end of the params stream or of the input; the
	 * stream's content is gathered in the store's first half (a pair may
	 * straddle records), the values we keep go to its second half */
	while (!ended && len - off >= FCGI_HEADER_LEN) {
		const uint8_t *h = in + off;
		unsigned type = h[1], rid = (unsigned)h[2] << 8 | h[3];
		size_t clen = (size_t)h[4] << 8 | h[5], plen = h[6];

		if (h[0] != FCGI_VERSION_1)
			return FCGI_BAD;
		if (!id) {
			if (rid == 0 && type == FCGI_GET_VALUES && ++mgmt <= FCGI_MAX_MGMT) {
				/* a management record before the request: skip it */
			} else if (type != FCGI_BEGIN_REQUEST || rid == 0 || clen != FCGI_BEGIN_LEN) {
				return FCGI_BAD;
			} else {
				id = rid;
			}
		} else if (rid != id || type != FCGI_PARAMS) {
			/* STDIN, ABORT or another request before the params ended */
			return FCGI_BAD;
		} else if (clen == 0) {
			ended = 1;
		} else {
			/* what arrived of this record's content (it may be cut) */
			size_t have = len - off - FCGI_HEADER_LEN < clen ? len - off - FCGI_HEADER_LEN : clen;

			if (slen + have > half)
				have = half - slen;
			memcpy(p->store + slen, h + FCGI_HEADER_LEN, have);
			slen += have;
			if (have < clen)
				break;	/* the rest has not arrived (or is past our bound) */
		}
		if (len - off - FCGI_HEADER_LEN < clen + plen) {
			off = len;
			break;
		}
		off += FCGI_HEADER_LEN + clen + plen;
	}
	vals = p->store + half;
	if (pairs(p, (const uint8_t *)p->store, slen, ended, &vals, p->store + sizeof(p->store)) ==
	    (size_t)-1)
		return FCGI_BAD;
	return ended ? FCGI_DONE : FCGI_MORE;
}
