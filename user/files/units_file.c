// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The reader of run files (see units_file.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/manifest_keys.h"
#include "common/grow.h"
#include "files/fastjson.h"
#include "files/manifest_scan.h"
#include "common/unit_keys.h"
#include "files/units_file.h"

double um_json_number(const json_t *obj, const char *key, double otherwise)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_number(v) ? json_number_value(v) : otherwise;
}

const char *um_json_string(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* UM_F_PEAK_GPU_DEVICE_MAX_BYTES from the per-device list, as fastjson.cc's device_max. */
static void device_max(const json_t *list, struct um_read_unit *u)
{
	const int f = UM_F_PEAK_GPU_DEVICE_MAX_BYTES;
	bool whole = true;
	long long imax = 0;
	double dmax = 0;
	const json_t *e;
	size_t i;

	if (!list) {
		u->kind[f] = UM_V_ABSENT;
		return;
	}
	if (json_is_null(list)) {
		u->kind[f] = UM_V_NULL;
		return;
	}
	u->kind[f] = UM_V_OTHER;
	if (!json_is_array(list))
		return;
	json_array_foreach(list, i, e) {
		const json_t *v = json_object_get(e, UM_KEY_PEAK_BYTES);

		if (json_is_integer(v)) {
			if (json_integer_value(v) > imax)
				imax = json_integer_value(v);
		} else if (json_is_real(v)) {
			whole = false;
		} else {
			return;
		}
		if (json_number_value(v) > dmax)
			dmax = json_number_value(v);
	}
	if (whole)
		u->kind[f] = UM_V_INT, u->v[f].i = imax;
	else
		u->kind[f] = UM_V_REAL, u->v[f].d = dmax;
}

/* The figures of a unit object, as the fast path fills them (fastjson.cc). */
void um_unit_from_json(const json_t *unit, struct um_read_unit *u, struct um_unit_text *t)
{
	static const char *const keys[UM_F_N] = {
#define UM_FIGURE_KEY(field, key, form, value, known, max, read)                            \
	UM_IF_##read([UM_F_##field] = key, )
		UM_UNIT_KEYS(UM_FIGURE_KEY)
#undef UM_FIGURE_KEY
	};
	const char *status;

	memset(u, 0, sizeof(*u));
	for (int f = 0; f < UM_F_N; f++) {
		const json_t *v = keys[f] ? json_object_get(unit, keys[f]) : NULL;

		if (!v)
			u->kind[f] = UM_V_ABSENT;
		else if (json_is_null(v))
			u->kind[f] = UM_V_NULL;
		else if (json_is_integer(v))
			u->kind[f] = UM_V_INT, u->v[f].i = json_integer_value(v);
		else if (json_is_real(v))
			u->kind[f] = UM_V_REAL, u->v[f].d = json_real_value(v);
		else
			u->kind[f] = UM_V_OTHER;
	}
	device_max(json_object_get(unit, UM_KEY_PEAK_GPU_BY_DEVICE), u);
	t->spec = json_string_value(json_object_get(unit, UM_KEY_SPEC));
	status = t->status = json_string_value(json_object_get(unit, UM_KEY_STATUS));
	u->status = !status ? UM_US_NONE : !strcmp(status, UM_STATUS_COMPLETE) ? UM_US_COMPLETE
		  : !strcmp(status, UM_STATUS_INCOMPLETE) ? UM_US_INCOMPLETE : UM_US_OTHER;
}

/*
 * A unit must carry the figures the summary reads, as numbers a unit can have: a file from
 * elsewhere may hold anything, and a peak of 1e79 bytes must not reach an integer field.
 */
static int check_figures(const struct um_read_unit *u, char *why, size_t len)
{
	static const struct {
		enum um_unit_field field;
		const char *key;
		double max; /* 0: not checked */
		bool optional;
	} figures[] = {
#define UM_FIGURE_CHECK(field, key, form, value, known, max, read)                          \
	UM_IF_##read({ UM_F_##field, key, max, UM_OPTIONAL_##read }, )
		UM_UNIT_KEYS(UM_FIGURE_CHECK)
#undef UM_FIGURE_CHECK
	};

	for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++) {
		enum um_unit_field f = figures[k].field;
		double x;

		if (!figures[k].max)
			continue;
		if (figures[k].optional && (u->kind[f] == UM_V_ABSENT || u->kind[f] == UM_V_NULL))
			continue;
		if (!um_unit_is_number(u, f)) {
			snprintf(why, len, "a unit has no number \"%s\"", figures[k].key);
			return -1;
		}
		x = um_unit_number(u, f, 0);
		if (!(x >= 0 && x <= figures[k].max)) {
			snprintf(why, len, "a unit's \"%s\" is %g, outside 0..%g", figures[k].key, x,
				 figures[k].max);
			return -1;
		}
	}
	return 0;
}

