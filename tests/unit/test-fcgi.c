// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gates/accept/fcgi.c: the start of a FastCGI connection, as the accept gate
 * peeks at it. Real records (captured from Debian's apache2 mod_proxy_fcgi
 * and libfcgi's cgi-fcgi, tests/unit/fcgi-records.h), every prefix of them
 * (what a peek sees while they arrive), records built here to reach the
 * corners (pairs straddling records, 4-byte lengths), malformed input, and
 * a no-crash run over mutated records (under --enable-sanitizers, any
 * out-of-bounds access ends the test).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gates/accept/fcgi.h"
#include "tap.h"
#include "fcgi-records.h"

static struct fcgi_stream S;
#define P (S.p)

/* A record: header, content, padding. */
static size_t
rec(uint8_t *out, unsigned type, unsigned id, const void *c, size_t clen, unsigned pad)
{
	out[0] = 1;
	out[1] = (uint8_t)type;
	out[2] = (uint8_t)(id >> 8);
	out[3] = (uint8_t)id;
	out[4] = (uint8_t)(clen >> 8);
	out[5] = (uint8_t)clen;
	out[6] = (uint8_t)pad;
	out[7] = 0;
	memcpy(out + 8, c, clen);
	memset(out + 8 + clen, 0xee, pad);
	return 8 + clen + pad;
}

static size_t
begin(uint8_t *out, unsigned id)
{
	static const uint8_t b[8] = { 0, 1, 0 };	/* role RESPONDER, no keep-conn */

	return rec(out, 1, id, b, sizeof(b), 0);
}

/* A name-value pair, 1- or 4-byte lengths as the spec says. */
static size_t
pair(uint8_t *out, const char *n, const void *v, size_t vl)
{
	size_t nl = strlen(n), o = 0;
	size_t l[2] = { nl, vl };

	for (int i = 0; i < 2; i++) {
		if (l[i] < 128) {
			out[o++] = (uint8_t)l[i];
		} else {
			out[o++] = (uint8_t)(0x80 | l[i] >> 24);
			out[o++] = (uint8_t)(l[i] >> 16);
			out[o++] = (uint8_t)(l[i] >> 8);
			out[o++] = (uint8_t)l[i];
		}
	}
	memcpy(out + o, n, nl);
	memcpy(out + o + nl, v, vl);
	return o + nl + vl;
}

static int
inside(const char *s)
{
	const char *lo = &P.val[0][0], *hi = lo + sizeof(P.val);

	return !s || (s >= lo && s < hi && memchr(s, 0, (size_t)(hi - s)));
}

static void
real_records(void)
{
	size_t n, first_done = 0, host_at = 0;
	int bad = 0, early = 0, outside = 0;

	ok(fcgi_parse(fcgi_apache, sizeof(fcgi_apache), &S) == FCGI_DONE, "apache: params complete");
	is_str(P.http_host, "B.Example:18765", "apache: HTTP_HOST as sent");
	is_str(P.server_name, "b.example", "apache: SERVER_NAME");
	is_str(P.docroot, "/tmp/x/srv", "apache: DOCUMENT_ROOT");
	is_str(P.script, "proxy:fcgi://localhost/tmp/x/srv/a.php",
	    "apache: SCRIPT_FILENAME as mod_proxy_fcgi sends it");
	ok(P.npairs > 20, "apache: all %u pairs walked", P.npairs);

	ok(fcgi_parse(fcgi_cgi, sizeof(fcgi_cgi), &S) == FCGI_DONE, "cgi-fcgi: params complete");
	is_str(P.http_host, "Shop.Example:8080", "cgi-fcgi: HTTP_HOST");
	is_str(P.server_name, "shop.example", "cgi-fcgi: SERVER_NAME");
	is_str(P.docroot, "/srv/shop", "cgi-fcgi: DOCUMENT_ROOT");
	is_str(P.script, "/srv/shop/index.php", "cgi-fcgi: SCRIPT_FILENAME");

	/* every prefix: what a peek sees while the records arrive */
	for (n = 0; n <= sizeof(fcgi_apache); n++) {
		enum fcgi_status s = fcgi_parse(fcgi_apache, n, &S);

		bad |= s == FCGI_BAD;
		outside |= !inside(P.http_host) || !inside(P.docroot) || !inside(P.script);
		if (s == FCGI_DONE && !first_done)
			first_done = n;
		if (P.http_host && !host_at)
			host_at = n;
		if (P.http_host && strcmp(P.http_host, "B.Example:18765"))
			early = 1;
	}
	ok(!bad, "apache: no prefix is malformed");
	ok(!outside, "apache: every attribute points into the store, NUL terminated");
	ok(!early, "apache: a prefix never yields a cut host name");
	/* the empty PARAMS record ends at sizeof - 8 (a STDIN record follows) */
	ok(first_done == sizeof(fcgi_apache) - 8, "apache: complete exactly when the empty PARAMS record is (%zu)", first_done);
	ok(host_at > 16 && host_at < 80, "apache: the host is known as soon as its pair is (%zu bytes)", host_at);
}

static void
built_records(void)
{
	static uint8_t in[3 * 65536], ps[2 * 65536];
	char longv[300];
	size_t n, pl, cut;

	/* a pair straddling two PARAMS records, padding, 4-byte lengths */
	memset(longv, 'd', sizeof(longv) - 1);
	longv[0] = '/';
	longv[sizeof(longv) - 1] = 0;
	pl = pair(ps, "HTTP_HOST", "www.example", 11);
	pl += pair(ps + pl, "DOCUMENT_ROOT", longv, strlen(longv));
	n = begin(in, 7);
	cut = pl / 2;
	n += rec(in + n, 4, 7, ps, cut, 3);
	n += rec(in + n, 4, 7, ps + cut, pl - cut, 5);
	ok(fcgi_parse(in, n, &S) == FCGI_MORE, "split: no empty PARAMS yet: more");
	is_str(P.http_host, "www.example", "split: host before the end");
	n += rec(in + n, 4, 7, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_DONE, "split: done at the empty PARAMS record");
	ok(P.docroot && strlen(P.docroot) == strlen(longv) && strcmp(P.docroot, longv) == 0,
	    "split: a 299-byte value with 4-byte length across records");
	ok(P.script == NULL && P.server_name == NULL, "split: params not sent are NULL");

	/* management record before BEGIN is skipped; a flood of them is not */
	n = rec(in, 9, 0, "", 0, 0);
	n += begin(in + n, 1);
	n += rec(in + n, 4, 1, ps, pair(ps, "SERVER_NAME", "x.example", 9), 0);
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_DONE, "GET_VALUES before BEGIN_REQUEST: skipped");
	is_str(P.server_name, "x.example", "GET_VALUES before BEGIN_REQUEST: SERVER_NAME");
	n = 0;
	for (int i = 0; i < 5; i++)
		n += rec(in + n, 9, 0, "", 0, 0);
	n += begin(in + n, 1);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "five management records first: malformed");

	/* the first value counts; a value with a NUL is not used */
	n = begin(in, 1);
	pl = pair(ps, "HTTP_HOST", "a\0b", 3);
	pl += pair(ps + pl, "HTTP_HOST", "c.example", 9);
	pl += pair(ps + pl, "SERVER_NAME", "first", 5);
	pl += pair(ps + pl, "SERVER_NAME", "second", 6);
	pl += pair(ps + pl, "SCRIPT_FILENAME", "", 0);
	n += rec(in + n, 4, 1, ps, pl, 0);
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_DONE, "duplicates: done");
	ok(P.http_host == NULL, "a host with a NUL byte in it is not used");
	is_str(P.server_name, "first", "the first SERVER_NAME counts");
	is_str(P.script, "", "an empty value is sent: empty, not NULL");

	/* params longer than 8 KiB before the ones we want, as Apache sends
	 * the client's headers first: found all the same */
	n = begin(in, 1);
	memset(longv, 'c', sizeof(longv));
	pl = 0;
	while (pl < 48000)
		pl += pair(ps + pl, "HTTP_X_PAD", longv, sizeof(longv));
	pl += pair(ps + pl, "HTTP_HOST", "b.example", 9);
	pl += pair(ps + pl, "SERVER_NAME", "a.example", 9);
	pl += pair(ps + pl, "DOCUMENT_ROOT", "/srv/a", 6);
	for (size_t o = 0; o < pl; o += 65535)
		n += rec(in + n, 4, 1, ps + o, pl - o < 65535 ? pl - o : 65535, 0);
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_DONE, "48 KB of headers first: complete");
	ok(P.docroot && strcmp(P.docroot, "/srv/a") == 0 && P.server_name &&
	    strcmp(P.server_name, "a.example") == 0 && P.http_host &&
	    strcmp(P.http_host, "b.example") == 0, "48 KB of headers first: the values after them");
	ok(S.fed == n, "48 KB of headers first: read to the empty PARAMS record (%llu of %zu bytes)",
	    (unsigned long long)S.fed, n);
}

