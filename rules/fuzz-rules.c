// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness: any bytes as a rule file. Loads them (no includes: the
 * input must not reach the file system), then exercises what vsd and the
 * gates do with a loaded file: the dump, every query on a few VSs, queries
 * by request content (sites and content rules), and
 * rules_write(), whose text must load again into as many VSs, services,
 * rules, sites and content bindings (as the accept gate loads it); anything else aborts, a finding.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/buf.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The accept gate's query by content with requests made of the file's own
 * patterns (so the fuzzer reaches the matches), odd ones, and every caller
 * and requester up to 16.
 */
static void
attrs(const struct rules *rs)
{
	static const char *const odd[] = {
		"", ".", "..", "[", "[::1]:80", "a..b", "A.B.:", "/", "//", "/./a", "/a/../b",
		"proxy:fcgi://", "proxy:fcgi://h/a/b", "\x01", ":80",
	};
	unsigned t;
	size_t k, i;
	int c;

	(void)rules_wants_attrs(rs, -1, &t);
	for (c = 0; c < (int)rs->nservices && c < 4; c++)
		(void)rules_wants_attrs(rs, c, &t);
	for (k = 0; k < rs->ncrules && k < 16; k++) {
		const char *p = rs->crules[k].pat;
		struct rules_req_attrs a = { p, p, p };

		for (c = -1; c < (int)rs->nvs && c < 16; c++)
			(void)rules_query_attrs(rs, 0, c, c, &a);
	}
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		struct rules_req_attrs a = { odd[i], odd[i], odd[i] }, b = { odd[i], NULL, odd[i] };

		(void)rules_query_attrs(rs, 0, -1, -1, &a);
		(void)rules_query_attrs(rs, 0, -1, -1, &b);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf errs = { 0 }, out = { 0 }, text = { 0 };
	struct rules *rs = NULL, *back = NULL;
	int g, c, r;

	if (rules_load_buffer("fuzz.rules", (const char *)data, size, RULES_NO_INCLUDE,
			      &rs, &errs) == 0) {
		rules_dump(rs, &out);
		for (g = 0; g < RULES_GATE_MAX; g++)
			for (c = -1; c < (int)rs->nvs && c < 16; c++)
				for (r = -1; r < (int)rs->nvs && r < 16; r++)
					(void)rules_query(rs, (enum rules_gate)g, c, r);
		(void)rules_query_name(rs, RULES_GATE_ACCEPT, "zz-unknown", "www1");
		attrs(rs);
		rules_write(rs, &text);
		buf_reset(&errs);
		if (rules_load_buffer("written", text.p ? text.p : "", text.len,
				      RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &back, &errs) < 0 ||
		    back->nvs != rs->nvs || back->nservices != rs->nservices ||
		    back->nrules != rs->nrules || back->nsites != rs->nsites ||
		    back->ncrules != rs->ncrules) {
			fprintf(stderr, "rules_write's text does not load back:\n%s--\n%s",
				text.p ? text.p : "", errs.p ? errs.p : "");
			abort();
		}
		rules_free(back);
		rules_free(rs);
	}
	buf_free(&errs);
	buf_free(&out);
	buf_free(&text);
	return 0;
}
