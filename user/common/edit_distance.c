// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include "common/edit_distance.h"

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