/* The same bytes, in chunks of every size: the same result. */
static void
chunks(void)
{
	static uint8_t in[4096], ps[2048];
	static struct fcgi_stream T;
	size_t n, pl, k, o;
	int differ = 0, notdone = 0;
	char v[300];

	memset(v, 'v', sizeof(v));
	v[0] = '/';
	/* a header split from its record, a 4-byte length split, a value
	 * split across two records, padding */
	n = begin(in, 3);
	pl = pair(ps, "HTTP_X", v, 200);
	pl += pair(ps + pl, "DOCUMENT_ROOT", v, sizeof(v));
	pl += pair(ps + pl, "HTTP_HOST", "h.example", 9);
	n += rec(in + n, 4, 3, ps, 210, 7);
	n += rec(in + n, 4, 3, ps + 210, 1, 0);
	n += rec(in + n, 4, 3, ps + 211, pl - 211, 255);
	n += rec(in + n, 4, 3, "", 0, 0);
	n += rec(in + n, 5, 3, "stdin", 5, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_DONE, "chunks: whole, complete");
	for (k = 1; k <= n; k++) {
		enum fcgi_status st = FCGI_MORE;

		fcgi_init(&T);
		for (o = 0; o < n; o += k)
			st = fcgi_feed(&T, in + o, n - o < k ? n - o : k);
		notdone |= st != FCGI_DONE;
		differ |= !T.p.docroot || strlen(T.p.docroot) != sizeof(v) ||
		    memcmp(T.p.docroot, v, sizeof(v)) || !T.p.http_host ||
		    strcmp(T.p.http_host, "h.example") || T.p.npairs != S.p.npairs;
	}
	ok(!notdone, "chunks of 1 to %zu bytes: each complete", n);
	ok(!differ, "chunks of 1 to %zu bytes: the same values as at once", n);
	/* byte by byte: nothing published before its pair is whole */
	fcgi_init(&T);
	for (o = 0, differ = 0; o < n; o++) {
		fcgi_feed(&T, in + o, 1);
		differ |= T.p.docroot && strlen(T.p.docroot) != sizeof(v);
	}
	ok(!differ, "byte by byte: no cut value is ever visible");
	/* a value too long to keep: not used, the rest still parsed */
	n = begin(in, 1);
	{
		static uint8_t big[2 * FCGI_VALUE_MAX + 64], bin[2 * FCGI_VALUE_MAX + 128];
		static char bv[FCGI_VALUE_MAX];
		size_t bl, bn;

		memset(bv, 'p', sizeof(bv));
		bv[0] = '/';
		bl = pair(big, "DOCUMENT_ROOT", bv, sizeof(bv));
		bl += pair(big + bl, "SERVER_NAME", "s.example", 9);
		bn = begin(bin, 1);
		bn += rec(bin + bn, 4, 1, big, bl, 0);
		bn += rec(bin + bn, 4, 1, "", 0, 0);
		ok(fcgi_parse(bin, bn, &S) == FCGI_DONE && !P.docroot && P.server_name &&
		    strcmp(P.server_name, "s.example") == 0,
		    "a %zu-byte DOCUMENT_ROOT: not kept, the params after it are", sizeof(bv));
	}
}