static int check_unit(const json_t *unit, char *why, size_t len)
{
	struct um_read_unit u;
	struct um_unit_text t;

	if (!json_is_object(unit)) {
		snprintf(why, len, "a unit is not a JSON object");
		return -1;
	}
	um_unit_from_json(unit, &u, &t);
	return check_figures(&u, why, len);
}

static int load_jsonl(const char *path, FILE *f, json_t *units, char *err, size_t errlen)
{
	char *line = NULL, why[128];
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		json_error_t jerr;
		json_t *unit;

		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		unit = json_loadb(line, len, 0, &jerr);
		if (!unit) {
			snprintf(err, errlen, "%s:%d:%d: not valid JSON (%s)", path, lineno,
				 jerr.column, jerr.text);
			rc = -1;
			break;
		}
		if (check_unit(unit, why, sizeof(why))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
			json_decref(unit);
			rc = -1;
			break;
		}
		json_array_append_new(units, unit);
	}
	free(line);
	return rc;
}

/* Whether the first line of f is "{" alone (blanks around it allowed). */
static bool first_line_opens_object(FILE *f)
{
	bool brace = false;
	int c;

	while ((c = fgetc(f)) != EOF && c != '\n') {
		if (c == '{' && !brace)
			brace = true;
		else if (!strchr(" \t\r", c))
			return false;
	}
	return brace;
}

enum units_file_kind { UNITS_FILE_BROKEN = -1, UNITS_FILE_MANIFEST, UNITS_FILE_STREAM };

/*
 * What a file holds. A manifest is one object that holds a "units" array: it is parsed whole,
 * every unit checked, and handed back in *doc (the file closed). A stream is one unit per line:
 * *f is left open at its start (its first line, one whole object, is read twice). Else one line
 * in err, and nothing left open.
 */
static enum units_file_kind open_units_file(const char *path, FILE **f, json_t **doc, char *err,
					    size_t errlen)
{
	json_error_t jerr;
	json_t *list, *unit;
	char why[128];
	size_t i;
	int c;

	*f = fopen(path, "re");
	if (!*f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return UNITS_FILE_BROKEN;
	}
	*doc = json_loadf(*f, JSON_DISABLE_EOF_CHECK, &jerr);
	if (*doc && json_is_object(*doc) && json_object_get(*doc, UM_MANIFEST_SCHEMA)) {
		while ((c = fgetc(*f)) != EOF && strchr(" \t\r\n", c))
			;
		fclose(*f);
		*f = NULL;
		list = json_object_get(*doc, UM_MANIFEST_UNITS);
		if (c != EOF) {
			snprintf(err, errlen, "%s: data after the manifest's closing brace", path);
			goto broken;
		}
		if (!json_is_array(list)) {
			snprintf(err, errlen, "%s: the manifest has no \"units\" array", path);
			goto broken;
		}
		/* every unit checked before any is given, as the whole file is refused */
		json_array_foreach(list, i, unit)
			if (check_unit(unit, why, sizeof(why))) {
				snprintf(err, errlen, "%s: units[%zu]: %s", path, i, why);
				goto broken;
			}
		return UNITS_FILE_MANIFEST;
	}
	rewind(*f);
	/*
	 * A manifest is written indented: its first line is "{" alone, which no line of a stream
	 * is. Read as a stream, a cut or broken manifest would be blamed on that first line; the
	 * document parser knows where it really broke (the cut, or the bad token).
	 */
	if (!*doc && first_line_opens_object(*f)) {
		snprintf(err, errlen, "%s:%d:%d: not valid JSON (%s)", path, jerr.line, jerr.column,
			 jerr.text);
		fclose(*f);
		*f = NULL;
		return UNITS_FILE_BROKEN;
	}
	json_decref(*doc);
	*doc = NULL;
	rewind(*f);
	return UNITS_FILE_STREAM;
broken:
	json_decref(*doc);
	*doc = NULL;
	return UNITS_FILE_BROKEN;
}

