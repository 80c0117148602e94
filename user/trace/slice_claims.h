/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The baseline build's handover keys (struct um_slice_claim, bpf/model.bpf.h): the programs
 * insert them while a unit closes and never remove them; the loader does, once the unit's slot
 * no longer holds the unit. By then its close has ended, and no program looks a key of it up
 * again (a switch-out that still inserts one adds to a unit that is gone).
 */
#ifndef UM_SLICE_CLAIMS_H
#define UM_SLICE_CLAIMS_H

#include <stddef.h>

/*
 * Remove the keys of closed units from the map claims_fd, whose units are in units_fd. Returns
 * how many were removed, or a negative errno when the map could not be read.
 */
long slice_claims_sweep(int claims_fd, int units_fd);

#endif
