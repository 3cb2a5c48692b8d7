// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A defensive streaming parser of the start of a FastCGI connection (see
 * fcgi.h). It walks the bytes once, in chunks of any size, and keeps only
 * the four values it wants: a pair or a record header split anywhere is
 * gathered in the state, every other byte is counted and skipped. What a
 * hostile client can do is make its own connection unclassifiable
 * (FCGI_BAD) or long or slow (FCGI_MORE past the gate's bounds); the gate
 * serves both from the service's unclassified VS (hold.c).
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

static const char *const wanted[FCGI_NPARAMS] = {
	[FCGI_HTTP_HOST] = "HTTP_HOST",
	[FCGI_SERVER_NAME] = "SERVER_NAME",
	[FCGI_DOCUMENT_ROOT] = "DOCUMENT_ROOT",
	[FCGI_SCRIPT_FILENAME] = "SCRIPT_FILENAME",
};

void
fcgi_init(struct fcgi_stream *s)
{
	memset(s, 0, offsetof(struct fcgi_stream, p.val));
	memset(&s->status, 0, sizeof(*s) - offsetof(struct fcgi_stream, status));
	s->status = FCGI_MORE;
	s->slot = -1;
}

static const char **
slot_ptr(struct fcgi_params *p, int slot)
{
	switch (slot) {
	case FCGI_HTTP_HOST: return &p->http_host;
	case FCGI_SERVER_NAME: return &p->server_name;
	case FCGI_DOCUMENT_ROOT: return &p->docroot;
	default: return &p->script;
	}
}

/* The pair's name is complete: is it one we want, and its first? */
static void
name_done(struct fcgi_stream *s)
{
	int i;

	s->slot = -1;
	if (s->nl >= sizeof(s->name))
		return;
	for (i = 0; i < FCGI_NPARAMS; i++) {
		if (strlen(wanted[i]) != s->nl || memcmp(s->name, wanted[i], s->nl))
			continue;
		/* the first one counts, usable or not */
		if (!(s->seen & 1u << i) && s->vl < FCGI_VALUE_MAX)
			s->slot = i;
		s->seen |= 1u << i;
		return;
	}
}

/* The pair is complete: publish its value if we kept it. */
static void
pair_done(struct fcgi_stream *s)
{
	s->p.npairs++;
	if (s->slot >= 0) {
		char *v = s->p.val[s->slot];

		v[s->vl] = 0;
		/* a value with a NUL in it is not a name or a path we could
		 * match (it would be cut short) */
		if (!memchr(v, 0, s->vl))
			*slot_ptr(&s->p, s->slot) = v;
	}
	s->pstate = 0;
	s->got = 0;
	s->slot = -1;
}

/* One byte of a name or value length; 1 when the length is complete. */
static int
len_byte(struct fcgi_stream *s, uint8_t b, uint32_t *out)
{
	s->lens[s->nlens++] = b;
	if (s->nlens == 1 && !(b & 0x80)) {
		*out = b;
	} else if (s->nlens == 4) {
		*out = (uint32_t)(s->lens[0] & 0x7f) << 24 | (uint32_t)s->lens[1] << 16 |
		    (uint32_t)s->lens[2] << 8 | s->lens[3];
	} else {
		return 0;
	}
	s->nlens = 0;
	return 1;
}

/* n bytes of the params stream (the content of PARAMS records). */
static void
pairs(struct fcgi_stream *s, const uint8_t *in, size_t n)
{
	while (n) {
		uint64_t left;
		size_t k;

		if (s->pstate == 0) {
			n--;
			if (len_byte(s, *in++, &s->nl))
				s->pstate = 1;
			continue;
		}
		if (s->pstate == 1) {
			n--;
			if (!len_byte(s, *in++, &s->vl))
				continue;
			s->pstate = 2;
			if (s->nl == 0)
				name_done(s);
			if (s->nl == 0 && s->vl == 0)
				pair_done(s);
			continue;
		}
		left = (uint64_t)s->nl + s->vl - s->got;
		k = n < left ? n : (size_t)left;
		if (s->got < s->nl) {
			/* the name's bytes; kept only if it could be one we want */
			uint64_t m = s->nl - s->got;

			if (k > m)
				k = (size_t)m;
			if (s->nl < sizeof(s->name))
				memcpy(s->name + s->got, in, k);
			s->got += k;
			if (s->got == s->nl)
				name_done(s);
		} else {
			if (s->slot >= 0)
				memcpy(s->p.val[s->slot] + (s->got - s->nl), in, k);
			s->got += k;
		}
		in += k;
		n -= k;
		if (s->got == (uint64_t)s->nl + s->vl)
			pair_done(s);
	}
}

/* The record header in s->hdr is complete. */
static void
header_done(struct fcgi_stream *s)
{
	const uint8_t *h = s->hdr;
	unsigned type = h[1], rid = (unsigned)h[2] << 8 | h[3];
	uint32_t clen = (uint32_t)h[4] << 8 | h[5];

	if (h[0] != FCGI_VERSION_1) {
		s->status = FCGI_BAD;
		return;
	}
	if (!s->id) {
		if (rid == 0 && type == FCGI_GET_VALUES && ++s->mgmt <= FCGI_MAX_MGMT) {
			/* a management record before the request: skip it */
		} else if (type != FCGI_BEGIN_REQUEST || rid == 0 || clen != FCGI_BEGIN_LEN) {
			s->status = FCGI_BAD;
			return;
		} else {
			s->id = rid;
		}
	} else if (rid != s->id || type != FCGI_PARAMS) {
		/* STDIN, ABORT or another request before the params ended */
		s->status = FCGI_BAD;
		return;
	} else if (clen == 0) {
		/* the end of the stream: a pair cut by it is malformed */
		s->status = s->pstate == 0 && s->nlens == 0 ? FCGI_DONE : FCGI_BAD;
		return;
	}
	s->type = type;
	s->content = clen;
	s->padding = h[6];
}

enum fcgi_status
fcgi_feed(struct fcgi_stream *s, const uint8_t *in, size_t len)
{
	while (len && s->status == FCGI_MORE) {
		size_t k;

		if (s->nhdr < FCGI_HEADER_LEN) {
			k = FCGI_HEADER_LEN - s->nhdr;
			if (k > len)
				k = len;
			memcpy(s->hdr + s->nhdr, in, k);
			s->nhdr += (unsigned)k;
			if (s->nhdr == FCGI_HEADER_LEN)
				header_done(s);
		} else if (s->content) {
			k = len < s->content ? len : s->content;
			if (s->type == FCGI_PARAMS)
				pairs(s, in, k);
			s->content -= (uint32_t)k;
		} else {
			k = len < s->padding ? len : s->padding;
			s->padding -= (uint32_t)k;
		}
		in += k;
		len -= k;
		s->fed += k;
		if (s->nhdr == FCGI_HEADER_LEN && !s->content && !s->padding)
			s->nhdr = 0;	/* the next record */
	}
	return s->status;
}

enum fcgi_status
fcgi_parse(const uint8_t *in, size_t len, struct fcgi_stream *s)
{
	fcgi_init(s);
	return fcgi_feed(s, in, len);
}
