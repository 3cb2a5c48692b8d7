// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "lib/netrate.h"
#include "gates/socket/socket.h"
#include "state.h"

#define STATE_MAX	(64 * 1024 * 1024)

static int
parse_field(struct vs *vs, const char *key, const char *val, const char **why)
{
	uint64_t v;
	int r;

	if (strcmp(key, "net-dev") == 0) {
		if ((*why = netdev_name_why(val)))
			return -EINVAL;
		snprintf(vs->net.dev, sizeof(vs->net.dev), "%s", val);
		return 0;
	}
	if ((r = parse_u64(val, 0, UINT64_MAX, &v, why)) < 0)
		return r;
	if (strcmp(key, "id") == 0 && v > 0 && v <= UINT32_MAX)
		vs->id = (uint32_t)v;
	else if (strcmp(key, "cpu") == 0 && v > 0 && v <= BP_MAX)
		vs->lim.cpu = (unsigned)v;
	else if (strcmp(key, "cpu-max") == 0 && v <= BP_MAX)
		vs->lim.cpu_max = (unsigned)v;
	else if (strcmp(key, "mem") == 0)
		vs->lim.mem_max = v;
	else if (strcmp(key, "pids") == 0)
		vs->lim.pids_max = v;
	else if (strcmp(key, "tos") == 0 && v <= 255) {
		vs->gate.flags |= VSD_CFG_TOS;
		vs->gate.tos = (uint8_t)v;
	} else if (strcmp(key, "mark") == 0 && v <= UINT32_MAX) {
		vs->gate.flags |= VSD_CFG_MARK;
		vs->gate.mark = (uint32_t)v;
	} else if (strcmp(key, "prio") == 0 && v <= UINT32_MAX) {
		vs->gate.flags |= VSD_CFG_PRIO;
		vs->gate.priority = (uint32_t)v;
	} else if (strcmp(key, "net-share") == 0 && v > 0 && v <= BP_MAX) {
		vs->net.share = (unsigned)v;
	} else if (strcmp(key, "net-max") == 0 && v <= NET_RATE_MAX) {
		vs->net.max = v;
	} else if (strcmp(key, "net-rate") == 0 && v >= NET_RATE_MIN && v <= NET_RATE_MAX) {
		vs->net.rate = v;
	} else if (strcmp(key, "net-class") == 0 && v >= 0x10 && v <= 0xffef) {
		vs->net.minor = (uint16_t)v;
	} else {
		*why = "unknown key or value out of range";
		return -EINVAL;
	}
	return 0;
}

static int
parse_vs(char *rest, struct registry *reg, const char **why)
{
	char *tok, *save, *eq;
	struct vs *vs;
	int r;

	if (!(tok = strtok_r(rest, " ", &save)) || !vs_name_valid(tok)) {
		*why = "bad VS name";
		return -EINVAL;
	}
	if (reg_find(reg, tok)) {
		*why = "duplicate VS";
		return -EINVAL;
	}
	if (!(vs = calloc(1, sizeof(*vs))))
		return -ENOMEM;
	vs->drift_n = -1;	/* its files not read back yet (vsd/drift.c) */
	snprintf(vs->name, sizeof(vs->name), "%s", tok);
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (!(eq = strchr(tok, '='))) {
			*why = "expected key=value";
			free(vs);
			return -EINVAL;
		}
		*eq = '\0';
		if ((r = parse_field(vs, tok, eq + 1, why)) < 0) {
			free(vs);
			return r;
		}
	}
	if (vs->net.dev[0] && (!vs->net.share || !vs->net.rate || !vs->net.minor)) {
		*why = "net-dev without net-share, net-rate or net-class";
		free(vs);
		return -EINVAL;
	}
	if (vs->id == 0 || vs->lim.cpu == 0 || reg_find_id(reg, vs->id)) {
		*why = vs->id == 0 || reg_find_id(reg, vs->id) ? "missing or duplicate id" : "missing cpu";
		free(vs);
		return -EINVAL;
	}
	if ((r = reg_add(reg, vs)) < 0)
		free(vs);
	return r;
}

