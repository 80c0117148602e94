/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report page's inputs (html.c draws the sections from them): every file's units, compact,
 * their repeated strings kept once, and the files' run documents; loaded by html_load.c.
 */
#ifndef UM_HTML_PAGE_H
#define UM_HTML_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "files/tasks.h"
#include "files/units_file.h"
#include "page/html.h"
#include "page/svg.h"

/* One input file: a run manifest (doc, less its units) or a units stream (doc NULL), and where
 * its units are in the page's. */
struct html_input {
	const char *path;
	json_t *doc;
	size_t first, n;
};

/*
 * Every file's units, in order, compact (a million units in 200 files: about 100 MB), never
 * their documents; their strings (a function's name, a status), repeated from unit to unit,
 * kept once each in strings.
 */
struct page {
	FILE *out;
	const struct html_request *req;
	struct html_input *inputs;
	size_t n_inputs;
	struct um_read_unit *units; /* units_grow */
	size_t units_released;	    /* bytes of it given back: units_release */
	struct page_unit_text *text;
	size_t n_units, cap_units;
	char **strings;
	size_t n_strings, cap_strings;
	unsigned *slots; /* open addressing into strings: 1 + index, 0 empty */
	size_t n_slots;
	/* a row per file (files/tasks.h); array: the files are a job array's tasks */
	struct um_task_table tasks;
	bool array;
};

/* Read every input file's units and documents into pg (the tasks' table for an array). */
int load_inputs(struct page *pg, char *err, size_t errlen);
void free_inputs(struct page *pg);
/* Give back the memory of the first n units (drawn already), or all of it. */
void units_release(struct page *pg, size_t n);
void units_free(struct page *pg);
/* A unit's string (its 1 + index in pg->strings), or NULL. */
const char *unit_string(const struct page *pg, unsigned id);

#endif
