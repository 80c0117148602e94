// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A directory of run files read as its tasks' files (see run_dir.h). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/grow.h"
#include "common/log.h"
#include "files/run_dir.h"
#include "files/units_file.h"

#define STREAM_SUFFIX ".units.jsonl"
#define MANIFEST_SUFFIX ".json"

struct name_list {
	char **at;
	size_t n, cap;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

static int add_name(struct name_list *l, char *name)
{
	char **bigger;

	if (!name)
		return -1;
	bigger = um_grow(l->at, &l->cap, l->n + 1, sizeof(*l->at), 64);
	if (!bigger) {
		free(name);
		return -1;
	}
	l->at = bigger;
	l->at[l->n++] = name;
	return 0;
}

static int by_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* dir's length less its trailing slashes ("/" kept) */
static int dir_len(const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return (int)n;
}

/* The manifest beside a stream, x.units.jsonl -> x.json, in buf: false where it does not fit. */
static bool manifest_beside(const char *stream, char *buf, size_t len)
{
	int stem = (int)(strlen(stream) - strlen(STREAM_SUFFIX));

	return snprintf(buf, len, "%.*s%s", stem, stream, MANIFEST_SUFFIX) < (int)len;
}

/* Whether a stream's manifest lies beside it */
static bool has_manifest(const char *stream)
{
	char path[4096];
	struct stat st;

	return manifest_beside(stream, path, sizeof(path)) && !stat(path, &st) &&
	       S_ISREG(st.st_mode);
}

static int add_dir(struct name_list *l, const char *dir, char *err, size_t errlen)
{
	struct name_list found = { 0 };
	char why[PATH_MAX + 128];
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "cannot read the directory %s: %s", dir, strerror(errno));
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		bool stream = ends_with(e->d_name, STREAM_SUFFIX);
		char *path;

		if (e->d_name[0] == '.' || !(stream || ends_with(e->d_name, MANIFEST_SUFFIX)))
			continue;
		/* unitmeter-out/ as the shell completes it: one slash, not two */
		if (asprintf(&path, "%.*s/%s", dir_len(dir), dir, e->d_name) < 0)
			path = NULL;
		if (path && stream && has_manifest(path)) {
			free(path);
			continue;
		}
		/* a hardware record or any other JSON beside the runs is not one of them */
		if (path && um_units_file_check(path, why, sizeof(why)) == 1) {
			um_warn("%s: skipped", why);
			free(path);
			continue;
		}
		rc = add_name(&found, path);
	}
	closedir(d);
	if (rc)
		snprintf(err, errlen, "out of memory listing %s", dir);
	else if (!found.n) {
		snprintf(err, errlen, "%s holds no run manifest (.json) or units stream (.units.jsonl)",
			 dir);
		rc = -1;
	}
	if (found.n)
		qsort(found.at, found.n, sizeof(*found.at), by_version);
	for (size_t i = 0; i < found.n; i++) {
		if (!rc && add_name(l, found.at[i])) {
			snprintf(err, errlen, "out of memory listing %s", dir);
			rc = -1;
		} else if (rc) {
			free(found.at[i]);
		}
	}
	free(found.at);
	return rc;
}

/* A file as the kernel knows it, whatever path names it ("a.json", "./a.json") */
struct file_id {
	dev_t dev;
	ino_t ino;
	size_t name; /* its place in the list */
};

static int by_file(const void *a, const void *b)
{
	const struct file_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->ino > y->ino) - (x->ino < y->ino);
}

static int by_file_then_place(const void *a, const void *b)
{
	const struct file_id *x = a, *y = b;
	int file = by_file(a, b);

	return file ? file : (x->name > y->name) - (x->name < y->name);
}

/* Whether the file at path is among ids (sorted by file) */
static bool listed(const struct file_id *ids, size_t n, const char *path)
{
	struct stat st;
	struct file_id key;

	if (stat(path, &st))
		return false;
	key = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino };
	return bsearch(&key, ids, n, sizeof(*ids), by_file);
}

/*
 * Each task read once, however its files were named: a file named twice (a directory and a
 * glob of it) is kept where it first appears, and a stream whose manifest is among the inputs
 * is dropped, as a directory drops it. Returns how many names were dropped, or -1 (memory).
 */
static int drop_repeats(struct name_list *l)
{
	struct file_id *ids = calloc(l->n ? l->n : 1, sizeof(*ids));
	bool *repeat = calloc(l->n ? l->n : 1, sizeof(*repeat));
	size_t n_ids = 0, kept = 0;
	int dropped = 0;

	if (!ids || !repeat) {
		free(ids);
		free(repeat);
		return -1;
	}
	/* a name stat refuses is left for the reader to refuse, by its name */
	for (size_t i = 0; i < l->n; i++) {
		struct stat st;

		if (!stat(l->at[i], &st))
			ids[n_ids++] = (struct file_id){ .dev = st.st_dev, .ino = st.st_ino, .name = i };
	}
	qsort(ids, n_ids, sizeof(*ids), by_file_then_place);
	for (size_t k = 1; k < n_ids; k++) /* a file's names after its first */
		repeat[ids[k].name] = !by_file(&ids[k - 1], &ids[k]);
	for (size_t i = 0; i < l->n; i++) {
		char manifest[4096];

		if (!repeat[i] && ends_with(l->at[i], STREAM_SUFFIX) &&
		    manifest_beside(l->at[i], manifest, sizeof(manifest)))
			repeat[i] = listed(ids, n_ids, manifest);
		if (repeat[i]) {
			free(l->at[i]);
			dropped++;
		} else {
			l->at[kept++] = l->at[i];
		}
	}
	l->n = kept;
	free(ids);
	free(repeat);
	return dropped;
}

int um_expand_inputs(char *const *in, int n_in, char ***out, int *n_out, int *n_dropped,
		     char *err, size_t errlen)
{
	struct name_list l = { 0 };
	int rc = 0;

	for (int i = 0; !rc && i < n_in; i++) {
		struct stat st;

		if (!stat(in[i], &st) && S_ISDIR(st.st_mode)) {
			rc = add_dir(&l, in[i], err, errlen);
		} else if (add_name(&l, strdup(in[i]))) {
			snprintf(err, errlen, "out of memory keeping the file names");
			rc = -1;
		}
	}
	if (!rc && (*n_dropped = drop_repeats(&l)) < 0) {
		snprintf(err, errlen, "out of memory comparing the file names");
		rc = -1;
	}
	if (rc) {
		um_inputs_free(l.at, (int)l.n);
		return -1;
	}
	*out = l.at;
	*n_out = (int)l.n;
	return 0;
}

void um_inputs_free(char **inputs, int n)
{
	for (int i = 0; i < n; i++)
		free(inputs[i]);
	free(inputs);
}
