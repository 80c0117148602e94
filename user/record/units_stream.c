// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/fileio.h"
#include "common/log.h"
#include "record/units_stream.h"

/* The units stream's stdio buffer: larger than any line, so a line is never split by it. */
#define UNITS_STREAM_BUFFER (64 * 1024)

struct units_stream {
	const char *path;
	FILE *file;
	char *buf;
	int err;
	off_t good;    /* bytes of the stream on disk that end with a complete line */
	off_t pending; /* complete lines handed to stdio since the last flush */
};

struct units_stream *units_stream__open(const char *path, uid_t uid, gid_t gid, char *err,
					size_t errlen)
{
	struct units_stream *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->path = path;
	s->file = um_create_output(path, uid, gid);
	if (!s->file) {
		snprintf(err, errlen, "cannot write the units stream %s: %s", path, strerror(errno));
		units_stream__free(s);
		return NULL;
	}
	/* fully buffered, flushed after each ring batch: one write per batch, not per unit.
	 * The buffer is ours: glibc takes a size only together with a buffer, and the
	 * flush-before-split rule in units_stream__append counts on this size */
	s->buf = malloc(UNITS_STREAM_BUFFER);
	if (!s->buf || setvbuf(s->file, s->buf, _IOFBF, UNITS_STREAM_BUFFER)) {
		snprintf(err, errlen, "cannot buffer the units stream: out of memory");
		units_stream__free(s);
		return NULL;
	}
	return s;
}

/*
 * The stream could not take a line (a full disk, a quota): say so once, stop appending, and cut
 * the file back to its last complete line. A short write leaves half a line, and stdio would
 * retry what it still buffers at fclose; either would end the stream with a line that is not JSON.
 */
static void stream_failed(struct units_stream *s, int err, const char *what)
{
	s->err = -(err ? err : EIO);
	um_err("cannot %s the units stream %s: %s", what, s->path, strerror(-s->err));
	__fpurge(s->file);
	if (ftruncate(fileno(s->file), s->good))
		um_warn("cannot cut the units stream %s back to its last complete line: %s",
			s->path, strerror(errno));
}

/* Write out the complete lines stdio holds; only then do they count as on disk. */
static void stream_flush(struct units_stream *s)
{
	if (fflush(s->file)) {
		stream_failed(s, errno, "write");
		return;
	}
	s->good += s->pending;
	s->pending = 0;
}

void units_stream__append(struct units_stream *s, const char *line, size_t n)
{
	if (!s || s->err)
		return;
	/* flushed after each batch the ring buffer hands over (run_record__flush), milliseconds,
	 * and before stdio would write out a buffer that ends inside a line */
	if (s->pending + (off_t)n > UNITS_STREAM_BUFFER)
		stream_flush(s);
	if (!s->err && fwrite(line, 1, n, s->file) != n)
		stream_failed(s, errno, "append to");
	else if (!s->err)
		s->pending += n;
}

void units_stream__flush(struct units_stream *s)
{
	if (s && !s->err)
		stream_flush(s);
}

int units_stream__error(const struct units_stream *s)
{
	return s ? s->err : 0;
}

void units_stream__free(struct units_stream *s)
{
	if (!s)
		return;
	if (s->file)
		fclose(s->file);
	free(s->buf);
	free(s);
}
