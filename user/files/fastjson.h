/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path of the run file reader: a units stream's line, or a manifest's unit, parsed with
 * simdjson (fastjson.cc, C++ behind C calls) straight into struct um_read_unit. jansson stays the
 * parser of record: the fast path answers only where jansson would have read the same values,
 * and hands every other input (an error, an escape jansson refuses, a number past 64 bits, a
 * repeated key) back to it, so the refusals and their line:column are jansson's, as before.
 * BENCHMARKS.md, "Reading at array scale", has the numbers that chose it.
 */
#ifndef UM_FASTJSON_H
#define UM_FASTJSON_H

#include <stddef.h>
#include "files/units_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the line's buffer must hold past its end (simdjson reads ahead; SIMDJSON_PADDING). */
#define UM_FASTJSON_PADDING 64

/*
 * Parse line[0..len) (its buffer len + UM_FASTJSON_PADDING long: what lies past len is read and
 * ignored, so a unit inside a manifest's text is parsed in place) into u and t. Returns 0 when
 * done, 1 when the line must be read by jansson instead. t's strings live until the next call.
 */
int um_fastjson_unit(const char *line, size_t len, struct um_read_unit *u, struct um_unit_text *t);

#ifdef __cplusplus
}
#endif

#endif
