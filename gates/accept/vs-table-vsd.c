// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The VS table from vsd. vsd pushes it, with its rules, on our status socket
 * whenever either changes, and waits for our answer before it answers the
 * command that changed them (vsd/gate-push.c): gate_push() reads it between
 * two notifications. We ask vsd ourselves only at start and on "refresh"
 * (vsd-ask.c, vsd/cmd-gate.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "gate.h"
#include "lib/log.h"

/* vsd writes a push at once after its request line */
#define GATE_PUSH_TIMEOUT_MS	1000
#define GATE_PUSH_MAX		(64u << 20)


static int
read_all(int fd, char *p, size_t len)
{
	struct timeval tv = { 0, GATE_PUSH_TIMEOUT_MS * 1000 };
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len > 0) {
		if ((n = read(fd, p, len)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

struct pushed_rules {
	const char *text;
	size_t len;
};

static int
rules_pushed(void *arg, struct rules **rs)
{
	struct pushed_rules *pr = arg;

	return gate_rules_load_text("vsd", pr->text, pr->len, rs);
}

void
gate_push(struct gate *g, int fd, const char *cmd)
{
	struct vs_table fresh;
	struct pushed_rules pr;
	unsigned long tlen, rlen;
	char *p = NULL, ack[80];
	int r;

	if (sscanf(cmd, "push %lu %lu", &tlen, &rlen) != 2 || tlen > GATE_PUSH_MAX ||
	    rlen > GATE_PUSH_MAX)
		r = -EINVAL;
	else if (!(p = malloc(tlen + rlen + 2)))
		r = -ENOMEM;
	else if ((r = read_all(fd, p, tlen)) == 0 &&
		 (r = read_all(fd, p + tlen + 1, rlen)) == 0) {
		p[tlen] = p[tlen + 1 + rlen] = '\0';
		pr = (struct pushed_rules){ p + tlen + 1, rlen };
		if ((r = vs_table_parse(&fresh, p)) == 0) {
			gate_install(g, &fresh, 1, rules_pushed, &pr);
			g->vsd_pushes++;
		}
	}
	if (r < 0)
		log_warnx("a VS table pushed by vsd (\"%.40s\") refused: %s; the one in force stays",
			  cmd, r == -EPIPE ? "cut short" : strerror(-r));
	/* the answer says the table is in force: vsd answers its client then */
	snprintf(ack, sizeof(ack), r < 0 ? "error %s\n" : "ok\n", strerror(-r));
	send(fd, ack, strlen(ack), MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
	free(p);
}
