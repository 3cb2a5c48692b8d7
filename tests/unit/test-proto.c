// SPDX-License-Identifier: GPL-2.0-or-later
/* Decoding of requests, including malformed and truncated ones, over a real socketpair. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/proto.h"
#include "tap.h"

static int
decode(const char *data, size_t len, struct request *req)
{
	static char copy[256];
	const char *why;

	memcpy(copy, data, len);
	return proto_decode(copy, len, req, &why);
}

static void
bodies(void)
{
	struct request req;

	ok(decode("create\0name=www1\0cpu=50%", 25, &req) == 0 && req.argc == 3, "good request");
	is_str(req_get(&req, "cpu"), "50%", "value of cpu");
	ok(req_get(&req, "cp") == NULL && req_get(&req, "name=") == NULL, "no prefix matches");
	ok(decode("attach\0name=a\0pid=1\0pid=2", 26, &req) == 0, "repeated keys");
	is_str(req_get_nth(&req, "pid", 1), "2", "second pid");
	ok(req_get_nth(&req, "pid", 2) == NULL, "no third pid");
	ok(decode("list\0json=1", 12, &req) == 0 && req_flag(&req, "json"), "flag");
	ok(decode("", 0, &req) == -EBADMSG, "empty body");
	ok(decode("list", 4, &req) == -EBADMSG, "not NUL-terminated");
	ok(decode("\0", 1, &req) == -EBADMSG, "empty command");
	ok(decode("create\0name", 12, &req) == -EBADMSG, "argument without =");
	ok(decode("create\0=x", 10, &req) == -EBADMSG, "empty key");
	ok(decode("create\0NAME=x", 14, &req) == -EBADMSG, "upper-case key");
	ok(decode("create\0a b=x", 13, &req) == -EBADMSG, "key with a space");
	ok(decode("create\0\0", 8, &req) == -EBADMSG, "empty argument");
}

/* Each command's keys: unknown ones and repeats (but those allowed) are refused. */
static void
keys(void)
{
	const char *why = NULL;
	struct request req;

	decode("attach\0name=a\0pid=1\0pid=2\0json=1", 33, &req);
	ok(proto_check_keys(&req, "name pid json", "pid", &why) == 0, "known keys, pid repeated");
	decode("create\0name=a\0cpu=1\0cpu=2", 26, &req);
	ok(proto_check_keys(&req, "name cpu", "", &why) == -EINVAL, "a key given twice");
	is_str(why, "key 'cpu' given twice", "says which");
	decode("create\0name=a\0cpux=1", 21, &req);
	ok(proto_check_keys(&req, "name cpu cpu-max", "", &why) == -EINVAL, "an unknown key");
	is_str(why, "unknown key 'cpux'", "says which");
	decode("create\0cp=1", 12, &req);
	ok(proto_check_keys(&req, "name cpu", "", &why) == -EINVAL, "a prefix of a key is unknown");
	decode("create\0cpu-max=1\0cpu=1", 23, &req);
	ok(proto_check_keys(&req, "cpu cpu-max", "", &why) == 0, "cpu after cpu-max is no repeat");
}

/*
 * Receive one whole request from a blocking socket, as vsd's event loop
 * does in steps: -EBADMSG with *why for a malformed or truncated one.
 */
static int
recv_request(int sock, struct request *req, const char **why)
{
	struct proto_rx rx;
	int r;

	memset(req, 0, sizeof(*req));
	req->fd = -1;
	proto_rx_init(&rx);
	r = proto_rx_step(sock, &rx, req, why);
	if (r == -EAGAIN || r == -EWOULDBLOCK) {
		*why = "truncated request";
		r = -EBADMSG;
	}
	proto_rx_free(&rx);
	return r;
}

/* Send raw bytes, then read them as vsd would. */
static int
over_socket(const void *raw, size_t len, int close_after, const char **why)
{
	struct request req;
	int sv[2], r;

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	if (len)
		r = (int)write(sv[0], raw, len);
	if (close_after)
		close(sv[0]);
	r = recv_request(sv[1], &req, why);
	proto_request_free(&req);
	if (!close_after)
		close(sv[0]);
	close(sv[1]);
	return r;
}

static void
framing(void)
{
	struct { uint32_t len; char body[12]; } good = { 12, "list\0json=1" }, big = { PROTO_REQ_MAX + 1, "" },
		zero = { 0, "" }, shortb = { 100, "list" };
	struct buf b = { 0 };
	struct request req;
	const char *why;
	int sv[2];

	ok(over_socket(&good, 4 + 12, 1, &why) == 0, "framed request");
	ok(over_socket(&big, 4, 1, &why) == -EBADMSG, "oversized length refused before reading");
	ok(over_socket(&zero, 4, 1, &why) == -EBADMSG, "zero length");
	ok(over_socket(&shortb, 4 + 5, 1, &why) == -EBADMSG, "truncated body");
	ok(over_socket("ab", 2, 1, &why) == -EBADMSG, "truncated header");
	ok(over_socket("", 0, 1, &why) == -EBADMSG, "nothing at all");

	/* A descriptor rides along with the request. */
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	proto_add(&b, "exec-self");
	proto_add(&b, "name=www1");
	ok(proto_send_request(sv[0], &b, 1) == 0, "send with fd");
	ok(recv_request(sv[1], &req, &why) == 0 && req.fd >= 0 && req.argc == 2, "fd received");
	proto_request_free(&req);
	close(sv[0]);
	close(sv[1]);
	buf_free(&b);
}

static void
replies(void)
{
	struct buf body = { 0 };
	unsigned status;
	int sv[2];

	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	ok(proto_reply_frame(&body, 1, "no such VS\n", 11) == 0 &&
	    write(sv[0], body.p, body.len) == (ssize_t)body.len, "reply framed and sent");
	buf_reset(&body);
	ok(proto_recv_reply(sv[1], &status, &body) == 0 && status == 1, "error reply");
	is_str(body.p, "no such VS\n", "error body");
	close(sv[0]);
	buf_reset(&body);
	ok(proto_recv_reply(sv[1], &status, &body) == -ECONNRESET, "reply cut off");
	close(sv[1]);
	buf_free(&body);
}

int
main(void)
{
	bodies();
	keys();
	framing();
	replies();
	return tap_done();
}