/* What a JSON document that is not ours is, as far as its keys say, for the refusal. */
static const char *foreign_json_words(const json_t *doc)
{
	if (json_object_get(doc, UM_HW_CPU_MODEL) && json_object_get(doc, UM_HW_KERNEL_RELEASE))
		return " (a hardware record, as unitmeter hw writes)";
	if (json_object_get(doc, UM_SUMMARY_N_UNITS))
		return " (a summary, as unitmeter summary --json writes)";
	if (json_object_get(doc, "jobs"))
		return " (a task table, as unitmeter summary --by-task --json writes)";
	return "";
}

/*
 * A file that is well-formed JSON but no run of ours (a hardware record, a summary, any other
 * JSON) is refused as what it is, before a reader blames its first line's syntax. A manifest's
 * first key is "schema" (its first line "{" alone, unless written compact); a stream's lines are
 * units ("wall_s").
 * An empty file and one that does not parse are left to the readers, which say where.
 */
int um_units_file_check(const char *path, char *err, size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	json_t *doc = NULL;
	json_error_t jerr;
	FILE *f = fopen(path, "re");
	bool ours = true;

	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0 && strspn(line, " \t\r\n") == (size_t)len)
		;
	if (len >= 0 && strspn(line, " \t{\r\n") == (size_t)len) {
		/* indented: a manifest names its schema first; anything else is parsed whole, once */
		if ((len = getline(&line, &cap, f)) >= 0 && strstr(line, "\"schema\""))
			goto out;
		rewind(f);
		doc = json_loadf(f, JSON_DISABLE_EOF_CHECK, &jerr);
		ours = !doc || (json_is_object(doc) && json_object_get(doc, UM_MANIFEST_SCHEMA));
	} else if (len >= 0) {
		doc = json_loadb(line, (size_t)len, 0, &jerr);
		ours = !doc || (json_is_object(doc) && (json_object_get(doc, UM_KEY_WALL_S) ||
							 json_object_get(doc, UM_MANIFEST_SCHEMA)));
	}
	if (!ours)
		snprintf(err, errlen, "%s: not a unitmeter manifest or units stream%s", path,
			 json_is_object(doc) ? foreign_json_words(doc) : "");
out:
	json_decref(doc);
	free(line);
	fclose(f);
	return ours ? 0 : 1;
}

int um_load_units(const char *path, json_t *units, char *err, size_t errlen)
{
	enum units_file_kind kind;
	json_t *doc, *unit;
	size_t i;
	FILE *f;
	int rc;

	if (um_units_file_check(path, err, errlen))
		return -1;
	kind = open_units_file(path, &f, &doc, err, errlen);
	if (kind == UNITS_FILE_BROKEN)
		return -1;
	if (kind == UNITS_FILE_MANIFEST) {
		json_array_foreach(json_object_get(doc, UM_MANIFEST_UNITS), i, unit)
			json_array_append(units, unit);
		json_decref(doc);
		return 0;
	}
	rc = load_jsonl(path, f, units, err, errlen);
	fclose(f);
	return rc;
}

