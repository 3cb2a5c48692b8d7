// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness: any bytes as a rule file. Loads them (no includes: the
 * input must not reach the file system), then exercises what vsd and the
 * gates do with a loaded file: the dump, every query on a few VSs, and
 * rules_write(), whose text must load again into as many VSs, services and
 * rules (as the accept gate loads it); anything else aborts, a finding.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/buf.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
		rules_write(rs, &text);
		buf_reset(&errs);
		if (rules_load_buffer("written", text.p ? text.p : "", text.len,
				      RULES_NO_INCLUDE | RULES_NO_PERM_CHECK, &back, &errs) < 0 ||
		    back->nvs != rs->nvs || back->nservices != rs->nservices ||
		    back->nrules != rs->nrules) {
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
