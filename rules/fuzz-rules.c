// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer harness: any bytes as a rule file. Loads them (no includes: the
 * input must not reach the file system), then exercises what vsd and the
 * gates do with a loaded file: the dump and every query on a few VSs.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf errs = { 0 }, out = { 0 };
	struct rules *rs = NULL;
	int g, c, r;

	if (rules_load_buffer("fuzz.rules", (const char *)data, size, RULES_NO_INCLUDE,
			      &rs, &errs) == 0) {
		rules_dump(rs, &out);
		for (g = 0; g < RULES_GATE_MAX; g++)
			for (c = -1; c < (int)rs->nvs && c < 16; c++)
				for (r = -1; r < (int)rs->nvs && r < 16; r++)
					(void)rules_query(rs, (enum rules_gate)g, c, r);
		(void)rules_query_name(rs, RULES_GATE_ACCEPT, "zz-unknown", "www1");
		rules_free(rs);
	}
	buf_free(&errs);
	buf_free(&out);
	return 0;
}
