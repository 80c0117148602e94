// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "common/log.h"

int um_verbosity;

/* One write(2) per line, so lines from unitmeter and the traced command never interleave. */
static void vsay(const char *tag, const char *fmt, va_list ap)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "unitmeter: %s", tag);

	if (n < 0)
		return;
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fflush(stderr);
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

void um_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void um_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("warning: ", fmt, ap);
	va_end(ap);
}

void um_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("note: ", fmt, ap);
	va_end(ap);
}

void um_info(const char *fmt, ...)
{
	va_list ap;

	if (um_verbosity < 1)
		return;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}
