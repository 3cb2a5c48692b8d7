// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * `vsctl import`: lines of words folded into name expressions (vsrules(5),
 * "Name expressions"): items whose words differ only in one number, the
 * last digit run of their first word, found at the same place in each of
 * their other words (or those words the same), become one line with one
 * "[...]" group per word that has it, runs of three or more consecutive
 * numbers as a range: site[001..060].example ... vs site[001..060].
 * Numbers of one line have the same width, so a range is zero-padded
 * exactly when its lower bound has a leading zero; a number of more than 9
 * digits is listed, not put in a range (the rule language's bound).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import-fold.h"

#define HOLE	'\x02'	/* where the number was, in a template */

/* A word as the rule lexer reads it, unquoted: word characters, and '*' to start a host pattern. */
int
fold_is_word(const char *s)
{
	if (!*s)
		return 0;
	if (s[0] == '*' && s[1] == '.')
		s += 2;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_-.%/", *s)))
			return 0;
	return 1;
}

/* The last maximal digit run of s equal to d, or NULL. */
static const char *
last_run(const char *s, const char *d)
{
	size_t dl = strlen(d);
	const char *p, *found = NULL;

	for (p = s; *p; p++) {
		size_t n;

		if (*p < '0' || *p > '9' || (p > s && p[-1] >= '0' && p[-1] <= '9'))
			continue;
		n = strspn(p, "0123456789");
		if (n == dl && strncmp(p, d, dl) == 0)
			found = p;
	}
	return found;
}

struct fitem {
	size_t	 idx;
	char	*key;		/* templates joined by \x01, with the width */
	char	*num;		/* the number, NULL: none */
	unsigned long long v;
};

static int
cmp_fitem(const void *a, const void *b)
{
	const struct fitem *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void
make_key(struct fitem *f, const struct fold_item *it)
{
	struct buf k = { 0 };
	const char *d = NULL;
	size_t i, n;
	char num[32];

	f->num = NULL;
	/* the last digit run of the first word */
	for (i = strlen(it->w[0]); i > 0; i--)
		if (it->w[0][i - 1] >= '0' && it->w[0][i - 1] <= '9')
			break;
	for (n = 0; i > 0 && it->w[0][i - 1] >= '0' && it->w[0][i - 1] <= '9'; i--)
		n++;
	if (n > 0 && n < 19) {
		snprintf(num, sizeof(num), "%.*s", (int)n, it->w[0] + i);
		d = num;
	}
	for (i = 0; i < it->nw; i++) {
		const char *p = d ? last_run(it->w[i], d) : NULL;

		if (!fold_is_word(it->w[i])) {
			/* a string is taken as it is: no group, no fold */
			buf_printf(&k, "\x03%zu", f->idx);
			d = NULL;
			break;
		}
		if (p)
			buf_printf(&k, "%.*s%c%s\x01", (int)(p - it->w[i]), it->w[i], HOLE,
				   p + strlen(d));
		else
			buf_printf(&k, "%s\x01", it->w[i]);
	}
	if (d) {
		buf_printf(&k, "%zu", strlen(d));
		f->num = strdup(d);
		f->v = strtoull(d, NULL, 10);
	} else {
		buf_reset(&k);
		buf_printf(&k, "\x03%zu", f->idx);
	}
	f->key = k.p ? k.p : strdup("");
}

/* The choices of a group: "001..060", "1|5|7..9". */
static void
group_expr(struct buf *b, struct fitem *f, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i;

		while (j + 1 < n && f[j + 1].v == f[j].v + 1)
			j++;
		if (i)
			buf_add(b, "|", 1);
		/* the rule language's range bounds have 9 digits at most */
		if (j - i >= 2 && strlen(f[i].num) <= 9) {
			buf_printf(b, "%s..%s", f[i].num, f[j].num);
		} else {
			for (size_t k = i; k <= j; k++)
				buf_printf(b, "%s%s", k > i ? "|" : "", f[k].num);
		}
		i = j + 1;
	}
}

struct fgroup {
	size_t first;	/* the smallest item index: groups keep the items' order */
	size_t start, n;
};

static int
cmp_fgroup(const void *a, const void *b)
{
	const struct fgroup *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* A word of the folded line: the template with the group in its hole, or the word. */
static void
put_word(struct buf *out, const char *word, const char *tmpl, size_t tlen, const char *expr)
{
	const char *h = memchr(tmpl, HOLE, tlen);

	if (!h || !expr) {
		if (fold_is_word(word)) {
			buf_printf(out, "%s", word);
			return;
		}
		buf_add(out, "\"", 1);
		for (; *word; word++) {
			if (*word == '"' || *word == '\\')
				buf_add(out, "\\", 1);
			buf_add(out, word, 1);
		}
		buf_add(out, "\"", 1);
		return;
	}
	buf_printf(out, "%.*s[%s]%.*s", (int)(h - tmpl), tmpl, expr, (int)(tlen - (h + 1 - tmpl)),
		   h + 1);
}

void
fold_lines(const struct fold_item *items, size_t n, fold_line_fn line, void *arg)
{
	struct fitem *f = calloc(n ? n : 1, sizeof(*f));
	struct fgroup *g = calloc(n ? n : 1, sizeof(*g));
	size_t i, ng = 0;

	if (!f || !g)
		goto out;
	for (i = 0; i < n; i++) {
		f[i].idx = i;
		make_key(&f[i], &items[i]);
	}
	qsort(f, n, sizeof(*f), cmp_fitem);
	for (i = 0; i < n; ) {
		size_t j = i, first = f[i].idx;

		while (j + 1 < n && strcmp(f[j + 1].key, f[i].key) == 0) {
			j++;
			if (f[j].idx < first)
				first = f[j].idx;
		}
		g[ng++] = (struct fgroup){ .first = first, .start = i, .n = j - i + 1 };
		i = j + 1;
	}
	qsort(g, ng, sizeof(*g), cmp_fgroup);
	for (i = 0; i < ng; i++) {
		const struct fold_item *it = &items[f[g[i].start].idx];
		struct buf expr = { 0 }, w = { 0 };
		const char *words[FOLD_WORDS], *t = f[g[i].start].key;
		size_t k, off[FOLD_WORDS + 1];

		if (g[i].n > 1)
			group_expr(&expr, &f[g[i].start], g[i].n);
		/* each word's template, then the word */
		for (k = 0; k < it->nw; k++) {
			const char *e = g[i].n > 1 ? strchr(t, '\x01') : NULL;

			off[k] = w.len;
			put_word(&w, it->w[k], t, e ? (size_t)(e - t) : 0, expr.p);
			buf_add(&w, "", 1);
			if (e)
				t = e + 1;
		}
		for (k = 0; k < it->nw; k++)
			words[k] = w.p + off[k];
		line(arg, it, words);
		buf_free(&expr);
		buf_free(&w);
	}
out:
	for (i = 0; f && i < n; i++) {
		free(f[i].key);
		free(f[i].num);
	}
	free(f);
	free(g);
}
