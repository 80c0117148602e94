/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The units stream: one JSON line per finished unit, appended as the unit ends and pushed to the
 * file after each batch of records, so a killed run keeps every unit it saw. A write that fails
 * is said once, and the file is cut back to its last complete line.
 */
#ifndef UM_UNITS_STREAM_H
#define UM_UNITS_STREAM_H

#include <stddef.h>
#include <sys/types.h>

struct units_stream;

/*
 * Create path (owned by uid/gid) for the stream; path is borrowed and must outlive the stream.
 * NULL on failure, with one line for the user in err.
 */
struct units_stream *units_stream__open(const char *path, uid_t uid, gid_t gid, char *err,
					size_t errlen);
/* Append one complete line of n bytes (its '\n' included). A NULL stream takes nothing. */
void units_stream__append(struct units_stream *s, const char *line, size_t n);
/* Write out the lines appended so far. */
void units_stream__flush(struct units_stream *s);
/* Any write error so far (0 or a negative errno); 0 for a NULL stream. */
int units_stream__error(const struct units_stream *s);
void units_stream__free(struct units_stream *s);

#endif
