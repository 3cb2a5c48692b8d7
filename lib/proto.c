// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto.h"

static int
key_valid(const char *s, const char *eq)
{
	if (s == eq)
		return 0;
	for (; s < eq; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return 0;
	return 1;
}

int
proto_decode(char *data, size_t len, struct request *req, const char **why)
{
	size_t off = 0;

	req->argc = 0;
	if (len == 0 || data[len - 1] != '\0') {
		*why = "request is empty or not NUL-terminated";
		return -EBADMSG;
	}
	while (off < len) {
		char *s = data + off, *eq;

		if (req->argc == PROTO_ARGS_MAX) {
			*why = "too many arguments";
			return -EBADMSG;
		}
		if (req->argc > 0) {
			if (!(eq = strchr(s, '=')) || !key_valid(s, eq)) {
				*why = "argument is not key=value";
				return -EBADMSG;
			}
		} else if (*s == '\0') {
			*why = "empty command";
			return -EBADMSG;
		}
		req->argv[req->argc++] = s;
		off += strlen(s) + 1;
	}
	return 0;
}

/* 1 if the space-separated list holds the word w of length n. */
static int
in_list(const char *list, const char *w, size_t n)
{
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, " ");

		if (len == n && strncmp(p, w, n) == 0)
			return 1;
		p += len;
		p += strspn(p, " ");
	}
	return 0;
}

int
proto_check_keys(struct request *req, const char *known, const char *repeat, const char **why)
{
	int i, j;

	for (i = 1; i < req->argc; i++) {
		const char *k = req->argv[i];
		size_t n = strcspn(k, "=");

		if (!in_list(known, k, n)) {
			snprintf(req->why, sizeof(req->why), "unknown key '%.*s'", (int)(n > 32 ? 32 : n),
				 k);
			*why = req->why;
			return -EINVAL;
		}
		if (in_list(repeat, k, n))
			continue;
		for (j = 1; j < i; j++) {
			if (strncmp(req->argv[j], k, n + 1) == 0) {
				snprintf(req->why, sizeof(req->why), "key '%.*s' given twice", (int)n, k);
				*why = req->why;
				return -EINVAL;
			}
		}
	}
	return 0;
}

const char *
req_get_nth(const struct request *req, const char *key, int n)
{
	size_t klen = strlen(key);
	int i;

	for (i = 1; i < req->argc; i++) {
		if (strncmp(req->argv[i], key, klen) == 0 && req->argv[i][klen] == '=' && n-- == 0)
			return req->argv[i] + klen + 1;
	}
	return NULL;
}

int
req_flag(const struct request *req, const char *key)
{
	const char *v = req_get(req, key);

	return v && strcmp(v, "1") == 0;
}

void
proto_add(struct buf *body, const char *s)
{
	buf_add(body, s, strlen(s) + 1);
}

void
proto_addf(struct buf *body, const char *fmt, ...)
{
	char tmp[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	proto_add(body, tmp);
}

static int
write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len > 0) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
read_all(int fd, void *p, size_t len)
{
	char *c = p;

	while (len > 0) {
		ssize_t n = recv(fd, c, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

int
proto_send_request(int sock, const struct buf *body, int fd)
{
	uint32_t len = (uint32_t)body->len;
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
	struct iovec iov = { &len, sizeof(len) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (body->oom || body->len > PROTO_REQ_MAX)
		return -EMSGSIZE;
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(len))
		return -errno ? -errno : -EIO;
	return write_all(sock, body->p, body->len);
}

void
proto_rx_init(struct proto_rx *rx)
{
	memset(rx, 0, sizeof(*rx));
	rx->fd = -1;
}

void
proto_rx_free(struct proto_rx *rx)
{
	free(rx->data);
	if (rx->fd >= 0)
		close(rx->fd);
	proto_rx_init(rx);
}

/* Keep the first descriptor that rides along, close the others, count them all. */
static void
take_fds(struct msghdr *msg, struct proto_rx *rx)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int)), i, fd;

			for (i = 0; i < nfd; i++) {
				memcpy(&fd, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof(int));
				if (rx->fd < 0)
					rx->fd = fd;
				else
					close(fd);	/* only one is used */
			}
			rx->nfds += nfd;
		}
	}
}

