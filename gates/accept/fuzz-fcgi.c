// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness: any bytes as the start of a FastCGI connection, as the
 * accept gate peeks at it (gates/accept/fcgi.c), then the classifier
 * (rules_query_attrs()) on what it kept, against a fixed file of sites and
 * content rules. Findings, besides what ASan and UBSan report:
 *   - the stream fed in chunks (sizes taken from the input's first bytes)
 *     gives another status, other values or another pair count than the
 *     same bytes at once;
 *   - a value not NUL terminated inside its slot, or as long as the slot;
 *   - a request whose document root names a site classified elsewhere
 *     because of its host name (the document root wins, vsrules(5)).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgi.h"
#include "lib/buf.h"
#include "rules/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char rules_text[] =
	"vs www1 cpu 10%\n"
	"vs www2 cpu 10% priority 10\n"
	"vs php cpu 5%\n"
	"vs front cpu 5%\n"
	"vs odd cpu 5%\n"
	"service fpm home php unclassified odd command \"/bin/true\"\n"
	"site a.example alias www.a.example docroot /srv/a vs www1\n"
	"site b.example docroot /srv/b vs www2\n"
	"site *.c.example docroot \"/srv/c d\" vs www1\n"
	"(accept, *, req = front, host = *.example) => (php)\n"
	"(accept, *, docroot = /srv/b/deep) => (www1)\n";

static struct rules *rs;
static struct fcgi_stream whole, part;

static int
same(const char *x, const char *y)
{
	return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

static void
check_value(const struct fcgi_stream *s, const char *v, int slot)
{
	if (v && (v != s->p.val[slot] || !memchr(v, 0, FCGI_VALUE_MAX)))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum fcgi_status a, b = FCGI_MORE;
	struct rules_req_attrs at, dr;
	size_t o, k, step;
	int req, vs, vd;

	if (!rs) {
		struct buf errs = { 0 };

		if (rules_load_buffer("fuzz-fcgi.rules", rules_text, sizeof(rules_text) - 1,
				      RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &rs, &errs) < 0) {
			fprintf(stderr, "%s", errs.p ? errs.p : "");
			abort();
		}
		buf_free(&errs);
	}
	/* the first byte: the size of the chunks (1 to 256), the rest the stream */
	step = size ? (size_t)data[0] + 1 : 1;
	if (size) {
		data++;
		size--;
	}
	a = fcgi_parse(data, size, &whole);
	fcgi_init(&part);
	for (o = 0; o < size; o += k) {
		k = size - o < step ? size - o : step;
		b = fcgi_feed(&part, data + o, k);
	}
	if (a != b || whole.p.npairs != part.p.npairs ||
	    !same(whole.p.http_host, part.p.http_host) ||
	    !same(whole.p.server_name, part.p.server_name) ||
	    !same(whole.p.docroot, part.p.docroot) || !same(whole.p.script, part.p.script)) {
		fprintf(stderr, "in chunks of %zu: status %d, at once %d\n", step, b, a);
		abort();
	}
	check_value(&whole, whole.p.http_host, FCGI_HTTP_HOST);
	check_value(&whole, whole.p.server_name, FCGI_SERVER_NAME);
	check_value(&whole, whole.p.docroot, FCGI_DOCUMENT_ROOT);
	check_value(&whole, whole.p.script, FCGI_SCRIPT_FILENAME);
	if (a == FCGI_BAD)
		return 0;
	/* the classifier, as the gate asks it (hold.c), from every requester */
	at.host = whole.p.server_name ? whole.p.server_name : whole.p.http_host;
	at.docroot = whole.p.docroot;
	at.script = whole.p.script;
	dr = at;
	dr.host = NULL;
	for (req = -1; req < (int)rs->nvs; req++) {
		vs = rules_query_attrs(rs, 0, 2, req, &at);
		vd = rules_query_attrs(rs, 0, 2, req, &dr);
		if (vs != RULES_VS_UNKNOWN && (vs < 0 || (size_t)vs >= rs->nvs))
			abort();
		if (vd != RULES_VS_UNKNOWN && vd != vs) {
			fprintf(stderr, "docroot %s gives %d, with host %s %d\n",
				dr.docroot ? dr.docroot : "-", vd, at.host ? at.host : "-", vs);
			abort();
		}
	}
	return 0;
}