int
state_parse(const char *text, struct registry *reg, int *line, const char **why)
{
	char *copy, *p, *nl;
	uint64_t next = 0;
	int r = 0, header = 0;

	*line = 0;
	*why = NULL;
	if (!(copy = strdup(text)))
		return -ENOMEM;
	for (p = copy; *p; p = nl) {
		if ((nl = strchr(p, '\n')))
			*nl++ = '\0';
		else
			nl = p + strlen(p);
		(*line)++;
		if (*p == '\0' || *p == '#')
			continue;
		if (!header) {
			if (strcmp(p, "vsd-state 1") != 0) {
				*why = "not a vsd state file of version 1";
				r = -EINVAL;
				break;
			}
			header = 1;
		} else if (strncmp(p, "next-id ", 8) == 0) {
			if ((r = parse_u64(p + 8, 1, UINT32_MAX, &next, why)) < 0)
				break;
		} else if (strncmp(p, "vs ", 3) == 0) {
			if ((r = parse_vs(p + 3, reg, why)) < 0)
				break;
		} else {
			*why = "unknown line";
			r = -EINVAL;
			break;
		}
	}
	free(copy);
	if (r == 0 && next > reg->next_id)
		reg->next_id = (uint32_t)next;
	return r;
}

void
state_format(const struct registry *reg, struct buf *out)
{
	size_t i;

	buf_printf(out, "vsd-state 1\nnext-id %" PRIu32 "\n", reg->next_id ? reg->next_id : 1);
	for (i = 0; i < reg->n; i++) {
		const struct vs *vs = reg->v[i];

		buf_printf(out, "vs %s id=%" PRIu32 " cpu=%u cpu-max=%u mem=%" PRIu64 " pids=%" PRIu64,
			   vs->name, vs->id, vs->lim.cpu, vs->lim.cpu_max,
			   vs->lim.mem_max, vs->lim.pids_max);
		/* Socket gate settings, only those that are set. */
		if (vs->gate.flags & VSD_CFG_TOS)
			buf_printf(out, " tos=%u", vs->gate.tos);
		if (vs->gate.flags & VSD_CFG_MARK)
			buf_printf(out, " mark=%" PRIu32, vs->gate.mark);
		if (vs->gate.flags & VSD_CFG_PRIO)
			buf_printf(out, " prio=%" PRIu32, vs->gate.priority);
		/* The network share (vsd/netshare.c), if any. */
		if (vs->net.dev[0])
			buf_printf(out, " net-dev=%s net-share=%u net-max=%" PRIu64 " net-rate=%"
				   PRIu64 " net-class=%u", vs->net.dev, vs->net.share, vs->net.max,
				   vs->net.rate, vs->net.minor);
		buf_printf(out, "\n");
	}
}

int
state_load(const char *dir, struct registry *reg)
{
	char path[4096], *text;
	const char *why;
	struct stat st;
	FILE *f;
	int r, line;

	if ((r = path_fmt(path, sizeof(path), "%s/%s", dir, STATE_FILE)) < 0)
		return r;
	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fileno(f), &st) < 0 || st.st_size > STATE_MAX) {
		fclose(f);
		return -EFBIG;
	}
	if (!(text = calloc(1, (size_t)st.st_size + 1))) {
		fclose(f);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		r = -EIO;
	} else if ((r = state_parse(text, reg, &line, &why)) < 0) {
		log_warnx("%s:%d: %s", path, line, why ? why : strerror(-r));
	}
	free(text);
	fclose(f);
	return r;
}

int
state_save(const char *dir, const struct registry *reg)
{
	struct buf b = { 0 };
	int r;

	state_format(reg, &b);
	if (b.oom) {
		buf_free(&b);
		return -ENOMEM;
	}
	r = write_file_atomic(dir, STATE_FILE, b.p, b.len);
	if (r < 0)
		log_warnx("save state in %s: %s", dir, strerror(-r));
	buf_free(&b);
	return r;
}
