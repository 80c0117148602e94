// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A manifest's units framed in its text (see manifest_scan.h). */
#include <string.h>
#include "files/manifest_scan.h"

static size_t skip_blanks(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* Past a string whose opening quote is at i - 1: the offset past its closing quote, or 0. A
 * byte loop: most strings are keys of a few bytes, where a call to memchr costs more. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
	for (; i < len; i++) {
		if (t[i] == '\\')
			i++; /* the escaped byte, whatever it is */
		else if (t[i] == '"')
			return i + 1;
	}
	return 0;
}

/* The bytes skip_value stops at inside a value: quotes and brackets. */
static const unsigned char stops_at[256] = {
	['"'] = 1, ['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1,
};

/*
 * Past the value that starts at i: a string, an object or an array by its brackets (which are
 * not matched by kind: the parser of those bytes refuses a "{]"), else up to a delimiter. 0
 * where the text ends first.
 */
static size_t skip_value(const char *t, size_t len, size_t i)
{
	size_t depth = 0;

	if (i < len && !stops_at[(unsigned char)t[i]]) {
		while (i < len && !memchr(" \t\r\n,}]", t[i], 8))
			i++;
		return i;
	}
	do {
		while (i < len && !stops_at[(unsigned char)t[i]])
			i++;
		if (i >= len)
			return 0;
		switch (t[i++]) {
		case '"':
			i = skip_string(t, len, i);
			if (!i)
				return 0;
			break;
		case '{':
		case '[':
			depth++;
			break;
		default: /* '}' or ']' */
			if (!depth)
				return 0;
			depth--;
		}
	} while (depth);
	return i;
}

bool um_manifest_scan_open(struct um_manifest_scan *s, const char *text, size_t len)
{
	size_t i = skip_blanks(text, len, 0);

	*s = (struct um_manifest_scan){ .text = text, .len = len };
	if (i >= len || text[i++] != '{')
		return false;
	for (;;) {
		size_t key, end;

		i = skip_blanks(text, len, i);
		if (i >= len || text[i++] != '"')
			return false;
		key = i;
		end = skip_string(text, len, i);
		if (!end)
			return false;
		i = skip_blanks(text, len, end);
		if (i >= len || text[i++] != ':')
			return false;
		i = skip_blanks(text, len, i);
		/* the key as written: an escaped spelling of "units" is left to jansson */
		if (end - 1 - key == 5 && !memcmp(text + key, "units", 5)) {
			if (i >= len || text[i] != '[')
				return false;
			s->units_open = i;
			s->next = i + 1;
			return true;
		}
		i = skip_value(text, len, i);
		if (!i)
			return false;
		i = skip_blanks(text, len, i);
		if (i >= len || text[i++] != ',')
			return false; /* a "}" here: no units */
	}
}

int um_manifest_scan_unit(struct um_manifest_scan *s, size_t *at, size_t *len)
{
	size_t i = skip_blanks(s->text, s->len, s->next), end;

	if (i >= s->len)
		return -1;
	if (s->text[i] == ']') {
		s->units_close = i + 1;
		return 0;
	}
	/* a comma after each unit but the last */
	if (s->next > s->units_open + 1) {
		if (s->text[i] != ',')
			return -1;
		i = skip_blanks(s->text, s->len, i + 1);
	}
	if (i >= s->len || s->text[i] != '{')
		return -1;
	end = skip_value(s->text, s->len, i);
	if (!end)
		return -1;
	*at = i;
	*len = end - i;
	s->next = end;
	return 1;
}

bool um_manifest_scan_end(const struct um_manifest_scan *s)
{
	const char *text = s->text;
	size_t len = s->len, i = s->units_close;

	for (;;) {
		size_t key, end;

		i = skip_blanks(text, len, i);
		if (i < len && text[i] == '}')
			return skip_blanks(text, len, i + 1) == len;
		if (i >= len || text[i++] != ',')
			return false;
		i = skip_blanks(text, len, i);
		if (i >= len || text[i++] != '"')
			return false;
		key = i;
		end = skip_string(text, len, i);
		/* jansson keeps a repeated key's last value: "units" again, or maybe (escaped) */
		if (!end || (end - 1 - key == 5 && !memcmp(text + key, "units", 5)) ||
		    memchr(text + key, '\\', end - 1 - key))
			return false;
		i = skip_blanks(text, len, end);
		if (i >= len || text[i++] != ':')
			return false;
		i = skip_value(text, len, skip_blanks(text, len, i));
		if (!i)
			return false;
	}
}