/*
 * One unit's text into fn: the fast path, or jansson where the fast path cannot say. 0, or -1
 * when fn fails (out of memory), or 1 when the unit is refused: not JSON (*jerr) or a figure
 * refused (why, empty otherwise).
 */
static int give_unit(const char *text, size_t len, um_unit_fn fn, void *ctx, json_error_t *jerr,
		     char *why, size_t whylen)
{
	struct um_read_unit u;
	struct um_unit_text t;
	json_t *unit = NULL;
	int rc;

	*why = 0;
	if (um_fastjson_unit(text, len, &u, &t)) {
		unit = json_loadb(text, len, 0, jerr);
		if (!unit)
			return 1;
		if (check_unit(unit, why, whylen)) {
			json_decref(unit);
			return 1;
		}
		um_unit_from_json(unit, &u, &t);
	} else if (check_figures(&u, why, whylen)) {
		return 1;
	}
	rc = fn(ctx, &u, &t) ? -1 : 0;
	json_decref(unit);
	return rc;
}

/* One line of a stream into fn (give_unit), its refusal named by file, line and column. */
static int read_line(const char *path, int lineno, const char *line, size_t len, um_unit_fn fn,
		     void *ctx, char *err, size_t errlen)
{
	json_error_t jerr;
	char why[128];
	int rc = give_unit(line, len, fn, ctx, &jerr, why, sizeof(why));

	if (rc < 0)
		snprintf(err, errlen, "out of memory reading %s", path);
	else if (rc && *why)
		snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
	else if (rc)
		snprintf(err, errlen, "%s:%d:%d: not valid JSON (%s)", path, lineno, jerr.column,
			 jerr.text);
	return rc ? -1 : 0;
}

static int read_jsonl(const char *path, FILE *f, um_unit_fn fn, void *ctx, char *err,
		      size_t errlen)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		if (cap < (size_t)len + UM_FASTJSON_PADDING) {
			char *bigger = realloc(line, (size_t)len + UM_FASTJSON_PADDING);

			if (!bigger) {
				snprintf(err, errlen, "out of memory reading %s", path);
				rc = -1;
				break;
			}
			line = bigger;
			cap = (size_t)len + UM_FASTJSON_PADDING;
		}
		rc = read_line(path, lineno, line, (size_t)len, fn, ctx, err, errlen);
		if (rc)
			break;
	}
	free(line);
	return rc;
}

/* Whether the file's first line is "{" alone: a manifest as unitmeter writes it. */
static bool written_as_manifest(const char *path)
{
	FILE *f = fopen(path, "re");
	bool brace = f && first_line_opens_object(f);

	if (f)
		fclose(f);
	return brace;
}

/* The whole file, UM_FASTJSON_PADDING zero bytes past its end; NULL where it cannot be read. */
static char *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) &&
	    (text = calloc(1, (size_t)size + UM_FASTJSON_PADDING)) &&
	    fread(text, 1, (size_t)size, f) != (size_t)size) {
		free(text);
		text = NULL;
	}
	if (text)
		*len = (size_t)size;
	fclose(f);
	return text;
}

/* The document less its units: jansson's parse of the text with "[]" where they stood. */
static json_t *manifest_rest(const struct um_manifest_scan *s)
{
	size_t head = s->units_open, tail = s->len - s->units_close;
	char *text = malloc(head + 2 + tail);
	json_error_t jerr;
	json_t *doc;

	if (!text)
		return NULL;
	memcpy(text, s->text, head);
	memcpy(text + head, "[]", 2);
	memcpy(text + head + 2, s->text + s->units_close, tail);
	doc = json_loadb(text, head + 2 + tail, 0, &jerr);
	free(text);
	if (!json_is_object(doc) || !json_object_get(doc, UM_MANIFEST_SCHEMA)) {
		json_decref(doc);
		return NULL;
	}
	json_object_del(doc, "units");
	return doc;
}

