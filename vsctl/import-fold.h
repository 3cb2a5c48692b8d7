/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `vsctl import`: lines of words folded into name expressions (import-fold.c). */
#ifndef VSD_VSCTL_IMPORT_FOLD_H
#define VSD_VSCTL_IMPORT_FOLD_H

#include <stddef.h>

#include "lib/buf.h"

#define FOLD_WORDS	66

struct fold_item {
	const char *w[FOLD_WORDS];	/* the words that may hold the number */
	size_t	 nw;
	const void *data;		/* the caller's, for the line */
};

/* One folded line: words[k] is item's word k, with its group or quoted. */
typedef void (*fold_line_fn)(void *arg, const struct fold_item *item, const char **words);

/* Fold items (kept in their order: a line comes where its first item was). */
void fold_lines(const struct fold_item *items, size_t n, fold_line_fn line, void *arg);
/* 1 if s is written without quotes in a rule file. */
int fold_is_word(const char *s);

#endif
