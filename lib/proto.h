/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vsd's control protocol, over a Unix stream socket, one request per connection.
 *   request: u32 length (host order) | body
 *            body = NUL-terminated strings: the command, then key=value pairs;
 *            each command names the keys it takes and the few that may repeat
 *            (pid=1 pid=2), vsd refuses any other key and a key given twice;
 *            one fd may ride along (SCM_RIGHTS; up to PROTO_FDS_MAX are
 *            accepted, the first is used, more refuse the request).
 *   reply:   u32 status | u32 length | body (text, or JSON if json=1); status
 *            is 0 (ok) or the error class of lib/exitcode.h, vsctl's exit status
 */
#ifndef VSD_PROTO_H
#define VSD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define PROTO_REQ_MAX	(64 * 1024)
#define PROTO_REPLY_MAX	(64 * 1024 * 1024)
#define PROTO_ARGS_MAX	1024
#define PROTO_FDS_MAX	4	/* passed descriptors a request may carry */
#define PROTO_FDS_SEEN	253	/* SCM_MAX_FD: what one message can carry, to count them */

struct request {
	char	*data;			/* owns the strings argv points into */
	size_t	 len;
	int	 argc;
	char	*argv[PROTO_ARGS_MAX];	/* argv[0] is the command */
	int	 fd;			/* passed descriptor, or -1 */
	char	 why[80];		/* a formatted *why points here */
};

/* Check and split a request body in place; *why says what is wrong. */
int proto_decode(char *data, size_t len, struct request *req, const char **why);
/*
 * Refuse a key not in known (space-separated) and a key given twice unless it
 * is in repeat: -EINVAL with *why ("unknown key 'x'", "key 'x' given twice").
 */
int proto_check_keys(struct request *req, const char *known, const char *repeat,
		     const char **why);
/* The value of key, the n-th time it appears (n from 0), or NULL. */
const char *req_get_nth(const struct request *req, const char *key, int n);
#define req_get(req, key) req_get_nth(req, key, 0)
/* 1 if key has the value "1". */
int req_flag(const struct request *req, const char *key);

/* Append one string to a request body being built. */
void proto_add(struct buf *body, const char *s);
void proto_addf(struct buf *body, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int proto_send_request(int sock, const struct buf *body, int fd);
void proto_request_free(struct request *req);

/* A request as it arrives in parts, on a non-blocking socket. */
struct proto_rx {
	uint32_t len;		/* the header, once it is all there */
	size_t	 got;		/* bytes of header and body so far */
	char	*data;
	int	 fd;		/* the first descriptor that rode along, or -1 */
	int	 nfds;		/* how many rode along, in all */
};
void proto_rx_init(struct proto_rx *rx);
void proto_rx_free(struct proto_rx *rx);
/*
 * Read what has arrived. 0: the request is complete and decoded in *req
 * (which then owns its body and descriptor); -EAGAIN: more is to come;
 * -EBADMSG with *why (which may point into req->why): malformed; another
 * -errno: the connection failed.
 */
int proto_rx_step(int sock, struct proto_rx *rx, struct request *req, const char **why);

/* A whole reply, header and body, appended to out, to be sent later. */
int proto_reply_frame(struct buf *out, unsigned status, const char *body, size_t len);
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