/*
 * Whatever part of the request has arrived: the header, then the body. Each
 * read may carry descriptors, so each is a recvmsg. A non-blocking socket
 * gives -EAGAIN between parts; the caller keeps rx and calls again.
 */
int
proto_rx_step(int sock, struct proto_rx *rx, struct request *req, const char **why)
{
	/* room for as many as one message can carry (SCM_MAX_FD), so a request
	 * with too many is told so, not that its header was cut */
	union { char buf[CMSG_SPACE(sizeof(int) * PROTO_FDS_SEEN)]; struct cmsghdr align; } u;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	*why = NULL;
	for (;;) {
		int in_hdr = rx->got < sizeof(rx->len);

		if (in_hdr)
			iov = (struct iovec){ (char *)&rx->len + rx->got, sizeof(rx->len) - rx->got };
		else
			iov = (struct iovec){ rx->data + (rx->got - sizeof(rx->len)),
					      rx->len - (rx->got - sizeof(rx->len)) };
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		take_fds(&msg, rx);
		if (rx->nfds > PROTO_FDS_MAX) {
			snprintf(req->why, sizeof(req->why),
				 "too many file descriptors (%s%d, at most %d)",
				 msg.msg_flags & MSG_CTRUNC ? "more than " : "", rx->nfds,
				 PROTO_FDS_MAX);
			*why = req->why;
			return -EBADMSG;
		}
		if (n == 0 || (msg.msg_flags & MSG_CTRUNC)) {
			*why = in_hdr ? "truncated request header" : "truncated request";
			return -EBADMSG;
		}
		rx->got += (size_t)n;
		if (in_hdr && rx->got == sizeof(rx->len)) {
			if (rx->len == 0 || rx->len > PROTO_REQ_MAX) {
				*why = rx->len ? "request too large" : "empty request";
				return -EBADMSG;
			}
			if (!(rx->data = malloc(rx->len)))
				return -ENOMEM;
		}
		if (!in_hdr && rx->got == sizeof(rx->len) + rx->len)
			break;
	}
	/* complete: the request owns the body and the descriptor from here */
	memset(req, 0, sizeof(*req));
	req->data = rx->data;
	req->len = rx->len;
	req->fd = rx->fd;
	rx->data = NULL;
	rx->fd = -1;
	return proto_decode(req->data, req->len, req, why);
}

void
proto_request_free(struct request *req)
{
	free(req->data);
	req->data = NULL;
	if (req->fd >= 0)
		close(req->fd);
	req->fd = -1;
}

int
proto_reply_frame(struct buf *out, unsigned status, const char *body, size_t len)
{
	uint32_t hdr[2] = { status, (uint32_t)len };

	if (len > PROTO_REPLY_MAX)
		return -EMSGSIZE;
	buf_add(out, hdr, sizeof(hdr));
	buf_add(out, body, len);
	return out->oom ? -ENOMEM : 0;
}

int
proto_recv_reply(int sock, unsigned *status, struct buf *body)
{
	uint32_t hdr[2];
	char chunk[65536];
	size_t left;
	int r;

	if ((r = read_all(sock, hdr, sizeof(hdr))) < 0)
		return r;
	if (hdr[1] > PROTO_REPLY_MAX)
		return -EMSGSIZE;
	*status = hdr[0];
	for (left = hdr[1]; left > 0;) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);

		if ((r = read_all(sock, chunk, n)) < 0)
			return r;
		buf_add(body, chunk, n);
		left -= n;
	}
	if (!body->p)
		buf_add(body, "", 0);
	return body->oom ? -ENOMEM : 0;
}

int
proto_call(const char *path, const struct buf *req, int fd, unsigned *status,
	   struct buf *reply, int timeout_ms)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int sock, r;

	*status = PROTO_STATUS_UNSENT;
	buf_reset(reply);
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	if ((sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (timeout_ms > 0) {
		setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(sock, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = -errno;
		close(sock);
		return r;
	}
	*status = 0;
	/* vsd may refuse and close before reading (SO_PEERCRED); its reply still waits. */
	r = proto_send_request(sock, req, fd);
	if (r == 0 || r == -EPIPE || r == -ECONNRESET)
		r = proto_recv_reply(sock, status, reply);
	close(sock);
	return r;
}
