/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging in the OpenBSD daemon style: stderr in the foreground, else syslog. */
#ifndef VSD_LOG_H
#define VSD_LOG_H

#include <stdarg.h>

void log_init(int foreground, int verbose, const char *ident);
int  log_getverbose(void);
void vlog(int pri, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* fatalx, exiting with status (a class of lib/exitcode.h) instead of 1. */
void fatalx_status(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

#endif
