// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "slice_claims.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>

#include "unitmeter.h"

/* Keys removed at a time: removing while walking restarts the walk, so they are gathered. */
#define SWEEP_BATCH 256

/* Whether the unit with this id is still in its slot (open, or its close not yet ended). */
static bool unit_still_there(int units_fd, __u64 id)
{
	__u32 slot = (__u32)(id & (UM_UNIT_SLOTS - 1));
	struct um_unit unit;

	return !bpf_map_lookup_elem(units_fd, &slot, &unit) && unit.id == id;
}

static long remove_keys(int claims_fd, const struct um_slice_claim *keys, size_t n)
{
	long removed = 0;

	for (size_t i = 0; i < n; i++)
		if (!bpf_map_delete_elem(claims_fd, &keys[i]))
			removed++;
	return removed;
}

long slice_claims_sweep(int claims_fd, int units_fd)
{
	struct um_slice_claim gone[SWEEP_BATCH], key, *prev = NULL;
	long removed = 0, now;
	size_t n = 0;
	int err;

	while (!(err = bpf_map_get_next_key(claims_fd, prev, &key))) {
		prev = &key;
		if (unit_still_there(units_fd, key.unit_id))
			continue;
		gone[n++] = key;
		if (n < SWEEP_BATCH)
			continue;
		now = remove_keys(claims_fd, gone, n);
		removed += now;
		n = 0;
		/* walk again from the start (the kept keys first) once the walk's place is gone */
		if (now)
			prev = NULL;
	}
	removed += remove_keys(claims_fd, gone, n);
	return err == -ENOENT ? removed : err;
}
