// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A directory of run files read as its tasks' files (see run_dir.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/grow.h"
#include "files/run_dir.h"

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

/* Whether dir holds the manifest of a stream's task: x.units.jsonl -> x.json */
static bool has_manifest(const char *dir, const char *stream)
{
	size_t stem = strlen(stream) - strlen(STREAM_SUFFIX);
	char path[4096];
	struct stat st;

	if (snprintf(path, sizeof(path), "%.*s/%.*s%s", dir_len(dir), dir, (int)stem, stream,
		     MANIFEST_SUFFIX) >=
	    (int)sizeof(path))
		return false;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int add_dir(struct name_list *l, const char *dir, char *err, size_t errlen)
{
	struct name_list found = { 0 };
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
		if (stream && has_manifest(dir, e->d_name))
			continue;
		/* unitmeter-out/ as the shell completes it: one slash, not two */
		if (asprintf(&path, "%.*s/%s", dir_len(dir), dir, e->d_name) < 0)
			path = NULL;
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

int um_expand_inputs(char *const *in, int n_in, char ***out, int *n_out, char *err, size_t errlen)
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
