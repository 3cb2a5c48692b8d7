/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FastCGI records a front end sends first on a new connection
 * (BEGIN_REQUEST, then the PARAMS stream), parsed from bytes the accept gate
 * peeked at (MSG_PEEK: the service still reads them). Pure code, no I/O, so
 * tests/unit/test-fcgi.c drives it with real and malformed records.
 *
 * The FastCGI 1.0 specification (Open Market, 1996), section 3.3: a record is
 * an 8-byte header (version 1, type, request id, content length, padding
 * length, reserved), its content and its padding. Section 3.4: a
 * name-value pair is a name length and a value length (1 byte if < 128,
 * else 4 bytes with the top bit set), then the name and the value; a pair
 * may straddle PARAMS records, and an empty PARAMS record ends the stream.
 */
#ifndef VSD_GATE_FCGI_H
#define VSD_GATE_FCGI_H

#include <stddef.h>
#include <stdint.h>

/* How many bytes the gate peeks at, at most: Apache's mod_proxy_fcgi sends
 * 1.5-3 KiB of params for a PHP request (more with big cookies); the
 * attributes we want come with them. Also the most we copy. */
#define FCGI_PEEK_MAX	8192

enum fcgi_status {
	FCGI_BAD = -1,	/* not FastCGI, or malformed: nothing to classify by */
	FCGI_MORE = 0,	/* well formed so far; the params have not all arrived */
	FCGI_DONE = 1,	/* BEGIN_REQUEST and the whole PARAMS stream are here */
};

/* The params the gate classifies by; NULL when not sent (or not usable: a
 * value with a NUL byte in it). They point into store[]. */
struct fcgi_params {
	const char *http_host;		/* HTTP_HOST */
	const char *server_name;	/* SERVER_NAME */
	const char *docroot;		/* DOCUMENT_ROOT */
	const char *script;		/* SCRIPT_FILENAME */
	unsigned    npairs;		/* complete pairs seen */
	char	    store[2 * FCGI_PEEK_MAX];	/* the params stream; the values */
};

/*
 * Parse the first len bytes a connection sent. FCGI_MORE leaves in *p the
 * attributes of the pairs complete so far (the caller may classify by them
 * when it stops waiting, e.g. because len reached FCGI_PEEK_MAX). Bytes
 * after the end of the PARAMS stream (STDIN) are not looked at.
 */
enum fcgi_status fcgi_parse(const uint8_t *in, size_t len, struct fcgi_params *p);

#endif
