// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What one step of an apply changes, field by field, old -> new: the report
 * of `vsctl apply` and `vsctl reload`, and above all of their --dry-run,
 * which is how an operator reads a rule file's effect before making it.
 * The field names are those of `vsctl create` (text) and of `vsctl show
 * --json` (JSON), so either can be compared with what show prints.
 */
#include <inttypes.h>
#include <stdio.h>

#include "apply.h"
#include "gates/socket/socket.h"

enum fkind { F_PCT, F_SIZE, F_NUM };

static const struct field {
	const char *text, *json;
	enum fkind kind;
} fields[] = {
	{ "cpu", "cpu", F_PCT }, { "cpu-max", "cpu_max", F_PCT }, { "mem", "mem_max", F_SIZE },
	{ "pids", "pids_max", F_NUM }, { "tos", "tos", F_NUM }, { "mark", "mark", F_NUM },
	{ "priority", "priority", F_NUM },
};

struct fval {
	int	 set;	/* 0: none (no limit, gate setting left alone) */
	uint64_t v;
};

static struct fval
get(size_t i, const struct vs_limits *l, const struct gate_socket_cfg *g)
{
	switch (i) {
	case 0: return (struct fval){ l->cpu != 0, l->cpu };
	case 1: return (struct fval){ l->cpu_max != 0, l->cpu_max };
	case 2: return (struct fval){ l->mem_max != 0, l->mem_max };
	case 3: return (struct fval){ l->pids_max != 0, l->pids_max };
	case 4: return (struct fval){ !!(g->flags & VSD_CFG_TOS), g->tos };
	case 5: return (struct fval){ !!(g->flags & VSD_CFG_MARK), g->mark };
	default: return (struct fval){ !!(g->flags & VSD_CFG_PRIO), g->priority };
	}
}

static void
put_text(struct buf *out, enum fkind k, struct fval f)
{
	char t[32];

	if (!f.set)
		buf_printf(out, "none");
	else if (k == F_PCT)
		buf_printf(out, "%s", fmt_percent((unsigned)f.v, t, sizeof(t)));
	else if (k == F_SIZE)
		buf_printf(out, "%s", fmt_size(f.v, t, sizeof(t)));
	else
		buf_printf(out, "%" PRIu64, f.v);
}

/* As vsctl show --json writes it: percent as a number, bytes, or null. */
static void
put_json(struct buf *out, enum fkind k, struct fval f)
{
	if (!f.set)
		buf_printf(out, "null");
	else if (k == F_PCT && f.v % BP_PER_PCT)
		buf_printf(out, "%" PRIu64 ".%02" PRIu64, f.v / BP_PER_PCT, f.v % BP_PER_PCT);
	else if (k == F_PCT)
		buf_printf(out, "%" PRIu64, f.v / BP_PER_PCT);
	else
		buf_printf(out, "%" PRIu64, f.v);
}

void
apply_diff(const struct vs_limits *old, const struct gate_socket_cfg *gold,
	   const struct vs_limits *new, const struct gate_socket_cfg *gnew, int flags,
	   struct buf *out)
{
	size_t i, n = 0;

	if (flags & DIFF_JSON)
		buf_printf(out, "{");
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		struct fval a = get(i, old, gold), b = get(i, new, gnew);

		if (a.set == b.set && a.v == b.v)
			continue;
		if (flags & DIFF_JSON) {
			buf_printf(out, "%s\"%s\": {\"old\": ", n ? ", " : "", fields[i].json);
			put_json(out, fields[i].kind, a);
			buf_printf(out, ", \"new\": ");
			put_json(out, fields[i].kind, b);
			buf_printf(out, "}");
		} else {
			buf_printf(out, "%s%s ", n ? ", " : " ", fields[i].text);
			if (flags & DIFF_OLD) {
				put_text(out, fields[i].kind, a);
				buf_printf(out, " -> ");
			}
			put_text(out, fields[i].kind, b);
		}
		n++;
	}
	if (flags & DIFF_JSON)
		buf_printf(out, "}");
}
