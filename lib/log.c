// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int log_foreground = 1;
static int log_verbose;
static const char *log_ident = "vsd";

void
log_init(int foreground, int verbose, const char *ident)
{
	log_foreground = foreground;
	log_verbose = verbose;
	log_ident = ident;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	tzset();
}

int
log_getverbose(void)
{
	return log_verbose;
}

/*
 * One line to stderr in one write(2): a gated service shares the
 * supervisor's stderr, and its own output must not land inside our line.
 * A line longer than the buffer is cut short, never split.
 */
static void
put_line(const char *msg, const char *err)
{
	char line[2048];
	int n;

	n = snprintf(line, sizeof(line) - 1, "%s: %s%s%s", log_ident, msg,
	    err ? ": " : "", err ? err : "");
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	while (write(STDERR_FILENO, line, (size_t)n) < 0 && errno == EINTR)
		;
}

void
vlog(int pri, const char *fmt, va_list ap)
{
	char buf[1024];

	if (log_foreground) {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		fflush(stderr);	/* anything a caller put there first */
		put_line(buf, NULL);
	} else {
		vsyslog(pri, fmt, ap);
	}
}

static void
log_errno(int pri, int saved, const char *fmt, va_list ap)
{
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (log_foreground) {
		fflush(stderr);
		put_line(buf, strerror(saved));
	} else
		syslog(pri, "%s: %s", buf, strerror(saved));
}

void
log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_errno(LOG_ERR, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_errno(LOG_CRIT, saved, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx_status(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(status);
}
