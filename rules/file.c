// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reading rule files: the security checks on the file itself (the rule file
 * decides which VS is charged for what, so a file others can write is
 * refused; open.c checks the path to it), include cycles, and include-once (a plans file included by several site files is read once).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "ctx.h"

static int
read_all(int fd, size_t size, char **out, size_t *len)
{
	char *data = malloc(size + 1);
	size_t got = 0;

	if (!data)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = read(fd, data + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			free(data);
			return r;
		}
		if (n == 0)
			break;		/* shrank while we read: take what is there */
		got += (size_t)n;
	}
	data[got] = '\0';
	*out = data;
	*len = got;
	return 0;
}

static int
check_file(struct rules_ctx *c, const struct rules_loc *from, const char *path,
	   const struct stat *st)
{
	int i;

	if (!(c->flags & RULES_NO_PERM_CHECK) && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		const char *what = (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ?
			 "group- and world-writable" :
			 st->st_mode & S_IWGRP ? "group-writable" : "world-writable";

		if (c->flags & RULES_PERM_WARN) {
			buf_printf(c->errs, "%s: warning: %s (mode %04o): vsd refuses to apply a "
				   "rule file others can write\n", path, what,
				   (unsigned)(st->st_mode & 07777));
		} else {
			file_err(c, from, path, "refused: %s (mode %04o); only its owner may "
				 "write a rule file", what, (unsigned)(st->st_mode & 07777));
			return -EPERM;
		}
	}
	if (!(c->flags & RULES_NO_PERM_CHECK) && st->st_uid != c->owner &&
	    ((c->flags & RULES_OWNER_ONLY) || st->st_uid != 0) && (c->flags & RULES_PERM_WARN)) {
		buf_printf(c->errs, "%s: warning: owned by uid %u: vsd applies only files that "
			   "belong to root or to whoever applies them\n", path,
			   (unsigned)st->st_uid);
	} else if (!(c->flags & RULES_NO_PERM_CHECK) && st->st_uid != c->owner &&
	    ((c->flags & RULES_OWNER_ONLY) || st->st_uid != 0)) {
		if (c->flags & RULES_OWNER_ONLY)
			file_err(c, from, path, "refused: owned by uid %u; vsd reads for uid %u "
				 "only files uid %u owns", (unsigned)st->st_uid,
				 (unsigned)c->owner, (unsigned)c->owner);
		else
			file_err(c, from, path, "refused: owned by uid %u; a rule file must "
				 "belong to root or to uid %u, who loads it",
				 (unsigned)st->st_uid, (unsigned)c->owner);
		return -EPERM;
	}
	for (i = 0; i < c->depth; i++) {
		struct buf chain = { 0 };
		int j;

		if (c->stack[i].dev != st->st_dev || c->stack[i].ino != st->st_ino)
			continue;
		for (j = i; j < c->depth; j++)
			buf_printf(&chain, "%s -> ", c->stack[j].path);
		buf_printf(&chain, "%s", path);
		rerr(c, from, "include cycle: %s", chain.p ? chain.p : path);
		buf_free(&chain);
		return -ELOOP;
	}
	if (st->st_size > RULES_FILE_MAX) {
		file_err(c, from, path, "too large (over %u MiB)", RULES_FILE_MAX >> 20);
		return -EFBIG;
	}
	return 0;
}

int
load_file(struct rules_ctx *c, const char *path, const struct rules_loc *from)
{
	struct stat st;
	struct incl *done;
	const char *kept;
	char *data = NULL;
	size_t len = 0, i;
	int fd, r;

	if (c->depth >= RULES_INCLUDE_DEPTH) {
		file_err(c, from, path, "includes nest deeper than %d files", RULES_INCLUDE_DEPTH);
		return -ELOOP;
	}
	/* the checks below are on the opened file, which open.c made sure
	 * nobody else could have put there */
	if ((fd = open_rule_file(c, from, path, &st)) < 0)
		return fd;
	if ((r = check_file(c, from, path, &st)) < 0) {
		close(fd);
		return r;
	}
	for (i = 0; i < c->ndone; i++) {
		if (c->done[i].dev == st.st_dev && c->done[i].ino == st.st_ino) {
			close(fd);
			return 0;
		}
	}
	r = read_all(fd, (size_t)st.st_size, &data, &len);
	close(fd);
	if (r < 0) {
		file_err(c, from, path, "cannot read: %s", strerror(-r));
		if (r == -ENOMEM)
			c->oom = 1;
		return r;
	}
	kept = keep_path(c, path);
	c->stack[c->depth].dev = st.st_dev;
	c->stack[c->depth].ino = st.st_ino;
	c->stack[c->depth].path = kept;
	c->depth++;
	parse_text(c, kept, data, len);
	c->depth--;
	free(data);
	done = vec_push(c, &c->done, &c->ndone, &c->cdone, sizeof(*done));
	if (done) {
		done->dev = st.st_dev;
		done->ino = st.st_ino;
		done->path = kept;
	}
	return c->oom ? -ENOMEM : 0;
}

int
load_buffer(struct rules_ctx *c, const char *name, const char *data, size_t len)
{
	parse_text(c, keep_path(c, name), data, len);
	return c->oom ? -ENOMEM : 0;
}