/* Where each unit's bytes lie in the manifest's text. */
struct unit_span {
	size_t at, len;
};

/*
 * A manifest read fast: its units framed in its text (manifest_scan.h) and the rest parsed by
 * jansson first; then each unit parsed as a stream's line is, and given. 1 where jansson must
 * read the file instead (nothing given); else 0, or -1 with err set. A unit refused once others
 * were given is one jansson refuses too (the framing held): the file is refused in its words.
 */
static int read_manifest_fast(const char *path, um_unit_fn fn, void *ctx, json_t **manifest,
			      char *err, size_t errlen)
{
	struct um_manifest_scan s;
	struct unit_span *spans = NULL;
	size_t len, at, n, n_spans = 0, cap = 0;
	char *text = read_whole(path, &len);
	json_t *rest = NULL, *doc;
	int more = -1, rc = 0;
	json_error_t jerr;
	char why[128];
	FILE *f;

	if (!text)
		return 1;
	if (um_manifest_scan_open(&s, text, len)) {
		while ((more = um_manifest_scan_unit(&s, &at, &n)) == 1) {
			struct unit_span *bigger = um_grow(spans, &cap, n_spans + 1, sizeof(*spans), 1024);

			if (!bigger)
				break;
			spans = bigger;
			spans[n_spans++] = (struct unit_span){ at, n };
		}
	}
	if (!more && um_manifest_scan_end(&s))
		rest = manifest_rest(&s);
	for (size_t i = 0; rest && i < n_spans; i++) {
		/* a refusal's words are jansson's reading of the whole file, below */
		rc = give_unit(text + spans[i].at, spans[i].len, fn, ctx, &jerr, why, sizeof(why));
		if (rc)
			break;
	}
	free(spans);
	free(text);
	if (!rest)
		return 1;
	if (rc < 0)
		snprintf(err, errlen, "out of memory reading %s", path);
	if (rc > 0 && open_units_file(path, &f, &doc, err, errlen) != UNITS_FILE_BROKEN) {
		/* jansson takes what a unit's own parse refused: a fault of ours, said as one */
		if (f)
			fclose(f);
		json_decref(doc);
		snprintf(err, errlen, "%s: cannot be read: its units were framed wrongly", path);
	}
	if (rc) {
		json_decref(rest);
		return -1;
	}
	if (manifest)
		*manifest = rest;
	else
		json_decref(rest);
	return 0;
}

int um_read_units(const char *path, um_unit_fn fn, void *ctx, json_t **manifest, char *err,
		  size_t errlen)
{
	enum units_file_kind kind;
	struct um_read_unit u;
	struct um_unit_text t;
	json_t *doc, *unit;
	size_t i;
	FILE *f;
	int rc = 0;

	if (manifest)
		*manifest = NULL;
	if (um_units_file_check(path, err, errlen))
		return -1;
	if (written_as_manifest(path)) {
		rc = read_manifest_fast(path, fn, ctx, manifest, err, errlen);
		if (rc <= 0)
			return rc;
		rc = 0; /* jansson reads it */
	}
	kind = open_units_file(path, &f, &doc, err, errlen);
	if (kind == UNITS_FILE_BROKEN)
		return -1;
	if (kind == UNITS_FILE_STREAM) {
		rc = read_jsonl(path, f, fn, ctx, err, errlen);
		fclose(f);
		return rc;
	}
	/* a manifest's units given out, then dropped: one file's at a time */
	json_array_foreach(json_object_get(doc, UM_MANIFEST_UNITS), i, unit) {
		um_unit_from_json(unit, &u, &t);
		if (fn(ctx, &u, &t)) {
			snprintf(err, errlen, "out of memory reading %s", path);
			rc = -1;
			break;
		}
	}
	if (!rc && manifest) {
		json_object_del(doc, "units");
		*manifest = json_incref(doc);
	}
	json_decref(doc);
	return rc;
}
