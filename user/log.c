// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include "log.h"

int um_verbosity;

static void vsay(const char *tag, const char *fmt, va_list ap)
{
	fprintf(stderr, "unitmeter: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

void um_info(const char *fmt, ...)
{
	va_list ap;

	if (um_verbosity < 1)
		return;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}
