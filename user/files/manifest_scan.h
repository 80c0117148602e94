/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A manifest's "units" array found in its text, and each unit object's bytes, without a parse of
 * the whole document: at a million units, jansson's tree of the manifest took 15 s and a
 * simdjson document of it would hold 14 bytes per byte of the file. The scan only frames: each
 * unit's bytes are then parsed as a stream's line is (fastjson.h), and the document less its
 * units by jansson, so every byte is checked by one parser or the other. Where the framing does
 * not hold, the caller reads the file with jansson alone, before it has given any unit.
 */
#ifndef UM_MANIFEST_SCAN_H
#define UM_MANIFEST_SCAN_H

#include <stdbool.h>
#include <stddef.h>

struct um_manifest_scan {
	const char *text;
	size_t len;
	size_t units_open;  /* the offset of the units array's "[" */
	size_t units_close; /* the offset just past its "]" */
	size_t next;	    /* where the next unit is looked for */
};

/*
 * Find the "units" array of a top-level object in text[0..len). False where the text is not
 * framed as the scan expects (then jansson reads the file): not an object, no key spelt "units"
 * at its top level, or one whose value is not an array of objects.
 */
bool um_manifest_scan_open(struct um_manifest_scan *s, const char *text, size_t len);
/*
 * The next unit object's bytes [*at, *at + *len): 1, or 0 after the last one, or -1 where what
 * lies between the units is not a comma, blanks or an object.
 */
int um_manifest_scan_unit(struct um_manifest_scan *s, size_t *at, size_t *len);

/*
 * After the last unit: whether the object closes with blanks alone after it, and no key after
 * the units could be the "units" jansson keeps (the same key again, or one with an escape).
 */
bool um_manifest_scan_end(const struct um_manifest_scan *s);

#endif
