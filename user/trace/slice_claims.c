// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slice_claims.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

/* Whether the unit with this id is still in its slot (open, or its close not yet ended). */
static bool unit_still_there(int units_fd, __u64 id)
{
	__u32 slot = (__u32)(id & (UM_UNIT_SLOTS - 1));
	struct um_unit unit;

	return !bpf_map_lookup_elem(units_fd, &slot, &unit) && unit.id == id;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct um_slice_claim));
}

long slice_claims_sweep(struct claims_sweep *sweep, int claims_fd, int units_fd)
{
	struct um_slice_claim key, *prev = NULL, *now_gone = NULL, *bigger;
	size_t n_now = 0, cap_now = 0;
	long removed = 0;
	int err;

	/* the walk first: removing while walking would restart it */
	while (!(err = bpf_map_get_next_key(claims_fd, prev, &key))) {
		prev = &key;
		if (unit_still_there(units_fd, key.unit_id))
			continue;
		bigger = um_grow(now_gone, &cap_now, n_now + 1, sizeof(*now_gone), 64);
		if (!bigger) {
			err = -ENOMEM;
			break;
		}
		now_gone = bigger;
		now_gone[n_now++] = key;
	}
	if (err != -ENOENT) {
		free(now_gone);
		return err;
	}
	/* gone at the sweep before too: no program will look for it */
	for (size_t i = 0; i < n_now; i++)
		if (sweep->n_gone && bsearch(&now_gone[i], sweep->gone, sweep->n_gone,
					     sizeof(*sweep->gone), key_cmp) &&
		    !bpf_map_delete_elem(claims_fd, &now_gone[i]))
			removed++;
	if (n_now)
		qsort(now_gone, n_now, sizeof(*now_gone), key_cmp);
	free(sweep->gone);
	sweep->gone = now_gone;
	sweep->n_gone = n_now;
	return removed;
}

void claims_sweep_free(struct claims_sweep *sweep)
{
	free(sweep->gone);
	memset(sweep, 0, sizeof(*sweep));
}