static void
malformed(void)
{
	static uint8_t in[512];
	uint8_t ps[64];
	size_t n, pl;

	ok(fcgi_parse(in, 0, &S) == FCGI_MORE, "nothing yet: more");
	ok(fcgi_parse((const uint8_t *)"GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27, &S) == FCGI_BAD,
	    "HTTP, not FastCGI: malformed");
	memcpy(in, fcgi_apache, sizeof(fcgi_apache) < sizeof(in) ? sizeof(fcgi_apache) : sizeof(in));
	in[0] = 2;
	ok(fcgi_parse(in, 16, &S) == FCGI_BAD, "version 2: malformed");
	n = rec(in, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "PARAMS before BEGIN_REQUEST: malformed");
	n = rec(in, 1, 1, "1234567", 7, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "BEGIN_REQUEST of 7 bytes: malformed");
	n = rec(in, 1, 0, "12345678", 8, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "BEGIN_REQUEST with request id 0: malformed");
	n = begin(in, 1);
	n += rec(in + n, 5, 1, "x", 1, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "STDIN before the params end: malformed");
	n = begin(in, 1);
	n += rec(in + n, 4, 2, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "PARAMS of another request: malformed");
	n = begin(in, 1);
	n += rec(in + n, 2, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "ABORT_REQUEST: malformed");
	/* a value length far past the end: waiting while the stream goes on,
	 * malformed once it ended */
	n = begin(in, 1);
	pl = 0;
	ps[pl++] = 4;
	ps[pl++] = 0xff;
	ps[pl++] = 0xff;
	ps[pl++] = 0xff;
	ps[pl++] = 0xff;
	memcpy(ps + pl, "HOST", 4);
	pl += 4;
	n += rec(in + n, 4, 1, ps, pl, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_MORE, "a 2 GiB value, stream open: more");
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "a 2 GiB value, stream ended: malformed");
	n = begin(in, 1);
	n += rec(in + n, 4, 1, "\x09", 1, 0);
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "a pair cut by the end of the stream: malformed");
	/* a record whose content length runs past what arrived */
	n = begin(in, 1);
	in[n++] = 1; in[n++] = 4; in[n++] = 0; in[n++] = 1; in[n++] = 0xff; in[n++] = 0xff;
	in[n++] = 0xff; in[n++] = 0;
	ok(fcgi_parse(in, n, &S) == FCGI_MORE, "a 64 KiB record announced, none of it here: more");
	/* a 4-byte name length cut by the end of the stream */
	n = begin(in, 1);
	n += rec(in + n, 4, 1, "\x80\x00", 2, 0);
	n += rec(in + n, 4, 1, "", 0, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_BAD, "a 4-byte length cut by the end of the stream: malformed");
	/* a name length of 2^31 - 1 and nothing else: skipped while it lasts */
	n = begin(in, 1);
	n += rec(in + n, 4, 1, "\xff\xff\xff\xff\x00", 5, 0);
	ok(fcgi_parse(in, n, &S) == FCGI_MORE, "a 2 GiB name, stream open: more, nothing kept");
	ok(P.npairs == 0 && !P.http_host, "a 2 GiB name: no pair yet");
	/* a padding length with nothing after: waits */
	n = begin(in, 1);
	n += rec(in + n, 4, 1, "\x01\x01HX", 4, 255);
	ok(fcgi_parse(in, n, &S) == FCGI_MORE && P.npairs == 1, "padding still to come: more");
	/* the status stays once decided */
	n = rec(in, 4, 1, "", 0, 0);
	fcgi_parse(in, n, &S);
	ok(fcgi_feed(&S, fcgi_apache, sizeof(fcgi_apache)) == FCGI_BAD, "malformed stays malformed");
}

