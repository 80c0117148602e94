/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The baseline build's handover keys (struct um_slice_claim, bpf/model.bpf.h): the programs
 * insert them while a unit closes and never remove them; the loader does, a sweep after it saw
 * the unit's slot no longer holding the unit. By then its close has ended, and a program still
 * about to insert one would have had to be held up (with preemption off) a whole sweep's
 * interval since it read the unit; it would add to a unit that is gone.
 */
#ifndef UM_SLICE_CLAIMS_H
#define UM_SLICE_CLAIMS_H

#include <stdbool.h>
#include <stddef.h>

#include "unitmeter.h"

/* What one sweep leaves to the next: the keys it found of closed units, sorted. */
struct claims_sweep {
	struct um_slice_claim *gone;
	size_t n_gone;
	bool warned; /* a sweep failed, and said so once */
};

/*
 * Remove from the map claims_fd the keys of units that were closed (no longer in their slot in
 * units_fd) at the sweep before and still are, and note those closed now for the next. Returns
 * how many were removed, or a negative errno when the map could not be read.
 */
long slice_claims_sweep(struct claims_sweep *sweep, int claims_fd, int units_fd);

void claims_sweep_free(struct claims_sweep *sweep);

#endif
