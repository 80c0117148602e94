// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report page's inputs read (html_page.h): the units of every file, their strings once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <jansson.h>
#include "common/grow.h"
#include "page/html_page.h"
#include "page/html_tasks.h"

/* --- inputs ----------------------------------------------------------------------------- */

static size_t string_hash(const char *s)
{
	size_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* s kept once: 1 + its index in pg->strings; 0 for NULL (not a string); -1 out of memory. */
static long long intern(struct page *pg, const char *s)
{
	char **strings;
	size_t at;

	if (!s)
		return 0;
	if (2 * (pg->n_strings + 1) > pg->n_slots) {
		size_t n_slots = pg->n_slots ? 2 * pg->n_slots : 64;
		unsigned *slots = calloc(n_slots, sizeof(*slots));

		if (!slots)
			return -1;
		for (size_t i = 0; i < pg->n_strings; i++) {
			for (at = string_hash(pg->strings[i]) & (n_slots - 1); slots[at];
			     at = (at + 1) & (n_slots - 1))
				;
			slots[at] = (unsigned)i + 1;
		}
		free(pg->slots);
		pg->slots = slots;
		pg->n_slots = n_slots;
	}
	for (at = string_hash(s) & (pg->n_slots - 1); pg->slots[at]; at = (at + 1) & (pg->n_slots - 1))
		if (!strcmp(pg->strings[pg->slots[at] - 1], s))
			return pg->slots[at];
	strings = um_grow(pg->strings, &pg->cap_strings, pg->n_strings + 1, sizeof(*strings), 16);
	if (!strings)
		return -1;
	pg->strings = strings;
	pg->strings[pg->n_strings] = strdup(s);
	if (!pg->strings[pg->n_strings])
		return -1;
	pg->slots[at] = (unsigned)++pg->n_strings;
	return pg->n_strings;
}

/*
 * The units' array lives in a mapping of its own, not in malloc's heap: on an array page the
 * projection is their last reader, and hands each file's units back to the kernel once it has
 * copied them (units_release), so a million units and their projection stay under 200 MB.
 */
static int units_grow(struct page *pg, size_t cap)
{
	size_t had = pg->cap_units * sizeof(*pg->units), want = cap * sizeof(*pg->units);
	void *at = pg->units ? mremap(pg->units, had, want, MREMAP_MAYMOVE)
			     : mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				    -1, 0);

	if (at == MAP_FAILED)
		return -1;
	pg->units = at;
	return 0;
}

/* Units [0, n) given back to the kernel (they read as zeros after): by their last reader. */
void units_release(struct page *pg, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = n * sizeof(*pg->units) / page * page;

	if (bytes > pg->units_released) {
		madvise((char *)pg->units + pg->units_released, bytes - pg->units_released,
			MADV_DONTNEED);
		pg->units_released = bytes;
	}
}

void units_free(struct page *pg)
{
	if (pg->units)
		munmap(pg->units, pg->cap_units * sizeof(*pg->units));
	pg->units = NULL;
}

static int add_unit(void *ctx, const struct um_read_unit *u, const struct um_unit_text *t)
{
	struct page *pg = ctx;
	long long spec = intern(pg, t->spec), status = intern(pg, t->status);

	if (spec < 0 || status < 0)
		return -1;
	if (pg->n_units == pg->cap_units) {
		/* two arrays of one capacity: the second grows to the first's */
		size_t cap = pg->cap_units ? 2 * pg->cap_units : 4096, text_cap = pg->cap_units;
		struct page_unit_text *text;

		if (units_grow(pg, cap))
			return -1;
		text = um_grow(pg->text, &text_cap, cap, sizeof(*text), cap);
		if (!text)
			return -1;
		pg->text = text;
		pg->cap_units = cap;
	}
	pg->units[pg->n_units] = *u;
	pg->text[pg->n_units++] = (struct page_unit_text){ (unsigned)spec, (unsigned)status };
	return 0;
}

/* The task table from the files as read: a row per file, its units not read again. */
static int load_tasks(struct page *pg, char *err, size_t errlen)
{
	struct um_task_table *t = &pg->tasks;

	t->rows = calloc(pg->n_inputs ? pg->n_inputs : 1, sizeof(*t->rows));
	for (size_t i = 0; t->rows && i < pg->n_inputs; i++) {
		const struct html_input *in = &pg->inputs[i];
		struct um_task_row *r = &t->rows[t->n++];
		bool ok = !um_task_row_begin(r, in->path);

		for (size_t u = 0; ok && u < in->n; u++)
			um_task_row_add_unit(r, &pg->units[in->first + u]);
		if (!ok || um_task_row_end(r, in->doc)) {
			snprintf(err, errlen, "out of memory reading %s", in->path);
			return -1;
		}
	}
	if (!t->rows) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	um_task_table_sort(t);
	pg->array = html_tasks_are_an_array(t);
	return 0;
}

int load_inputs(struct page *pg, char *err, size_t errlen)
{
	pg->inputs = calloc(pg->req->n_files ? pg->req->n_files : 1, sizeof(*pg->inputs));
	if (!pg->inputs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < pg->req->n_files; i++) {
		struct html_input *in = &pg->inputs[pg->n_inputs++];

		/* a manifest or a units stream, read and checked as summary and project read them */
		in->path = pg->req->files[i];
		in->first = pg->n_units;
		if (um_read_units(in->path, add_unit, pg, &in->doc, err, errlen))
			return -1;
		in->n = pg->n_units - in->first;
	}
	return load_tasks(pg, err, errlen);
}

void free_inputs(struct page *pg)
{
	for (size_t i = 0; i < pg->n_inputs; i++)
		json_decref(pg->inputs[i].doc);
	free(pg->inputs);
	units_free(pg);
	free(pg->text);
	for (size_t i = 0; i < pg->n_strings; i++)
		free(pg->strings[i]);
	free(pg->strings);
	free(pg->slots);
	um_task_table_free(&pg->tasks);
}

/* A unit's string (its 1 + index in pg->strings), or NULL. */
const char *unit_string(const struct page *pg, unsigned id)
{
	return id ? pg->strings[id - 1] : NULL;
}

