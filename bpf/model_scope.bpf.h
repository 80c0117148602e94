/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The scope lists' upkeep: UM_SCOPE_DEPTH ids, newest first, in each process and mm. Lists
 * keep ids of units already closed; they are pruned when a new unit is pushed. Needs, from its
 * includer, unit_get() (the open unit of an id, or NULL) and the scope_overflows counter:
 * model.bpf.h includes it after its unit_get, on the maps; tests/bpf/ with a unit_get of its own.
 */
#ifndef UNITMETER_MODEL_SCOPE_BPF_H
#define UNITMETER_MODEL_SCOPE_BPF_H

/* A unit already closed is only a stale id in a list: nothing can be charged to it. */
static __always_inline void units_prune(__u64 *list)
{
	if (list[1] && !unit_get(list[1]))
		list[1] = 0;
	if (list[0] && !unit_get(list[0])) {
		list[0] = list[1];
		list[1] = 0;
	}
}

/*
 * Lists keep the ids of units that closed while the process lived in them (a closing unit
 * does not walk every process): they are dropped here, before they could count as overflow.
 */
static __always_inline void units_push(__u64 *list, __u64 id)
{
	units_prune(list);
	if (list[UM_SCOPE_DEPTH - 1])
		__sync_fetch_and_add(&scope_overflows, 1);
	list[1] = list[0];
	list[0] = id;
}

#endif /* UNITMETER_MODEL_SCOPE_BPF_H */
