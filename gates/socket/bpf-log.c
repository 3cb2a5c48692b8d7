// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libbpf's messages, the verifier's log among them, go to our logger. Shared
 * by the two BPF loaders: the socket gate's (socket.c, in vsd) and the accept
 * gate's Unix peer iterator (gates/accept/unixpeer.c, in vsd-gate).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "lib/log.h"
#include "gate-socket.h"

static int
bpf_log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[8192], *line, *save = NULL;

	if (level == LIBBPF_DEBUG && log_getverbose() < 2)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* The verifier log comes as one message; log it line by line. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *pfx = strncmp(line, "libbpf: ", 8) ? "libbpf: " : "";

		if (level == LIBBPF_WARN)
			log_warnx("%s%s", pfx, line);
		else
			log_debug("%s%s", pfx, line);
	}
	return 0;
}

void
bpf_log_init(void)
{
	libbpf_set_print(bpf_log_print);
}
