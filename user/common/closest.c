// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/closest.h"

unsigned um_edit_distance(const char *a, const char *b)
{
	unsigned row[129], la = strnlen(a, 128), lb = strnlen(b, 128);

	for (unsigned j = 0; j <= lb; j++)
		row[j] = j;
	for (unsigned i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = i;
		for (unsigned j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

unsigned name_distance(const char *name, const char *wanted)
{
	/* a name that contains the wanted one (or the reverse) is nearer than its distance says */
	unsigned d = um_edit_distance(name, wanted);

	if (strstr(name, wanted) || strstr(wanted, name))
		d = d / 4;
	return d;
}

void near_names__add(struct near_names *near, const char *name, unsigned d)
{
	int slot = -1;

	for (int i = 0; i < NEAR_MATCHES; i++) {
		if (near->names[i] && strcmp(near->names[i], name) == 0)
			return;
		if (!near->names[i] || d < near->dist[i]) {
			slot = i;
			break;
		}
	}
	if (slot < 0)
		return;
	free(near->names[NEAR_MATCHES - 1]);
	memmove(&near->names[slot + 1], &near->names[slot],
		(NEAR_MATCHES - 1 - slot) * sizeof(near->names[0]));
	memmove(&near->dist[slot + 1], &near->dist[slot],
		(NEAR_MATCHES - 1 - slot) * sizeof(near->dist[0]));
	near->names[slot] = strdup(name);
	near->dist[slot] = d;
}

int near_names__format(const struct near_names *near, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < NEAR_MATCHES && near->names[i] && n >= 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "", near->names[i]);
	return n;
}

void near_names__free(struct near_names *near)
{
	for (int i = 0; i < NEAR_MATCHES; i++) {
		free(near->names[i]);
		near->names[i] = NULL;
	}
}