static void
mutations(void)
{
	static uint8_t in[8192 + 64];
	unsigned seed = 12345, i, j, bad = 0, done = 0, outside = 0;

	for (i = 0; i < 200000; i++) {
		size_t n = sizeof(fcgi_apache);

		memcpy(in, fcgi_apache, n);
		for (j = 0; j < 1 + i % 8; j++) {
			seed = seed * 1103515245u + 12345u;
			in[(seed >> 8) % n] = (uint8_t)(seed >> 20);
		}
		seed = seed * 1103515245u + 12345u;
		if (i % 3 == 0)
			n = (seed >> 8) % (n + 1);
		if (i % 17 == 0) {	/* random bytes, up to past the bound */
			n = (seed >> 4) % sizeof(in);
			for (j = 0; j < n; j++) {
				seed = seed * 1103515245u + 12345u;
				in[j] = (uint8_t)(seed >> 16);
			}
		}
		switch (fcgi_parse(in, n, &S)) {
		case FCGI_BAD: bad++; break;
		case FCGI_DONE: done++; break;
		default: break;
		}
		outside |= !inside(P.http_host) || !inside(P.server_name) || !inside(P.docroot) ||
		    !inside(P.script);
	}
	ok(!outside, "200000 mutated inputs: every attribute inside the store (%u malformed, %u complete)",
	    bad, done);
	ok(bad > 0 && done > 0, "mutations reach both the malformed and the complete ends");
}

int
main(void)
{
	real_records();
	built_records();
	chunks();
	malformed();
	mutations();
	return tap_done();
}
