/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vsd's control protocol, over a Unix stream socket, one request per connection.
 *   request: u32 length (host order) | body
 *            body = NUL-terminated strings: the command, then key=value pairs
 *            (a key may repeat, e.g. pid=1 pid=2); one fd may ride along (SCM_RIGHTS).
 *   reply:   u32 status (0 ok) | u32 length | body (text, or JSON if json=1)
 */
#ifndef VSD_PROTO_H
#define VSD_PROTO_H

#include <stddef.h>

#include "buf.h"

#define PROTO_REQ_MAX	(64 * 1024)
#define PROTO_REPLY_MAX	(64 * 1024 * 1024)
#define PROTO_ARGS_MAX	1024

struct request {
	char	*data;			/* owns the strings argv points into */
	size_t	 len;
	int	 argc;
	char	*argv[PROTO_ARGS_MAX];	/* argv[0] is the command */
	int	 fd;			/* passed descriptor, or -1 */
};

/* Check and split a request body in place; *why says what is wrong. */
int proto_decode(char *data, size_t len, struct request *req, const char **why);
/* The value of key, the n-th time it appears (n from 0), or NULL. */
const char *req_get_nth(const struct request *req, const char *key, int n);
#define req_get(req, key) req_get_nth(req, key, 0)
/* 1 if key has the value "1". */
int req_flag(const struct request *req, const char *key);

/* Append one string to a request body being built. */
void proto_add(struct buf *body, const char *s);
void proto_addf(struct buf *body, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int proto_send_request(int sock, const struct buf *body, int fd);
/* Receive one request; on a malformed one returns -EBADMSG and sets *why. */
int proto_recv_request(int sock, struct request *req, const char **why);
void proto_request_free(struct request *req);

int proto_send_reply(int sock, unsigned status, const char *body, size_t len);
int proto_recv_reply(int sock, unsigned *status, struct buf *body);

/* *status while no request has gone out: proto_call could not connect. */
#define PROTO_STATUS_UNSENT	(~0u)
/*
 * One request on its own connection to the control socket at path, passing fd
 * if >= 0; the reply body replaces *reply. timeout_ms > 0 bounds each send,
 * receive and the connect. Returns 0 with *status set, or -errno; a failure to
 * connect leaves *status at PROTO_STATUS_UNSENT.
 */
int proto_call(const char *path, const struct buf *req, int fd, unsigned *status,
	       struct buf *reply, int timeout_ms);

#endif
