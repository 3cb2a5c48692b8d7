/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FastCGI records a front end sends first on a new connection
 * (BEGIN_REQUEST, then the PARAMS stream), parsed as a stream from bytes
 * the accept gate peeked at (MSG_PEEK: the service still reads them). Pure
 * code, no I/O, so tests/unit/test-fcgi.c and gates/accept/fuzz-fcgi.c
 * drive it with real and malformed records.
 *
 * The FastCGI 1.0 specification (Open Market, 1996), section 3.3: a record is
 * an 8-byte header (version 1, type, request id, content length, padding
 * length, reserved), its content and its padding. Section 3.4: a
 * name-value pair is a name length and a value length (1 byte if < 128,
 * else 4 bytes with the top bit set), then the name and the value; a pair
 * may straddle PARAMS records, and an empty PARAMS record ends the stream.
 *
 * The parser keeps no byte of the stream but the values it wants, so its
 * memory is fixed (struct fcgi_stream) whatever the front end sends; the
 * bound on what is read is the caller's (FCGI_PARAMS_MAX).
 */
#ifndef VSD_GATE_FCGI_H
#define VSD_GATE_FCGI_H

#include <stddef.h>
#include <stdint.h>

/*
 * How many bytes of a connection's start the gate looks at, at most. Above
 * what the front ends pass by default: Apache sends every request header
 * (LimitRequestFields 100 x LimitRequestFieldSize 8190 = 819,000 bytes)
 * before SERVER_NAME and DOCUMENT_ROOT; nginx's headers fit in
 * large_client_header_buffers (4 x 8k) and come after its fastcgi_params.
 * A request whose params do not end within it is unclassified (hold.c;
 * docs/DESIGN.md says what the kernel lets the gate peek).
 */
#define FCGI_PARAMS_MAX	(1024 * 1024)
/* The longest value kept, with its NUL: a path (PATH_MAX); a longer
 * DOCUMENT_ROOT or host name matches no rule anyway. */
#define FCGI_VALUE_MAX	4096

enum fcgi_status {
	FCGI_BAD = -1,	/* not FastCGI, or malformed: nothing to classify by */
	FCGI_MORE = 0,	/* well formed so far; the params have not all arrived */
	FCGI_DONE = 1,	/* BEGIN_REQUEST and the whole PARAMS stream are here */
};

enum fcgi_param { FCGI_HTTP_HOST, FCGI_SERVER_NAME, FCGI_DOCUMENT_ROOT, FCGI_SCRIPT_FILENAME,
		  FCGI_NPARAMS };

/* The params the gate classifies by; NULL when not sent (or not usable: a
 * value with a NUL byte in it, or longer than FCGI_VALUE_MAX - 1), and
 * while the pair has not all arrived. They point into val[]. */
struct fcgi_params {
	const char *http_host;		/* HTTP_HOST */
	const char *server_name;	/* SERVER_NAME */
	const char *docroot;		/* DOCUMENT_ROOT */
	const char *script;		/* SCRIPT_FILENAME */
	unsigned    npairs;		/* complete pairs seen */
	char	    val[FCGI_NPARAMS][FCGI_VALUE_MAX];
};

/* The parser's state between two chunks of the stream. */
struct fcgi_stream {
	struct fcgi_params p;
	enum fcgi_status status;
	uint64_t	 fed;		/* bytes fed so far */
	/* records */
	uint8_t		 hdr[8];
	unsigned	 nhdr;		/* header bytes gathered; 8: in its body */
	uint32_t	 content, padding;	/* of the current record, still to come */
	unsigned	 type, id, mgmt;
	/* pairs, over the content of the PARAMS records */
	unsigned	 pstate;	/* 0 name length, 1 value length, 2 name and value */
	uint8_t		 lens[4];
	unsigned	 nlens;		/* bytes of a 4-byte length gathered */
	uint32_t	 nl, vl;	/* the pair's lengths */
	uint64_t	 got;		/* its name and value bytes seen */
	char		 name[16];	/* its name, if one we might want */
	int		 slot;		/* enum fcgi_param it fills, -1 none */
	unsigned	 seen;		/* params whose first pair came (bit per slot) */
};

/* Start a stream. */
void fcgi_init(struct fcgi_stream *s);
/*
 * Parse the next len bytes a connection sent. FCGI_MORE leaves in s->p the
 * attributes of the pairs complete so far. Once FCGI_DONE or FCGI_BAD,
 * later bytes (STDIN) are not looked at and the status stays.
 */
enum fcgi_status fcgi_feed(struct fcgi_stream *s, const uint8_t *in, size_t len);
/* fcgi_init() and fcgi_feed() of in[0..len) at once. */
enum fcgi_status fcgi_parse(const uint8_t *in, size_t len, struct fcgi_stream *s);

#endif
