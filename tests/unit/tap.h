/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal TAP output for the C unit tests (automake's tap-driver reads it). */
#ifndef VSD_TESTS_TAP_H
#define VSD_TESTS_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...) do {						\
	int ok_c_ = !!(cond);						\
	printf("%sok %d - ", ok_c_ ? "" : "not ", ++tap_n);		\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	if (!ok_c_) {							\
		tap_failed++;						\
		printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	}								\
} while (0)

#define is_str(got, want, ...) do {					\
	const char *g_ = (got), *w_ = (want);				\
	int e_ = g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_;		\
	ok(e_, __VA_ARGS__);						\
	if (!e_)							\
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
